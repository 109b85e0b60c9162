/**
 * `promptenc bench --workload NAME[,NAME…|all]`: encode throughput per named real-text
 * workload (workloads.ts), cold and warm, promptenc against every peer of the vocabulary.
 *
 * Method:
 * - Agreement first, per workload: each engine encodes every document once; token count and
 *   an FNV-1a hash of the id stream are compared with the reference of the vocabulary (the
 *   Rust `tokenizers` oracle when loaded, else promptenc-js, else promptenc-native). An engine
 *   that disagrees gets no ratio. That pass also warms the engine up.
 * - Warm: passes over the whole workload, alternating engines (A B C A B C …) so machine noise
 *   spreads over all of them; each engine gets an equal share of the time budget (at least two
 *   timed passes). A pass is timed by the process CPU time it used (process.cpuUsage), which a
 *   shared machine disturbs far less than wall time; wall MB/s is reported next to it.
 * - Cold: a fresh tokenizer of the engine (Engine.fresh: empty word caches and memos), one
 *   pass, timed the same way, repeated while the engine's cold share of the budget lasts
 *   (at least once). Building the fresh tokenizer is not timed.
 * - Ratios are promptenc-native's MB per CPU-second over the peer's, medians of passes in
 *   the same run: > 1 means promptenc is faster.
 */
import os from 'node:os';
import { loadEngines, type Engine, type EngineName, type MissingEngine } from './engines.js';
import { cpuModel, type ProgressEvent, spread, type Spread } from './run.js';
import { buildWorkload, type WorkloadName } from './workloads.js';

/** Peers of a workload run unless --peers says otherwise. */
export const FAST_PEERS: readonly EngineName[] = ['hypertok', 'gpt-tokenizer', 'ai-tokenizer', 'tiktoken'];

export interface WorkloadBenchOptions {
  source: string;
  workloads: readonly WorkloadName[];
  /** Bytes per workload (rank-table is always the whole file). */
  sizeBytes?: number;
  seed?: number;
  /** Measuring time per workload, split evenly between the engines. Default 2. */
  seconds?: number;
  /** Peers besides promptenc-native (default: the fast peers; the oracle and promptenc-js run at ~1 MB/s). */
  peers?: readonly EngineName[];
  /** Skip the cold runs. */
  warmOnly?: boolean;
  /**
   * Cold passes per engine even past the budget (default 1). One cold pass of 1 MB is a few ms, and
   * a single one moved by a factor of 3 between runs; a median needs several.
   */
  minColdPasses?: number;
  onProgress?: (e: ProgressEvent) => void;
}

export interface WorkloadCell {
  engine: EngineName;
  tokens: number;
  idsHash: string;
  agrees: boolean | null;
  /** MB per CPU-second and wall MB/s per pass. */
  warm: { cpuMbps: Spread; mbps: Spread };
  cold: { cpuMbps: Spread; mbps: Spread } | null;
  /** promptenc-native ÷ this engine (MB per CPU-second); null when it disagrees or is promptenc itself. */
  warmRatio: number | null;
  coldRatio: number | null;
}

export interface WorkloadRun {
  name: WorkloadName;
  bytes: number;
  sha256: string;
  documents: number;
  source: string;
  reference: EngineName | null;
  cells: WorkloadCell[];
}

export interface WorkloadBenchResult {
  schema: 'promptenc-bench-workloads/1';
  date: string;
  model: string;
  vocabulary: string;
  machine: { cpu: string; cores: number; node: string; loadavgStart: number[]; loadavgEnd: number[] };
  settings: { seconds: number; sizeBytes: number | null; seed: number | null };
  engines: Array<{ name: EngineName; version?: string; status: 'ok' | 'missing'; reason?: string }>;
  workloads: WorkloadRun[];
  durationMs: number;
}

const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const wallNow = () => Number(process.hrtime.bigint()) / 1e6;

