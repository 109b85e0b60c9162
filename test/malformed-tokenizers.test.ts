/**
 * One table of malformed tokenizer.json files (issue 20, items 3 and 5), each a real file
 * (Llama 3 or Qwen3, cut small: test/helpers/mini-tokenizers.ts) with one mutation. For every
 * row the native backend and the JS backend give the same result:
 *   - the Rust oracle loads it: both load it and give the oracle's ids on every probe text;
 *   - the oracle refuses it: both refuse it with E_TOKENIZER_INVALID;
 *   - a documented promptenc limit (`limit`): the oracle loads it, both refuse it with
 *     E_TOKENIZER_INVALID (docs/reliability.md lists these departures).
 * Never a raw TypeError. A native backend that declines a file (E_NATIVE_UNSUPPORTED) is
 * compared through 'auto', which then serves it with JS. Rows that once hung (`child`) run in
 * a child process with a time bound, so a regression fails instead of hanging the run.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import tokenizers from 'tokenizers';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTokenizer, PromptencError } from '../src/index.js';
import { MAX_TOKEN_ID, MAX_TOKENIZER_FILE_BYTES } from '../src/tokenizer-checks.js';
import { nativeAddonStatus } from '../src/backend/native.js';
import { llama3Mini, probeTexts, qwen3Mini, type Json } from './helpers/mini-tokenizers.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), 'promptenc-malformed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BASES = { llama3: llama3Mini(), qwen3: qwen3Mini() };
type Base = keyof typeof BASES;

interface Row {
  name: string;
  base?: Base;
  /** Changes a copy of the base file. */
  mutate?: (t: Json) => void;
  /** The file's text from the base's JSON text, for mutations JSON cannot express. */
  text?: (json: string) => string | Buffer;
  /** A promptenc limit refuses this file though the oracle loads it: why. */
  limit?: string;
  /** Run the loads in a child process bounded by this many ms (rows that once hung). */
  child?: number;
  /** The file is this many bytes of zeros (sparse): the size limit; the oracle is not asked. */
  sparse?: number;
  /** The oracle loads this file but aborts the process when it encodes (a Rust panic): why. Both must refuse it. */
  oraclePanics?: string;
}

const first = (t: Json, pred: (k: string, id: number) => boolean): [string, number] =>
  Object.entries(t.model.vocab as Record<string, number>).find(([k, id]) => pred(k, id))!;
const mergeParts = (m: unknown): [string, string] => (typeof m === 'string' ? (m.split(' ') as [string, string]) : (m as [string, string]));
/** Two vocab tokens whose concatenation is not in the vocab. */
function unmergeable(t: Json): [string, string] {
  const v = t.model.vocab as Record<string, number>;
  const keys = Object.keys(v).slice(300, 400);
  for (const a of keys) for (const b of keys) if (!Object.hasOwn(v, `${a}${b}`)) return [a, b];
  throw new Error('no pair');
}
const asMerge = (t: Json, a: string, b: string): unknown => (typeof t.model.merges[0] === 'string' ? `${a} ${b}` : [a, b]);
const bos = (t: Json): Json => t.added_tokens[0];

