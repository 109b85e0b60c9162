/**
 * The native backend: the only module that loads build/Release/promptenc.node.
 *
 * What crosses into C++ once per tokenizer: the tokenizer.json bytes, from which the
 * core reads model.vocab and model.merges itself (prescanTokenizerJson, called by
 * load.ts; see native/core/model_json.h) -- or, for a tokenizer given as a parsed
 * object or a file the scanner declines, the vocab keys and the merge strings as one
 * UTF-8 buffer each plus Uint32Array lengths/ids. C++ maps ByteLevel chars to bytes
 * and resolves merges to ids. Also the added tokens as plain objects, and the
 * pre-tokenizer / normalizer as enums. Regex strings never cross: a tokenizer
 * whose pre-tokenizer is not one of the recognised families is reported as
 * unsupported (nativeUnsupportedReason) and served by the JS backend.
 *
 * NFC (Qwen): the core does not normalize. encode() checks `text.normalize('NFC')
 * === text`; when true every added-token gap is NFC as well (gaps are cut at
 * added tokens whose ASCII delimiters never compose), so the core is exact.
 * Otherwise that one call is delegated to an exact JS backend built lazily.
 */
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PromptencError } from '../errors.js';
import { CL100K_REGEX, DEEPSEEK_V3_REGEXES, O200K_REGEX, QWEN2_REGEX } from '../families.js';
import { badVocabId, isTokenId } from '../load.js';
import { BYTE_LEVEL_CHARS } from '../offsets.js';
import { createJsBackend } from './js.js';
import type { AddedTokenSpec, Backend, BackendInit, PrescannedModel, TokenizerJson } from './types.js';

/** Mirrors promptenc::PreTokenizerKind in native/core/pretokenizer.h. */
const enum PreTokenizerKind {
  Gpt2 = 0,
  Cl100k = 1,
  Qwen2 = 2,
  O200k = 3,
  DeepSeekV3 = 4,
}
/** Mirrors promptenc::NormalizerKind in native/core/encoder.h. */
const enum NormalizerKind {
  None = 0,
  Nfc = 1,
}

// The exact regex strings of the recognised families live in ../families.ts (shared with sessions).

/** The N-API surface of promptenc.node (native/binding.cc). */
interface NativeEncoder {
  encode(text: string | Uint8Array): Uint32Array;
  count(text: string | Uint8Array): number;
  decode(ids: Uint32Array, skipSpecialTokens: boolean): string;
  encodeAsync(text: string | Uint8Array): Promise<Uint32Array>;
  encodeBatch(texts: readonly string[], threads: number): Promise<Uint32Array[]>;
  /** encode that writes up to sharedIds().length ids into sharedIds() and returns their count (absent in older builds) */
  encodeShared?(text: string): number | Uint32Array;
  sharedIds?(): Uint32Array;
  /** encodeShared that also fills sharedMarks() with [count, (start, end, after) per added token] */
  encodeMarked?(text: string): number | Uint32Array;
  sharedMarks?(): Uint32Array;
}
interface NativeAddon {
  Encoder: new (spec: NativeSpec) => NativeEncoder;
  /** model.vocab / model.merges read from tokenizer.json bytes, or why the file is left to JSON.parse */
  scanModelJson(bytes: Uint8Array): Omit<PrescannedModel, 'unique'> | string;
  /** frees a scan that no Encoder will consume */
  releaseModel(model: unknown): void;
  /** for each string, the id of the scanned vocab key equal to it, or -1 (absent in older builds) */
  vocabIdsOf?(model: unknown, strings: readonly string[]): Float64Array;
  abiVersion: number;
}
type ModelSpec = { model: unknown } | ModelBuffers;
type NativeSpec = ModelSpec & SpecRest;
interface ModelBuffers {
  /** model.vocab keys joined with '\0', UTF-8 */
  vocabKeys: Uint8Array;
  /** UTF-16 length of each key */
  vocabKeyLens: Uint32Array;
  /** model.vocab[key], same order */
  vocabIds: Uint32Array;
  /** merge strings ("a b") or parts (a, b) joined with '\0', UTF-8 */
  mergeText: Uint8Array;
  /** two per merge: (len, 0xFFFFFFFF) for "a b", (len a, len b) for [a, b] */
  mergeLens: Uint32Array;
}
interface SpecRest {
  added: Array<AddedTokenSpec & { pattern: string }>;
  preTokenizer: PreTokenizerKind;
  normalizer: NormalizerKind;
  addPrefixSpace: boolean;
  ignoreMerges: boolean;
  /** testing knob (PROMPTENC_NATIVE_QUEUE_MIN): pieces this long go through the long-piece path (cuts + rank queue); 2 = every piece, trying a cut at every position */
  queueMinSymbols?: number;
  /** testing knob (PROMPTENC_NATIVE_SIMD=sse2): the added-token scan skips its AVX2 loop, so the SSE2 one runs */
  sse2Only?: boolean;
}

