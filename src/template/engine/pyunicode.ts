import * as T from './pyunicode-tables.js';

/**
 * Python's str case operations (upper, lower, title, capitalize, swapcase, casefold, islower,
 * isupper, istitle) and character classes (isalpha, isdecimal, isdigit, isnumeric, isalnum,
 * isspace, isprintable, isidentifier) over Python's Unicode data (pyunicode-tables.ts, generated
 * from Python by scripts/gen-python-unicode.py), following CPython's unicodeobject.c: full
 * (multi-character) mappings, Final_Sigma in lower, titlecase for a word's first letter in title
 * and capitalize.
 * JavaScript's toUpperCase/toLowerCase follow Node's ICU, whose Unicode version is not Python's,
 * so they are used for ASCII only (where every version agrees).
 */

/** A mapping table: code point → single code point (runs), or → string (multi). */
class CaseMap {
  private readonly starts: Int32Array;
  constructor(
    private readonly runs: readonly number[],
    private readonly multi: Readonly<Record<number, string>>,
  ) {
    this.starts = new Int32Array(runs.length / 4);
    for (let i = 0; i < this.starts.length; i++) this.starts[i] = runs[i * 4]!;
  }
  map(cp: number): string | number {
    const m = this.multi[cp];
    if (m !== undefined) return m;
    const st = this.starts;
    let lo = 0;
    let hi = st.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (st[mid]! <= cp) lo = mid + 1;
      else hi = mid - 1;
    }
    if (hi < 0) return cp;
    const base = hi * 4;
    const start = this.runs[base]!;
    const count = this.runs[base + 1]!;
    const step = this.runs[base + 2]!;
    const off = cp - start;
    if (off % step !== 0 || off / step >= count) return cp;
    return cp + this.runs[base + 3]!;
  }
}

