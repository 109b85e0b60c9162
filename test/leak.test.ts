/**
 * Memory stays bounded (issue 20, item 5): RSS after many load → encode → drop cycles and
 * after many encodes on one tokenizer grows by no more than a fixed allowance over its level
 * after a warm-up. A leak of the native encoder (tens of MB per real model) or of per-call
 * scratch space would grow it linearly. This is the short version that `npm test` runs;
 * `npm run test:leak` (scripts/test-leak.mjs) runs the counts, 10^4 load/drop cycles
 * and 10^6 encodes, in minutes. PROMPTENC_LEAK_SCALE=N multiplies the counts here.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { loadTokenizer } from '../src/index.js';
import { nativeAddonStatus } from '../src/backend/native.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const SCALE = Number(process.env.PROMPTENC_LEAK_SCALE ?? 1);
const MB = 1024 * 1024;

function settledRss(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().rss;
}

const TEXT = "Hello world! It's 2024 — naïve café, 中文字符, 😀👍, code() { return 42; }\n".repeat(8);

describe.skipIf(!nativeAddonStatus().available)('memory: RSS stays flat', () => {
  it(`load, encode and drop gpt-4o natively ${10 * SCALE} times`, async () => {
    const cycle = async () => {
      const tok = await loadTokenizer('gpt-4o', { backend: 'native' });
      tok.encode(TEXT);
      await tok.encodeAsync(TEXT);
    };
    for (let i = 0; i < 3; i++) await cycle();
    const before = settledRss();
    for (let i = 0; i < 10 * SCALE; i++) {
      await cycle();
      if (i % 5 === 4) gc();
    }
    const after = settledRss();
    console.log(`load/drop: RSS ${(before / MB).toFixed(0)} MB → ${(after / MB).toFixed(0)} MB over ${10 * SCALE} cycles`);
    // One gpt-4o native encoder is ~40 MB: a leak of it would add ~400 MB here.
    expect((after - before) / MB).toBeLessThan(150);
  });

  it(`${6_000 * SCALE} encodes, counts and batches on one tokenizer`, async () => {
    const tok = await loadTokenizer('qwen3', { backend: 'native' });
    const texts = Array.from({ length: 64 }, (_, i) => `${TEXT.slice(i)} e\u0301 ${i} ${'x'.repeat(i * 50)}`);
    for (let i = 0; i < 1000; i++) tok.encode(texts[i % 64]!);
    const before = settledRss();
    for (let i = 0; i < 6_000 * SCALE; i++) {
      const t = texts[i % 64]!;
      tok.encode(t);
      tok.count(t);
      if (i % 1000 === 0) await tok.encodeBatch(texts, { threads: 2 });
    }
    const after = settledRss();
    console.log(`encodes: RSS ${(before / MB).toFixed(0)} MB → ${(after / MB).toFixed(0)} MB over ${6_000 * SCALE} rounds`);
    expect((after - before) / MB).toBeLessThan(64);
  });
});
