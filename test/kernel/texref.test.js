'use strict';
// Texture references of a hand-written PTX module (lib/kernel/texref.js), bound to linear and
// pitched memory and fetched by a kernel.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const cuda = require('../..');
const { describeGpu } = require('../support/gpu');
const { normals } = require('../support/kernel-data');

// Texture and surface references can no longer be declared in CUDA C++, but PTX still declares
// them and the driver still binds them.
const TEX_PTX = fs.readFileSync(path.join(__dirname, '..', 'support', 'fixtures', 'texrefs.ptx'), 'utf8');

// Device memory at an address aligned for textures, holding bytes.
function alignedCopy(bytes, alignment) {
  const raw = cuda.memAlloc(bytes.byteLength + alignment);
  const address = (raw.ptr + BigInt(alignment - 1)) & ~BigInt(alignment - 1);
  cuda.memcpyHtoD(address, bytes);
  return { raw, address };
}

describeGpu('TextureReference (a hand-written PTX module)', function () {
  let module;
  let dev;
  before(function () {
    module = new cuda.Module(TEX_PTX);
    dev = cuda.Context.getDevice();
  });

  it('every setter and getter', function () {
    const tex = module.getTexref('tex');
    assert.ok(tex instanceof cuda.TextureReference);
    assert.strictEqual(tex.module, module);
    tex.setFormat(cuda.ArrayFormat.SIGNED_INT16, 2);
    assert.deepStrictEqual(tex.getFormat(), [cuda.ArrayFormat.SIGNED_INT16, 2]);
    tex.setFormat(cuda.ArrayFormat.FLOAT, 1);
    assert.deepStrictEqual(tex.getFormat(), [cuda.ArrayFormat.FLOAT, 1]);
    tex.setAddressMode(0, cuda.AddressMode.BORDER);
    assert.strictEqual(tex.getAddressMode(0), cuda.AddressMode.BORDER);
    tex.setAddressMode(0, cuda.AddressMode.CLAMP);
    assert.strictEqual(tex.getAddressMode(0), cuda.AddressMode.CLAMP);
    tex.setFilterMode(cuda.FilterMode.LINEAR);
    assert.strictEqual(tex.getFilterMode(), cuda.FilterMode.LINEAR);
    tex.setFilterMode(cuda.FilterMode.POINT);
    assert.strictEqual(tex.getFilterMode(), cuda.FilterMode.POINT);
    tex.setFlags(cuda.TRSF_READ_AS_INTEGER);
    assert.strictEqual(tex.getFlags(), cuda.TRSF_READ_AS_INTEGER);
    tex.setFlags(0);
    assert.strictEqual(tex.getFlags(), 0);
    assert.ok(module.getSurfref('surf') instanceof cuda.SurfaceReference);
  });

  it('linear memory bound with setAddress is fetched through tex.1d', async function () {
    const tex = module.getTexref('tex');
    const data = normals(1000);
    const { raw, address } = alignedCopy(data, dev.textureAlignment);
    tex.setFormat(cuda.ArrayFormat.FLOAT, 1);
    assert.strictEqual(tex.setAddress(address, data.byteLength), 0);
    assert.strictEqual(tex.getAddress(), address);
    const out = new Float32Array(1000);
    await module.getFunction('fetch1d')(cuda.Out(out), cuda.uint32(1000), { block: [256], grid: [4], texrefs: [tex] });
    assert.deepStrictEqual(out, data);
    assert.throws(() => tex.setAddress(address + 4n, data.byteLength - 4), {
      name: 'LogicError',
      message: /byte offset of 4/,
    });
    assert.strictEqual(tex.setAddress(address + 4n, data.byteLength - 4, true), 4);
    raw.free();
  });

  it('pitched memory bound with setAddress2D is fetched through tex.2d', async function () {
    const tex = module.getTexref('tex2d');
    const [width, height] = [8, 4];
    const pitch = Math.ceil((width * 4) / dev.texturePitchAlignment) * dev.texturePitchAlignment;
    const data = normals(width * height);
    const rows = new Uint8Array(pitch * height);
    for (let y = 0; y < height; y++) rows.set(new Uint8Array(data.buffer, y * width * 4, width * 4), y * pitch);
    const { raw, address } = alignedCopy(rows, dev.textureAlignment);
    tex.setFormat(cuda.ArrayFormat.FLOAT, 1);
    tex.setAddressMode(0, cuda.AddressMode.CLAMP);
    tex.setAddressMode(1, cuda.AddressMode.CLAMP);
    tex.setAddress2D(address, { width, height, format: cuda.ArrayFormat.FLOAT, numChannels: 1 }, pitch);
    assert.strictEqual(tex.getAddress(), address);
    const out = new Float32Array(width * height);
    const fetch2d = module.getFunction('fetch2d').prepare('P', { texrefs: [tex] });
    const outGpu = cuda.memAlloc(out.byteLength);
    fetch2d.preparedCall(1, [width, height], outGpu);
    cuda.memcpyDtoH(out, outGpu);
    assert.deepStrictEqual(out, data);
    outGpu.free();
    raw.free();
  });
});
