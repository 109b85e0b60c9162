/**
 * Native backend == the Rust `tokenizers` oracle on the benchmark's real-text workloads
 * (prose and code from installed packages, Chinese and Japanese poetry, a multilingual mix,
 * agent traffic, the o200k rank table as JavaScript, the mixed corpus): the first ~96 KB of
 * each and all of the CJK one (its kana punctuation and marks only come later), document by
 * document, for every model with a hand-written pre-tokenizer. The scanners' fast paths
 * (ASCII runs, Han and kana runs) see exactly this text in the bench.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildWorkload, WORKLOAD_NAMES } from 'promptenc/bench';
import { createNativeBackend, nativeAddonStatus } from '../src/backend/native.js';
import type { TokenizerJson } from '../src/tokenizer-json.js';
import { MODELS, oracleEncode } from './helpers/oracle.js';

const status = nativeAddonStatus();
const sliceBytes = (name: string) => (name === 'cjk' ? Infinity : 96 * 1024);
// One document of the rank table is the whole 2 MB file: a slice of it is taken instead.
const DOC_MAX_CHARS = 32 * 1024;

const texts = new Map<string, string[]>();
function workloadTexts(name: (typeof WORKLOAD_NAMES)[number]): string[] {
  let out = texts.get(name);
  if (!out) {
    out = [];
    let bytes = 0;
    const budget = sliceBytes(name);
    for (const d of buildWorkload(name).documents) {
      let at = 0;
      while (at < d.text.length && bytes < budget) {
        // Cut at a code point boundary: a lone surrogate would test U+FFFD handling, not the text.
        let end = Math.min(d.text.length, at + DOC_MAX_CHARS);
        if (end < d.text.length && /[\uD800-\uDBFF]/.test(d.text[end - 1]!)) end--;
        const t = d.text.slice(at, end);
        out.push(t);
        bytes += Buffer.byteLength(t);
        at = end;
      }
      if (bytes >= budget) break;
    }
    texts.set(name, out);
  }
  return out;
}

describe.skipIf(!status.available)('native == oracle on the real-text workloads', () => {
  for (const m of MODELS.filter((x) => x.name !== 'gpt-oss')) {
    describe(m.name, () => {
      const json = JSON.parse(readFileSync(m.path, 'utf8')) as TokenizerJson;
      const be = createNativeBackend({ tokenizerJson: json, tokenizerConfig: {} });
      for (const w of WORKLOAD_NAMES) {
        it(`${w}: every document's ids`, async () => {
          const docs = workloadTexts(w);
          expect(docs.length).toBeGreaterThan(0);
          let tokens = 0;
          for (const [i, text] of docs.entries()) {
            const want = await oracleEncode(m.path, text, false);
            const got = Array.from(be.encode(text));
            if (got.length !== want.length || got.some((id, k) => id !== want[k])) {
              const k = want.findIndex((id, j) => id !== got[j]);
              expect.fail(`${w} document ${i}: first difference at token ${k} of ${want.length}`);
            }
            tokens += want.length;
          }
          expect(tokens).toBeGreaterThan(10_000);
        });
      }
    });
  }
});
