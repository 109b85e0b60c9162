import { Worker } from 'node:worker_threads';
import { PromptencError } from '../errors.js';
import type { ModelSpec } from './models.js';
import type { SessionLimits } from './sessions.js';
import type { JobResult } from './execute.js';

/** What a worker thread loads: the same models as the event loop, and its share of the session budget. */
export interface WorkerInit {
  specs: ModelSpec[];
  sessions: SessionLimits;
}

export interface PoolLimits {
  /** A job running longer than this is stopped (its thread is replaced) and answered with E_LIMIT. */
  jobTimeoutMs: number;
  /** V8 old-space limit of each thread; a job that exceeds it kills only its thread. */
  threadMemoryMb: number;
}

export type Job =
  | { kind: 'http'; method: string; path: string; raw?: Uint8Array; body?: unknown }
  /** A batch of JSONL records for `encode --jsonl` / `chat --jsonl` (see src/server/lines.ts). */
  | { kind: 'lines'; mode: 'text' | 'chat'; lines: string[]; options: Record<string, unknown> };

export interface LinesResult {
  lines: string[];
}

interface Pending {
  job: Job;
  resolve(r: unknown): void;
  reject(e: Error): void;
  /** Retried once on a new thread when another job killed this one's thread. */
  retried: boolean;
}

interface Slot {
  worker: Worker;
  /** In dispatch order; a thread runs its jobs one after another, so the first one is running. */
  pending: Map<number, Pending>;
  timer?: NodeJS.Timeout;
  ready: Promise<void>;
  /** Set when the pool stopped the thread over a time limit: its running job is already answered. */
  timedOut?: boolean;
}

/** FNV-1a: a stable spread of session ids over the threads, so a conversation keeps meeting its session. */
function hash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * Worker threads that each hold their own tokenizers and sessions. Large bodies are parsed,
 * validated, rendered and encoded there, so the event loop keeps answering small requests.
 * A job with a session key always goes to the same thread; others to the least busy one.
 * A job over its time or memory limit (a hostile template) loses its thread, not the process:
 * it is answered with E_LIMIT, the thread is replaced, and the jobs queued behind it run there.
 */
export class WorkerPool {
  private readonly slots: Slot[] = [];
  private nextId = 1;
  private closing = false;

  private constructor(
    private readonly init: WorkerInit,
    private readonly limits: PoolLimits,
  ) {}

  static async start(threads: number, init: WorkerInit, limits: PoolLimits): Promise<WorkerPool> {
    const pool = new WorkerPool(init, limits);
    for (let i = 0; i < threads; i++) pool.spawn(i);
    await Promise.all(pool.slots.map((s) => s.ready));
    return pool;
  }

  private spawn(index: number, carried: Map<number, Pending> = new Map()): Slot {
    const worker = new Worker(new URL('./worker.js', import.meta.url), {
      workerData: this.init,
      resourceLimits: { maxOldGenerationSizeMb: this.limits.threadMemoryMb },
    });
    let ready!: () => void;
    let failed!: (e: Error) => void;
    const slot: Slot = { worker, pending: new Map(carried), ready: new Promise((res, rej) => ((ready = res), (failed = rej))) };
    this.slots[index] = slot;
    let started = false;
    worker.on('message', (m: { ready?: true; id?: number; result?: unknown; fatal?: string }) => {
      if (m.ready) {
        started = true;
        ready();
        for (const [id, p] of carried) if (slot.pending.get(id) === p) this.post(slot, id, p.job);
        this.arm(slot);
        return;
      }
      if (m.fatal !== undefined) return failed(new Error(`worker thread: ${m.fatal}`));
      const p = slot.pending.get(m.id!);
      slot.pending.delete(m.id!);
      this.arm(slot);
      p?.resolve(m.result);
    });
    worker.on('error', (err) => {
      if (!started) failed(err);
    });
    worker.on('exit', () => this.lost(index, slot, started));
    return slot;
  }

  /** The thread of `slot` ended: fail its running job, carry the others to a new thread. */
  private lost(index: number, slot: Slot, started: boolean): void {
    clearTimeout(slot.timer);
    if (this.closing || this.slots[index] !== slot) {
      for (const p of slot.pending.values()) p.reject(new PromptencError('E_INTERNAL', 'the server is shutting down'));
      return;
    }
    const carried = new Map<number, Pending>();
    // Without a timeout the running job (the first) ended the thread: out of memory or a crash.
    let culprit = !slot.timedOut;
    for (const [id, p] of slot.pending) {
      // A raw body moved to the dead thread is gone; its client has to send it again.
      const moved = p.job.kind === 'http' && p.job.raw !== undefined;
      if (culprit) {
        p.reject(new PromptencError('E_LIMIT', `the request exceeded the worker thread's memory limit (${this.limits.threadMemoryMb} MB) or crashed it; the thread was replaced`));
      } else if (p.retried || moved) {
        p.reject(new PromptencError('E_INTERNAL', 'the worker thread holding this request was replaced (another request exceeded its limits); send it again'));
      } else {
        p.retried = true;
        carried.set(id, p);
      }
      culprit = false;
    }
    if (started) this.spawn(index, carried);
    else for (const p of carried.values()) p.reject(new PromptencError('E_INTERNAL', 'a worker thread failed to start'));
  }

  /** One timer per thread, for the job it runs now. */
  private arm(slot: Slot): void {
    clearTimeout(slot.timer);
    const running = slot.pending.entries().next();
    if (running.done) return;
    const [id, p] = running.value;
    slot.timer = setTimeout(() => {
      if (!slot.pending.has(id)) return;
      slot.pending.delete(id);
      p.reject(new PromptencError('E_LIMIT', `the request took longer than the server's limit of ${this.limits.jobTimeoutMs / 1000} s (a chat template that does not end?); it was stopped`));
      // terminate() stops a thread even in a busy loop; 'exit' then replaces it.
      slot.timedOut = true;
      void slot.worker.terminate();
    }, this.limits.jobTimeoutMs);
    slot.timer.unref();
  }

  private post(slot: Slot, id: number, job: Job): void {
    // The raw body moves to the thread (no copy) on its first post; the event loop is done with it.
    const transfer = job.kind === 'http' && job.raw && job.raw.buffer.byteLength > 0 ? [job.raw.buffer as ArrayBuffer] : [];
    slot.worker.postMessage({ id, job }, transfer);
  }

  private pick(sessionKey: string | undefined): Slot {
    if (sessionKey !== undefined) return this.slots[hash(sessionKey) % this.slots.length]!;
    let best = this.slots[0]!;
    for (const s of this.slots) if (s.pending.size < best.pending.size) best = s;
    return best;
  }

  run(job: Job & { kind: 'http' }, sessionKey?: string): Promise<JobResult>;
  run(job: Job & { kind: 'lines' }): Promise<LinesResult>;
  run(job: Job, sessionKey?: string): Promise<unknown> {
    if (this.closing) return Promise.reject(new PromptencError('E_INTERNAL', 'the server is shutting down'));
    const slot = this.pick(sessionKey);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      slot.pending.set(id, { job, resolve, reject, retried: false });
      this.post(slot, id, job);
      if (slot.pending.size === 1) this.arm(slot);
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
