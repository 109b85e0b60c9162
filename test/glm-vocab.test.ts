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
 *   - chatglm.cpp's GLM-4 tests (li-plus/chatglm.cpp chatglm_test.cpp at 61f6e880, `Pipeline,
 *     ChatGLM4`): encode_ordinary of two texts, encode("你好"), and apply_chat_template of two
 *     conversations (copied below as CHATGLM_CPP);
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
import { buildCorpus } from 'promptenc/bench';
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

/** chatglm.cpp chatglm_test.cpp (li-plus/chatglm.cpp at 61f6e880), TEST(Pipeline, ChatGLM4), copied verbatim. */
const CHATGLM_CPP = {
  code: {
    text: "\n```c++\n#include <iostream>\n\nint main() {\n    printf(\"hello world\\n\");    // say hello\n}\n```\n\n```python\nif __name__ == '__main__':\n    print('hello world')        # say hello\n```\n",
    ids: [
      198, 73022, 66, 22879, 1067, 366, 9661, 1339, 396, 1887, 368, 341, 262, 4100, 445, 14978, 1879, 1699, 5038, 262, 442, 1977, 23745, 198, 532, 13865, 19288,
      73022, 12663, 198, 333, 1304, 606, 563, 621, 12106, 3817, 16165, 262, 1173, 492, 14978, 1879, 863, 286, 671, 1977, 23745, 198, 13865, 3989,
    ],
  },
  hello: { text: '你好', ids: [151331, 151333, 109377] },
  chats: [
    { messages: [{ role: 'user', content: '你好' }], ids: [151331, 151333, 151336, 198, 109377, 151337] },
    {
      messages: [
        { role: 'user', content: '你好' },
        { role: 'assistant', content: '你好👋！很高兴见到你，有什么可以帮助你的吗？' },
        { role: 'user', content: '晚上睡不着应该怎么办' },
      ],
      ids: [
        151331, 151333, 151336, 198, 109377, 151337, 198, 109377, 9281, 239, 233, 6313, 118295, 103810, 98406, 3837, 101665, 110368, 99444, 99212, 11314,
        151336, 198, 101160, 120410, 99379, 103298, 151337,
      ],
    },
  ],
};

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

  it("reproduces chatglm.cpp's GLM-4 vectors (encode, and apply_chat_template with the model's own template)", () => {
    for (const tok of toks.values()) {
      expect(Array.from(tok.encode(CHATGLM_CPP.code.text, { addSpecialTokens: false }))).toEqual(CHATGLM_CPP.code.ids);
      expect(Array.from(tok.encode(CHATGLM_CPP.hello.text))).toEqual(CHATGLM_CPP.hello.ids);
      for (const c of CHATGLM_CPP.chats) expect(Array.from(tok.encodeChat(c.messages, { addGenerationPrompt: true }))).toEqual(c.ids);
    }
  });

  it('sessions and accounting work on the rank-file model (incremental == full encode)', () => {
    const messages = [
      { role: 'system', content: 'Answer briefly.' },
      { role: 'user', content: '你好, world: 12345 !!' },
      { role: 'assistant', content: 'Hi there.\n\n  Indented text' },
      { role: 'user', content: 'And 3*3?' },
    ];
    for (const [b, tok] of toks) {
      const session = tok.createSession();
      for (let i = 1; i <= messages.length; i++) {
        const part = messages.slice(0, i);
        expect(Array.from(session.encodeChat(part)), `${b} ${i}`).toEqual(oracleIds(tok.renderChat(part)));
      }
      expect(tok.countChatByMessage(messages).total).toBe(oracleIds(tok.renderChat(messages)).length);
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

  it("splitSpecialTokens reads added-token text as text: tiktoken's encode_ordinary", () => {
    for (const tok of toks.values()) {
      for (const text of ['[gMASK]<sop><|user|>\nhi<|assistant|>', 'x<|endoftext|>y', ...Object.keys(specials)]) {
        expect(Array.from(tok.encode(text, { addSpecialTokens: false, splitSpecialTokens: true })), text).toEqual(Array.from(oracle.encode_ordinary(text)));
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

  // The project's benchmark corpus (bench/lib/corpus.ts: prose and code from node_modules,
  // generated CJK and emoji text, chats rendered with GLM-4's template): 512 KiB here, the
  // full 5 MiB with PROMPTENC_GLM_SOAK=1.
  it('equals tiktoken on the seeded benchmark corpus', () => {
    const corpus = buildCorpus({ sizeBytes: process.env.PROMPTENC_GLM_SOAK ? 5 * 1024 * 1024 : 512 * 1024, tokenizer: toks.values().next().value });
    expect(corpus.documents.length).toBeGreaterThan(10);
    for (const d of corpus.documents) {
      const want = oracleIds(d.text);
      for (const [b, tok] of toks) {
        const got = tok.encode(d.text, { addSpecialTokens: false });
        if (got.length !== want.length || got.some((x, i) => x !== want[i]))
          expect(Array.from(got), `${b} ${d.kind} ${JSON.stringify(d.text.slice(0, 60))}`).toEqual(want);
      }
    }
  }, 300_000);

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
