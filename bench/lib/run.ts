/**
 * The measurement core shared by `promptenc bench` and bench/*.mjs.
 *
 * Method (why each step is there):
 * - Agreement first: every engine encodes the whole corpus once (document by document) and
 *   we compare token counts and an FNV-1a hash of the ID stream between engines of the same
 *   vocabulary. A fast wrong encoder is not a result. This pass is also the warm-up (JIT,
 *   word caches, WASM tiers) and one more warm-up turn follows.
 * - Alternating turns A B C A B C …: each turn is time-boxed (~turnMs) and walks the corpus
 *   from where that engine stopped, so machine noise (thermal, other tenants) is spread over
 *   all engines instead of hitting whoever ran last. One sample = bytes / elapsed of a turn.
 * - Medians with min/max and IQR, never means: a GC pause or a preemption is one outlier.
 * - Ratios are computed against promptenc (native if it loaded, else js) in the same run.
 * - No global.gc() between turns. Tried: with --expose-gc and gc() before every turn, native
 *   fell from ~77 to ~17 MB/s and js from ~1.0 to ~0.2 MB/s on the same corpus (a forced
 *   full GC is "memory reducing": it shrinks the young generation and flushes code, so the
 *   next turn pays to regrow both). Each engine's own garbage is part of its cost, and
 *   alternating turns spread the rest evenly.
 */
import os from 'node:os';
import { readFile } from 'node:fs/promises';
import { buildCorpus, DEFAULT_CORPUS_BYTES, type Corpus } from './corpus.js';
import { loadEngines, ENGINE_NAMES, PEER_NAMES, type Engine, type EngineName, type MissingEngine } from './engines.js';
import type { ChatMessage } from 'promptenc';

export interface Spread {
  median: number;
  min: number;
  max: number;
  q1: number;
  q3: number;
  n: number;
}

export function spread(values: readonly number[]): Spread {
  const v = [...values].sort((a, b) => a - b);
  const n = v.length;
  if (n === 0) return { median: NaN, min: NaN, max: NaN, q1: NaN, q3: NaN, n: 0 };
  const at = (p: number) => {
    const i = (n - 1) * p;
    const lo = Math.floor(i);
    const hi = Math.ceil(i);
    return v[lo]! + (v[hi]! - v[lo]!) * (i - lo);
  };
  return { median: at(0.5), min: v[0]!, max: v[n - 1]!, q1: at(0.25), q3: at(0.75), n };
}

export interface ProgressEvent {
  phase: string;
  /** 0..1 over the phase. */
  fraction: number;
  detail?: string;
}

export interface BenchOptions {
  /** Bundled name, model directory or tokenizer.json path. */
  source: string;
  /** A file or directory to use instead of the generated corpus. */
  corpusPath?: string;
  corpusSize?: number;
  seed?: number;
  /** A messages JSON file (array or {messages, tools}) for encodeChat timing. */
  messagesPath?: string;
  /** Max threads for the encodeBatch scaling curve. */
  threads?: number;
  /** Measuring time per engine for encode throughput; count and batch get half each. */
  seconds?: number;
  /**
   * Total measuring time instead (`promptenc bench --seconds`): split over the phases
   * (agreement 20 %, encode 45 %, count 15 %, chat 10 %, batch 10 %) and, within each, over the
   * engines; overrides `seconds`. Loading the engines is not part of it. The agreement pass of
   * an engine then covers the documents it encodes within its share (the same leading
   * documents for every engine, compared on the prefix both covered).
   */
  totalSeconds?: number;
  /** Engines to include besides promptenc (default: all peers). */
  peers?: readonly EngineName[];
  /** Skip phases (bench/*.mjs answer one question each). */
  skip?: { count?: boolean; chat?: boolean; batch?: boolean };
  onProgress?: (e: ProgressEvent) => void;
}

export interface EngineResult {
  name: EngineName;
  status: 'ok';
  package: string;
  version: string;
  vocabulary: string;
  loadMs: number;
  importMs: number;
  rssAfterLoadMB: number;
  /**
   * cpuShare = process CPU time / wall time per turn: below ~0.95 the OS ran something else
   * during the turn (a shared machine). mbpsPerCpuSecond is throughput per CPU second, which
   * survives that noise for single-threaded engines.
   */
  encode: { mbps: Spread; tokensPerSec: Spread; turns: number; ratio: number | null; cpuShare: number; mbpsPerCpuSecond: number; cpuRatio: number | null };
  count?: { mbps: Spread; api: string; ratio: number | null };
  agreement: { tokens: number; idsHash: string; agrees: boolean | null; passMs: number; documentsChecked?: number };
}

