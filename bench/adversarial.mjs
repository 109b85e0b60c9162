// Question: does promptenc stay linear on "catastrophically repetitive" input, where BPE
// ports are known to go quadratic? 1 MB-class inputs of one repeated letter, '_', spaces,
// newlines, digits and unbroken CJK at 128 KB / 512 KB / 1 MB: ms each and the growth
// 128 KB → 1 MB (linear = 8×). Each figure is the best of up to 3 runs.
// Control: the same sizes of the ordinary mixed corpus (what linear looks like here).
// Peers (promptenc js backend, tiktoken, gpt-tokenizer, ai-tokenizer, Rust tokenizers) run
// only at 128 KB, each case in a child process killed after BENCH_ADV_TIMEOUT_S (default 5 s),
// because they can take minutes. Model: gpt-4o (o200k), so every peer applies.
//   child mode: node bench/adversarial.mjs --child ENGINE SIZES
import { loadEngines, buildCorpus, seededRandom } from 'promptenc/bench';
import { envNumber, f, jsonOutPath, machine, runChild, table, writeJson } from './_common.mjs';
import { fileURLToPath } from 'node:url';

const MODEL = process.env.BENCH_ADV_MODEL ?? 'gpt-4o';
const KB = 1024;
const SIZES = [128 * KB, 512 * KB, 1024 * KB];
const CASES = ['letter a', 'underscore', 'spaces', 'newlines', 'digits', 'CJK unbroken', 'control: mixed corpus'];

function input(kind, bytes) {
  switch (kind) {
    case 'letter a':
      return 'a'.repeat(bytes);
    case 'underscore':
      return '_'.repeat(bytes);
    case 'spaces':
      return ' '.repeat(bytes);
    case 'newlines':
      return '\n'.repeat(bytes);
    case 'digits':
      return '0123456789'.repeat(Math.ceil(bytes / 10)).slice(0, bytes);
    case 'CJK unbroken': {
      // 3 UTF-8 bytes per character, no punctuation or spaces: one giant pre-token for o200k.
      const rand = seededRandom(7);
      let s = '';
      for (let i = 0; i < bytes / 3; i++) s += String.fromCodePoint(0x4e00 + Math.floor(rand() * 0x5000));
      return s;
    }
    default: {
      const c = buildCorpus({ sizeBytes: bytes + 64 * KB });
      const t = c.text;
      let end = Math.min(t.length, bytes);
      while (Buffer.byteLength(t.slice(0, end)) > bytes) end -= Math.max(1, Math.floor((Buffer.byteLength(t.slice(0, end)) - bytes) / 3));
      return t.slice(0, end);
    }
  }
}

if (process.argv[2] === '--child') {
  const engineName = process.argv[3];
  const cases = process.argv[4].split(';').map((c) => {
    const [kind, size] = c.split('@');
    return { kind, size: Number(size) };
  });
  const { slots } = await loadEngines(MODEL, [engineName]);
  const e = slots[0];
  if (e.status !== 'ok') {
    console.log(JSON.stringify({ missing: e.reason }));
    process.exit(0);
  }
  await e.encode('warm up the code path, not the input: 東京 🚀 ___ 123');
  console.log(JSON.stringify({ ready: true, version: e.version }));
  for (const { kind, size } of cases) {
    const text = input(kind, size);
    // Best of up to 3 runs while they stay under ~1.5 s in total: a single cold run of a
    // 128 KB case is dominated by cache and allocator warm-up, which skews the growth ratio.
    let ms = Infinity;
    let tokens = 0;
    let spent = 0;
    for (let r = 0; r < 3 && spent < 1500; r++) {
      const t0 = process.hrtime.bigint();
      const ids = await e.encode(text);
      const t = Number(process.hrtime.bigint() - t0) / 1e6;
      ms = Math.min(ms, t);
      spent += t;
      tokens = ids.length;
    }
    console.log(JSON.stringify({ kind, size, ms, tokens }));
  }
  process.exit(0);
}