function fnv(h: number, ids: ArrayLike<number>): number {
  for (let i = 0; i < ids.length; i++) {
    h ^= ids[i]! & 0xffff;
    h = Math.imul(h, 0x01000193) >>> 0;
    h ^= ids[i]! >>> 16;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

type EncodeFn = (text: string) => ArrayLike<number> | Promise<ArrayLike<number>>;

/** The agreement pass (untimed): tokens and the hash of every id. */
async function agreementPass(encode: EncodeFn, docs: readonly { text: string }[]) {
  let tokens = 0;
  let hash = 0x811c9dc5;
  for (const d of docs) {
    const r = encode(d.text);
    const ids = r instanceof Promise ? await r : r;
    tokens += ids.length;
    hash = fnv(hash, ids);
  }
  return { tokens, hash };
}

/**
 * One timed pass over the documents: CPU ms, wall ms and the token count. Only the encode calls
 * are timed: hashing every id here (as the agreement pass does) cost the same few ms per pass for
 * every engine, a third of a fast engine's pass, which pulled every ratio towards 1. The count
 * still shows a pass that returned something else than the agreement pass did.
 */
async function pass(encode: EncodeFn, docs: readonly { text: string }[]) {
  let tokens = 0;
  const c0 = cpuNow();
  const w0 = wallNow();
  for (const d of docs) {
    const r = encode(d.text);
    const ids = r instanceof Promise ? await r : r;
    tokens += ids.length;
  }
  return { cpuMs: Math.max(cpuNow() - c0, 0.001), wallMs: Math.max(wallNow() - w0, 0.001), tokens };
}

export async function runWorkloadBench(opts: WorkloadBenchOptions): Promise<WorkloadBenchResult> {
  const started = wallNow();
  const loadavgStart = os.loadavg().map((x) => Math.round(x * 100) / 100);
  const seconds = opts.seconds ?? 2;
  const progress = opts.onProgress ?? (() => {});
  const peers = opts.peers ?? FAST_PEERS;
  const names: EngineName[] = ['promptenc-native', ...peers.filter((p) => p !== 'promptenc-native')];
  progress({ phase: 'load', fraction: 0 });
  const { context, slots } = await loadEngines(opts.source, names);
  const engines = slots.filter((s): s is Engine => s.status === 'ok');
  const base = engines.find((e) => e.name === 'promptenc-native');
  progress({ phase: 'load', fraction: 1 });
  const runs: WorkloadRun[] = [];
  for (const [wi, name] of opts.workloads.entries()) {
    const corpus = buildWorkload(name, { sizeBytes: opts.sizeBytes, seed: opts.seed, tokenizer: base?.tokenizer });
    const docs = corpus.documents;
    const mb = corpus.bytes / 1e6;
    const detail = (what: string) => `${name} (${wi + 1}/${opts.workloads.length}) ${what}`;
    // Agreement (and warm-up).
    const agreement = new Map<EngineName, { tokens: number; hash: number }>();
    for (const e of engines) {
      progress({ phase: 'agreement', fraction: wi / opts.workloads.length, detail: detail(e.name) });
      agreement.set(e.name, await agreementPass((t) => e.encode(t), docs));
    }
    // A timed pass whose token count is not the agreement pass's: that engine's ids are not stable.
    const unstable = new Set<EngineName>();
    const checkCount = (e: { name: EngineName }, tokens: number) => {
      if (tokens !== agreement.get(e.name)!.tokens) unstable.add(e.name);
    };
    const ref = engines.find((e) => e.name === 'hf-tokenizers') ?? engines.find((e) => e.name === 'promptenc-js') ?? base ?? engines[0];
    const refA = ref ? agreement.get(ref.name) : undefined;
    const agrees = (e: Engine) =>
      engines.length < 2 || !refA
        ? null
        : !unstable.has(e.name) && !unstable.has(ref!.name) && agreement.get(e.name)!.tokens === refA.tokens && agreement.get(e.name)!.hash === refA.hash;
    // Each engine's share of the budget; the first agreement pass shows how long a pass takes.
    const share = (seconds * 1000) / Math.max(1, engines.length);
    const warmShare = opts.warmOnly ? share : share * 0.6;
    const warm = new Map<EngineName, { cpu: number[]; wall: number[]; spent: number }>(engines.map((e) => [e.name, { cpu: [], wall: [], spent: 0 }]));
    for (;;) {
      const todo = engines.filter((e) => {
        const w = warm.get(e.name)!;
        return w.cpu.length < 2 || w.spent < warmShare;
      });
      if (todo.length === 0) break;
      for (const e of todo) {
        const r = await pass((t) => e.encode(t), docs);
        checkCount(e, r.tokens);
        const w = warm.get(e.name)!;
        w.cpu.push(mb / (r.cpuMs / 1000));
        w.wall.push(mb / (r.wallMs / 1000));
        w.spent += r.wallMs;
      }
      const least = Math.min(...[...warm.values()].map((w) => Math.min(1, w.spent / warmShare)));
      progress({ phase: 'warm', fraction: least, detail: detail('') });
    }
    const cold = new Map<EngineName, { cpu: number[]; wall: number[]; spent: number }>();
    if (!opts.warmOnly) {
      const coldShare = share - warmShare;
      const minCold = Math.max(1, opts.minColdPasses ?? 1);
      const rounds = Math.max(5, minCold);
      for (let round = 0; round < rounds; round++) {
        let any = false;
        for (const e of engines) {
          if (!e.fresh) continue;
          const c = cold.get(e.name) ?? { cpu: [], wall: [], spent: 0 };
          cold.set(e.name, c);
          // The budget counts building the fresh tokenizer too (a load is often longer than a pass).
          if (c.cpu.length >= minCold && c.spent + c.spent / c.cpu.length > coldShare) continue;
          progress({ phase: 'cold', fraction: round / rounds, detail: detail(e.name) });
          const w0 = wallNow();
          const f = await e.fresh();
          const r = await pass(f.encode, docs);
          checkCount(e, r.tokens);
          f.dispose?.();
          c.spent += wallNow() - w0;
          c.cpu.push(mb / (r.cpuMs / 1000));
          c.wall.push(mb / (r.wallMs / 1000));
          any = true;
        }
        if (!any) break;
      }
    }
    const baseWarm = base ? spread(warm.get(base.name)!.cpu).median : NaN;
    const baseCold = base && cold.get(base.name) ? spread(cold.get(base.name)!.cpu).median : NaN;
    const cells: WorkloadCell[] = engines.map((e) => {
      const a = agreement.get(e.name)!;
      const ok = agrees(e);
      const w = warm.get(e.name)!;
      const c = cold.get(e.name);
      const cw = spread(w.cpu).median;
      const cc = c ? spread(c.cpu).median : NaN;
      const comparable = base !== undefined && e !== base && ok === true && agrees(base) !== false;
      return {
        engine: e.name,
        tokens: a.tokens,
        idsHash: a.hash.toString(16).padStart(8, '0'),
        agrees: ok,
        warm: { cpuMbps: spread(w.cpu), mbps: spread(w.wall) },
        cold: c ? { cpuMbps: spread(c.cpu), mbps: spread(c.wall) } : null,
        warmRatio: comparable && Number.isFinite(baseWarm) ? baseWarm / cw : null,
        coldRatio: comparable && Number.isFinite(baseCold) && Number.isFinite(cc) ? baseCold / cc : null,
      };
    });
    runs.push({ name, bytes: corpus.bytes, sha256: corpus.sha256, documents: docs.length, source: corpus.source, reference: ref?.name ?? null, cells });
  }
  for (const e of engines) e.dispose?.();
  return {
    schema: 'promptenc-bench-workloads/1',
    date: new Date().toISOString(),
    model: opts.source,
    vocabulary: context.vocabulary,
    machine: {
      cpu: cpuModel(),
      cores: os.cpus().length,
      node: process.version,
      loadavgStart,
      loadavgEnd: os.loadavg().map((x) => Math.round(x * 100) / 100),
    },
    settings: { seconds, sizeBytes: opts.sizeBytes ?? null, seed: opts.seed ?? null },
    engines: slots.map((s) =>
      s.status === 'ok'
        ? { name: s.name, version: s.version, status: 'ok' as const }
        : { name: s.name, version: s.version, status: 'missing' as const, reason: (s as MissingEngine).reason },
    ),
    workloads: runs,
    durationMs: wallNow() - started,
  };
}

const fmt = (x: number | null | undefined, d = 1) => (x !== null && x !== undefined && Number.isFinite(x) ? x.toFixed(d) : '–');

/** Markdown: one row per workload × engine, with an explanation of the columns. */
export function formatWorkloadTable(r: WorkloadBenchResult): string {
  const lines = [
    `model ${r.model} · ${r.machine.cpu}, ${r.machine.cores} cores · node ${r.machine.node} · load ${r.machine.loadavgStart.join(' ')}`,
    '',
    'MB/CPU-s = MB encoded per CPU-second used by this process (steady under co-tenant load); wall = MB per elapsed second.',
    'warm = repeated passes over the workload with one tokenizer; cold = a fresh tokenizer, one pass (load not timed).',
    '×promptenc = promptenc-native ÷ engine in MB/CPU-s, same run (> 1: promptenc is faster); none when the ids disagree.',
    '',
    '| workload | bytes | sha256 | engine | warm MB/CPU-s | warm wall MB/s | cold MB/CPU-s | ×promptenc warm | ×promptenc cold | ids |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const w of r.workloads) {
    for (const c of w.cells) {
      const ids = c.agrees === null ? `${c.tokens}` : c.agrees ? `agree (${c.tokens})` : `DIFFER (${c.tokens})`;
      lines.push(
        `| ${w.name} | ${w.bytes} | ${w.sha256.slice(0, 12)} | ${c.engine} | ${fmt(c.warm.cpuMbps.median)} | ${fmt(c.warm.mbps.median)} | ${fmt(c.cold?.cpuMbps.median)} | ${fmt(c.warmRatio, 2)} | ${fmt(c.coldRatio, 2)} | ${ids} |`,
      );
    }
  }
  for (const e of r.engines) if (e.status === 'missing') lines.push(`${e.name}: missing: ${e.reason}`);
  const differ = r.workloads.flatMap((w) => w.cells.filter((c) => c.agrees === false).map((c) => `${w.name}/${c.engine}`));
  if (differ.length) lines.push(`ids differ from the reference (no ratio): ${differ.join(', ')}`);
  lines.push(`${fmt(r.durationMs / 1000)} s`);
  return lines.join('\n');
}
