import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { Command, Option } from 'commander';
import { BUNDLED_MODELS } from '../load.js';
import type { BackendChoice } from '../backend/types.js';
import { startServer, type RunningServer, type ServerOptions } from '../server/app.js';
import { modelIdOf, type ModelSpec } from '../server/models.js';
import { readTextFile, UsageError } from './common.js';

interface ServeFlags {
  template?: string;
  host: string;
  port: string;
  maxBody: string;
  inlineMax: string;
  workers: string;
  threads?: string;
  backend: BackendChoice;
  sessions: string;
  sessionMemory: string;
  sessionIdle: string;
  prefixCache?: boolean;
  jobTimeout: string;
  threadMemory: string;
}

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, kb: 1024, m: 1024 ** 2, mb: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3 };

/** "32mb", "512k", "1048576" → bytes. */
export function parseSize(value: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(value.trim());
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new UsageError(`${flag}: expected a size such as 32mb, 512kb or 1048576, received ${JSON.stringify(value)}`);
  return Math.floor(Number(m[1]) * unit);
}

function parseCount(value: string, flag: string, min: number, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    throw new UsageError(`${flag}: expected an integer from ${min} to ${max}, received ${JSON.stringify(value)}`);
  return Number(value);
}

async function serverOptions(flags: ServeFlags): Promise<ServerOptions> {
  const cores = availableParallelism();
  return {
    host: flags.host,
    port: parseCount(flags.port, '--port', 0, 65535),
    maxBody: parseSize(flags.maxBody, '--max-body'),
    inlineMax: parseSize(flags.inlineMax, '--inline-max'),
    threads: flags.threads !== undefined ? parseCount(flags.threads, '--threads', 0, 64) : Math.max(1, Math.min(4, cores - 1)),
    sessions: {
      maxSessions: parseCount(flags.sessions, '--sessions', 0, 1_000_000),
      maxBytes: parseSize(flags.sessionMemory, '--session-memory'),
      idleMs: parseCount(flags.sessionIdle, '--session-idle', 1, 86_400 * 30) * 1000,
      prefixCache: flags.prefixCache !== false,
    },
    limits: {
      jobTimeoutMs: parseCount(flags.jobTimeout, '--job-timeout', 1, 86_400) * 1000,
      threadMemoryMb: parseCount(flags.threadMemory, '--thread-memory', 64, 1_048_576),
    },
  };
}

