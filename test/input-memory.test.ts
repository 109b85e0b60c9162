/**
 * Peak memory per input byte on the native path (issue 20: <= 16 B/byte over the input size;
 * docs/reliability.md). Each case runs in a fresh process, as bench/input-memory.mjs does:
 * load, build the text, read the peak RSS, encode once, read the peak again; the growth over
 * the UTF-8 size is the figure. The worst case is one pre-token as long as the input (a run
 * of one letter, or letters in no order that no cut can split), which goes through the
 * long-piece merge (BpeModel::mergeLong); that took ~25 B/byte when each byte had a 12-byte
 * symbol, one growing queue array per rank and a zero-filled 3 x length UTF-8 buffer.
 * Small inputs made of long distinct pieces are the other worst case: whatever a cache keeps per
 * piece is not diluted there (caching pieces of up to 4 KB took 1 MiB of such pieces to 25 B/byte).
 * Pieces of over 128 bytes are cached from their second sight on and only with at least 2
 * bytes per id: distinct 1000-byte pieces check the first rule, pieces that each come twice
 * what the cache then keeps.
 * The child loads the built library (dist/, which `npm test` builds first).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { nativeAddonStatus } from '../src/backend/native.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const distIndex = join(root, 'dist', 'index.js');
const MIB = 1024 * 1024;
const BYTES = 24 * MIB;
const BOUND = 16;

const child = `
const { loadTokenizer } = await import(${JSON.stringify(pathToFileURL(distIndex).href)});
const [model, kind, bytes] = process.argv.slice(1);
const tok = await loadTokenizer(model, { backend: 'native' });
tok.encode('warm up');
const n = Number(bytes);
let seed = 1;
const letter = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 1 ? 'a' : 'b');
const control = () => String.fromCharCode(1 + ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) >> 16) % 8);
// Pieces of control characters (one id per byte), each one distinct, separated by spaces:
// 4000 bytes (past the word cache's 1 KB limit) or 1000 (under it, each seen once).
const longPieces = (m, len) => Array.from({ length: Math.ceil(m / (len + 1)) }, () => Array.from({ length: len }, control).join('')).join(' ').slice(0, m);
const syllables = ['the', 'ing', 'and', 'tion', 'ment', 'ous', 'able', 'over', 'under', 'light'];
const syllable = () => syllables[((seed = (seed * 1103515245 + 12345) & 0x7fffffff) >> 16) % syllables.length];
// 1000-byte words of random syllables (~4 bytes per id), each twice on its own line: the word
// cache keeps a piece of over 128 bytes from its second sight if it has at least 2 bytes per
// id, so it keeps every one of these.
const longTwice = (m) => Array.from({ length: Math.ceil(m / 2002) }, () => { const w = Array.from({ length: 300 }, syllable).join('').slice(0, 1000); return w + '\\n' + w + '\\n'; }).join('').slice(0, m);
const text =
  kind === 'one letter' ? 'a'.repeat(n)
  : kind === 'long pieces' ? longPieces(n, 4000)
  : kind === 'long pieces of 1000 bytes' ? longPieces(n, 1000)
  : kind === 'long pieces twice' ? longTwice(n)
  : kind === 'two letters' ? Array.from({ length: n }, letter).join('')
  : 'The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(n / 45)).slice(0, n);
const before = process.resourceUsage().maxRSS * 1024;
const ids = tok.encode(text, { addSpecialTokens: false });
const after = process.resourceUsage().maxRSS * 1024;
console.log(JSON.stringify({ ids: ids.length, perByte: (after - before) / n }));
`;

function measure(model: string, kind: string, bytes = BYTES): { ids: number; perByte: number } {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', child, model, kind, String(bytes)], {
    encoding: 'utf8',
    env: { ...process.env, PROMPTENC_QUIET: '1' },
    timeout: 120_000,
  });
  if (r.status !== 0) throw new Error(`child failed (${r.status}): ${r.stderr.slice(0, 500)}`);
  return JSON.parse(r.stdout.trim()) as { ids: number; perByte: number };
}

describe.skipIf(!nativeAddonStatus().available || !existsSync(distIndex))(`native peak memory <= ${BOUND} B per input byte`, () => {
  it.each([
    ['gpt-4o', 'one letter'],
    ['gpt-4o', 'two letters'],
    ['gpt-4o', 'prose'],
    ['qwen3', 'one letter'],
  ])('%s, 24 MiB of %s', (model, kind) => {
    const { ids, perByte } = measure(model, kind);
    console.log(`${model} ${kind}: ${perByte.toFixed(1)} B/byte, ${ids} ids`);
    expect(ids).toBeGreaterThan(0);
    expect(perByte).toBeLessThanOrEqual(BOUND);
  });
  // Distinct 4000-byte pieces are past the word cache's limit. Distinct 1000-byte pieces
  // (one id per byte), cached on first sight as pieces of up to 128 bytes are, took 19
  // (gpt-4o) and 24 (llama3) B/byte. 1000-byte words that each come twice are all kept.
  it.each([
    ['gpt-4o', 1, 'long pieces'],
    ['gpt-4o', 2, 'long pieces'],
    ['llama3', 1, 'long pieces'],
    ['gpt-4o', 1, 'long pieces of 1000 bytes'],
    ['llama3', 1, 'long pieces of 1000 bytes'],
    ['gpt-4o', 1, 'long pieces twice'],
    ['llama3', 1, 'long pieces twice'],
  ])('%s, %i MiB of %s', (model, mib, kind) => {
    const { ids, perByte } = measure(model, kind, mib * MIB);
    console.log(`${model} ${mib} MiB of ${kind}: ${perByte.toFixed(1)} B/byte, ${ids} ids`);
    expect(ids).toBeGreaterThan(0);
    expect(perByte).toBeLessThanOrEqual(BOUND);
  });
});