const ROWS: Row[] = [
  { name: 'the file as cut (control)' },
  { name: 'the Qwen3 file as cut (control)', base: 'qwen3' },
  // added_tokens
  { name: 'added_tokens null', mutate: (t) => (t.added_tokens = null) },
  { name: 'added_tokens null (qwen3)', base: 'qwen3', mutate: (t) => (t.added_tokens = null) },
  { name: 'added_tokens missing', mutate: (t) => delete t.added_tokens },
  { name: 'added_tokens an object', mutate: (t) => (t.added_tokens = {}) },
  { name: 'added_tokens a string', mutate: (t) => (t.added_tokens = 'x') },
  { name: 'added_tokens[0] null', mutate: (t) => (t.added_tokens[0] = null) },
  { name: 'added_tokens[0].id -1', mutate: (t) => (bos(t).id = -1) },
  { name: 'added_tokens[0].id 1.5', mutate: (t) => (bos(t).id = 1.5) },
  { name: 'added_tokens[0].id a string', mutate: (t) => (bos(t).id = String(bos(t).id)) },
  { name: 'added_tokens[0].id null', mutate: (t) => (bos(t).id = null) },
  { name: 'added_tokens[0].id 1e9', mutate: (t) => (bos(t).id = 1e9), child: 60_000, limit: 'the oracle renumbers it; promptenc keeps file ids and refuses' },
  { name: 'added_tokens[0].id a gap after the vocab', mutate: (t) => (bos(t).id += 5), limit: 'the oracle renumbers it; promptenc keeps file ids and refuses' },
  { name: 'added_tokens[0].content empty', mutate: (t) => (bos(t).content = ''), limit: 'an added token with no content is refused' },
  { name: 'added_tokens[0].content a number', mutate: (t) => (bos(t).content = 5) },
  { name: 'added_tokens[0].content missing', mutate: (t) => delete bos(t).content },
  { name: 'added_tokens[0].special a string', mutate: (t) => (bos(t).special = 'yes') },
  { name: 'added_tokens[0].lstrip a number', mutate: (t) => (bos(t).lstrip = 1) },
  { name: 'added_tokens[0].normalized null', mutate: (t) => (bos(t).normalized = null) },
  { name: 'added_tokens[0].single_word missing', mutate: (t) => delete bos(t).single_word },
  {
    name: 'added_tokens: two tokens, one id',
    mutate: (t) => (t.added_tokens[1].id = bos(t).id),
    limit: 'the oracle renumbers it; promptenc keeps file ids and refuses',
  },
  { name: 'added_tokens: one token twice, one id', mutate: (t) => t.added_tokens.push({ ...bos(t) }) },
  {
    name: 'added_tokens: one token twice, two ids',
    mutate: (t) => t.added_tokens.push({ ...bos(t), id: 5000 }),
    limit: 'the oracle keeps the first id; promptenc refuses the ambiguity',
  },
  {
    name: 'added_tokens: a vocab key with its vocab id',
    mutate: (t) => {
      const [k, id] = first(t, (_, i) => i === 1000);
      t.added_tokens.push({ ...bos(t), content: k, id });
    },
  },
  {
    name: 'added_tokens: a vocab key with another id',
    mutate: (t) => {
      const [k] = first(t, (_, i) => i === 1000);
      t.added_tokens.push({ ...bos(t), content: k, id: 1001 });
    },
    limit: 'the oracle gives it its vocab id; promptenc keeps file ids and refuses',
  },
  { name: 'added_tokens[0] an array', mutate: (t) => (t.added_tokens[0] = [1, 2]) },
  // model
  { name: 'model null', mutate: (t) => (t.model = null) },
  { name: 'model missing', mutate: (t) => delete t.model },
  { name: 'model a string', mutate: (t) => (t.model = 'BPE') },
  { name: 'model.type WordPiece over a BPE model', mutate: (t) => (t.model.type = 'WordPiece') },
  { name: 'model.type a number', mutate: (t) => (t.model.type = 5) },
  { name: 'model.type missing', mutate: (t) => delete t.model.type },
  { name: 'model.vocab null', mutate: (t) => (t.model.vocab = null) },
  { name: 'model.vocab an array', mutate: (t) => (t.model.vocab = []) },
  { name: 'model.vocab missing', mutate: (t) => delete t.model.vocab },
  { name: 'model.vocab empty, merges kept', mutate: (t) => (t.model.vocab = {}) },
  {
    name: 'model.vocab and model.merges empty',
    mutate: (t) => {
      t.model.vocab = {};
      t.model.merges = [];
      t.added_tokens = t.added_tokens.map((a: Json, i: number) => ({ ...a, id: i }));
      t.post_processor = null;
    },
  },
  { name: 'model.vocab id -1', mutate: (t) => (t.model.vocab[first(t, (_, i) => i === 1999)[0]] = -1) },
  { name: 'model.vocab id 1.5', mutate: (t) => (t.model.vocab[first(t, (_, i) => i === 1999)[0]] = 1.5) },
  { name: 'model.vocab id a string', mutate: (t) => (t.model.vocab[first(t, (_, i) => i === 1999)[0]] = '1999') },
  { name: 'model.vocab id null', mutate: (t) => (t.model.vocab[first(t, (_, i) => i === 1999)[0]] = null) },
  { name: 'model.vocab id 2^32', mutate: (t) => (t.model.vocab[first(t, (_, i) => i === 1999)[0]] = 2 ** 32) },
  {
    name: 'model.vocab id 1e9',
    mutate: (t) => (t.model.vocab[first(t, (_, i) => i === 1999)[0]] = 1e9),
    child: 60_000,
    limit: `ids above MAX_TOKEN_ID (${MAX_TOKEN_ID}) are refused; the oracle accepts any u32`,
  },
  {
    name: 'model.vocab id MAX_TOKEN_ID + 1',
    mutate: (t) => (t.model.vocab[first(t, (_, i) => i === 1999)[0]] = MAX_TOKEN_ID + 1),
    child: 60_000,
    limit: 'ids above MAX_TOKEN_ID are refused; the oracle accepts any u32',
  },
  {
    name: 'model.vocab id 1e9 (qwen3)',
    base: 'qwen3',
    mutate: (t) => (t.model.vocab[first(t, (_, i) => i === 2999)[0]] = 1e9),
    child: 60_000,
    limit: 'ids above MAX_TOKEN_ID are refused; the oracle accepts any u32',
  },
  { name: 'model.vocab: two keys share an id', mutate: (t) => (t.model.vocab[first(t, (_, i) => i === 1999)[0]] = 1998) },
  { name: 'model.vocab: a hole in the ids', mutate: (t) => (t.model.vocab[first(t, (_, i) => i === 1500)[0]] = 1999 + 0) },
  { name: 'model.vocab: a key twice in the file text', text: (s) => s.replace('"vocab":{', '"vocab":{"!":7,') },
  // merges
  { name: 'model.merges null', mutate: (t) => (t.model.merges = null) },
  { name: 'model.merges missing', mutate: (t) => delete t.model.merges },
  { name: 'model.merges empty (BPE without merges)', mutate: (t) => (t.model.merges = []) },
  { name: 'model.merges empty (qwen3, merges used)', base: 'qwen3', mutate: (t) => (t.model.merges = []) },
  { name: 'model.merges a string', mutate: (t) => (t.model.merges = 'a b') },
  { name: 'model.merges an object', mutate: (t) => (t.model.merges = {}) },
  { name: 'model.merges[0] three parts "a b c"', mutate: (t) => (t.model.merges[0] = `${t.model.merges[0]} x`) },
  { name: 'model.merges[0] three parts [a, b, c]', base: 'qwen3', mutate: (t) => t.model.merges[0].push('x') },
  { name: 'model.merges[0] one part [a]', base: 'qwen3', mutate: (t) => t.model.merges[0].pop() },
  { name: 'model.merges[0] without a space', mutate: (t) => (t.model.merges[0] = t.model.merges[0].replace(' ', '')) },
  { name: 'model.merges[0] a number', mutate: (t) => (t.model.merges[0] = 5) },
  { name: 'model.merges[0] null', mutate: (t) => (t.model.merges[0] = null) },
  { name: 'model.merges: a left part not in the vocab', mutate: (t) => t.model.merges.push(asMerge(t, 'zzqx', mergeParts(t.model.merges[0])[1])) },
  {
    name: 'model.merges: a right part not in the vocab',
    base: 'qwen3',
    mutate: (t) => t.model.merges.push(asMerge(t, mergeParts(t.model.merges[0])[0], 'zzqx')),
  },
  {
    name: 'model.merges: a result not in the vocab',
    mutate: (t) => {
      const [a, b] = unmergeable(t);
      t.model.merges.push(asMerge(t, a, b));
    },
  },
  {
    name: 'model.merges: a result not in the vocab (qwen3)',
    base: 'qwen3',
    mutate: (t) => {
      const [a, b] = unmergeable(t);
      t.model.merges.splice(3, 0, asMerge(t, a, b));
    },
  },
  { name: 'model.merges: one merge twice', mutate: (t) => t.model.merges.push(t.model.merges[0]) },
  { name: 'model.merges: strings and pairs mixed', mutate: (t) => (t.model.merges[1] = mergeParts(t.model.merges[1])) },
  { name: 'model.merges: a #version line first', mutate: (t) => t.model.merges.unshift('#version: 0.2') },
  { name: 'model.ignore_merges a string', mutate: (t) => (t.model.ignore_merges = 'yes') },
  { name: 'model.byte_fallback a number', mutate: (t) => (t.model.byte_fallback = 1) },
  { name: 'model.unk_token a number', mutate: (t) => (t.model.unk_token = 5) },
  { name: 'model.dropout 2', mutate: (t) => (t.model.dropout = 2) },
  { name: 'model.dropout a string', mutate: (t) => (t.model.dropout = 'x') },
  // post_processor, normalizer, pre_tokenizer, decoder
  { name: "post_processor {type:'TemplateProcessing', single:5}", mutate: (t) => (t.post_processor = { type: 'TemplateProcessing', single: 5 }) },
  { name: 'post_processor TemplateProcessing, special_tokens missing', mutate: (t) => delete t.post_processor.special_tokens },
  {
    name: 'post_processor TemplateProcessing, its token unknown',
    mutate: (t) => (t.post_processor.special_tokens = {}),
    oraclePanics: 'tokenizers 0.23.2 loads it, then its encode panics ("non-unwinding panic. aborting")',
  },
  { name: 'post_processor TemplateProcessing, ids a string', mutate: (t) => (t.post_processor.special_tokens[bos(t).content].ids = 'x') },
  { name: 'post_processor TemplateProcessing, single a string', mutate: (t) => (t.post_processor.single = '$A') },
  { name: 'post_processor TemplateProcessing, single a template string', mutate: (t) => (t.post_processor.single = `${bos(t).content} $A`) },
  { name: 'post_processor of an unknown type', mutate: (t) => (t.post_processor = { type: 'Bogus' }) },
  { name: 'post_processor a number', mutate: (t) => (t.post_processor = 5) },
  { name: 'post_processor null', mutate: (t) => (t.post_processor = null) },
  { name: 'normalizer NFC on Llama 3', mutate: (t) => (t.normalizer = { type: 'NFC' }) },
  { name: 'normalizer of an unknown type', mutate: (t) => (t.normalizer = { type: 'Bogus' }) },
  { name: 'normalizer a number', base: 'qwen3', mutate: (t) => (t.normalizer = 5) },
  { name: 'normalizer Sequence of a number', base: 'qwen3', mutate: (t) => (t.normalizer = { type: 'Sequence', normalizers: [5] }) },
  { name: 'normalizer null (qwen3)', base: 'qwen3', mutate: (t) => (t.normalizer = null) },
  { name: 'pre_tokenizer null', mutate: (t) => (t.pre_tokenizer = null) },
  { name: 'pre_tokenizer of an unknown type', mutate: (t) => (t.pre_tokenizer = { type: 'Bogus' }) },
  { name: 'pre_tokenizer Split with a bad regex', mutate: (t) => (t.pre_tokenizer.pretokenizers[0].pattern.Regex = '(') },
  { name: 'pre_tokenizer Split behavior unknown', mutate: (t) => (t.pre_tokenizer.pretokenizers[0].behavior = 'Sideways') },
  { name: 'pre_tokenizer ByteLevel use_regex a string', mutate: (t) => (t.pre_tokenizer.pretokenizers[1].use_regex = 'yes') },
  { name: 'pre_tokenizer Sequence pretokenizers null', mutate: (t) => (t.pre_tokenizer.pretokenizers = null) },
  { name: 'decoder null', mutate: (t) => (t.decoder = null) },
  { name: 'decoder of an unknown type', mutate: (t) => (t.decoder = { type: 'Bogus' }) },
  { name: 'truncation of a wrong type', mutate: (t) => (t.truncation = 5) },
  { name: 'padding of a wrong type', mutate: (t) => (t.padding = 'x') },
  { name: 'an unknown top-level key', mutate: (t) => (t.extra = { anything: [1, 2] }) },
  // the file itself
  { name: 'truncated JSON', text: (s) => s.slice(0, Math.floor(s.length / 2)) },
  { name: 'not JSON', text: () => 'hello' },
  { name: 'an empty file', text: () => '' },
  { name: 'a JSON array', text: () => '[]' },
  { name: 'JSON null', text: () => 'null' },
  {
    name: 'invalid UTF-8 in a vocab key',
    text: (s) => {
      const b = Buffer.from(s, 'utf8');
      b[b.indexOf('"vocab":{"') + 10] = 0xff;
      return b;
    },
  },
  { name: 'a lone surrogate escape in a vocab key', text: (s) => s.replace('"vocab":{"!"', '"vocab":{"\\ud800"') },
  {
    name: `a file over MAX_TOKENIZER_FILE_BYTES (200 MB)`,
    sparse: 200 * 1024 * 1024,
    limit: `files over ${MAX_TOKENIZER_FILE_BYTES} bytes are refused unread`,
  },
];

