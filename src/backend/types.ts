/**
 * The one interface that both encoders implement. PromptTokenizer owns policy
 * (BOS/EOS from tokenizer_config, chat templates, validation); a Backend only
 * turns text into IDs and back, with exact Hugging Face `tokenizers` semantics.
 */
import type { ModelScan } from '../load.js';
import type { TokenizerJson } from '../tokenizer-json.js';

export type BackendKind = 'native' | 'js';
export type BackendChoice = BackendKind | 'auto';

/** What a backend needs to build itself. Both files are already parsed and validated. */
export interface BackendInit {
  /**
   * With `prescanned`, model.vocab and model.merges of this object are lazy: the first
   * read JSON.parses the whole file (the JS backend, rare fallbacks).
   */
  tokenizerJson: TokenizerJson;
  /** tokenizer_config.json, or {} when absent. */
  tokenizerConfig: Record<string, unknown>;
  /** model.vocab / model.merges as a backend's own scanner read them (readTokenizerFiles `scan`). */
  prescanned?: ModelScan;
}

/**
 * model.vocab as the backend built it: what the loader checks added-token ids against and
 * what sessions and accounting measure token boundaries with.
 */
export interface Vocabulary {
  /** The number of distinct model.vocab keys. */
  readonly size: number;
  /** The id of the model.vocab key equal to `token`, or undefined when it is no key. */
  idOf(token: string): number | undefined;
  /**
   * UTF-8 byte length of each token id for byte-level BPE models (0 for added tokens, which
   * are measured from their matched text), or undefined for other models. Built on first call.
   */
  tokenByteLengths(): Uint16Array | undefined;
}

export interface Backend {
  readonly kind: BackendKind;
  /**
   * Added-token split, normalizer, pre-tokenizer and model, exactly as HF
   * `encode(text, add_special_tokens=False)`. No post-processor: BOS/EOS are
   * added by PromptTokenizer so that both backends share one policy.
   * splitSpecialTokens: special added tokens are read as text (HF's `encode_special_tokens`).
   */
  encode(text: string, splitSpecialTokens?: boolean): Uint32Array;
  /**
   * The text with no added-token split at all, special or not: normalizer, pre-tokenizer and
   * model (tiktoken's encode_ordinary). encodeChat's contentSpecialTokens 'text' encodes the
   * text between the template's own added tokens with it.
   */
  encodeOrdinary(text: string): Uint32Array;
  /** Always equals encode(text).length; a backend may avoid building the array. */
  count(text: string): number;
  /**
   * HF `decode`: added tokens become their content, the rest goes through the
   * decoder; no `clean_up_tokenization_spaces`. Unknown IDs are skipped, as in HF.
   */
  decode(ids: Uint32Array, skipSpecialTokens: boolean): string;
  /**
   * The bytes decode reads as UTF-8 (before U+FFFD repair), when decode is a per-id byte
   * concatenation (a ByteLevel decoder): decode(ids) == utf8Lossy(decodeBytes(ids)) and
   * decodeBytes(a ++ b) == decodeBytes(a) ++ decodeBytes(b). undefined for other decoders; the
   * streaming decoder (src/output/decoder.ts) then re-decodes a short window instead.
   */
  decodeBytes?(ids: Uint32Array, skipSpecialTokens: boolean): Uint8Array;
  /** Encode off the main thread when the backend can; otherwise resolves encode(text). */
  encodeAsync(text: string): Promise<Uint32Array>;
  /** Encode many texts, using up to `threads` worker threads when the backend can. */
  encodeBatch(texts: readonly string[], threads: number): Promise<Uint32Array[]>;
  /**
   * encode, plus where the added tokens went, when the backend knows it (the native core
   * does; sessions then need not scan the text themselves). `marks` holds a triple per added
   * token in text order: the UTF-16 start and end of its split (lstrip/rstrip whitespace
   * included, as AddedMatch) and the number of ids up to and including it. undefined marks:
   * not known for this text (NFC changed a gap that holds a normalized token), scan instead.
   */
  encodeMarked?(text: string): { ids: Uint32Array; marks: Uint32Array | undefined };
  /** model.vocab, or undefined when it is not a key → id object (not a BPE-style model). */
  readonly vocabulary: Vocabulary | undefined;
  /** Frees what the backend holds outside the JS heap now (the native encoder); idempotent. */
  dispose?(): void;
}
