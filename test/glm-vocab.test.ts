/**
 * GLM-4 with its real vocabulary (../shared/models/glm-4: tokenizer.model in tiktoken's rank
 * format + tokenizer_config.json of ChatGLM4Tokenizer), loaded from the directory on both
 * backends. Expected ids come only from:
 *   - llama.cpp's public GLM-4 vectors (test/fixtures/glm4-llamacpp-vectors.json, written by
 *     transformers' tokenizer.encode(text, add_special_tokens=False));
 *   - MindFormers' ChatGLM4Tokenizer docstring (mindspore-lab/mindformers, research glm4
 *     tokenization): tokenizer("晚上睡不着应该怎么办") = [151331, 151333, 101160, 120410, 99379, 103298];
 *   - tiktoken (npm, the Rust core that ChatGLM4Tokenizer runs) built from the same ranks with
 *     ChatGLM4Tokenizer's pat_str and the added tokens of tokenizer_config.json as specials:
 *     encode(text, "all") is what transformers' slow tokenizer gives (added tokens split out
 *     first, the gaps through tiktoken);
 *   - the Rust `tokenizers` package on the converted tokenizer.json (it must agree too);
 *   - Python Jinja2 (transformers' settings) for the chat template's text.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Tiktoken } from 'tiktoken/lite';
import tokenizers from 'tokenizers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativeAddonStatus } from '../src/backend/native.js';
import { loadTokenizer, type PromptTokenizer } from '../src/index.js';
import { readTokenizerFiles } from '../src/load.js';
import { HAVE_PYTHON_JINJA, pyRender } from './helpers/py-render.js';
import { sharedPath } from './helpers/shared-files.js';

const GLM_DIR = sharedPath('models/glm-4/tokenizer.model', 'GLM-4 real-vocabulary tests')
  ? path.dirname(sharedPath('models/glm-4/tokenizer.model', '')!)
  : undefined;

/** ChatGLM4Tokenizer's pat_str (THUDM glm-4-9b-chat tokenization_chatglm.py), typed from the source. */
const GLM4_PAT_STR = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const VECTORS: { cases: Array<{ text: string; ids: number[] }> } = JSON.parse(
  readFileSync(new URL('./fixtures/glm4-llamacpp-vectors.json', import.meta.url), 'utf8'),
);
const CORPUS: Array<{ name: string; text: string }> = JSON.parse(readFileSync(new URL('./fixtures/corpus/cases.json', import.meta.url), 'utf8'));

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random text over a pool that exercises every branch of the pattern (and its Unicode edges). */
export function randomTexts(seed: number, count: number, maxLen: number): string[] {
  const pool = [
    ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789',
    ...'     \t\n\n\r',
    ...'\'"!?.,;:-_=+*/\\()[]{}<>@#$%^&|~`',
    "'s",
    "'S",
    "'ll",
    "'ſ",
    "'\u212a",
    '\u00a0',
    '\u3000',
    '\u0085',
    '\u2028',
    '\u200b',
    ...'的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年',
    ...'ありがとうカタカナ한국어',
    'é',
    'e\u0301',
    'ß',
    'İ',
    'ـ',
    'ع',
    '١٢٣',
    '½',
    '²',
    '🦙',
    '😁',
    '👍🏽',
    '\u{1f3f3}\u{fe0f}\u200d\u{1f308}',
    '\u{20000}',
  ];
  const rnd = mulberry32(seed);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = 1 + Math.floor(rnd() * maxLen);
    let s = '';
    for (let k = 0; k < n; k++) s += pool[Math.floor(rnd() * pool.length)];
    out.push(s);
  }
  return out;
}

/** Repetitive input: where tiktoken's leftmost tie rule and HF's merge order could part. */
function repetitiveTexts(): string[] {
  const out: string[] = [];
  for (const unit of ['a', 'aa', 'ab', 'aab', ' ', '=', '-', '_', '0', '00', '!', '.', 'ـ', '好', '\n', ' \n', '\t', '#', '*', 'ха', 'の', '🦙']) {
    for (const n of [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 16, 17, 31, 32, 33, 64, 100, 257, 1000]) out.push(unit.repeat(n));
  }
  return out;
}

