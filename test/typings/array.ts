// Compile-time checks of the array, texture and surface typings (tsc --strict; never run).
import * as cuda from '../../typings/index';

declare const module: cuda.Module;
const values = new Float32Array(12);
const array: cuda.CudaArray = cuda.matrixToArray(values, [3, 4], 'C');
const d: cuda.ArrayDescriptor = array.getDescriptor();
const d3: cuda.ArrayDescriptor3D = array.getDescriptor3D();
const handle: bigint = array.handle;
const a3 = new cuda.CudaArray(
  new cuda.ArrayDescriptor3D({
    width: 4,
    height: 3,
    depth: 2,
    format: cuda.ArrayFormat.FLOAT,
    flags: cuda.Array3DFlags.SURFACE_LDST,
  }),
);
const tex = new cuda.TextureObject(array, {
  addressMode: [cuda.AddressMode.CLAMP, cuda.AddressMode.WRAP],
  filterMode: cuda.FilterMode.LINEAR,
  flags: cuda.TRSF_NORMALIZED_COORDINATES,
  borderColor: [0, 0, 0, 1],
});
const linear = new cuda.TextureObject({
  linear: cuda.memAlloc(64),
  format: cuda.ArrayFormat.SIGNED_INT32,
  numChannels: 1,
});
const surf = new cuda.SurfaceObject(a3);
module.getFunction('k')(tex, surf, linear, cuda.int32(4), { block: 32 });
module.getFunction('k').prepare('QQ').preparedCall(1, 1, tex, surf);
cuda.memcpyHtoA(array, 0, values);
cuda.memcpyAtoHAsync(values, array, 0, new cuda.Stream());
const copy = new cuda.Memcpy3D();
copy.setSrcArray(array);
copy.setDstArray(a3);
const src: cuda.CudaArray | null = copy.srcArray;
module.getTexref('t').setArray(array, cuda.TRSA_OVERRIDE_FORMAT);
const bound: cuda.CudaArray | null = module.getSurfref('s').getArray();
cuda.toArray(new Float64Array(8), [2, 2], { complex: true, allowSurfaceBind: true, order: 'F' });
cuda.deviceToArray(cuda.memAlloc(64), [4, 4], 'float32');
cuda.makeMultichannel2DArray(new Uint8Array(16), [2, 2, 4]);
tex.destroy();
surf[Symbol.dispose]();
void [d, d3, handle, src, bound];
// @ts-expect-error: a texture object cannot change after creation
tex.setFilterMode(cuda.FilterMode.POINT);
// @ts-expect-error: three channels do not exist
cuda.makeMultichannel2DArray(values, [2, 2]);
