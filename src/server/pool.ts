import { Worker } from 'node:worker_threads';
import { type ErrorCode, PromptencError } from '../errors.js';
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
  /** How many of them are error records. */
  failed: number;
}

interface Pending {
  id: number;
  job: Job;
  resolve(r: unknown): void;
  reject(e: Error): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  /** Jobs not yet sent: a thread gets one job at a time, so a lost thread loses only the job it ran. */
  queue: Pending[];
  running?: Pending;
  timer?: NodeJS.Timeout;
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
 * it is answered with E_LIMIT and a new thread takes over the queue.
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
    try {
      await Promise.all(Array.from({ length: threads }, (_, i) => pool.spawn(i, [])));
    } catch (err) {
      // The threads that did load would keep the process alive after the caller reports the error.
      await pool.close();
      throw err;
    }
    return pool;
  }

  /** A new thread at `index`, taking over `queue`; resolves once its models are loaded. */
  private spawn(index: number, queue: Pending[]): Promise<void> {
    const worker = new Worker(new URL('./worker.js', import.meta.url), {
      workerData: this.init,
      resourceLimits: { maxOldGenerationSizeMb: this.limits.threadMemoryMb },
    });
    const slot: Slot = { worker, ready: false, queue };
    this.slots[index] = slot;
    return new Promise((resolve, reject) => {
      worker.on('message', (m: { ready?: true; id?: number; result?: unknown; fatal?: string; code?: ErrorCode }) => {
        if (m.ready) {
          slot.ready = true;
          resolve();
          this.dispatch(slot);
        } else if (m.fatal !== undefined) {
          reject(m.code !== undefined ? new PromptencError(m.code, m.fatal) : new Error(`worker thread: ${m.fatal}`));
        } else if (slot.running?.id === m.id) {
          const p = slot.running!;
          this.finish(slot);
          p.resolve(m.result);
        }
      });
      worker.on('error', (err) => {
        if (!slot.ready) reject(err);
      });
      worker.on('exit', () => {
        if (!slot.ready) reject(new Error('a worker thread exited while loading its models'));
        // Out of memory or a crash while running a job: that job fails, the queue moves on.
        if (this.slots[index] === slot && !this.closing)
          this.replace(
            index,
            slot,
            `the request exceeded the worker thread's memory limit (${this.limits.threadMemoryMb} MB) or crashed it; the thread was replaced`,
          );
        else for (const p of slot.queue.splice(0)) p.reject(new PromptencError('E_INTERNAL', 'the server is shutting down'));
      });
    });
  }

  private replace(index: number, slot: Slot, why: string): void {
    const running = slot.running;
    // Not finish(): its dispatch would hand the next queued job to the thread being terminated,
    // whose timer then fails that job a timeout later and replaces the slot again (orphaning
    // the replacement thread). The old thread takes nothing more.
    clearTimeout(slot.timer);
    slot.running = undefined;
    slot.ready = false;
    running?.reject(new PromptencError('E_LIMIT', why));
    const queue = slot.queue.splice(0);
    void slot.worker.terminate();
    this.spawn(index, queue).catch((err: unknown) => {
      for (const p of this.slots[index]!.queue.splice(0)) p.reject(new PromptencError('E_INTERNAL', `no worker thread: ${(err as Error).message}`));
    });
  }

  private finish(slot: Slot): void {
    clearTimeout(slot.timer);
    slot.running = undefined;
    this.dispatch(slot);
  }

  private dispatch(slot: Slot): void {
    if (!slot.ready || slot.running || slot.queue.length === 0 || this.closing) return;
    const p = slot.queue.shift()!;
    slot.running = p;
    const index = this.slots.indexOf(slot);
    slot.timer = setTimeout(() => {
      // terminate() stops a thread even inside an endless loop.
      if (slot.running === p)
        this.replace(
          index,
          slot,
          `the request took longer than the server's limit of ${this.limits.jobTimeoutMs / 1000} s (a chat template that does not end?); it was stopped`,
        );
    }, this.limits.jobTimeoutMs);
    // The raw body moves to the thread (no copy); the event loop is done with it.
    const transfer = p.job.kind === 'http' && p.job.raw ? [p.job.raw.buffer as ArrayBuffer] : [];
    slot.worker.postMessage({ id: p.id, job: p.job }, transfer);
  }

  get size(): number {
    return this.slots.length;
  }

  /** Jobs waiting or running on the threads. */
  get queued(): number {
    return this.slots.reduce((n, s) => n + s.queue.length + (s.running ? 1 : 0), 0);
  }

  /**
   * preferKey: the key names a thread that likely holds a cache for the job (a recognized
   * prefix), not a session: it is taken only while no other thread is less busy, so bodies that
   * share their opening (one long system prompt) do not all queue on one thread.
   */
  private pick(sessionKey: string | undefined, preferKey = false): Slot {
    const load = (s: Slot) => s.queue.length + (s.running ? 1 : 0);
    const home = sessionKey !== undefined ? this.slots[hash(sessionKey) % this.slots.length]! : undefined;
    if (home && (!preferKey || load(home) === 0)) return home;
    let best = home ?? this.slots[0]!;
    for (const s of this.slots) if (load(s) < load(best)) best = s;
    return best;
  }

  run(job: Job & { kind: 'http' }, sessionKey?: string, preferKey?: boolean): Promise<JobResult>;
  run(job: Job & { kind: 'lines' }): Promise<LinesResult>;
  run(job: Job, sessionKey?: string, preferKey?: boolean): Promise<unknown> {
    if (this.closing) return Promise.reject(new PromptencError('E_INTERNAL', 'the server is shutting down'));
    const slot = this.pick(sessionKey, preferKey);
    return new Promise((resolve, reject) => {
      slot.queue.push({ id: this.nextId++, job, resolve, reject });
      this.dispatch(slot);
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