function defaultAddonPath(): string {
  // dist/backend/native.js (or src/backend/native.ts under vitest) → <package>/build/Release.
  const here = dirname(fileURLToPath(import.meta.url));
  return resolve(here, '..', '..', 'build', 'Release', 'promptenc.node');
}

function addonPath(): string {
  return process.env.PROMPTENC_NATIVE_PATH || defaultAddonPath();
}

let loaded: { addon?: NativeAddon; error?: string; path: string } | undefined;

function loadAddon(): { addon?: NativeAddon; error?: string; path: string } {
  const path = addonPath();
  if (loaded && loaded.path === path) return loaded;
  try {
    if (!existsSync(path)) throw new Error(`file not found: ${path}`);
    const addon = createRequire(import.meta.url)(path) as NativeAddon;
    if (typeof addon?.Encoder !== 'function') throw new Error(`${path} does not export Encoder`);
    loaded = { addon, path };
  } catch (err) {
    loaded = { error: (err as Error).message, path };
  }
  return loaded;
}

/** Whether the addon loads, and from where. Never throws. */
export function nativeAddonStatus(): { available: boolean; error?: string; path: string } {
  const s = loadAddon();
  return s.addon ? { available: true, path: s.path } : { available: false, error: s.error, path: s.path };
}

/** Any UTF-16 unit at or above U+0300 (combining marks start there); see needsFallback. */
const MAY_NOT_BE_NFC = /[\u0300-\uffff]/;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const typeName = (v: unknown): string => (isObj(v) && typeof v.type === 'string' ? v.type : JSON.stringify(v));

interface Recognised {
  preTokenizer: PreTokenizerKind;
  addPrefixSpace: boolean;
  normalizer: NormalizerKind;
}

function regexOf(split: Obj): string | undefined {
  const p = split.pattern;
  return isObj(p) && typeof p.Regex === 'string' ? p.Regex : undefined;
}

function isIsolatedSplit(p: unknown, regex: string): boolean {
  return isObj(p) && p.type === 'Split' && regexOf(p) === regex && p.behavior === 'Isolated' && p.invert === false;
}

