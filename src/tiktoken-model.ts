/**
 * tiktoken rank files (`base64(token bytes) rank` per line: OpenAI's `*.tiktoken`, GLM-4's
 * `tokenizer.model`) read into the tokenizer.json model that both backends already take, so a
 * rank file needs no code of its own in either backend or in C++.
 *
 * The conversion is transformers' TikTokenConverter (convert_slow_tokenizer.py,
 * `extract_vocab_merges_from_model`): each token's bytes become its GPT-2 ByteLevel string
 * with the rank as its id; every split of a token into two tokens is a merge, the merges
 * ordered by the rank of the token they make (then by the ranks of the two halves); and
 * `ignore_merges: true`, because tiktoken emits a piece that is itself a token without merging
 * (tiktoken src/lib.rs `encode_ordinary`: the `encoder.get(piece)` shortcut). tiktoken merges the
 * adjacent pair whose concatenation has the lowest rank; every pair it can meet is two tokens,
 * so that is the pair with the lowest merge rank here. Where one token can be made from two
 * different pairs in one piece, tiktoken takes the leftmost and HF the lower merge: the tests
 * compare both backends with tiktoken itself on the corpus and on repetitive input.
 *
 * Cost: one pass over the file, one Map of the token strings, and (sum of token lengths) Map
 * lookups for the merges: about 0.2 s for GLM-4's 151,329 ranks on this machine.
 */
import { PromptencError } from './errors.js';
import { BYTE_LEVEL_CHARS, BYTE_OF_BYTE_LEVEL_CHAR } from './offsets.js';
import type { AddedTokenSpec, TokenizerJson } from './tokenizer-json.js';

/** Refusals before any work: a rank file above these is not a tokenizer, or not one we can serve. */
export const TIKTOKEN_LIMITS = {
  /** o200k_base.tiktoken is 3.6 MB, GLM-4's tokenizer.model 2.6 MB. */
  maxFileBytes: 64 * 1024 * 1024,
  /** 2^22 ranks; the largest real vocabularies have ~260 k. */
  maxRanks: 1 << 22,
  /** Bytes in one token (token byte lengths are kept as 16-bit numbers downstream). */
  maxTokenBytes: 4096,
  /** The largest rank (= id): both backends keep tables indexed by id, so ids stay below 2^22 as for a tokenizer.json. */
  maxRank: 2 ** 22 - 1,
  /**
   * Bytes of all merges' two halves together (the merge list's text, and about the work of
   * finding them): 3.2 MB for o200k_base, 2.3 MB for GLM-4. A file of tokens that split many
   * ways ('a' repeated 2 to 4,096 times: 11 MB) would need 2.3e10 and hang the load.
   */
  maxMergeBytes: 64 * 1024 * 1024,
} as const;

/**
 * A parsed rank file: token i (file order) is bytes[offsets[i] .. offsets[i + 1]) and has rank
 * ranks[i]. `find` looks a byte string up (open addressing over a polynomial hash), which is
 * what makes the merges cheap: a split's two halves are looked up from prefix hashes, with no
 * string built unless both halves are tokens.
 */
export interface TiktokenRanks {
  readonly count: number;
  readonly bytes: Uint8Array;
  readonly offsets: Uint32Array;
  readonly ranks: Uint32Array;
}

const BASE64_VALUE = (() => {
  const t = new Int8Array(256).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < 64; i++) t[alphabet.charCodeAt(i)] = i;
  return t;
})();

function bad(file: string, detail: string): never {
  throw new PromptencError('E_TOKENIZER_INVALID', `${file}: ${detail}`);
}

/** Whether `bytes` starts like a tiktoken rank file (its first line is `base64 rank`), so a SentencePiece tokenizer.model is told apart. */
export function looksLikeTiktokenRanks(bytes: Uint8Array): boolean {
  let nl = bytes.indexOf(0x0a);
  if (nl < 0) nl = bytes.length;
  const first = Buffer.from(bytes.buffer, bytes.byteOffset, nl).toString('latin1').replace(/\r$/, '');
  return /^[A-Za-z0-9+/]+={0,2} \d+$/.test(first);
}

