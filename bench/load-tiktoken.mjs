// Question: how long does loading a tiktoken rank file take in promptenc (the rank file is
// converted to the tokenizer.json model its backends take), compared with tiktoken (WASM,
// `new Tiktoken(ranks, specials, pattern)` from the same file) and gpt-tokenizer (its own
// bundled ranks of the same encoding: no file to read)?
// Each (file, engine) loads in a fresh process, BENCH_RUNS times (default 3); the median is
// reported, as wall ms and CPU ms (user + system: the machine is shared, CPU time is the
// steadier figure), with the ratio to tiktoken measured in the same run.
// Control: a fresh process that only reads the rank file.
//   child mode: node bench/load-tiktoken.mjs --child CASE ENGINE
import { readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { envNumber, f, jsonOutPath, machine, median, root, runChild, table, writeJson } from './_common.mjs';

const require = createRequire(import.meta.url);
const DATA = path.dirname(require.resolve('gpt-tokenizer/data/cl100k_base.tiktoken'));
const SHARED = [process.env.PROMPTENC_SHARED_DIR, path.join(root, '..', 'shared'), path.join(root, '..', '..', 'shared')].find(
  (p) => p && existsSync(path.join(p, 'models', 'glm-4', 'tokenizer.model')),
);
// ChatGLM4Tokenizer's pat_str; the OpenAI patterns are tiktoken's own (its encoder JSON files).
const GLM4_PAT = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** case → the rank file, what promptenc loads, and tiktoken's pattern and specials. */
function cases() {
  const openai = (name) => {
    const enc = require(`tiktoken/encoders/${name}.json`);
    return {
      name,
      file: path.join(DATA, `${name}.tiktoken`),
      source: path.join(DATA, `${name}.tiktoken`),
      pat: enc.pat_str,
      specials: enc.special_tokens,
      gptTokenizer: name,
    };
  };
  const out = [openai('o200k_base'), openai('cl100k_base')];
  if (SHARED) {
    const dir = path.join(SHARED, 'models', 'glm-4');
    const cfg = JSON.parse(readFileSync(path.join(dir, 'tokenizer_config.json'), 'utf8'));
    const specials = Object.fromEntries(Object.entries(cfg.added_tokens_decoder).map(([id, t]) => [t.content, Number(id)]));
    out.push({ name: 'glm-4', file: path.join(dir, 'tokenizer.model'), source: dir, pat: GLM4_PAT, specials });
  }
  return out;
}

if (process.argv[2] === '--child') {
  const [name, engine] = process.argv.slice(3);
  const c = cases().find((x) => x.name === name);
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  let encode;
  if (engine === 'control') {
    readFileSync(c.file);
    encode = () => [];
  } else if (engine === 'promptenc-native' || engine === 'promptenc-js') {
    const { loadTokenizer } = await import('../dist/index.js');
    const tok = await loadTokenizer(c.source, { backend: engine.slice('promptenc-'.length) });
    encode = (t) => tok.encode(t, { addSpecialTokens: false });
  } else if (engine === 'tiktoken') {
    const { Tiktoken } = await import('tiktoken/lite');
    const enc = new Tiktoken(readFileSync(c.file, 'utf8'), c.specials, c.pat);
    encode = (t) => enc.encode(t, 'all');
  } else if (engine === 'gpt-tokenizer') {
    const mod = await import(`gpt-tokenizer/encoding/${c.gptTokenizer}`);
    encode = (t) => mod.encode(t);
  }
  const cpu = process.cpuUsage(c0);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const ids = Array.from(encode('Hello, world! 東京 🚀  x'));
  console.log(JSON.stringify({ ms, cpuMs: (cpu.user + cpu.system) / 1000, ids }));
  process.exit(0);
}

const self = fileURLToPath(import.meta.url);
const runs = envNumber('BENCH_RUNS', 3);
const results = [];
for (const c of cases()) {
  const engines = ['control', 'tiktoken', 'promptenc-native', 'promptenc-js', ...(c.gptTokenizer ? ['gpt-tokenizer'] : [])];
  for (const engine of engines) {
    const samples = [];
    for (let i = 0; i < runs; i++) {
      process.stderr.write(`load-tiktoken: ${c.name} ${engine} ${i + 1}/${runs}\n`);
      const r = await runChild(self, ['--child', c.name, engine], { timeoutMs: 180_000 });
      if (r.lines[0]) samples.push(r.lines[0]);
    }
    if (samples.length === 0) {
      results.push({ case: c.name, engine, missing: true });
      continue;
    }
    results.push({
      case: c.name,
      engine,
      ms: median(samples.map((s) => s.ms)),
      cpuMs: median(samples.map((s) => s.cpuMs)),
      ids: samples[0].ids,
      runs: samples.length,
    });
  }
}

const rows = results.map((r) => {
  if (r.missing) return [r.case, r.engine, 'failed', '', '', '', ''];
  const tk = results.find((x) => x.case === r.case && x.engine === 'tiktoken' && !x.missing);
  const same = tk && r.engine !== 'control' ? (JSON.stringify(r.ids) === JSON.stringify(tk.ids) ? 'yes' : 'NO') : '';
  return [r.case, r.engine, f(r.ms, 0), f(r.cpuMs, 0), tk ? `${f(r.ms / tk.ms, 2)}×` : '–', tk ? `${f(r.cpuMs / tk.cpuMs, 2)}×` : '–', same];
});
console.log('### Loading a tiktoken rank file (fresh process per run, median)\n');
console.log(table(['rank file', 'engine', 'load wall ms', 'load CPU ms', 'wall ÷ tiktoken', 'CPU ÷ tiktoken', 'same ids as tiktoken'], rows));
console.log(
  '\n"load" = importing the engine and building it from the rank file (gpt-tokenizer: importing its bundled encoding, no file read). The ids column checks one probe text.',
);
const m = machine();
console.log(`\nMachine: ${m.cpu}, ${m.cores} cores, Node ${m.node}, load average ${m.loadavg.join(' ')} (shared: wall figures vary with the other processes).`);
writeJson(jsonOutPath(), { bench: 'load-tiktoken', machine: m, results });
