/**
 * The option types of the public API and the checks on its arguments: the one validation
 * layer. Everything a caller passes is checked here, before it reaches a backend, so the
 * backends and the native core only assert their own invariants.
 */
import { PromptencError, describeValue } from './errors.js';
import type { BackendChoice } from './backend/types.js';
import type { ChatMessage, ToolDefinition } from './template/messages.js';
import type { NormalizeMode } from './chat-messages.js';
import type { TemplateLimits } from './template/engine/runtime.js';

export interface LoadOptions {
  /** 'auto' (default) uses the native core when it handles this tokenizer exactly, else JS. */
  backend?: BackendChoice;
  /** Cache the IDs of text chunks between added tokens, bounded in bytes (LRU). Off by default. */
  segmentCache?: { maxBytes: number };
  /** The tiktoken encoding of a `.tiktoken` rank file (`o200k_base`, `cl100k_base`, ...); default: from the file name. */
  encoding?: string;
  /**
   * The largest text (UTF-8 bytes) that encode, count, encodeAsync, encodeBatch (per text) and
   * the chat encodes (the rendered prompt) accept; larger input throws E_INPUT_TOO_LARGE
   * before anything is allocated. Default 64 MiB (DEFAULT_MAX_INPUT_BYTES).
   */
  maxInputBytes?: number;
  /**
   * Bounds on one chat-template render (a template from a model repository is untrusted input):
   * output length, loop iterations, macro and syntax depth. A render past one throws
   * E_TEMPLATE_LIMIT. Defaults in DEFAULT_TEMPLATE_LIMITS (docs/semantics.md).
   */
  templateLimits?: TemplateLimits;
}

export interface EncodeOptions {
  /** Add what `tokenizer(text)` adds in transformers (e.g. DeepSeek-V3's BOS). Default true. */
  addSpecialTokens?: boolean;
  /**
   * Read special-token text in `text` as plain text, not as the special token: transformers'
   * `split_special_tokens=True`, the Rust tokenizer's `encode_special_tokens`, llama.cpp's
   * `parse_special: false`. Non-special added tokens still match. Default false.
   */
  splitSpecialTokens?: boolean;
}

export interface BatchOptions extends EncodeOptions {
  /** Worker threads for the native backend, 1 (default) to MAX_BATCH_THREADS; at most one per text is used. */
  threads?: number;
}

export interface DecodeOptions {
  skipSpecialTokens?: boolean;
}

export interface ChatOptions {
  tools?: ToolDefinition[];
  /** Default true, as promptenc is mostly used to build the prompt for the next model turn. */
  addGenerationPrompt?: boolean;
  /** A template source, or the name of one of the model's named templates; overrides the default. */
  chatTemplate?: string;
  /** Extra template variables, e.g. { enable_thinking: false, reasoning_effort: 'high' }. */
  kwargs?: Record<string, unknown>;
  /** Clock for strftime_now (tests pin it). */
  now?: () => Date;
  /**
   * 'vllm' (default): messages as vLLM's chat preprocessing hands them to the template (null
   * content, content parts, arguments; docs/semantics.md). 'none': exactly as given, as
   * transformers' apply_chat_template passes them.
   */
  normalize?: NormalizeMode;
  /**
   * 'special' (default): special-token text in the caller's text becomes the special token after
   * rendering, as in transformers. 'text': the caller's text (message content, tool results,
   * reasoning, tool-call arguments) is encoded as plain text and only the template's own
   * scaffolding becomes added tokens (docs/semantics.md); E_CONTENT_UNSAFE when the template
   * transforms that text in a way whose provenance cannot be followed. encodeChat, countChat,
   * renderChat and isWithinTokenLimit; sessions, fitChat and countChatByMessage refuse it.
   */
  contentSpecialTokens?: 'special' | 'text';
}

export interface FitOptions extends ChatOptions {
  maxTokens: number;
}

export interface FitResult {
  messages: ChatMessage[];
  count: number;
  /** Indices (in the input) of the messages that were dropped, oldest first. */
  dropped: number[];
}

/** The most threads one encodeBatch call may ask for (docs/semantics.md). */
export const MAX_BATCH_THREADS = 256;

export function checkText(text: unknown, name = 'text'): asserts text is string {
  if (typeof text !== 'string') {
    throw new PromptencError('E_ARGUMENT', `${name}: expected a string, received ${describeValue(text)}`);
  }
}

