// bench/render.mjs (issue 15): our engine (src/template/engine) vs @huggingface/jinja
// (the library itself: new Template(source).render(context); it has raise_exception and
// strftime_now built in) vs
// Python Jinja2 configured as transformers configures it (test/helpers/jinja2_oracle.py; timed
// inside Python, so no IPC is counted), on the same template and data, in one fresh process with
// no V8 flag. The renderChat path (tok.renderChat, the public API: @huggingface/jinja before
// issue 15, the engine after) is timed too, for what users get. The engine is not public yet:
// it is bundled from src/ by rolldown (vite's bundler), so the numbers are never a stale dist/;
// without its source (an installed package) the engine column is '–'. The Python oracle is a
// reference renderer run as a child process (a peer, as in bench/lib/engines.ts), not an import.
//
// Data: the benches' agent history (bench/helpers/conversation.mjs) cut at 200k tokens, for
// DeepSeek-V3 (its template joins arguments with '+': arguments as JSON text, what transformers
// gets) and the GLM-format tokenizer (its template iterates arguments.items(): arguments as
// objects, what vLLM passes); and a 3-message Qwen3 chat, warm (the same render repeated).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { f, machine, root, runChild, table } from './_common.mjs';

const LONG_REPS = 15;
const SHORT_BATCH = 20_000;
const SHORT_BATCHES = 7;
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function loadEngine() {
  const src = path.join(root, 'src', 'template', 'engine', 'index.ts');
  if (existsSync(src)) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'promptenc-bench-engine-'));
    const file = path.join(dir, 'engine.mjs');
    const { build } = createRequire(import.meta.url)('rolldown');
    await build({ input: src, output: { file, format: 'esm' }, write: true, logLevel: 'silent' });
    const mod = await import(file);
    rmSync(dir, { recursive: true, force: true });
    return { mod, from: 'src/template/engine (bundled by rolldown)' };
  }
  return undefined;
}

/** A minimal client for jinja2_oracle.py: one JSON line out, one back. */
function startOracle() {
  const child = spawn('python3', [path.join(root, 'test', 'helpers', 'jinja2_oracle.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
  let buf = '';
  const waiting = [];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    buf += d;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      waiting.shift()?.(JSON.parse(line));
    }
  });
  // Without python3 (or Jinja2) the Python column is '–': a failed spawn or a closed pipe answers undefined.
  const failed = new Promise((resolve) => {
    child.on('error', () => resolve(undefined));
    child.on('exit', () => resolve(undefined));
  });
  child.stdin.on('error', () => {});
  return {
    ask: (requests) =>
      Promise.race([
        new Promise((resolve) => {
          waiting.push(resolve);
          child.stdin.write(`${JSON.stringify(requests)}\n`);
        }),
        failed,
      ]),
    close: () => child.stdin.end(),
  };
}

function argumentsAs(messages, form) {
  return messages.map((m) =>
    m.tool_calls
      ? {
          ...m,
          tool_calls: m.tool_calls.map((tc) => {
            const a = tc.function.arguments;
            const v = form === 'text' ? (typeof a === 'string' ? a : JSON.stringify(a)) : typeof a === 'string' ? JSON.parse(a) : a;
            return { ...tc, function: { ...tc.function, arguments: v } };
          }),
        }
      : m,
  );
}

/** Median ms of `reps` calls of `fn`, after 3 warm-up calls; `Number(text)` flattens the rope, as a consumer would. */
function timeLong(fn, reps) {
  const ms = [];
  let text = '';
  for (let i = 0; i < reps + 3; i++) {
    const t0 = process.hrtime.bigint();
    text = fn();
    Number(text);
    if (i >= 3) ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return { ms: median(ms), text };
}

/** Median µs per call over batches of `n` calls (warm: the same render again and again). */
function timeShort(fn, n, batches) {
  let text = fn();
  for (let i = 0; i < 2000; i++) text = fn();
  const us = [];
  for (let b = 0; b < batches; b++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) text = fn();
    us.push(Number(process.hrtime.bigint() - t0) / 1e3 / n);
  }
  return { us: median(us), text };
}

