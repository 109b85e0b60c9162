/**
 * Sessions across requests: a conversation sent turn by turn with a session_id gets the ids
 * of a full encode every time, and says how many it reused; misses (another id, an evicted or
 * idle session, another process) are full encodes with the same ids.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer, type ChatMessage, type PromptTokenizer } from '../src/index.js';
import { agentConversation } from '../bench/helpers/conversation.mjs';
import { startServer, type TestServer } from './helpers/server.js';

let qwen: PromptTokenizer;
let deepseek: PromptTokenizer;
beforeAll(async () => {
  qwen = await loadTokenizer('qwen3');
  deepseek = await loadTokenizer('deepseek-v3');
});

/** The first `n` messages of a seeded agent conversation that end on a user or tool turn. */
function turns(seed: number, count: number): ChatMessage[][] {
  const all = agentConversation(seed, count, { bigEvery: 30, bigMin: 2000, bigMax: 8000 }) as ChatMessage[];
  const out: ChatMessage[][] = [];
  for (let n = 2; n <= all.length && out.length < count; n++) if (all[n - 1]!.role !== 'assistant') out.push(all.slice(0, n));
  return out;
}

describe('a 100-turn conversation through session_id', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(['--model', 'deepseek-v3', '--model', 'qwen3', '--threads', '1']);
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  for (const [path, model, field] of [
    ['/tokenize', 'deepseek-v3', 'tokens'],
    ['/v1/chat/completions/render', 'qwen3', 'token_ids'],
  ] as const) {
    it(`${path} (${model}): every turn equals a full encodeChat, and reuses the previous turn's ids`, async () => {
      const tok = model === 'qwen3' ? qwen : deepseek;
      const convo = turns(model === 'qwen3' ? 5 : 4, 100);
      expect(convo).toHaveLength(100);
      let reusedTotal = 0;
      for (const [t, messages] of convo.entries()) {
        const r = await server.post(path, { model, messages, session_id: `conv-${model}` });
        expect(r.status).toBe(200);
        const full = Array.from(tok.encodeChat(messages));
        expect(r.body[field], `turn ${t}`).toEqual(full);
        expect(r.body.session_id).toBe(`conv-${model}`);
        if (t === 0) expect(r.body.reused_tokens).toBe(0);
        else {
          // The reused ids are a prefix that the previous turn's ids share with this one.
          const prev = Array.from(tok.encodeChat(convo[t - 1]!));
          let common = 0;
          while (common < prev.length && prev[common] === full[common]) common++;
          expect(r.body.reused_tokens).toBeGreaterThan(0);
          expect(r.body.reused_tokens).toBeLessThanOrEqual(common);
        }
        reusedTotal += r.body.reused_tokens;
      }
      expect(reusedTotal).toBeGreaterThan(0);
    });
  }

  it('another session_id, or none, gives the same ids with nothing reused', async () => {
    const messages = turns(4, 10)[9]!;
    const full = Array.from(deepseek.encodeChat(messages));
    const other = await server.post('/tokenize', { model: 'deepseek-v3', messages, session_id: 'fresh' });
    expect(other.body.tokens).toEqual(full);
    expect(other.body.reused_tokens).toBe(0);
    const none = await server.post('/tokenize', { model: 'deepseek-v3', messages });
    expect(none.body.tokens).toEqual(full);
    expect(none.body).not.toHaveProperty('reused_tokens');
  });

  it('a session edited in the middle (not an append) still gives the full-encode ids', async () => {
    const convo = turns(9, 6);
    await server.post('/tokenize', { model: 'qwen3', messages: convo[5], session_id: 'edit' });
    const edited = convo[5]!.map((m, i) => (i === 2 ? { ...m, content: 'rewritten turn' } : m));
    const r = await server.post('/tokenize', { model: 'qwen3', messages: edited, session_id: 'edit' });
    expect(r.body.tokens).toEqual(Array.from(qwen.encodeChat(edited)));
  });
});