function recognisePreTokenizer(pre: unknown): { kind: PreTokenizerKind; addPrefixSpace: boolean } | string {
  if (isObj(pre) && pre.type === 'ByteLevel') {
    if (pre.use_regex === false) return 'pre_tokenizer ByteLevel without use_regex (no split) is not supported';
    return { kind: PreTokenizerKind.Gpt2, addPrefixSpace: pre.add_prefix_space === true };
  }
  if (!isObj(pre) || pre.type !== 'Sequence' || !Array.isArray(pre.pretokenizers)) {
    return `pre_tokenizer ${pre === null || pre === undefined ? 'null' : `"${typeName(pre)}"`} is not supported`;
  }
  const list = pre.pretokenizers as unknown[];
  const last = list[list.length - 1];
  if (!isObj(last) || last.type !== 'ByteLevel') return 'pre_tokenizer Sequence does not end with ByteLevel';
  if (last.use_regex !== false) return 'pre_tokenizer ByteLevel with use_regex after a Split is not supported';
  if (last.add_prefix_space === true) return 'pre_tokenizer ByteLevel add_prefix_space after a Split is not supported';
  const splits = list.slice(0, -1);
  if (splits.length === 1) {
    const s = splits[0];
    if (isIsolatedSplit(s, CL100K_REGEX)) return { kind: PreTokenizerKind.Cl100k, addPrefixSpace: false };
    if (isIsolatedSplit(s, QWEN2_REGEX)) return { kind: PreTokenizerKind.Qwen2, addPrefixSpace: false };
    if (
      isObj(s) &&
      s.type === 'Split' &&
      regexOf(s) === O200K_REGEX &&
      ((s.behavior === 'Isolated' && s.invert === false) || (s.behavior === 'Removed' && s.invert === true))
    ) {
      // Removed+invert keeps the matches and drops the gaps; this regex leaves no gaps.
      return { kind: PreTokenizerKind.O200k, addPrefixSpace: false };
    }
  }
  if (splits.length === 3 && splits.every((s, i) => isIsolatedSplit(s, DEEPSEEK_V3_REGEXES[i]!))) {
    return { kind: PreTokenizerKind.DeepSeekV3, addPrefixSpace: false };
  }
  return 'pre_tokenizer Split regex not recognised';
}

function recogniseNormalizer(n: unknown): NormalizerKind | string {
  if (n === null || n === undefined) return NormalizerKind.None;
  if (isObj(n) && n.type === 'NFC') return NormalizerKind.Nfc;
  if (isObj(n) && n.type === 'Sequence' && Array.isArray(n.normalizers)) {
    const list = n.normalizers as unknown[];
    if (list.length === 0) return NormalizerKind.None;
    if (list.length === 1 && isObj(list[0]) && list[0].type === 'NFC') return NormalizerKind.Nfc;
    return `normalizer Sequence of ${list.map((x) => `"${typeName(x)}"`).join(', ')} is not supported`;
  }
  return `normalizer "${typeName(n)}" is not supported`;
}

/** `prescanned`: model.vocab is an object and model.merges an array (not read: they are lazy). */
function recognise(json: TokenizerJson, prescanned = false): Recognised | string {
  const model = json.model as Obj | undefined;
  if (!isObj(model)) return 'model is missing';
  if (model.type !== undefined && model.type !== 'BPE') return `model.type "${String(model.type)}" is not supported`;
  if (!prescanned && (!isObj(model.vocab) || !Array.isArray(model.merges))) return 'model.vocab / model.merges missing';
  if (model.byte_fallback === true) return 'model.byte_fallback is not supported';
  if (model.dropout !== null && model.dropout !== undefined && model.dropout !== 0) return 'model.dropout is not supported';
  if (typeof model.continuing_subword_prefix === 'string' && model.continuing_subword_prefix !== '')
    return 'model.continuing_subword_prefix is not supported';
  if (typeof model.end_of_word_suffix === 'string' && model.end_of_word_suffix !== '')
    return 'model.end_of_word_suffix is not supported';
  if (model.unk_token !== null && model.unk_token !== undefined) {
    // unk is only ever emitted for a byte missing from the vocab.
    const vocab = model.vocab as Obj;
    for (let b = 0; b < 256; b++) {
      if (!(BYTE_LEVEL_CHARS[b]! in vocab)) return 'model.unk_token with an incomplete byte alphabet is not supported';
    }
  }
  const decoder = json.decoder;
  if (!isObj(decoder) || decoder.type !== 'ByteLevel') {
    return `decoder ${decoder === null || decoder === undefined ? 'null' : `"${typeName(decoder)}"`} is not supported`;
  }
  const pre = recognisePreTokenizer(json.pre_tokenizer);
  if (typeof pre === 'string') return pre;
  const normalizer = recogniseNormalizer(json.normalizer);
  if (typeof normalizer === 'string') return normalizer;
  return { preTokenizer: pre.kind, addPrefixSpace: pre.addPrefixSpace, normalizer };
}

