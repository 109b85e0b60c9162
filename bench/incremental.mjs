// Question: what does adding one ~1 KB turn to a long history cost, encode work only?
// Compares a full encode of the prompt (the control), session.encode and session.encodeDelta
// on the prompt text (they compare it with the previous one), the chat path (the session's
// incremental render, timed apart, then its encode work: "chat delta"), and the segment cache,
// at histories of 10k / 50k / 200k tokens, for DeepSeek-V3 and the GLM-format tokenizer.
// Template rendering is timed separately: a full render ("render") and the session's
// incremental one ("incremental render").
// "turn alone" is the floor of any incremental scheme: a plain encode of only the text the
// new prompt adds (from the first character where it differs from the history's prompt),
// timed in the same state as the session calls (right after an encode of the history), with
// no prefix compare and no bookkeeping. full / turn alone bounds what any session can reach.
// "turn after render" is the same plain encode timed where the chat path's encode runs: right
// after an incremental render of the new conversation (the render evicts the caches and TLB
// entries the encode path needs; the first call into the addon then costs ~12 µs by itself).
// full / turn after render bounds what the chat path can reach.
import { loadTokenizer } from '../dist/index.js';
import { agentHistory, bigText, rng } from './helpers/conversation.mjs';
import { buildGlmTokenizerDir, removeGlmTokenizerDir } from './helpers/glm-tokenizer.mjs';
import { f, jsonOutPath, machine, median, table, writeJson } from './_common.mjs';

const SIZES = [10_000, 50_000, 200_000];
const REPS = 15;

/**
 * Template output is a V8 rope; the first consumer flattens it (~1 ms per 500 KB). Every
 * engine here gets flat strings, and the flatten is counted with rendering.
 */
function flat(s) {
  Number(s); // ToNumber flattens the string in place
  return s;
}

/**
 * Where b first differs from a (never inside a surrogate pair): the start of the text a new
 * prompt adds. Untimed, so a plain loop; the library's own compare is internal.
 */
function firstDifference(a, b) {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i > 0) {
    const c = a.charCodeAt(i - 1);
    if (c >= 0xd800 && c <= 0xdbff) i--;
  }
  return i;
}

function ms(fn) {
  const t0 = process.hrtime.bigint();
  const out = fn();
  return [Number(process.hrtime.bigint() - t0) / 1e6, out];
}

/**
 * A process that serves conversations runs the session code many times; the first calls of a
 * fresh process run it in V8's interpreter (an untimed ad-hoc run: a steady 200 k-token call
 * took 77 µs after 20 calls and 37 µs after 300). So before anything is timed, one session
 * follows a small conversation for WARM_CALLS calls, on the chat and the text path, untimed. The
 * native full encode needs no warm-up; each timed row still starts from its own fresh session.
 */
function warmUp(tok) {
  let messages = agentHistory(tok, 10_000);
  const r = rng(7);
  const s = tok.createSession();
  const t = tok.createSession();
  for (let i = 0; i < WARM_CALLS; i++) {
    messages = [...messages, { role: 'user', content: bigText(r, 1000) }];
    s.encodeChatDelta(messages);
    t.encodeDelta(flat(tok.renderChat(messages)), { addSpecialTokens: false });
  }
}
const WARM_CALLS = 200;

