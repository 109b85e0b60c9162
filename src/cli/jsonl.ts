import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { createInterface } from 'node:readline';
import cliProgress from 'cli-progress';
import { PromptencError } from '../errors.js';
import type { BackendChoice } from '../backend/types.js';
import type { ChatOptions } from '../options.js';
import type { LinesOptions } from '../server/lines.js';
import { modelIdOf } from '../server/models.js';
import { WorkerPool, type LinesResult } from '../server/pool.js';
import { UsageError } from './common.js';

export interface JsonlRun {
  /** A file path, or "-" for stdin. */
  input: string;
  mode: 'text' | 'chat';
  source: string;
  backend: BackendChoice;
  /** --encoding: the tiktoken encoding of a .tiktoken rank file, for the worker threads' load. */
  encoding?: string;
  count: boolean;
  addSpecialTokens: boolean;
  splitSpecialTokens?: boolean;
  chat?: ChatOptions;
  threads?: string;
}

/** Records per job: large enough that a thread's round trip is noise, small enough to keep every thread busy. */
const BATCH_LINES = 256;
const BATCH_CHARS = 4 * 1024 * 1024;

/**
 * `encode --jsonl` / `chat --jsonl`: JSONL records in (a file or stdin), one JSON line out per
 * record, in input order, encoded on worker threads (src/server/lines.ts says what a record
 * is). A bar on stderr when it is a terminal. A bad record gives an error line and the run
 * goes on; the exit code is then 1.
 */
export async function runJsonl(run: JsonlRun): Promise<void> {
  const threads = run.threads === undefined ? Math.max(1, availableParallelism() - 1) : Number(run.threads);
  if (!Number.isInteger(threads) || threads < 1 || threads > 64)
    throw new UsageError(`--threads: expected an integer from 1 to 64, received ${JSON.stringify(run.threads)}`);
  const fromStdin = run.input === '-';
  let size = 0;
  if (!fromStdin) {
    try {
      size = (await stat(run.input)).size;
    } catch (err) {
      throw new PromptencError('E_IO', `--jsonl: cannot read ${run.input}: ${(err as Error).message}`);
    }
  }
  const spec = { id: modelIdOf(run.source), source: run.source, backend: run.backend, ...(run.encoding !== undefined && { encoding: run.encoding }) };
  const pool = await WorkerPool.start(
    threads,
    { specs: [spec], sessions: { maxSessions: 0, maxBytes: 0, idleMs: 1000 } },
    { jobTimeoutMs: 3_600_000, threadMemoryMb: 4096 },
  );
  const bar = process.stderr.isTTY
    ? new cliProgress.SingleBar(
        { format: fromStdin ? 'promptenc {records} records' : 'promptenc [{bar}] {percentage}% | {records} records', stream: process.stderr, hideCursor: true },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  bar?.start(fromStdin ? 1 : Math.max(1, size), 0, { records: 0 });
  const options: LinesOptions = {
    count: run.count,
    addSpecialTokens: run.addSpecialTokens,
    splitSpecialTokens: run.splitSpecialTokens === true,
    chat: run.chat,
  };
  const stream = fromStdin ? process.stdin : createReadStream(run.input);
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  // Batches in flight, in input order; at most 2 per thread, so memory stays bounded.
  const inFlight: Array<Promise<LinesResult>> = [];
  let records = 0;
  let failed = 0;
  let bytes = 0;
  const flushOne = async () => {
    const out = await inFlight.shift()!;
    failed += out.failed;
    if (!process.stdout.write(out.lines.join('\n') + '\n')) await new Promise((res) => process.stdout.once('drain', res));
    records += out.lines.length;
    bar?.update(fromStdin ? 0 : Math.min(bytes, size), { records });
  };
  let batch: string[] = [];
  let chars = 0;
  let first = 0;
  const send = async () => {
    if (batch.length === 0) return;
    const job = { kind: 'lines' as const, mode: run.mode, lines: batch, options: { ...options, first } as unknown as Record<string, unknown> };
    first += batch.length;
    inFlight.push(pool.run(job));
    batch = [];
    chars = 0;
    if (inFlight.length >= threads * 2) await flushOne();
  };
  try {
    for await (const line of lines) {
      bytes += Buffer.byteLength(line) + 1;
      if (line.trim() === '') continue;
      batch.push(line);
      chars += line.length;
      if (batch.length >= BATCH_LINES || chars >= BATCH_CHARS) await send();
    }
    await send();
    while (inFlight.length > 0) await flushOne();
  } finally {
    bar?.stop();
    await pool.close();
  }
  if (failed > 0) {
    process.stderr.write(`promptenc: ${failed} of ${records} records failed (their lines hold the error)\n`);
    process.exitCode = 1;
  }
}