export async function childMain() {
  const { loadTokenizer } = await import('../dist/index.js');
  const { Template } = createRequire(import.meta.url)('@huggingface/jinja');
  const { agentHistory } = await import('./helpers/conversation.mjs');
  const { buildGlmTokenizerDir, removeGlmTokenizerDir } = await import('./helpers/glm-tokenizer.mjs');
  const engine = await loadEngine();
  const oracle = startOracle();
  process.stderr.write(`render engines: engine from ${engine?.from ?? '(none)'}\n`);

  const cases = [];
  const ds = await loadTokenizer('deepseek-v3');
  cases.push({ name: 'DeepSeek-V3, 200k-token history', tok: ds, messages: argumentsAs(agentHistory(ds, 200_000), 'text'), long: true });
  const glm = await loadTokenizer(buildGlmTokenizerDir());
  cases.push({ name: 'GLM-format, 200k-token history', tok: glm, messages: argumentsAs(agentHistory(glm, 200_000), 'object'), long: true });
  const qwen = await loadTokenizer('qwen3');
  const chat = [
    { role: 'user', content: 'What is the capital of France?' },
    { role: 'assistant', content: 'Paris.' },
    { role: 'user', content: 'And of Japan?' },
  ];
  cases.push({ name: 'Qwen3, 3-message chat (warm)', tok: qwen, messages: chat, long: false });

  for (const c of cases) {
    const source = c.tok.chatTemplate;
    // The tokenizer's special-token strings, as renderChat passes them (a private field, read here only).
    const special = c.tok.specialStrings ?? {};
    const context = () => ({ ...special, messages: c.messages, tools: null, documents: null, add_generation_prompt: true });
    const lib = new Template(source);
    // The library defines raise_exception and strftime_now itself (passing them again throws).
    const libCtx = context();
    const hfRender = () => lib.render(libCtx);
    const chatRender = () => c.tok.renderChat(c.messages, { addGenerationPrompt: true });
    const compiled = engine?.mod.compileTemplate(source);
    const ctx = context();
    const engRender = compiled ? () => compiled.render(ctx) : undefined;
    const py = (
      await oracle.ask([
        { kind: 'chat', template: source, messages: c.messages, tools: null, add_generation_prompt: true, special_tokens: special, repeat: c.long ? 5 : 2000 },
      ])
    )?.[0];
    const row = { case: c.name, long: c.long, messages: c.messages.length };
    if (c.long) {
      // Alternate the two JS engines' runs so neither gets only the warmer half of the process.
      // Each contender twice, interleaved; the better median of the two (less exposed to a
      // neighbour's burst on a shared machine) is reported.
      const h1 = timeLong(hfRender, LONG_REPS);
      const e1 = engRender ? timeLong(engRender, LONG_REPS) : undefined;
      const c1 = timeLong(chatRender, LONG_REPS);
      const h2 = timeLong(hfRender, LONG_REPS);
      const e2 = engRender ? timeLong(engRender, LONG_REPS) : undefined;
      const c2 = timeLong(chatRender, LONG_REPS);
      row.hfMs = Math.min(h1.ms, h2.ms);
      row.engineMs = e1 && e2 ? Math.min(e1.ms, e2.ms) : undefined;
      row.chatMs = Math.min(c1.ms, c2.ms);
      row.chars = c1.text.length;
      row.engineText = e1?.text;
      row.hfText = h1.text;
      row.chatText = c1.text;
    } else {
      const h = timeShort(hfRender, SHORT_BATCH / 10, SHORT_BATCHES);
      const e = engRender ? timeShort(engRender, SHORT_BATCH, SHORT_BATCHES) : undefined;
      const ch = timeShort(chatRender, SHORT_BATCH / 10, SHORT_BATCHES);
      row.hfMs = h.us / 1000;
      row.engineMs = e ? e.us / 1000 : undefined;
      row.chatMs = ch.us / 1000;
      row.chars = ch.text.length;
      row.engineText = e?.text;
      row.hfText = h.text;
      row.chatText = ch.text;
    }
    row.pythonMs = py?.ms ? median(py.ms) : undefined;
    row.pythonError = py && 'error' in py ? `${py.type}: ${py.error}` : undefined;
    row.engineSame = py?.text !== undefined && row.engineText !== undefined ? row.engineText === py.text : undefined;
    row.hfSame = py?.text !== undefined ? row.hfText === py.text : undefined;
    row.chatSame = py?.text !== undefined ? row.chatText === py.text : undefined;
    delete row.engineText;
    delete row.hfText;
    delete row.chatText;
    console.log(JSON.stringify(row));
  }
  oracle.close();
  removeGlmTokenizerDir();
}

const ms = (v, long) => (v === undefined ? '–' : !long || v < 1 ? `${f(v * 1000, 1)} µs` : f(v, 2));
const ratio = (a, b) => (typeof a === 'number' && typeof b === 'number' ? `${f(a / b, 1)}×` : '–');
const yn = (v) => (v === undefined ? '–' : v ? 'yes' : 'NO');

export async function parentMain() {
  process.stderr.write('render: engines\n');
  const r = await runChild(new URL('./render.mjs', import.meta.url).pathname, ['--child', 'engines'], { timeoutMs: 300_000 });
  if (r.code !== 0 || r.timedOut) throw new Error(`render engines child failed: ${r.stderr}`);
  const rows = r.lines.map((x) => [
    x.case,
    x.chars,
    ms(x.engineMs, x.long),
    ms(x.hfMs, x.long),
    x.pythonMs === undefined ? (x.pythonError ? 'raises' : '–') : ms(x.pythonMs, x.long),
    ratio(x.hfMs, x.engineMs),
    ratio(x.pythonMs, x.engineMs),
    ms(x.chatMs, x.long),
    `${yn(x.engineSame)} / ${yn(x.hfSame)} / ${yn(x.chatSame)}`,
  ]);
  console.log('\n## Chat template engines: ours vs @huggingface/jinja vs Python Jinja2 (same template and data, no V8 flag)\n');
  console.log(
    table(
      [
        'case',
        'prompt chars',
        'engine',
        '@huggingface/jinja',
        'Jinja2 (Python)',
        '@hf/jinja ÷ engine',
        'Jinja2 ÷ engine',
        'renderChat path',
        'text = Jinja2 (engine / @hf / renderChat)',
      ],
      rows,
    ),
  );
  console.log(
    `\nms unless marked. Medians: ${LONG_REPS} full renders per JS engine (the better of 2 interleaved runs each), 5 in Python; warm: batches of ${SHORT_BATCH} renders (${SHORT_BATCH / 10} for the two slower ones).`,
  );
  console.log("@huggingface/jinja renders the raw context with the library's own tojson, so its text may differ from Jinja2's where a template uses tojson.");
  console.log(`Machine: ${machine().cpu}, Node ${process.version}`);
  return r.lines;
}
