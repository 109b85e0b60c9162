// Question: how many MB/s does promptenc encode on a realistic mixed corpus, compared with
// every peer that speaks the same vocabulary, measured in the same run?
// Control: UTF-8 encoding of the same documents (TextEncoder), the floor cost of touching the
// input at all. Targets: native ≥ 60 MB/s (deepseek-v3, qwen3, llama3, gpt-4o); on o200k
// ≥ 4× gpt-tokenizer and ai-tokenizer; ≥ 25× Rust tokenizers.
//   env BENCH_MODELS=a,b  BENCH_SECONDS=2  BENCH_CORPUS_MB=5
import { runBench, formatTable, buildCorpus } from 'promptenc/bench';
import { envNumber, f, jsonOutPath, machine, table, writeJson } from './_common.mjs';

const models = (process.env.BENCH_MODELS ?? 'deepseek-v3,qwen3,llama3,gpt-4o').split(',');
const seconds = envNumber('BENCH_SECONDS', 2);
const corpusSize = Math.round(envNumber('BENCH_CORPUS_MB', 5) * 1024 * 1024);

function control() {
  const corpus = buildCorpus({ sizeBytes: corpusSize });
  const enc = new TextEncoder();
  const samples = [];
  for (let r = 0; r < 5; r++) {
    const t0 = process.hrtime.bigint();
    for (const d of corpus.documents) enc.encode(d.text);
    samples.push(corpus.bytes / 1e6 / (Number(process.hrtime.bigint() - t0) / 1e9));
  }
  samples.sort((a, b) => a - b);
  return { name: 'control: TextEncoder.encode', mbps: samples[2] };
}

/**
 * Second control: how much of its core this process gets. Six independent add/xor/shift
 * chains are throughput-bound, like the encoder; a latency-bound loop (one chain) is not.
 * On this 2-vCPU VM the throughput-bound loop swings 1.3-1.5× within seconds while the
 * latency-bound one stays flat, and native encode MB/s swings with it: a co-tenant on the
 * SMT sibling of our core. Reported per model as the loop's best time over its median
 * (1.00 = never contended) so a slow row can be read against the machine's state.
 */
function coreLoopMs() {
  let a = 1,
    b = 2,
    c = 3,
    d = 4,
    e = 5,
    g = 6;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < 2e7; i++) {
    a = (a + i) ^ (a >>> 3);
    b = (b + i) ^ (b >>> 5);
    c = (c + i) ^ (c >>> 7);
    d = (d + i) ^ (d >>> 2);
    e = (e + i) ^ (e >>> 1);
    g = (g + i) ^ (g >>> 4);
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if ((a ^ b ^ c ^ d ^ e ^ g) === 0.5) console.log(''); // keeps the loop live
  return ms;
}
const coreSamples = new Map();
function sampleCore(model) {
  const xs = coreSamples.get(model) ?? [];
  for (let k = 0; k < 3; k++) xs.push(coreLoopMs());
  coreSamples.set(model, xs);
}
coreLoopMs(); // JIT warm-up

const ctl = control();
const runs = [];
for (const model of models) {
  process.stderr.write(`encode-throughput: ${model}\n`);
  sampleCore(model);
  const r = await runBench({ source: model, seconds, corpusSize, skip: { count: true, chat: true, batch: true } });
  sampleCore(model);
  runs.push(r);
  console.log(`### ${model}\n\n${formatTable(r)}\n`);
}

const get = (r, name) => r.engines.find((e) => e.name === name && e.status === 'ok');
const rows = runs.map((r) => {
  const base = get(r, 'promptenc-native') ?? get(r, 'promptenc-js');
  const vs = (peer, target) => {
    const p = get(r, peer);
    if (!p) return 'missing';
    const x = base.encode.mbps.median / p.encode.mbps.median;
    // Per CPU-second as well: on a shared machine wall-clock ratios carry others' load.
    const c = base.encode.mbpsPerCpuSecond / p.encode.mbpsPerCpuSecond;
    return `${f(x, 1)}× ${x >= target ? 'PASS' : 'FAIL'} (cpu ${f(c, 1)}×)`;
  };
  const native = get(r, 'promptenc-native');
  return [
    r.model,
    native
      ? `${f(native.encode.mbps.median, 1)} ${native.encode.mbps.median >= 60 ? 'PASS' : 'FAIL'} (${f(native.encode.mbpsPerCpuSecond, 1)}/CPU-s, share ${f(native.encode.cpuShare, 2)})`
      : `missing (js ${f(base.encode.mbps.median, 2)})`,
    vs('hf-tokenizers', 25),
    r.vocabulary.startsWith('o200k') ? vs('gpt-tokenizer', 4) : 'n/a',
    r.vocabulary.startsWith('o200k') ? vs('ai-tokenizer', 4) : 'n/a',
    r.agreement.ok ? 'all agree' : `MISMATCH: ${r.agreement.disagreeing.join(', ')}`,
  ];
});
console.log(`### Targets (promptenc ${runs[0]?.baseline ?? ''} vs peers, same run)\n`);
console.log(
  table(['model', 'native MB/s (target ≥60)', '× tokenizers, Rust (≥25×)', '× gpt-tokenizer (≥4×)', '× ai-tokenizer (≥4×)', 'token agreement'], rows),
);
console.log(`\n${ctl.name}: ${f(ctl.mbps, 0)} MB/s on the same documents`);
const allCore = [...coreSamples.values()].flat();
const best = Math.min(...allCore);
const median = (xs) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
const core = Object.fromEntries([...coreSamples].map(([m, xs]) => [m, { medianMs: median(xs), share: best / median(xs) }]));
console.log(
  `control: throughput-bound integer loop, best ${f(best, 1)} ms; core share (best / median around each model) ${[...coreSamples.keys()].map((m) => `${m} ${f(core[m].share, 2)}`).join(', ')}`,
);
writeJson(jsonOutPath(), { bench: 'encode-throughput', machine: machine(), control: ctl, coreControl: { bestMs: best, perModel: core }, runs });
