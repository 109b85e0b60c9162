/**
 * encode(text, { splitSpecialTokens: true }): special-token text read as text, as transformers'
 * `split_special_tokens=True` (the Rust tokenizer's `encode_special_tokens`) does, on both backends.
 *
 * Expected values:
 * - the vector of `test_encode_special_tokens` in huggingface/tokenizers
 *   (tokenizers/src/tokenizer/added_vocabulary.rs), on a byte-level vocabulary where each byte is
 *   one id, so the ids are the cited split's segments byte by byte. The Rust test lowercases with
 *   a normalizer; here there is none, so the one capital ("Hi") keeps its case.
 * - the bundled models: the Rust oracle on the same tokenizer.json with its special added tokens
 *   removed. That equals encode_special_tokens when no non-special token can overlap a special
 *   one's text (a match skipped by the scan still consumes its span), which each model is checked for.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tokenizers from 'tokenizers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer, PromptencError, type PromptTokenizer } from '../src/index.js';
import { BYTE_CHARS } from './helpers/byte-level.js';
import { MODELS } from './helpers/oracle.js';

const BACKENDS = ['native', 'js'] as const;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function writeTokenizer(json: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'promptenc-split-special-'));
  dirs.push(dir);
  const path = join(dir, 'tokenizer.json');
  writeFileSync(path, JSON.stringify(json));
  return path;
}

describe('added_vocabulary.rs test_encode_special_tokens, through a one-id-per-byte vocabulary', () => {
  const chars = BYTE_CHARS;
  const vocab: Record<string, number> = {};
  chars.forEach((c, b) => {
    vocab[c] = b;
  });
  // As the Rust test adds them: <mask> special with lstrip, rstrip and single_word; ask> not special
  // (normalized, the default for non-special tokens); <pad> special.
  const added = [
    { id: 256, content: '<mask>', single_word: true, lstrip: true, rstrip: true, normalized: false, special: true },
    { id: 257, content: 'ask>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: false },
    { id: 258, content: '<pad>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
  ];
  const json = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
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
      vocab,
      merges: [],
    },
  };
  const text = 'Hi <mask> there\t<mask>\t<mask>\u2000 <pad> <mask><pad><pad>';
  const bytes = (s: string) => Array.from(new TextEncoder().encode(s));
  // The Rust test's expected split with encode_special_tokens = true (Some(vec![1]) is "ask>").
  const splitOn: Array<[string, number | null]> = [
    ['Hi <m', null],
    ['ask>', 257],
    [' there\t<m', null],
    ['ask>', 257],
    ['\t<m', null],
    ['ask>', 257],
    ['\u2000 <pad> <m', null],
    ['ask>', 257],
    ['<pad><pad>', null],
  ];
  // ... and with it false.
  const splitOff: Array<[string, number | null]> = [
    ['Hi', null],
    [' <mask> ', 256],
    ['there', null],
    ['\t<mask>\t', 256],
    ['<mask>\u2000 ', 256],
    ['<pad>', 258],
    [' <mask>', 256],
    ['<pad>', 258],
    ['<pad>', 258],
  ];
  const idsOf = (split: Array<[string, number | null]>) => split.flatMap(([s, id]) => (id === null ? bytes(s) : [id]));
  let path: string;
  beforeAll(() => {
    path = writeTokenizer(json);
  });

  for (const backend of BACKENDS) {
    it(`${backend}: special tokens are text, the non-special ask> still matches inside <mask>`, async () => {
      const tok = await loadTokenizer(path, { backend });
      expect(tok.backend).toBe(backend);
      expect(Array.from(tok.encode(text, { splitSpecialTokens: true }))).toEqual(idsOf(splitOn));
      expect(tok.count(text, { splitSpecialTokens: true })).toBe(idsOf(splitOn).length);
    });
    it(`${backend}: without the option the cited split with special tokens`, async () => {
      const tok = await loadTokenizer(path, { backend });
      expect(Array.from(tok.encode(text))).toEqual(idsOf(splitOff));
      expect(Array.from(tok.encode(text, { splitSpecialTokens: false }))).toEqual(idsOf(splitOff));
    });
  }
});

/** Whether any non-special token could overlap a special token's text in some input. */
function specialsOverlap(added: Array<{ content: string; special: boolean }>): string | undefined {
  const specials = added.filter((t) => t.special).map((t) => t.content);
  const others = added.filter((t) => !t.special).map((t) => t.content);
  for (const s of specials) {
    for (const n of others) {
      if (s.includes(n) || n.includes(s)) return `${n} / ${s}`;
      for (let k = 1; k < Math.min(s.length, n.length); k++) {
        if (s.endsWith(n.slice(0, k)) || n.endsWith(s.slice(0, k))) return `${n} / ${s}`;
      }
    }
  }
  return undefined;
}

