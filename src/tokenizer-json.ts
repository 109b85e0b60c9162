/**
 * The tokenizer.json format as promptenc reads it, and the small checks on its values that
 * every layer shares. Bottom layer: imports nothing but the error type.
 */
import type { PromptencError } from './errors.js';
import { badTokenId, isBoundedTokenId } from './tokenizer-checks.js';

/** An entry of tokenizer.json `added_tokens`, as Hugging Face defines it. */
export interface AddedTokenSpec {
  id: number;
  content: string;
  special: boolean;
  lstrip: boolean;
  rstrip: boolean;
  single_word: boolean;
  normalized: boolean;
}

/** The parsed tokenizer.json, with only the fields promptenc reads typed. */
export interface TokenizerJson {
  added_tokens?: AddedTokenSpec[];
  normalizer?: unknown;
  pre_tokenizer?: unknown;
  post_processor?: unknown;
  decoder?: unknown;
  model: {
    type?: string;
    vocab: Record<string, number> | unknown;
    merges?: unknown[];
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** An integer id from 0 to MAX_TOKEN_ID (./tokenizer-checks.ts: larger ids are refused, not built). */
export function isTokenId(id: unknown): id is number {
  return isBoundedTokenId(id);
}

/** The error for a vocabulary entry whose id is not a token id; backends throw it. */
export function badVocabId(token: string, id: unknown): PromptencError {
  return badTokenId(`model.vocab[${JSON.stringify(token)}]`, id);
}
