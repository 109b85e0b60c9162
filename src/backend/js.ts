import { createRequire } from 'node:module';
import type { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { PromptencError } from '../errors.js';
import { isNfcNormalizer, nfc } from '../nfc.js';
import { BYTE_LEVEL_CHARS, BYTE_OF_BYTE_LEVEL_CHAR } from '../offsets.js';
import { AddedTokenScanner, isIdentityNormalizer } from '../split.js';
import { badVocabId, isTokenId, type TokenizerJson } from '../tokenizer-json.js';
import { withOnigurumaCaseFolding } from './case-fold.js';
import type { Backend, BackendInit } from './types.js';
import { parsedVocabulary } from './vocabulary.js';

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
    checkMergesInVocab(init.tokenizerJson.model.merges, vocab as Record<string, unknown>);
  }
  const Tokenizer = tokenizerClass();
  let tokenizer: HfTokenizer;
  const libraryJson = withOnigurumaCaseFolding(init.tokenizerJson);
  try {
    tokenizer = new Tokenizer(libraryJson, init.tokenizerConfig);
  } catch (err) {
    throw new PromptencError('E_TOKENIZER_INVALID', `tokenizer.json could not be built: ${(err as Error).message}`, { cause: err });
  }
  mergeAcrossUnknownChars(init.tokenizerJson, tokenizer);
  const ids = exactAddedTokenSplit(init, libraryJson, tokenizer);
  const encode = (text: string, splitSpecialTokens = false): Uint32Array => Uint32Array.from(ids(text, splitSpecialTokens));
  let ordinary: ((text: string) => Uint32Array) | undefined;
  const bytesOf = byteLevelBytes(init);
  const lossy = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
  return {
    kind: 'js',
    encode,
    count: (text) => ids(text).length,
    decode: (ids, skipSpecialTokens) => {
      if (bytesOf) return lossy.decode(bytesOf(ids, skipSpecialTokens));
      // @huggingface/tokenizers rejects an empty list; HF returns ''.
      return ids.length === 0 ? '' : tokenizer.decode(Array.from(ids), { skip_special_tokens: skipSpecialTokens, clean_up_tokenization_spaces: false });
    },
    ...(bytesOf && { decodeBytes: bytesOf }),
    encodeOrdinary: (text) => (ordinary ??= ordinaryEncoder(init, libraryJson))(text),
    encodeAsync: async (text) => encode(text),
    encodeBatch: async (texts) => texts.map((t) => encode(t)),
    vocabulary: parsedVocabulary(init.tokenizerJson),
  };
}

/**
 * Backend.encodeOrdinary: a copy of the library's tokenizer with no added tokens (built on
 * first use), under NFC with promptenc's own NFC (../nfc.ts) as the added-token path does.
 */
function ordinaryEncoder(init: BackendInit, libraryJson: TokenizerJson): (text: string) => Uint32Array {
  const ownNfc = isNfcNormalizer(init.tokenizerJson.normalizer);
  const lib = new (tokenizerClass())({ ...libraryJson, added_tokens: [], ...(ownNfc && { normalizer: null }) }, init.tokenizerConfig);
  mergeAcrossUnknownChars(init.tokenizerJson, lib);
  return (input) => {
    const text = (input as unknown as WellFormed).isWellFormed() ? input : (input as unknown as WellFormed).toWellFormed();
    return text.length === 0 ? new Uint32Array(0) : Uint32Array.from(lib.encode(ownNfc ? nfc(text) : text, { add_special_tokens: false }).ids);
  };
}

/**
 * HF refuses a merge whose parts or result are not model.vocab keys (models/bpe/model.rs,
 * "Token `x` out of vocabulary"), as the native core does; @huggingface/tokenizers would keep
 * it silently. Same message as native/core/vocab_builder.cc. ~3 keyed loads per merge.
 */
function checkMergesInVocab(merges: unknown, vocab: Record<string, unknown>): void {
  if (!Array.isArray(merges)) return;
  const has = (k: string) => Object.hasOwn(vocab, k);
  let rank = 0;
  for (const m of merges) {
    let a: string;
    let b: string;
    if (typeof m === 'string') {
      if (m.startsWith('#version')) continue;
      const sp = m.indexOf(' ');
      a = m.slice(0, sp);
      b = m.slice(sp + 1);
    } else {
      [a, b] = m as [string, string];
    }
    const missing = !has(a) ? ['left part ', a] : !has(b) ? ['right part ', b] : !has(a + b) ? ['merged token ', a + b] : undefined;
    if (missing) throw new PromptencError('E_TOKENIZER_INVALID', `model.merges[${rank}]: ${missing[0]}${JSON.stringify(missing[1])} is not in model.vocab`);
    rank++;
  }
}

