#!/usr/bin/env node
'use strict';
// The floor under cudadrv's allocation lines: what a JS object costs, and a call into the addon
// that does no driver work (memFree of an id that names no memory: read the arguments, look the
// id up, return). memAllocAsync + free makes two addon calls and one such object, plus one
// Node-API finalizer reference made and deleted; C makes the same two driver calls and nothing
// else. No GPU needed.
//
//   node bench/napi-call.js
const binding = require('../lib/internal/binding');

const BATCH = 1000;

class Holder {
  constructor() {
    this._root = this;
    this._offset = 0n;
    this._ptr = null;
    this._address = -1;
    this._id = 0;
    this._stream = null;
    this.size = 0;
    this.context = null;
  }
}

function median(fn) {
  const samples = [];
  for (let round = 0; round < 300; round++) {
    const start = process.hrtime.bigint();
    fn(BATCH);
    if (round >= 50) samples.push(Number(process.hrtime.bigint() - start) / BATCH);
  }
  samples.sort((x, y) => x - y);
  return samples[samples.length >> 1];
}

let kept;
const lines = {
  'addon call, no driver work (memFree of no memory)': (n) => {
    for (let i = 0; i < n; i++) binding.memFree(-1, null);
  },
  "JS object of a DeviceAllocation's shape": (n) => {
    for (let i = 0; i < n; i++) kept = new Holder();
  },
};
for (const [name, fn] of Object.entries(lines))
  console.log(`${name.padEnd(52)} ${median(fn).toFixed(0).padStart(5)} ns`);
void kept;
