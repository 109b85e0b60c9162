/**
 * NFC as the Rust oracle computes it. The oracle normalizes with unicode-normalization-alignments
 * 0.1.12 (Unicode 9.0.0); Node's String.prototype.normalize is ICU (Unicode 15-17), which composes
 * pairs added since and orders and blocks around combining marks added since. src/nfc.ts (the JS
 * backend, added-token patterns) and native/core/normalize.cc (the native core) follow the oracle.
 *
 * Expected values come from the oracle: its own NFC normalizer (`nfcNormalizer().normalizeString`)
 * and its Qwen3 ids. Node's ICU only chooses the cases: every place where its NFC and the
 * oracle's differ (the version gap), found here by comparing the two on every code point, every
 * ICU composition pair and every ICU combining mark.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import tokenizers from 'tokenizers';
import { createJsBackend } from '../src/backend/js.js';
import { createNativeBackend, nativeAddonStatus } from '../src/backend/native.js';
import type { Backend } from '../src/backend/types.js';
import type { TokenizerJson } from '../src/tokenizer-json.js';
import { loadTokenizer } from '../src/index.js';
import { nfc } from '../src/nfc.js';
import { startLagMonitor } from './helpers/event-loop-lag.js';
import { modelPath } from './helpers/oracle.js';

const status = nativeAddonStatus();
if (!status.available) console.warn(`native NFC tests skipped: addon not built (${status.error}); run npm run build:native`);

const oracleNfc = tokenizers.nfcNormalizer();
const oracleNfd = tokenizers.nfdNormalizer();
const QWEN3 = modelPath('qwen3');
const qwenJson = (): TokenizerJson => JSON.parse(readFileSync(QWEN3, 'utf8')) as TokenizerJson;
const qwenOracle = tokenizers.Tokenizer.fromFile(QWEN3);

/** The oracle's normalization of each item (none holds '\n'), 20,000 per call. */
function oracleEach(normalizer: typeof oracleNfc, items: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < items.length; i += 20_000) {
    const chunk = items.slice(i, i + 20_000);
    const parts = normalizer.normalizeString(chunk.join('\n')).split('\n');
    if (parts.length !== chunk.length) throw new Error('an item holds a newline');
    out.push(...parts);
  }
  return out;
}
const oracleIds = async (texts: readonly string[]): Promise<number[][]> =>
  (await qwenOracle.encodeBatch([...texts], { addSpecialTokens: false })).map((e) => e.getIds());