describe('bundled models: equal to the oracle on the file without its special tokens', () => {
  for (const m of MODELS) {
    const json = JSON.parse(readFileSync(m.path, 'utf8'));
    const added: Array<{ content: string; special: boolean }> = json.added_tokens;
    const specials = added.filter((t) => t.special);
    const nonSpecial = added.filter((t) => !t.special);
    // Real prompt text: the model's own control tokens typed into content, a non-special one
    // (Qwen3's <think>, <tool_call>) where the model has one, and text around them.
    const texts = [
      `${specials[0]!.content}`,
      `user said: ${specials
        .slice(0, 3)
        .map((t) => t.content)
        .join(' and ')} then stopped`,
      `${specials.at(-1)!.content}${specials[0]!.content}x`,
      ...(nonSpecial.length > 0 ? [`${nonSpecial[0]!.content} plan ${specials[1]?.content ?? ''} ${nonSpecial.at(-1)!.content}`] : []),
      'no special text at all, 123 ünïcödé',
    ];
    let oracle: InstanceType<typeof tokenizers.Tokenizer>;
    let full: InstanceType<typeof tokenizers.Tokenizer>;
    const toks = new Map<string, PromptTokenizer>();
    beforeAll(async () => {
      oracle = tokenizers.Tokenizer.fromFile(writeTokenizer({ ...json, added_tokens: nonSpecial }));
      full = tokenizers.Tokenizer.fromFile(m.path);
      for (const backend of BACKENDS) toks.set(backend, await loadTokenizer(m.path, { backend }));
    });

    it(`${m.name}: no non-special added token can overlap a special one (the oracle's precondition)`, () => {
      expect(specialsOverlap(added)).toBeUndefined();
    });
    for (const backend of BACKENDS) {
      it(`${m.name} ${backend}: ${texts.length} texts`, async () => {
        const tok = toks.get(backend)!;
        for (const text of texts) {
          // Without the special entries the oracle numbers the remaining added tokens afresh
          // (file order after the vocabulary): map its ids back through their content.
          const expected = (await oracle.encode(text, null, { addSpecialTokens: false })).getIds().map((id) => full.tokenToId(oracle.idToToken(id)!)!);
          expect(Array.from(tok.encode(text, { splitSpecialTokens: true, addSpecialTokens: false })), text).toEqual(expected);
          expect(Array.from(await tok.encodeAsync(text, { splitSpecialTokens: true, addSpecialTokens: false })), text).toEqual(expected);
          expect((await tok.encodeBatch([text, text], { splitSpecialTokens: true, addSpecialTokens: false })).map((x) => Array.from(x))).toEqual([
            expected,
            expected,
          ]);
          // The special tokens the text names are not among the ids.
          const ids = new Set(expected);
          for (const t of specials) if (text.includes(t.content)) expect(ids.has(full.tokenToId(t.content)!)).toBe(false);
        }
      });
    }
  }
});

describe('argument checks', () => {
  it('a non-boolean splitSpecialTokens is E_ARGUMENT', async () => {
    const tok = await loadTokenizer(MODELS[1]!.path);
    let err: unknown;
    try {
      tok.encode('x', { splitSpecialTokens: 'yes' as unknown as boolean });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PromptencError);
    expect((err as PromptencError).code).toBe('E_ARGUMENT');
  });
});

describe('CLI: promptenc encode --split-special-tokens (a real subprocess)', () => {
  it('gives the library ids with the option, and the special token without it', async () => {
    const { execFile } = await import('node:child_process');
    const { fileURLToPath } = await import('node:url');
    const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
    const run = (args: string[]) =>
      new Promise<string>((resolve, reject) =>
        execFile(process.execPath, [cli, ...args], { env: { ...process.env, PROMPTENC_QUIET: '1' } }, (err, stdout) =>
          err ? reject(err) : resolve(stdout.trim()),
        ),
      );
    const text = '<|im_start|>user';
    const qwen = MODELS.find((m) => m.name === 'qwen3')!;
    const json = JSON.parse(readFileSync(qwen.path, 'utf8'));
    const full = tokenizers.Tokenizer.fromFile(qwen.path);
    const noSpecials = tokenizers.Tokenizer.fromString(
      JSON.stringify({ ...json, added_tokens: json.added_tokens.filter((t: { special: boolean }) => !t.special) }),
    );
    const expected = (await noSpecials.encode(text, null, { addSpecialTokens: false })).getIds().map((id) => full.tokenToId(noSpecials.idToToken(id)!)!);
    const split = await run(['encode', '--model', 'qwen3', '--text', text, '--format', 'ids', '--split-special-tokens']);
    expect(split.split(' ').map(Number)).toEqual(expected);
    const plain = await run(['encode', '--model', 'qwen3', '--text', text, '--format', 'ids']);
    expect(plain.split(' ').map(Number)).toEqual((await full.encode(text, null, { addSpecialTokens: false })).getIds());
  });
});
