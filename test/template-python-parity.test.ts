/**
 * The engine against Python Jinja2 where JS and Python differ: small templates whose text (or
 * error) is Jinja2's, asked of the oracle (test/helpers/jinja2_oracle.py) at test time. Filters
 * and methods that bound their size before building a result give Jinja2's answer at ordinary
 * sizes; names every JS object has (constructor, toString, __proto__) are no filters, tests or
 * attributes; ints, string order, dict keys and reprs are Python's; sessions render as full
 * renders do.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { HAVE_PYTHON_JINJA, Jinja2Oracle, warnIfNoPython } from './helpers/py-render.js';
import { raisesLikeJinja2, renderUnderTest, UNDER_TEST } from './helpers/template-under-test.js';

const oracle = HAVE_PYTHON_JINJA ? new Jinja2Oracle() : undefined;
afterAll(() => oracle?.close());
warnIfNoPython('Python parity rows');

/** [template, context]: the context defaults to one user message. */
const ROWS: Array<[string, Record<string, unknown>?]> = [
  // Bounded builders, at ordinary sizes.
  ["{{ 'abc' | replace('', '-') }}|{{ 'abc' | replace('', '-', 2) }}|{{ '' | replace('', '-') }}|{{ 'ab' | replace('', '', 1) }}"],
  ["{{ 'a😀b'.replace('', '$&', 10) }}|{{ 'aaaa'.replace('a', 'b', 2) }}|{{ 'aaaa' | replace('aa', 'b') }}|{{ 'a$b' | replace('$', '$$') }}"],
  ["{{ 'aXbXc'.replace('X', '', 0) }}|{{ 'aXbXc'.replace('X', '-', -1) }}|{{ 'abc'.replace('', '.', 0) }}"],
  ['{{ [1, 2, 3, 4, 5] | batch(2, 0) | list }}|{{ [1, 2, 3] | batch(2) | list }}|{{ [1, 2, 3] | batch(2, none) | list }}'],
  ['{{ [1, 2, 3] | batch(0) | list }}|{{ [1, 2, 3] | batch(-1, 9) | list }}|{{ [] | batch(0) | list }}'],
  ["{{ [1, 2, 3, 4, 5] | slice(3) | list }}|{{ [1, 2, 3, 4] | slice(3, 'x') | list }}"],
  ['{{ ([[1] * 100] * 100) | sum(start=[]) | length }}|{{ [[1], [2]] | sum(start=[0]) }}|{{ [[1], [2]] | sum(start=[]) }}'],
  ["{{ 'x' | center(6) }}|{{ 'ab' | center(7) }}|{{ 'a'.ljust(3, '*') }}|{{ 'a'.rjust(3) }}|{{ '-5'.zfill(4) }}"],
  ["{{ '%5s|%-5d|%05d' | format('a', 3, -4) }}|{{ '{:>5}|{:*^7}|{:<3}'.format('a', 'b', 'c') }}"],
  ["{{ 'a\\tbc\\td'.expandtabs(4) }}|{{ 'a\\tb'.expandtabs() }}|{{ 'a\\nb' | indent(3) }}|{{ 'a\\n\\nb' | indent(2, true, true) }}"],
  ["{{ 'aa bb cc dd' | wordwrap(5) }}|{{ 'aa bb\\n\\ncc' | wordwrap(2, wrapstring='/') }}"],
  ["{{ '-'.join(['a', 'b', 'c']) }}|{{ ['a', 'b'] | join(', ') }}|{{ [1, {'a': 2}] | tojson(indent=2) }}"],
  // unique is a set: 1, 1.0 and True are one key (and it is not quadratic).
  ["{{ [1, 1.0, true, 2, 'a', 'A', 'b', none, none, 0, false, -0.0, 2**70, 1180591620717411303424.0, (1, 2), (1, 2), 1.5, 1.5] | unique | list }}"],
  ["{{ ['a', 'A'] | unique(case_sensitive=true) | list }}|{{ messages | unique(attribute='role') | list | length }}"],
  ["{{ range(100000) | map('string') | unique | list | length }}|{{ (range(50000) | list + range(50000) | list) | unique | list | length }}"],
  // Python prints at most 4300 decimal digits of an int (ValueError past it).
  ['{{ 10 ** 4299 > 5 }}|{{ (10 ** 4299) | string | length }}|{{ (-10 ** 4299) | string | length }}|{{ "%x" | format(2 ** 20000) | length }}'],
  ["{{ ('1' * 5000) | int }}|{{ ('1' * 4300) | int | string | length }}|{{ ('1.' ~ '0' * 5000) | int }}"],
  ['{{ 10 ** 4300 }}'],
  ['{{ [10 ** 5000] | tojson }}'],
  ["{{ '{}'.format(10 ** 5000) }}"],
  ["{{ '%d' | format(10 ** 5000) }}"],
  ['{{ (2 ** 70) * (3 ** 40) }}|{{ 2 ** -2 }}|{{ (2 ** 70) ** 2 }}|{{ (2 ** 64) ** -1 }}|{{ (-3) ** 41 }}'],
  // rsplit(None, n) strips only the whitespace it split at.
  ["{{ '  a b  c '.rsplit(None, 1) }}|{{ '  a b  c '.rsplit(none, 0) }}|{{ ' a  b '.rsplit(None, 5) }}|{{ '\ta\nb c '.rsplit(None, 1) }}"],
  // Strings order by code point (an astral character after U+FFFF), everywhere they are compared.
  ["{{ '😀' > '\uffff' }}|{{ 'a😀' < 'a\uffff' }}|{{ ['\uffff', '😀', 'a'] | sort }}|{{ ['\uffff', '😀'] | max }}|{{ ['😀', '\uffff'] | min }}"],
  ["{{ {'\uffff': 1, '😀': 2} | dictsort }}|{{ {'\uffff': 1, '😀': 2} | tojson(sort_keys=true) }}|{{ {'😀': 2, '\uffff': 1} | pprint }}"],
  ["{{ [{'n': '😀'}, {'n': '\ue000'}] | sort(attribute='n') | map(attribute='n') | join }}|{{ ['😀', '\ue000'] | sort(reverse=true) | join }}"],
  // A dict literal's 1, 1.0 and True are one key (the first kept, with the last value).
  [
    "{{ {1: 'a', true: 'c'} }}|{{ {1.0: 'a', 1: 'b'} }}|{{ {true: 1, 1: 2, 1.0: 3, 'x': 4, 0: 5, false: 6} }}|{{ {2**70: 1, 2.0**70: 2} }}|{{ {1: 'a', true: 'c'}[1] }}|{{ {1: 'a', true: 'c'} | length }}",
  ],
  // -0 in the context is Python's int 0 (json.loads('-0') is 0): no -0.0 from arithmetic on it.
  [
    '{{ x * 1.0 }}|{{ x / 1 }}|{{ x | float }}|{{ "%f" | format(x) }}|{{ x + 0.5 - 0.5 }}|{{ -x }}|{{ x ** 1.0 }}|{{ y[0] * 1.0 }}|{{ -0.0 }}|{{ "{:f}".format(x) }}',
    { x: -0, y: [-0] },
  ],
  // Jinja2's reprs of a loop and a macro.
  ['{% for a in [1] %}{% for b in [1, 2, 3] %}{{ loop }}{% endfor %}{% endfor %}|{% for a in [1] %}{{ [loop] }}{{ loop | string }}{% endfor %}'],
  [
    '{% macro f() %}{{ caller }}{% endmacro %}{% call f() %}x{% endcall %}|{% macro g(a) %}{% endmacro %}{{ [g] }}{{ g }}{{ g | string }}|{% macro h() %}{% macro inner() %}{% endmacro %}{{ inner }}{% endmacro %}{{ h() }}',
  ],
  // JS object properties are not Jinja2 names.
  ['{{ 0 | constructor }}'],
  ['{% if 0 is constructor %}T{% endif %}'],
  ["{{ 'constructor' is filter }}|{{ 'toString' is test }}|{{ '__proto__' is filter }}|{{ 'upper' is filter }}|{{ 'odd' is test }}"],
  ['{{ 0 | toString }}'],
  ["{{ [0] | map('constructor') | list }}"],
  ["{{ [0] | select('constructor') | list }}"],
  ["{{ messages | selectattr('role', 'toString') | list }}"],
  ['{{ 0 | hasOwnProperty }}'],
  ['{{ {}.constructor }}|{{ {}.toString }}|{{ {}.__proto__ }}|{{ {}.hasOwnProperty }}|{{ {}.valueOf }}'],
  ["{{ ''.constructor }}|{{ ''.toString }}|{{ ''.__proto__ }}|{{ [].constructor }}|{{ [].toString }}|{{ [].__proto__ }}"],
  ['{{ namespace().constructor }}|{{ namespace().toString }}|{{ namespace(a=1).__proto__ }}'],
  ['{% for m in messages %}{{ loop.constructor }}|{{ loop.toString }}|{{ loop.__proto__ }}{% endfor %}'],
  ['{{ messages[0].constructor }}|{{ messages[0].toString }}|{{ messages.constructor }}|{{ messages[0]["constructor"] }}'],
  ['{{ constructor }}|{{ toString }}|{{ hasOwnProperty is defined }}'],
  ["{{ messages[0].get('constructor') }}|{{ 'constructor' in messages[0] }}|{{ messages[0] | attr('constructor') }}"],
  ['{{ range(3).constructor }}|{{ (1, 2).constructor }}|{{ (1.5).constructor }}|{{ none.constructor }}'],
  ['{% macro f() %}x{% endmacro %}{{ f.constructor }}|{{ f.toString }}|{{ raise_exception.constructor }}'],
  ['{{ x.constructor }}', { x: { constructor: 'own' } }],
  ['{{ x.toString }}|{{ x["__proto__"] }}', { x: { toString: 1, __proto__: 2 } }],
];

