'use strict';
// A project of a cudadrv user, made in a temporary directory: node_modules/cudadrv links to this
// package, and node_modules/@types/<name> to ours for each of `types`.
const fs = require('fs');
const os = require('os');
const path = require('path');

const ROOT = path.join(__dirname, '..', '..');

/** The new project's directory; the caller removes it. */
function consumerProject(prefix, types = []) {
  const project = fs.mkdtempSync(path.join(os.tmpdir(), `cudadrv-${prefix}-`));
  fs.mkdirSync(path.join(project, 'node_modules', '@types'), { recursive: true });
  fs.symlinkSync(ROOT, path.join(project, 'node_modules', 'cudadrv'));
  for (const name of types) {
    fs.symlinkSync(path.join(ROOT, 'node_modules', '@types', name), path.join(project, 'node_modules', '@types', name));
  }
  return project;
}

module.exports = { consumerProject };
