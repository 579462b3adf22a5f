'use strict';
// The framing between cudadrv and its helper processes (lib/compiler/isolated.js, helper.js):
// each message is a value serialized by v8, after its length as 8 bytes little-endian. Read
// through a FrameReader, whose every failure (a length past the limit, bytes that do not
// deserialize) is an Error to the reader's owner, never a throw from a stream's event.
const v8 = require('v8');

/** A message as bytes to write. */
function frame(value) {
  const body = v8.serialize(value);
  const head = Buffer.alloc(8);
  head.writeBigUInt64LE(BigInt(body.length));
  return Buffer.concat([head, body]);
}

/** Collects chunks and gives each whole message to onMessage(value), or onError(error) once where
 * the bytes cannot be one. */
class FrameReader {
  constructor(limit, onMessage, onError) {
    Object.assign(this, { limit, onMessage, onError, chunks: [], bytes: 0, length: undefined, failed: false });
  }

  push(chunk) {
    if (this.failed) return;
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    for (;;) {
      if (this.length === undefined) {
        if (this.bytes < 8) return;
        this.join();
        this.length = Number(this.chunks[0].readBigUInt64LE(0));
        if (this.length > this.limit) return this.fail(new Error(`a message of ${this.length} bytes, past the limit`));
      }
      if (this.bytes < 8 + this.length) return; // joined only once whole: no copying per chunk
      const data = this.join();
      let value;
      try {
        value = v8.deserialize(data.subarray(8, 8 + this.length));
      } catch (error) {
        return this.fail(error);
      }
      this.chunks = [data.subarray(8 + this.length)];
      this.bytes -= 8 + this.length;
      this.length = undefined;
      this.onMessage(value);
    }
  }

  join() {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0];
  }

  fail(error) {
    this.failed = true;
    this.chunks = [];
    this.onError(error);
  }
}

module.exports = { frame, FrameReader };