/** null when the native core reproduces this tokenizer.json exactly, else the unsupported part. */
export function nativeUnsupportedReason(json: TokenizerJson): string | null {
  const r = recognise(json);
  return typeof r === 'string' ? r : null;
}

const invalid = (msg: string) => new PromptencError('E_TOKENIZER_INVALID', msg);

/**
 * The model as five flat buffers; the C++ side (native/core/vocab_builder.cc) maps the
 * ByteLevel chars back to bytes and resolves the merges to ids with its own hash map.
 * JS only walks the keys and merges once each (no per-token objects): this is what
 * keeps a 128 k-token / 127 k-merge load in the tens of ms.
 */
function buildModelBuffers(model: Obj): ModelBuffers {
  const vocab = model.vocab as Record<string, number>;
  // Object.keys + one keyed load per key: Object.values / Object.entries on this
  // dictionary-mode object cost 2-3x more (measured, see native/README.md).
  const keys = Object.keys(vocab);
  const n = keys.length;
  const vocabKeyLens = new Uint32Array(n);
  const vocabIds = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const id = vocab[keys[i]!] as unknown;
    if (!isTokenId(id)) throw badVocabId(keys[i]!, id);
    vocabIds[i] = id;
    vocabKeyLens[i] = keys[i]!.length;
  }
  // '\0' between strings: a lone surrogate at the end of one cannot pair with the next.
  const vocabKeys = Buffer.from(keys.join('\0'), 'utf8');

  const merges = model.merges as unknown[];
  const m = merges.length;
  const mergeLens = new Uint32Array(m * 2);
  let allStrings = true;
  for (let i = 0; i < m; i++) {
    const x = merges[i];
    if (typeof x === 'string') {
      mergeLens[2 * i] = x.length;
      mergeLens[2 * i + 1] = 0xffffffff; // split on its one space in C++ ("#version…" skipped there)
    } else if (Array.isArray(x) && x.length === 2 && typeof x[0] === 'string' && typeof x[1] === 'string') {
      mergeLens[2 * i] = x[0].length;
      mergeLens[2 * i + 1] = x[1].length;
      allStrings = false;
    } else {
      throw invalid(`model.merges[${i}]: expected a string or a pair of strings`);
    }
  }
  let text: string;
  if (allStrings) {
    text = merges.join('\0');
  } else {
    const parts: string[] = [];
    for (const x of merges) {
      if (typeof x === 'string') parts.push(x);
      else parts.push((x as string[])[0]!, (x as string[])[1]!);
    }
    text = parts.join('\0');
  }
  return { vocabKeys, vocabKeyLens, vocabIds, mergeText: Buffer.from(text, 'utf8'), mergeLens };
}

function buildSpec(json: TokenizerJson, r: Recognised, modelSpec: ModelSpec): NativeSpec {
  const model = json.model as Obj;
  const added = (json.added_tokens ?? []).map((t) => ({
    id: t.id,
    content: t.content,
    pattern: t.normalized && r.normalizer === NormalizerKind.Nfc ? t.content.normalize('NFC') : t.content,
    special: !!t.special,
    lstrip: !!t.lstrip,
    rstrip: !!t.rstrip,
    single_word: !!t.single_word,
    normalized: !!t.normalized,
  }));
  return {
    ...modelSpec,
    added,
    preTokenizer: r.preTokenizer,
    normalizer: r.normalizer,
    addPrefixSpace: r.addPrefixSpace,
    ignoreMerges: model.ignore_merges === true,
    ...(process.env.PROMPTENC_NATIVE_QUEUE_MIN ? { queueMinSymbols: Number(process.env.PROMPTENC_NATIVE_QUEUE_MIN) } : {}),
    ...(process.env.PROMPTENC_NATIVE_SIMD === 'sse2' ? { sse2Only: true } : {}),
  };
}

