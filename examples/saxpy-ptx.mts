// saxpy (y = a·x + y) from hand-written PTX, in TypeScript: no compiler needed, the driver
// compiles PTX itself. Shows typed scalars, In/InOut, launch options and kernel timing.
// Type-checked by `npm test`. Node 23.6 or newer runs it as it is (`node saxpy-ptx.mts`: Node
// strips the types of an ES module; 22.6 to 23.5 with --experimental-strip-types); older Nodes
// run what `npx tsc` makes of it.
import cuda from 'cudadrv';

const PTX = `
.version 7.8
.target sm_75
.address_size 64

.visible .entry saxpy(.param .u32 n, .param .f32 a, .param .u64 x, .param .u64 y)
{
    .reg .pred %p;
    .reg .b32 %r<5>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<6>;
    ld.param.u32 %r1, [n];
    ld.param.f32 %f1, [a];
    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [y];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r2, %r2, %r3, %r4;
    setp.ge.u32 %p, %r2, %r1;
    @%p bra DONE;
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd5, %rd2, %rd3;
    ld.global.f32 %f2, [%rd4];
    ld.global.f32 %f3, [%rd5];
    mul.rn.f32 %f2, %f1, %f2;
    add.rn.f32 %f3, %f2, %f3;
    st.global.f32 [%rd5], %f3;
DONE:
    ret;
}
`;

async function main(): Promise<void> {
  if (!cuda.isAvailable() || cuda.Device.count() === 0) {
    console.error('saxpy-ptx: no CUDA device here');
    process.exit(1);
  }
  const ctx: cuda.Context = new cuda.Device(0).makeContext();
  try {
    const module = new cuda.Module(PTX, {
      messageHandler: (ok: boolean, info: string) => {
        if (!ok || info) console.log(`JIT: ${info}`);
      },
    });
    const saxpy: cuda.Kernel = module.getFunction('saxpy');
    const n = 100_000;
    const a = 2.5;
    const x = Float32Array.from({ length: n }, () => Math.random());
    const y = Float32Array.from({ length: n }, () => Math.random());
    const expected = y.map((yi, i) => Math.fround(Math.fround(a * x[i]) + yi));

    const launch: cuda.LaunchOptions = { block: [256], grid: [Math.ceil(n / 256)] };
    await saxpy(cuda.uint32(n), cuda.float32(a), cuda.In(x), cuda.InOut(y), launch);
    const matches = y.every((v, i) => v === expected[i]);
    console.log(`saxpy on ${n} elements: ${matches ? 'equal to the CPU' : 'WRONG'}`);

    // timeKernel: the call resolves to the kernel's own time, from events around it.
    const seconds: number = await saxpy(cuda.uint32(n), cuda.float32(a), cuda.In(x), cuda.InOut(y), {
      ...launch,
      timeKernel: true,
    });
    console.log(`the kernel took ${(seconds * 1e6).toFixed(1)} µs`);
    process.exitCode = matches ? 0 : 1;
  } finally {
    ctx.detach();
  }
}

void main();
