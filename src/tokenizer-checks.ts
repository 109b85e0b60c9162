/**
 * Size limits on tokenizer files and on encode input, checked before anything is built or
 * allocated, so that a hostile file or prompt fails fast with a code instead of hanging the
 * loader or exhausting memory. Bottom layer: imports nothing but the error type.
 *
 * Why these numbers (docs/reliability.md has the table):
 * - MAX_TOKEN_ID: both backends keep tables indexed by id (the native core's raw bytes and
 *   decode table, the JS library's id → token array), so memory follows the largest id, not
 *   the number of tokens: one vocabulary id of 1e9 took > 120 s and 4.7 GB before this check.
 *   The Rust oracle (tokenizers 0.23.2) stores ids in hash maps and accepts any u32 (checked:
 *   ids 1e9 and 2^32 - 1 load, 2^32 is refused by serde); promptenc refuses ids above
 *   2^22 - 1 = 4,194,303, 16 times the largest vocabulary shipped today (Gemma 3: 262,144
 *   + 6,415 added). This is a documented departure: such a file loads in the oracle.
 * - MAX_TOKENIZER_FILE_BYTES: 128 MiB, ~4x the largest real tokenizer.json seen (Gemma 3,
 *   ~33 MB). Checked from the file's size before it is read.
 * - DEFAULT_MAX_INPUT_BYTES: 64 MiB of UTF-8 per encode call (LoadOptions.maxInputBytes
 *   changes it): an encode holds a few times its input in scratch space.
 */
import { PromptencError, describeValue } from './errors.js';

/** The largest token id either backend accepts in model.vocab or added_tokens. */
export const MAX_TOKEN_ID = 2 ** 22 - 1;

/** The largest tokenizer.json / tokenizer_config.json read, in bytes. */
export const MAX_TOKENIZER_FILE_BYTES = 128 * 1024 * 1024;

/** LoadOptions.maxInputBytes when it is not given: the largest encode input, in UTF-8 bytes. */
export const DEFAULT_MAX_INPUT_BYTES = 64 * 1024 * 1024;

/** The largest value LoadOptions.maxInputBytes may take (2^31 - 1: a V8 string is shorter). */
export const MAX_INPUT_BYTES_LIMIT = 2 ** 31 - 1;

/** Whether `id` is an integer token id within MAX_TOKEN_ID. */
export function isBoundedTokenId(id: unknown): id is number {
  return typeof id === 'number' && Number.isInteger(id) && id >= 0 && id <= MAX_TOKEN_ID;
}

/**
 * The E_TOKENIZER_INVALID error for an id at `where` (a JSON path such as
 * `model.vocab["hello"]` or `added_tokens[3].id`) that is no id or above MAX_TOKEN_ID.
 */
export function badTokenId(where: string, id: unknown, file = 'tokenizer.json'): PromptencError {
  const integer = typeof id === 'number' && Number.isInteger(id) && id >= 0;
  const detail = integer
    ? `expected a non-negative integer id at most ${MAX_TOKEN_ID} (promptenc's MAX_TOKEN_ID; see docs/reliability.md), received ${id}`
    : `expected a non-negative integer id, received ${describeValue(id)}`;
  return new PromptencError('E_TOKENIZER_INVALID', `${file} ${where}: ${detail}`);
}

/** Throws badTokenId unless `id` is a bounded token id. */
export function checkTokenId(where: string, id: unknown, file?: string): asserts id is number {
  if (!isBoundedTokenId(id)) throw badTokenId(where, id, file);
}

/** The largest value of `ids`, or -1 when empty (one pass; the scanner's Uint32Array of ids). */
export function maxOf(ids: ArrayLike<number>): number {
  let max = -1;
  for (let i = 0; i < ids.length; i++) if (ids[i]! > max) max = ids[i]!;
  return max;
}

/** Refuses a file larger than MAX_TOKENIZER_FILE_BYTES before it is read. */
export function checkTokenizerFileSize(file: string, what: string, size: number): void {
  if (size > MAX_TOKENIZER_FILE_BYTES) {
    throw new PromptencError(
      'E_TOKENIZER_INVALID',
      `${what} at ${file} is ${size} bytes, above promptenc's limit of ${MAX_TOKENIZER_FILE_BYTES} (MAX_TOKENIZER_FILE_BYTES; see docs/reliability.md)`,
    );
  }
}

/** LoadOptions.maxInputBytes: an integer from 1 to MAX_INPUT_BYTES_LIMIT, default DEFAULT_MAX_INPUT_BYTES. */
export function checkMaxInputBytesOption(value: unknown): number {
  if (value === undefined) return DEFAULT_MAX_INPUT_BYTES;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_INPUT_BYTES_LIMIT) {
    throw new PromptencError('E_ARGUMENT', `options.maxInputBytes: expected an integer from 1 to ${MAX_INPUT_BYTES_LIMIT}, received ${describeValue(value)}`);
  }
  return value;
}