type Outcome = { ids: number[][] } | { error: string } | { raw: string };

async function ours(file: string, backend: 'native' | 'js' | 'auto', texts: string[]): Promise<Outcome & { backend?: string }> {
  try {
    const tok = await loadTokenizer(file, { backend });
    const ids: number[][] = [];
    for (const t of texts) {
      ids.push(Array.from(tok.encode(t, { addSpecialTokens: false })));
      ids.push(Array.from(tok.encode(t)));
    }
    return { ids, backend: tok.backend };
  } catch (err) {
    if (err instanceof PromptencError) return { error: err.code };
    return { raw: `${(err as Error)?.name}: ${(err as Error)?.message}` };
  }
}

async function oracle(file: string, texts: string[]): Promise<Outcome> {
  try {
    const t = tokenizers.Tokenizer.fromFile(file);
    const ids: number[][] = [];
    for (const text of texts) {
      ids.push((await t.encode(text, null, { addSpecialTokens: false })).getIds());
      ids.push((await t.encode(text, null, { addSpecialTokens: true })).getIds());
    }
    return { ids };
  } catch (err) {
    return { error: String((err as Error).message).slice(0, 120) };
  }
}

function writeRow(row: Row, i: number): { file: string; texts: string[] } {
  const base = BASES[row.base ?? 'llama3'];
  const file = path.join(dir, `row${i}`, 'tokenizer.json');
  rmSync(path.dirname(file), { recursive: true, force: true });
  mkdirSync(path.dirname(file), { recursive: true });
  if (row.sparse) {
    const fd = openSync(file, 'w');
    ftruncateSync(fd, row.sparse);
    closeSync(fd);
    return { file, texts: [] };
  }
  const t = structuredClone(base);
  row.mutate?.(t);
  writeFileSync(file, row.text ? row.text(JSON.stringify(base)) : JSON.stringify(t));
  return { file, texts: probeTexts(t && typeof t === 'object' ? t : base) };
}

