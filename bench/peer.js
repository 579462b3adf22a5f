#!/usr/bin/env node
'use strict';
// Peer copies between two devices (issue 17): 256 MiB from device 0 to device 1 and back, with
// peer access enabled and without, in cudadrv (memcpyPeer, then Context.synchronizeSync()) and
// in C (bench/peer_floor.c: cuMemcpyPeer, then cuCtxSynchronize), taking turns in the same run,
// both on the devices' primary contexts. Target: each bandwidth ≥ 0.95 × C's. Needs two devices.
// Usage: node bench/peer.js [--json] [--stand-in]; exits 1 when a target is missed. --stand-in: the
// tests' stand-in driver with two devices, which checks the machinery, not the figures.
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { now, buildFloor, startFloor, inTurns, printRows } = require('./turns');

const BYTES = 256 * 2 ** 20;
const SAMPLES = 10;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'cudadrv-bench-'));

if (process.argv.includes('--stand-in')) {
  // the same run, against the stand-in driver's two devices
  const { buildStandIn } = require('../test/support/stand-in-driver');
  const dir = path.join(work, 'stand-in');
  buildStandIn(dir);
  const args = process.argv.slice(1).filter((arg) => arg !== '--stand-in');
  const env = { ...process.env, LD_LIBRARY_PATH: dir, FAKE_CUDA_DEVICES: '2' };
  const { status } = spawnSync(process.execPath, args, { stdio: 'inherit', env });
  fs.rmSync(work, { recursive: true, force: true });
  process.exit(status ?? 1);
}

const cuda = require('..');

async function main() {
  if (cuda.Device.count() < 2) throw new Error(`two devices are needed; the driver reports ${cuda.Device.count()}`);
  const floor = startFloor(buildFloor('peer_floor', work), [String(BYTES)]);
  const contexts = [0, 1].map((ordinal) => new cuda.Device(ordinal).retainPrimaryContext());
  const memory = contexts.map((ctx) => {
    ctx.setCurrent();
    return cuda.memAlloc(BYTES);
  });
  let peer = false;
  const setPeer = (want) => {
    if (want === peer) return;
    for (const [ctx, other] of [contexts, [...contexts].reverse()]) {
      if (want) ctx.enablePeerAccess(other);
      else ctx.disablePeerAccess(other);
    }
    peer = want;
  };
  const lines = [];
  for (const withPeer of [false, true]) {
    for (const [from, to] of [
      [0, 1],
      [1, 0],
    ]) {
      const copy = () => {
        setPeer(withPeer);
        contexts[from].setCurrent();
        const start = now();
        cuda.memcpyPeer(memory[to], memory[from], BYTES, contexts[to], contexts[from]);
        cuda.Context.synchronizeSync();
        return now() - start;
      };
      copy(); // warm
      await floor.step(`${from} ${to} ${withPeer ? 1 : 0}`);
      const times = await inTurns(
        SAMPLES,
        copy,
        async () => (await floor.step(`${from} ${to} ${withPeer ? 1 : 0}`))[0],
      );
      const gbps = (ms) => BYTES / ms / 1e6;
      lines.push({ from, to, peer: withPeer, js: gbps(times.js), c: gbps(times.c), ratio: 1 / times.ratio });
    }
  }
  setPeer(false);
  floor.end();
  memory.forEach((allocation, i) => {
    contexts[i].setCurrent();
    allocation.free();
  });
  for (const ctx of contexts) ctx.detach();
  fs.rmSync(work, { recursive: true, force: true });
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify({ bytes: BYTES, lines }));
    return;
  }
  printRows(
    `cudadrv peer copies: 256 MiB, ${new cuda.Device(0).name()} and ${new cuda.Device(1).name()}, Node ${process.version}`,
    lines.map((line) => [
      `device ${line.from} -> ${line.to}, peer access ${line.peer ? 'on' : 'off'}, cudadrv / C`,
      `${line.js.toFixed(1)} GB/s, ${line.c.toFixed(1)} GB/s: ${line.ratio.toFixed(3)}x`,
      '>= 0.95x',
      line.ratio >= 0.95,
    ]),
  );
  // on the stand-in (which the parent names in FAKE_CUDA_DEVICES) the figures say nothing
  const verdict = !process.env.FAKE_CUDA_DEVICES;
  process.exitCode = verdict && !lines.every((line) => line.ratio >= 0.95) ? 1 : 0;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
