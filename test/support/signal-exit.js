'use strict';
// Sends a signal to a child process mid-work and checks that the signal ends it promptly: the
// child (node -e script, with args before it) prints a line once its work is under way; signal
// goes afterMs later; the child must then die of that signal within 1 s.
const assert = require('assert');
const { spawn } = require('child_process');

/** A Promise that settles once the child has died of signal (rejecting after 10 s without). */
function endsBySignal({ script, signal, env, args = [], afterMs = 300 }) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args, '-e', script], { env });
    let sent = 0;
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.stdout.once('data', () => {
      setTimeout(() => {
        sent = Date.now();
        child.kill(signal);
      }, afterMs);
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`still running 10 s after ${signal}`));
    }, 10000);
    child.on('exit', (code, got) => {
      clearTimeout(timer);
      try {
        assert.strictEqual(got, signal, `exit ${code}: ${stderr}`);
        assert.ok(Date.now() - sent < 1000, `${Date.now() - sent} ms`);
        resolve();
      } catch (error) {
        reject(error);
      }
    });
  });
}

module.exports = { endsBySignal };
