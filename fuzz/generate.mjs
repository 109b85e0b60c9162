/**
 * Structure-aware text generation for differential fuzzing (fuzz/run.mjs, test/fuzz-burst).
 * A case is a few fragments joined, each drawn by weight from one of the generators below:
 * what pre-tokenizer regexes, NFC and the added-token splitter branch on. Deterministic for
 * a seed (mulberry32), so a burst in the tests is the same every run.
 */

/** mulberry32: a small seeded PRNG; returns floats in [0, 1). */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const cp = (n) => String.fromCodePoint(n);
const range = (a, b) => ({ a, b });

/** Code point ranges by what they exercise. */
const RANGES = {
  latin: [range(0x41, 0x5a), range(0x61, 0x7a), range(0xc0, 0x24f), range(0x1e00, 0x1eff)],
  scripts: [
    range(0x370, 0x3ff), // Greek
    range(0x400, 0x4ff), // Cyrillic
    range(0x530, 0x58f), // Armenian
    range(0x590, 0x5ff), // Hebrew
    range(0x600, 0x6ff), // Arabic
    range(0x900, 0x97f), // Devanagari
    range(0x980, 0x9ff), // Bengali
    range(0xe00, 0xe7f), // Thai
    range(0x10a0, 0x10ff), // Georgian
    range(0x1100, 0x11ff), // Hangul Jamo
    range(0x3040, 0x30ff), // Hiragana, Katakana
    range(0x4e00, 0x9fff), // CJK
    range(0xac00, 0xd7a3), // Hangul syllables
    range(0x20000, 0x2a6df), // CJK Ext B
    range(0x1d400, 0x1d7ff), // Math alphanumerics
  ],
  marks: [range(0x300, 0x36f), range(0x483, 0x489), range(0x591, 0x5bd), range(0x64b, 0x65f), range(0x93c, 0x94d), range(0x1ab0, 0x1aff), range(0x20d0, 0x20ff), range(0xfe20, 0xfe2f)],
  numbers: [range(0x30, 0x39), range(0x660, 0x669), range(0x6f0, 0x6f9), range(0x966, 0x96f), range(0xff10, 0xff19), range(0x2070, 0x2079), range(0x2150, 0x218b), range(0x2460, 0x249b), range(0x1d7ce, 0x1d7ff)],
  punct: [range(0x21, 0x2f), range(0x3a, 0x40), range(0x5b, 0x60), range(0x7b, 0x7e), range(0xa1, 0xbf), range(0x2010, 0x2027), range(0x3000, 0x303f), range(0xff01, 0xff0f)],
  symbols: [range(0x2190, 0x23ff), range(0x2500, 0x27bf), range(0x1f300, 0x1faff), range(0x1f600, 0x1f64f)],
  controls: [range(0x0, 0x8), range(0xe, 0x1f), range(0x7f, 0x9f), range(0x200b, 0x200f), range(0x2060, 0x206f), range(0xfff9, 0xfffb)],
  // Assigned after Unicode 9.0 (the oracle's NFC data) or after its regex engine's tables:
  // Node's ICU knows them, the oracle may not.
  gap: [
    range(0x860, 0x86a), // Syriac Supplement (10)
    range(0x870, 0x89f), // Arabic Extended-B (14)
    range(0x8a0, 0x8ff), // Arabic Extended-A additions
    range(0x10d00, 0x10d3f), // Hanifi Rohingya (11)
    range(0x10d40, 0x10d8f), // Garay (16)
    range(0x10f30, 0x10f6f), // Sogdian (11)
    range(0x105c0, 0x105ff), // Todhri (16)
    range(0x11380, 0x113ff), // Tulu-Tigalari (16)
    range(0x11f00, 0x11f5f), // Kawi (15)
    range(0x16d40, 0x16d7f), // Kirat Rai (16)
    range(0x16100, 0x1613f), // Gurung Khema (16)
    range(0x1e290, 0x1e2bf), // Toto (14)
    range(0x1e4d0, 0x1e4ff), // Nag Mundari (15)
    range(0x1e5d0, 0x1e5ff), // Ol Onal (16)
    range(0x1fa70, 0x1faff), // Symbols and Pictographs Extended-A (12+)
    range(0x31350, 0x323af), // CJK Ext H (15)
    range(0x2ebf0, 0x2ee5f), // CJK Ext I (15.1)
  ],
};

