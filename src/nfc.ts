/**
 * NFC exactly as the tokenizers oracle computes it, for the JS backend and for added-token
 * patterns: the same algorithm and data as native/core/normalize.cc (Unicode 9.0.0, read from
 * the oracle by scripts/gen-nfc-tables.mjs). String.prototype.normalize is Node's ICU, a newer
 * Unicode that composes pairs the oracle leaves apart (U+105D2 U+0307), so it is never used.
 */
import { CLASS_MASK, COMPOSITIONS, DECOMPOSES, DECOMPOSITIONS, MAYBE, NO, PROP_RUNS, QUICK_CHECK_START } from './nfc-tables.js';

interface Tables {
  props: Map<number, number>;
  decompositions: Map<number, number[]>;
  compositions: Map<number, number>;
}
let tables: Tables | undefined;

/** Decoded on first use: ~3,000 props, 2,060 decompositions, 940 compositions. */
function getTables(): Tables {
  if (tables) return tables;
  const props = new Map<number, number>();
  for (let i = 0; i < PROP_RUNS.length; i += 3) {
    for (let cp = PROP_RUNS[i]!, end = cp + PROP_RUNS[i + 1]!; cp < end; cp++) props.set(cp, PROP_RUNS[i + 2]!);
  }
  const decompositions = new Map<number, number[]>();
  for (let i = 0; i < DECOMPOSITIONS.length; ) {
    const n = DECOMPOSITIONS[i + 1]!;
    decompositions.set(DECOMPOSITIONS[i]!, DECOMPOSITIONS.slice(i + 2, i + 2 + n));
    i += 2 + n;
  }
  const compositions = new Map<number, number>();
  for (let i = 0; i < COMPOSITIONS.length; i += 3) compositions.set(COMPOSITIONS[i]! * 0x200000 + COMPOSITIONS[i + 1]!, COMPOSITIONS[i + 2]!);
  return (tables = { props, decompositions, compositions });
}

// Conjoining jamo (The Unicode Standard 9.0, 3.12).
const S_BASE = 0xac00,
  L_BASE = 0x1100,
  V_BASE = 0x1161,
  T_BASE = 0x11a7;
const L_COUNT = 19,
  V_COUNT = 21,
  T_COUNT = 28,
  N_COUNT = V_COUNT * T_COUNT,
  S_COUNT = L_COUNT * N_COUNT;

/** Any UTF-16 unit at or above QUICK_CHECK_START: text without one is NFC. */
const MAY_CHANGE = new RegExp(`[\\u${QUICK_CHECK_START.toString(16).padStart(4, '0')}-\\uffff]`);

const propsOf = (t: Tables, cp: number): number => (cp < QUICK_CHECK_START ? 0 : (t.props.get(cp) ?? 0));
// A stable starter: class 0, quick check Yes; NFC never moves anything across the boundary before it.
const isStable = (p: number): boolean => (p & (CLASS_MASK | MAYBE | NO)) === 0;

function composePair(t: Tables, a: number, b: number): number | undefined {
  if (a - L_BASE >= 0 && a - L_BASE < L_COUNT && b - V_BASE >= 0 && b - V_BASE < V_COUNT) {
    return S_BASE + ((a - L_BASE) * V_COUNT + (b - V_BASE)) * T_COUNT;
  }
  if (a - S_BASE >= 0 && a - S_BASE < S_COUNT && (a - S_BASE) % T_COUNT === 0 && b > T_BASE && b < T_BASE + T_COUNT) {
    return a + (b - T_BASE);
  }
  return t.compositions.get(a * 0x200000 + b);
}

/** Decomposes, orders and recomposes text[from, to) (UAX #15, as the crate's Recompositions). */
function normalizeRegion(t: Tables, text: string, from: number, to: number): string {
  const cps: number[] = [];
  const cls: number[] = [];
  const push = (cp: number): void => {
    const c = propsOf(t, cp) & CLASS_MASK;
    let k = cps.length;
    cps.push(cp);
    cls.push(c);
    if (c === 0) return;
    // Canonical ordering: move back past non-starters of a higher class (stable).
    while (k > 0 && cls[k - 1]! > c) {
      cps[k] = cps[k - 1]!;
      cls[k] = cls[k - 1]!;
      k--;
    }
    cps[k] = cp;
    cls[k] = c;
  };
  for (let i = from; i < to; ) {
    const cp = text.codePointAt(i)!;
    i += cp > 0xffff ? 2 : 1;
    if (cp - S_BASE >= 0 && cp - S_BASE < S_COUNT) {
      const si = cp - S_BASE;
      push(L_BASE + Math.floor(si / N_COUNT));
      push(V_BASE + Math.floor((si % N_COUNT) / T_COUNT));
      if (si % T_COUNT) push(T_BASE + (si % T_COUNT));
      continue;
    }
    // The full lookup: a character below QUICK_CHECK_START can still decompose (U+013E is
    // l + U+030C, and U+0323 after it must reorder into it: found by npm run fuzz on Qwen3).
    const d = (t.props.get(cp) ?? 0) & DECOMPOSES ? t.decompositions.get(cp) : undefined;
    if (d) for (const x of d) push(x);
    else push(cp);
  }
  let starter = -1;
  let lastClass = -1;
  let w = 0;
  for (let r = 0; r < cps.length; r++) {
    const c = cls[r]!;
    if (starter >= 0 && (lastClass < 0 || lastClass < c)) {
      const composed = composePair(t, cps[starter]!, cps[r]!);
      if (composed !== undefined) {
        cps[starter] = composed;
        continue;
      }
    }
    if (c === 0) {
      starter = w;
      lastClass = -1;
    } else if (starter >= 0) {
      lastClass = c;
    }
    cps[w] = cps[r]!;
    cls[w] = c;
    w++;
  }
  let out = '';
  for (let k = 0; k < w; k++) out += String.fromCodePoint(cps[k]!);
  return out;
}

/** The oracle's NFC of `text` (lone surrogates are left as they are). */
export function nfc(text: string): string {
  if (!MAY_CHANGE.test(text)) return text;
  const t = getTables();
  let out = '';
  let at = 0;
  let i = 0;
  let lastClass = 0;
  let lastStable = 0;
  while (i < text.length) {
    const cp = text.codePointAt(i)!;
    const len = cp > 0xffff ? 2 : 1;
    const p = propsOf(t, cp);
    const c = p & CLASS_MASK;
    if (!(p & (MAYBE | NO)) && !(c !== 0 && lastClass > c)) {
      if (isStable(p)) lastStable = i;
      lastClass = c;
      i += len;
      continue;
    }
    // Fails the quick check: normalize from the last stable starter to the next one.
    let end = i + len;
    while (end < text.length) {
      const q = text.codePointAt(end)!;
      if (isStable(propsOf(t, q))) break;
      end += q > 0xffff ? 2 : 1;
    }
    out += text.slice(at, lastStable) + normalizeRegion(t, text, lastStable, end);
    at = lastStable = i = end;
    lastClass = 0;
  }
  return at === 0 ? text : out + text.slice(at);
}

/** Whether a tokenizer.json normalizer is NFC alone (so nfc() reproduces it). */
export function isNfcNormalizer(normalizer: unknown): boolean {
  const n = normalizer as { type?: unknown; normalizers?: unknown } | null | undefined;
  if (n === null || typeof n !== 'object') return false;
  if (n.type === 'NFC') return true;
  return n.type === 'Sequence' && Array.isArray(n.normalizers) && n.normalizers.length === 1 && isNfcNormalizer(n.normalizers[0]);
}