async function measure(name, source) {
  const tok = await loadTokenizer(source);
  const cached = await loadTokenizer(source, { segmentCache: { maxBytes: 256 * 1024 * 1024 } });
  warmUp(tok);
  warmUp(cached);
  const rows = [];
  for (const size of SIZES) {
    const history = agentHistory(tok, size);
    const r = rng(size);
    const full = [];
    const sess = [];
    const delta = [];
    const changed = [];
    const cache = [];
    const render = [];
    const alone = [];
    const aloneRendered = [];
    const chatRender = [];
    const chatEncode = [];
    let tokens = 0;
    for (let i = 0; i < REPS; i++) {
      const turn = { role: 'user', content: bigText(r, 1000) };
      const next = [...history, turn];
      const [tRender, prompt] = ms(() => flat(tok.renderChat(next)));
      const historyPrompt = flat(tok.renderChat(history));
      render.push(tRender);
      const [tFull, want] = ms(() => tok.encode(prompt, { addSpecialTokens: false }));
      full.push(tFull);
      tokens = want.length;
      // Session: warm on the history (untimed), then time the encode of the new prompt.
      const s = tok.createSession();
      s.encode(historyPrompt, { addSpecialTokens: false });
      const [tSess, got] = ms(() => s.encode(prompt, { addSpecialTokens: false }));
      sess.push(tSess);
      // Delta: same warm-up, then only the ids after the reused prefix come back.
      const sd = tok.createSession();
      const base = sd.encodeDelta(historyPrompt, { addSpecialTokens: false });
      const prev = sd.encode(historyPrompt, { addSpecialTokens: false });
      const [tDelta, d] = ms(() => sd.encodeDelta(prompt, { addSpecialTokens: false }));
      delta.push(tDelta);
      changed.push(d.ids.length);
      if (
        base.total !== prev.length ||
        d.total !== want.length ||
        !d.ids.every((v, j) => v === want[d.reused + j]) ||
        !prev.subarray(0, d.reused).every((v, j) => v === want[j])
      ) {
        throw new Error(`${name} ${size}: delta result differs from the full encode`);
      }
      // Chat path: the session renders incrementally (reusing the previous render's loop
      // iterations) and learns the unchanged prefix from the render, so no O(n) text compare.
      const sc = tok.createSession();
      sc.encodeChatDelta(history);
      const [tChatRender, rendered] = ms(() => sc.renderIncremental(next));
      const [tChatEncode, dc] = ms(() => sc.encodeRenderedDelta(rendered));
      chatRender.push(tChatRender);
      chatEncode.push(tChatEncode);
      if (rendered.text !== prompt || dc.total !== want.length || !dc.ids.every((v, j) => v === want[dc.reused + j])) {
        throw new Error(`${name} ${size}: chat delta differs from the full encode`);
      }
      // Floor: only the added text, same preceding work as the session calls.
      const added = prompt.slice(firstDifference(historyPrompt, prompt));
      tok.encode(historyPrompt, { addSpecialTokens: false });
      alone.push(ms(() => tok.encode(added, { addSpecialTokens: false }))[0]);
      const sr = tok.createSession();
      sr.encodeChatDelta(history);
      sr.renderIncremental(next);
      aloneRendered.push(ms(() => tok.encode(added, { addSpecialTokens: false }))[0]);
      cached.encode(historyPrompt, { addSpecialTokens: false });
      const [tCache, got2] = ms(() => cached.encode(prompt, { addSpecialTokens: false }));
      cache.push(tCache);
      if (got.length !== want.length || got2.length !== want.length || !got.every((v, j) => v === want[j]) || !got2.every((v, j) => v === want[j])) {
        throw new Error(`${name} ${size}: incremental result differs from the full encode`);
      }
    }
    const row = {
      model: name,
      backend: tok.backend,
      historyTokens: tokens,
      fullMs: median(full),
      sessionMs: median(sess),
      deltaMs: median(delta),
      changedIds: median(changed),
      cacheMs: median(cache),
      turnMs: median(alone),
      turnRenderedMs: median(aloneRendered),
      chatRenderMs: median(chatRender),
      chatEncodeMs: median(chatEncode),
      renderMs: median(render),
    };
    row.sessionSpeedup = row.fullMs / row.sessionMs;
    row.deltaSpeedup = row.fullMs / row.deltaMs;
    row.cacheSpeedup = row.fullMs / row.cacheMs;
    row.turnBound = row.fullMs / row.turnMs;
    row.turnRenderedBound = row.fullMs / row.turnRenderedMs;
    row.chatSpeedup = row.fullMs / row.chatEncodeMs;
    rows.push(row);
    process.stderr.write(
      `${name} ${size}: full ${f(row.fullMs, 2)} ms, session ${f(row.sessionMs, 3)} ms, delta ${f(row.deltaMs, 3)} ms, cache ${f(row.cacheMs, 2)} ms, turn alone ${f(row.turnMs, 3)} ms (after render ${f(row.turnRenderedMs, 3)}), chat delta ${f(row.chatEncodeMs, 3)} ms + incremental render ${f(row.chatRenderMs, 2)} ms, render ${f(row.renderMs, 1)} ms\n`,
    );
  }
  return rows;
}

/**
 * The use a session is for: one session follows a conversation that grows by one ~1 KB user
 * turn per call, from a history of each size on (the rows above time the second call of a
 * fresh session, right after the call that encoded the whole history). Odd calls time the chat
 * path's encode work; even calls the plain encode of only the added text in the same place
 * (right after the incremental render). Both follow the same conversation, so every call is a
 * real step of it.
 * The control (a full encode of each timed prompt, also the check) runs after the session has
 * followed the conversation, back to back: interleaved, it would leave state no session user
 * has (an ad-hoc run at 200 k tokens: ~195 page faults per full encode for its fresh 800 KB
 * result, and the next chat delta 63 instead of 35 µs after the same render).
 */
