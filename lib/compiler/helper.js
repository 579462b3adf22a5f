'use strict';
// The helper process of isolated compiles and links (lib/compiler/isolated.js): NVRTC and
// nvJitLink run here, one request at a time, so that a crash in them ends this process and not
// its parent's. Requests come on stdin, replies go to stdout, framed (frames.js): with 'serve',
// each in turn until stdin ends; with 'once' (compileSync, link()), one.
const fs = require('fs');
const binding = require('../internal/binding');
const { frame, FrameReader } = require('./frames');

const LOADERS = { compile: 'nvrtcLoad', link: 'nvJitLinkLoad' };
const RUNNERS = { compile: 'nvrtcCompile', link: 'link' };
const loaded = {}; // op → the library file loaded for it

// { op, library, args } → { outcome }, or { error, name }: the message and class of what the
// binding threw (an input it refused, a library that did not load).
function serve({ op, library, args }) {
  try {
    if (!Object.hasOwn(LOADERS, op)) throw new TypeError(`no such request: ${op}`);
    if (loaded[op] !== library) {
      binding[LOADERS[op]]([library]);
      loaded[op] = library;
    }
    return { outcome: binding[RUNNERS[op]](...args) };
  } catch (error) {
    return { error: String(error?.message ?? error), name: String(error?.name) };
  }
}

// All of data to fd, which may be a non-blocking pipe.
function writeAll(fd, data) {
  for (let at = 0; at < data.length;) {
    try {
      at += fs.writeSync(fd, data, at);
    } catch (error) {
      if (error.code !== 'EAGAIN') throw error;
    }
  }
}

const once = process.argv[2] === 'once';
const reader = new FrameReader(
  Infinity, // the parent's own requests
  (request) => {
    writeAll(1, frame(serve(request)));
    if (once) process.exit(0);
  },
  (error) => {
    throw error;
  },
);
process.stdin.on('data', (chunk) => reader.push(chunk));
process.stdin.on('end', () => process.exit(0));