/**
 * Refuses `text` when its UTF-8 form is longer than `max` bytes, before it is encoded. A
 * UTF-16 unit is 1 to 3 UTF-8 bytes, so the exact count (Buffer.byteLength, one pass with no
 * allocation) is only taken when the length alone cannot decide.
 */
export function checkInputSize(text: string, max: number, name = 'text'): void {
  const units = text.length;
  if (units <= max / 3) return;
  const bytes = units > max ? units : Buffer.byteLength(text, 'utf8');
  if (bytes > max) {
    throw new PromptencError(
      'E_INPUT_TOO_LARGE',
      `${name}: ${units > max ? `at least ${bytes}` : bytes} UTF-8 bytes, above options.maxInputBytes = ${max} (set it when loading the tokenizer)`,
    );
  }
}

/*
 * The shape of tokenizer.json as the Rust oracle's serde reads it (tokenizers 0.23.2, checked
 * field by field: test/malformed-tokenizers.test.ts), for the parts whose wrong shape one of
 * the backends would otherwise accept, read differently, or fail on with a raw TypeError. A
 * file the oracle refuses is refused here, by both backends alike, with the path of the field.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

class Shape {
  constructor(readonly file: string) {}
  fail(path: string, expected: string, value: unknown): never {
    throw new PromptencError('E_TOKENIZER_INVALID', `${this.file}: ${path}: expected ${expected}, received ${describeValue(value)}`);
  }
  obj(path: string, v: unknown): Obj {
    if (!isObj(v)) this.fail(path, 'an object', v);
    return v;
  }
  /** A field the oracle requires to be a boolean (`optional`: it may be absent). */
  bool(o: Obj, key: string, path: string, optional = false): void {
    if (optional && o[key] === undefined) return;
    if (typeof o[key] !== 'boolean') this.fail(`${path}.${key}`, 'a boolean', o[key]);
  }
  nullableString(o: Obj, key: string, path: string): void {
    const v = o[key];
    if (v !== undefined && v !== null && typeof v !== 'string') this.fail(`${path}.${key}`, 'a string or null', v);
  }
  u32(path: string, v: unknown): void {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff) this.fail(path, 'a non-negative integer', v);
  }
  list(path: string, v: unknown): unknown[] {
    if (!Array.isArray(v)) this.fail(path, 'an array', v);
    return v;
  }
}