async function steady(name, source) {
  const tok = await loadTokenizer(source);
  warmUp(tok);
  const rows = [];
  for (const size of SIZES) {
    let messages = agentHistory(tok, size);
    const r = rng(4242 + size);
    const s = tok.createSession();
    s.encodeChatDelta(messages);
    let prevText = s.renderIncremental(messages).text;
    s.encodeRenderedDelta(s.renderIncremental(messages));
    const chat = [];
    const alone = [];
    const render = [];
    const timed = []; // [rendered, delta] of the odd calls, checked and controlled below
    for (let i = 0; i < 2 * STEADY_CALLS; i++) {
      messages = [...messages, { role: 'user', content: bigText(r, 1000) }];
      const [tRender, rendered] = ms(() => s.renderIncremental(messages));
      render.push(tRender);
      if (i % 2 === 0) {
        // The chat delta never reads rendered.text (only the render's pieces), so prevText below
        // (which flattens it) comes after it.
        const [t, d] = ms(() => s.encodeRenderedDelta(rendered));
        chat.push(t);
        timed.push([rendered, d]);
      } else {
        // Reading the render flattens it, and it becomes the session's text; the chat path never
        // reads that text (only the render's pieces), so the even calls are not flattered by it.
        const added = rendered.text.slice(firstDifference(prevText, rendered.text));
        alone.push(ms(() => tok.encode(added, { addSpecialTokens: false }))[0]);
        s.encodeRenderedDelta(rendered);
      }
      prevText = rendered.text;
    }
    const full = [];
    let first = 0;
    let tokens = 0;
    for (const [rendered, d] of timed) {
      const prompt = flat(rendered.text);
      const [tFull, want] = ms(() => tok.encode(prompt, { addSpecialTokens: false }));
      full.push(tFull);
      if (first === 0) first = want.length;
      tokens = want.length;
      if (d.total !== want.length || !d.ids.every((v, j) => v === want[d.reused + j]))
        throw new Error(`${name} steady: chat delta differs from the full encode`);
    }
    const row = {
      model: name,
      firstTokens: first,
      tokens,
      fullMs: median(full),
      chatEncodeMs: median(chat),
      turnRenderedMs: median(alone),
      chatRenderMs: median(render),
    };
    process.stderr.write(
      `${name} steady ${size}: full ${f(row.fullMs, 2)} ms, chat delta ${f(row.chatEncodeMs, 3)} ms (${f(row.fullMs / row.chatEncodeMs, 0)}×), turn after render ${f(row.turnRenderedMs, 3)} ms, incremental render ${f(row.chatRenderMs, 2)} ms\n`,
    );
    rows.push(row);
  }
  return rows;
}
const STEADY_CALLS = 20;

const rows = [...(await measure('deepseek-v3', 'deepseek-v3')), ...(await measure('glm-format', buildGlmTokenizerDir()))];
const steadyRows = [...(await steady('deepseek-v3', 'deepseek-v3')), ...(await steady('glm-format', buildGlmTokenizerDir()))];
removeGlmTokenizerDir();
const md = table(
  [
    'model',
    'backend',
    'history tokens',
    'full encode ms',
    'session ms',
    'session ×',
    'session delta ms',
    'delta ×',
    'ids in delta',
    'segment cache ms',
    'cache ×',
    'turn alone ms',
    'bound ×',
    'turn after render ms',
    'bound after render ×',
    'chat delta ms',
    'chat ×',
    'render ms',
    'incremental render ms',
  ],
  rows.map((r) => [
    r.model,
    r.backend,
    r.historyTokens,
    f(r.fullMs, 2),
    f(r.sessionMs, 3),
    `${f(r.sessionSpeedup, 0)}×`,
    f(r.deltaMs, 3),
    `${f(r.deltaSpeedup, 0)}×`,
    r.changedIds,
    f(r.cacheMs, 2),
    `${f(r.cacheSpeedup, 1)}×`,
    f(r.turnMs, 3),
    `${f(r.turnBound, 0)}×`,
    f(r.turnRenderedMs, 3),
    `${f(r.turnRenderedBound, 0)}×`,
    f(r.chatEncodeMs, 3),
    `${f(r.chatSpeedup, 0)}×`,
    f(r.renderMs, 1),
    f(r.chatRenderMs, 2),
  ]),
);
const steadyMd = table(
  [
    'model',
    'tokens (first → last timed call)',
    'full encode ms',
    'chat delta ms',
    'chat ×',
    'turn after render ms',
    'bound after render ×',
    'incremental render ms',
  ],
  steadyRows.map((r) => [
    r.model,
    `${r.firstTokens} → ${r.tokens}`,
    f(r.fullMs, 2),
    f(r.chatEncodeMs, 3),
    `${f(r.fullMs / r.chatEncodeMs, 0)}×`,
    f(r.turnRenderedMs, 3),
    `${f(r.fullMs / r.turnRenderedMs, 0)}×`,
    f(r.chatRenderMs, 2),
  ]),
);
console.log(
  `## Adding one ~1 KB turn (median of ${REPS}); encode work only, render timed apart; after ${WARM_CALLS} untimed warm-up calls\n\n${md}\n\n` +
    `### One session following a growing conversation (from each history size, ${2 * STEADY_CALLS} calls of one ~1 KB user turn each; medians of ${STEADY_CALLS}; full encode = the same prompts)\n\n${steadyMd}\n\nMachine: ${machine().cpu}, Node ${process.version}`,
);
writeJson(jsonOutPath(), { machine: machine(), rows, steady: steadyRows });
