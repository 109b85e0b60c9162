/**
 * `promptenc/bench`: the benchmark harness behind `promptenc bench` and bench/*.mjs. It is
 * not the library: it is compiled apart (bench/lib/tsconfig.json → dist/bench) and reaches
 * promptenc only through its public entry (`from 'promptenc'`). The CLI loads it with a
 * dynamic import, so the library and the CLI build without it.
 */
export { buildCorpus, DEFAULT_CORPUS_BYTES, DEFAULT_SEED, seededRandom } from './corpus.js';
export type { Corpus, CorpusDocument, CorpusKind, CorpusOptions } from './corpus.js';
export { ENGINE_NAMES, loadEngines, PEER_NAMES, parseEngineList } from './engines.js';
export type { Engine, EngineName, EngineSlot, LoadContext, MissingEngine } from './engines.js';
export { cpuModel, formatTable, runBench, spread } from './run.js';
export type { BenchOptions, BenchResult, Difference, EngineResult, ProgressEvent, Spread } from './run.js';
export { renderSvg } from './svg.js';
export { FAST_PEERS, formatWorkloadTable, runWorkloadBench } from './workload-run.js';
export type { WorkloadBenchOptions, WorkloadBenchResult, WorkloadCell, WorkloadRun } from './workload-run.js';
export { buildWorkload, DEFAULT_WORKLOAD_BYTES, parseWorkloadList, WORKLOAD_NAMES } from './workloads.js';
export type { WorkloadName, WorkloadOptions } from './workloads.js';
