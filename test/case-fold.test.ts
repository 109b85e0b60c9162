/**
 * Contractions under Oniguruma's case folding: `(?i:'s|'t|'re|'ve|'m|'ll|'d)` in the oracle also
 * matches code points that case-fold to those letters (U+017F LONG S folds to `s`), which
 * @huggingface/tokenizers' ASCII-only rewrite missed (src/backend/case-fold.ts).
 * The class is every code point whose simple case folding (V8's /iu, not the code under test)
 * is one of the letters, in either case; expected ids come from the oracle, on every bundled model.
 */
import { describe, expect, it } from 'vitest';
import { loadTokenizer, type PromptTokenizer } from '../src/index.js';
import { MODELS, oracleEncode } from './helpers/oracle.js';
import { nativeAddonStatus } from '../src/backend/native.js';

const CONTRACTIONS = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d"];
const LETTERS = [...new Set(CONTRACTIONS.join('').replace(/'/g, ''))];

/** Code point → the contraction letter it folds to, for every non-ASCII code point that folds to one. */
function foldingClass(): Map<string, string> {
  const out = new Map<string, string>();
  const tests = LETTERS.map((l) => [l, new RegExp(`^${l}$`, 'iu')] as const);
  for (let cp = 0x80; cp < 0x110000; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const c = String.fromCodePoint(cp);
    for (const [l, re] of tests) if (re.test(c)) out.set(c, l);
  }
  return out;
}

/** Every contraction with one occurrence of `letter` replaced by `c`. */
function variants(letter: string, c: string): string[] {
  const out: string[] = [];
  for (const k of CONTRACTIONS) for (let i = 1; i < k.length; i++) if (k[i] === letter) out.push(k.slice(0, i) + c + k.slice(i + 1));
  return out;
}
const CONTEXTS = (k: string) => ['\u0627' + k + "'dd", 'x' + k, 'X' + k + ' y', 'don' + k + 'ing', k, '1' + k, 'A' + k.toUpperCase(), ' ' + k + '\n'];

describe('contractions under Unicode case folding', () => {
  const fold = foldingClass();
  const cases: string[] = [];
  for (const [c, l] of fold) for (const v of variants(l, c)) cases.push(...CONTEXTS(v));
  // The letters themselves, in both cases, as controls.
  for (const l of LETTERS) for (const c of [l, l.toUpperCase()]) for (const v of variants(l, c)) cases.push(...CONTEXTS(v));

  it('the class of non-ASCII code points folding to a contraction letter is U+017F', () => {
    expect([...fold.entries()]).toEqual([['\u017f', 's']]);
  });

  const backends: Array<'js' | 'native'> = nativeAddonStatus().available ? ['js', 'native'] : ['js'];
  for (const model of MODELS) {
    for (const backend of backends) {
      it(`${model.name} (${backend}): every case equals the oracle`, async () => {
        let tok: PromptTokenizer;
        try {
          tok = await loadTokenizer(model.name, { backend });
        } catch (err) {
          if ((err as { code?: string }).code === 'E_NATIVE_UNSUPPORTED') return;
          throw err;
        }
        const bad: string[] = [];
        for (const text of cases) {
          const want = await oracleEncode(model.path, text, false);
          const got = Array.from(tok.encode(text, { addSpecialTokens: false }));
          if (got.join() !== want.join()) bad.push(`${JSON.stringify(text)}: ${got} oracle ${want}`);
        }
        expect(bad).toEqual([]);
      }, 60_000);
    }
  }

  it('GPT-4o on the JS backend: "\u0627\'\u017f\'dd" as reported', async () => {
    const tok = await loadTokenizer('gpt-4o', { backend: 'js' });
    const text = "\u0627'\u017f'dd";
    expect(await oracleEncode(MODELS.find((m) => m.name === 'gpt-4o')!.path, text, false)).toEqual([320, 6, 70067, 6, 1183]);
    expect(Array.from(tok.encode(text, { addSpecialTokens: false }))).toEqual([320, 6, 70067, 6, 1183]);
  });
});
