/**
 * The native backend: the only module that loads build/Release/promptenc.node.
 *
 * What crosses into C++ once per tokenizer: the tokenizer.json bytes, from which the
 * core reads model.vocab and model.merges itself (prescanTokenizerJson, the scanner that
 * readTokenizerFiles is given; see native/core/model_json.h) -- or, for a tokenizer given as a parsed
 * object or a file the scanner declines, the vocab keys and the merge strings as one
 * UTF-8 buffer each plus Uint32Array lengths/ids. C++ maps ByteLevel chars to bytes
 * and resolves merges to ids. Also the added tokens as plain objects, and the
 * pre-tokenizer / normalizer as enums. Regex strings never cross: a tokenizer
 * whose pre-tokenizer is not one of the recognised families is reported as
 * unsupported (nativeUnsupportedReason) and served by the JS backend.
 *
 * NFC (Qwen): the core normalizes each added-token gap itself, with the oracle's
 * Unicode 9.0.0 data (native/core/normalize.h), so every text stays on the native path
 * and off the main thread for encodeAsync / encodeBatch.
 */
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PromptencError } from '../errors.js';
import { CL100K_REGEX, DEEPSEEK_V3_REGEXES, O200K_REGEX, QWEN2_REGEX } from '../families.js';
import type { ModelScan } from '../load.js';
import { byteLevelTokenLengths, BYTE_LEVEL_CHARS } from '../offsets.js';
import { badVocabId, isTokenId, type AddedTokenSpec, type TokenizerJson } from '../tokenizer-json.js';
import { nfc as normalizeNfc } from '../nfc.js';
import { rankFileModelOf } from '../tiktoken-model.js';
import { MAX_TOKEN_ID, maxOf } from '../tokenizer-checks.js';
import type { Backend, BackendInit, Vocabulary } from './types.js';
import { memo, parsedVocabulary } from './vocabulary.js';

/**
 * The pre-tokenizer and normalizer families by name. Their numbers come from the addon
 * (`preTokenizerKinds` / `normalizerKinds`, the C++ enums of native/core/pretokenizer.h and
 * encoder.h), so the two sides cannot disagree; loadAddon refuses an addon that lacks a name.
 */
type PreTokenizerKind = 'Gpt2' | 'Cl100k' | 'Qwen2' | 'O200k' | 'DeepSeekV3';
type NormalizerKind = 'None' | 'Nfc';
const PRE_TOKENIZER_KINDS: readonly PreTokenizerKind[] = ['Gpt2', 'Cl100k', 'Qwen2', 'O200k', 'DeepSeekV3'];
const NORMALIZER_KINDS: readonly NormalizerKind[] = ['None', 'Nfc'];

/** The binding's interface version (native/binding.cc kAbiVersion); an addon built from other sources is refused at load. */
const ABI_VERSION = 4;

// The exact regex strings of the recognised families live in ../families.ts (shared with sessions).

/**
 * The N-API surface of promptenc.node (native/binding.cc). The synchronous encodes share one
 * output protocol: up to sharedIds().length ids are written into sharedIds() and their count
 * comes back; a longer result comes back as a new array.
 */
interface NativeEncoder {
  encode(text: string, splitSpecialTokens?: boolean): number | Uint32Array;
  /** No added-token split at all (Backend.encodeOrdinary). */
  encodeOrdinary(text: string): number | Uint32Array;
  /** encode that also fills sharedMarks() with [count, (start, end, after) per added token] */
  encodeMarked(text: string): number | Uint32Array;
  sharedIds(): Uint32Array;
  sharedMarks(): Uint32Array;
  /** Frees the core now; every later call throws E_DISPOSED. */
  dispose(): void;
  count(text: string): number;
  decode(ids: Uint32Array, skipSpecialTokens: boolean): string;
  /** Absent in an addon built before it (the streaming decoder then re-decodes a window). */
  decodeBytes?(ids: Uint32Array, skipSpecialTokens: boolean): Uint8Array;
  encodeAsync(text: string): Promise<Uint32Array>;
  /** `threads` is checked by PromptTokenizer (1 to MAX_BATCH_THREADS); the core uses at most one per text. */
  encodeBatch(texts: readonly string[], threads: number): Promise<Uint32Array[]>;
}
/** What scanModelJson returns for a file it reads. */
interface RawScan {
  model: unknown;
  ids: Uint32Array;
  keyLengths: Uint32Array;
  vocab: [number, number];
  merges: [number, number];
}
interface NativeAddon {
  /** an Encoder, or why a scanned model must be rebuilt from the parsed vocab (two equal keys or a shared id) */
  createEncoder(spec: NativeSpec): NativeEncoder | string;
  /** model.vocab / model.merges read from tokenizer.json bytes, or why the file is left to JSON.parse */
  scanModelJson(bytes: Uint8Array): RawScan | string;
  /** frees a scan that no Encoder will consume */
  releaseModel(model: unknown): void;
  /** Encoder objects that still hold their core (tokenizer.dispose() and the GC free it) */
  liveEncoders(): number;
  /** for each string, the id of the scanned vocab key equal to it, or -1 */
  vocabIdsOf(model: unknown, strings: readonly string[]): Float64Array;
  preTokenizerKinds: Record<PreTokenizerKind, number>;
  normalizerKinds: Record<NormalizerKind, number>;
  abiVersion: number;
}