function shownLine(src: Uint8Array, start: number, end: number): string {
  const line = Buffer.from(src.buffer, src.byteOffset + start, Math.min(end - start, 60)).toString('latin1');
  return JSON.stringify(end - start > 60 ? `${line.slice(0, 57)}...` : line);
}

/**
 * Decode one `base64 rank` line (without its line end) into out at `at`; returns the bytes
 * written, or -1 when the line is not exactly that (standard alphabet, `=` padding only at the
 * end and only as much as the length needs, zero pad bits, one space, 1-10 decimal digits).
 */
function decodeLine(src: Uint8Array, start: number, end: number, out: Uint8Array, at: number): { n: number; rank: number } | undefined {
  let sp = start;
  while (sp < end && src[sp] !== 0x20) sp++;
  const len = sp - start;
  if (len === 0 || len % 4 !== 0 || end - sp - 1 < 1 || end - sp - 1 > 10) return undefined;
  let rank = 0;
  for (let i = sp + 1; i < end; i++) {
    const d = src[i]! - 0x30;
    if (d < 0 || d > 9) return undefined;
    rank = rank * 10 + d;
  }
  let pad = 0;
  if (src[sp - 1] === 0x3d) pad = src[sp - 2] === 0x3d ? 2 : 1;
  let w = at;
  for (let i = start; i < sp; i += 4) {
    const last = i + 4 === sp;
    const a = BASE64_VALUE[src[i]!]!;
    const b = BASE64_VALUE[src[i + 1]!]!;
    const c = last && pad === 2 ? 0 : BASE64_VALUE[src[i + 2]!]!;
    const d = last && pad >= 1 ? 0 : BASE64_VALUE[src[i + 3]!]!;
    if ((a | b | c | d) < 0) return undefined;
    const v = (a << 18) | (b << 12) | (c << 6) | d;
    out[w++] = v >>> 16;
    if (!(last && pad === 2)) out[w++] = (v >>> 8) & 0xff;
    else if ((v & 0xffff) !== 0) return undefined; // non-zero pad bits: not canonical
    if (!(last && pad >= 1)) out[w++] = v & 0xff;
    else if (pad === 1 && (v & 0xff) !== 0) return undefined;
  }
  return { n: w - at, rank };
}

/**
 * A prime below 2^26: the product of two residues stays below 2^52, exact in a double. Modulo
 * 2^32 (the first version) any odd base has base-independent collisions (Thue-Morse blocks of
 * 128 bytes), so a crafted rank file of 8 MB could make each lookup walk one long probe cluster:
 * 30 s to load, minutes at the size limit. Modulo a prime with a base drawn per process, two
 * distinct tokens of n bytes collide with probability at most n / HASH_MOD.
 */
const HASH_MOD = 67108859;
const HASH_BASE = 257 + Math.floor(Math.random() * (HASH_MOD - 514));

/** The hash of bytes[start, end): sum of (b_i + 1) * BASE^(n-1-i) mod HASH_MOD (so a suffix's hash follows from prefix hashes). */
function hashRange(bytes: Uint8Array, start: number, end: number): number {
  let h = 0;
  for (let i = start; i < end; i++) h = (h * HASH_BASE + bytes[i]! + 1) % HASH_MOD;
  return h;
}

/** Open-addressing table of the tokens by content: token index + 1 per slot, 0 = empty. */
class TokenTable {
  private readonly slots: Int32Array;
  private readonly mask: number;
  constructor(
    private readonly r: TiktokenRanks,
    capacity: number,
  ) {
    let size = 1024;
    while (size < capacity * 2) size *= 2;
    this.slots = new Int32Array(size);
    this.mask = size - 1;
  }

  private equal(i: number, bytes: Uint8Array, start: number, end: number): boolean {
    const s = this.r.offsets[i]!;
    if (this.r.offsets[i + 1]! - s !== end - start) return false;
    for (let k = 0; k < end - start; k++) if (this.r.bytes[s + k] !== bytes[start + k]) return false;
    return true;
  }