const WHITESPACE = ['\t', '\n', '\v', '\f', '\r', ' ', '\u0085', '\u00a0', '\u1680', '\u2000', '\u2003', '\u2009', '\u200a', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff', '\u200b', '\r\n', '  ', '\n\n'];
const CONTRACTIONS = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'Ve", "'LL", "'D", "'ſ", "'ﬆ", '’s', "'K", "'\u212a", "'İ", "'ı", "'ß", "'ǅ"];
/** NFC edge cases: decomposed, reordered marks, singletons, Hangul jamo, composition exclusions. */
const NFC_CASES = [
  'e\u0301',
  'a\u0323\u0301',
  'a\u0301\u0323',
  'o\u0308\u0304',
  '\u1100\u1161\u11a8',
  '\u1100\u1161',
  '\u212b',
  '\u2126',
  '\u0344',
  '\u0958',
  '\u0f73',
  'A\u030a\u0301',
  '\u00c5\u0301',
  'i\u0307',
  '\u0915\u093c',
  '\u05d0\u05b7',
  '\u1e9b\u0323',
  'q\u0307\u0323',
  '\u0041\u0338',
  '\u3099\u304b',
  '\u304b\u3099',
  '\u{105d2}\u0307',
  '\u{105da}\u0307',
  '\u{11382}\u{113c9}',
  '\u{16d67}\u{16d67}',
  '\u{1611e}\u{1611e}',
  '\u0627\u0653',
  '\u0cc6\u0cc2\u0cd5',
  '\u0dd9\u0dcf\u0dca',
];
const WORDS = ['the', 'Hello', 'world', 'naïve', 'café', 'function', 'return', 'const', 'HTTP', 'iPhone', 'o3-mini', 'résumé', '中文', 'данные', 'مرحبا', 'नमस्ते', 'ไทย', '한국어', 'カタカナ', 'x', 'I', 'a_b', 'fooBar'];
const CODE = ['if (x) {\n  return y;\n}', 'def f(a, b):\n    pass', '<div class="x">', '{"k": [1, 2.5e-3]}', 'a->b::c', '// TODO: fix', '#include <x.h>', '$ ls -la | grep .js', 'SELECT * FROM t;', '\t\tfoo();\n'];

export class CaseGenerator {
  /** @param {number} seed @param {string[]} addedTokens contents of the model's added tokens */
  constructor(seed, addedTokens = []) {
    this.r = rng(seed);
    this.added = addedTokens.filter((t) => t.length > 0);
  }
  int(n) {
    return Math.floor(this.r() * n);
  }
  pick(list) {
    return list[this.int(list.length)];
  }
  fromRanges(ranges, n = 1) {
    let s = '';
    for (let i = 0; i < n; i++) {
      const g = this.pick(ranges);
      s += cp(g.a + this.int(g.b - g.a + 1));
    }
    return s;
  }
  /** One fragment; `kind` names the generator for reports. */
  fragment() {
    const k = this.r();
    const len = 1 + this.int(this.r() < 0.8 ? 8 : 40);
    if (k < 0.12) return this.fromRanges(RANGES.latin, len);
    if (k < 0.22) return this.fromRanges(RANGES.scripts, len);
    if (k < 0.27) return this.fromRanges(RANGES.latin, 1) + this.fromRanges(RANGES.marks, 1 + this.int(3));
    if (k < 0.34) return this.fromRanges(RANGES.numbers, len);
    if (k < 0.4) return this.fromRanges(RANGES.punct, 1 + this.int(4));
    if (k < 0.45) return this.fromRanges(RANGES.symbols, 1 + this.int(4));
    if (k < 0.5) return this.fromRanges(RANGES.gap, 1 + this.int(4)) + (this.r() < 0.5 ? this.fromRanges(RANGES.marks, 1) : '');
    if (k < 0.58) return this.pick(WHITESPACE).repeat(1 + this.int(3));
    if (k < 0.63) return this.pick(WORDS) + this.pick(CONTRACTIONS);
    if (k < 0.69) return this.pick(NFC_CASES);
    if (k < 0.74) return this.pick(WORDS);
    if (k < 0.78) return this.pick(CODE);
    if (k < 0.81) return this.fromRanges(RANGES.controls, 1);
    if (k < 0.83) return this.r() < 0.5 ? '\ud800' : this.r() < 0.5 ? '\udc00x' : '\udbff';
    if (k < 0.86) return this.longRun();
    if (k < 0.9) return this.emoji();
    if (k < 0.97 && this.added.length > 0) return this.addedFragment();
    // Any code point at all, assigned or not (surrogates excluded: the lone ones are above).
    let c = this.int(0x110000);
    if (c >= 0xd800 && c <= 0xdfff) c = 0xe000 + (c - 0xd800);
    return cp(c);
  }
  longRun() {
    const n = 50 + this.int(this.r() < 0.9 ? 500 : 5000);
    const unit = this.pick(['a', ' ', '\n', '0', '_', '😀', 'é', '中', 'ab', ' a', '\u0301', '!', '\t ']);
    return unit.repeat(Math.ceil(n / unit.length));
  }
  emoji() {
    return this.pick(['👍🏽', '👨‍👩‍👧‍👦', '🇫🇷', '🏳️‍🌈', '❤️', '#️⃣', '🧑🏿‍🚀', '\u{1fae8}', '☺\ufe0f', '\u{1f9d1}\u200d\u{1f4bb}']);
  }
  addedFragment() {
    const t = this.pick(this.added);
    const r = this.r();
    const ws = () => (this.r() < 0.5 ? this.pick(WHITESPACE) : '');
    if (r < 0.5) return ws() + t + ws();
    if (r < 0.7) return t.slice(0, 1 + this.int(Math.max(1, t.length - 1))); // a prefix
    if (r < 0.85) return t.slice(this.int(t.length)); // a suffix
    return t + t;
  }
  /** One case: 1 to 8 fragments, sometimes glued with whitespace. */
  next() {
    const n = 1 + this.int(8);
    let s = '';
    for (let i = 0; i < n; i++) {
      s += this.fragment();
      if (this.r() < 0.3) s += this.pick(WHITESPACE);
    }
    return s;
  }
}

/**
 * The smallest text (by code points removed, then single characters simplified) for which
 * `fails(text)` stays true: ddmin-style chunk removal. `fails` may be async.
 */
export async function shrink(text, fails, budget = 400) {
  let chars = Array.from(text);
  let calls = 0;
  for (let chunk = Math.max(1, chars.length >> 1); chunk >= 1 && calls < budget; chunk = chunk === 1 ? 0 : chunk >> 1) {
    for (let i = 0; i < chars.length && calls < budget; ) {
      const candidate = [...chars.slice(0, i), ...chars.slice(i + chunk)];
      calls++;
      if (candidate.length > 0 && (await fails(candidate.join('')))) chars = candidate;
      else i += chunk;
    }
  }
  return chars.join('');
}
