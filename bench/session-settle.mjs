// Question: how does a session's per-turn encode work at 200k tokens move over the first calls
// after the call that encoded the whole history, back to back and with idle time between the
// calls (as while a model generates)? And how much does one steady incremental render allocate?
// bench/incremental times call 2 of fresh sessions and a session settled after many calls; this
// fills in the calls between, for the README's explanation of the gap. The control is a full
// encode of the same prompt (ratio = full / chat delta). After untimed warm-up calls, as there.
// For scale, the same idle protocol is applied to calls that are not ours (calibrate).
import v8 from 'node:v8';
import { createHash } from 'node:crypto';
import { loadTokenizer } from '../dist/index.js';
import { agentHistory, bigText, rng } from './helpers/conversation.mjs';
import { buildGlmTokenizerDir, removeGlmTokenizerDir } from './helpers/glm-tokenizer.mjs';
import { f, jsonOutPath, machine, median, table, writeJson } from './_common.mjs';

const SESSIONS = 12;
const CALLS = 6; // calls 2..7
const IDLE_MS = 200;

const us = (fn) => {
  const t0 = process.hrtime.bigint();
  const out = fn();
  return [Number(process.hrtime.bigint() - t0) / 1e3, out];
};

async function measure(name, source) {
  const tok = await loadTokenizer(source);
  const r = rng(11);
  {
    // Warm-up, untimed: the session code JIT-compiled, as in a process that serves conversations.
    let m = agentHistory(tok, 10_000);
    const s = tok.createSession();
    for (let i = 0; i < 200; i++) s.encodeChatDelta((m = [...m, { role: 'user', content: bigText(r, 1000) }]));
  }
  const history = agentHistory(tok, 200_000);
  const rows = [];
  for (const idle of [0, IDLE_MS]) {
    const chat = Array.from({ length: CALLS }, () => []);
    const full = [];
    for (let k = 0; k < SESSIONS; k++) {
      const s = tok.createSession();
      let m = history;
      s.encodeChatDelta(m);
      // Nothing else between the calls (a full encode there would leave every call as cold as
      // the second): the prompts and deltas are checked, and the control timed, afterwards.
      const done = [];
      for (let c = 0; c < CALLS; c++) {
        if (idle) await new Promise((resolve) => setTimeout(resolve, idle));
        m = [...m, { role: 'user', content: bigText(r, 1000) }];
        const rendered = s.renderIncremental(m);
        const [t, d] = us(() => s.encodeRenderedDelta(rendered));
        chat[c].push(t);
        done.push({ text: rendered.text, d });
      }
      for (const { text, d } of done) {
        Number(text); // flatten outside the timed region
        const [tf, want] = us(() => tok.encode(text, { addSpecialTokens: false }));
        full.push(tf);
        if (d.total !== want.length || !d.ids.every((v, j) => v === want[d.reused + j])) throw new Error(`${name}: chat delta differs from the full encode`);
      }
    }
    const fullUs = median(full);
    rows.push({ model: name, idleMs: idle, fullUs, chatUs: chat.map(median) });
    process.stderr.write(`${name} idle ${idle} ms: full ${f(fullUs / 1000, 2)} ms, calls 2..${CALLS + 1}: ${chat.map((c) => f(median(c), 0)).join(', ')} µs\n`);
  }
  // Heap growth across one steady incremental render (the garbage it leaves), median of 60.
  const s = tok.createSession();
  let m = history;
  s.encodeChatDelta(m);
  const grown = [];
  for (let i = 0; i < 60; i++) {
    m = [...m, { role: 'user', content: bigText(r, 1000) }];
    const before = v8.getHeapStatistics().used_heap_size;
    const rendered = s.renderIncremental(m);
    const after = v8.getHeapStatistics().used_heap_size;
    s.encodeRenderedDelta(rendered);
    if (after > before) grown.push(after - before); // a scavenge during the render hides its growth
  }
  return { rows, renderKb: median(grown) / 1024 };
}

/**
 * What idle time costs any small call on this machine, for scale: the same protocol (idle, then
 * one call) for a SHA-256 of 1 KB (node:crypto, nothing of ours) and a plain encode of a 1 KB
 * turn, each after the same number of untimed warm calls; medians of 15.
 */
async function calibrate() {
  const tok = await loadTokenizer('deepseek-v3');
  const text = bigText(rng(5), 1000);
  const ops = {
    'SHA-256 of 1 KB (node:crypto)': () => createHash('sha256').update(text).digest(),
    'plain encode of a 1 KB turn': () => tok.encode(text, { addSpecialTokens: false }),
  };
  const rows = [];
  for (const [op, fn] of Object.entries(ops)) {
    for (let i = 0; i < 300; i++) fn();
    const row = { op };
    for (const idle of [0, IDLE_MS]) {
      const xs = [];
      for (let i = 0; i < 15; i++) {
        await new Promise((resolve) => setTimeout(resolve, idle));
        xs.push(us(fn)[0]);
      }
      row[idle] = median(xs);
    }
    const warm = [];
    for (let i = 0; i < 200; i++) warm.push(us(fn)[0]);
    row.warm = median(warm);
    rows.push(row);
    process.stderr.write(`${op}: back to back ${f(row.warm, 1)} µs, after a timer ${f(row[0], 1)} µs, after ${IDLE_MS} ms idle ${f(row[IDLE_MS], 1)} µs\n`);
  }
  return rows;
}

const scale = await calibrate();
const results = [await measure('deepseek-v3', 'deepseek-v3'), await measure('glm-format', buildGlmTokenizerDir())];
removeGlmTokenizerDir();
const md = table(
  ['model', 'idle before each call', 'full encode ms', ...Array.from({ length: CALLS }, (_, c) => `call ${c + 2} µs (×)`)],
  results.flatMap((x) => x.rows.map((r) => [r.model, `${r.idleMs} ms`, f(r.fullUs / 1000, 2), ...r.chatUs.map((t) => `${f(t, 0)} (${f(r.fullUs / t, 0)}×)`)])),
);
console.log(
  `## Session encode work over the first calls after the history (200k tokens, median of ${SESSIONS} sessions; × = full encode ÷ chat delta)\n\n${md}\n\n` +
    `### What idle costs any small call here (same protocol, median of 15)\n\n${table(
      ['call', 'back to back µs', 'after a 0 ms timer µs', `after ${IDLE_MS} ms idle µs`],
      scale.map((r) => [r.op, f(r.warm, 1), f(r[0], 1), f(r[IDLE_MS], 1)]),
    )}\n\n` +
    `Heap growth across one steady incremental render: ${results.map((x, i) => `${i ? 'GLM format' : 'DeepSeek-V3'} ${f(x.renderKb, 0)} KB`).join(', ')}.\n\nMachine: ${machine().cpu}, Node ${process.version}`,
);
writeJson(jsonOutPath(), { machine: machine(), results, scale });