/** The part of @huggingface/tokenizers' BPE model that mergeAcrossUnknownChars replaces. */
interface LibraryBpe {
  tokens_to_ids: Map<string, number>;
  ignore_merges: boolean;
  bpe(token: string): string[];
  encode(tokens: string[]): string[];
}

/**
 * A BPE model with no unk_token and no byte_fallback: HF drops a character that is not in the
 * vocabulary before merging (models/bpe/model.rs `merge_word`), so its neighbours can merge
 * across it; @huggingface/tokenizers merges first and drops the unknown pieces after, so they
 * cannot. Found by test/malformed-tokenizers.test.ts (a byte-level vocabulary with
 * pre_tokenizer null: the raw space is no vocab key). The library's encode is replaced, for
 * such models only (and only on the `model` of `lib`, and of the gap tokenizer built from
 * the same json), by one that drops those characters first.
 */
function mergeAcrossUnknownChars(json: TokenizerJson, lib: HfTokenizer): void {
  const model = json.model as { type?: unknown; unk_token?: unknown; byte_fallback?: unknown; merges?: unknown };
  if ((model.type ?? 'BPE') !== 'BPE' || !Array.isArray(model.merges) || (model.unk_token ?? null) !== null || model.byte_fallback === true) return;
  if (completeByteLevelAlphabet(json)) return; // every piece is alphabet characters, all in the vocab
  const bpe = (lib as unknown as { model?: LibraryBpe }).model;
  if (!bpe || typeof bpe.bpe !== 'function' || !(bpe.tokens_to_ids instanceof Map)) return;
  const has = (t: string) => bpe.tokens_to_ids.has(t);
  bpe.encode = (tokens: string[]): string[] => {
    const out: string[] = [];
    for (const token of tokens) {
      if (bpe.ignore_merges && has(token)) {
        out.push(token);
        continue;
      }
      let known = token;
      for (const ch of token) {
        if (has(ch)) continue;
        // Rare (never for a complete byte-level alphabet): rebuild without the unknown characters.
        known = '';
        for (const c of token) if (has(c)) known += c;
        break;
      }
      for (const t of bpe.bpe(known)) if (has(t)) out.push(t);
    }
    return out;
  };
}

