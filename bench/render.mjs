// Questions:
// 1. (flags) What does rendering a long conversation through its chat template cost, and how
//    much does enableFastTemplates() (V8's polymorphic inline-cache limit 4 → 16, see
//    src/template/v8-tuning.ts) save? Each mode runs in a fresh process (the flag is
//    process-wide and must be set before the first render), alternating twice. Control: the
//    same process's String.prototype.repeat of the prompt's length (the floor of producing that
//    much text). Rendered text must be identical in both modes.
// 2. (engines, issue 15) Our own engine (src/template/engine) vs @huggingface/jinja (the
//    library, and tok.renderChat, which renders through it today) vs Python Jinja2 as transformers configures it
//    (test/helpers/jinja2_oracle.py, timed inside Python, for scale), on the same template and
//    data in one run with no V8 flag: full renders of the 200k-token DeepSeek-V3 and GLM-format
//    histories, and a warm 3-message Qwen3 render. Prints ratios and whether the texts agree.
//   node bench/render.mjs [--only flags|engines]     child modes: --child default|fast|engines
import { createHash } from 'node:crypto';
import { f, jsonOutPath, machine, runChild, table, writeJson } from './_common.mjs';

const SIZES = [50_000, 200_000];
const REPS = 15;

if (process.argv[2] === '--child' && process.argv[3] === 'engines') {
  await (await import('./render-engines.mjs')).childMain();
  process.exit(0);
}

const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;

if (process.argv[2] === '--child') {
  if (process.argv[3] === 'fast') (await import('../dist/index.js')).enableFastTemplates();
  const { loadTokenizer } = await import('../dist/index.js');
  const { agentHistory } = await import('./helpers/conversation.mjs');
  const { buildGlmTokenizerDir, removeGlmTokenizerDir } = await import('./helpers/glm-tokenizer.mjs');
  for (const [name, source] of [
    ['deepseek-v3', 'deepseek-v3'],
    ['glm-format', buildGlmTokenizerDir()],
  ]) {
    const tok = await loadTokenizer(source);
    for (const size of SIZES) {
      const messages = agentHistory(tok, size);
      const ms = [];
      let text = '';
      for (let i = 0; i < REPS + 3; i++) {
        const t0 = process.hrtime.bigint();
        text = tok.renderChat(messages);
        Number(text); // flattens the rope: the first consumer pays this anyway
        if (i >= 3) ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      ms.sort((a, b) => a - b);
      const t0 = process.hrtime.bigint();
      Number('x'.repeat(text.length));
      const controlMs = Number(process.hrtime.bigint() - t0) / 1e6;
      const sha = createHash('sha256').update(text).digest('hex').slice(0, 16);
      console.log(JSON.stringify({ model: name, size, messages: messages.length, chars: text.length, ms: ms[ms.length >> 1], controlMs, sha }));
    }
  }
  removeGlmTokenizerDir();
  process.exit(0);
}

const flagRows = only !== 'engines' ? await flagsBench() : [];
const engineRows = only !== 'flags' ? await (await import('./render-engines.mjs')).parentMain() : [];
writeJson(jsonOutPath(), { machine: machine(), rows: flagRows, engines: engineRows });

async function flagsBench() {
  if (typeof (await import('../dist/index.js')).enableFastTemplates !== 'function') {
    console.log('## Chat template rendering, default V8 flags vs enableFastTemplates()\n\nenableFastTemplates() is gone (issue 15): nothing to compare.');
    return [];
  }
  const runs = { default: [], fast: [] };
  for (let round = 0; round < 2; round++) {
    for (const mode of round % 2 ? ['fast', 'default'] : ['default', 'fast']) {
      process.stderr.write(`render: ${mode} (round ${round + 1})\n`);
      const r = await runChild(new URL(import.meta.url).pathname, ['--child', mode], { timeoutMs: 120_000 });
      if (r.code !== 0 || r.timedOut) throw new Error(`render child (${mode}) failed: ${r.stderr}`);
      runs[mode].push(r.lines);
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const rows = [];
  const out = [];
  for (const [i, base] of runs.default[0].entries()) {
    const d = median(runs.default.map((l) => l[i].ms));
    const fast = median(runs.fast.map((l) => l[i].ms));
    const same = [...runs.default, ...runs.fast].every((l) => l[i].sha === base.sha);
    out.push({ ...base, defaultMs: d, fastMs: fast, speedup: d / fast, same });
    rows.push([base.model, base.size, base.messages, base.chars, f(d, 1), f(fast, 1), `${f(d / fast, 2)}×`, f(base.controlMs, 2), same ? 'yes' : 'NO']);
  }
  console.log(`## Chat template rendering, default V8 flags vs enableFastTemplates() (median of ${REPS} renders, 2 processes each)\n`);
  console.log(
    table(
      ['model', 'history tokens ≥', 'messages', 'prompt chars', 'default ms', 'enableFastTemplates ms', 'speedup', 'control: repeat ms', 'same text'],
      rows,
    ),
  );
  console.log(`\nMachine: ${machine().cpu}, Node ${process.version}`);
  if (out.some((r) => !r.same)) process.exitCode = 1;
  return out;
}