function unavailable(error: string | undefined, path: string): PromptencError {
  return new PromptencError(
    'E_NATIVE_UNAVAILABLE',
    `The native addon could not be loaded from ${path}: ${error ?? 'unknown error'}. ` +
      'To fix: install cmake and a C++17 compiler, then run `npm run build:native` in the promptenc package ' +
      '(or set PROMPTENC_NATIVE_PATH to a built promptenc.node), or use backend "js".',
  );
}

/**
 * model.vocab / model.merges of tokenizer.json read by the core from the file bytes, for
 * load.ts; undefined when the addon is not available or the scanner declines the file
 * (then JSON.parse reads it, and reports what is wrong with it).
 */
export function prescanTokenizerJson(bytes: Uint8Array): PrescannedModel | undefined {
  const addon = loadAddon().addon;
  if (!addon || typeof addon.scanModelJson !== 'function') return undefined;
  const r = addon.scanModelJson(bytes);
  return typeof r === 'string' ? undefined : { ...r };
}

/**
 * For each string, the id of the vocab key of a prescanned tokenizer.json equal to it, or -1;
 * undefined when the addon cannot tell. Call before an Encoder consumes the scan.
 */
export function prescannedVocabIds(pre: PrescannedModel, strings: readonly string[]): Float64Array | undefined {
  const addon = loadAddon().addon;
  if (!addon || typeof addon.vocabIdsOf !== 'function') return undefined;
  return addon.vocabIdsOf(pre.model, strings);
}

