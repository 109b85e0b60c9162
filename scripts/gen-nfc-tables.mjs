#!/usr/bin/env node
// Generates native/core/nfc_tables.h and src/nfc-tables.ts: the NFC data of the oracle.
// Usage: node scripts/gen-nfc-tables.mjs   (needs the devDependency `tokenizers`; no downloads)
//
// Why not Node's ICU: the `tokenizers` oracle normalizes with the crate
// unicode-normalization-alignments 0.1.12 (tokenizers/Cargo.toml: "0.1"; 0.1.12 is the last
// 0.1 release, a fork of unicode-rs/unicode-normalization 0.1.11), whose tables.rs says
// UNICODE_VERSION = (9, 0, 0). Node 20's ICU is Unicode 15-17: its NFC composes pairs added
// since (U+105D2 U+0307 -> U+105C9) and reorders and blocks around combining marks added since
// (Unicode 9 gives an unassigned code point class 0). So every fact is read from the oracle's
// own NFD and NFC normalizers (`nfdNormalizer().normalizeString`), the way
// gen-unicode-tables.mjs reads the pre-tokenizer classes from the oracle's regex engine:
//   - the full canonical decomposition of each code point: NFD of the code point alone;
//   - whether a code point has a non-zero combining class: NFD reorders it against U+0301 (230)
//     or U+0323 (220); the classes are then ranked by NFD's order of every pair of such code
//     points (rank 0 = class 0; NFC only compares classes, so ranks behave as the classes do);
//   - the primary composites: code points with a decomposition that NFC keeps, each split
//     into (NFC of its decomposition without the last code point, that last code point) and
//     checked by NFC of the pair;
//   - quick check: No = code points NFC changes alone, Maybe = the second code point of a pair
//     (and the Hangul V and T jamo), Yes = the rest.
// Hangul syllables are left to the algorithm (UAX #15, 3.12), as the crate does.
// test/nfc.test.ts checks the result against the oracle on every code point and on every
// case where Node's NFC and the oracle's differ.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { twoStage } from './two-stage-table.mjs';

const tk = createRequire(import.meta.url)('tokenizers');
const nfd = tk.nfdNormalizer();
const nfc = tk.nfcNormalizer();
const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const tkVersion = createRequire(import.meta.url)('tokenizers/package.json').version;

const isHangulSyllable = (cp) => cp >= 0xac00 && cp <= 0xd7a3;
const all = [];
for (let cp = 0; cp < 0x110000; cp++) if (cp < 0xd800 || cp > 0xdfff) all.push(cp);

/** The oracle's normalization of each string in `items`, many per call ('\n' between them). */
function normalizeEach(normalizer, items) {
  const out = [];
  for (let i = 0; i < items.length; i += 50000) {
    const chunk = items.slice(i, i + 50000);
    const joined = chunk.map((x) => (x.includes('\n') ? '' : x));
    const parts = normalizer.normalizeString(joined.join('\n')).split('\n');
    if (parts.length !== chunk.length) throw new Error('a normalized item contains a newline');
    chunk.forEach((x, k) => {
      out.push(x.includes('\n') ? normalizer.normalizeString(x) : parts[k]);
    });
  }
  return out;
}
const cps = (s) => Array.from(s, (c) => c.codePointAt(0));
const str = (list) => String.fromCodePoint(...list);

// Decompositions and quick-check No.
const singles = all.map((cp) => String.fromCodePoint(cp));
const nfdOf = normalizeEach(nfd, singles);
const nfcOf = normalizeEach(nfc, singles);
const decomp = new Map(); // cp -> full canonical decomposition (code points), Hangul excluded
const qcNo = new Set();
for (let i = 0; i < all.length; i++) {
  const cp = all[i];
  if (nfcOf[i] !== singles[i]) qcNo.add(cp);
  if (nfdOf[i] !== singles[i] && !isHangulSyllable(cp)) decomp.set(cp, cps(nfdOf[i]));
}

