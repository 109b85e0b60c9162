/**
 * The one interface that both encoders implement. PromptTokenizer owns policy
 * (BOS/EOS from tokenizer_config, chat templates, validation); a Backend only
 * turns text into IDs and back, with exact Hugging Face `tokenizers` semantics.
 */
export type BackendKind = 'native' | 'js';
export type BackendChoice = BackendKind | 'auto';

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

/**
 * model.vocab / model.merges as the native core read them from the file bytes
 * (native.ts prescanTokenizerJson). `model` is an opaque handle that one native Encoder
 * consumes; ids / keyLengths (UTF-16) are per key, in file order.
 */
export interface PrescannedModel {
  readonly model: unknown;
  readonly ids: Uint32Array;
  readonly keyLengths: Uint32Array;
  /** Byte ranges of the two values in the file. */
  readonly vocab: readonly [number, number];
  readonly merges: readonly [number, number];
  /**
   * Set by the native backend when it consumes `model`: true once an Encoder was built
   * from it (the build found no two equal keys and no shared id, so ids / keyLengths
   * describe the vocab exactly), false when the build failed or was redone from the parsed vocab.
   */
  unique?: boolean;
}

/** What a backend needs to build itself. Both files are already parsed and validated. */
export interface BackendInit {
  /**
   * With `prescanned`, model.vocab and model.merges of this object are lazy: the first
   * read JSON.parses the whole file (the JS backend, rare fallbacks).
   */
  tokenizerJson: TokenizerJson;
  /** tokenizer_config.json, or {} when absent. */
  tokenizerConfig: Record<string, unknown>;
  prescanned?: PrescannedModel;
}

export interface Backend {
  readonly kind: BackendKind;
  /**
   * Added-token split, normalizer, pre-tokenizer and model, exactly as HF
   * `encode(text, add_special_tokens=False)`. No post-processor: BOS/EOS are
   * added by PromptTokenizer so that both backends share one policy.
   */
  encode(text: string): Uint32Array;
  /** Always equals encode(text).length; a backend may avoid building the array. */
  count(text: string): number;
  /**
   * HF `decode`: added tokens become their content, the rest goes through the
   * decoder; no `clean_up_tokenization_spaces`. Unknown IDs are skipped, as in HF.
   */
  decode(ids: Uint32Array, skipSpecialTokens: boolean): string;
  /** Encode off the main thread when the backend can; otherwise resolves encode(text). */
  encodeAsync(text: string): Promise<Uint32Array>;
  /** Encode many texts, using up to `threads` worker threads when the backend can. */
  encodeBatch(texts: readonly string[], threads: number): Promise<Uint32Array[]>;
  /**
   * encode, plus where the added tokens went, when the backend knows it (the native core
   * does; sessions then need not scan the text themselves). `marks` holds a triple per added
   * token in text order: the UTF-16 start and end of its split (lstrip/rstrip whitespace
   * included, as AddedMatch) and the number of ids up to and including it. undefined marks:
   * not known for this text (the NFC fallback), scan instead.
   */
  encodeMarked?(text: string): { ids: Uint32Array; marks: Uint32Array | undefined };
}
