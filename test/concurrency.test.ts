/**
 * Eight worker threads, each with its own copies of a model (four share Qwen3's file, four use
 * Qwen3, GPT-4o, Llama 3 and DeepSeek-V3), run sync encodes, concurrent encodeAsync / encodeBatch
 * on one shared tokenizer, and sessions on a second one, while the main thread keeps its own
 * shared tokenizers busy with encodeAsync / encodeBatch. Every result is checked against the
 * oracle's ids: no crash, no mismatch, and the main event loop's lag stays under 50 ms throughout
 * (the main thread's own CPU time between two ticks of a 5 ms timer: see helpers/event-loop-lag.ts).
 *
 * Duration: PROMPTENC_CONCURRENCY_SECONDS (default 5, the burst `npm test` runs;
 * `npm run test:concurrency` runs 30 s). Workers load the built library (dist/, which `npm test`
 * builds first); without a current build the test is skipped with a warning.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { nativeAddonStatus } from '../src/backend/native.js';
import { loadTokenizer } from '../src/index.js';
import { startLagMonitor } from './helpers/event-loop-lag.js';
import { modelPath, oracleEncode, type ModelName } from './helpers/oracle.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const distIndex = join(root, 'dist', 'index.js');
const SECONDS = Number(process.env.PROMPTENC_CONCURRENCY_SECONDS ?? 5);

function newestSource(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newestSource(p) : statSync(p).mtimeMs);
  }
  return t;
}
const distCurrent = existsSync(distIndex) && statSync(distIndex).mtimeMs >= newestSource(join(root, 'src'));
const native = nativeAddonStatus().available;
if (!distCurrent) console.warn('concurrency test skipped: dist/ is missing or older than src/ (run npm run build)');
if (!native) console.warn('concurrency test skipped: native addon not built');

const CORPUS: Array<{ text: string }> = JSON.parse(readFileSync(join(root, 'test', 'fixtures', 'corpus', 'cases.json'), 'utf8'));
const EXTRA = [
  'Cafe\u0301 Vie\u0323\u0302t \u1100\u1161\u11a8 \u{105D2}\u0307 \u{11382}\u{113C9} \u{16D67}\u{16D67}', // not NFC
  "\u0627'\u017f'dd don't WE'LL",
  '<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
  'The quick brown fox, 12345 times; \u65e5\u672c\u8a9e\u306e\u6587\u7ae0\u3002 e\u0301 \u{1F600}\n'.repeat(600),
];
const SESSION_PIECES = [
  'You are helpful.\n',
  'User: re\u0301sume\u0301 please',
  ' \u2014 and more',
  '\nAssistant: ',
  'Sure'.repeat(50),
  ' \u00e9\u0301\u0323 done.\n',
];

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const WORKER_MODELS: ModelName[] = ['qwen3', 'qwen3', 'qwen3', 'qwen3', 'qwen3', 'gpt-4o', 'llama3', 'deepseek-v3'];

interface ModelData {
  texts: string[];
  expected: number[][];
  sessionPieces: string[];
  sessionExpected: number[][];
}
async function modelData(model: ModelName): Promise<ModelData> {
  const texts = [...CORPUS.map((c) => c.text).filter((t) => t.length > 0 && t.length < 2000 && !LONE_SURROGATE.test(t)), ...EXTRA];
  const path = modelPath(model);
  const expected = await Promise.all(texts.map((t) => oracleEncode(path, t, false)));
  const prefixes = SESSION_PIECES.map((_, k) => SESSION_PIECES.slice(0, k + 1).join(''));
  const sessionExpected = await Promise.all(prefixes.map((t) => oracleEncode(path, t, false)));
  return { texts, expected, sessionPieces: SESSION_PIECES, sessionExpected };
}

const same = (ids: Uint32Array, want: number[]) => ids.length === want.length && ids.every((x, i) => x === want[i]);

describe.skipIf(!distCurrent || !native)(`concurrency: 8 workers and the main thread for ${SECONDS} s`, () => {
  it(
    'no crash, no mismatch against the oracle, event-loop lag < 50 ms',
    async () => {
      const mainModels: ModelName[] = ['qwen3', 'gpt-4o'];
      const models = [...new Set([...WORKER_MODELS, ...mainModels])];
      const data = new Map(await Promise.all(models.map(async (m) => [m, await modelData(m)] as const)));
      const mainToks = await Promise.all(mainModels.map((m) => loadTokenizer(m, { backend: 'native' })));

      // Workers load their tokenizers first; the clock (and the lag bound) starts when all are ready.
      const workers: Worker[] = [];
      const ready: Array<Promise<void>> = [];
      const results = WORKER_MODELS.map(
        (model, i) =>
          new Promise<{ ops: number; mismatches: string[] }>((resolve, reject) => {
            const w = new Worker(new URL('./helpers/concurrency-worker.mjs', import.meta.url), {
              workerData: { distIndex: pathToFileURL(distIndex).href, model, ...data.get(model)!, seed: 0x9e3779b9 + i },
            });
            workers.push(w);
            ready.push(new Promise((r) => w.once('message', () => r())));
            w.once('error', reject);
            w.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`worker ${i} (${model}) exited with ${code}`))));
            void ready[i]!.then(() => w.once('message', resolve));
          }),
      );
      await Promise.all(ready);
      const deadline = Date.now() + SECONDS * 1000;
      for (const w of workers) w.postMessage({ deadline });

      const lag = startLagMonitor();
      let lagMs = { max: Infinity, wall: Infinity };
      let mainOps = 0;
      const mainBad: string[] = [];
      try {
        while (Date.now() < deadline) {
          for (const [k, tok] of mainToks.entries()) {
            const d = data.get(mainModels[k]!)!;
            const i = mainOps % d.texts.length;
            const picks = [i, (i + 7) % d.texts.length, (i + 13) % d.texts.length];
            const [one, batch] = await Promise.all([
              tok.encodeAsync(d.texts[i]!, { addSpecialTokens: false }),
              tok.encodeBatch(
                picks.map((j) => d.texts[j]!),
                { addSpecialTokens: false, threads: 2 },
              ),
            ]);
            if (!same(one, d.expected[i]!)) mainBad.push(`main ${mainModels[k]} encodeAsync text ${i}`);
            batch.forEach((ids, j) => {
              if (!same(ids, d.expected[picks[j]!]!)) mainBad.push(`main ${mainModels[k]} encodeBatch text ${picks[j]}`);
            });
            mainOps += 4;
          }
        }
      } finally {
        lagMs = lag.stop();
      }
      const done = await Promise.all(results);
      console.log(
        `concurrency: ${SECONDS} s, worker ops ${done.map((r) => r.ops).join(' ')}, main ops ${mainOps}, ` +
          `main thread busy at most ${lagMs.max.toFixed(1)} ms between 5 ms ticks (wall-clock lag ${lagMs.wall.toFixed(1)} ms)`,
      );
      expect(mainBad.slice(0, 5)).toEqual([]);
      expect(done.flatMap((r) => r.mismatches)).toEqual([]);
      for (const r of done) expect(r.ops).toBeGreaterThan(0);
      expect(mainOps).toBeGreaterThan(0);
      expect(lagMs.max).toBeLessThan(50);
    },
    120_000 + SECONDS * 1000,
  );

  it.each(['exit', 'terminate'])('%s (process.exit / worker.terminate) with calls in flight in eight workers ends the process normally', (mode) => {
    // A subprocess: an abort there must not take the test runner with it.
    const r = spawnSync(process.execPath, [join(root, 'test', 'helpers', 'exit-in-flight.mjs'), mode, pathToFileURL(distIndex).href], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect({ status: r.status, signal: r.signal, stderr: r.stderr }).toEqual({ status: 0, signal: null, stderr: '' });
  });

  it('the lag monitor flags 100 ms of CPU work on the main thread (over the 50 ms bound)', async () => {
    // process.cpuUsage counts every thread of the process: the main thread's share is less.
    const lag = startLagMonitor();
    await new Promise((r) => setTimeout(r, 20));
    const start = process.cpuUsage();
    for (let used = 0; used < 100_000; ) {
      const d = process.cpuUsage(start);
      used = d.user + d.system;
    }
    await new Promise((r) => setTimeout(r, 20));
    expect(lag.stop().max).toBeGreaterThan(50);
  });
});