  /** The index of the token equal to bytes[start, end) with hash h, or -1. */
  find(h: number, bytes: Uint8Array, start: number, end: number): number {
    for (let at = h & this.mask; ; at = (at + 1) & this.mask) {
      const v = this.slots[at]!;
      if (v === 0) return -1;
      if (this.equal(v - 1, bytes, start, end)) return v - 1;
    }
  }

  /** Insert token i; returns the index of an equal token already there, or -1. */
  insert(i: number, h: number): number {
    const s = this.r.offsets[i]!;
    const e = this.r.offsets[i + 1]!;
    for (let at = h & this.mask; ; at = (at + 1) & this.mask) {
      const v = this.slots[at]!;
      if (v === 0) {
        this.slots[at] = i + 1;
        return -1;
      }
      if (this.equal(v - 1, this.r.bytes, s, e)) return v - 1;
    }
  }
}

/**
 * Parse a rank file strictly: `\n` or `\r\n` line ends, one `base64 rank` per line (one space),
 * canonical standard base64, a decimal rank; empty lines only at the end. Refused with
 * E_TOKENIZER_INVALID, naming the line: anything else, a repeated token or rank (tiktoken's
 * CoreBPE refuses a repeated rank), and a file that lacks one of the 256 single bytes (tiktoken
 * cannot encode such a byte: its byte_pair_encode indexes the ranks with it).
 * Cost: one pass over the bytes, no per-line strings.
 */
export function parseTiktokenRanks(src: Uint8Array, file: string): TiktokenRanks {
  if (src.length > TIKTOKEN_LIMITS.maxFileBytes) bad(file, `rank file is ${src.length} bytes, above the limit of ${TIKTOKEN_LIMITS.maxFileBytes}`);
  let lines = 0;
  for (let i = src.indexOf(0x0a); i >= 0; i = src.indexOf(0x0a, i + 1)) lines++;
  lines++;
  if (lines > TIKTOKEN_LIMITS.maxRanks + 1) bad(file, `rank file has ${lines} lines, above the limit of ${TIKTOKEN_LIMITS.maxRanks}`);
  const out = new Uint8Array(src.length);
  const offsets = new Uint32Array(lines + 1);
  const ranks = new Uint32Array(lines);
  let count = 0;
  let written = 0;
  let trailingEmpty = false;
  for (let start = 0, line = 1; start < src.length; line++) {
    let end = src.indexOf(0x0a, start);
    const next = end < 0 ? src.length : end + 1;
    if (end < 0) end = src.length;
    const contentEnd = end > start && src[end - 1] === 0x0d ? end - 1 : end;
    if (contentEnd === start) {
      trailingEmpty = true;
    } else {
      if (trailingEmpty) bad(file, `line ${line - 1}: empty line inside the rank file`);
      const r = decodeLine(src, start, contentEnd, out, written);
      if (!r) bad(file, `line ${line}: expected "<base64 token> <rank>", received ${shownLine(src, start, contentEnd)}`);
      if (r.n === 0) bad(file, `line ${line}: the token is empty`);
      if (r.n > TIKTOKEN_LIMITS.maxTokenBytes) bad(file, `line ${line}: the token has ${r.n} bytes, above the limit of ${TIKTOKEN_LIMITS.maxTokenBytes}`);
      if (r.rank > TIKTOKEN_LIMITS.maxRank) bad(file, `line ${line}: rank ${r.rank} is above ${TIKTOKEN_LIMITS.maxRank}`);
      ranks[count] = r.rank;
      offsets[count] = written;
      written += r.n;
      offsets[++count] = written;
    }
    start = next;
  }
  if (count === 0) bad(file, 'rank file is empty');
  const parsed: TiktokenRanks = { count, bytes: out.subarray(0, written), offsets: offsets.subarray(0, count + 1), ranks: ranks.subarray(0, count) };
  const sorted = Uint32Array.from(parsed.ranks).sort();
  for (let i = 1; i < count; i++) {
    if (sorted[i] === sorted[i - 1]) {
      const lineOf = (k: number) => parsed.ranks.indexOf(sorted[i]!, k) + 1;
      const first = lineOf(0);
      bad(file, `line ${parsed.ranks.indexOf(sorted[i]!, first) + 1}: rank ${sorted[i]} repeats the rank of line ${first} (tiktoken refuses duplicate ranks)`);
    }
  }
  const table = tokenTable(parsed);
  if (typeof table === 'number') bad(file, `line ${table + 1}: its token repeats the token of an earlier line`);
  for (let b = 0; b < 256; b++) {
    const one = Uint8Array.of(b);
    if (table.find(hashRange(one, 0, 1), one, 0, 1) < 0)
      bad(file, `the rank file has no token for the single byte 0x${b.toString(16).padStart(2, '0')} (tiktoken cannot encode it)`);
  }
  tables.set(parsed, table);
  return parsed;
}