/**
 * model.vocab / model.merges as the core read them from the file bytes. `model` is an opaque
 * handle that one Encoder consumes (take() hands it out once); ids / keyLengths (UTF-16) are
 * per key, in file order.
 */
class NativeScan implements ModelScan {
  private taken = false;
  constructor(
    readonly model: unknown,
    readonly ids: Uint32Array,
    readonly keyLengths: Uint32Array,
    readonly vocab: readonly [number, number],
    readonly merges: readonly [number, number],
  ) {}

  /** True the first time only: the caller then owns `model` (builds from it or releases it). */
  take(): boolean {
    if (this.taken) return false;
    this.taken = true;
    return true;
  }
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
  /** addon.preTokenizerKinds[...] */
  preTokenizer: number;
  /** addon.normalizerKinds[...] */
  normalizer: number;
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
    if (addon?.abiVersion !== ABI_VERSION) {
      throw new Error(
        `${path} has interface version ${String(addon?.abiVersion)}, this promptenc needs ${ABI_VERSION} (rebuild it with \`npm run build:native\`)`,
      );
    }
    for (const name of PRE_TOKENIZER_KINDS)
      if (typeof addon.preTokenizerKinds?.[name] !== 'number') throw new Error(`${path} lacks pre-tokenizer kind ${name}`);
    for (const name of NORMALIZER_KINDS) if (typeof addon.normalizerKinds?.[name] !== 'number') throw new Error(`${path} lacks normalizer kind ${name}`);
    loaded = { addon, path };
  } catch (err) {
    loaded = { error: (err as Error).message, path };
  }
  return loaded;
}

/** Whether the addon loads, and from where. Never throws. */
/** @internal tests: how many native encoders hold their core now, or undefined without the addon. */
export function nativeLiveEncoders(): number | undefined {
  return loadAddon().addon?.liveEncoders();
}

export function nativeAddonStatus(): { available: boolean; error?: string; path: string } {
  const s = loadAddon();
  return s.addon ? { available: true, path: s.path } : { available: false, error: s.error, path: s.path };
}

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
    return { kind: 'Gpt2', addPrefixSpace: pre.add_prefix_space === true };
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
    if (isIsolatedSplit(s, CL100K_REGEX)) return { kind: 'Cl100k', addPrefixSpace: false };
    if (isIsolatedSplit(s, QWEN2_REGEX)) return { kind: 'Qwen2', addPrefixSpace: false };
    if (
      isObj(s) &&
      s.type === 'Split' &&
      regexOf(s) === O200K_REGEX &&
      ((s.behavior === 'Isolated' && s.invert === false) || (s.behavior === 'Removed' && s.invert === true))
    ) {
      // Removed+invert keeps the matches and drops the gaps; this regex leaves no gaps.
      return { kind: 'O200k', addPrefixSpace: false };
    }
  }
  if (splits.length === 3 && splits.every((s, i) => isIsolatedSplit(s, DEEPSEEK_V3_REGEXES[i]!))) {
    return { kind: 'DeepSeekV3', addPrefixSpace: false };
  }
  return 'pre_tokenizer Split regex not recognised';
}