describe.skipIf(!GLM_DIR)('GLM-4 real vocabulary (../shared/models/glm-4)', () => {
  const dir = GLM_DIR!;
  const backends: Array<'js' | 'native'> = nativeAddonStatus().available ? ['native', 'js'] : ['js'];
  const toks = new Map<string, PromptTokenizer>();
  let oracle: Tiktoken;
  let specials: Record<string, number>;
  let tmp: string;
  let rust: InstanceType<typeof tokenizers.Tokenizer>;

  beforeAll(async () => {
    const cfg = JSON.parse(readFileSync(path.join(dir, 'tokenizer_config.json'), 'utf8')) as { added_tokens_decoder: Record<string, { content: string }> };
    specials = Object.fromEntries(Object.entries(cfg.added_tokens_decoder).map(([id, t]) => [t.content, Number(id)]));
    oracle = new Tiktoken(readFileSync(path.join(dir, 'tokenizer.model'), 'utf8'), specials, GLM4_PAT_STR);
    for (const b of backends) toks.set(b, await loadTokenizer(dir, { backend: b }));
    // The converted tokenizer.json, for the Rust oracle.
    tmp = mkdtempSync(path.join(os.tmpdir(), 'promptenc-glm4-'));
    const files = await readTokenizerFiles(dir);
    writeFileSync(path.join(tmp, 'tokenizer.json'), JSON.stringify(files.tokenizerJson));
    rust = tokenizers.Tokenizer.fromFile(path.join(tmp, 'tokenizer.json'));
  }, 120_000);

  afterAll(() => {
    oracle?.free();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  const oracleIds = (text: string): number[] => Array.from(oracle.encode(text, 'all'));

  it('loads the directory on each backend, with the rank file as its tokenizer', () => {
    for (const [b, tok] of toks) {
      expect(tok.backend).toBe(b);
      expect(path.basename(tok.tokenizerPath)).toBe('tokenizer.model');
      expect(tok.addedTokens.size).toBe(Object.keys(specials).length);
    }
  });

  it("reproduces llama.cpp's 46 GLM-4 vectors, and so does the tiktoken oracle", () => {
    expect(VECTORS.cases).toHaveLength(46);
    for (const c of VECTORS.cases) expect(Array.from(oracle.encode_ordinary(c.text)), JSON.stringify(c.text)).toEqual(c.ids);
    for (const [b, tok] of toks) {
      for (const c of VECTORS.cases) expect(Array.from(tok.encode(c.text, { addSpecialTokens: false })), `${b} ${JSON.stringify(c.text)}`).toEqual(c.ids);
    }
  });

  it("tokenizer(text) puts ChatGLM4Tokenizer's prefix [gMASK]<sop> first (MindFormers' docstring vector)", () => {
    for (const tok of toks.values()) {
      expect(Array.from(tok.encode('晚上睡不着应该怎么办'))).toEqual([151331, 151333, 101160, 120410, 99379, 103298]);
      expect(Array.from(tok.encode('晚上睡不着应该怎么办', { addSpecialTokens: false }))).toEqual([101160, 120410, 99379, 103298]);
    }
  });

  it('every added token of tokenizer_config.json is one id, inside text too', () => {
    for (const tok of toks.values()) {
      for (const [content, id] of Object.entries(specials)) {
        expect(Array.from(tok.encode(content, { addSpecialTokens: false })), content).toEqual([id]);
        const text = `x${content}y ${content}\n`;
        expect(Array.from(tok.encode(text, { addSpecialTokens: false })), content).toEqual(oracleIds(text));
      }
    }
  });

  it('equals tiktoken and the Rust tokenizers oracle on the corpus (281 cases)', async () => {
    for (const c of CORPUS) {
      const want = oracleIds(c.text);
      expect((await rust.encode(c.text, null, { addSpecialTokens: false })).getIds(), `rust ${c.name}`).toEqual(want);
      for (const [b, tok] of toks) expect(Array.from(tok.encode(c.text, { addSpecialTokens: false })), `${b} ${c.name}`).toEqual(want);
    }
  }, 120_000);

  it('equals tiktoken on 400 random texts and on repetitive input', () => {
    const texts = [...randomTexts(16, 400, 120), ...repetitiveTexts()];
    for (const text of texts) {
      const want = oracleIds(text);
      for (const [b, tok] of toks) expect(Array.from(tok.encode(text, { addSpecialTokens: false })), `${b} ${JSON.stringify(text.slice(0, 60))}`).toEqual(want);
    }
  }, 120_000);

  it('decode(encode(x)) is x, and decode equals tiktoken decode', () => {
    const dec = new TextDecoder();
    for (const text of [...VECTORS.cases.map((c) => c.text), ...randomTexts(17, 100, 80)]) {
      const want = oracle.encode_ordinary(text);
      for (const tok of toks.values()) {
        const ids = tok.encode(text, { addSpecialTokens: false });
        expect(tok.decode(ids)).toBe(text);
        expect(tok.decode(ids)).toBe(dec.decode(oracle.decode(want)));
      }
    }
  });

  it.skipIf(!HAVE_PYTHON_JINJA)("apply_chat_template with GLM-4's own template: Jinja2's text, tiktoken's ids", () => {
    const cfg = JSON.parse(readFileSync(path.join(dir, 'tokenizer_config.json'), 'utf8')) as { chat_template: string };
    const messages = [
      { role: 'system', content: '你是一个乐于助人的助手。' },
      { role: 'user', content: "What's 2+2? 用中文回答。" },
      { role: 'assistant', content: '2+2 等于 4。' },
      { role: 'user', content: 'And   3*3 ?\n\n  thanks' },
    ];
    const want = pyRender({
      template: cfg.chat_template,
      messages,
      add_generation_prompt: true,
      special_tokens: { eos_token: '<|endoftext|>', pad_token: '<|endoftext|>' },
    });
    expect(want.startsWith('[gMASK]<sop><|system|>\n')).toBe(true);
    for (const tok of toks.values()) {
      expect(tok.renderChat(messages)).toBe(want);
      // apply_chat_template(tokenize=True) encodes with add_special_tokens=False: no second prefix.
      expect(Array.from(tok.encodeChat(messages))).toEqual(oracleIds(want));
      expect(Array.from(tok.encodeChat(messages)).slice(0, 3)).toEqual([151331, 151333, 151335]);
    }
  });
});