/** Run one server until SIGTERM / SIGINT, then finish in-flight requests and exit 0. */
async function runOne(specs: ModelSpec[], opts: ServerOptions, announce: (s: RunningServer) => void): Promise<void> {
  const server = await startServer(specs, opts);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`promptenc serve: shutdown failed: ${(err as Error)?.stack ?? String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  announce(server);
}

/** --workers N: N processes sharing the port (node:cluster); the primary only forwards signals. */
function runPrimary(workers: number, describe: string): Promise<void> {
  return new Promise(() => {
    const listened = new Set<number>();
    let stopping = false;
    let alive = workers;
    let exitCode = 0;
    for (let i = 0; i < workers; i++) cluster.fork();
    cluster.on('message', (w, m: { listening?: string }) => {
      if (!m?.listening) return;
      listened.add(w.id);
      if (listened.size === workers) process.stdout.write(`promptenc serve: listening on ${m.listening} (${describe}, ${workers} processes)\n`);
    });
    cluster.on('exit', (w, code, signal) => {
      alive--;
      if (!stopping && !listened.has(w.id)) {
        // A worker that failed before listening (a model that does not load) would fail again.
        process.stderr.write(`promptenc serve: a worker failed to start (${signal ?? code}); stopping\n`);
        exitCode = 1;
        stop();
      }
      if (stopping && alive === 0) process.exit(exitCode);
      if (!stopping) {
        process.stderr.write(`promptenc serve: worker ${w.process.pid} exited (${signal ?? code}); starting another\n`);
        alive++;
        cluster.fork();
      }
    });
    const stop = () => {
      if (stopping) return;
      stopping = true;
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}

export function serveCommand(): Command {
  // --model and --tokenizer may repeat and interleave; their order picks the default (the first).
  // --encoding belongs to the source before it (or, written first, to the next one).
  const sources: Array<{ source: string; encoding?: string }> = [];
  let pendingEncoding: string | undefined;
  const misplaced: string[] = [];
  const collect = (v: string) => {
    sources.push({ source: v, ...(pendingEncoding !== undefined && { encoding: pendingEncoding }) });
    pendingEncoding = undefined;
    return v;
  };
  const collectEncoding = (v: string) => {
    const last = sources.at(-1);
    if (last !== undefined && last.encoding === undefined) last.encoding = v;
    else if (last === undefined && pendingEncoding === undefined) pendingEncoding = v;
    else misplaced.push(v);
    return v;
  };
  return new Command('serve')
    .description('serve tokenization, chat rendering and counts over HTTP (vLLM, llama.cpp and OpenAI shapes)')
    .option('--model <name>', `a bundled model (${Object.keys(BUNDLED_MODELS).join(', ')}) or a model directory; repeatable`, collect)
    .option('--tokenizer <path>', 'a tokenizer.json file or a Hugging Face model directory; repeatable', collect)
    .option(
      '--encoding <name>',
      'the tiktoken encoding of the .tiktoken rank file given by the --tokenizer before it (o200k_base, cl100k_base, p50k_base, p50k_edit, r50k_base)',
      collectEncoding,
    )
    .option('--template <file>', "a Jinja chat template that replaces the models' own")
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <n>', 'port (0: any free port)', '8000')
    .option('--max-body <size>', 'largest request body', '32mb')
    .option('--inline-max <size>', 'bodies up to this size are handled on the event loop, larger ones on worker threads', '16kb')
    .option('--workers <n>', 'processes sharing the port (node:cluster)', '1')
    .option('--threads <n>', 'worker threads per process for large bodies and sessions (0: none; default: cores - 1, at least 1)')
    .option('--sessions <n>', 'most conversations kept for session_id (and recognized prefixes)', '1024')
    .option('--no-prefix-cache', 'keep only conversations sent with a session_id, not those recognized by their messages')
    .option('--session-memory <size>', 'memory budget of the kept conversations (estimated)', '512mb')
    .option('--session-idle <seconds>', 'drop a conversation unused this long', '600')
    .option('--job-timeout <seconds>', 'stop a request running longer than this on a worker thread (400 E_LIMIT)', '30')
    .option('--thread-memory <mb>', 'heap limit of each worker thread; a request over it fails alone (400 E_LIMIT)', '4096')
    .addOption(new Option('--backend <kind>', 'encoder backend').choices(['auto', 'native', 'js']).default('auto'))
    .action(async (flags: ServeFlags) => {
      if (sources.length === 0) throw new UsageError('one of --model NAME or --tokenizer PATH is required');
      // (An --encoding before every source was taken by the first one.)
      if (misplaced.length > 0) throw new UsageError(`--encoding ${misplaced.join(', ')}: each --encoding follows the --tokenizer FILE.tiktoken it names`);
      const chatTemplate = flags.template !== undefined ? await readTextFile(flags.template, '--template') : undefined;
      const specs: ModelSpec[] = sources.map(({ source, encoding }) => ({
        id: modelIdOf(source),
        source,
        backend: flags.backend,
        ...(encoding !== undefined && { encoding }),
        chatTemplate,
      }));
      const opts = await serverOptions(flags);
      const workers = parseCount(flags.workers, '--workers', 1, 256);
      const describe = `models: ${specs.map((s) => s.id).join(', ')}; threads: ${opts.threads}`;
      if (workers > 1 && cluster.isPrimary) return runPrimary(workers, describe);
      try {
        await runOne(specs, opts, (s) => {
          if (cluster.isWorker) process.send?.({ listening: s.url });
          else process.stdout.write(`promptenc serve: listening on ${s.url} (${describe})\n`);
        });
      } catch (err) {
        // The IPC channel would keep a cluster worker alive after main() reports the error.
        if (cluster.isWorker) process.disconnect?.();
        throw err;
      }
      // Keep the command pending: the process ends through a signal.
      await new Promise(() => undefined);
    });
}
