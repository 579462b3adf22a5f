'use strict';
// Cutting a failing list of calls down to the shortest one that still fails: the fuzzer's calls
// (run.js --minimize) and a driver trace's calls (cut-trace.js).

// The shortest list of `indices` (ending at the last, the one that failed) for which `repeats`
// resolves true: the shortest of the tails of 1, 4, 16... indices, each also without the indices
// of `droppable` (the fuzzer's calls that threw before the driver: about half of a run's), that
// repeats it, then ddmin over that list. Candidates are tried `width` at a time (a child on a GPU
// takes seconds), the first in order that repeats winning, so that the result does not depend on
// which child ended first. A candidate repeats it when a second try fails too: a death that comes
// only now and then (a driver reading memory it never wrote dies only when the heap held the
// wrong bytes) would otherwise be credited to whichever of a batch's lists drew it.
// `said` gets each shorter list found at once, so that a run stopped meanwhile still tells it;
// ddmin stops after `most` candidates.
// Resolves null where no tail repeats it.
async function shortest(indices, repeats, { width = 1, droppable = new Set(), said = () => {}, most = 200 } = {}) {
  const firstRepeating = async (candidates) => {
    for (let i = 0; i < candidates.length; i += width) {
      const batch = candidates.slice(i, i + width);
      const once = (await Promise.all(batch.map(repeats))).map((d, j) => d && batch[j]).filter(Boolean);
      const twice = await Promise.all(once.map(repeats));
      const found = twice.indexOf(true);
      if (found >= 0) return once[found];
    }
    return null;
  };
  const tails = [];
  for (let n = 1; tails.at(-1)?.length !== indices.length; n *= 4)
    tails.push(indices.slice(-Math.min(n, indices.length)));
  const last = indices.at(-1);
  const quiet = tails.map((t) => t.filter((i) => i === last || !droppable.has(i)));
  const candidates = [...tails, ...quiet.filter((q, i) => q.length < tails[i].length)];
  let tail = await firstRepeating(candidates.sort((a, b) => a.length - b.length));
  if (!tail) return null;
  said(tail);
  let granularity = 2;
  let tries = 0;
  while (tail.length > 1 && tries < most) {
    const size = Math.ceil(tail.length / granularity);
    const complements = [];
    for (let start = 0; start < tail.length; start += size) {
      const complement = tail.slice(0, start).concat(tail.slice(start + size));
      if (complement.length) complements.push(complement);
    }
    tries += complements.length;
    const smaller = await firstRepeating(complements);
    if (smaller) {
      tail = smaller;
      said(tail);
      granularity = Math.max(granularity - 1, 2);
    } else if (granularity >= tail.length) {
      break;
    } else {
      granularity = Math.min(granularity * 2, tail.length);
    }
  }
  return tail;
}

module.exports = { shortest };
