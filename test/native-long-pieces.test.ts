/**
 * Long pre-tokens that exercise the cut search of BpeModel::mergeWord (pieces of >= 1024
 * bytes are cut every ~512 bytes at boundaries that no merge can cross, and the chunks
 * are merged apart) against the Rust oracle. Each text is encoded twice by the native
 * core: with the defaults, and with PROMPTENC_NATIVE_QUEUE_MIN=2 (a cut is tried at every
 * boundary of every piece, and every chunk goes through RankQueue).
 * Inputs: concatenations of real vocab tokens (so merges compete across every boundary:
 * CJK words, lowercase words, both mixed), the repeated-character kinds of the
 * adversarial bench at sizes around the 1024-byte switch and the 512-byte cut target.
 * No timing here (see bench/adversarial.mjs).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createNativeBackend, nativeAddonStatus } from '../src/backend/native.js';
import type { Backend } from '../src/backend/types.js';
import type { TokenizerJson } from '../src/tokenizer-json.js';
import { BYTE_CHARS } from './helpers/byte-level.js';
import { rng } from '../bench/helpers/conversation.mjs';
import { modelPath, oracleFor, type ModelName } from './helpers/oracle.js';

const status = nativeAddonStatus();
const MODELS: readonly ModelName[] = ['gpt-4o', 'llama3', 'deepseek-v3', 'qwen3'];

/** Vocab tokens as text, split into CJK-only and lowercase-letter-only (each a single piece run). */
function tokenTexts(json: TokenizerJson): { cjk: string[]; lower: string[] } {
  const dec = new Map(BYTE_CHARS.map((c, b) => [c, b]));
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const cjk: string[] = [];
  const lower: string[] = [];
  for (const key of Object.keys((json.model as { vocab: Record<string, number> }).vocab)) {
    const bytes: number[] = [];
    for (const ch of key) {
      const b = dec.get(ch);
      if (b === undefined) break;
      bytes.push(b);
    }
    let text: string;
    try {
      text = utf8.decode(new Uint8Array(bytes));
    } catch {
      continue;
    }
    if (/^[\u4e00-\u9fa5]+$/u.test(text)) cjk.push(text);
    else if (/^[a-z]+$/.test(text)) lower.push(text);
  }
  return { cjk, lower };
}

/** Random vocab tokens joined until `bytes` UTF-8 bytes (stops before going over). */
function joined(pools: string[][], bytes: number, seed: number): string {
  const r = rng(seed);
  let s = '';
  let size = 0;
  for (let misses = 0; misses < 50; ) {
    const pool = pools[Math.floor(r() * pools.length)]!;
    const t = pool[Math.floor(r() * pool.length)]!;
    const n = Buffer.byteLength(t);
    if (size + n > bytes) {
      misses++;
      continue;
    }
    s += t;
    size += n;
  }
  return s;
}

function cases(json: TokenizerJson): Array<[string, string]> {
  const { cjk, lower } = tokenTexts(json);
  // Multi-character CJK tokens: words whose merges cross character boundaries.
  const cjkWords = cjk.filter((t) => t.length >= 2);
  const out: Array<[string, string]> = [];
  const sizes = [1023, 1024, 1025, 1100, 1536, 2049, 4096, 16 * 1024, 64 * 1024];
  sizes.forEach((n, i) => {
    out.push([`CJK vocab words ${n}`, joined([cjkWords, cjk], n, 100 + i)]);
    out.push([`lowercase vocab tokens ${n}`, joined([lower], n, 200 + i)]);
    out.push([`CJK + lowercase tokens ${n}`, joined([cjkWords, lower], n, 300 + i)]);
  });
  for (const n of [1023, 1024, 1025, 1536, 2049, 5000]) {
    for (const [name, unit] of [
      ['_', '_'],
      ['spaces', ' '],
      ['newlines', '\n'],
      ['letter a', 'a'],
      ['ab', 'ab'],
      ['CJK char', '中'],
    ] as const) {
      out.push([`${name} × ${n}`, unit.repeat(Math.ceil(n / unit.length))]);
    }
  }
  // A run that ends inside a cut window, then a different kind of text.
  out.push(['a-run then CJK words', 'a'.repeat(700) + joined([cjkWords], 3000, 7)]);
  out.push(['CJK words then a-run', joined([cjkWords], 3000, 8) + 'a'.repeat(3000)]);
  return out;
}

function diff(be: Backend, text: string, want: ArrayLike<number>): string | undefined {
  const got = be.encode(text);
  if (got.length === want.length && got.every((x, j) => x === want[j])) return undefined;
  const j = Array.from(got).findIndex((x, k) => x !== want[k]);
  return `${got.length} vs oracle ${want.length} ids, first difference at ${j}`;
}

describe.skipIf(!status.available)('long pieces with cuts: native == oracle', () => {
  for (const m of MODELS) {
    it(m, async () => {
      const json = JSON.parse(readFileSync(modelPath(m), 'utf8')) as TokenizerJson;
      const list = cases(json);
      const plain = createNativeBackend({ tokenizerJson: json, tokenizerConfig: {} });
      const saved = process.env.PROMPTENC_NATIVE_QUEUE_MIN;
      process.env.PROMPTENC_NATIVE_QUEUE_MIN = '2';
      let forced: Backend;
      try {
        forced = createNativeBackend({ tokenizerJson: json, tokenizerConfig: {} });
      } finally {
        if (saved === undefined) delete process.env.PROMPTENC_NATIVE_QUEUE_MIN;
        else process.env.PROMPTENC_NATIVE_QUEUE_MIN = saved;
      }
      const oracle = oracleFor(modelPath(m));
      const encs = await oracle.encodeBatch(
        list.map((c) => c[1]),
        { addSpecialTokens: false },
      );
      const bad: string[] = [];
      list.forEach(([name, text], i) => {
        const want = encs[i]!.getIds();
        const a = diff(plain, text, want);
        if (a) bad.push(`${name} (default): ${a}`);
        const b = diff(forced, text, want);
        if (b) bad.push(`${name} (QUEUE_MIN=2): ${b}`);
      });
      expect(bad).toEqual([]);
    }, 60_000);
  }
});
