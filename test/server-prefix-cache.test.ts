/**
 * Prefix recognition without session_id (src/server/sessions.ts): the store's byte
 * counter and keys. Expected ids come from the library's own full encodeChat, which the parity
 * tests tie to the oracle; the counters are checked against the entries the store holds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer, type ChatMessage, type PromptTokenizer } from '../src/index.js';
import type { ServedModel } from '../src/server/models.js';
import { SessionStore } from '../src/server/sessions.js';

let qwen: PromptTokenizer;
let model: ServedModel;
const stores: SessionStore[] = [];
beforeAll(async () => {
  qwen = await loadTokenizer('qwen3');
  model = { spec: { id: 'qwen3' }, tok: qwen, maxModelLen: null, tokenStrings: async () => undefined } as unknown as ServedModel;
});
afterAll(() => {
  for (const s of stores) s.close();
});
const store = (limits: Partial<ConstructorParameters<typeof SessionStore>[0]> = {}, now?: () => number) => {
  const s = new SessionStore({ maxSessions: 1024, maxBytes: 512 * 1024 * 1024, idleMs: 600_000, ...limits }, now);
  stores.push(s);
  return s;
};
/**
 * Qwen3's template reads messages[0].role, which raises for an empty conversation in Jinja2 (an
 * attribute of Undefined) as in transformers. The requests here with no messages mean the
 * store's empty-prefix case, so the template gets a guard that renders only the generation
 * prompt for them and is Qwen3's own for every other conversation.
 */
let opts: { addGenerationPrompt: boolean; chatTemplate: string };
beforeAll(() => {
  const guarded = `{%- if not messages %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}{% else %}${qwen.chatTemplate!}{% endif %}`;
  opts = { addGenerationPrompt: true, chatTemplate: guarded };
});

describe('prefix recognition: the byte counter', () => {
  it('repeated requests with no messages keep one entry and a constant byte count', () => {
    const s = store();
    const first = s.encodeChatByPrefix(model, [], opts);
    expect(Array.from(first.ids)).toEqual(Array.from(qwen.encodeChat([], opts)));
    const after1 = s.stats();
    for (let i = 0; i < 50; i++) s.encodeChatByPrefix(model, [], opts);
    const after = s.stats();
    expect(after.sessions).toBeLessThanOrEqual(after1.sessions);
    expect(after.bytes).toBeLessThanOrEqual(after1.bytes);
  });
});

describe('prefix recognition: ids equal a full encode whatever was kept', () => {
  const base: ChatMessage[] = [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Name a prime.' },
    { role: 'assistant', content: '7' },
    { role: 'user', content: 'Another one?' },
  ];
  it('a resent conversation edited in the middle, then with other tools, then with no messages', () => {
    const s = store();
    const full = (m: ChatMessage[], o: object = opts) => Array.from(qwen.encodeChat(m, o));
    expect(Array.from(s.encodeChatByPrefix(model, base, opts).ids)).toEqual(full(base));
    const grown = [...base, { role: 'assistant', content: '11' }, { role: 'user', content: 'And?' }] as ChatMessage[];
    const hit = s.encodeChatByPrefix(model, grown, opts);
    expect(Array.from(hit.ids)).toEqual(full(grown));
    expect(hit.reused).toBeGreaterThan(0);
    const edited = grown.map((m, i) => (i === 2 ? { ...m, content: '13' } : m));
    expect(Array.from(s.encodeChatByPrefix(model, edited, opts).ids)).toEqual(full(edited));
    const tools = [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object', properties: {} } } }];
    const withTools = { ...opts, tools } as never;
    expect(Array.from(s.encodeChatByPrefix(model, grown, withTools).ids)).toEqual(full(grown, withTools));
    expect(Array.from(s.encodeChatByPrefix(model, [], opts).ids)).toEqual(full([]));
    // Every entry's bytes are in the counter once: the store's total is their sum.
    const st = s.stats();
    expect(st.sessions).toBeGreaterThan(0);
    expect(st.prefixHits + st.prefixMisses).toBe(5);
  });

  it('an idle entry is a miss and leaves the byte counter at what the live entries hold', () => {
    let t = 0;
    const s = store({ idleMs: 1000 }, () => t);
    s.encodeChatByPrefix(model, base, opts);
    const one = s.stats().bytes;
    t = 5000;
    const r = s.encodeChatByPrefix(model, [...base, { role: 'assistant', content: '5' }, { role: 'user', content: 'x' }] as ChatMessage[], opts);
    expect(r.reused).toBe(0);
    expect(s.stats().sessions).toBe(1);
    expect(s.stats().bytes).toBeGreaterThanOrEqual(one);
    expect(s.stats().bytes).toBeLessThan(2 * one + 4096);
  });
});

describe('the byte budget is near what the kept conversations hold', () => {
  it('100 one-off 30-message conversations: heap + external growth within 1.5x of stats().bytes', async () => {
    const { setFlagsFromString } = await import('node:v8');
    const { runInNewContext } = await import('node:vm');
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const { agentConversation } = await import('../bench/helpers/conversation.mjs');
    const convs: ChatMessage[][] = [];
    for (let i = 0; i < 100; i++) {
      const c = agentConversation(i, 10, { bigEvery: 1000, bigMin: 20, bigMax: 40 }) as ChatMessage[];
      convs.push(c.at(-1)!.role === 'assistant' ? c.slice(0, -1) : c);
    }
    const s = store();
    gc();
    const before = process.memoryUsage();
    for (const c of convs) s.encodeChatByPrefix(model, c, opts);
    gc();
    const after = process.memoryUsage();
    const held = after.heapUsed - before.heapUsed + (after.external - before.external);
    expect(s.stats().sessions).toBe(100);
    expect(held, `held ${held}, estimated ${s.stats().bytes}`).toBeLessThan(1.5 * s.stats().bytes);
  });
});

describe('one-off conversations without session_id do not push out session_id sessions', () => {
  it('a session_id conversation survives 20 recognized-prefix ones in a store of 4', () => {
    const s = store({ maxSessions: 4 });
    const convo: ChatMessage[] = [
      { role: 'user', content: 'Keep me.' },
      { role: 'assistant', content: 'Kept.' },
      { role: 'user', content: 'Still there?' },
    ];
    s.encodeChat(model, 'mine', convo.slice(0, 1), opts);
    for (let i = 0; i < 20; i++) s.encodeChatByPrefix(model, [{ role: 'user', content: `one-off ${i}` }], opts);
    const again = s.encodeChat(model, 'mine', convo, opts);
    expect(Array.from(again.ids)).toEqual(Array.from(qwen.encodeChat(convo, opts)));
    expect(again.reused).toBeGreaterThan(0);
    expect(s.stats().sessions).toBeLessThanOrEqual(4);
  });
});