function recogniseNormalizer(n: unknown): { kind: NormalizerKind } | string {
  if (n === null || n === undefined) return { kind: 'None' };
  if (isObj(n) && n.type === 'NFC') return { kind: 'Nfc' };
  if (isObj(n) && n.type === 'Sequence' && Array.isArray(n.normalizers)) {
    const list = n.normalizers as unknown[];
    if (list.length === 0) return { kind: 'None' };
    if (list.length === 1 && isObj(list[0]) && list[0].type === 'NFC') return { kind: 'Nfc' };
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
  if (typeof model.continuing_subword_prefix === 'string' && model.continuing_subword_prefix !== '') return 'model.continuing_subword_prefix is not supported';
  if (typeof model.end_of_word_suffix === 'string' && model.end_of_word_suffix !== '') return 'model.end_of_word_suffix is not supported';
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
  return { preTokenizer: pre.kind, addPrefixSpace: pre.addPrefixSpace, normalizer: normalizer.kind };
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

function buildSpec(addon: NativeAddon, json: TokenizerJson, r: Recognised, modelSpec: ModelSpec): NativeSpec {
  const model = json.model as Obj;
  const added = (json.added_tokens ?? []).map((t) => ({
    id: t.id,
    content: t.content,
    pattern: t.normalized && r.normalizer === 'Nfc' ? normalizeNfc(t.content) : t.content,
    special: !!t.special,
    lstrip: !!t.lstrip,
    rstrip: !!t.rstrip,
    single_word: !!t.single_word,
    normalized: !!t.normalized,
  }));
  return {
    ...modelSpec,
    added,
    preTokenizer: addon.preTokenizerKinds[r.preTokenizer],
    normalizer: addon.normalizerKinds[r.normalizer],
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
export function prescanTokenizerJson(bytes: Uint8Array): ModelScan | undefined {
  const addon = loadAddon().addon;
  if (!addon) return undefined;
  let r: RawScan | string;
  try {
    r = addon.scanModelJson(bytes);
  } catch (err) {
    throw nativeError(err);
  }
  if (typeof r === 'string') return undefined;
  // An id above MAX_TOKEN_ID: declined, so the parsed path names the key (badVocabId) before
  // anything is sized by that id.
  if (maxOf(r.ids) > MAX_TOKEN_ID) {
    addon.releaseModel(r.model);
    return undefined;
  }
  return new NativeScan(r.model, r.ids, r.keyLengths, r.vocab, r.merges);
}

/**
 * An error thrown by the addon as the PromptencError callers get: its own code when it is one
 * of ours for arguments, else E_NATIVE_INTERNAL (a broken invariant of the core).
 */
function nativeError(err: unknown): PromptencError {
  if (err instanceof PromptencError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return new PromptencError(code === 'E_ARGUMENT' || code === 'E_IDS_INVALID' || code === 'E_DISPOSED' ? code : 'E_NATIVE_INTERNAL', message, {
    cause: err,
  });
}

/**
 * The Vocabulary of a scan whose Encoder build found no two equal keys and no shared id, so
 * ids / keyLengths describe model.vocab exactly. `added` holds the vocab id (or -1) of each
 * added token's content, looked up before the Encoder took the scan; another string is looked
 * up in the parsed model.vocab (a full JSON.parse of the file, which nothing in a load needs).
 */
function scannedVocabulary(json: TokenizerJson, scan: NativeScan, added: ReadonlyMap<string, number>): Vocabulary {
  const parsed = memo(() => parsedVocabulary(json));
  return {
    size: scan.ids.length,
    idOf(token) {
      const id = added.get(token);
      if (id !== undefined) return id >= 0 ? id : undefined;
      return parsed()?.idOf(token);
    },
    tokenByteLengths: memo(() => byteLevelTokenLengths(json, scan)),
  };
}

/** Builds the native backend; throws E_NATIVE_UNSUPPORTED or E_NATIVE_UNAVAILABLE. */
export function createNativeBackend(init: BackendInit): Backend {
  const json = init.tokenizerJson;
  // A scan is consumed by the first backend built from it, whatever happens next.
  const scan = init.prescanned instanceof NativeScan && init.prescanned.take() ? init.prescanned : undefined;
  // A tiktoken rank file (../tiktoken-model.ts) comes as flat buffers: its vocab and merges are never built as JS objects.
  const rankFile = scan ? undefined : rankFileModelOf(json);
  const r = recognise(json, scan !== undefined || rankFile !== undefined);
  if (typeof r === 'string') {
    // The JS backend will serve this file: free the scan now (≈ 20 MB for gemma3).
    if (scan) loadAddon().addon?.releaseModel(scan.model);
    throw new PromptencError('E_NATIVE_UNSUPPORTED', `The native core cannot reproduce this tokenizer exactly: ${r}`);
  }
  const status = loadAddon();
  if (!status.addon) throw unavailable(status.error, status.path);
  const addon = status.addon;
  /** The Encoder, or undefined when a scanned model must be rebuilt from the parsed vocab. */
  const construct = (model: ModelSpec): NativeEncoder | undefined => {
    let made: NativeEncoder | string;
    try {
      made = addon.createEncoder(buildSpec(addon, json, r, model));
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'E_NATIVE_UNSUPPORTED') throw new PromptencError('E_NATIVE_UNSUPPORTED', (err as Error).message, { cause: err });
      throw new PromptencError(
        code === 'E_TOKENIZER_INVALID' ? 'E_TOKENIZER_INVALID' : 'E_NATIVE_UNAVAILABLE',
        `native encoder construction failed: ${(err as Error).message}`,
        { cause: err },
      );
    }
    return typeof made === 'string' ? undefined : made;
  };
  let core: NativeEncoder | undefined;
  let vocabulary: Vocabulary | undefined;
  if (scan) {
    // Looked up before the Encoder takes the scan, for the loader's added-token id check.
    const contents = (json.added_tokens ?? []).map((t) => t.content);
    const ids = contents.length > 0 ? addon.vocabIdsOf(scan.model, contents) : new Float64Array(0);
    core = construct({ model: scan.model });
    if (core) vocabulary = scannedVocabulary(json, scan, new Map(contents.map((c, i) => [c, ids[i]!])));
    // Else two equal keys or a shared id: which one wins follows JS object key order, so the
    // vocab is rebuilt from the JSON.parse result (the lazy model.vocab).
  }
  // The parsed vocab has no two equal keys, so this build never asks for another.
  core ??= construct(rankFile ? rankFile.buffers() : buildModelBuffers(json.model as Obj));
  if (!core) throw new PromptencError('E_NATIVE_INTERNAL', 'the native encoder asked to rebuild a vocabulary that has no two equal keys');
  vocabulary ??= rankFile?.vocabulary ?? parsedVocabulary(json);
  return nativeBackend(init, core, r.normalizer === 'Nfc', vocabulary);
}

function nativeBackend(init: BackendInit, core: NativeEncoder, nfc: boolean, vocabulary: Vocabulary | undefined): Backend {
  // The core reports a normalized=true token's place in the normalized gap: the text's own
  // offsets only when NFC leaves the text unchanged.
  const marksMayMove = nfc && (init.tokenizerJson.added_tokens ?? []).some((t) => t.normalized);

  // Short results come back through one array owned by the encoder and are copied out
  // with slice: cheaper than a new Uint32Array made through N-API on every call.
  const shared = core.sharedIds();
  const idsOf = (r: number | Uint32Array): Uint32Array => (typeof r === 'number' ? shared.slice(0, r) : r);
  // The marks array is replaced by a larger one when a call needs more room; its first slot
  // always gets the count, so a stale array tells that a new one must be fetched.
  let marksArray = core.sharedMarks();

  // Arguments are checked by PromptTokenizer (src/options.ts) before they reach a backend.
  return {
    kind: 'native',
    vocabulary,
    dispose: () => core.dispose(),
    encode(text: string, splitSpecialTokens = false): Uint32Array {
      try {
        return idsOf(splitSpecialTokens ? core.encode(text, true) : core.encode(text));
      } catch (err) {
        throw nativeError(err);
      }
    },
    encodeOrdinary(text: string): Uint32Array {
      try {
        return idsOf(core.encodeOrdinary(text));
      } catch (err) {
        throw nativeError(err);
      }
    },
    encodeMarked(text: string): { ids: Uint32Array; marks: Uint32Array | undefined } {
      let ids: Uint32Array;
      try {
        ids = idsOf(core.encodeMarked(text));
      } catch (err) {
        throw nativeError(err);
      }
      const count = marksArray[0]!;
      if (1 + 3 * count > marksArray.length) marksArray = core.sharedMarks();
      if (marksMayMove && normalizeNfc(text) !== text) return { ids, marks: undefined };
      return { ids, marks: marksArray.slice(1, 1 + 3 * count) };
    },
    count(text: string): number {
      try {
        return core.count(text);
      } catch (err) {
        throw nativeError(err);
      }
    },
    decode(ids: Uint32Array, skipSpecialTokens: boolean): string {
      try {
        return core.decode(ids, skipSpecialTokens);
      } catch (err) {
        throw nativeError(err);
      }
    },
    ...(typeof core.decodeBytes === 'function' && {
      decodeBytes(ids: Uint32Array, skipSpecialTokens: boolean): Uint8Array {
        try {
          return core.decodeBytes!(ids, skipSpecialTokens);
        } catch (err) {
          throw nativeError(err);
        }
      },
    }),
    async encodeAsync(text: string): Promise<Uint32Array> {
      try {
        return await core.encodeAsync(text);
      } catch (err) {
        throw nativeError(err);
      }
    },
    async encodeBatch(texts: readonly string[], threads: number): Promise<Uint32Array[]> {
      try {
        return await core.encodeBatch(texts, threads);
      } catch (err) {
        throw nativeError(err);
      }
    },
  };
}
