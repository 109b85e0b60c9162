import { writeFile } from 'node:fs/promises';
import { Command } from 'commander';
import { PromptencError } from '../errors.js';
import { UsageError, writeOut } from './common.js';

/** A progress report of the harness (bench/lib/run.ts ProgressEvent). */
interface ProgressEvent {
  phase: string;
  fraction: number;
  detail?: string;
}

/**
 * The part of `promptenc/bench` (bench/lib, compiled to dist/bench) that this command uses.
 * The harness is not part of the library: it is loaded at run time, so building src does
 * not depend on it. test/bench-cli.test.ts type-checks the real module against this shape.
 */
export interface BenchHarness {
  readonly PEER_NAMES: readonly string[];
  readonly WORKLOAD_NAMES: readonly string[];
  parseEngineList(list: string): readonly string[];
  parseWorkloadList(list: string): readonly string[];
  runBench(opts: {
    source: string;
    corpusPath?: string;
    corpusSize?: number;
    seed?: number;
    messagesPath?: string;
    threads?: number;
    totalSeconds?: number;
    peers?: readonly string[];
    onProgress?: (e: ProgressEvent) => void;
  }): Promise<BenchRunResult>;
  formatTable(r: BenchRunResult): string;
  renderSvg(r: BenchRunResult): string;
  runWorkloadBench(opts: {
    source: string;
    workloads: readonly string[];
    sizeBytes?: number;
    seed?: number;
    seconds?: number;
    peers?: readonly string[];
    warmOnly?: boolean;
    onProgress?: (e: ProgressEvent) => void;
  }): Promise<WorkloadRunResult>;
  formatWorkloadTable(r: WorkloadRunResult): string;
}
interface BenchRunResult {
  agreement: { ok: boolean; reference: string | null; disagreeing: readonly string[] };
}
interface WorkloadRunResult {
  workloads: readonly { name: string; cells: readonly { engine: string; agrees: boolean | null }[] }[];
}

/** The names in --help, kept equal to the harness's lists by test/bench-cli.test.ts. */
export const PEER_NAMES = ['hf-tokenizers', 'tiktoken', 'gpt-tokenizer', 'ai-tokenizer', 'hypertok'] as const;
export const WORKLOAD_NAMES = ['prose', 'code', 'cjk', 'multilingual', 'agent', 'rank-table', 'mixed'] as const;

/** `promptenc/bench`, resolved through package.json "exports" (the package's own name). */
async function loadHarness(): Promise<BenchHarness> {
  try {
    return (await import('promptenc/bench' as string)) as BenchHarness;
  } catch (err) {
    throw new PromptencError(
      'E_IO',
      `the benchmark harness promptenc/bench (dist/bench) cannot be loaded: ${(err as Error).message.split('\n')[0]}; ` + 'in a checkout, run npm run build',
      { cause: err },
    );
  }
}

interface BenchFlags {
  model?: string;
  tokenizer?: string;
  corpus?: string;
  corpusSize?: string;
  seed?: string;
  messages?: string;
  threads?: string;
  seconds?: string;
  peers?: string;
  json?: boolean;
  chart?: string;
  workload?: string;
  workloadSize?: string;
  warmOnly?: boolean;
}

function positive(value: string | undefined, flag: string, integer: boolean): number | undefined {
  if (value === undefined) return undefined;
  const x = Number(value);
  if (!Number.isFinite(x) || x <= 0 || (integer && !Number.isInteger(x))) {
    throw new UsageError(`${flag}: expected a positive ${integer ? 'integer' : 'number'}, received ${JSON.stringify(value)}`);
  }
  return x;
}

/** "5MB", "512KB", "1.5M" or plain bytes. */
export function parseSize(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)\s*(k|kb|kib|m|mb|mib)?$/i.exec(value.trim());
  if (!m) throw new UsageError(`${flag}: expected a size such as 5MB, 512KB or 100000, received ${JSON.stringify(value)}`);
  const unit = (m[2] ?? '').toLowerCase();
  const mult = unit.startsWith('k') ? 1024 : unit.startsWith('m') ? 1024 * 1024 : 1;
  const bytes = Math.round(Number(m[1]) * mult);
  if (bytes < 1024) throw new UsageError(`${flag}: expected at least 1KB, received ${JSON.stringify(value)}`);
  return bytes;
}

/** Progress on stderr: a bar on a TTY, one plain line per phase otherwise (logs stay readable). */
async function makeProgress(): Promise<{ onProgress: (e: ProgressEvent) => void; stop: () => void }> {
  if (process.stderr.isTTY) {
    try {
      const { default: cliProgress } = await import('cli-progress');
      const bar = new cliProgress.SingleBar(
        { format: 'bench {phase} [{bar}] {percentage}% {detail}', stream: process.stderr, hideCursor: true, clearOnComplete: true },
        cliProgress.Presets.shades_classic,
      );
      let started = false;
      return {
        onProgress: (e) => {
          const payload = { phase: e.phase.padEnd(9), detail: e.detail ?? '' };
          if (!started) {
            bar.start(100, 0, payload);
            started = true;
          }
          bar.update(Math.round(e.fraction * 100), payload);
        },
        stop: () => started && bar.stop(),
      };
    } catch {
      // cli-progress is a dependency, but fall back to lines rather than fail a benchmark.
    }
  }
  let last = '';
  return {
    onProgress: (e) => {
      const key = `${e.phase}:${e.detail ?? ''}`;
      if (key === last) return;
      last = key;
      process.stderr.write(`bench: ${e.phase}${e.detail ? ` ${e.detail}` : ''}\n`);
    },
    stop: () => {},
  };
}

