import { byteLevelTokenLengths } from '../offsets.js';
import type { TokenizerJson } from '../tokenizer-json.js';
import type { Vocabulary } from './types.js';

/**
 * The Vocabulary of a parsed model.vocab (the JS backend, and the native backend when it built
 * from the parsed file), or undefined when model.vocab is not a key → id object. The entry
 * count and the token lengths are computed on first use.
 */
export function parsedVocabulary(json: TokenizerJson): Vocabulary | undefined {
  const vocab = json.model.vocab;
  if (typeof vocab !== 'object' || vocab === null || Array.isArray(vocab)) return undefined;
  const ids = vocab as Record<string, number>;
  let size: number | undefined;
  return {
    get size() {
      return (size ??= Object.keys(ids).length);
    },
    idOf: (token) => (Object.hasOwn(ids, token) ? ids[token] : undefined),
    tokenByteLengths: memo(() => byteLevelTokenLengths(json)),
  };
}

/** `f` called once, on the first call of the result. */
export function memo<T>(f: () => T): () => T {
  let done = false;
  let value: T;
  return () => {
    if (!done) {
      value = f();
      done = true;
    }
    return value;
  };
}