const tables = new WeakMap<TiktokenRanks, TokenTable>();

/** The table of all tokens, or the index of the first token equal to an earlier one. */
function tokenTable(r: TiktokenRanks): TokenTable | number {
  const t = new TokenTable(r, r.count);
  for (let i = 0; i < r.count; i++) {
    if (t.insert(i, hashRange(r.bytes, r.offsets[i]!, r.offsets[i + 1]!)) >= 0) return i;
  }
  return t;
}

/** The pre-tokenizer JSON of a tiktoken pattern that the backends know: a Split + ByteLevel, or GPT-2's own ByteLevel. */
export type TiktokenSplit = { kind: 'split'; regex: string } | { kind: 'gpt2' };

export interface TiktokenModelSpec {
  split: TiktokenSplit;
  /** Special tokens (tiktoken's special_tokens, or transformers' added tokens), each one id. */
  added: ReadonlyArray<Pick<AddedTokenSpec, 'id' | 'content'> & Partial<AddedTokenSpec>>;
  /** Ids that `tokenizer(text)` puts before the text (ChatGLM4Tokenizer's [gMASK]<sop>), by added-token content. */
  prefix?: readonly string[];
}

const BYTE_LEVEL_CODES = BYTE_LEVEL_CHARS.map((c) => c.charCodeAt(0));

/** Define vocab[key] as an own data property ("__proto__" is a possible token string). */
function setKey(vocab: Record<string, number>, key: string, id: number): void {
  if (key === '__proto__') Object.defineProperty(vocab, key, { value: id, writable: true, enumerable: true, configurable: true });
  else vocab[key] = id;
}