class CodeSet {
  constructor(private readonly r: readonly number[]) {}
  has(cp: number): boolean {
    const r = this.r;
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
}

const UPPER = new CaseMap(T.UPPER_RUNS, T.UPPER_MULTI);
const LOWER = new CaseMap(T.LOWER_RUNS, T.LOWER_MULTI);
const TITLE = new CaseMap(T.TITLE_RUNS, T.TITLE_MULTI);
const FOLD = new CaseMap(T.FOLD_RUNS, T.FOLD_MULTI);
const IS_LOWER = new CodeSet(T.LOWERCASE_RANGES);
const IS_UPPER = new CodeSet(T.UPPERCASE_RANGES);
const IS_TITLE = new CodeSet(T.TITLECASE_RANGES);
const CASED = new CodeSet(T.CASED_RANGES);
const IGNORABLE = new CodeSet(T.IGNORABLE_RANGES);
const CLASSES = {
  alpha: new CodeSet(T.ALPHA_RANGES),
  decimal: new CodeSet(T.DECIMAL_RANGES),
  digit: new CodeSet(T.DIGIT_RANGES),
  numeric: new CodeSet(T.NUMERIC_RANGES),
  space: new CodeSet(T.SPACE_RANGES),
  printable: new CodeSet(T.PRINTABLE_RANGES),
};
const XID_START = new CodeSet(T.XID_START_RANGES);
const XID_CONTINUE = new CodeSet(T.XID_CONTINUE_RANGES);

export type PyCharClass = keyof typeof CLASSES | 'alnum';

function inClass(k: PyCharClass, cp: number): boolean {
  if (k !== 'alnum') return CLASSES[k].has(cp);
  return CLASSES.alpha.has(cp) || CLASSES.decimal.has(cp) || CLASSES.digit.has(cp) || CLASSES.numeric.has(cp);
}

/** str.isalpha() and its kin: every character in the class, and (but isprintable) at least one. */
export function pyIsClass(s: string, k: PyCharClass): boolean {
  if (s === '') return k === 'printable';
  for (const ch of s) if (!inClass(k, ch.codePointAt(0)!)) return false;
  return true;
}

export function pyIsIdentifier(s: string): boolean {
  const c = cps(s);
  if (c.length === 0 || !XID_START.has(c[0]!)) return false;
  for (let i = 1; i < c.length; i++) if (!XID_CONTINUE.has(c[i]!)) return false;
  return true;
}

export const PY_UNICODE_VERSION = T.UNICODE_VERSION;

function put(out: string[], m: string | number): void {
  out.push(typeof m === 'string' ? m : String.fromCodePoint(m));
}

const ASCII = {
  test(s: string): boolean {
    for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
    return true;
  },
};

function cps(s: string): number[] {
  const out: number[] = [];
  for (const ch of s) out.push(ch.codePointAt(0)!);
  return out;
}

/** CPython's handle_capital_sigma: Σ is final after a cased letter (case-ignorables skipped) not followed by one. */
function sigma(c: number[], i: number): number {
  let j = i - 1;
  while (j >= 0 && IGNORABLE.has(c[j]!)) j--;
  let final = j >= 0 && CASED.has(c[j]!);
  if (final && i + 1 < c.length) {
    j = i + 1;
    while (j < c.length && IGNORABLE.has(c[j]!)) j++;
    final = j === c.length || !CASED.has(c[j]!);
  }
  return final ? 0x3c2 : 0x3c3;
}

function lowerAt(c: number[], i: number): string | number {
  return c[i] === 0x3a3 ? sigma(c, i) : LOWER.map(c[i]!);
}

export function pyUpper(s: string): string {
  if (ASCII.test(s)) return s.toUpperCase();
  const out: string[] = [];
  for (const cp of cps(s)) put(out, UPPER.map(cp));
  return out.join('');
}

export function pyLower(s: string): string {
  if (ASCII.test(s)) return s.toLowerCase();
  const c = cps(s);
  const out: string[] = [];
  for (let i = 0; i < c.length; i++) put(out, lowerAt(c, i));
  return out.join('');
}

export function pyCasefold(s: string): string {
  if (ASCII.test(s)) return s.toLowerCase();
  const out: string[] = [];
  for (const cp of cps(s)) put(out, FOLD.map(cp));
  return out.join('');
}

/** str.title(): titlecase after an uncased character, lower case after a cased one. */
export function pyTitle(s: string): string {
  const c = cps(s);
  const out: string[] = [];
  let prevCased = false;
  for (let i = 0; i < c.length; i++) {
    put(out, prevCased ? lowerAt(c, i) : TITLE.map(c[i]!));
    prevCased = CASED.has(c[i]!);
  }
  return out.join('');
}

/** str.capitalize() (Python 3.8+): the first character titlecased, the rest lower case. */
export function pyCapitalize(s: string): string {
  const c = cps(s);
  const out: string[] = [];
  for (let i = 0; i < c.length; i++) put(out, i === 0 ? TITLE.map(c[0]!) : lowerAt(c, i));
  return out.join('');
}

export function pySwapcase(s: string): string {
  const c = cps(s);
  const out: string[] = [];
  for (let i = 0; i < c.length; i++) {
    const cp = c[i]!;
    put(out, IS_UPPER.has(cp) ? lowerAt(c, i) : IS_LOWER.has(cp) ? UPPER.map(cp) : cp);
  }
  return out.join('');
}

export function pyIsLower(s: string): boolean {
  let cased = false;
  for (const cp of cps(s)) {
    if (IS_UPPER.has(cp) || IS_TITLE.has(cp)) return false;
    if (IS_LOWER.has(cp)) cased = true;
  }
  return cased;
}

export function pyIsUpper(s: string): boolean {
  let cased = false;
  for (const cp of cps(s)) {
    if (IS_LOWER.has(cp) || IS_TITLE.has(cp)) return false;
    if (IS_UPPER.has(cp)) cased = true;
  }
  return cased;
}

export function pyIsTitle(s: string): boolean {
  let cased = false;
  let prev = false;
  for (const cp of cps(s)) {
    if (IS_UPPER.has(cp) || IS_TITLE.has(cp)) {
      if (prev) return false;
      prev = true;
      cased = true;
    } else if (IS_LOWER.has(cp)) {
      if (!prev) return false;
      prev = true;
      cased = true;
    } else prev = false;
  }
  return cased;
}
