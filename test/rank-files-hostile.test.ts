/**
 * Tiktoken rank-file loading (src/tiktoken-model.ts): hostile files must be refused
 * or loaded in bounded time, and loaded ones give tiktoken's own ids (npm `tiktoken` is the
 * oracle: `new Tiktoken(ranks, specials, pattern).encode(text, 'all')`).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { get_encoding } from 'tiktoken';
import { Tiktoken } from 'tiktoken/lite';
import { afterAll, describe, expect, it } from 'vitest';
import { CL100K_REGEX } from '../src/families.js';
import { loadTokenizer, PromptencError } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'promptenc-hostile-ranks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A rank file of the 256 single bytes and 2^k tokens of k 128-byte Thue-Morse blocks (each
 * block the sequence or its complement): all 2^k tokens have one polynomial hash modulo 2^32
 * whatever the (odd) base, the classic attack on such hashes.
 */
function collidingRankFile(k: number): string {
  const L = 128;
  const t = new Uint8Array(L);
  for (let i = 0; i < L; i++) {
    let x = i;
    let c = 0;
    while (x) {
      c ^= x & 1;
      x >>= 1;
    }
    t[i] = c ? 0x62 : 0x61;
  }
  const u = t.map((b) => (b === 0x61 ? 0x62 : 0x61));
  const lines: string[] = [];
  for (let b = 0; b < 256; b++) lines.push(`${Buffer.from([b]).toString('base64')} ${b}`);
  const tok = new Uint8Array(L * k);
  for (let m = 0; m < 1 << k; m++) {
    for (let j = 0; j < k; j++) tok.set((m >> j) & 1 ? u : t, j * L);
    lines.push(`${Buffer.from(tok).toString('base64')} ${256 + m}`);
  }
  const file = join(dir, `colliding-${k}.tiktoken`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

describe('a rank file crafted for hash collisions', () => {
  it('loads in bounded time (it took 30 s for 8 MB, minutes near the 64 MB limit)', async () => {
    const file = collidingRankFile(12);
    const oracle = new Tiktoken(readFileSync(file, 'utf8'), {}, CL100K_REGEX);
    for (const backend of ['native', 'js'] as const) {
      const t0 = Date.now();
      const tok = await loadTokenizer(file, { encoding: 'cl100k_base', backend });
      expect(Date.now() - t0, backend).toBeLessThan(10_000);
      const text = `xyz ${'ab'.repeat(300)} ba`;
      expect(Array.from(tok.encode(text, { addSpecialTokens: false }))).toEqual(Array.from(oracle.encode_ordinary(text)));
    }
  }, 120_000);
});

describe('r50k_base (GPT-2 pattern) on the js backend', () => {
  it('U+FEFF is not whitespace and U+0085 is, as in tiktoken (the library hard-codes JS \\s)', async () => {
    const require = createRequire(import.meta.url);
    const file = require.resolve('gpt-tokenizer/data/r50k_base.tiktoken');
    const oracle = get_encoding('r50k_base');
    const texts = ['<|end  \ufeff½...', '!  \u0085<|end한', 'a \ufeff b', 'x\u0085\u0085 y', "\u3000\u{1F3FB}'s\ufeff\n", ' \u0085'];
    for (const backend of ['js', 'native'] as const) {
      const tok = await loadTokenizer(file, { backend });
      for (const text of texts)
        expect(Array.from(tok.encode(text, { addSpecialTokens: false })), `${backend} ${JSON.stringify(text)}`).toEqual(Array.from(oracle.encode(text, 'all')));
    }
    oracle.free();
  });
});

describe('a rank file whose tokens split into two tokens in many ways', () => {
  it("'a' repeated 2 to 4,096 times (11 MB) is refused at once, not a load of 2.3e10 merge bytes", async () => {
    const lines: string[] = [];
    for (let b = 0; b < 256; b++) lines.push(`${Buffer.from([b]).toString('base64')} ${b}`);
    for (let n = 2; n <= 4096; n++) lines.push(`${Buffer.from('a'.repeat(n)).toString('base64')} ${254 + n}`);
    const file = join(dir, 'runs.tiktoken');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const t0 = Date.now();
    let err: unknown;
    try {
      await loadTokenizer(file, { encoding: 'cl100k_base' });
    } catch (e) {
      err = e;
    }
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(err).toBeInstanceOf(PromptencError);
    expect((err as PromptencError).code).toBe('E_TOKENIZER_INVALID');
  }, 60_000);
});
