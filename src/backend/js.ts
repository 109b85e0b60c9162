import { createRequire } from 'node:module';
import type { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { PromptencError } from '../errors.js';
import { badVocabId, isTokenId } from '../load.js';
import { AddedTokenScanner, isIdentityNormalizer } from '../split.js';
import type { Backend, BackendInit } from './types.js';

// Loaded on first use, through its CommonJS build so that createJsBackend stays
// synchronous (native.ts builds it lazily inside encode). Importing the library costs
// 13-15 ms, which a load served by the native core no longer pays.
let hfTokenizer: typeof HfTokenizer | undefined;
function tokenizerClass(): typeof HfTokenizer {
  return (hfTokenizer ??= (createRequire(import.meta.url)('@huggingface/tokenizers') as { Tokenizer: typeof HfTokenizer }).Tokenizer);
}

/**
 * The reference backend over @huggingface/tokenizers (pure JS). It is the fallback
 * for every configuration the native core does not handle exactly.
 */
export function createJsBackend(init: BackendInit): Backend {
  const vocab = init.tokenizerJson.model.vocab;
  if (vocab && typeof vocab === 'object' && !Array.isArray(vocab)) {
    for (const key of Object.keys(vocab)) {
      const id = (vocab as Record<string, unknown>)[key];
      if (!isTokenId(id)) throw badVocabId(key, id);
    }
  }
  const Tokenizer = tokenizerClass();
  let tokenizer: HfTokenizer;
  try {
    tokenizer = new Tokenizer(init.tokenizerJson, init.tokenizerConfig);
  } catch (err) {
    throw new PromptencError('E_TOKENIZER_INVALID', `tokenizer.json could not be built: ${(err as Error).message}`, { cause: err });
  }
  const ids = exactAddedTokenSplit(init, tokenizer);
  const encode = (text: string): Uint32Array => Uint32Array.from(ids(text));
  return {
    kind: 'js',
    encode,
    count: (text) => ids(text).length,
    // @huggingface/tokenizers rejects an empty list; HF returns ''.
    decode: (ids, skipSpecialTokens) =>
      ids.length === 0 ? '' : tokenizer.decode(Array.from(ids), { skip_special_tokens: skipSpecialTokens, clean_up_tokenization_spaces: false }),
    encodeAsync: async (text) => encode(text),
    encodeBatch: async (texts) => texts.map(encode),
  };
}

/** String.prototype.isWellFormed / toWellFormed (ES2024, in Node >= 20; not in this lib target). */
interface WellFormed {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/**
 * encode(text) ids with Hugging Face's added-token split. @huggingface/tokenizers departs from
 * it: it ignores single_word, does not stop lstrip at the previous split, matches normalized
 * tokens in the same pass as the others, and reads a lone surrogate as itself where HF reads
 * UTF-8 (U+FFFD). AddedTokenScanner follows HF (split.test checks it against the Rust oracle),
 * so it splits the text and the library encodes only the gaps, with a copy of the tokenizer
 * that has no added tokens (a gap holds none). When the scanner cannot decide every token (a
 * normalized one under a real normalizer: it matches in normalized text) the library does it all,
 * with the departures above (Qwen3's NFC with normalized single_word tokens: a known gap).
 * Cost: a second library tokenizer (its vocab and merges maps) per JS backend.
 */
function exactAddedTokenSplit(init: BackendInit, whole: HfTokenizer): (text: string) => number[] {
  const json = init.tokenizerJson;
  const added = json.added_tokens ?? [];
  const plain = (text: string): number[] => whole.encode(text, { add_special_tokens: false }).ids;
  if (added.length === 0 || (added.some((t) => t.normalized) && !isIdentityNormalizer(json.normalizer))) return plain;
  const scanner = new AddedTokenScanner(json);
  const gaps = new (tokenizerClass())({ ...json, added_tokens: [] }, init.tokenizerConfig);
  const gap = (text: string, out: number[]): void => {
    for (const id of gaps.encode(text, { add_special_tokens: false }).ids) out.push(id);
  };
  return (input: string): number[] => {
    // Same length: offsets are unchanged.
    const text = (input as unknown as WellFormed).isWellFormed() ? input : (input as unknown as WellFormed).toWellFormed();
    const out: number[] = [];
    let at = 0;
    for (const m of scanner.scan(text)) {
      if (m.start > at) gap(text.slice(at, m.start), out);
      out.push(m.id);
      at = Math.max(at, m.end);
    }
    if (at < text.length) gap(text.slice(at), out);
    return out;
  };
}
