#!/usr/bin/env node
// `npm run test:leak`: memory stays flat at the scale of issue 20 (item 5): 10^4 native
// load → use → drop cycles and 10^6 encodes on one tokenizer. test/leak.test.ts runs a short
// version of both in `npm test`; this is the long one (minutes), run by hand or on a release.
//
// How a leak shows: RSS and the V8 heap are read after three full GCs at 10 checkpoints per
// phase. A leak grows them linearly with the work, so the check is on the growth from the
// first checkpoint (after a warm-up: word caches, V8's code, malloc's arenas are at their
// working size by then) to the last: it must stay under a fixed allowance that is far below
// what a leak of one encoder per cycle (or of one byte per encode) would add.
//
// The load/drop phase uses a small tokenizer cut from GPT-4o's real file (the first
// kSmallVocab ids and the merges among them), so 10^4 cycles take minutes rather than the
// hours of 10^4 full loads; a leak of anything an encoder owns still scales with the cycles.
// A shorter run of full GPT-4o loads covers the size-dependent parts (kFullCycles).
//
// Usage: npm run test:leak [-- --cycles N --full-cycles N --encodes N --gc-every N]
// Prints one line per checkpoint and a JSON summary; exits 1 when a bound is exceeded.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { loadTokenizer } = await import(pathToFileURL(join(root, 'dist', 'index.js')).href);
const { resolveBundled } = await import(pathToFileURL(join(root, 'dist', 'load.js')).href);

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const CYCLES = arg('--cycles', 10_000);
const FULL_CYCLES = arg('--full-cycles', 500);
const ENCODES = arg('--encodes', 1_000_000);
// A full GC every this many load/drop cycles. The native encoder is freed when V8 collects
// its wrapper, and V8 is not told its size, so without these GCs the dropped encoders wait for
// a GC that JS allocation alone triggers rarely: with --gc-every 0, 1,000 small cycles between
// two checkpoints took RSS ~440 MB up (and then flat), which measures garbage, not a leak.
const GC_EVERY = arg('--gc-every', 10);
const MB = 1024 * 1024;
// Allowances on the growth from the first to the last checkpoint. One GPT-4o native encoder is
// ~40 MB and the small one ~1 MB, so a leak of either per cycle would exceed these many times over.
const RSS_ALLOWANCE_MB = 96;
const HEAP_ALLOWANCE_MB = 16;

const TEXT = "Hello world! It's 2024 — naïve café, 中文字符, 😀👍, code() { return 42; }\n".repeat(8);

function settled() {
  for (let i = 0; i < 3; i++) gc();
  const m = process.memoryUsage();
  return { rss: m.rss / MB, heap: m.heapUsed / MB };
}

/** Runs `step(i)` n times with 10 checkpoints; returns the growth from the first to the last. */
async function phase(name, n, step) {
  const points = [];
  const every = Math.max(1, Math.floor(n / 10));
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    await step(i);
    if ((i + 1) % every === 0 || i + 1 === n) {
      const p = settled();
      points.push(p);
      console.log(
        `${name}: ${String(i + 1).padStart(String(n).length)}/${n}  RSS ${p.rss.toFixed(1)} MB  heap ${p.heap.toFixed(1)} MB  ${((performance.now() - t0) / 1000).toFixed(0)} s`,
      );
    }
  }
  const first = points[0];
  const last = points[points.length - 1];
  const maxRss = Math.max(...points.map((p) => p.rss));
  return {
    name,
    n,
    seconds: Math.round((performance.now() - t0) / 1000),
    rssFirstMB: +first.rss.toFixed(1),
    rssLastMB: +last.rss.toFixed(1),
    rssMaxMB: +maxRss.toFixed(1),
    rssGrowthMB: +(last.rss - first.rss).toFixed(1),
    heapGrowthMB: +(last.heap - first.heap).toFixed(1),
  };
}

/** GPT-4o's tokenizer.json with only ids < vocab and the merges among them (a valid file). */
function smallTokenizerDir(vocab) {
  const dir = mkdtempSync(join(tmpdir(), 'promptenc-leak-'));
  const src = resolveBundled('gpt-4o');
  const json = JSON.parse(readFileSync(src, 'utf8'));
  const kept = Object.fromEntries(Object.entries(json.model.vocab).filter(([, id]) => id < vocab));
  const parts = (m) => (Array.isArray(m) ? m : m.split(' '));
  json.model.vocab = kept;
  json.model.merges = json.model.merges.filter((m) => {
    const [a, b] = parts(m);
    return a in kept && b in kept && `${a}${b}` in kept;
  });
  json.added_tokens = [];
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(json));
  return dir;
}

const results = [];
const small = smallTokenizerDir(5000);
try {
  const useAndDrop = async (source) => {
    const tok = await loadTokenizer(source, { backend: 'native' });
    tok.encode(TEXT);
    tok.count(TEXT);
    await tok.encodeAsync(TEXT);
    await tok.encodeBatch([TEXT, TEXT.slice(7)], { threads: 2 });
    tok.createSession().append(TEXT);
  };
  for (let i = 0; i < 20; i++) await useAndDrop(small);
  const cycle = (source) => async (i) => {
    await useAndDrop(source);
    if (GC_EVERY > 0 && i % GC_EVERY === GC_EVERY - 1) gc();
  };
  results.push(await phase('load/drop (small)', CYCLES, cycle(small)));
  for (let i = 0; i < 3; i++) await useAndDrop('gpt-4o');
  results.push(await phase('load/drop (gpt-4o)', FULL_CYCLES, cycle('gpt-4o')));
} finally {
  rmSync(small, { recursive: true, force: true });
}

{
  const tok = await loadTokenizer('qwen3', { backend: 'native' });
  // Varied lengths, non-NFC text (the native NFC path) and one long piece per 64 texts.
  const texts = Array.from({ length: 64 }, (_, i) => `${TEXT.slice(i)} e\u0301 ${i} ${'x'.repeat(i * 50)}`);
  const session = tok.createSession();
  for (let i = 0; i < 5000; i++) tok.encode(texts[i % 64]);
  results.push(
    await phase('encodes (qwen3)', ENCODES, async (i) => {
      const t = texts[i % 64];
      tok.encode(t);
      if (i % 4 === 0) tok.count(t);
      if (i % 64 === 0) tok.decode(tok.encode(t));
      if (i % 256 === 0) session.encode(t);
      if (i % 10_000 === 0) {
        await tok.encodeBatch(texts, { threads: 2 });
        await tok.encodeAsync(t);
      }
    }),
  );
}

let failed = false;
for (const r of results) {
  const ok = r.rssGrowthMB < RSS_ALLOWANCE_MB && r.heapGrowthMB < HEAP_ALLOWANCE_MB;
  if (!ok) failed = true;
  console.log(
    `${ok ? 'ok  ' : 'FAIL'} ${r.name}: ${r.n} in ${r.seconds} s, RSS ${r.rssFirstMB} → ${r.rssLastMB} MB (+${r.rssGrowthMB}, max ${r.rssMaxMB}), heap +${r.heapGrowthMB} MB`,
  );
}
console.log(JSON.stringify({ gcEvery: GC_EVERY, rssAllowanceMB: RSS_ALLOWANCE_MB, heapAllowanceMB: HEAP_ALLOWANCE_MB, results }));
if (failed) {
  console.error(`test:leak FAILED: growth above ${RSS_ALLOWANCE_MB} MB RSS or ${HEAP_ALLOWANCE_MB} MB heap`);
  process.exit(1);
}
console.log('test:leak: memory flat');