const TOP_LEVEL_KEYS = new Set(['version', 'truncation', 'padding', 'added_tokens', 'normalizer', 'pre_tokenizer', 'model', 'post_processor', 'decoder']);
const MODEL_TYPES = new Set(['BPE', 'WordPiece', 'WordLevel', 'Unigram']);
const SPLIT_BEHAVIORS = new Set(['Removed', 'Isolated', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous']);

/**
 * Refuses (E_TOKENIZER_INVALID, naming the field) what the oracle refuses among: unknown
 * top-level keys (its visitor does not skip them), added tokens without their five booleans,
 * BPE options of the wrong type, merges mixing "a b" strings and [a, b] pairs or with other
 * than one space, and malformed ByteLevel, Split, Sequence and TemplateProcessing parts. Also
 * fills a missing added_tokens with [] (the oracle's default; the JS library needs the key).
 * Runs once per load, before either backend is built; O(merges + added tokens).
 */
export function checkTokenizerShape(json: Obj, file: string): void {
  const s: Shape = new Shape(file);
  for (const key of Object.keys(json)) {
    if (!TOP_LEVEL_KEYS.has(key)) s.fail(key, `no such key (tokenizer.json has ${[...TOP_LEVEL_KEYS].join(', ')})`, json[key]);
  }
  if (json.version !== undefined && typeof json.version !== 'string') s.fail('version', 'a string', json.version);
  for (const [key, required] of [
    ['truncation', 'max_length'],
    ['padding', 'strategy'],
  ] as const) {
    const v = json[key];
    if (v === undefined || v === null) continue;
    if (!isObj(v)) s.fail(key, 'an object or null', v);
    if (v[required] === undefined) s.fail(`${key}.${required}`, 'a value', undefined);
  }
  if (json.added_tokens === undefined) json.added_tokens = [];
  s.list('added_tokens', json.added_tokens).forEach((a, i) => {
    const at = `added_tokens[${i}]`;
    const t = s.obj(at, a);
    for (const key of ['single_word', 'lstrip', 'rstrip', 'normalized', 'special']) s.bool(t, key, at);
  });
  const model = json.model;
  if (isObj(model)) checkModel(s, model);
  for (const key of ['normalizer', 'pre_tokenizer', 'post_processor', 'decoder'] as const) {
    const v = json[key];
    if (v === undefined || v === null) continue;
    checkComponent(s, key, v);
  }
}

function checkModel(s: Shape, model: Obj): void {
  if (model.type !== undefined && (typeof model.type !== 'string' || !MODEL_TYPES.has(model.type))) {
    s.fail('model.type', `one of ${[...MODEL_TYPES].join(', ')}`, model.type);
  }
  const type = model.type ?? (model.merges !== undefined ? 'BPE' : undefined);
  if (type === 'WordPiece' && typeof model.unk_token !== 'string') s.fail('model.unk_token', 'a string (WordPiece)', model.unk_token);
  if (type !== 'BPE') return;
  const d = model.dropout;
  if (d !== undefined && d !== null && (typeof d !== 'number' || !(d >= 0 && d <= 1))) s.fail('model.dropout', 'a number from 0 to 1, or null', d);
  for (const key of ['unk_token', 'continuing_subword_prefix', 'end_of_word_suffix']) s.nullableString(model, key, 'model');
  for (const key of ['fuse_unk', 'byte_fallback', 'ignore_merges']) s.bool(model, key, 'model', true);
  const merges = model.merges;
  if (!Array.isArray(merges) || merges.length === 0) return;
  const strings = typeof merges[0] === 'string';
  for (let i = 0; i < merges.length; i++) {
    const m = merges[i];
    if (strings) {
      if (typeof m !== 'string') s.fail(`model.merges[${i}]`, `"a b" like model.merges[0]`, m);
      // "#version" lines are skipped by HF; anything else splits into exactly two parts.
      const sp = m.indexOf(' ');
      if (!m.startsWith('#version') && (sp < 0 || m.indexOf(' ', sp + 1) >= 0)) s.fail(`model.merges[${i}]`, '"a b" (one space)', m);
    } else if (!Array.isArray(m) || m.length !== 2 || typeof m[0] !== 'string' || typeof m[1] !== 'string') {
      s.fail(`model.merges[${i}]`, '["a", "b"] like model.merges[0]', m);
    }
  }
}

function checkComponent(s: Shape, path: string, v: unknown): void {
  const o = s.obj(path, v);
  if (typeof o.type !== 'string') s.fail(`${path}.type`, 'a string', o.type);
  switch (o.type) {
    case 'ByteLevel':
      s.bool(o, 'add_prefix_space', path, path === 'post_processor');
      s.bool(o, 'trim_offsets', path, true);
      s.bool(o, 'use_regex', path, true);
      return;
    case 'Split': {
      const p = s.obj(`${path}.pattern`, o.pattern);
      const keys = Object.keys(p);
      if (keys.length !== 1 || (keys[0] !== 'Regex' && keys[0] !== 'String') || typeof p[keys[0]!] !== 'string') {
        s.fail(`${path}.pattern`, '{"Regex": string} or {"String": string}', p);
      }
      if (typeof o.behavior !== 'string' || !SPLIT_BEHAVIORS.has(o.behavior))
        s.fail(`${path}.behavior`, `one of ${[...SPLIT_BEHAVIORS].join(', ')}`, o.behavior);
      s.bool(o, 'invert', path);
      return;
    }
    case 'Sequence': {
      const key =
        path === 'normalizer' || path.startsWith('normalizer')
          ? 'normalizers'
          : path.startsWith('decoder')
            ? 'decoders'
            : path.startsWith('post_processor')
              ? 'processors'
              : 'pretokenizers';
      s.list(`${path}.${key}`, o[key]).forEach((x, i) => {
        checkComponent(s, `${path}.${key}[${i}]`, x);
      });
      return;
    }
    case 'TemplateProcessing':
      if (path.startsWith('post_processor')) checkTemplateProcessing(s, path, o);
      return;
  }
}

function checkTemplateProcessing(s: Shape, path: string, o: Obj): void {
  for (const key of ['single', 'pair']) {
    s.list(`${path}.${key}`, o[key]).forEach((piece, i) => {
      const at = `${path}.${key}[${i}]`;
      const p = s.obj(at, piece);
      const kind = Object.keys(p);
      if (kind.length !== 1 || (kind[0] !== 'SpecialToken' && kind[0] !== 'Sequence')) s.fail(at, '{"SpecialToken": …} or {"Sequence": …}', piece);
      const body = s.obj(`${at}.${kind[0]}`, p[kind[0]!]);
      if (kind[0] === 'SpecialToken' ? typeof body.id !== 'string' : body.id !== 'A' && body.id !== 'B') {
        s.fail(`${at}.${kind[0]}.id`, kind[0] === 'SpecialToken' ? 'a string' : '"A" or "B"', body.id);
      }
      s.u32(`${at}.${kind[0]}.type_id`, body.type_id);
    });
  }
  const special = s.obj(`${path}.special_tokens`, o.special_tokens);
  for (const [name, tok] of Object.entries(special)) {
    const at = `${path}.special_tokens[${JSON.stringify(name)}]`;
    const t = s.obj(at, tok);
    if (typeof t.id !== 'string') s.fail(`${at}.id`, 'a string', t.id);
    s.list(`${at}.ids`, t.ids).forEach((id, i) => {
      s.u32(`${at}.ids[${i}]`, id);
    });
    s.list(`${at}.tokens`, t.tokens).forEach((x, i) => {
      if (typeof x !== 'string') s.fail(`${at}.tokens[${i}]`, 'a string', x);
    });
  }
}