describe('session eviction and idle timeout are misses with the same ids', () => {
  it('--sessions 1: two alternating conversations evict each other; ids stay exact', async () => {
    const server = await startServer(['--model', 'qwen3', '--threads', '0', '--sessions', '1']);
    try {
      const a = turns(1, 4);
      const b = turns(2, 4);
      for (let t = 0; t < 4; t++) {
        for (const [id, convo] of [
          ['a', a],
          ['b', b],
        ] as const) {
          const r = await server.post('/tokenize', { messages: convo[t], session_id: id });
          expect(r.body.tokens).toEqual(Array.from(qwen.encodeChat(convo[t]!)));
          expect(r.body.reused_tokens).toBe(0);
        }
      }
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it('--session-idle 1: a session unused for over a second is a miss', async () => {
    const server = await startServer(['--model', 'qwen3', '--threads', '1', '--session-idle', '1']);
    try {
      const convo = turns(3, 3);
      await server.post('/tokenize', { messages: convo[0], session_id: 'idle' });
      const warm = await server.post('/tokenize', { messages: convo[1], session_id: 'idle' }, { 'x-request-id': 'warm-1' });
      expect(warm.body.reused_tokens).toBeGreaterThan(0);
      // The request's log line reports the reuse too.
      for (let i = 0; i < 100 && !server.logs().some((l) => l.req === 'warm-1'); i++) await new Promise((res) => setTimeout(res, 20));
      expect(server.logs().find((l) => l.req === 'warm-1')?.reused).toBe(warm.body.reused_tokens);
      await new Promise((res) => setTimeout(res, 1500));
      const cold = await server.post('/tokenize', { messages: convo[2], session_id: 'idle' });
      expect(cold.body.reused_tokens).toBe(0);
      expect(cold.body.tokens).toEqual(Array.from(qwen.encodeChat(convo[2]!)));
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});

describe('a conversation resent whole without session_id is recognized by its prefix', () => {
  for (const threads of ['0', '1']) {
    it(`--threads ${threads}: every turn equals a full encodeChat, and later turns reuse ids`, async () => {
      // --inline-max 1 sends every body to a thread when there is one (the routing by the body's opening).
      const server = await startServer(['--model', 'qwen3', '--threads', threads, '--inline-max', '1']);
      try {
        const convo = turns(11, 12);
        for (const [t, messages] of convo.entries()) {
          const r = await server.post('/tokenize', { model: 'qwen3', messages }, { 'x-request-id': `prefix-${threads}-${t}` });
          expect(r.status).toBe(200);
          expect(r.body.tokens, `turn ${t}`).toEqual(Array.from(qwen.encodeChat(messages)));
          expect(r.body).not.toHaveProperty('reused_tokens');
        }
        // Options are part of the key: the same messages with other kwargs reuse nothing and still agree.
        const last = convo.at(-1)!;
        const other = await server.post(
          '/tokenize',
          { model: 'qwen3', messages: last, chat_template_kwargs: { enable_thinking: false } },
          { 'x-request-id': `prefix-${threads}-kw` },
        );
        expect(other.body.tokens).toEqual(Array.from(qwen.encodeChat(last, { kwargs: { enable_thinking: false } })));
        await new Promise((r) => setTimeout(r, 100));
        const reused = (id: string) => server.logs().find((l) => l.req === id)?.reused as number | undefined;
        expect(reused(`prefix-${threads}-0`)).toBe(0);
        for (let t = 1; t < convo.length; t++) expect(reused(`prefix-${threads}-${t}`), `turn ${t}`).toBeGreaterThan(0);
        expect(reused(`prefix-${threads}-kw`)).toBe(0);
      } finally {
        expect(await server.stop()).toBe(0);
      }
    });
  }

  it('--no-prefix-cache: nothing is reused without a session_id', async () => {
    const server = await startServer(['--model', 'qwen3', '--threads', '0', '--no-prefix-cache']);
    try {
      const convo = turns(12, 3);
      for (const [t, messages] of convo.entries()) {
        const r = await server.post('/tokenize', { model: 'qwen3', messages }, { 'x-request-id': `noprefix-${t}` });
        expect(r.body.tokens).toEqual(Array.from(qwen.encodeChat(messages)));
      }
      await new Promise((r) => setTimeout(r, 100));
      for (let t = 0; t < 3; t++) expect(server.logs().find((l) => l.req === `noprefix-${t}`)).not.toHaveProperty('reused');
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
