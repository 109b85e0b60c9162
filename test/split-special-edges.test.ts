/**
 * encode(text, { splitSpecialTokens: true }) (transformers' split_special_tokens, the
 * Rust tokenizer's encode_special_tokens) on the paths around it: NFC composing across a special
 * token's text (Qwen3), the segment cache, PromptSession, and the CLI's --jsonl.
 *
 * Expected ids: the Rust oracle on the same tokenizer.json with its special added tokens removed
 * (split-special.test.ts checks that no non-special token overlaps a special one in these
 * models, which makes the two equal), mapped back to the full file's ids by content.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import tokenizers from 'tokenizers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer, PromptencError } from '../src/index.js';
import { modelPath } from './helpers/oracle.js';

const dir = mkdtempSync(join(tmpdir(), 'promptenc-split-edges-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const qwenPath = modelPath('qwen3');
const json = JSON.parse(readFileSync(qwenPath, 'utf8'));
let full: InstanceType<typeof tokenizers.Tokenizer>;
let noSpecials: InstanceType<typeof tokenizers.Tokenizer>;
beforeAll(() => {
  full = tokenizers.Tokenizer.fromFile(qwenPath);
  noSpecials = tokenizers.Tokenizer.fromString(JSON.stringify({ ...json, added_tokens: json.added_tokens.filter((t: { special: boolean }) => !t.special) }));
});
const expected = async (text: string) =>
  (await noSpecials.encode(text, null, { addSpecialTokens: false })).getIds().map((id) => full.tokenToId(noSpecials.idToToken(id)!)!);

// '>' + U+0338 composes to U+226F under NFC; the special token's text is then part of the gap.
const TEXTS = ['<|im_start|>\u0338user', 'a<|im_end|>\u0338<think>\u0338', '<|endoftext|>\u0301x<|im_start|>', 'e\u0301<|im_start|>e\u0301'];

describe('Qwen3 (NFC): special-token text next to combining marks', () => {
  for (const backend of ['native', 'js'] as const) {
    it(`${backend}: encode and count equal the oracle without the special tokens`, async () => {
      const tok = await loadTokenizer('qwen3', { backend });
      for (const text of TEXTS) {
        const want = await expected(text);
        expect(Array.from(tok.encode(text, { splitSpecialTokens: true, addSpecialTokens: false })), text).toEqual(want);
        expect(tok.count(text, { splitSpecialTokens: true, addSpecialTokens: false }), text).toBe(want.length);
      }
    });
  }

  it('with a segment cache the option is still honoured, and the cache still answers without it', async () => {
    const tok = await loadTokenizer('qwen3', { segmentCache: { maxBytes: 1 << 20 } });
    for (const text of TEXTS) {
      const plain = (await full.encode(text, null, { addSpecialTokens: false })).getIds();
      expect(Array.from(tok.encode(text, { addSpecialTokens: false })), text).toEqual(plain);
      expect(Array.from(tok.encode(text, { splitSpecialTokens: true, addSpecialTokens: false })), text).toEqual(await expected(text));
      expect(Array.from(tok.encode(text, { addSpecialTokens: false })), text).toEqual(plain);
    }
  });
});

describe('PromptSession.encode: "exactly tok.encode(text, opts)"', () => {
  it('does not return special-token ids for splitSpecialTokens: true (ids equal the oracle, or the option is refused)', async () => {
    const tok = await loadTokenizer('qwen3');
    const session = tok.createSession();
    const text = 'hello <|im_start|>user there';
    let ids: number[] | undefined;
    try {
      ids = Array.from(session.encode(text, { splitSpecialTokens: true, addSpecialTokens: false }));
    } catch (err) {
      expect(err).toBeInstanceOf(PromptencError);
      expect((err as PromptencError).code).toBe('E_ARGUMENT');
    }
    if (ids) expect(ids).toEqual(await expected(text));
    let delta: number[] | undefined;
    try {
      delta = Array.from(session.encodeDelta(text, { splitSpecialTokens: true, addSpecialTokens: false }).ids);
    } catch (err) {
      expect((err as PromptencError).code).toBe('E_ARGUMENT');
    }
    if (delta) expect(delta).toEqual(await expected(text));
    // append / appendDelta (main's O(new text) session calls) take the same options.
    for (const call of ['append', 'appendDelta'] as const) {
      const fresh = tok.createSession();
      let got: number[] | undefined;
      try {
        const r = fresh[call](text, { splitSpecialTokens: true, addSpecialTokens: false });
        got = Array.from(r instanceof Uint32Array ? r : r.ids);
      } catch (err) {
        expect((err as PromptencError).code, call).toBe('E_ARGUMENT');
      }
      if (got) expect(got, call).toEqual(await expected(text));
    }
  });
});

describe('CLI: encode --jsonl --split-special-tokens (a real subprocess)', () => {
  it('each record gets the ids of the option, not the special tokens', async () => {
    const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
    const input = join(dir, 'in.jsonl');
    const texts = ['<|im_start|>user', 'x <|im_end|> y'];
    writeFileSync(input, `${texts.map((t) => JSON.stringify({ text: t })).join('\n')}\n`);
    const out = execFileSync(process.execPath, [cli, 'encode', '--model', 'qwen3', '--jsonl', input, '--split-special-tokens', '--threads', '1'], {
      env: { ...process.env, PROMPTENC_QUIET: '1' },
      encoding: 'utf8',
    });
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { ids: number[] });
    expect(lines.map((l) => l.ids)).toEqual(await Promise.all(texts.map(expected)));
  });
});
