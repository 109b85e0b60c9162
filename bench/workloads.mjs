// Question: on real text, cold and warm, how fast is promptenc against the fastest exact peer
// (hypertok) and the others, per workload and vocabulary, measured in the same run? And is
// DeepSeek-V3 / Qwen3 per byte as cheap as Llama 3 (no hypertok vocabulary for them)?
// Method: bench/lib/workload-run.ts (agreement first, alternating passes, CPU time, medians).
// Control: promptenc-native's own Llama 3 figures, against which the DeepSeek-V3 and Qwen3 rows
// are read (promptenc per byte on model X ÷ on Llama 3, same workload, same run of this script).
//   env BENCH_MODELS (gpt-4o,llama3,deepseek-v3,qwen3)  BENCH_SECONDS (3 per workload)
//       BENCH_WORKLOADS (all)  BENCH_WORKLOAD_KB (1024)  BENCH_COLD_MIN (5 cold passes per engine at least)
//       --json-out FILE
import { runWorkloadBench, formatWorkloadTable, parseWorkloadList } from 'promptenc/bench';
import { envNumber, jsonOutPath, machine, writeJson } from './_common.mjs';

const models = (process.env.BENCH_MODELS ?? 'gpt-4o,llama3,deepseek-v3,qwen3').split(',');
const seconds = envNumber('BENCH_SECONDS', 3);
const workloads = parseWorkloadList(process.env.BENCH_WORKLOADS ?? 'all');
const sizeBytes = Math.round(envNumber('BENCH_WORKLOAD_KB', 1024) * 1024);
const minColdPasses = envNumber('BENCH_COLD_MIN', 5);
const HYPERTOK = new Set(['gpt-4o', 'gpt-oss', 'llama3']);

const results = [];
for (const model of models) {
  const peers = HYPERTOK.has(model) ? (model === 'llama3' ? ['hypertok'] : ['hypertok', 'tiktoken', 'gpt-tokenizer', 'ai-tokenizer']) : [];
  const r = await runWorkloadBench({ source: model, workloads, sizeBytes, seconds, peers, minColdPasses });
  results.push(r);
  console.log(`## ${model}\n\n${formatWorkloadTable(r)}\n`);
}

const f = (x, d = 2) => (x === null || x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(d));
const cell = (r, w, engine) => r.workloads.find((x) => x.name === w)?.cells.find((c) => c.engine === engine);
console.log('## promptenc ÷ hypertok (MB per CPU-second, same run; > 1 = promptenc faster)\n');
const htModels = results.filter((r) => HYPERTOK.has(r.model));
console.log(`| workload | ${htModels.map((r) => `${r.model} warm | ${r.model} cold`).join(' | ')} |`);
console.log(`|---|${htModels.map(() => '---|---').join('|')}|`);
for (const w of workloads) {
  const cols = htModels.map((r) => {
    const c = cell(r, w, 'hypertok');
    return c ? `${f(c.warmRatio)} | ${f(c.coldRatio)}` : '– | –';
  });
  console.log(`| ${w} | ${cols.join(' | ')} |`);
}
const llama = results.find((r) => r.model === 'llama3');
const others = results.filter((r) => !HYPERTOK.has(r.model));
if (llama && others.length) {
  console.log('\n## promptenc per byte: model ÷ Llama 3 (MB per CPU-second of promptenc-native; ≥ 1 = no slower than Llama 3)\n');
  console.log(`| workload | ${others.map((r) => `${r.model} warm | ${r.model} cold`).join(' | ')} |`);
  console.log(`|---|${others.map(() => '---|---').join('|')}|`);
  for (const w of workloads) {
    const base = cell(llama, w, 'promptenc-native');
    const cols = others.map((r) => {
      const c = cell(r, w, 'promptenc-native');
      return `${f(c && base ? c.warm.cpuMbps.median / base.warm.cpuMbps.median : NaN)} | ${f(c?.cold && base?.cold ? c.cold.cpuMbps.median / base.cold.cpuMbps.median : NaN)}`;
    });
    console.log(`| ${w} | ${cols.join(' | ')} |`);
  }
}
writeJson(jsonOutPath(), { question: 'workloads', machine: machine(), seconds, sizeBytes, minColdPasses, results });