const timeoutMs = envNumber('BENCH_ADV_TIMEOUT_S', 5) * 1000;
const self = fileURLToPath(import.meta.url);
const plan = [
  { engine: 'promptenc-native', sizes: SIZES },
  { engine: 'promptenc-js', sizes: [SIZES[0]] },
  { engine: 'tiktoken', sizes: [SIZES[0]] },
  { engine: 'gpt-tokenizer', sizes: [SIZES[0]] },
  { engine: 'ai-tokenizer', sizes: [SIZES[0]] },
  { engine: 'hf-tokenizers', sizes: [SIZES[0]] },
];
const key = (c) => `${c.kind}@${c.size}`;

const results = {};
for (const { engine, sizes } of plan) {
  process.stderr.write(`adversarial: ${engine}\n`);
  const res = (results[engine] = { version: undefined, missing: undefined, cases: {} });
  let remaining = CASES.flatMap((kind) => sizes.map((size) => ({ kind, size })));
  // Each child runs the remaining cases in order; when one exceeds the budget the child is
  // killed (by its pid), that case is recorded as timed out, and a new child resumes after it.
  while (remaining.length > 0) {
    const r = await runChild(self, ['--child', engine, remaining.map(key).join(';')], { timeoutMs, firstTimeoutMs: 60_000 });
    const missing = r.lines.find((l) => l.missing);
    if (missing) {
      res.missing = missing.missing;
      break;
    }
    res.version ??= r.lines.find((l) => l.ready)?.version;
    for (const l of r.lines.filter((l) => l.kind)) res.cases[key(l)] = l;
    const next = remaining.filter((c) => !res.cases[key(c)]);
    if (next.length === 0) break;
    const failed = next[0];
    res.cases[key(failed)] = { ...failed, timedOut: r.timedOut, error: r.timedOut ? undefined : r.stderr.split('\n').slice(-1)[0] || `exit ${r.code}` };
    remaining = next.slice(1);
  }
}

const cell = (c) => (!c ? '' : c.timedOut ? `> ${timeoutMs / 1000} s (killed)` : c.error ? `error: ${c.error}` : `${f(c.ms, c.ms < 10 ? 2 : 0)} ms`);
const headers = [
  'input',
  'native 128 KB',
  'native 512 KB',
  'native 1 MB',
  'growth 128K→1M (linear 8×)',
  'js 128 KB',
  'tiktoken 128 KB',
  'gpt-tokenizer 128 KB',
  'ai-tokenizer 128 KB',
  'tokenizers 128 KB',
  'best peer ÷ native @128 KB',
];
const rows = CASES.map((kind) => {
  const n = (size) => results['promptenc-native'].cases[`${kind}@${size}`];
  const p = (engine) => (results[engine].missing ? 'missing' : cell(results[engine].cases[`${kind}@${SIZES[0]}`]));
  const small = n(SIZES[0]);
  const big = n(SIZES[2]);
  const growth = small?.ms && big?.ms ? `${f(big.ms / small.ms, 1)}×` : '–';
  const peerMs = ['promptenc-js', 'tiktoken', 'gpt-tokenizer', 'ai-tokenizer', 'hf-tokenizers']
    .map((e) => results[e].cases[`${kind}@${SIZES[0]}`])
    .filter((c) => c && !c.timedOut && !c.error)
    .map((c) => c.ms);
  const ratio = small?.ms && peerMs.length ? `${f(Math.min(...peerMs) / small.ms, 1)}×` : '–';
  return [
    kind,
    cell(small),
    cell(n(SIZES[1])),
    cell(big),
    growth,
    p('promptenc-js'),
    p('tiktoken'),
    p('gpt-tokenizer'),
    p('ai-tokenizer'),
    p('hf-tokenizers'),
    ratio,
  ];
});
if (results['promptenc-native'].missing) console.log(`promptenc-native missing: ${results['promptenc-native'].missing}\n`);
console.log(`### Adversarial inputs (${MODEL}), best of up to 3 encode() calls each\n`);
console.log(table(headers, rows));
console.log(`\nPeers ran at 128 KB only, each case capped at ${timeoutMs / 1000} s (killed beyond): they are known to go quadratic on long pieces.`);
writeJson(jsonOutPath(), { bench: 'adversarial', machine: machine(), model: MODEL, timeoutMs, sizes: SIZES, results });
