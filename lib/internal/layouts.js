'use strict';
// The layouts lib/ and the addon share: the launch header, the copy and texture descriptors, the
// slots memory allocations write back. C defines each once and exports it at init
// (src/core/cudadrv.h, export_layout); lib/ reads the numbers from there, and checks here, once,
// that the addon exports exactly the names lib/ uses, so that a build of one side against another
// fails at require instead of writing to the wrong place.
const binding = require('./binding');

const NAMES = {
  launch: [
    'grid',
    'block',
    'shared',
    'attributes',
    'cluster',
    'headerWords',
    'headerBytes',
    'priority',
    'preferredCluster',
    'scheduling',
    'syncDomain',
    'carveout',
    'triggerAtStart',
    'attrCluster',
    'attrCooperative',
    'attrPriority',
    'attrPreferredCluster',
    'attrScheduling',
    'attrSyncDomain',
    'attrCarveout',
    'attrSerialization',
    'attrProgrammaticEvent',
    'attrCompletionEvent',
  ],
  copy: ['x', 'y', 'z', 'lod', 'type', 'device', 'pitch', 'height', 'side', 'width', 'rows', 'depth', 'count'],
  made: ['id', 'context', 'address', 'count'],
  tensorMap: [
    'address',
    'rank',
    'dims',
    'strides',
    'words',
    'dataType',
    'box',
    'elementStrides',
    'interleave',
    'swizzle',
    'l2Promotion',
    'oobFill',
    'lower',
    'upper',
    'channels',
    'pixels',
    'mode',
    'ints',
    'tiled',
    'im2col',
    'im2colWide',
    'bytes',
  ],
  texture: [
    'kind',
    'address',
    'format',
    'channels',
    'bytes',
    'width',
    'height',
    'pitch',
    'addressMode',
    'filterMode',
    'flags',
    'maxAnisotropy',
    'count',
    'kindArray',
    'kindLinear',
    'kindPitch2D',
  ],
};

/** Throws where exported (the addon's layouts) differs from NAMES; returns it. */
function checked(exported) {
  const problems = [];
  for (const [layout, names] of Object.entries(NAMES)) {
    const fields = exported?.[layout];
    const have = fields ? Object.keys(fields) : [];
    const missing = names.filter((n) => !Number.isInteger(fields?.[n]));
    const extra = have.filter((n) => !names.includes(n));
    if (missing.length) problems.push(`${layout} lacks ${missing.join(', ')}`);
    if (extra.length) problems.push(`${layout} has ${extra.join(', ')}, which lib/ does not know`);
  }
  const unknown = Object.keys(exported ?? {}).filter((layout) => !(layout in NAMES));
  if (unknown.length) problems.push(`unknown layouts ${unknown.join(', ')}`);
  if (problems.length) {
    throw new Error(
      `cudadrv: lib/ and the native addon disagree on their shared layouts (${problems.join('; ')}); ` +
        'rebuild the addon from the same version (npm rebuild cudadrv)',
    );
  }
  return exported;
}

module.exports = { ...checked(binding.layouts), checked, NAMES };
