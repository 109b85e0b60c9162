import { createRequire } from 'node:module';
import type { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { PromptencError } from '../errors.js';
import { badVocabId, isTokenId } from '../load.js';
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
  const encode = (text: string): Uint32Array => Uint32Array.from(tokenizer.encode(text, { add_special_tokens: false }).ids);
  return {
    kind: 'js',
    encode,
    count: (text) => tokenizer.encode(text, { add_special_tokens: false }).ids.length,
    // @huggingface/tokenizers rejects an empty list; HF returns ''.
    decode: (ids, skipSpecialTokens) =>
      ids.length === 0 ? '' : tokenizer.decode(Array.from(ids), { skip_special_tokens: skipSpecialTokens, clean_up_tokenization_spaces: false }),
    encodeAsync: async (text) => encode(text),
    encodeBatch: async (texts) => texts.map(encode),
  };
}
