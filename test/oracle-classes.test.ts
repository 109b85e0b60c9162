/**
 * The JS backend's pre-tokenizer classes are the oracle's (src/backend/oracle-classes.ts): for
 * every code point, each class that withOracleClasses spells out matches exactly where the
 * oracle's Oniguruma matches (probed live, as scripts/gen-oracle-classes.mjs probes it), and
 * the rewriting leaves what it cannot express as it was.
 */
import tokenizers from 'tokenizers';
import { describe, expect, it } from 'vitest';
import { withOracleClasses } from '../src/backend/oracle-classes.js';

// Every code point of planes 0-3 and 14 (where every assigned one is, in any Unicode version
// so far), plus samples of the unassigned and private-use planes between and after them.
const all: number[] = [];
for (let cp = 0; cp < 0x40000; cp++) if (cp < 0xd800 || cp > 0xdfff) all.push(cp);
for (let cp = 0xe0000; cp < 0xe1000; cp++) all.push(cp);
for (let cp = 0x40000; cp < 0x110000; cp += 0x101) if (cp < 0xe0000 || cp >= 0xe1000) all.push(cp);

function oracleSet(regex: string): Set<number> {
  const json = {
    version: '1.0',
    added_tokens: [],
    pre_tokenizer: { type: 'Split', pattern: { Regex: regex }, behavior: 'Removed', invert: true },
    model: { type: 'BPE', vocab: { a: 0 }, merges: [] },
  };
  const pre = tokenizers.Tokenizer.fromString(JSON.stringify(json)).getPreTokenizer()!;
  const set = new Set<number>();
  for (let i = 0; i < all.length; i += 20000) {
    for (const [piece] of pre.preTokenizeString(String.fromCodePoint(...all.slice(i, i + 20000)))) for (const ch of piece) set.add(ch.codePointAt(0)!);
  }
  return set;
}

/** As @huggingface/tokenizers compiles it: Oniguruma's \x{..} is \u{..} in a `u` regex. */
const compile = (regex: string) => new RegExp(`^(?:${regex.replace(/\\x\{/g, '\\u{')})$`, 'u');

describe('oracle classes for the JS backend', () => {
  for (const cls of ['\\p{L}', '\\p{Lu}', '\\p{Ll}', '\\p{Lt}', '\\p{Lm}', '\\p{Lo}', '\\p{M}', '\\p{N}', '\\p{P}', '\\p{S}', '\\s']) {
    it(`${cls} and its negation match as the oracle's, code point by code point`, () => {
      const want = oracleSet(cls);
      const re = compile(withOracleClasses(cls));
      const inClass = compile(withOracleClasses(`[${cls}]`));
      const negated = compile(withOracleClasses(cls === '\\s' ? '\\S' : cls.replace('\\p', '\\P')));
      const bad: string[] = [];
      for (const cp of all) {
        const c = String.fromCodePoint(cp);
        const w = want.has(cp);
        if (re.test(c) !== w || inClass.test(c) !== w || negated.test(c) === w) bad.push(`U+${cp.toString(16)}`);
      }
      expect(bad.slice(0, 10)).toEqual([]);
    });
  }

  it('rewrites inside and outside brackets, and leaves escapes and inexpressible classes alone', () => {
    const r = withOracleClasses('[^\\r\\n\\p{L}]\\s+(?!\\S)\\\\p{L}[\\P{L}]\\p{Greek}');
    expect(r.startsWith('[^\\r\\n\\x{41}-\\x{5a}')).toBe(true);
    expect(r).toContain('\\\\p{L}'); // an escaped backslash, then the text p{L}
    expect(r).toContain('[\\P{L}]'); // a negated class inside brackets stays V8's
    expect(r.endsWith('\\p{Greek}')).toBe(true); // a class the table lacks stays
  });
});