/** The tokenizer.json (model, pre-tokenizer, decoder, added tokens, post-processor) of a rank file. */
export function tiktokenTokenizerJson(parsed: TiktokenRanks, spec: TiktokenModelSpec, file: string): TokenizerJson {
  const n = parsed.count;
  const { bytes, offsets, ranks } = parsed;
  let table = tables.get(parsed);
  if (!table) {
    const t = tokenTable(parsed);
    if (typeof t === 'number') bad(file, `line ${t + 1}: its token repeats the token of an earlier line`);
    table = t;
  }
  // Rank order (files are written in it; sort only when one is not).
  const order = Uint32Array.from({ length: n }, (_, i) => i);
  for (let i = 1; i < n; i++) {
    if (ranks[i]! < ranks[i - 1]!) {
      order.sort((a, b) => ranks[a]! - ranks[b]!);
      break;
    }
  }
  // The merges as pairs of token indexes, in merge order.
  let mergeL = new Int32Array(n * 2 + 16);
  let mergeR = new Int32Array(n * 2 + 16);
  let m = 0;
  let mergeBytes = 0;
  let pairL = new Int32Array(64);
  let pairR = new Int32Array(64);
  let prefix = new Int32Array(64);
  let power = new Int32Array(64);
  power[0] = 1;
  let powered = 1;
  for (const i of order) {
    const s = offsets[i]!;
    const len = offsets[i + 1]! - s;
    if (len < 2) continue;
    if (prefix.length <= len) {
      prefix = new Int32Array(len * 2);
      const grown = new Int32Array(len * 2);
      grown.set(power.subarray(0, powered));
      power = grown;
      pairL = new Int32Array(len * 2);
      pairR = new Int32Array(len * 2);
    }
    // prefix[k] = hash of the first k bytes; power[k] = BASE^k (mod HASH_MOD), filled once.
    for (; powered <= len; powered++) power[powered] = (power[powered - 1]! * HASH_BASE) % HASH_MOD;
    for (let k = 0; k < len; k++) prefix[k + 1] = (prefix[k]! * HASH_BASE + bytes[s + k]! + 1) % HASH_MOD;
    let found = 0;
    for (let k = 1; k < len; k++) {
      const l = table.find(prefix[k]!, bytes, s, s + k);
      if (l < 0) continue;
      const hr = (prefix[len]! - ((prefix[k]! * power[len - k]!) % HASH_MOD) + HASH_MOD) % HASH_MOD;
      const r = table.find(hr, bytes, s + k, s + len);
      if (r < 0) continue;
      // Insertion by (rank of the left half, rank of the right half): a token has few splits.
      let at = found++;
      while (at > 0 && (ranks[pairL[at - 1]!]! > ranks[l]! || (ranks[pairL[at - 1]!]! === ranks[l]! && ranks[pairR[at - 1]!]! > ranks[r]!))) {
        pairL[at] = pairL[at - 1]!;
        pairR[at] = pairR[at - 1]!;
        at--;
      }
      pairL[at] = l;
      pairR[at] = r;
    }
    mergeBytes += found * len;
    if (mergeBytes > TIKTOKEN_LIMITS.maxMergeBytes) {
      bad(
        file,
        `its merges take more than ${TIKTOKEN_LIMITS.maxMergeBytes} bytes (line ${i + 1} is one of the tokens that split into two tokens in many ways)`,
      );
    }
    if (m + found > mergeL.length) {
      const grow = (x: Int32Array) => {
        const y = new Int32Array(Math.max(x.length * 2, m + found));
        y.set(x);
        return y;
      };
      mergeL = grow(mergeL);
      mergeR = grow(mergeR);
    }
    for (let k = 0; k < found; k++) {
      mergeL[m] = pairL[k]!;
      mergeR[m++] = pairR[k]!;
    }
  }
  const model = { parsed, table, order, mergeL: mergeL.subarray(0, m), mergeR: mergeR.subarray(0, m) };
  const taken = new Set<number>(parsed.ranks);
  const added: AddedTokenSpec[] = spec.added.map((t) => {
    if (!Number.isInteger(t.id) || t.id < 0 || t.id > TIKTOKEN_LIMITS.maxRank)
      bad(file, `special token ${JSON.stringify(t.content)}: id ${t.id} is not an integer from 0 to ${TIKTOKEN_LIMITS.maxRank}`);
    if (taken.has(t.id)) bad(file, `special token ${JSON.stringify(t.content)} has id ${t.id}, which is already the rank of a regular token`);
    taken.add(t.id);
    return {
      id: t.id,
      content: t.content,
      special: t.special ?? true,
      lstrip: t.lstrip ?? false,
      rstrip: t.rstrip ?? false,
      single_word: t.single_word ?? false,
      normalized: t.normalized ?? false,
    };
  });
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: spec.split.kind === 'gpt2' };
  const preTokenizer =
    spec.split.kind === 'gpt2'
      ? byteLevel
      : { type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { Regex: spec.split.regex }, behavior: 'Isolated', invert: false }, byteLevel] };
  const json: TokenizerJson = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: preTokenizer,
    post_processor: spec.prefix?.length ? prefixProcessor(spec.prefix, added, file) : null,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: lazyModel(model),
  };
  RANK_FILE_MODELS.set(json, rankFileModel(model, added));
  return json;
}

interface RankModel {
  parsed: TiktokenRanks;
  table: TokenTable;
  /** token indexes in rank order */
  order: Uint32Array;
  /** merge k joins token mergeL[k] and token mergeR[k] (indexes into parsed) */
  mergeL: Int32Array;
  mergeR: Int32Array;
}

/** The ByteLevel string of every token (one UTF-16 decode, then a slice each: one unit per byte). */
function tokenStrings(r: TiktokenRanks): string[] {
  const units = new Uint16Array(r.bytes.length);
  for (let k = 0; k < r.bytes.length; k++) units[k] = BYTE_LEVEL_CODES[r.bytes[k]!]!;
  const all = Buffer.from(units.buffer, units.byteOffset, units.byteLength).toString('utf16le');
  const out: string[] = new Array(r.count);
  for (let i = 0; i < r.count; i++) out[i] = all.slice(r.offsets[i]!, r.offsets[i + 1]!);
  return out;
}

