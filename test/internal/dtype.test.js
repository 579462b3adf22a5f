'use strict';
// dtypes (lib/internal/dtype.js): names and constructors, shapes, and arrays made for them.
const assert = require('assert');
const { dtypeOf, dtypeOfArray, shapeLength, typedArrayFor } = require('../../lib/internal/dtype');

describe('dtype', function () {
  it('dtypeOf takes names and constructors', function () {
    const cases = [
      ['int8', Int8Array, 1],
      ['uint8', Uint8Array, 1],
      ['uint8clamped', Uint8ClampedArray, 1],
      ['int16', Int16Array, 2],
      ['uint16', Uint16Array, 2],
      ['int32', Int32Array, 4],
      ['uint32', Uint32Array, 4],
      ['float32', Float32Array, 4],
      ['float64', Float64Array, 8],
      ['int64', BigInt64Array, 8],
      ['uint64', BigUint64Array, 8],
    ];
    for (const [name, ctor, size] of cases) {
      assert.deepStrictEqual({ ...dtypeOf(name) }, { name, ctor, size });
      assert.strictEqual(dtypeOf(ctor), dtypeOf(name));
    }
    if (typeof globalThis.Float16Array === 'function') {
      assert.strictEqual(dtypeOf('float16').ctor, globalThis.Float16Array);
    } else {
      assert.throws(() => dtypeOf('float16'), { name: 'TypeError' }, 'float16 only where Float16Array exists');
    }
  });

  it('dtypeOf refuses unknown names and other values with a TypeError listing the names', function () {
    for (const bad of ['float33', 'Float32Array', 'f4', undefined, null, 4, Array, {}]) {
      assert.throws(() => dtypeOf(bad), {
        name: 'TypeError',
        message: /dtype must be a TypedArray constructor .*'float32'/,
      });
    }
  });

  it('dtypeOfArray finds the dtype of a TypedArray (a Buffer is uint8)', function () {
    assert.strictEqual(dtypeOfArray(new Float64Array(2)).name, 'float64');
    assert.strictEqual(dtypeOfArray(Buffer.alloc(2)).name, 'uint8');
    assert.strictEqual(dtypeOfArray(new DataView(new ArrayBuffer(2))), undefined);
  });

  it('shapeLength multiplies dimensions; [] is a scalar', function () {
    assert.strictEqual(shapeLength(7), 7);
    assert.strictEqual(shapeLength([2, 3, 4]), 24);
    assert.strictEqual(shapeLength([]), 1);
    assert.strictEqual(shapeLength([5, 0]), 0);
  });

  it('shapeLength refuses bad shapes', function () {
    for (const bad of [-1, 1.5, NaN, Infinity, [2, -3], [2, 0.5], [NaN]]) {
      assert.throws(() => shapeLength(bad), { name: 'RangeError', message: /shape must hold non-negative integers/ });
    }
    for (const bad of ['3', null, undefined, { length: 2 }, [2, '3'], [2n]]) {
      assert.throws(() => shapeLength(bad), { name: 'TypeError', message: /shape must/ });
    }
    assert.throws(() => shapeLength([2 ** 30, 2 ** 30]), { name: 'RangeError', message: /more than 2\*\*53-1/ });
  });

  it('typedArrayFor lays (shape, dtype) over a buffer or a view, checking fit and alignment', function () {
    const buffer = new ArrayBuffer(64);
    const a = typedArrayFor(buffer, [2, 4], 'float32');
    assert.ok(a instanceof Float32Array);
    assert.strictEqual(a.length, 8);
    assert.strictEqual(a.buffer, buffer);
    const b = typedArrayFor(new Uint8Array(buffer, 16, 48), 6, Float64Array);
    assert.strictEqual(b.byteOffset, 16);
    assert.strictEqual(b.length, 6);
    assert.throws(() => typedArrayFor(buffer, 17, 'float32'), {
      name: 'RangeError',
      message: /68 bytes; the buffer has 64/,
    });
    assert.throws(() => typedArrayFor(new Uint8Array(buffer, 2), 1, 'int32'), {
      name: 'RangeError',
      message: /multiple of 4 bytes, not at byte 2/,
    });
    assert.throws(() => typedArrayFor('x', 1, 'int8'), { name: 'TypeError' });
  });
});
