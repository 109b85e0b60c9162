// Question: is one encode call linear in its input on text with a large working set of
// distinct pieces? (Issue 19: on 4 MB of JavaScript containing gpt-tokenizer's o200k rank table,
// 1 MB took 8 ms, 2 MB 23 ms, 4 MB 188 ms, with a word cache cleared wholesale at 2^17 entries.)
// Text: 64 KB chunks of the `code` workload and of the `rank-table` workload, alternating, so
// every prefix has the same mix. Each size is encoded once by a fresh tokenizer (cold) in one
// call; cost per MB should not grow with the size. Bound: cost(4 MB) / (4 × cost(1 MB)) ≤ 1.5.
// Control: the same measurement for 0.5 MB (the per-MB cost at the smallest size).
// Metric: process CPU time, median of BENCH_ROUNDS (5) fresh runs per size; with BENCH_CALLGRIND=1
// also instruction counts (valgrind --tool=callgrind, collected inside Encoder::encode only),
// which do not depend on the machine's load.
//   node bench/linearity.mjs [MODEL]      env BENCH_ROUNDS, BENCH_CALLGRIND=1, --json-out FILE
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadTokenizer } from '../dist/index.js';
import { buildWorkload } from 'promptenc/bench';
import { envNumber, jsonOutPath, machine, writeJson } from './_common.mjs';

const model = process.argv[2] && !process.argv[2].startsWith('--') ? process.argv[2] : 'gpt-4o';
const SIZES_MB = [0.5, 1, 2, 4];
const BOUND = 1.5;

function mixedText(bytes) {
  const code = buildWorkload('code', { sizeBytes: 2.2 * 1024 * 1024 }).text;
  const ranks = buildWorkload('rank-table').text;
  let out = '';
  const chunk = 64 * 1024;
  for (let i = 0; out.length < bytes; i++) {
    const src = i % 2 ? ranks : code;
    const at = (Math.floor(i / 2) * chunk) % Math.max(1, src.length - chunk);
    out += src.slice(at, at + chunk);
  }
  return out.slice(0, bytes);
}

// Child mode (under callgrind): encode one size once, cold.
if (process.env.LINEARITY_CHILD) {
  const tok = await loadTokenizer(model, { backend: 'native' });
  tok.encode(mixedText(Number(process.env.LINEARITY_CHILD)), { addSpecialTokens: false });
  process.exit(0);
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const rounds = envNumber('BENCH_ROUNDS', 5);
const texts = new Map(SIZES_MB.map((mb) => [mb, mixedText(Math.round(mb * 1024 * 1024))]));
const samples = new Map(SIZES_MB.map((mb) => [mb, []]));
for (let r = 0; r < rounds; r++) {
  for (const mb of SIZES_MB) {
    const tok = await loadTokenizer(model, { backend: 'native' });
    const t0 = cpuMs();
    tok.encode(texts.get(mb), { addSpecialTokens: false });
    samples.get(mb).push(cpuMs() - t0);
  }
}
const med = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
const rows = SIZES_MB.map((mb) => ({ mb, cpuMs: med(samples.get(mb)), msPerMb: med(samples.get(mb)) / mb }));
const growth = rows.find((r) => r.mb === 4).msPerMb / rows.find((r) => r.mb === 1).msPerMb;

let instructions;
if (process.env.BENCH_CALLGRIND === '1') {
  instructions = [];
  for (const mb of [1, 4]) {
    const out = path.join(tmpdir(), `promptenc-linearity-${process.pid}-${mb}.cg`);
    const r = spawnSync(
      'valgrind',
      ['--tool=callgrind', `--callgrind-out-file=${out}`, '--toggle-collect=promptenc::Encoder::encode(*', process.execPath, process.argv[1], model],
      { env: { ...process.env, LINEARITY_CHILD: String(Math.round(mb * 1024 * 1024)) }, encoding: 'utf8' },
    );
    const m = /Collected : (\d+)/.exec(r.stderr ?? '');
    instructions.push({ mb, instructions: m ? Number(m[1]) : null, perByte: m ? Number(m[1]) / (mb * 1024 * 1024) : null });
    try {
      readFileSync(out);
    } catch {
      // no output file: valgrind missing
    }
  }
}

console.log(`linearity (${model}, cold, one call, 64 KB chunks of code and the o200k rank table alternating)`);
console.log('| MB | CPU ms (median) | ms per MB |');
console.log('|---|---|---|');
for (const r of rows) console.log(`| ${r.mb} | ${r.cpuMs.toFixed(1)} | ${r.msPerMb.toFixed(1)} |`);
console.log(`cost per MB at 4 MB ÷ at 1 MB: ${growth.toFixed(2)} (bound ${BOUND})${growth <= BOUND ? '' : '  ** OVER BOUND **'}`);
if (instructions) {
  for (const x of instructions)
    console.log(`instructions in Encoder::encode, ${x.mb} MB: ${x.instructions ?? 'n/a'} (${x.perByte?.toFixed(1) ?? 'n/a'} per byte)`);
  const [a, b] = instructions;
  if (a.perByte && b.perByte) console.log(`instructions per byte at 4 MB ÷ at 1 MB: ${(b.perByte / a.perByte).toFixed(3)} (bound ${BOUND})`);
}
// The verdict: instruction counts when measured (repeatable), else CPU time.
const [i1, i4] = instructions ?? [];
const verdict = i1?.perByte && i4?.perByte ? i4.perByte / i1.perByte : growth;
writeJson(jsonOutPath(), { question: 'linearity', model, machine: machine(), rows, growth, bound: BOUND, instructions, verdict });
if (verdict > BOUND) process.exitCode = 1;