describe.skipIf(!HAVE_PYTHON_JINJA)(`Python parity rows vs Python Jinja2 on ${UNDER_TEST}`, () => {
  it.each(ROWS)('%s', async (template, context) => {
    const ctx = context ?? { messages: [{ role: 'user', content: 'hi' }] };
    const py = await oracle!.renderOne({ kind: 'template', template, context: ctx });
    const ours = renderUnderTest(template, structuredClone(ctx));
    if ('text' in py) expect(ours).toEqual({ text: py.text });
    else expect(raisesLikeJinja2(py.type, ours), `Jinja2 raised ${py.type}: ${py.error}; ours: ${JSON.stringify(ours)}`).toBe(true);
  });
});

describe('sessions render as a full render does', () => {
  const u = (content: string) => ({ role: 'user' as const, content });

  // ns.x == bump(): Python reads ns.x before calling bump(), which sets it. A recorded iteration
  // must read it in that order too. Jinja2's text for two messages is NENE.
  it.skipIf(!HAVE_PYTHON_JINJA)('a comparison reads its left namespace key before the right side writes it', async () => {
    const { loadTokenizer } = await import('../src/index.js');
    const tok = await loadTokenizer('qwen3');
    const chatTemplate =
      '{% set ns = namespace(x=0) %}{% macro bump() %}{% set ns.x = ns.x + 1 %}{{ ns.x }}{% endmacro %}{% for m in messages %}{% if ns.x == bump()|int %}EQ{% else %}NE{% endif %}{% endfor %}';
    const session = tok.createSession();
    for (const n of [1, 2, 3]) {
      const messages = [u('a'), u('b'), u('c')].slice(0, n);
      const py = await oracle!.renderOne({ kind: 'template', template: chatTemplate, context: { messages } });
      expect(py).toEqual({ text: 'NE'.repeat(n) });
      expect(tok.renderChat(messages, { chatTemplate })).toBe('NE'.repeat(n));
      expect(Array.from(session.encodeChat(messages, { chatTemplate })), `${n} messages`).toEqual(Array.from(tok.encodeChat(messages, { chatTemplate })));
    }
  });

  it('printing the loop object in the messages loop', async () => {
    const { loadTokenizer } = await import('../src/index.js');
    const tok = await loadTokenizer('qwen3');
    const chatTemplate = '{% for m in messages %}{{ loop }}{{ m.content }}{% endfor %}';
    const session = tok.createSession();
    for (const n of [1, 2, 3]) {
      const messages = [u('a'), u('b'), u('c')].slice(0, n);
      // Jinja2's LoopContext repr: <LoopContext index/length>.
      const want = messages.map((m, i) => `<LoopContext ${i + 1}/${n}>${m.content}`).join('');
      expect(tok.renderChat(messages, { chatTemplate })).toBe(want);
      expect(Array.from(session.encodeChat(messages, { chatTemplate }))).toEqual(Array.from(tok.encodeChat(messages, { chatTemplate })));
    }
  });

  // A loop over range(50000) counts 100,000 (the range's items, then the loop's iterations), an
  // iteration of the messages loop 100,001; with five such loops after it, 4 messages (900,004)
  // fit in the default 1 M and 6 messages (1,100,006) do not. A session that
  // reused the first 4 iterations must fail as encodeChat does, not count them as 1 each.
  it('a reused iteration counts its inner loops toward maxIterations', async () => {
    const { loadTokenizer } = await import('../src/index.js');
    const tok = await loadTokenizer('qwen3');
    const chatTemplate = `{% for m in messages %}{% for i in range(50000) %}{% endfor %}{{ m.content }}{% endfor %}${'{% for i in range(50000) %}{% endfor %}'.repeat(5)}`;
    const four = [u('a'), u('b'), u('c'), u('d')];
    const six = [...four, u('e'), u('f')];
    const session = tok.createSession();
    expect(Array.from(session.encodeChat(four, { chatTemplate }))).toEqual(Array.from(tok.encodeChat(four, { chatTemplate })));
    expect(() => tok.encodeChat(six, { chatTemplate })).toThrow(expect.objectContaining({ code: 'E_TEMPLATE_LIMIT' }));
    expect(() => session.encodeChat(six, { chatTemplate })).toThrow(expect.objectContaining({ code: 'E_TEMPLATE_LIMIT' }));
  });
});

