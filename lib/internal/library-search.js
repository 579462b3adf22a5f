'use strict';
// Where a CUDA toolkit library (NVRTC; nvJitLink) may be, in the order it is tried: the variable
// that names the file (alone when set); the toolkit of CUDA_PATH or CUDA_HOME; then the active
// conda environment, the pip wheels of Python's site-packages, the system's loader
// (LD_LIBRARY_PATH, ld.so.cache) and /usr/local/cuda, the newest major the driver supports first
// (a major newer than the driver's stays, as a last resort).
//
// A file found is used only where no other user could have put it there (binding.pathProblem:
// it and every directory above it belong to root or this user, and none but a sticky one is
// writable by others), and only by an absolute path: a relative CUDA_PATH or PYTHONPATH=. would
// load whatever the working directory holds, and a library's constructor runs as it loads.
const fs = require('fs');
const path = require('path');
const binding = require('./binding');

const refusals = new Map(); // name → [{ path, source, why }] of the last search

/* Subdirectories of site-packages/nvidia where NVIDIA's wheels put each library, by major. */
const WHEEL_DIRS = {
  nvrtc: { 13: 'cu13/lib', 12: 'cuda_nvrtc/lib' },
  nvJitLink: { 13: 'cu13/lib', 12: 'nvjitlink/lib' },
};

function entries(dir) {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/* site-packages and dist-packages directories of the Pythons a user may have installed wheels for;
 * and the directories listed to find them. */
function sitePackages(env) {
  const roots = [env.VIRTUAL_ENV, env.CONDA_PREFIX, env.HOME && path.join(env.HOME, '.local'), '/usr/local', '/usr'];
  const sites = (env.PYTHONPATH || '').split(':').filter(Boolean);
  const listed = [];
  for (const root of roots.filter(Boolean)) {
    const lib = path.join(root, 'lib');
    listed.push(lib);
    for (const python of entries(lib)
      .filter((name) => /^python3(\.\d+)?$/.test(name))
      .sort()
      .reverse()) {
      sites.push(path.join(lib, python, 'site-packages'), path.join(lib, python, 'dist-packages'));
    }
  }
  return { sites, listed };
}

/* Every file the library may be found at, { path, source, major, base } in the order of the
 * search (base: the directory the place hangs from), and the directories the search lists. */
function places(name, majors, env) {
  const all = [];
  const inDir = (dir, source) =>
    majors.map((major) => ({ path: path.join(dir, `lib${name}.so.${major}`), source, major, base: dir }));
  for (const variable of ['CUDA_PATH', 'CUDA_HOME']) {
    if (env[variable])
      all.push(
        ...inDir(path.join(env[variable], 'lib64'), variable),
        ...inDir(path.join(env[variable], 'lib'), variable),
      );
  }
  if (env.CONDA_PREFIX) all.push(...inDir(path.join(env.CONDA_PREFIX, 'lib'), 'conda'));
  const { sites, listed } = sitePackages(env);
  for (const site of sites) {
    for (const major of majors) {
      const file = path.join(site, 'nvidia', WHEEL_DIRS[name][major], `lib${name}.so.${major}`);
      all.push({ path: file, source: 'pip', major, base: site });
    }
  }
  all.push(...inDir('/usr/local/cuda/lib64', '/usr/local/cuda'));
  return { all, listed };
}

/**
 * The candidates for library `name` ('nvrtc' or 'nvJitLink') of the given majors (newest first):
 * [{ path, source, major }], path a file or, for the system's loader, a soname.
 * driverMajor: a function that returns the driver's CUDA major (asked only when candidates of
 * more than one major were found; one that throws means no driver).
 */
function librarySearch(name, { majors, override, env = process.env, driverMajor = () => null }) {
  if (env[override]) return [{ path: env[override], source: override, major: null }];
  const refused = [];
  refusals.set(name, refused);
  const found = places(name, majors, env).all.filter((place) => {
    if (!fs.existsSync(place.path)) return false;
    const why = binding.pathProblem(place.path);
    if (why) refused.push({ path: place.path, source: place.source, why });
    return !why;
  });
  const explicit = found.filter((c) => c.source === 'CUDA_PATH' || c.source === 'CUDA_HOME');
  const system = majors.map((major) => ({ path: `lib${name}.so.${major}`, source: 'system', major }));
  // The system's loader comes before /usr/local/cuda, which it often serves.
  const rest = found.filter((c) => !explicit.includes(c));
  const usrLocal = rest.filter((c) => c.source === '/usr/local/cuda');
  const discovered = [...rest.filter((c) => !usrLocal.includes(c)), ...system, ...usrLocal];
  const supported = new Set(discovered.map((c) => c.major)).size > 1 ? majorOf(driverMajor) : null;
  const rank = (c) => (supported !== null && c.major > supported ? -c.major : c.major);
  const ranked = discovered
    .map((candidate, order) => ({ candidate, order }))
    .sort((a, b) => rank(b.candidate) - rank(a.candidate) || a.order - b.order)
    .map(({ candidate }) => candidate);
  return [...explicit, ...ranked]
    .filter((c, i, all) => all.findIndex((other) => other.path === c.path) === i)
    .map(({ path: file, source, major }) => ({ path: file, source, major }));
}

/* Every directory whose change may change what librarySearch finds (for caches of its outcome). */
function searchedDirs(name, { majors, env = process.env }) {
  const { all, listed } = places(name, majors, env);
  const dirs = new Set(listed);
  for (const place of all) {
    for (let dir = path.dirname(place.path); dir.startsWith(place.base); dir = path.dirname(dir)) dirs.add(dir);
  }
  return [...dirs];
}

/* Where a static library of the toolkit (libcudadevrt.a) may be, beside the shared ones. */
const STATIC_WHEEL_DIRS = ['cu13/lib', 'cuda_runtime/lib'];

/**
 * The first file called `file` (a static library of the toolkit: 'libcudadevrt.a') found in the
 * variable override (alone when set), the directories given first (beside a library loaded),
 * then as librarySearch looks: CUDA_PATH, CUDA_HOME, conda, pip wheels, /usr/local/cuda; or null.
 * Also returns every place looked at, for the error that says where.
 */
function findToolkitFile(file, { override, first = [], env = process.env }) {
  if (env[override]) return { path: env[override], tried: [env[override]] };
  const dirs = [...first];
  for (const variable of ['CUDA_PATH', 'CUDA_HOME']) {
    if (env[variable]) dirs.push(path.join(env[variable], 'lib64'), path.join(env[variable], 'lib'));
  }
  if (env.CONDA_PREFIX) dirs.push(path.join(env.CONDA_PREFIX, 'lib'));
  for (const site of sitePackages(env).sites)
    dirs.push(...STATIC_WHEEL_DIRS.map((dir) => path.join(site, 'nvidia', dir)));
  dirs.push('/usr/local/cuda/lib64');
  const tried = [...new Set(dirs)].map((dir) => path.join(dir, file));
  const safe = (candidate) => fs.existsSync(candidate) && !binding.pathProblem(candidate);
  return { path: tried.find(safe) ?? null, tried };
}

function majorOf(driverMajor) {
  try {
    return driverMajor();
  } catch {
    return null; // no driver: the newest first
  }
}

/** The files the last search for `name` found and refused: [{ path, source, why }]. */
function refusedBySearch(name) {
  return refusals.get(name) ?? [];
}

module.exports = { librarySearch, searchedDirs, findToolkitFile, refusedBySearch };