/** Where an engine first departs from the reference: enough to reproduce and report it. */
export interface Difference {
  engine: EngineName;
  reference: EngineName;
  document: number;
  kind: string;
  tokenIndex: number;
  referenceIds: number[];
  engineIds: number[];
  /** The reference tokens around the difference, decoded by promptenc. */
  referenceText?: string;
}

export interface BenchResult {
  schema: 'promptenc-bench/1';
  date: string;
  model: string;
  tokenizerPath: string;
  vocabulary: string;
  machine: { cpu: string; cores: number; node: string; platform: string; arch: string; totalMemMB: number; loadavgStart: number[]; loadavgEnd: number[] };
  corpus: { sha256: string; bytes: number; documents: number; composition: Corpus['composition']; source: string; seed: number };
  settings: { seconds: number; threads: number; turnMs: number; totalSeconds?: number };
  baseline: EngineName | null;
  engines: Array<EngineResult | MissingEngine>;
  versions: Record<string, string>;
  agreement: { ok: boolean; reference: EngineName | null; disagreeing: EngineName[]; differences: Difference[]; note?: string };
  chat?: { messages: string; engines: Array<{ name: EngineName; renderUs: Spread; encodeChatUs: Spread; tokens: number }>; skipped?: string };
  batch?: { bytes: number; texts: number; engines: Array<{ name: EngineName; points: Array<{ threads: number; mbps: Spread }> }> };
  peakRssMB: number;
  durationMs: number;
  /** Of durationMs: loading the engines (not part of the measuring budget). */
  loadMs?: number;
  /**
   * The process's CPU time while loading: far below loadMs when other processes compete for
   * the cores (the engines' builds are single-threaded CPU work).
   */
  loadCpuMs?: number;
}

const now = () => process.hrtime.bigint();
const msSince = (t0: bigint) => Number(now() - t0) / 1e6;

