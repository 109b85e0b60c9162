/**
 * Native backend == the Rust `tokenizers` oracle on the text of every vocabulary token, each
 * encoded alone and then with a space before it. A piece that is a whole token is answered by
 * one vocabulary lookup: by rule with ignore_merges (Llama 3, gpt-oss), and for gpt-4o's
 * tokenizer.json, Qwen3 and DeepSeek-V3 when the token is one that BPE maps to itself
 * (native/core/bpe_self.cc; by its core test, every token of two or more bytes in these three).
 * So the oracle has the last word on each such lookup: a token marked wrongly would give its
 * own id where the oracle's merges give several.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createNativeBackend, nativeAddonStatus } from '../src/backend/native.js';
import { BYTE_OF_BYTE_LEVEL_CHAR } from '../src/offsets.js';
import type { TokenizerJson } from '../src/tokenizer-json.js';
import { MODELS, oracleFor } from './helpers/oracle.js';

const status = nativeAddonStatus();
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The text of each vocabulary token whose bytes are valid UTF-8 (the others cannot be a piece of a string). */
function tokenTexts(json: TokenizerJson): string[] {
  const out: string[] = [];
  const vocab = (json.model as { vocab: Record<string, number> }).vocab;
  for (const tok of Object.keys(vocab)) {
    const bytes = new Uint8Array(tok.length);
    let ok = true;
    for (let i = 0; i < tok.length && ok; i++) {
      const b = BYTE_OF_BYTE_LEVEL_CHAR[tok.charCodeAt(i)] ?? -1;
      ok = b >= 0;
      bytes[i] = b;
    }
    if (!ok) continue;
    try {
      out.push(utf8.decode(bytes));
    } catch {
      // a token that ends inside a character
    }
  }
  return out;
}

describe.skipIf(!status.available)('native == oracle on every vocabulary token', () => {
  for (const m of MODELS) {
    it(`${m.name}: each token's text alone and after a space`, async () => {
      const json = JSON.parse(readFileSync(m.path, 'utf8')) as TokenizerJson;
      const be = createNativeBackend({ tokenizerJson: json, tokenizerConfig: {} });
      const oracle = oracleFor(m.path);
      const texts = tokenTexts(json);
      expect(texts.length).toBeGreaterThan(100_000);
      const bad: string[] = [];
      const batch = 4096;
      for (const prefix of ['', ' ']) {
        for (let i = 0; i < texts.length && bad.length < 5; i += batch) {
          const chunk = texts.slice(i, i + batch).map((t) => prefix + t);
          const want = await oracle.encodeBatch(chunk, { addSpecialTokens: false });
          chunk.forEach((t, k) => {
            const ids = want[k]!.getIds();
            const got = be.encode(t);
            if (got.length !== ids.length || ids.some((id, j) => id !== got[j])) {
              if (bad.length < 5) bad.push(`${JSON.stringify(t)}: native ${Array.from(got)} oracle ${ids}`);
            }
          });
        }
      }
      expect(bad).toEqual([]);
    }, 300_000);
  }
});
