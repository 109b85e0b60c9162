#!/usr/bin/env node
/**
 * `npm run fuzz -- [--model M] [--seconds N] [--seed S] [--no-write]`: structure-aware
 * differential fuzzing of the built library (dist/; `npm run fuzz` builds it first) against the
 * Rust oracle: native == JS == oracle on every case. A mismatch is shrunk to a minimal input
 * and written to test/fixtures/regressions/, which `npm test` replays (fuzz-regressions).
 * Reports, per model: cases, mismatches, cases/s. Exits 1 when anything mismatched.
 * Models: gpt-4o, llama3, qwen3, deepseek-v3, glm-4 (fuzz/models.mjs); all by default. Also
 * glm-4-rankfile: promptenc reading GLM-4's tiktoken rank file against the oracle's tokenizer.json;
 * gpt-oss.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CaseGenerator, shrink } from './generate.mjs';
import { compare, openModel, writeRegression } from './differential.mjs';
import { extraModels, fuzzModels, rankFileModels } from './models.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const seconds = Number(opt('seconds', '30'));
const seed = Number(opt('seed', String(Date.now() % 2 ** 31)));
const write = !args.includes('--no-write');
const models = fuzzModels();
const extra = extraModels();
const other = rankFileModels();
const chosen = opt('model', 'all') === 'all' ? Object.keys(models) : opt('model').split(',');
for (const m of chosen) if (!models[m] && !other[m] && !extra[m]) throw new Error(`unknown model ${m}: one of ${[...Object.keys(models), ...Object.keys(other), ...Object.keys(extra)].join(', ')}`);
Object.assign(models, Object.fromEntries(chosen.filter((m) => extra[m]).map((m) => [m, extra[m]])));

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const { loadTokenizer } = await import(pathToFileURL(path.join(root, 'dist', 'index.js')).href);
process.env.PROMPTENC_QUIET = '1';

let failed = 0;
console.log(`seed ${seed}, ${seconds} s per model`);
for (const name of chosen) {
  const model = models[name] ? await openModel(loadTokenizer, name, models[name]) : await openModel(loadTokenizer, name, other[name].source, other[name].oracle);
  const gen = new CaseGenerator(seed ^ name.length, model.added);
  const deadline = performance.now() + seconds * 1000;
  let cases = 0;
  let mismatches = 0;
  let bytes = 0;
  const t0 = performance.now();
  while (performance.now() < deadline) {
    const text = gen.next();
    cases++;
    bytes += Buffer.byteLength(text);
    const r = await compare(model, text);
    if (r.agree) continue;
    mismatches++;
    const small = await shrink(text, async (t) => !(await compare(model, t)).agree);
    const res = await compare(model, small);
    const out = write ? writeRegression(model, small, res, `fuzz seed ${seed}`) : '(not written)';
    console.log(`  MISMATCH ${JSON.stringify(small)}\n    oracle ${res.oracle}\n    native ${res.native}\n    js     ${res.js}\n    -> ${out}`);
  }
  const s = (performance.now() - t0) / 1000;
  console.log(`${name}: ${cases} cases, ${mismatches} mismatches, ${(cases / s).toFixed(0)} cases/s, ${(bytes / 1024).toFixed(0)} KiB of text`);
  failed += mismatches;
}
process.exit(failed > 0 ? 1 : 0);
