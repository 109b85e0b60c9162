/**
 * Long pre-tokens against the Rust oracle: the inputs of bench/adversarial.mjs (one
 * repeated letter, '_', spaces, newlines, digits, unbroken CJK, a random mix) at 64 KB,
 * plus sizes around the heap / rank-queue switch (BpeModel::kDefaultQueueMinSymbols).
 * Pieces this long go through RankQueue, which must pop exactly the (rank, position)
 * order of the word.rs heap. Timing targets live in bench/, not here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createNativeBackend, nativeAddonStatus } from '../src/backend/native.js';
import type { TokenizerJson } from '../src/tokenizer-json.js';
import { rng } from '../bench/helpers/conversation.mjs';
import { modelPath, oracleFor, type ModelName } from './helpers/oracle.js';

const status = nativeAddonStatus();
const MODELS: readonly ModelName[] = ['gpt-4o', 'llama3', 'deepseek-v3', 'qwen3'];

const KB = 1024;
function cjk(bytes: number, seed: number): string {
  const r = rng(seed);
  let s = '';
  for (let i = 0; i < bytes / 3; i++) s += String.fromCodePoint(0x4e00 + Math.floor(r() * 0x5000));
  return s;
}
function mixed(chars: number, seed: number): string {
  const r = rng(seed);
  const alphabet = Array.from('aaaaabcdeeeefghiijklmnoopqrstuvwxyz_-__  \n0123456789中文字符日本語😀é');
  let s = '';
  for (let i = 0; i < chars; i++) s += alphabet[Math.floor(r() * alphabet.length)];
  return s;
}
/** One long piece of random letters (no spaces): random pairs, many ranks. */
function letters(chars: number, seed: number): string {
  const r = rng(seed);
  let s = '';
  for (let i = 0; i < chars; i++) s += String.fromCharCode(97 + Math.floor(r() * (r() < 0.5 ? 5 : 26)));
  return s;
}

const CASES: Array<[string, string]> = [
  ['letter a', 'a'.repeat(64 * KB)],
  ['underscore', '_'.repeat(64 * KB)],
  ['spaces', ' '.repeat(64 * KB)],
  ['newlines', '\n'.repeat(64 * KB)],
  ['digits', '0123456789'.repeat(6554)],
  ['CJK unbroken', cjk(64 * KB, 7)],
  ['mixed random', mixed(40 * KB, 9)],
  ['random letters', letters(64 * KB, 11)],
  ['spaces then x', `${' '.repeat(20 * KB)}x${'\t'.repeat(3000)}${'!'.repeat(5000)}`],
  ...[255, 256, 1000, 1023, 1024, 1025, 4097].flatMap(
    (n): Array<[string, string]> => [
      [`a × ${n}`, 'a'.repeat(n)],
      [`letters × ${n}`, letters(n, n)],
      [`CJK ${n} bytes`, cjk(n, n)],
    ],
  ),
];

describe.skipIf(!status.available)('long pieces: native == oracle', () => {
  for (const m of MODELS) {
    it(m, async () => {
      const json = JSON.parse(readFileSync(modelPath(m), 'utf8')) as TokenizerJson;
      const be = createNativeBackend({ tokenizerJson: json, tokenizerConfig: {} });
      const oracle = oracleFor(modelPath(m));
      const encs = await oracle.encodeBatch(
        CASES.map((c) => c[1]),
        { addSpecialTokens: false },
      );
      const bad: string[] = [];
      CASES.forEach(([name, text], i) => {
        const want = encs[i]!.getIds();
        const got = be.encode(text);
        if (got.length !== want.length || got.some((x, j) => x !== want[j])) {
          const j = Array.from(got).findIndex((x, k) => x !== want[k]);
          bad.push(`${name}: ${got.length} vs oracle ${want.length} ids, first difference at ${j}`);
        }
      });
      expect(bad).toEqual([]);
    }, 60_000);
  }
});
