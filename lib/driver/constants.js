'use strict';
// The constant groups: frozen objects with the values of the CUDA header the addon was built
// against, plus the members PyCUDA has that this header no longer declares (kept with the value
// they had, and refused with a clear error where they are used).
const binding = require('../internal/binding');

const groups = binding.constants();

// Members that newer headers removed: group → { NAME: value it had }.
const REMOVED = {
  JitTarget: {
    COMPUTE_10: 10,
    COMPUTE_11: 11,
    COMPUTE_12: 12,
    COMPUTE_13: 13,
    COMPUTE_20: 20,
    COMPUTE_21: 21,
  },
  CtxFlags: { BLOCKING_SYNC: 4, LMEM_RESIZE_TO_MAX: 16 },
};

const removedValues = new Map(); // group → Map(value → name)
for (const [group, members] of Object.entries(REMOVED)) {
  for (const [name, value] of Object.entries(members)) {
    if (name in groups[group]) continue;
    groups[group][name] = value;
    if (!removedValues.has(group)) removedValues.set(group, new Map());
    removedValues.get(group).set(value, name);
  }
}

// Throws where a value is a member the header in use removed (e.g. JitTarget.COMPUTE_10).
function refuseRemoved(groupName, value, what) {
  const name = removedValues.get(groupName)?.get(value);
  if (name) {
    throw new RangeError(
      `${what}: cuda.${groupName}.${name} is no longer supported by CUDA ` +
        `${Math.floor(binding.headerVersion() / 1000)}; use a newer member of cuda.${groupName}`,
    );
  }
}

const constants = {};
for (const [name, members] of Object.entries(groups)) constants[name] = Object.freeze(members);

// PyCUDA's top-level texture constants.
constants.TRSA_OVERRIDE_FORMAT = groups.TextureArrayFlags.TRSA_OVERRIDE_FORMAT;
constants.TRSF_READ_AS_INTEGER = groups.TextureFlags.TRSF_READ_AS_INTEGER;
constants.TRSF_NORMALIZED_COORDINATES = groups.TextureFlags.TRSF_NORMALIZED_COORDINATES;
constants.TR_DEFAULT = -1; // CU_PARAM_TR_DEFAULT

module.exports = constants;
// Internal (not enumerable, so not re-exported by index.js).
Object.defineProperty(module.exports, 'refuseRemoved', { value: refuseRemoved });