// Non-zero combining classes: only code points without a decomposition matter (NFC decomposes first).
const plain = all.filter((cp) => !decomp.has(cp) && !isHangulSyllable(cp));
const probes = plain.flatMap((cp) => ['\u0301' + String.fromCodePoint(cp), String.fromCodePoint(cp) + '\u0323']);
const probed = normalizeEach(nfd, probes);
const marks = [];
for (let i = 0; i < plain.length; i++) {
  if (probed[2 * i] !== probes[2 * i] || probed[2 * i + 1] !== probes[2 * i + 1]) marks.push(plain[i]);
}
// Rank the classes: insert each mark among the representatives of the classes seen so far
// (ascending). NFD(a b) swaps a and b exactly when class(a) > class(b).
const reps = [];
for (const m of marks) {
  const pairs = reps.flatMap((r) => [str([r, m]), str([m, r])]);
  const got = normalizeEach(nfd, pairs);
  let pos = 0;
  let equal = false;
  for (let k = 0; k < reps.length; k++) {
    if (got[2 * k] === pairs[2 * k] && got[2 * k + 1] === pairs[2 * k + 1]) equal = true;
    else if (got[2 * k + 1] !== pairs[2 * k + 1]) pos = k + 1; // m r -> r m: m above r
  }
  if (!equal) reps.splice(pos, 0, m);
}
// Each mark's rank: that of the representative it does not move against.
const repRank = new Map(reps.map((r, k) => [r, k + 1]));
const cls = new Map();
{
  const pairs = [];
  for (const m of marks) for (const r of reps) pairs.push(str([r, m]), str([m, r]));
  const got = normalizeEach(nfd, pairs);
  let at = 0;
  for (const m of marks) {
    let rank = -1;
    for (const r of reps) {
      if (got[at] === pairs[at] && got[at + 1] === pairs[at + 1]) rank = repRank.get(r);
      at += 2;
    }
    if (rank < 0) throw new Error(`U+${m.toString(16)}: no class`);
    cls.set(m, rank);
  }
}
if (reps.length > 63) throw new Error('more than 63 combining classes');

// Primary composites.
const compositions = []; // [first, second, composite]
{
  const candidates = [];
  for (const [cp, d] of decomp) if (!qcNo.has(cp)) candidates.push([cp, d]);
  const firsts = normalizeEach(
    nfc,
    candidates.map(([, d]) => str(d.slice(0, -1))),
  );
  const pairs = candidates.map(([, d], i) => firsts[i] + String.fromCodePoint(d[d.length - 1]));
  const composed = normalizeEach(nfc, pairs);
  candidates.forEach(([cp, d], i) => {
    const first = cps(firsts[i]);
    if (first.length !== 1 || composed[i] !== String.fromCodePoint(cp)) {
      throw new Error(`U+${cp.toString(16)}: not a pair composition (${firsts[i]} + U+${d[d.length - 1].toString(16)})`);
    }
    compositions.push([first[0], d[d.length - 1], cp]);
  });
}
for (const [cp, d] of decomp) {
  if (!qcNo.has(cp) && (cls.get(d[0]) ?? 0) !== 0) throw new Error(`U+${cp.toString(16)}: a kept decomposition that starts with a non-starter`);
}
const qcMaybe = new Set(compositions.map((c) => c[1]));
for (let cp = 0x1161; cp <= 0x1175; cp++) qcMaybe.add(cp);
for (let cp = 0x11a8; cp <= 0x11c2; cp++) qcMaybe.add(cp);
if (normalizeEach(nfc, ['\u1100\u1161\u11a8'])[0] !== '\uac01') throw new Error('the oracle does not compose Hangul');

// Per code point: class rank (bits 0-5), quick check (bits 6-7: 0 Yes, 1 Maybe, 2 No), has a
// decomposition (bit 8). Distinct values are numbered; two stages as in unicode_tables.h.
const PROP_MAYBE = 1 << 6;
const PROP_NO = 2 << 6;
const PROP_DECOMP = 1 << 8;
const propIndex = new Map([[0, 0]]);
const props = [0];
const perCp = new Uint8Array(0x110000);
let quickCheckStart = 0x110000;
for (const cp of all) {
  let p = cls.get(cp) ?? 0;
  if (qcNo.has(cp)) p |= PROP_NO;
  else if (qcMaybe.has(cp)) p |= PROP_MAYBE;
  if (decomp.has(cp)) p |= PROP_DECOMP;
  if (p === 0) continue;
  if ((p & ~PROP_DECOMP) !== 0) quickCheckStart = Math.min(quickCheckStart, cp);
  let k = propIndex.get(p);
  if (k === undefined) {
    k = props.length;
    props.push(p);
    propIndex.set(p, k);
  }
  perCp[cp] = k;
}
if (props.length > 255) throw new Error('too many property values');
const { stage1, blocks } = twoStage(perCp);
if (blocks.length > 255) throw new Error('too many blocks');

const decompKeys = [...decomp.keys()].sort((a, b) => a - b);
const decompOffsets = [0];
const decompData = [];
for (const k of decompKeys) {
  decompData.push(...decomp.get(k));
  decompOffsets.push(decompData.length);
}
compositions.sort((a, b) => a[0] - b[0] || a[1] - b[1]);

const provenance = `from the tokenizers ${tkVersion} oracle's NFD/NFC (unicode-normalization-alignments 0.1.12, Unicode 9.0.0). Do not edit.`;
const summary =
  `${decompKeys.length} decompositions, ${compositions.length} compositions, ${marks.length} ` +
  `non-starters in ${reps.length} classes, ${qcNo.size} quick-check No, ${qcMaybe.size} Maybe`;
const wrap = (arr, per) => {
  const rows = [];
  for (let i = 0; i < arr.length; i += per) rows.push('  ' + arr.slice(i, i + per).join(', ') + ',');
  return rows;
};
const hex = (n) => '0x' + n.toString(16).toUpperCase();