const hex = (s: string) => Array.from(s, (c) => 'U+' + c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')).join(' ');

const ALL: string[] = [];
for (let cp = 0; cp < 0x110000; cp++) if ((cp < 0xd800 || cp > 0xdfff) && cp !== 10) ALL.push(String.fromCodePoint(cp));

/**
 * `gap`: every case where Node's NFC and the oracle's differ, as short strings. `touched`: every
 * code point that NFC can change or move in either version (it decomposes, ends a decomposition,
 * or has a combining class).
 */
function versionGap(): { gap: string[]; touched: string[] } {
  const cases = new Set<string>();
  const touched = new Set<string>();
  const singleNfc = oracleEach(oracleNfc, ALL);
  const singleNfd = oracleEach(oracleNfd, ALL);
  ALL.forEach((c, i) => {
    if (c.normalize('NFC') !== singleNfc[i]) cases.add(c);
    for (const d of [c.normalize('NFD'), singleNfd[i]!]) {
      if (d === c) continue;
      touched.add(c);
      touched.add(Array.from(d).pop()!);
    }
  });
  // ICU's primary composites, as (NFC of the decomposition but its last code point, that code point).
  const pairs: string[] = [];
  for (const c of ALL) {
    const d = Array.from(c.normalize('NFD'));
    if (d.length < 2 || c.normalize('NFC') !== c || (c >= '\uac00' && c <= '\ud7a3')) continue;
    pairs.push(d.slice(0, -1).join('').normalize('NFC') + d[d.length - 1]);
  }
  const pairNfc = oracleEach(oracleNfc, pairs);
  pairs.forEach((p, i) => {
    if (p.normalize('NFC') !== pairNfc[i]) cases.add(p);
  });
  // Combining marks: NFD moves them against U+0301 (class 230) or U+0323 (220). Those whose
  // ordering the two versions do not share (a class the oracle does not know) get contexts.
  const probes = ALL.filter((c) => c.normalize('NFD') === c).flatMap((c) => ['\u0301' + c, c + '\u0323']);
  const probed = oracleEach(oracleNfd, probes);
  for (let i = 0; i < probes.length; i += 2) {
    const icu = probes[i]!.normalize('NFD') !== probes[i] || probes[i + 1]!.normalize('NFD') !== probes[i + 1];
    const ours = probed[i] !== probes[i] || probed[i + 1] !== probes[i + 1];
    const m = probes[i + 1]!.slice(0, -1);
    if (icu || ours) touched.add(m);
    if (probes[i]!.normalize('NFD') === probed[i] && probes[i + 1]!.normalize('NFD') === probed[i + 1]) continue;
    for (const s of ['a' + m, 'a' + m + '\u0301', 'a' + m + '\u0323', 'a\u0323' + m, 'a\u0301' + m, m + '\u0301', 'a' + m + '\u0315']) cases.add(s);
  }
  return { gap: [...cases], touched: [...touched] };
}

const ISSUE_REPROS = ['\u{105D2}\u0307', '\u{105DA}\u0307', '\u{11382}\u{113C9}', '\u{16D67}\u{16D67}', '\u{1611E}\u{1611E}'];

function backends(json: TokenizerJson): Array<[string, Backend]> {
  const out: Array<[string, Backend]> = [['js', createJsBackend({ tokenizerJson: json, tokenizerConfig: {} })]];
  if (status.available) out.push(['native', createNativeBackend({ tokenizerJson: json, tokenizerConfig: {} })]);
  return out;
}

/** xorshift32, reproducible. */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 0x100000000;
  };
}

