/**
 * The addon keeps no mutable global state: two worker_threads load it at the same
 * time, each builds its own encoder and gets the same ids as the main thread.
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { nativeAddonStatus } from '../src/backend/native.js';

const status = nativeAddonStatus();

// A toy byte-level model: the 256 byte tokens plus merges "a b" -> "ab", "ab c" -> "abc".
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const addon = require(workerData.path);
const tokens = [];
for (let b = 0; b < 256; b++) tokens.push([b]);
tokens.push([97, 98], [97, 98, 99]);
const flat = Uint8Array.from(tokens.flat());
const offsets = new Uint32Array(tokens.length + 1);
for (let i = 0, o = 0; i < tokens.length; i++) { offsets[i] = o; o += tokens[i].length; offsets[i + 1] = o; }
const enc = new addon.Encoder({
  vocabBytes: flat, vocabOffsets: offsets, vocabEncodable: new Uint8Array(tokens.length).fill(1),
  merges: Uint32Array.from([97, 98, 256, 256, 99, 257]),
  added: [{ id: 258, content: '<x>', pattern: '<x>', special: true, lstrip: false, rstrip: false, single_word: false, normalized: false }],
  preTokenizer: 1, normalizer: 0, addPrefixSpace: false, ignoreMerges: false,
});
const out = [];
for (let i = 0; i < 2000; i++) out.push(Array.from(enc.encode('abc ab<x>abcabc ' + i)).join(','));
enc.encodeAsync('abcab<x>').then((ids) => parentPort.postMessage({ out, async: Array.from(ids), decoded: enc.decode(ids, true) }));
`;

function runWorker(path: string): Promise<{ out: string[]; async: number[]; decoded: string }> {
  return new Promise((resolve, reject) => {
    const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { path } });
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
