/**
 * Hostile messages (issue 20, item 6): getters and Proxy traps that throw, cycles, nesting
 * too deep, values the template cannot hold. Each must fail with E_MESSAGES_INVALID naming
 * the path, on every chat entry point, never with the caller's raw error or E_TEMPLATE's
 * "Maximum call stack size exceeded". src/messages-guard.ts is the guard.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer, PromptencError, type ChatMessage, type PromptTokenizer } from '../src/index.js';
import { MAX_MESSAGES_DEPTH, snapshotMessages } from '../src/messages-guard.js';

let tok: PromptTokenizer;
beforeAll(async () => {
  tok = await loadTokenizer('qwen3');
});

const boom = (): never => {
  throw new Error('caller getter exploded');
};

function withGetter<T extends object>(obj: T, key: string): T {
  Object.defineProperty(obj, key, { get: boom, enumerable: true });
  return obj;
}

function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < depth; i++) v = { type: 'object', properties: { x: v } };
  return v;
}

type Row = [name: string, messages: () => unknown, tools: () => unknown, path: RegExp];
const user = (content: unknown) => ({ role: 'user', content });
const ROWS: Row[] = [
  [
    'getter on content throws',
    () => [withGetter({ role: 'user' }, 'content')],
    () => undefined,
    /messages\[0\]\.content: reading it threw: caller getter exploded/,
  ],
  ['getter on role throws', () => [user('hi'), withGetter({ content: 'x' }, 'role')], () => undefined, /messages\[1\]\.role: reading it threw/],
  [
    'getter inside a content part',
    () => [user([withGetter({ type: 'text' }, 'text')])],
    () => undefined,
    /messages\[0\]\.content\[0\]\.text: reading it threw/,
  ],
  ['getter on an array index', () => withGetter([user('a'), user('b')], '1'), () => undefined, /messages\[1\]: reading it threw/],
  [
    'Proxy get trap throws',
    () => [new Proxy({ role: 'user', content: 'x' }, { get: boom })],
    () => undefined,
    /messages\[0\]\.(role|content): reading it threw: caller getter exploded/,
  ],
  ['Proxy ownKeys trap throws', () => [new Proxy({ role: 'user', content: 'x' }, { ownKeys: boom })], () => undefined, /messages\[0\]: listing its keys threw/],
  [
    'revoked Proxy',
    () => {
      const r = Proxy.revocable({ role: 'user', content: 'x' }, {});
      r.revoke();
      return [r.proxy];
    },
    () => undefined,
    /messages\[0\]: reading it threw/,
  ],
  [
    'Proxy over the messages array',
    () =>
      new Proxy([user('x')], {
        get(t, k) {
          if (k === 'length') throw new Error('no length for you');
          return Reflect.get(t, k);
        },
      }),
    () => undefined,
    /messages: reading its length threw: no length for you/,
  ],
  [
    'a message that contains itself',
    () => {
      const m: Record<string, unknown> = { role: 'user', content: 'x' };
      m.self = m;
      return [m];
    },
    () => undefined,
    /messages\[0\]\.self: the value contains itself \(a cycle\)/,
  ],
  [
    'a cycle through content parts',
    () => {
      const parts: unknown[] = [{ type: 'text', text: 'a' }];
      parts.push({ type: 'text', text: 'b', more: parts });
      return [user(parts)];
    },
    () => undefined,
    /messages\[0\]\.content\[1\]\.more: the value contains itself/,
  ],
  [
    'the messages array inside a message',
    () => {
      const list: unknown[] = [];
      list.push({ role: 'user', content: 'x', history: list });
      return list;
    },
    () => undefined,
    /messages\[0\]\.history: the value contains itself/,
  ],
  ['a bigint in a message', () => [{ role: 'user', content: 'x', n: 10n }], () => undefined, /messages\[0\]\.n: expected JSON data, received a bigint/],
  ['a symbol in a message', () => [{ role: 'user', content: 'x', s: Symbol('s') }], () => undefined, /messages\[0\]\.s: expected JSON data, received a symbol/],
  [
    'a DAG that expands to 2^30 values',
    () => {
      let v: unknown = ['x'];
      for (let i = 0; i < 30; i++) v = [v, v];
      return [{ role: 'user', content: 'x', blowup: v }];
    },
    () => undefined,
    /messages: more than 1000000 values \(MAX_MESSAGES_VALUES\)/,
  ],
  ['nesting deeper than the limit', () => [{ role: 'user', content: 'x', deep: nested(MAX_MESSAGES_DEPTH) }], () => undefined, /nested deeper than 256 levels/],
  [
    'a tool whose getter throws',
    () => [user('x')],
    () => [{ type: 'function', function: withGetter({ name: 'f' }, 'description') }],
    /options\.tools\[0\]\.function\.description: reading it threw/,
  ],
  [
    'a cyclic tool schema',
    () => [user('x')],
    () => {
      const schema: Record<string, unknown> = { type: 'object' };
      schema.properties = { self: schema };
      return [{ type: 'function', function: { name: 'f', parameters: schema } }];
    },
    /options\.tools\[0\]\.function\.parameters\.properties\.self: the value contains itself/,
  ],
  [
    'a key that is no identifier',
    () => [{ role: 'user', content: 'x', 'a b': { 'c"d': 1n } }],
    () => undefined,
    /messages\[0\]\["a b"\]\["c\\"d"\]: expected JSON data/,
  ],
];

describe('hostile messages give E_MESSAGES_INVALID with the path', () => {
  for (const [name, messages, tools, path] of ROWS) {
    it(name, async () => {
      const calls: Array<[string, () => unknown]> = [
        ['renderChat', () => tok.renderChat(messages() as ChatMessage[], { tools: tools() as never })],
        ['encodeChat', () => tok.encodeChat(messages() as ChatMessage[], { tools: tools() as never })],
        ['countChat', () => tok.countChat(messages() as ChatMessage[], { tools: tools() as never })],
        ['countChatByMessage', () => tok.countChatByMessage(messages() as ChatMessage[], { tools: tools() as never })],
        ['fitChat', () => tok.fitChat(messages() as ChatMessage[], { tools: tools() as never, maxTokens: 1000 })],
        ['session.encodeChat', () => tok.createSession().encodeChat(messages() as ChatMessage[], { tools: tools() as never })],
      ];
      for (const [entry, call] of calls) {
        let err: unknown;
        try {
          await call();
        } catch (e) {
          err = e;
        }
        expect(err, entry).toBeInstanceOf(PromptencError);
        expect((err as PromptencError).code, `${entry}: ${(err as Error).message}`).toBe('E_MESSAGES_INVALID');
        expect((err as Error).message, entry).toMatch(path);
      }
    });
  }
});

describe('the guard keeps ordinary data as it was', () => {
  it('renders a DAG (one object used twice) as the plain copy renders', () => {
    const shared = user('the same message object twice');
    const params = { type: 'object', properties: { q: { type: 'string' } } };
    const call = { type: 'function', function: { name: 'f', arguments: { q: 'x' } } };
    const messages = [shared, { role: 'assistant', content: '', tool_calls: [call, call] }, shared] as ChatMessage[];
    const tools = [
      { type: 'function', function: { name: 'f', description: 'd', parameters: params } },
      { type: 'function', function: { name: 'g', description: 'd', parameters: params } },
    ];
    const plain = JSON.parse(JSON.stringify(messages)) as ChatMessage[];
    const plainTools = JSON.parse(JSON.stringify(tools)) as never;
    expect(tok.renderChat(messages, { tools: tools as never })).toBe(tok.renderChat(plain, { tools: plainTools }));
    expect(Array.from(tok.encodeChat(messages, { tools: tools as never }))).toEqual(Array.from(tok.encodeChat(plain, { tools: plainTools })));
  });

  it('copies own enumerable keys whatever the prototype, keeps holes and __proto__ keys', () => {
    class Msg {
      role = 'user';
      content = 'hi';
      get hidden(): string {
        return 'not an own key';
      }
    }
    const holes: number[] = [];
    holes[0] = 1;
    holes[2] = 3;
    const withProto = JSON.parse('{"__proto__": {"x": 1}, "y": 2}') as Record<string, unknown>;
    const copy = snapshotMessages([new Msg(), holes, withProto], 'messages') as unknown[];
    expect(copy[0]).toEqual({ role: 'user', content: 'hi' });
    expect(Object.getPrototypeOf(copy[0])).toBe(Object.prototype);
    expect(1 in (copy[1] as unknown[])).toBe(false);
    expect((copy[1] as unknown[]).length).toBe(3);
    expect(Object.keys(copy[2] as object)).toEqual(['__proto__', 'y']);
    expect(Object.getPrototypeOf(copy[2])).toBe(Object.prototype);
  });

  it('reads each getter once: a getter that changes its answer cannot change the render midway', () => {
    let reads = 0;
    const m = Object.defineProperty({ role: 'user' }, 'content', {
      enumerable: true,
      get: () => `read ${++reads}`,
    });
    const prompt = tok.renderChat([m as ChatMessage]);
    expect(reads).toBe(1);
    expect(prompt).toContain('read 1');
  });

  it('deep but legal nesting renders', () => {
    const tools = [{ type: 'function', function: { name: 'f', description: 'd', parameters: nested(MAX_MESSAGES_DEPTH / 2 - 10) } }];
    expect(tok.renderChat([user('x')] as ChatMessage[], { tools: tools as never })).toContain('"name": "f"');
  });
});