/** A ByteLevel pre-tokenizer (alone or last in a Sequence) and all 256 of its characters vocab keys. */
function completeByteLevelAlphabet(json: TokenizerJson): boolean {
  const pre = json.pre_tokenizer as { type?: unknown; pretokenizers?: unknown } | null | undefined;
  const list = pre?.type === 'Sequence' && Array.isArray(pre.pretokenizers) ? pre.pretokenizers : [pre];
  const byteLevel = list.some((p) => (p as { type?: unknown } | null)?.type === 'ByteLevel');
  const vocab = json.model.vocab as Record<string, unknown>;
  return byteLevel && BYTE_LEVEL_CHARS.every((c) => Object.hasOwn(vocab, c));
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
 * with the departures above (Qwen3's NFC with normalized single_word tokens: a known gap) --
 * except under NFC alone, which the library would apply with String.prototype.normalize (Node's
 * ICU, a newer Unicode than the oracle's): there each gap of the raw split is normalized with
 * ../nfc.ts, searched for the normalized tokens (patterns normalized too) as HF's
 * AddedVocabulary does, and the rest encoded by a copy with no normalizer.
 * Cost: a second library tokenizer (its vocab and merges maps) per JS backend.
 */
function exactAddedTokenSplit(init: BackendInit, libraryJson: TokenizerJson, whole: HfTokenizer): (text: string, splitSpecial?: boolean) => number[] {
  const json = init.tokenizerJson;
  const added = json.added_tokens ?? [];
  const ownNfc = isNfcNormalizer(json.normalizer);
  const plain = (text: string): number[] => whole.encode(text, { add_special_tokens: false }).ids;
  if (!ownNfc && added.length === 0) return plain;
  if (!ownNfc && added.some((t) => t.normalized) && !isIdentityNormalizer(json.normalizer)) {
    return (text, splitSpecial = false) => {
      // The library matches every added token itself here; it has no encode_special_tokens.
      if (splitSpecial && added.some((t) => t.special)) {
        throw new PromptencError('E_ARGUMENT', 'splitSpecialTokens needs the native backend for this tokenizer (normalized added tokens under its normalizer)');
      }
      return plain(text);
    };
  }
  const scanner = new AddedTokenScanner(json);
  const gaps = new (tokenizerClass())({ ...libraryJson, added_tokens: [], ...(ownNfc && { normalizer: null }) }, init.tokenizerConfig);
  mergeAcrossUnknownChars(json, gaps);
  const encodeGap = (text: string, out: number[]): void => {
    for (const id of gaps.encode(text, { add_special_tokens: false }).ids) out.push(id);
  };
  const normalizedTokens = ownNfc ? added.filter((t) => t.normalized).map((t) => ({ ...t, content: nfc(t.content) })) : [];
  const inner = normalizedTokens.length > 0 ? new AddedTokenScanner({ ...json, normalizer: null, added_tokens: normalizedTokens }) : undefined;
  const split = (text: string, tokens: AddedTokenScanner, out: number[], gap: (text: string, out: number[]) => void, splitSpecial: boolean): void => {
    let at = 0;
    for (const m of tokens.scan(text, splitSpecial)) {
      if (m.start > at) gap(text.slice(at, m.start), out);
      out.push(m.id);
      at = Math.max(at, m.end);
    }
    if (at < text.length) gap(text.slice(at), out);
  };
  const gapOf = (splitSpecial: boolean) =>
    !ownNfc
      ? encodeGap
      : (text: string, out: number[]): void => {
          const normalized = nfc(text);
          if (inner) split(normalized, inner, out, encodeGap, splitSpecial);
          else encodeGap(normalized, out);
        };
  const gap = gapOf(false);
  const gapSplitSpecial = gapOf(true);
  return (input: string, splitSpecial = false): number[] => {
    // Same length: offsets are unchanged.
    const text = (input as unknown as WellFormed).isWellFormed() ? input : (input as unknown as WellFormed).toWellFormed();
    const out: number[] = [];
    split(text, scanner, out, splitSpecial ? gapSplitSpecial : gap, splitSpecial);
    return out;
  };
}

/**
 * Hugging Face's decode for a ByteLevel decoder (tokenizer/mod.rs `decode`, decoders/byte_level.rs),
 * or undefined for other decoders (the library's decode serves those). The library's ByteLevel
 * decoder departs from it: it passes added tokens through as text, where HF maps every token,
 * added ones too, back to bytes when all its characters are in the byte alphabet (`<é>` decodes
 * to `<\ufffd>`, `ĊĊ` to two newlines), and it reads unknown ids as the unk token where HF skips
 * them. Per id: the added token's content, else the vocab string; special tokens dropped with
 * skipSpecialTokens; a token with a character outside the alphabet contributes its own UTF-8;
 * the bytes are read as UTF-8 with U+FFFD for each maximal invalid subsequence (from_utf8_lossy).
 * This returns those bytes (Backend.decodeBytes); decode reads them with a lossy TextDecoder.
 * The id → string table is built on the first decode.
 */
function byteLevelBytes(init: BackendInit): ((ids: Uint32Array, skipSpecialTokens: boolean) => Uint8Array) | undefined {
  const json = init.tokenizerJson;
  const decoder = json.decoder as { type?: unknown } | null | undefined;
  const vocab = json.model.vocab;
  if (decoder?.type !== 'ByteLevel' || vocab === null || typeof vocab !== 'object' || Array.isArray(vocab)) return undefined;
  let tokens: Array<string | undefined> | undefined;
  let special: Set<string> | undefined;
  const table = (): Array<string | undefined> => {
    if (tokens) return tokens;
    tokens = [];
    for (const [key, id] of Object.entries(vocab as Record<string, number>)) tokens[id] = key;
    special = new Set();
    for (const t of json.added_tokens ?? []) {
      tokens[t.id] = t.content;
      if (t.special) special.add(t.content);
    }
    return tokens;
  };
  const utf8 = new TextEncoder();
  return (ids, skipSpecialTokens) => {
    const byId = table();
    const alphabet = BYTE_OF_BYTE_LEVEL_CHAR;
    const bytes: number[] = [];
    for (const id of ids) {
      const token = byId[id];
      if (token === undefined || (skipSpecialTokens && special!.has(token))) continue;
      const mark = bytes.length;
      let mapped = true;
      // Alphabet characters are all in the BMP, so a code unit outside the table (a surrogate
      // included) is a character outside the alphabet.
      for (let k = 0; k < token.length; k++) {
        const c = token.charCodeAt(k);
        const b = c < alphabet.length ? alphabet[c]! : -1;
        if (b < 0) {
          mapped = false;
          break;
        }
        bytes.push(b);
      }
      if (!mapped) {
        bytes.length = mark;
        for (const b of utf8.encode(token)) bytes.push(b);
      }
    }
    return Uint8Array.from(bytes);
  };
}
