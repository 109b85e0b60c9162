// Question: is build B of the native addon faster than build A on the same corpus? The
// per-change speedups in native/README.md come from this script. Both addons are loaded
// side by side in one process (PROMPTENC_NATIVE_PATH is read per load), and whole corpus
// passes alternate A B / B A, so this VM's drifting core speed (an SMT co-tenant, see
// native/README.md) hits both alike; the result is the median of the per-round B/A
// throughput ratios. Token counts must be equal every round. Not part of run-all: it
// needs two builds (copy build/Release/promptenc.node aside before rebuilding).
// BENCH_WORKLOAD=NAME uses a named workload (bench/lib/workloads.ts) instead of the mixed
// corpus. Passes are timed in process CPU time (co-tenants disturb it less than wall time).
//   node bench/native-ab.mjs MODEL A.node B.node [ROUNDS]
import path from 'node:path';
import { loadTokenizer } from '../dist/index.js';
import { buildCorpus, buildWorkload } from 'promptenc/bench';

const [model, aArg, bArg, rounds = '12'] = process.argv.slice(2);
if (!model || !aArg || !bArg) {
  console.error('usage: node bench/native-ab.mjs MODEL A.node B.node [ROUNDS]');
  process.exit(2);
}
// Absolute paths: the addon is loaded with require, which would read a bare relative path as a package.
const [a, b] = [path.resolve(aArg), path.resolve(bArg)];
process.env.PROMPTENC_NATIVE_PATH = a;
const ta = await loadTokenizer(model, { backend: 'native' });
process.env.PROMPTENC_NATIVE_PATH = b;
const tb = await loadTokenizer(model, { backend: 'native' });
const corpus = process.env.BENCH_WORKLOAD ? buildWorkload(process.env.BENCH_WORKLOAD) : buildCorpus({ sizeBytes: 5 * 1024 * 1024 });
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const docs = corpus.documents.map((d) => d.text);

function pass(tok) {
  const t0 = cpuMs();
  let n = 0;
  for (const d of docs) n += tok.encode(d, { addSpecialTokens: false }).length;
  return [corpus.bytes / 1e3 / Math.max(0.001, cpuMs() - t0), n];
}
pass(ta); // warm-up: JIT, word caches
pass(tb);
const ra = [];
const rb = [];
const ratio = [];
for (let r = 0; r < Number(rounds); r++) {
  const first = r % 2 ? tb : ta;
  const second = r % 2 ? ta : tb;
  const [x, nx] = pass(first);
  const [y, ny] = pass(second);
  if (nx !== ny) throw new Error(`round ${r}: token counts differ (${nx} vs ${ny})`);
  const [mA, mB] = r % 2 ? [y, x] : [x, y];
  ra.push(mA);
  rb.push(mB);
  ratio.push(mB / mA);
}
const med = (v) => [...v].sort((p, q) => p - q)[v.length >> 1];
console.log(
  `${model} ${process.env.BENCH_WORKLOAD ?? 'mixed 5 MB'}: A ${med(ra).toFixed(1)} MB/CPU-s, B ${med(rb).toFixed(1)} MB/CPU-s, B/A median ${med(ratio).toFixed(3)} (rounds ${Math.min(...ratio).toFixed(3)}–${Math.max(...ratio).toFixed(3)}), same token counts`,
);