/** FNV-1a over the IDs, chained across documents: a cheap fingerprint of the full ID stream. */
function fnv(h: number, ids: ArrayLike<number>): number {
  for (let i = 0; i < ids.length; i++) {
    h ^= ids[i]! & 0xffff;
    h = Math.imul(h, 0x01000193) >>> 0;
    h ^= ids[i]! >>> 16;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

export function cpuModel(): string {
  const cpus = os.cpus();
  return cpus[0]?.model.trim() || 'unknown';
}

interface Samples {
  mbps: number[];
  tps: number[];
  share: number[];
  mbpsCpu: number[];
}

interface Cursor {
  doc: number;
}

/** One time-boxed turn of `op` over the corpus starting at the cursor; returns bytes, tokens, ms. */
async function turn(engine: Engine, op: 'encode' | 'count', corpus: Corpus, cursor: Cursor, turnMs: number) {
  const docs = corpus.documents;
  let bytes = 0;
  let tokens = 0;
  const cpu0 = process.cpuUsage();
  const t0 = now();
  const budget = BigInt(Math.round(turnMs * 1e6));
  // The loop body is deliberately the same shape for every engine; async engines pay their
  // own promise cost because that is their API.
  do {
    const d = docs[cursor.doc]!;
    cursor.doc = (cursor.doc + 1) % docs.length;
    let n: number;
    if (op === 'encode') {
      const r = engine.encode(d.text);
      n = (engine.async ? await r : (r as ArrayLike<number>)).length;
    } else {
      const r = engine.count(d.text);
      n = engine.async ? await r : (r as number);
    }
    bytes += d.bytes;
    tokens += n;
  } while (now() - t0 < budget);
  const ms = msSince(t0);
  const cpu = process.cpuUsage(cpu0);
  return { bytes, tokens, ms, cpuMs: (cpu.user + cpu.system) / 1000 };
}

async function alternate(
  engines: Engine[],
  op: 'encode' | 'count',
  corpus: Corpus,
  seconds: number,
  turnMs: number,
  progress: (f: number) => void,
): Promise<Map<EngineName, Samples>> {
  const out = new Map<EngineName, Samples>();
  const cursors = new Map<EngineName, Cursor>();
  engines.forEach((e, i) => {
    out.set(e.name, { mbps: [], tps: [], share: [], mbpsCpu: [] });
    // Different start points, so engines do not all time the same few documents first.
    cursors.set(e.name, { doc: Math.floor((i * corpus.documents.length) / Math.max(1, engines.length)) });
  });
  for (const e of engines) await turn(e, op, corpus, cursors.get(e.name)!, Math.min(turnMs, 100)); // warm-up, discarded
  const spent = new Map<EngineName, number>(engines.map((e) => [e.name, 0]));
  const target = seconds * 1000;
  // Turns alternate until every engine has been measured for `seconds`. A slow engine's turn
  // overshoots by at most one document.
  while ([...spent.values()].some((s) => s < target)) {
    for (const e of engines) {
      if (spent.get(e.name)! >= target) continue;
      const r = await turn(e, op, corpus, cursors.get(e.name)!, turnMs);
      spent.set(e.name, spent.get(e.name)! + r.ms);
      out.get(e.name)!.mbps.push(r.bytes / 1e6 / (r.ms / 1000));
      out.get(e.name)!.tps.push(r.tokens / (r.ms / 1000));
      out.get(e.name)!.share.push(r.cpuMs / r.ms);
      out.get(e.name)!.mbpsCpu.push(r.bytes / 1e6 / (Math.max(r.cpuMs, 0.001) / 1000));
    }
    progress(Math.min(1, Math.min(...spent.values()) / target));
  }
  return out;
}

interface AgreementPass {
  tokens: number;
  hash: number;
  ms: number;
  /** Per document: the running token count and id hash after it (compared on a common prefix). */
  prefix: Array<{ tokens: number; hash: number }>;
}

/** Documents an agreement pass always covers, whatever its budget: a check of a few hundred tokens proves little. */
const MIN_AGREEMENT_BYTES = 128 * 1024;

/** Every document in order, or those that fit in budgetMs (at least MIN_AGREEMENT_BYTES of them). */
async function agreementPass(engine: Engine, corpus: Corpus, budgetMs = Infinity): Promise<AgreementPass> {
  let tokens = 0;
  let hash = 0x811c9dc5;
  const prefix: AgreementPass['prefix'] = [];
  const t0 = now();
  let bytes = 0;
  for (const d of corpus.documents) {
    bytes += d.bytes;
    const r = engine.encode(d.text);
    const ids = engine.async ? await r : (r as ArrayLike<number>);
    tokens += ids.length;
    hash = fnv(hash, ids);
    prefix.push({ tokens, hash });
    if (bytes >= MIN_AGREEMENT_BYTES && msSince(t0) > budgetMs) break;
  }
  return { tokens, hash, ms: msSince(t0), prefix };
}

async function firstDifference(e: Engine, ref: Engine, corpus: Corpus, tok: Engine['tokenizer']): Promise<Difference | undefined> {
  for (const [i, d] of corpus.documents.entries()) {
    const a = Array.from(await ref.encode(d.text));
    const b = Array.from(await e.encode(d.text));
    if (a.length === b.length && a.every((x, k) => x === b[k])) continue;
    let k = 0;
    while (k < a.length && a[k] === b[k]) k++;
    const refIds = a.slice(Math.max(0, k - 2), k + 6);
    let referenceText: string | undefined;
    try {
      referenceText = tok?.decode(refIds);
    } catch {
      // decoding is a courtesy for the report
    }
    return {
      engine: e.name,
      reference: ref.name,
      document: i,
      kind: d.kind,
      tokenIndex: k,
      referenceIds: refIds,
      engineIds: b.slice(Math.max(0, k - 2), k + 6),
      referenceText,
    };
  }
  return undefined;
}

async function loadMessages(file: string | undefined): Promise<{ label: string; messages: ChatMessage[] }> {
  if (file === undefined) {
    return {
      label: 'built-in 4-message conversation',
      messages: [
        { role: 'system', content: 'You are a concise assistant. Answer in English.' },
        { role: 'user', content: 'What does byte-pair encoding do to the word "unbelievable"?' },
        { role: 'assistant', content: 'It splits it into frequent sub-words, for example "un", "bel", "iev", "able", and maps each to an id.' },
        { role: 'user', content: 'And for 東京 or 🚀? Show the steps, briefly.' },
      ],
    };
  }
  const data = JSON.parse(await readFile(file, 'utf8')) as unknown;
  const messages = (Array.isArray(data) ? data : (data as { messages?: unknown }).messages) as ChatMessage[];
  if (!Array.isArray(messages)) throw new Error(`--messages ${file}: expected an array of messages or {messages: [...]}`);
  return { label: file, messages };
}

/**
 * µs per call of each fn, alternating short batches of each (A B A B …) for ~seconds in
 * total, so render and render+encode see the same machine conditions.
 */
function perCallUs(fns: Array<() => unknown>, seconds: number): Spread[] {
  const samples: number[][] = fns.map(() => []);
  const batch = fns.map(() => 1);
  for (const fn of fns) fn(); // warm-up
  const end = now() + BigInt(Math.round(seconds * 1e9));
  while (now() < end || samples[0]!.length < 8) {
    fns.forEach((fn, k) => {
      const t0 = now();
      for (let i = 0; i < batch[k]!; i++) fn();
      const us = Number(now() - t0) / 1e3 / batch[k]!;
      samples[k]!.push(us);
      if (us * batch[k]! < 5000) batch[k]! *= 2; // grow batches to a few ms each
    });
  }
  // The first rounds ran with tiny batches (clock-dominated): drop them.
  return samples.map((s) => spread(s.slice(Math.min(4, s.length - 4))));
}

export async function runBench(opts: BenchOptions): Promise<BenchResult> {
  const started = now();
  const cpuStart = process.cpuUsage();
  const loadavgStart = os.loadavg().map((x) => Math.round(x * 100) / 100);
  let seconds = opts.seconds ?? 3;
  let turnMs = Math.max(20, Math.min(250, (seconds * 1000) / 8));
  const threads = opts.threads ?? Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
  const progress = opts.onProgress ?? (() => {});
  const peers = opts.peers ?? PEER_NAMES;
  const names: EngineName[] = ['promptenc-native', 'promptenc-js', ...peers.filter((p) => !p.startsWith('promptenc-'))];

  progress({ phase: 'load', fraction: 0 });
  const { context, slots } = await loadEngines(
    opts.source,
    ENGINE_NAMES.filter((n) => names.includes(n)),
  );
  const engines = slots.filter((s): s is Engine => s.status === 'ok');
  progress({ phase: 'load', fraction: 1 });
  const loadedAt = now();
  const loadCpu = process.cpuUsage(cpuStart);
  const total = opts.totalSeconds;
  const nEngines = Math.max(1, engines.length);
  if (total !== undefined) {
    seconds = Math.max(0.05, (total * 0.45) / nEngines);
    turnMs = Math.max(10, Math.min(250, (seconds * 1000) / 6));
  }
  const countSeconds = total !== undefined ? Math.max(0.03, (total * 0.15) / nEngines) : seconds / 2;
  const agreeMs = total !== undefined ? (total * 1000 * 0.2) / nEngines : Infinity;
  const js = engines.find((e) => e.name === 'promptenc-js');
  const baseline = engines.find((e) => e.name === 'promptenc-native') ?? js;

  progress({ phase: 'corpus', fraction: 0 });
  const corpus = buildCorpus({
    path: opts.corpusPath,
    sizeBytes: opts.corpusSize ?? DEFAULT_CORPUS_BYTES,
    seed: opts.seed,
    tokenizer: baseline?.tokenizer,
  });
  progress({ phase: 'corpus', fraction: 1, detail: `${(corpus.bytes / 1e6).toFixed(2)} MB sha256 ${corpus.sha256.slice(0, 12)}` });

  // Agreement (and warm-up).
  const agreement = new Map<EngineName, AgreementPass>();
  for (const [i, e] of engines.entries()) {
    progress({ phase: 'agreement', fraction: i / engines.length, detail: e.name });
    // The reference of a group (the oracle, else promptenc-js) gets a larger share: every
    // engine is compared on the documents both covered.
    const isRef = e.name === 'hf-tokenizers' || (e.name === 'promptenc-js' && !engines.some((x) => x.name === 'hf-tokenizers'));
    agreement.set(e.name, await agreementPass(e, corpus, isRef ? agreeMs * 2 : agreeMs));
  }
  progress({ phase: 'agreement', fraction: 1 });
  // The reference of each vocabulary group: the Rust tokenizers oracle when present, else
  // promptenc-js (HF's own JS port), else the first engine of the group.
  const groups = new Map<string, Engine[]>();
  for (const e of engines) groups.set(e.vocabulary, [...(groups.get(e.vocabulary) ?? []), e]);
  const agrees = new Map<EngineName, boolean | null>();
  const disagreeing: EngineName[] = [];
  const differences: Difference[] = [];
  let reference: EngineName | null = null;
  for (const group of groups.values()) {
    const ref = group.find((e) => e.name === 'hf-tokenizers') ?? group.find((e) => e.name === 'promptenc-js') ?? group[0]!;
    reference ??= ref.name;
    // Every engine of the group is compared on the same leading documents: those all covered
    // (all of them without a budget). tokens and hash are then reported at that prefix.
    const common = Math.min(...group.map((e) => agreement.get(e.name)!.prefix.length));
    for (const e of group) {
      const a = agreement.get(e.name)!;
      const at = a.prefix[common - 1];
      if (at) {
        a.tokens = at.tokens;
        a.hash = at.hash;
      }
      a.prefix.length = common;
    }
    const r = agreement.get(ref.name)!;
    for (const e of group) {
      const a = agreement.get(e.name)!;
      const ok = group.length === 1 ? null : common > 0 && a.tokens === r.tokens && a.hash === r.hash;
      agrees.set(e.name, ok);
      if (ok === false) {
        disagreeing.push(e.name);
        const d = await firstDifference(e, ref, corpus, baseline?.tokenizer);
        if (d) differences.push(d);
      }
    }
  }

  const enc = await alternate(engines, 'encode', corpus, seconds, turnMs, (f) => progress({ phase: 'encode', fraction: f }));
  let cnt: Map<EngineName, Samples> | undefined;
  if (!opts.skip?.count) cnt = await alternate(engines, 'count', corpus, countSeconds, turnMs, (f) => progress({ phase: 'count', fraction: f }));

  const base = (m: Map<EngineName, { mbps: number[] }> | undefined) => (baseline && m ? spread(m.get(baseline.name)!.mbps).median : NaN);
  const baseEnc = base(enc);
  const baseCpu = baseline ? spread(enc.get(baseline.name)!.mbpsCpu).median : NaN;
  const baseCnt = base(cnt);
  const results: Array<EngineResult | MissingEngine> = slots.map((s) => {
    if (s.status !== 'ok') return s;
    const a = agreement.get(s.name)!;
    const mbps = spread(enc.get(s.name)!.mbps);
    const r: EngineResult = {
      name: s.name,
      status: 'ok',
      package: s.package,
      version: s.version,
      vocabulary: s.vocabulary,
      loadMs: s.loadMs,
      importMs: s.importMs,
      rssAfterLoadMB: s.rssAfterLoad / 1048576,
      encode: {
        mbps,
        tokensPerSec: spread(enc.get(s.name)!.tps),
        turns: mbps.n,
        ratio: Number.isFinite(baseEnc) ? mbps.median / baseEnc : null,
        cpuShare: spread(enc.get(s.name)!.share).median,
        mbpsPerCpuSecond: spread(enc.get(s.name)!.mbpsCpu).median,
        cpuRatio: Number.isFinite(baseCpu) ? spread(enc.get(s.name)!.mbpsCpu).median / baseCpu : null,
      },
      agreement: {
        tokens: a.tokens,
        idsHash: a.hash.toString(16).padStart(8, '0'),
        agrees: agrees.get(s.name) ?? null,
        passMs: a.ms,
        ...(total !== undefined ? { documentsChecked: a.prefix.length } : {}),
      },
    };
    if (cnt) {
      const c = spread(cnt.get(s.name)!.mbps);
      r.count = { mbps: c, api: s.countApi, ratio: Number.isFinite(baseCnt) ? c.median / baseCnt : null };
    }
    return r;
  });

  const result: BenchResult = {
    schema: 'promptenc-bench/1',
    date: new Date().toISOString(),
    model: opts.source,
    tokenizerPath: context.tokenizerPath,
    vocabulary: context.vocabulary,
    machine: {
      cpu: cpuModel(),
      cores: os.cpus().length,
      node: process.version,
      platform: process.platform,
      arch: process.arch,
      totalMemMB: Math.round(os.totalmem() / 1048576),
      loadavgStart,
      loadavgEnd: [],
    },
    corpus: {
      sha256: corpus.sha256,
      bytes: corpus.bytes,
      documents: corpus.documents.length,
      composition: corpus.composition,
      source: corpus.source,
      seed: corpus.seed,
    },
    settings: { seconds, threads, turnMs, ...(total !== undefined ? { totalSeconds: total } : {}) },
    baseline: baseline?.name ?? null,
    engines: results,
    versions: Object.fromEntries(slots.map((s) => [s.name, s.version ?? 'not installed'])),
    agreement: {
      ok: disagreeing.length === 0,
      reference,
      disagreeing,
      differences,
      ...(engines.length < 2 ? { note: 'only one engine loaded: nothing to compare' } : {}),
    },
    peakRssMB: 0,
    durationMs: 0,
  };

  // encodeChat: promptenc only (peers have no HF chat templates).
  if (!opts.skip?.chat) {
    const pe = engines.filter((e) => e.tokenizer);
    const { label, messages } = await loadMessages(opts.messagesPath);
    if (!pe[0]?.tokenizer?.chatTemplate) {
      result.chat = { messages: label, engines: [], skipped: `${opts.source} has no chat template` };
    } else {
      result.chat = { messages: label, engines: [] };
      const per = total !== undefined ? Math.max(0.05, (total * 0.1) / Math.max(1, pe.length)) : Math.max(0.2, Math.min(1, seconds / 4));
      for (const [i, e] of pe.entries()) {
        progress({ phase: 'chat', fraction: i / pe.length, detail: e.name });
        const tok = e.tokenizer!;
        const fixed = { now: () => new Date(Date.UTC(2025, 0, 1)) };
        const tokens = tok.encodeChat(messages, fixed).length;
        const [renderUs, encodeChatUs] = perCallUs([() => tok.renderChat(messages, fixed), () => tok.encodeChat(messages, fixed)], per);
        result.chat.engines.push({
          name: e.name,
          renderUs: renderUs!,
          encodeChatUs: encodeChatUs!,
          tokens,
        });
      }
    }
  }

  // encodeBatch scaling: 1..threads, promptenc only (we control its threads; Rust tokenizers'
  // encodeBatch uses its own pool, and the JS peers have no batch API).
  if (!opts.skip?.batch) {
    const texts: string[] = [];
    let bytes = 0;
    for (const d of corpus.documents) {
      if (bytes >= 1_000_000) break;
      texts.push(d.text);
      bytes += d.bytes;
    }
    result.batch = { bytes, texts: texts.length, engines: [] };
    // With a total budget only the native engine's curve is drawn (a JS batch of 1 MB alone
    // takes about a second per point).
    const pe = engines.filter((e) => e.encodeBatch && (total === undefined || e.name === 'promptenc-native'));
    const points = pe.length * threads;
    const pointSeconds = total !== undefined ? (total * 0.1) / Math.max(1, points) : seconds / 2 / threads;
    let done = 0;
    for (const e of pe) {
      const curve: Array<{ threads: number; mbps: Spread }> = [];
      for (let t = 1; t <= threads; t++) {
        progress({ phase: 'batch', fraction: done++ / points, detail: `${e.name} ×${t}` });
        const samples: number[] = [];
        const end = now() + BigInt(Math.round(pointSeconds * 1e9));
        do {
          const t0 = now();
          await e.encodeBatch!(texts, t);
          samples.push(bytes / 1e6 / (msSince(t0) / 1000));
        } while (now() < end);
        curve.push({ threads: t, mbps: spread(samples) });
      }
      result.batch.engines.push({ name: e.name, points: curve });
    }
    progress({ phase: 'batch', fraction: 1 });
  }

  for (const e of engines) e.dispose?.();
  // maxRSS is in kilobytes.
  result.peakRssMB = process.resourceUsage().maxRSS / 1024;
  result.machine.loadavgEnd = os.loadavg().map((x) => Math.round(x * 100) / 100);
  result.durationMs = msSince(started);
  result.loadMs = Number(loadedAt - started) / 1e6;
  result.loadCpuMs = (loadCpu.user + loadCpu.system) / 1000;
  return result;
}

const fmt = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '–');

/** A Markdown table of one run: encode MB/s (median [min–max]), tokens/s, ratio, agreement. */
export function formatTable(r: BenchResult): string {
  const base = r.baseline ?? 'promptenc';
  const lines = [
    `model ${r.model} · corpus ${(r.corpus.bytes / 1e6).toFixed(2)} MB sha256 ${r.corpus.sha256.slice(0, 12)} · ${r.machine.cpu} · node ${r.machine.node}`,
    '',
    `| engine | version | encode MB/s median [IQR] (min–max) | Mtok/s | ×${base} | CPU share | MB/CPU-s | count MB/s | load ms | agrees |`,
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const e of r.engines) {
    if (e.status !== 'ok') {
      lines.push(`| ${e.name} | ${e.version ?? '—'} | missing: ${e.reason.replace(/\|/g, '\\|')} | | | | | | | |`);
      continue;
    }
    const m = e.encode.mbps;
    lines.push(
      `| ${e.name} | ${e.version} | ${fmt(m.median, 2)} [${fmt(m.q1, 2)}–${fmt(m.q3, 2)}] (${fmt(m.min, 2)}–${fmt(m.max, 2)}) | ${fmt(e.encode.tokensPerSec.median / 1e6, 3)} | ${e.encode.ratio === null ? '–' : fmt(e.encode.ratio, 3)} | ${fmt(e.encode.cpuShare, 2)} | ${fmt(e.encode.mbpsPerCpuSecond, 2)} | ${e.count ? fmt(e.count.mbps.median, 2) : '–'} | ${fmt(e.loadMs, 0)} | ${e.agreement.agrees === null ? 'n/a' : e.agreement.agrees ? `yes (${e.agreement.tokens})` : `NO (${e.agreement.tokens})`} |`,
    );
  }
  if (!r.agreement.ok) {
    lines.push('', `TOKEN MISMATCH vs ${r.agreement.reference}: ${r.agreement.disagreeing.join(', ')}`);
    for (const d of r.agreement.differences) {
      lines.push(
        `  ${d.engine}: document ${d.document} (${d.kind}) token ${d.tokenIndex}: ${d.reference} [${d.referenceIds.join(' ')}] ${JSON.stringify(d.referenceText ?? '')} vs [${d.engineIds.join(' ')}]`,
      );
    }
  }
  const la = r.machine.loadavgStart[0] ?? 0;
  if (la > r.machine.cores) lines.push(`note: load average ${la} on ${r.machine.cores} cores at start: other processes were competing for the CPU`);
  if (r.chat) {
    lines.push('');
    if (r.chat.skipped) lines.push(`encodeChat: skipped (${r.chat.skipped})`);
    for (const c of r.chat.engines)
      lines.push(
        `encodeChat ${c.name}: render ${fmt(c.renderUs.median, 1)} µs, render+encode ${fmt(c.encodeChatUs.median, 1)} µs (${c.tokens} tokens, ${r.chat.messages})`,
      );
  }
  if (r.batch) {
    for (const b of r.batch.engines) lines.push(`encodeBatch ${b.name}: ${b.points.map((p) => `${p.threads}t ${fmt(p.mbps.median, 2)} MB/s`).join(', ')}`);
  }
  lines.push(
    '',
    "CPU share = process CPU time ÷ wall time during the engine's turns (below ~0.95 something else ran on the core);",
    'MB/CPU-s = MB encoded per CPU-second, which a shared machine disturbs far less than MB/s.',
    `peak RSS ${fmt(r.peakRssMB, 0)} MB · ${fmt(r.durationMs / 1000, 1)} s${r.loadMs !== undefined ? ` (loading engines ${fmt(r.loadMs / 1000, 1)} s${r.loadCpuMs !== undefined ? `, ${fmt(r.loadCpuMs / 1000, 1)} CPU-s` : ''})` : ''}${r.settings.totalSeconds !== undefined ? ` · measuring budget ${r.settings.totalSeconds} s` : ''}`,
  );
  return lines.join('\n');
}