const distIndex = path.join(root, 'dist', 'index.js');
const newest = (d: string): number =>
  Math.max(...readdirSync(d, { withFileTypes: true }).map((e) => (e.isDirectory() ? newest(path.join(d, e.name)) : statSync(path.join(d, e.name)).mtimeMs)));
const distCurrent = existsSync(distIndex) && statSync(distIndex).mtimeMs >= newest(path.join(root, 'src'));
if (!distCurrent) console.warn('malformed-tokenizers: rows that once hung are SKIPPED: dist/ is missing or older than src/ (run npm run build)');

/** Loads `file` with `backend` in a child process (the built library), killed after `ms`. */
function childLoad(file: string, backend: string, ms: number): { outcome: string; ms: number } {
  const script = `import(${JSON.stringify(pathToFileURL(distIndex).href)}).then(async ({ loadTokenizer }) => {
    try { await loadTokenizer(${JSON.stringify(file)}, { backend: ${JSON.stringify(backend)} }); console.log('loaded'); }
    catch (e) { console.log(e && e.code ? e.code : 'raw ' + e); }
  });`;
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: ms,
    env: { ...process.env, PROMPTENC_QUIET: '1' },
  });
  const took = performance.now() - t0;
  return { outcome: r.error ? `timed out after ${ms} ms` : r.stdout.trim(), ms: took };
}