/** Builds the native backend; throws E_NATIVE_UNSUPPORTED or E_NATIVE_UNAVAILABLE. */
export function createNativeBackend(init: BackendInit): Backend {
  // A prescanned model is consumed by the first Encoder built from it.
  const pre = init.prescanned && init.prescanned.unique === undefined ? init.prescanned : undefined;
  const r = recognise(init.tokenizerJson, pre !== undefined);
  if (typeof r === 'string') {
    if (pre) {
      // The JS backend will serve this file: free the scan now (≈ 20 MB for gemma3).
      pre.unique = false;
      loadAddon().addon?.releaseModel?.(pre.model);
    }
    throw new PromptencError('E_NATIVE_UNSUPPORTED', `The native core cannot reproduce this tokenizer exactly: ${r}`);
  }
  const status = loadAddon();
  if (!status.addon) throw unavailable(status.error, status.path);
  const Encoder = status.addon.Encoder;
  const construct = (model: ModelSpec): NativeEncoder => {
    try {
      return new Encoder(buildSpec(init.tokenizerJson, r, model));
    } catch (err) {
      if ((err as { code?: string }).code === 'E_NATIVE_RETRY') throw err;
      if ((err as { code?: string }).code === 'E_NATIVE_UNSUPPORTED') throw new PromptencError('E_NATIVE_UNSUPPORTED', (err as Error).message, { cause: err });
      const code = (err as { code?: string }).code === 'E_TOKENIZER_INVALID' ? 'E_TOKENIZER_INVALID' : 'E_NATIVE_UNAVAILABLE';
      throw new PromptencError(code, `native encoder construction failed: ${(err as Error).message}`, { cause: err });
    }
  };
  let core: NativeEncoder | undefined;
  if (pre) {
    pre.unique = false; // consumed, whatever happens next
    try {
      core = construct({ model: pre.model });
      pre.unique = true;
    } catch (err) {
      if ((err as { code?: string }).code !== 'E_NATIVE_RETRY') throw err;
      // Two equal keys or a shared id: which one wins follows JS object key order, so the
      // vocab is rebuilt from the JSON.parse result (the lazy model.vocab).
    }
  }
  core ??= construct(buildModelBuffers(init.tokenizerJson.model as Obj));

  const nfc = r.normalizer === NormalizerKind.Nfc;
  let js: Backend | undefined;
  // Exact fallback for the rare non-NFC input of an NFC tokenizer.
  const jsFallback = (): Backend => (js ??= createJsBackend(init));
  // Text whose UTF-16 units are all below U+0300 is NFC already: no character there has
  // NFC_QC No/Maybe or a non-zero combining class, and every second half of a canonical
  // composition is at or above U+0300. The regex skips ICU for such text (most code and
  // English prose): ≈ 5.5 → 3 ms per 5 MB of the bench corpus.
  const needsFallback = (text: string): boolean => nfc && MAY_NOT_BE_NFC.test(text) && text.normalize('NFC') !== text;
  const checkText = (text: unknown, what: string): void => {
    if (typeof text !== 'string') {
      throw new PromptencError('E_ARGUMENT', `${what}: expected a string, received ${typeof text}`);
    }
  };

  // Short results come back through one array owned by the encoder and are copied out
  // with slice: cheaper than a new Uint32Array made through N-API on every call.
  const shared = core.sharedIds?.();
  const encodeCore = shared
    ? (text: string): Uint32Array => {
        const r = core.encodeShared!(text);
        return typeof r === 'number' ? shared.slice(0, r) : r;
      }
    : (text: string): Uint32Array => core.encode(text);
  // The marks array is replaced by a larger one when a call needs more room; its first slot
  // always gets the count, so a stale array tells that a new one must be fetched.
  let marksArray = shared && core.encodeMarked && core.sharedMarks ? core.sharedMarks() : undefined;

  return {
    kind: 'native',
    encode(text: string): Uint32Array {
      checkText(text, 'text');
      if (needsFallback(text)) return jsFallback().encode(text);
      return encodeCore(text);
    },
    ...(marksArray && {
      encodeMarked(text: string): { ids: Uint32Array; marks: Uint32Array | undefined } {
        checkText(text, 'text');
        if (needsFallback(text)) return { ids: jsFallback().encode(text), marks: undefined };
        const r = core.encodeMarked!(text);
        const ids = typeof r === 'number' ? shared!.slice(0, r) : r;
        const count = marksArray![0]!;
        if (1 + 3 * count > marksArray!.length) marksArray = core.sharedMarks!();
        return { ids, marks: marksArray!.slice(1, 1 + 3 * count) };
      },
    }),
    count(text: string): number {
      checkText(text, 'text');
      if (needsFallback(text)) return jsFallback().count(text);
      return core.count(text);
    },
    decode(ids: Uint32Array, skipSpecialTokens: boolean): string {
      if (!(ids instanceof Uint32Array)) {
        throw new PromptencError('E_IDS_INVALID', 'ids: expected a Uint32Array');
      }
      return core.decode(ids, !!skipSpecialTokens);
    },
    async encodeAsync(text: string): Promise<Uint32Array> {
      checkText(text, 'text');
      if (needsFallback(text)) return jsFallback().encode(text);
      return core.encodeAsync(text);
    },
    async encodeBatch(texts: readonly string[], threads: number): Promise<Uint32Array[]> {
      if (!Array.isArray(texts)) throw new PromptencError('E_ARGUMENT', 'texts: expected an array of strings');
      texts.forEach((t, i) => checkText(t, `texts[${i}]`));
      const t = Number.isFinite(threads) && threads >= 1 ? Math.floor(threads) : 1;
      if (!nfc) return core.encodeBatch(texts, t);
      const out = await core.encodeBatch(texts.map((x) => (needsFallback(x) ? '' : x)), t);
      texts.forEach((x, i) => {
        if (needsFallback(x)) out[i] = jsFallback().encode(x);
      });
      return out;
    },
  };
}
