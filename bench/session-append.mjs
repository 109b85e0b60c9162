// Question: what does one more turn cost on a ~200k-token history, as a full encode, as a
// session given the whole new prompt (session.encode / encodeDelta: an O(n) text compare, then
// the new text), and as session.append / appendDelta (O(new text), no compare)?
// Control: a full encode of the new prompt (also the check: every session result must equal it).
// History: the prose and code workloads (bench/lib/workloads.ts) joined as user/assistant text
// with the model's added tokens between turns; a turn is ~1 KB of prose after such a token.
// Each session follows the history once (untimed), then takes REPS turns in a row, each timed:
// every call is a real step of one growing conversation. The control (a full encode of each
// timed prompt, also the check) runs after the session calls, back to back, as in
// bench/incremental.mjs's steady rows: interleaved, its fresh 800 KB results and 7 ms of other
// work would leave state no session user has. Before any timing, every call kind runs 40 times
// on a short text, so the session code is compiled as in a running server. The last column is
// appendDelta after 10 ms asleep before each call, as between a server's requests: on this kind
// of VM a µs-scale call after any ms-scale gap finds its caches cold and costs several times more.
//   node bench/session-append.mjs [MODEL…]     env BENCH_REPS (15), --json-out FILE
import { loadTokenizer } from '../dist/index.js';
import { buildWorkload } from 'promptenc/bench';
import { envNumber, jsonOutPath, machine, writeJson } from './_common.mjs';

const models = process.argv.slice(2).filter((a) => !a.startsWith('--') && !a.endsWith('.json'));
const MODELS = models.length ? models : ['llama3', 'gpt-4o'];
const REPS = envNumber('BENCH_REPS', 15);
const TARGET_TOKENS = 200_000;
const KINDS = ['encode', 'encodeDelta', 'append', 'appendDelta', 'appendDeltaIdle'];
/** appendDeltaIdle: appendDelta after 10 ms asleep (Atomics.wait), as between a server's requests. */
const IDLE_MS = 10;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

const ms = (fn) => {
  const t0 = process.hrtime.bigint();
  const v = fn();
  return [Number(process.hrtime.bigint() - t0) / 1e6, v];
};
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

const prose = buildWorkload('prose', { sizeBytes: 2 * 1024 * 1024 }).documents.map((d) => d.text);
const code = buildWorkload('code', { sizeBytes: 1024 * 1024 }).documents.map((d) => d.text);

const rows = [];
for (const model of MODELS) {
  const tok = await loadTokenizer(model, { backend: 'native' });
  const sep = [...tok.addedTokens.values()].find((t) => t.special)?.content ?? '\n\n';
  let history = '';
  for (let i = 0; tok.count(history, { addSpecialTokens: false }) < TARGET_TOKENS; i++) {
    history += `${sep}${i % 3 === 2 ? code[i % code.length] : prose[i % prose.length]}`.slice(0, 24_000);
  }
  const call = (s, kind, prompt, turn) =>
    kind === 'encode'
      ? s.encode(prompt, { addSpecialTokens: false })
      : kind === 'encodeDelta'
        ? s.encodeDelta(prompt, { addSpecialTokens: false })
        : kind === 'append'
          ? s.append(turn, { addSpecialTokens: false })
          : s.appendDelta(turn, { addSpecialTokens: false }); // appendDelta, appendDeltaIdle
  const turnOf = (r) => `${sep}${prose[(r * 7) % prose.length].slice(0, 1000)}`;
  for (const kind of KINDS) {
    const s = tok.createSession();
    let prompt = prose[0].slice(0, 20_000);
    s.encode(prompt, { addSpecialTokens: false });
    for (let r = 0; r < 40; r++) {
      const turn = turnOf(r).slice(0, 200);
      prompt += turn;
      call(s, kind, prompt, turn);
    }
  }
  const t = { full: [], encode: [], encodeDelta: [], append: [], appendDelta: [], appendDeltaIdle: [] };
  let tokens = 0;
  for (const kind of KINDS) {
    const s = tok.createSession();
    s.encode(history, { addSpecialTokens: false }); // untimed: the session follows the history
    let prompt = history;
    const steps = [];
    for (let r = 0; r < REPS; r++) {
      const turn = turnOf(r);
      prompt += turn;
      // A server's prompt is a flat string (from JSON.parse); `+` made a rope. ToNumber flattens
      // it. append and appendDelta are given only the turn, so theirs stays a rope until the control.
      if (!kind.startsWith('append')) Number(prompt);
      if (kind === 'appendDeltaIdle') Atomics.wait(sleeper, 0, 0, IDLE_MS);
      const [dt, out] = ms(() => call(s, kind, prompt, turn));
      t[kind].push(dt);
      // A delta's ids are only valid with the previous result; keep what the check needs.
      steps.push({ prompt, out: kind.includes('Delta') ? { reused: out.reused, ids: out.ids } : out });
    }
    let previous = tok.encode(history, { addSpecialTokens: false });
    for (const { prompt: p, out } of steps) {
      const [tFull, want] = ms(() => tok.encode(p, { addSpecialTokens: false }));
      t.full.push(tFull);
      tokens = want.length;
      const ids = kind.includes('Delta') ? [...previous.subarray(0, out.reused), ...out.ids] : out;
      if (!same(ids, want)) throw new Error(`${model}: ${kind} differs from the full encode`);
      previous = want;
    }
  }
  const row = { model, tokens, fullMs: median(t.full) };
  for (const k of KINDS) {
    row[`${k}Ms`] = median(t[k]);
    row[`${k}Speedup`] = row.fullMs / row[`${k}Ms`];
  }
  rows.push(row);
}

console.log(`one ~1 KB turn on a ~${TARGET_TOKENS / 1000}k-token history (native, ${REPS} turns in a row per session, median; ×full = full encode ÷ call)`);
console.log(
  `| model | tokens | full ms | encode ms (×full) | encodeDelta ms (×full) | append ms (×full) | appendDelta ms (×full) | appendDelta after ${IDLE_MS} ms idle (×full) |`,
);
console.log('|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  const c = (k) => `${r[`${k}Ms`].toFixed(3)} (${r[`${k}Speedup`].toFixed(0)}×)`;
  console.log(
    `| ${r.model} | ${r.tokens} | ${r.fullMs.toFixed(2)} | ${c('encode')} | ${c('encodeDelta')} | ${c('append')} | ${c('appendDelta')} | ${c('appendDeltaIdle')} |`,
  );
}
writeJson(jsonOutPath(), { question: 'session-append', machine: machine(), rows });