const native = nativeAddonStatus().available;
if (!native) console.warn('malformed-tokenizers: the native addon is not built: native rows compare auto (JS) only');

describe('the file size limit covers every file of a model directory', () => {
  for (const name of ['tokenizer_config.json', 'chat_template.jinja']) {
    it(`${name} over MAX_TOKENIZER_FILE_BYTES is refused unread`, async () => {
      const d = path.join(dir, `big-${name}`);
      mkdirSync(d, { recursive: true });
      writeFileSync(path.join(d, 'tokenizer.json'), JSON.stringify(BASES.llama3));
      const fd = openSync(path.join(d, name), 'w');
      ftruncateSync(fd, MAX_TOKENIZER_FILE_BYTES + 1);
      closeSync(fd);
      const err = await loadTokenizer(d, { backend: 'js' }).catch((e: unknown) => e);
      expect((err as PromptencError).code).toBe('E_TOKENIZER_INVALID');
      // The size check's message: refused from stat, before a byte is read.
      expect((err as Error).message).toMatch(new RegExp(`${name} at .* is ${MAX_TOKENIZER_FILE_BYTES + 1} bytes, above promptenc's limit`));
    });
  }
});

describe('malformed tokenizer.json: native and JS agree, with the oracle or on E_TOKENIZER_INVALID', () => {
  it('has the rows the issue asks for', () => {
    expect(ROWS.length).toBeGreaterThanOrEqual(60);
  });

  ROWS.forEach((row, i) => {
    const test = row.child && !distCurrent ? it.skip : it;
    test(row.name, async () => {
      const { file, texts } = writeRow(row, i);
      const want: Outcome | undefined = row.sparse || row.oraclePanics ? undefined : await oracle(file, texts);
      if (row.limit && want) expect('ids' in want, `the oracle loads this file (${row.limit})`).toBe(true);
      if (row.child) {
        // Bounded: each load must finish, refused, well before the bound (a hang took > 120 s).
        for (const backend of ['native', 'js']) {
          const r = childLoad(file, backend, row.child);
          expect({ backend, outcome: r.outcome }).toEqual({ backend, outcome: 'E_TOKENIZER_INVALID' });
          expect(r.ms, `${backend} took ${r.ms.toFixed(0)} ms`).toBeLessThan(row.child / 2);
        }
        return;
      }
      const js = await ours(file, 'js', texts);
      let nat = native ? await ours(file, 'native', texts) : await ours(file, 'auto', texts);
      if ('error' in nat && nat.error === 'E_NATIVE_UNSUPPORTED') nat = await ours(file, 'auto', texts);
      if (process.env.PROMPTENC_TABLE_DEBUG) {
        const short = (o: Outcome) => ('ids' in o ? `ids ${JSON.stringify(o.ids).slice(0, 60)}` : JSON.stringify(o).slice(0, 150));
        console.log(`ROW ${row.name}\n  oracle ${want ? short(want) : 'not asked'}\n  native ${short(nat)}\n  js     ${short(js)}`);
      }
      for (const [name, got] of [
        ['native', nat],
        ['js', js],
      ] as const) {
        expect('raw' in got ? got.raw : '', `${name} threw a raw error`).toBe('');
        if (row.limit || row.oraclePanics || want === undefined || 'error' in want) {
          expect({ backend: name, ...('error' in got ? { error: got.error } : { loaded: true }) }).toEqual({ backend: name, error: 'E_TOKENIZER_INVALID' });
        } else {
          expect({ backend: name, ids: 'ids' in got ? got.ids : got }).toEqual({ backend: name, ids: (want as { ids: number[][] }).ids });
        }
      }
    });
  });
});
