import { Worker } from 'node:worker_threads';
import type { ModelSpec } from './models.js';
import type { SessionLimits } from './sessions.js';
import type { JobResult } from './execute.js';

/** What a worker thread loads: the same models as the event loop, and its share of the session budget. */
export interface WorkerInit {
  specs: ModelSpec[];
  sessions: SessionLimits;
}

export type Job =
  | { kind: 'http'; method: string; path: string; raw?: Uint8Array; body?: unknown }
  /** A batch of JSONL records for `encode --jsonl` / `chat --jsonl` (see src/cli/jsonl.ts). */
  | { kind: 'lines'; mode: 'text' | 'chat'; lines: string[]; options: Record<string, unknown> };

export interface LinesResult {
  lines: string[];
}

interface Slot {
  worker: Worker;
  pending: Map<number, { resolve(r: unknown): void; reject(e: Error): void }>;
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
 */
export class WorkerPool {
  private readonly slots: Slot[] = [];
  private nextId = 1;
  private closing = false;

  private constructor(
    private readonly init: WorkerInit,
    private readonly url: URL,
  ) {}

  static async start(threads: number, init: WorkerInit): Promise<WorkerPool> {
    const pool = new WorkerPool(init, new URL('./worker.js', import.meta.url));
    await Promise.all(Array.from({ length: threads }, (_, i) => pool.spawn(i)));
    return pool;
  }

  get size(): number {
    return this.slots.length;
  }

  private spawn(index: number): Promise<void> {
    const worker = new Worker(this.url, { workerData: this.init });
    const slot: Slot = { worker, pending: new Map() };
    this.slots[index] = slot;
    return new Promise((resolve, reject) => {
      let ready = false;
      worker.on('message', (m: { ready?: true; id?: number; result?: unknown; fatal?: string }) => {
        if (m.ready) {
          ready = true;
          resolve();
          return;
        }
        if (m.fatal !== undefined) {
          if (!ready) reject(new Error(m.fatal));
          return;
        }
        const p = slot.pending.get(m.id!);
        slot.pending.delete(m.id!);
        p?.resolve(m.result);
      });
      worker.on('error', (err) => {
        if (!ready) reject(err);
      });
      worker.on('exit', (code) => {
        // A thread that died (out of memory, a native crash) fails its jobs, and is replaced.
        for (const p of slot.pending.values()) p.reject(new Error(`worker thread ${index} exited with code ${code}`));
        slot.pending.clear();
        if (ready && !this.closing && this.slots[index] === slot) void this.spawn(index).catch(() => undefined);
      });
    });
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
    const slot = this.pick(sessionKey);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      slot.pending.set(id, { resolve, reject });
      // The raw body moves to the thread (no copy); the event loop is done with it.
      const transfer = job.kind === 'http' && job.raw ? [job.raw.buffer as ArrayBuffer] : [];
      slot.worker.postMessage({ id, job }, transfer);
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
