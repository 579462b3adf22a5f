'use strict';
const assert = require('assert');
const cuda = require('../..');
const { describeGpu } = require('../support/gpu');

describe('Device arguments (checked before the driver)', function () {
  it('rejects wrong types, negative and fractional ordinals', function () {
    assert.throws(() => new cuda.Device(-1), { name: 'RangeError', message: /device ordinal/ });
    assert.throws(() => new cuda.Device(0.5), { name: 'RangeError' });
    assert.throws(() => new cuda.Device(NaN), { name: 'RangeError' });
    assert.throws(() => new cuda.Device({}), {
      name: 'TypeError',
      message: /device ordinal must be an integer number/,
    });
    assert.throws(() => new cuda.Device(), { name: 'TypeError' });
  });

  it('rejects malformed PCI bus ids', function () {
    for (const id of ['', 'zz:00.0', '0000:3b:00.9', 'not a bus id', '0000:3b']) {
      assert.throws(() => new cuda.Device(id), { name: 'TypeError', message: /malformed PCI bus id/ }, id);
    }
  });
});

describeGpu('Device', function () {
  it('counts devices and opens each by ordinal and by PCI bus id', function () {
    const count = cuda.Device.count();
    assert.ok(count >= 1);
    for (let i = 0; i < count; i++) {
      const dev = new cuda.Device(i);
      assert.strictEqual(dev.ordinal, i);
      const byBus = new cuda.Device(dev.pciBusId());
      assert.ok(byBus.equals(dev));
      assert.match(dev.pciBusId(), /^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$/);
    }
  });

  it('an out-of-range ordinal is a RangeError that gives the count', function () {
    const count = cuda.Device.count();
    assert.throws(() => new cuda.Device(count), {
      name: 'RangeError',
      message: new RegExp(`has ${count} CUDA device`),
    });
  });

  it("an unknown PCI bus id is the driver's error", function () {
    assert.throws(
      () => new cuda.Device('0000:ff:1f.7'),
      (e) => e instanceof cuda.CudaError && e.api === 'cuDeviceGetByPCIBusId',
    );
  });

  it('reports name, memory, compute capability and attributes consistently', function () {
    const dev = new cuda.Device(0);
    assert.ok(dev.name().length > 0);
    const [major, minor] = dev.computeCapability();
    assert.strictEqual(major, dev.computeCapabilityMajor);
    assert.strictEqual(minor, dev.getAttribute(cuda.DeviceAttribute.COMPUTE_CAPABILITY_MINOR));
    assert.ok(major >= 3);
    assert.ok(dev.totalMemory() > 1 << 30);
    assert.strictEqual(dev.warpSize, 32);
    assert.strictEqual(dev.maxThreadsPerBlock, 1024);
    assert.strictEqual(dev.uuid().length, 16);
    const attrs = dev.getAttributes();
    assert.ok(Object.keys(attrs).length > 100);
    assert.strictEqual(attrs.MULTIPROCESSOR_COUNT, dev.multiprocessorCount);
    assert.strictEqual(attrs.MAX_BLOCK_DIM_X, dev.getAttribute(cuda.DeviceAttribute.MAX_BLOCK_DIM_X));
    assert.throws(() => dev.getAttribute(999999), { name: 'RangeError', message: /DeviceAttribute/ });
  });

  it("canAccessPeer(self) is false; enabling peer access to itself is the driver's error", function () {
    const dev = new cuda.Device(0);
    assert.strictEqual(dev.canAccessPeer(dev), false);
    assert.throws(() => dev.canAccessPeer(0), { name: 'TypeError' });
    const ctx = cuda.Context.getCurrent();
    assert.throws(
      () => cuda.Context.enablePeerAccess(ctx),
      (e) => e instanceof cuda.CudaError && e.api === 'cuCtxEnablePeerAccess',
    );
  });
});