export function checkOptions(opts: unknown, name: string): void {
  if (opts !== undefined && (typeof opts !== 'object' || opts === null || Array.isArray(opts))) {
    throw new PromptencError('E_ARGUMENT', `${name}: expected an options object, received ${describeValue(opts)}`);
  }
}

/** options.splitSpecialTokens, checked; true when special-token text is to be read as text. */
export function splitSpecialOf(opts: EncodeOptions): boolean {
  const v = opts.splitSpecialTokens;
  if (v !== undefined && typeof v !== 'boolean') {
    throw new PromptencError('E_ARGUMENT', `options.splitSpecialTokens: expected a boolean, received ${describeValue(v)}`);
  }
  return v === true;
}

export function checkBackendChoice(choice: unknown): asserts choice is BackendChoice {
  if (choice !== 'auto' && choice !== 'native' && choice !== 'js') {
    throw new PromptencError('E_ARGUMENT', `options.backend: expected 'auto', 'native' or 'js', received ${describeValue(choice)}`);
  }
}

/** encodeBatch's texts and options.threads; returns the thread count. */
export function checkBatch(texts: unknown, opts: BatchOptions): number {
  if (!Array.isArray(texts)) throw new PromptencError('E_ARGUMENT', `texts: expected an array of strings, received ${describeValue(texts)}`);
  for (let i = 0; i < texts.length; i++) checkText(texts[i], `texts[${i}]`);
  checkOptions(opts, 'options');
  const threads = opts.threads ?? 1;
  if (!Number.isInteger(threads) || threads < 1 || threads > MAX_BATCH_THREADS) {
    throw new PromptencError('E_ARGUMENT', `options.threads: expected an integer from 1 to ${MAX_BATCH_THREADS}, received ${describeValue(threads)}`);
  }
  return threads;
}

/** options.maxBytes of enableSegmentCache. */
export function checkSegmentCacheOptions(opts: unknown): number {
  checkOptions(opts, 'options');
  const max = (opts as { maxBytes?: unknown } | undefined)?.maxBytes;
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 1024) {
    throw new PromptencError('E_ARGUMENT', `options.maxBytes: expected an integer >= 1024, received ${describeValue(max)}`);
  }
  return max;
}

/** options.maxTokens of fitChat. */
export function checkFitOptions(opts: unknown): number {
  checkOptions(opts, 'options');
  const max = (opts as { maxTokens?: unknown } | undefined)?.maxTokens;
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 0) {
    throw new PromptencError('E_ARGUMENT', `options.maxTokens: expected a non-negative integer, received ${describeValue(max)}`);
  }
  return max;
}

export function toIdArray(ids: unknown, name = 'ids'): Uint32Array {
  if (ids instanceof Uint32Array) return ids;
  if (!Array.isArray(ids) && !ArrayBuffer.isView(ids)) {
    throw new PromptencError('E_IDS_INVALID', `${name}: expected an array of token ids, received ${describeValue(ids)}`);
  }
  const list = ids as ArrayLike<unknown>;
  const out = new Uint32Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff) {
      throw new PromptencError('E_IDS_INVALID', `${name}[${i}]: expected a non-negative integer token id, received ${describeValue(v)}`);
    }
    out[i] = v;
  }
  return out;
}

const TEMPLATE_LIMIT_NAMES = ['maxOutput', 'maxIterations', 'maxDepth'] as const;

/** LoadOptions.templateLimits: an object of the three limits, each a positive integer (or Infinity: no bound). */
export function checkTemplateLimits(value: unknown): TemplateLimits | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new PromptencError(
      'E_ARGUMENT',
      `options.templateLimits: expected an object with maxOutput, maxIterations or maxDepth, received ${describeValue(value)}`,
    );
  }
  const out: TemplateLimits = {};
  for (const key of Object.keys(value)) {
    if (!(TEMPLATE_LIMIT_NAMES as readonly string[]).includes(key)) {
      throw new PromptencError('E_ARGUMENT', `options.templateLimits.${key}: unknown limit (valid: ${TEMPLATE_LIMIT_NAMES.join(', ')})`);
    }
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !(v === Infinity || (Number.isInteger(v) && v > 0))) {
      throw new PromptencError('E_ARGUMENT', `options.templateLimits.${key}: expected a positive integer or Infinity, received ${describeValue(v)}`);
    }
    out[key as (typeof TEMPLATE_LIMIT_NAMES)[number]] = v;
  }
  return out;
}
