/**
 * The addon keeps no mutable global state: two worker_threads load it at the same
 * time, each builds its own encoder and gets the same ids as the main thread.
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { nativeAddonStatus } from '../src/backend/native.js';
import { BYTE_LEVEL_CHARS } from '../src/offsets.js';

const status = nativeAddonStatus();

// A toy byte-level model: the 256 byte tokens (ByteLevel characters, ids in byte order) plus
// the merges "a b" -> "ab" (256), "ab c" -> "abc" (257), and one added token <x> (258).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const addon = require(workerData.path);
const keys = [...workerData.byteChars, 'ab', 'abc'];
const enc = addon.createEncoder({
  vocabKeys: Buffer.from(keys.join('\\0'), 'utf8'),
  vocabKeyLens: Uint32Array.from(keys.map((k) => k.length)),
  vocabIds: Uint32Array.from(keys.map((_, i) => i)),
  mergeText: Buffer.from('a b\\0ab c', 'utf8'),
  mergeLens: Uint32Array.from([3, 0xffffffff, 4, 0xffffffff]),
  added: [{ id: 258, content: '<x>', pattern: '<x>', special: true, lstrip: false, rstrip: false, single_word: false, normalized: false }],
  preTokenizer: addon.preTokenizerKinds.Cl100k, normalizer: addon.normalizerKinds.None, addPrefixSpace: false, ignoreMerges: false,
});
const shared = enc.sharedIds();
const encode = (text) => {
  const r = enc.encode(text);
  return typeof r === 'number' ? shared.slice(0, r) : r;
};
const out = [];
for (let i = 0; i < 2000; i++) out.push(Array.from(encode('abc ab<x>abcabc ' + i)).join(','));
enc.encodeAsync('abcab<x>').then((ids) => parentPort.postMessage({ out, async: Array.from(ids), decoded: enc.decode(ids, true) }));
`;

function runWorker(path: string): Promise<{ out: string[]; async: number[]; decoded: string }> {
  return new Promise((resolve, reject) => {
    const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, byteChars: BYTE_LEVEL_CHARS } });
    w.once('message', (m) => {
      resolve(m);
      void w.terminate();
    });
    w.once('error', reject);
  });
}

describe.skipIf(!status.available)('native addon in worker_threads', () => {
  it('loads in two workers at once and gives identical results', async () => {
    const [a, b] = await Promise.all([runWorker(status.path), runWorker(status.path)]);
    expect(a.out).toEqual(b.out);
    expect(a.out[0]).toBe([257, 32, 256, 258, 257, 257, 32, 48].join(','));
    expect(a.async).toEqual([257, 256, 258]);
    expect(a.decoded).toBe('abcab');
  });
});
