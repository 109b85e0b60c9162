/**
 * Python's str case operations in the template engine (src/template/engine/pyunicode.ts) against
 * Python itself: test/fixtures/python-unicode.json holds what Python answered for every code point
 * (c.upper(), c.lower(), c.title(), c.casefold(), and the case properties) and for strings where
 * neighbours matter (Final_Sigma, titlecase digraphs); scripts/gen-python-unicode.py made it, from
 * the same Python whose Unicode data the engine's tables come from.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  PY_UNICODE_VERSION,
  type PyCharClass,
  pyCapitalize,
  pyCasefold,
  pyIsClass,
  pyIsIdentifier,
  pyIsLower,
  pyIsTitle,
  pyIsUpper,
  pyLower,
  pySwapcase,
  pyTitle,
  pyUpper,
} from '../src/template/engine/pyunicode.js';

const doc = JSON.parse(readFileSync(new URL('./fixtures/python-unicode.json', import.meta.url), 'utf8')) as {
  unicode: string;
  maps: Record<'upper' | 'lower' | 'title' | 'fold', Record<string, string>>;
  sets: Record<
    | 'lowercase'
    | 'uppercase'
    | 'titlecase'
    | 'cased'
    | 'ignorable'
    | 'alpha'
    | 'decimal'
    | 'digit'
    | 'numeric'
    | 'space'
    | 'printable'
    | 'xid_start'
    | 'xid_continue',
    number[]
  >;
  strings: Array<[string, string, string, string, string, string, string, boolean, boolean, boolean]>;
};

function inRanges(r: number[], cp: number): boolean {
  let lo = 0;
  let hi = r.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (r[mid * 2]! > cp) hi = mid - 1;
    else if (r[mid * 2 + 1]! < cp) lo = mid + 1;
    else return true;
  }
  return false;
}

describe(`Python str case operations (Unicode ${doc.unicode})`, () => {
  it('uses the Unicode version of the fixture', () => {
    expect(PY_UNICODE_VERSION).toBe(doc.unicode);
  });

  it('maps every code point as Python does (upper, lower, title, casefold, swapcase, capitalize)', () => {
    const bad: string[] = [];
    for (let cp = 0; cp < 0x110000; cp++) {
      if (cp >= 0xd800 && cp < 0xe000) continue;
      const c = String.fromCodePoint(cp);
      const key = String(cp);
      const want = {
        upper: doc.maps.upper[key] ?? c,
        lower: doc.maps.lower[key] ?? c,
        title: doc.maps.title[key] ?? c,
        fold: doc.maps.fold[key] ?? c,
      };
      const got = { upper: pyUpper(c), lower: pyLower(c), title: pyTitle(c), fold: pyCasefold(c) };
      for (const k of ['upper', 'lower', 'title', 'fold'] as const) if (got[k] !== want[k]) bad.push(`U+${cp.toString(16)} ${k}: ${got[k]} != ${want[k]}`);
      // A single character: capitalize is title, swapcase follows the isupper/islower properties.
      if (pyCapitalize(c) !== want.title) bad.push(`U+${cp.toString(16)} capitalize`);
      const isU = inRanges(doc.sets.uppercase, cp);
      const isL = inRanges(doc.sets.lowercase, cp);
      const swap = isU ? want.lower : isL ? want.upper : c;
      if (pySwapcase(c) !== swap) bad.push(`U+${cp.toString(16)} swapcase`);
      if (pyIsLower(c) !== isL) bad.push(`U+${cp.toString(16)} islower`);
      if (pyIsUpper(c) !== isU) bad.push(`U+${cp.toString(16)} isupper`);
      if (pyIsTitle(c) !== (isU || inRanges(doc.sets.titlecase, cp))) bad.push(`U+${cp.toString(16)} istitle`);
      if (bad.length > 20) break;
    }
    expect(bad).toEqual([]);
  });

  it('reads cased and case-ignorable as Python does (title after a character, Final_Sigma around it)', () => {
    const bad: string[] = [];
    for (let cp = 0; cp < 0x110000; cp++) {
      if (cp >= 0xd800 && cp < 0xe000) continue;
      const c = String.fromCodePoint(cp);
      const cased = inRanges(doc.sets.cased, cp);
      const ignorable = inRanges(doc.sets.ignorable, cp);
      // title(): the letter after c is upper case exactly when c is not cased.
      const after = pyTitle(`${c}a`);
      if (after.endsWith('A') !== !cased) bad.push(`U+${cp.toString(16)} cased`);
      // lower(): Σ after a cased letter and c is final exactly when c is case-ignorable or not cased.
      const sigma = pyLower(`A\u03a3${c}`);
      if ((sigma[1] === '\u03c2') !== (ignorable || !cased)) bad.push(`U+${cp.toString(16)} ignorable after`);
      // ... and Σ after 'A' and c is final exactly when c is case-ignorable or cased.
      if (pyLower(`A${c}\u03a3`).endsWith('\u03c2') !== (ignorable || cased)) bad.push(`U+${cp.toString(16)} ignorable before`);
      if (bad.length > 20) break;
    }
    expect(bad).toEqual([]);
  });

  it('classifies every code point as Python does (isalpha, isdecimal, isdigit, isnumeric, isalnum, isspace, isprintable, isidentifier)', () => {
    const bad: string[] = [];
    const classes = ['alpha', 'decimal', 'digit', 'numeric', 'space', 'printable'] as const satisfies readonly PyCharClass[];
    for (let cp = 0; cp < 0x110000; cp++) {
      if (cp >= 0xd800 && cp < 0xe000) continue;
      const c = String.fromCodePoint(cp);
      for (const k of classes) if (pyIsClass(c, k) !== inRanges(doc.sets[k], cp)) bad.push(`U+${cp.toString(16)} is${k}`);
      const alnum = (['alpha', 'decimal', 'digit', 'numeric'] as const).some((k) => inRanges(doc.sets[k], cp));
      if (pyIsClass(c, 'alnum') !== alnum) bad.push(`U+${cp.toString(16)} isalnum`);
      if (pyIsIdentifier(c) !== inRanges(doc.sets.xid_start, cp)) bad.push(`U+${cp.toString(16)} isidentifier`);
      if (pyIsIdentifier(`a${c}`) !== inRanges(doc.sets.xid_continue, cp)) bad.push(`U+${cp.toString(16)} isidentifier (continue)`);
      if (bad.length > 20) break;
    }
    expect(bad).toEqual([]);
  });

  it.each(doc.strings)('%j', (s, upper, lower, title, capitalize, swapcase, casefold, islower, isupper, istitle) => {
    expect([pyUpper(s), pyLower(s), pyTitle(s), pyCapitalize(s), pySwapcase(s), pyCasefold(s), pyIsLower(s), pyIsUpper(s), pyIsTitle(s)]).toEqual([
      upper,
      lower,
      title,
      capitalize,
      swapcase,
      casefold,
      islower,
      isupper,
      istitle,
    ]);
  });
});