const h = [];
h.push('// GENERATED by scripts/gen-nfc-tables.mjs ' + provenance);
h.push(`// ${summary}.`);
h.push('#pragma once');
h.push('#include <cstdint>');
h.push('');
h.push('namespace promptenc {');
h.push('namespace nfcdata {');
h.push('constexpr uint16_t kClassMask = 0x3F;  // canonical combining class rank (0 = starter)');
h.push(`constexpr uint16_t kMaybe = ${PROP_MAYBE};`);
h.push(`constexpr uint16_t kNo = ${PROP_NO};`);
h.push(`constexpr uint16_t kDecomposes = ${PROP_DECOMP};`);
h.push(`/// Every code point below this one is a starter with quick check Yes.`);
h.push(`constexpr uint32_t kQuickCheckStart = ${hex(quickCheckStart)};`);
h.push(`constexpr uint16_t kProps[${props.length}] = {${props.join(', ')}};`);
h.push(`constexpr uint8_t kStage1[${stage1.length}] = {`, ...wrap(stage1, 32), '};');
h.push(`constexpr uint8_t kStage2[${blocks.length * 256}] = {`);
for (const block of blocks) h.push(...wrap(Array.from(block), 32));
h.push('};');
h.push(`constexpr uint32_t kDecompKeys[${decompKeys.length}] = {`, ...wrap(decompKeys.map(hex), 12), '};');
h.push(`constexpr uint16_t kDecompOffsets[${decompOffsets.length}] = {`, ...wrap(decompOffsets, 20), '};');
h.push(`constexpr uint32_t kDecompData[${decompData.length}] = {`, ...wrap(decompData.map(hex), 12), '};');
h.push('/// (first << 21 | second) of each primary composite, ascending; kCompValues holds the composites.');
h.push(`constexpr uint64_t kCompKeys[${compositions.length}] = {`);
h.push(
  ...wrap(
    compositions.map(([a, b]) => hex(a * 2 ** 21 + b) + 'ull'),
    8,
  ),
  '};',
);
h.push(
  `constexpr uint32_t kCompValues[${compositions.length}] = {`,
  ...wrap(
    compositions.map((c) => hex(c[2])),
    12,
  ),
  '};',
);
h.push('');
h.push('constexpr uint16_t props(uint32_t cp) {');
h.push('  if (cp >= 0x110000) return 0;');
h.push('  return kProps[kStage2[uint32_t(kStage1[cp >> 8]) * 256u + (cp & 255u)]];');
h.push('}');
h.push('}  // namespace nfcdata');
h.push('}  // namespace promptenc');
h.push('');
writeFileSync(path.join(root, 'native', 'core', 'nfc_tables.h'), h.join('\n'));

// TS: the same data, compact: runs of equal props as [start, length, props] triples, the
// decompositions and compositions as flat number arrays (decoded once, on first use).
const runs = [];
for (let cp = 0; cp < 0x110000; ) {
  const p = props[perCp[cp]];
  let end = cp + 1;
  while (end < 0x110000 && props[perCp[end]] === p) end++;
  if (p !== 0) runs.push(cp, end - cp, p);
  cp = end;
}
const decompFlat = [];
for (const k of decompKeys) decompFlat.push(k, decomp.get(k).length, ...decomp.get(k));
const ts = [];
ts.push('// GENERATED by scripts/gen-nfc-tables.mjs ' + provenance);
ts.push(`// ${summary}.`);
ts.push('');
ts.push('/** Props bits, as nfcdata in native/core/nfc_tables.h. */');
ts.push(`export const CLASS_MASK = 0x3f;`);
ts.push(`export const MAYBE = ${PROP_MAYBE};`);
ts.push(`export const NO = ${PROP_NO};`);
ts.push(`export const DECOMPOSES = ${PROP_DECOMP};`);
ts.push(`/** Every code point below this one is a starter with quick check Yes. */`);
ts.push(`export const QUICK_CHECK_START = ${hex(quickCheckStart)};`);
ts.push('/** [start, length, props] for every run of code points whose props are not 0. */');
ts.push('// prettier-ignore');
ts.push('export const PROP_RUNS: readonly number[] = [', ...wrap(runs, 30), '];');
ts.push('/** [code point, n, n code points of its full canonical decomposition] per decomposing code point. */');
ts.push('// prettier-ignore');
ts.push('export const DECOMPOSITIONS: readonly number[] = [', ...wrap(decompFlat, 24), '];');
ts.push('/** [first, second, composite] per primary composite. */');
ts.push('// prettier-ignore');
ts.push('export const COMPOSITIONS: readonly number[] = [', ...wrap(compositions.flat(), 24), '];');
ts.push('');
writeFileSync(path.join(root, 'src', 'nfc-tables.ts'), ts.join('\n'));
console.log(`wrote native/core/nfc_tables.h and src/nfc-tables.ts: ${summary}; ${props.length} prop values, ${blocks.length} blocks`);