describe("NFC (the oracle's Unicode 9.0.0)", () => {
  const { gap, touched } = versionGap();
  const qwen = backends(qwenJson());

  it("the version gap holds the reported pairs, and they differ from Node's NFC", () => {
    for (const r of ISSUE_REPROS) {
      expect(gap, hex(r)).toContain(r);
      expect(r.normalize('NFC'), hex(r)).not.toBe(oracleNfc.normalizeString(r));
    }
    expect(gap.length).toBeGreaterThan(100);
  });

  it('src/nfc.ts equals the oracle on every code point, alone and between a base and U+0301', () => {
    const alone = oracleEach(oracleNfc, ALL);
    const framed = ALL.map((c) => 'a' + c + '\u0301');
    const framedNfc = oracleEach(oracleNfc, framed);
    const bad: string[] = [];
    ALL.forEach((c, i) => {
      if (nfc(c) !== alone[i]) bad.push(hex(c));
      if (nfc(framed[i]!) !== framedNfc[i]) bad.push(hex(framed[i]!));
    });
    expect(bad.slice(0, 20)).toEqual([]);
  }, 120_000);

  it('src/nfc.ts equals the oracle on every case of the version gap', () => {
    const want = oracleEach(oracleNfc, gap);
    const bad = gap.filter((s, i) => nfc(s) !== want[i]).map(hex);
    expect(bad).toEqual([]);
  });

  it.each(ISSUE_REPROS.map((r) => [hex(r), r]))("Qwen3 %s: both backends give the oracle's ids", async (_name, text) => {
    const [want] = await oracleIds([text]);
    if (text === '\u{105D2}\u0307') expect(want).toEqual([123934, 245, 240, 136, 229]); // the oracle's ids, as reported
    for (const [kind, be] of qwen) {
      expect({ kind, ids: Array.from(be.encode(text)) }).toEqual({ kind, ids: want });
      expect({ kind, count: be.count(text) }).toEqual({ kind, count: want!.length });
      expect({ kind, ids: Array.from(await be.encodeAsync(text)) }).toEqual({ kind, ids: want });
    }
  });

  it("Qwen3 gives the oracle's ids on every case of the version gap, on both backends", async () => {
    const want = await oracleIds(gap);
    for (const [kind, be] of qwen) {
      const bad = gap.filter((s, i) => Array.from(be.encode(s)).join() !== want[i]!.join()).map(hex);
      expect({ kind, bad }).toEqual({ kind, bad: [] });
      const batch = await be.encodeBatch(gap, 2);
      expect({ kind, bad: gap.filter((_s, i) => Array.from(batch[i]!).join() !== want[i]!.join()).map(hex) }).toEqual({ kind, bad: [] });
    }
  }, 120_000);

  it("Qwen3 gives the oracle's ids on every code point NFC touches in either version, alone and after a base, on both backends", async () => {
    expect(touched.length).toBeGreaterThan(3000);
    const texts: string[] = [];
    for (let i = 0; i < touched.length; i += 2000) {
      texts.push(
        touched.slice(i, i + 2000).join('\n'),
        touched
          .slice(i, i + 2000)
          .map((c) => 'a' + c + '\u0301')
          .join('\n'),
      );
    }
    const want = await oracleIds(texts);
    for (const [kind, be] of qwen) {
      const bad = texts.map((t, i) => (Array.from(be.encode(t)).join() === want[i]!.join() ? -1 : i)).filter((i) => i >= 0);
      expect({ kind, bad }).toEqual({ kind, bad: [] });
    }
  }, 120_000);

  it('random mixes of marks, composable letters, jamo and new code points: src/nfc.ts and both backends equal the oracle', async () => {
    // Pools: characters that decompose, compose, reorder or block, from both Unicode versions.
    const pool = [
      ...'aeoAEOuUnNcCsSkKyY\u0391\u03b1\u0415\u0435\u0627\u0648\u0928\u09c7\u0b47\u0bc6\u0d46\u0dd9\u1025\u1100\u1161\u11a8\uac00\u3099\u304b',
      ...'\u0300\u0301\u0302\u0303\u0308\u0323\u0327\u0328\u0315\u031b\u0345\u0340\u0344\u05b0\u0653\u0654\u0655\u093c\u09be\u09d7\u0b3e\u0b56\u0b57\u0bbe\u0bd7\u0d3e\u0d57\u0dca\u0dcf\u0ddf\u102e\u1175\u11c2\u1ac1\u1dc0\u20d0\u302a\u309a',
      ...[
        '\u{105D2}',
        '\u{105DA}',
        '\u{11382}',
        '\u{113C9}',
        '\u{16D67}',
        '\u{1611E}',
        '\u0307',
        '\u{11935}',
        '\u{11930}',
        '\u{1D15E}',
        '\u{1D165}',
        '\u2126',
        '\u212b',
        '\u0958',
        '\u{1E000}',
        '\u{16FF0}',
        '\u{1E4EC}',
        '\u0897',
        '\u1acf',
        '\u{10F82}',
      ],
    ];
    const next = rng(0x4e4643);
    const texts = Array.from({ length: 4000 }, () => {
      let s = '';
      for (let n = 1 + Math.floor(next() * 8); n > 0; n--) s += pool[Math.floor(next() * pool.length)];
      return s;
    });
    const wantNfc = oracleEach(oracleNfc, texts);
    expect(
      texts
        .filter((t, i) => nfc(t) !== wantNfc[i])
        .map(hex)
        .slice(0, 10),
    ).toEqual([]);
    const want = await oracleIds(texts);
    for (const [kind, be] of qwen) {
      expect({
        kind,
        bad: texts
          .filter((t, i) => Array.from(be.encode(t)).join() !== want[i]!.join())
          .map(hex)
          .slice(0, 10),
      }).toEqual({ kind, bad: [] });
    }
    // Long texts: the stretches around failing code points and the verbatim runs between them.
    const long = Array.from({ length: 20 }, (_, k) => texts.slice(k * 200, k * 200 + 200).join(k % 2 ? ' ' : 'x'));
    const wantLong = await oracleIds(long);
    expect(long.filter((t) => nfc(t) !== oracleNfc.normalizeString(t)).map(hex)).toEqual([]);
    for (const [kind, be] of qwen) {
      expect({ kind, ok: long.map((t, i) => Array.from(be.encode(t)).join() === wantLong[i]!.join()) }).toEqual({ kind, ok: long.map(() => true) });
    }
  }, 120_000);

  it('a normalized=true added token under NFC: its pattern and every gap are normalized as the oracle does', async () => {
    const json = qwenJson();
    const id = 151669; // contiguous with Qwen3's added tokens, so the oracle keeps it
    json.added_tokens = [
      ...(json.added_tokens ?? []),
      { id, content: '<e\u0301\u{105D2}\u0307>', special: false, lstrip: false, rstrip: false, single_word: false, normalized: true },
    ];
    const oracle = tokenizers.Tokenizer.fromString(JSON.stringify(json));
    const texts = [
      'x<\u00e9\u{105D2}\u0307>y',
      'x<e\u0301\u{105D2}\u0307>y',
      'A\u030a<e\u0301\u{105D2}\u0307><|im_start|>e\u0301<e\u0301\u{105D2}\u0307>',
      '<\u00e9\u{105C9}>', // Node's NFC of the content: no match for the oracle
    ];
    const want = await Promise.all(texts.map(async (t) => (await oracle.encode(t, null, { addSpecialTokens: false })).getIds()));
    expect(want[0]).toContain(id);
    expect(want[3]).not.toContain(id);
    for (const [kind, be] of backends(json)) {
      expect({ kind, ids: texts.map((t) => Array.from(be.encode(t))) }).toEqual({ kind, ids: want });
      if (be.encodeMarked) {
        // NFC moved the token inside its gap: no marks rather than wrong ones.
        expect(be.encodeMarked(texts[1]!).marks).toBeUndefined();
        expect(be.encodeMarked(texts[0]!).marks).toBeDefined();
      }
    }
  });
});

