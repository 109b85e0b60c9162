// Question: how long does loading a model take, and how much memory does it hold, compared
// with Rust tokenizers loading the same tokenizer.json?
// Each (model, engine) loads in a fresh process, so RSS and import costs are not shared.
// Control: a fresh process that imports nothing (node's own RSS, subtracted below).
// Load = import of the engine's module + building the tokenizer; then one first encode.
//   child mode: node bench/load-time.mjs --child MODEL ENGINE
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';
import { f, jsonOutPath, machine, runChild, table, writeJson } from './_common.mjs';

const MB = 1048576;

if (process.argv[2] === '--child') {
  const [model, engine] = process.argv.slice(3);
  const rss0 = process.memoryUsage().rss;
  if (engine === 'control') {
    console.log(JSON.stringify({ rss0, rss: process.memoryUsage().rss, ms: 0 }));
    process.exit(0);
  }
  const t0 = process.hrtime.bigint();
  const { loadEngines } = await import('promptenc/bench');
  const tImport = process.hrtime.bigint();
  // The harness reads the model's added tokens first (a whole-file JSON.parse, ~100 MB of
  // garbage for a 10 MB tokenizer.json). Collect it before the engine loads, else the RSS
  // below depends on whether the engine's own allocations happened to trigger a GC (an
  // engine that allocates little was charged the harness's garbage). Outside the timings.
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const { slots } = await loadEngines(model, [engine], { afterContext: () => gc() });
  const e = slots[0];
  const t1 = process.hrtime.bigint();
  if (e.status !== 'ok') {
    console.log(JSON.stringify({ missing: e.reason }));
    process.exit(0);
  }
  const rss = process.memoryUsage().rss;
  const t2 = process.hrtime.bigint();
  await e.encode('Hello, world! 東京 🚀');
  const firstMs = Number(process.hrtime.bigint() - t2) / 1e6;
  console.log(
    JSON.stringify({
      rss0,
      rss,
      // Total wall time from before importing promptenc's bench module to a usable engine.
      ms: Number(t1 - t0) / 1e6,
      harnessImportMs: Number(tImport - t0) / 1e6,
      engineLoadMs: e.loadMs,
      engineImportMs: e.importMs,
      firstEncodeMs: firstMs,
      version: e.version,
    }),
  );
  process.exit(0);
}

const self = fileURLToPath(import.meta.url);
const models = (process.env.BENCH_MODELS ?? 'deepseek-v3,qwen3,llama3,gpt-4o,gpt-oss').split(',');
const control = (await runChild(self, ['--child', '-', 'control'])).lines[0];
const results = [];
for (const model of models) {
  const openai = model === 'gpt-4o' || model === 'gpt-oss';
  const engines = ['promptenc-native', 'promptenc-js', 'hf-tokenizers', ...(openai ? ['tiktoken', 'gpt-tokenizer', 'ai-tokenizer'] : [])];
  for (const engine of engines) {
    process.stderr.write(`load-time: ${model} ${engine}\n`);
    const r = await runChild(self, ['--child', model, engine], { timeoutMs: 120_000 });
    const line = r.lines[0] ?? { missing: r.timedOut ? 'timed out' : `exit ${r.code}: ${r.stderr.split('\n').slice(-1)[0]}` };
    results.push({ model, engine, ...line });
  }
}

const rows = results.map((r) => {
  if (r.missing) return [r.model, r.engine, `missing: ${r.missing}`, '', '', '', ''];
  const rust = results.find((x) => x.model === r.model && x.engine === 'hf-tokenizers' && !x.missing);
  // promptenc is imported statically by the harness, so its library import is harnessImportMs.
  const load = (x) => (x.engine.startsWith('promptenc') ? x.harnessImportMs : x.engineImportMs) + x.engineLoadMs;
  return [
    r.model,
    r.engine,
    f(load(r), 0),
    f(r.firstEncodeMs, 2),
    f((r.rss - control.rss) / MB, 0),
    rust ? `${f(load(r) / load(rust), 2)}×` : '–',
    rust ? `${f((r.rss - control.rss) / (rust.rss - control.rss), 2)}×` : '–',
  ];
});
console.log('### Load time and memory (fresh process per row)\n');
console.log(table(['model', 'engine', 'import + load ms', 'first encode ms', 'RSS over control MB', 'load ÷ Rust', 'RSS ÷ Rust'], rows));
console.log(
  `\nControl: an empty node process, RSS ${f(control.rss / MB, 0)} MB (subtracted). "import + load" = the engine module's import plus building the tokenizer (file read, parse, tables); for promptenc the import is the library's own (dist/index.js and its dependencies).`,
);
writeJson(jsonOutPath(), { bench: 'load-time', machine: machine(), controlRss: control.rss, results });