// Tool-call arguments sent as an object print as their json.dumps text where a template joins
// them to a string (DeepSeek's `'<｜tool▁sep｜>' + tool['function']['arguments']`): Python's
// json.dumps writes floats with repr (1e-05, 1e-07), which JS's JSON does not. The expected
// text: Jinja2 rendering the template with the arguments as the text Python's json.dumps gives
// for them (asked of the oracle through transformers' tojson, which is json.dumps).
const DEEPSEEK_V31 = [process.env.PROMPTENC_SHARED, '../../shared/', '../../../shared/']
  .filter((d): d is string => d !== undefined)
  .map((d) => new URL(`${d.replace(/\/?$/, '/')}templates/deepseek-v3.1.jinja`, import.meta.url))
  .find((u) => existsSync(u));

describe.skipIf(!HAVE_PYTHON_JINJA || DEEPSEEK_V31 === undefined)('object tool-call arguments in the DeepSeek-V3.1 template (../shared/templates)', () => {
  it('print as Python json.dumps does', async () => {
    const chatTemplate = readFileSync(DEEPSEEK_V31!, 'utf8');
    const { loadTokenizer } = await import('../src/index.js');
    const tok = await loadTokenizer('deepseek-v3');
    const args = { lr: 0.00001, eps: 1e-7, big: 1e22, n: 3, neg: -0, half: 0.5, s: 'a"b\u00e9', list: [1.5e-10, 2], nested: { x: 123456789.125 } };
    const dumped = await oracle!.renderOne({ kind: 'template', template: '{{ a | tojson }}', context: { a: args } });
    expect(dumped).toHaveProperty('text');
    const text = (dumped as { text: string }).text;
    const conv = (a: unknown) => [
      { role: 'user', content: 'tune it' },
      { role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name: 'train', arguments: a } }] },
      { role: 'tool', content: 'ok' },
    ];
    const py = await oracle!.renderOne({
      kind: 'template',
      template: chatTemplate,
      context: { messages: conv(text), bos_token: '<｜begin▁of▁sentence｜>', eos_token: '<｜end▁of▁sentence｜>', add_generation_prompt: true },
    });
    expect(py).toHaveProperty('text');
    expect((py as { text: string }).text).toContain('{"lr": 1e-05, "eps": 1e-07');
    expect(tok.renderChat(conv(args) as never, { chatTemplate, addGenerationPrompt: true })).toBe((py as { text: string }).text);
  });
});

// Python's unicode-escape reads "\N{BULLET}" as U+2022 by the Unicode name database, which the
// engine does not carry: it refuses the escape (E_TEMPLATE) instead of printing "\N{BULLET}".
describe('\\N{...} string escapes', () => {
  it('are refused with E_TEMPLATE, not printed as written', () => {
    expect(renderUnderTest('{{ "\\N{BULLET}" }}', {})).toMatchObject({ code: 'E_TEMPLATE' });
    expect(renderUnderTest("{{ 'a\\\\N' }}", {})).toEqual({ text: 'a\\N' });
  });
});