describe.skipIf(!status.available)('NFC on the native path keeps the event loop free', () => {
  // 2 MB of text that is not NFC: decomposed Latin, Vietnamese, Korean jamo, Unicode 9 marks.
  const unit = 'Cafe\u0301 Vie\u0323\u0302t Nam \u1100\u1161\u11a8 re\u0301sume\u0301 \u0915\u093c \u0061\u0323\u0307 '.repeat(8) + 'plain ascii words\n';
  const text = unit.repeat(Math.ceil((2 << 20) / Buffer.byteLength(unit))).slice(0, 2 << 20);

  async function maxLagDuring(work: () => Promise<unknown>): Promise<number> {
    const lag = startLagMonitor();
    await work().catch((err: unknown) => {
      lag.stop();
      throw err;
    });
    return lag.stop().max;
  }

  it("encodeAsync of 2 MB of non-NFC Qwen3 text: the oracle's ids, event-loop lag < 50 ms", async () => {
    expect(nfc(text)).not.toBe(text);
    const tok = await loadTokenizer('qwen3', { backend: 'native' });
    const [want] = await oracleIds([text]);
    let ids: Uint32Array | undefined;
    const lag = await maxLagDuring(async () => {
      ids = await tok.encodeAsync(text, { addSpecialTokens: false });
    });
    expect(Array.from(ids!)).toEqual(want);
    expect(lag).toBeLessThan(50);
  }, 120_000);

  it("encodeBatch of 8 × 256 KB of non-NFC Qwen3 text on 4 threads: the oracle's ids, event-loop lag < 50 ms", async () => {
    const tok = await loadTokenizer('qwen3', { backend: 'native' });
    const texts = Array.from({ length: 8 }, (_, i) => text.slice(i * (256 << 10), (i + 1) * (256 << 10)));
    const want = await oracleIds(texts);
    let out: Uint32Array[] = [];
    const lag = await maxLagDuring(async () => {
      out = await tok.encodeBatch(texts, { addSpecialTokens: false, threads: 4 });
    });
    expect(out.map((x) => Array.from(x))).toEqual(want);
    expect(lag).toBeLessThan(50);
  }, 120_000);
});
