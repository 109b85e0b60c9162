/** A worker thread of the pool (pool.ts): its own tokenizers and sessions; jobs in, results out. */
import { parentPort, workerData } from 'node:worker_threads';
import { PromptencError } from '../errors.js';
import { endpointFor } from './endpoints.js';
import { execute, type JobResult } from './execute.js';
import { runLines } from './lines.js';
import { ModelRegistry } from './models.js';
import type { Job, WorkerInit } from './pool.js';
import { SessionStore } from './sessions.js';

const port = parentPort!;
const init = workerData as WorkerInit;

async function main(): Promise<void> {
  const models = await ModelRegistry.load(init.specs);
  const ctx = { models, sessions: new SessionStore(init.sessions) };
  port.on('message', async ({ id, job }: { id: number; job: Job }) => {
    if (job.kind === 'lines') {
      port.postMessage({ id, result: await runLines(ctx.models, job) });
      return;
    }
    const endpoint = endpointFor(job.method, job.path);
    let result: JobResult;
    if (!endpoint) {
      const err = new PromptencError('E_ROUTE_NOT_FOUND', `${job.method} ${job.path}: no such route`);
      result = await execute(ctx, { method: 'POST', path: job.path, run: () => Promise.reject(err) }, {});
    } else {
      result = await execute(ctx, endpoint, job);
    }
    port.postMessage({ id, result }, [result.bytes.buffer as ArrayBuffer]);
  });
  port.postMessage({ ready: true });
}

// The code travels with the message: a model that does not load is the caller's E_TOKENIZER_* error, not an internal one.
main().catch((err: unknown) => port.postMessage({ fatal: (err as Error)?.message ?? String(err), ...(err instanceof PromptencError && { code: err.code }) }));