/**
 * tokenizer.json's model with `vocab` and `merges` built on first read (the JS backend, a
 * JSON.stringify); the native backend builds from flat buffers instead (RANK_FILE_MODELS).
 */
function lazyModel(m: RankModel): TokenizerJson['model'] {
  const model: TokenizerJson['model'] = {
    type: 'BPE',
    dropout: null,
    unk_token: null,
    continuing_subword_prefix: null,
    end_of_word_suffix: null,
    fuse_unk: false,
    byte_fallback: false,
    ignore_merges: true,
    vocab: {},
  };
  let strings: string[] | undefined;
  const values = {
    vocab: (): Record<string, number> => {
      strings ??= tokenStrings(m.parsed);
      const vocab: Record<string, number> = {};
      for (const i of m.order) setKey(vocab, strings[i]!, m.parsed.ranks[i]!);
      return vocab;
    },
    merges: (): string[] => {
      strings ??= tokenStrings(m.parsed);
      const out: string[] = new Array(m.mergeL.length);
      // ByteLevel strings hold no ASCII space (byte 0x20 is "Ġ"), so "a b" is unambiguous.
      for (let k = 0; k < m.mergeL.length; k++) out[k] = `${strings[m.mergeL[k]!]} ${strings[m.mergeR[k]!]}`;
      return out;
    },
  };
  for (const key of ['vocab', 'merges'] as const) {
    const define = (value: unknown) => Object.defineProperty(model, key, { value, writable: true, enumerable: true, configurable: true });
    Object.defineProperty(model, key, {
      enumerable: true,
      configurable: true,
      get: () => {
        const value = values[key]();
        define(value);
        return value;
      },
      set: define,
    });
  }
  return model;
}

/** What the native backend builds a rank-file model from: native.ts ModelBuffers, and the Vocabulary. */
export interface RankFileModel {
  buffers(): { vocabKeys: Uint8Array; vocabKeyLens: Uint32Array; vocabIds: Uint32Array; mergeText: Uint8Array; mergeLens: Uint32Array };
  readonly vocabulary: { readonly size: number; idOf(token: string): number | undefined; tokenByteLengths(): Uint16Array | undefined };
}

/** tokenizer.json objects built from rank files → their flat form (only ever set here). */
const RANK_FILE_MODELS = new WeakMap<object, RankFileModel>();

/** The flat form of a tokenizer.json built from a rank file, if it is one (and its vocab and merges were never replaced). */
export function rankFileModelOf(json: TokenizerJson): RankFileModel | undefined {
  const found = RANK_FILE_MODELS.get(json);
  if (!found) return undefined;
  // A caller that swapped in its own vocab or merges gets the ordinary path.
  const d = (key: string) => Object.getOwnPropertyDescriptor(json.model, key);
  return d('vocab')?.get && d('merges')?.get ? found : undefined;
}

/** UTF-8 of each byte's ByteLevel character: one byte below U+0080, else two (all are below U+0800). */
const BYTE_LEVEL_UTF8_LEN = Uint8Array.from(BYTE_LEVEL_CODES, (c) => (c < 0x80 ? 1 : 2));

