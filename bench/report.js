'use strict';
// The verdicts and the table of cudadrv's benchmarks (bench/run.js): statistics of the samples of
// each side, targets, the Markdown table, the JSON file.
const fs = require('fs');

// ---- targets: what each line's cudadrv median must reach ----

const UNIT_TEXT = { us: 'µs', ms: 'ms', 'GB/s': 'GB/s' };

// A time at most max times C's.
const ratioAtMost = (max) => ({ kind: 'ratio', max, text: `≤ ${max}×` });
// A bandwidth at least min times C's.
const bandwidthAtLeast = (min) => ({ kind: 'bandwidth', min, text: `≥ ${min}× C` });
// At most max, in the line's unit.
const atMost = (max, unit) => ({ kind: 'absolute', max, text: `≤ ${max} ${UNIT_TEXT[unit]}` });
// At most max more than C's.
const overC = (max, unit) => ({ kind: 'delta', max, text: `≤ C + ${max} ${UNIT_TEXT[unit]}` });
// At most max times the cudadrv median of the line op.
const ofOperation = (op, max) => ({ kind: 'of', op, max, text: `≤ ${max}× ${op}` });

// ---- statistics and verdicts ----

function quantile(sorted, q) {
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  const high = Math.ceil(at);
  return sorted[low] + (sorted[high] - sorted[low]) * (at - low);
}

/** { n, median, p10, p90, min, max, spread (half the p10–p90 range over the median) } */
function summarize(samples) {
  if (!samples || samples.length === 0) return null;
  const sorted = [...samples].sort((x, y) => x - y);
  const median = quantile(sorted, 0.5);
  const p10 = quantile(sorted, 0.1);
  const p90 = quantile(sorted, 0.9);
  return {
    n: sorted.length,
    median,
    p10,
    p90,
    min: sorted[0],
    max: sorted[sorted.length - 1],
    spread: median > 0 ? (p90 - p10) / 2 / median : 0,
    samples,
  };
}

/**
 * The verdict on one line: { ratio (cudadrv over C, or null), status: 'ok' | 'missed' | 'n/a'
 * (the target cannot be judged: a side is missing) | 'info' (no target) }. others: id → { js }
 * for targets that refer to another line.
 */
function evaluate(op, js, c, others) {
  const ratio = js && c && c.median > 0 ? js.median / c.median : null;
  const { target } = op;
  if (!target) return { ratio, status: 'info' };
  if (!js) return { ratio, status: 'n/a' };
  let ok;
  switch (target.kind) {
    case 'ratio':
      if (ratio === null) return { ratio, status: 'n/a' };
      ok = ratio <= target.max;
      break;
    case 'bandwidth':
      if (ratio === null) return { ratio, status: 'n/a' };
      ok = ratio >= target.min;
      break;
    case 'absolute':
      ok = js.median <= target.max;
      break;
    case 'delta':
      if (!c) return { ratio, status: 'n/a' };
      ok = js.median - c.median <= target.max;
      break;
    case 'of': {
      const other = others[target.op] && others[target.op].js;
      if (!other) return { ratio, status: 'n/a' };
      ok = js.median <= target.max * other.median;
      break;
    }
    default:
      throw new Error(`unknown target kind ${target.kind}`);
  }
  return { ratio, status: ok ? 'ok' : 'missed' };
}

// ---- the table ----

function formatValue(stats, unit) {
  if (!stats) return 'n/a';
  const { median } = stats;
  const digits = median >= 100 ? 0 : median >= 10 ? 1 : median >= 1 ? 2 : 3;
  return `${median.toFixed(digits)} ${UNIT_TEXT[unit]} ±${Math.round(stats.spread * 100)}%`;
}

const STATUS_TEXT = { ok: 'yes', missed: 'NO', 'n/a': 'n/a', info: '' };

/** The results as a Markdown table. */
function formatTable(results) {
  const rows = [['operation', 'cudadrv', 'C', 'ratio', 'target', 'ok']];
  for (const r of results) {
    const c = r.c === undefined ? '—' : formatValue(r.c, r.unit);
    const ratio = r.ratio === null ? '—' : `${r.ratio.toFixed(2)}×`;
    rows.push([r.title, formatValue(r.cudadrv, r.unit), c, ratio, r.target || '—', STATUS_TEXT[r.status]]);
  }
  return markdownTable(rows);
}

/** rows (the first the heading, each an array of strings) as a Markdown table. */
function markdownTable(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  const line = (row) => `| ${row.map((cell, i) => cell.padEnd(widths[i])).join(' | ')} |`;
  return [line(rows[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}

// Statistics, verdicts and notes of every line, from the raw measurements of both sides.
function assemble(ops, jsRuns, cRuns) {
  const others = {};
  const results = ops.map((op) => {
    const js = jsRuns[op.id] || { error: 'not measured' };
    const c = op.c ? cRuns[op.c] || { error: 'not measured' } : null;
    const line = {
      id: op.id,
      title: op.title,
      unit: op.unit,
      cudadrv: summarize(js.samples),
      c: op.c ? summarize(c.samples) : undefined,
      target: op.target ? op.target.text : null,
      notes: [op.note, ...(js.notes || []), js.error && `cudadrv: ${js.error}`, c && c.error && `C: ${c.error}`].filter(
        Boolean,
      ),
      spec: op.spec,
    };
    others[op.id] = { js: line.cudadrv };
    return line;
  });
  results.forEach((line, i) => Object.assign(line, evaluate(ops[i], line.cudadrv, line.c, others)));
  return results;
}

/** Prints the table, its notes and the verdict; writes the JSON file when out is given; returns
 * the exit status (1 when a target is missed or not measured). */
function report(results, meta, out) {
  const lines = [formatTable(results)];
  const notes = results.flatMap((r) => r.notes.map((note) => `- ${r.title}: ${note}`));
  if (notes.length) lines.push('', ...notes);
  const missed = results.filter((r) => r.status === 'missed').map((r) => r.id);
  const unknown = results.filter((r) => r.status === 'n/a').map((r) => r.id);
  const judged = results.filter((r) => r.status !== 'info').length;
  lines.push(
    '',
    missed.length + unknown.length === 0
      ? `every target met (${judged} of ${judged})`
      : [missed.length && `missed: ${missed.join(', ')}`, unknown.length && `not measured: ${unknown.join(', ')}`]
          .filter(Boolean)
          .join('; '),
  );
  console.log(lines.join('\n'));
  if (out) {
    const json = { ...meta, results, missed, unmeasured: unknown };
    fs.writeFileSync(out, `${JSON.stringify(json, null, 2)}\n`);
  }
  return missed.length + unknown.length === 0 ? 0 : 1;
}

module.exports = {
  ratioAtMost,
  bandwidthAtLeast,
  atMost,
  overC,
  ofOperation,
  summarize,
  evaluate,
  formatTable,
  markdownTable,
  assemble,
  report,
};