export function benchCommand(): Command {
  return new Command('bench')
    .description('measure encode throughput against peer tokenizers on the same corpus, in the same run')
    .option('--model <name>', 'a bundled model (deepseek-v3, qwen3, llama3, gpt-4o, gpt-oss) or a model directory')
    .option('--tokenizer <path>', 'a tokenizer.json file or a Hugging Face model directory')
    .option('--corpus <path>', 'a text file or a directory of text files (default: a generated ~5 MB mixed corpus)')
    .option('--corpus-size <size>', 'size of the generated corpus, e.g. 5MB (default), 512KB')
    .option('--seed <n>', 'seed of the generated corpus')
    .option('--messages <file>', 'a messages JSON file for encodeChat timing (default: a built-in conversation)')
    .option('--threads <n>', 'max threads for the encodeBatch scaling curve (default: CPU count)')
    .option('--seconds <s>', 'total measuring time, split over phases and engines (loading not included); with --workload, per workload', '3')
    .option('--peers <list>', `comma-separated peers to compare (${PEER_NAMES.join(', ')}), or "none"`)
    .option('--json', 'print the machine-readable result on stdout')
    .option('--chart <file.svg>', 'write an SVG chart (bars per engine and the thread-scaling curve)')
    .option('--workload <names>', `named real-text workloads, cold and warm (${WORKLOAD_NAMES.join(', ')}, or all); --seconds is then per workload`)
    .option('--workload-size <size>', 'bytes per workload, e.g. 1MB (default), 256KB (rank-table is always the whole file)')
    .option('--warm-only', 'with --workload: skip the cold runs (fresh tokenizers)')
    .action(async (flags: BenchFlags) => {
      const { parseEngineList, parseWorkloadList, runBench, formatTable, renderSvg, runWorkloadBench, formatWorkloadTable } = await loadHarness();
      if (flags.model && flags.tokenizer) throw new UsageError('use either --model or --tokenizer, not both');
      const source = flags.model ?? flags.tokenizer;
      if (!source) throw new UsageError('one of --model NAME or --tokenizer PATH is required');
      if (flags.corpus !== undefined && flags.corpusSize !== undefined)
        throw new UsageError('--corpus-size applies to the generated corpus only; drop it when using --corpus');
      let peers;
      try {
        peers = flags.peers === undefined ? undefined : flags.peers.trim() === 'none' ? [] : parseEngineList(flags.peers);
      } catch (err) {
        throw new UsageError((err as PromptencError).message);
      }
      const seconds = positive(flags.seconds, '--seconds', false)!;
      if (flags.workload !== undefined) {
        if (flags.corpus !== undefined || flags.corpusSize !== undefined || flags.chart !== undefined || flags.messages !== undefined)
          throw new UsageError('--workload measures named workloads: drop --corpus, --corpus-size, --messages and --chart');
        let workloads;
        try {
          workloads = parseWorkloadList(flags.workload);
        } catch (err) {
          throw new UsageError(`--workload: ${(err as Error).message}`);
        }
        const progress = await makeProgress();
        let result;
        try {
          result = await runWorkloadBench({
            source,
            workloads,
            sizeBytes: parseSize(flags.workloadSize, '--workload-size'),
            seed: positive(flags.seed, '--seed', true),
            seconds,
            peers,
            warmOnly: flags.warmOnly === true,
            onProgress: progress.onProgress,
          });
        } finally {
          progress.stop();
        }
        writeOut(flags.json ? JSON.stringify(result, null, 2) : formatWorkloadTable(result));
        const differ = result.workloads.flatMap((w) => w.cells.filter((c) => c.agrees === false).map((c) => `${w.name}/${c.engine}`));
        if (differ.length) process.stderr.write(`promptenc bench: ids differ from the reference: ${differ.join(', ')}\n`);
        return;
      }
      const threads = positive(flags.threads, '--threads', true);
      if (threads !== undefined && threads > 256) throw new UsageError(`--threads: expected at most 256, received ${threads}`);
      const progress = await makeProgress();
      let result;
      try {
        result = await runBench({
          source,
          corpusPath: flags.corpus,
          corpusSize: parseSize(flags.corpusSize, '--corpus-size'),
          seed: positive(flags.seed, '--seed', true),
          messagesPath: flags.messages,
          threads,
          totalSeconds: seconds,
          peers,
          onProgress: progress.onProgress,
        });
      } finally {
        progress.stop();
      }
      if (flags.chart !== undefined) {
        try {
          await writeFile(flags.chart, renderSvg(result));
        } catch (err) {
          throw new PromptencError('E_IO', `--chart: cannot write ${flags.chart}: ${(err as Error).message}`, { cause: err });
        }
      }
      writeOut(flags.json ? JSON.stringify(result, null, 2) : formatTable(result));
      // A disagreement means the figures compare different outputs: say so on stderr too,
      // so it is not lost when stdout goes to a file.
      if (!result.agreement.ok) {
        process.stderr.write(`promptenc bench: token mismatch vs ${result.agreement.reference}: ${result.agreement.disagreeing.join(', ')}\n`);
      }
    });
}