function rankFileModel(m: RankModel, added: readonly AddedTokenSpec[]): RankFileModel {
  const { bytes, offsets, ranks, count } = m.parsed;
  const put = (out: Uint8Array, at: number, from: number, to: number): number => {
    for (let k = from; k < to; k++) {
      const c = BYTE_LEVEL_CODES[bytes[k]!]!;
      if (c < 0x80) out[at++] = c;
      else {
        out[at++] = 0xc0 | (c >> 6);
        out[at++] = 0x80 | (c & 0x3f);
      }
    }
    return at;
  };
  let utf8Total = 0;
  for (let k = 0; k < bytes.length; k++) utf8Total += BYTE_LEVEL_UTF8_LEN[bytes[k]!]!;
  const utf8Of = (i: number) => {
    let n = 0;
    for (let k = offsets[i]!; k < offsets[i + 1]!; k++) n += BYTE_LEVEL_UTF8_LEN[bytes[k]!]!;
    return n;
  };
  let lengthsMemo: Uint16Array | undefined;
  return {
    buffers() {
      // Keys joined with '\0' in rank order (UTF-16 lengths = byte lengths); merges as pairs (a, b), all parts joined with '\0'.
      const vocabKeys = new Uint8Array(utf8Total + Math.max(0, count - 1));
      const vocabKeyLens = new Uint32Array(count);
      const vocabIds = new Uint32Array(count);
      let at = 0;
      m.order.forEach((i, k) => {
        if (k > 0) vocabKeys[at++] = 0;
        at = put(vocabKeys, at, offsets[i]!, offsets[i + 1]!);
        vocabKeyLens[k] = offsets[i + 1]! - offsets[i]!;
        vocabIds[k] = ranks[i]!;
      });
      const nm = m.mergeL.length;
      let mergeBytes = 0;
      for (let k = 0; k < nm; k++) mergeBytes += utf8Of(m.mergeL[k]!) + utf8Of(m.mergeR[k]!);
      const mergeText = new Uint8Array(mergeBytes + Math.max(0, 2 * nm - 1));
      const mergeLens = new Uint32Array(nm * 2);
      at = 0;
      for (let k = 0; k < nm; k++) {
        const l = m.mergeL[k]!;
        const r = m.mergeR[k]!;
        if (k > 0) mergeText[at++] = 0;
        at = put(mergeText, at, offsets[l]!, offsets[l + 1]!);
        mergeText[at++] = 0;
        at = put(mergeText, at, offsets[r]!, offsets[r + 1]!);
        mergeLens[2 * k] = offsets[l + 1]! - offsets[l]!;
        mergeLens[2 * k + 1] = offsets[r + 1]! - offsets[r]!;
      }
      return { vocabKeys, vocabKeyLens, vocabIds, mergeText, mergeLens };
    },
    vocabulary: {
      size: count,
      idOf(token: string): number | undefined {
        const b = new Uint8Array(token.length);
        for (let k = 0; k < token.length; k++) {
          const c = token.charCodeAt(k);
          const v = c < BYTE_OF_BYTE_LEVEL_CHAR.length ? BYTE_OF_BYTE_LEVEL_CHAR[c]! : -1;
          if (v < 0) return undefined;
          b[k] = v;
        }
        const i = m.table.find(hashRange(b, 0, b.length), b, 0, b.length);
        return i < 0 ? undefined : ranks[i];
      },
      tokenByteLengths(): Uint16Array {
        if (lengthsMemo) return lengthsMemo;
        let max = 0;
        for (let i = 0; i < count; i++) if (ranks[i]! > max) max = ranks[i]!;
        for (const t of added) if (t.id > max) max = t.id;
        const lengths = new Uint16Array(max + 1);
        for (let i = 0; i < count; i++) lengths[ranks[i]!] = offsets[i + 1]! - offsets[i]!;
        lengthsMemo = lengths; // added tokens stay 0: they are measured from their matched text
        return lengths;
      },
    },
  };
}

/** A TemplateProcessing that writes `prefix` before a single sequence (and before the first of a pair). */
function prefixProcessor(prefix: readonly string[], added: readonly AddedTokenSpec[], file: string): Record<string, unknown> {
  const special: Record<string, { id: string; ids: number[]; tokens: string[] }> = {};
  for (const content of prefix) {
    const t = added.find((a) => a.content === content);
    if (!t) bad(file, `prefix token ${JSON.stringify(content)} is not an added token`);
    special[content] = { id: content, ids: [t.id], tokens: [content] };
  }
  const pieces = prefix.map((id) => ({ SpecialToken: { id, type_id: 0 } }));
  return {
    type: 'TemplateProcessing',
    single: [...pieces, { Sequence: { id: 'A', type_id: 0 } }],
    pair: [...pieces, { Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
    special_tokens: special,
  };
}
