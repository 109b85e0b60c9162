/**
 * Limits (issue 15, "Bounded"): each limit has a template that would hang or run the process
 * out of memory without it. Each case renders in a child process (a fatal OOM cannot be caught,
 * and a missing limit must fail this test, not hang the suite) with a small heap and a timeout,
 * and must end in a PromptencError with code E_TEMPLATE_LIMIT. The options are checked too: a
 * lower limit stops a render the default allows, and a render under the limit is unaffected.
 *
 * The child loads the engine bundled by rolldown (vite's bundler, already installed) from
 * src/template/engine/index.ts, so no build step is needed. Loops are nested ranges of at most 100,000 so that they stay valid in Jinja2's sandbox.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINE_ENTRY, type TemplateLimitsUnderTest } from './helpers/template-under-test.js';

let dir = '';
const CHILD = `
import { compileTemplate } from './engine.mjs';
import { readFileSync } from 'node:fs';
const { template, limits, cyclic } = JSON.parse(readFileSync(0, 'utf8'));
const context = { messages: [{ role: 'user', content: 'hi' }] };
if (cyclic) { context.messages[0].self = context.messages[0]; context.messages.push(context.messages); }
try {
  const t0 = Date.now();
  const text = compileTemplate(template, limits ? { limits } : undefined).render(context);
  console.log(JSON.stringify({ text: text.length > 1000 ? text.length + ' chars' : text, ms: Date.now() - t0 }));
} catch (e) {
  console.log(JSON.stringify({ code: e && e.code, name: e && e.name, message: String(e && e.message).slice(0, 300) }));
}
`;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'promptenc-limits-'));
  const { build } = createRequire(import.meta.url)('rolldown') as {
    build(o: { input: string; output: { file: string; format: 'esm' }; write: boolean; logLevel: 'silent' }): Promise<unknown>;
  };
  await build({ input: ENGINE_ENTRY, output: { file: path.join(dir, 'engine.mjs'), format: 'esm' }, write: true, logLevel: 'silent' });
  writeFileSync(path.join(dir, 'child.mjs'), CHILD);
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type ChildResult = { text: string; ms: number } | { code?: string; name?: string; message: string } | { crashed: string };

/** Renders in a child with a 384 MB heap and a 30 s timeout: without its limit, a case crashes or times out here. */
function renderInChild(template: string, opts: { limits?: TemplateLimitsUnderTest; cyclic?: boolean } = {}): ChildResult {
  const r = spawnSync(process.execPath, ['--max-old-space-size=384', '--stack-size=984', path.join(dir, 'child.mjs')], {
    input: JSON.stringify({ template, ...opts }),
    encoding: 'utf8',
    timeout: 30_000,
    killSignal: 'SIGKILL',
  });
  if (r.error || r.status !== 0) return { crashed: `${r.error?.message ?? `exit ${r.status} ${r.signal ?? ''}`} ${r.stderr.slice(-300)}` };
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as ChildResult;
}

const LIMIT_CASES: Array<{ name: string; template: string; limits?: TemplateLimitsUnderTest; codes?: string[] }> = [
  // Loop iterations: a hang without the limit (no output, so the output limit cannot help).
  {
    name: 'iterations: three nested loops, 10^9 in all, empty body',
    template: '{% for i in range(1000) %}{% for j in range(1000) %}{% for k in range(1000) %}{% endfor %}{% endfor %}{% endfor %}done',
  },
  { name: 'iterations: nested loops, 10^10 in all', template: '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}' },
  {
    name: 'iterations: a namespace counter in a long loop',
    template:
      '{% set ns = namespace(n=0) %}{% for i in range(100000) %}{% for j in range(100000) %}{% set ns.n = ns.n + 1 %}{% endfor %}{% endfor %}{{ ns.n }}',
  },
  // Jinja2's sandbox refuses a range over 100,000 items outright (jinja2/sandbox.py MAX_RANGE,
  // OverflowError): E_TEMPLATE for that is as good as the iteration limit.
  { name: 'iterations: range(100000000) | list', template: '{{ range(100000000) | list | length }}', codes: ['E_TEMPLATE', 'E_TEMPLATE_LIMIT'] },
  {
    name: 'iterations: range(100000000) with an empty body',
    template: '{% for i in range(100000000) %}{% endfor %}done',
    codes: ['E_TEMPLATE', 'E_TEMPLATE_LIMIT'],
  },
  { name: 'iterations: maxIterations 1000 stops 2000', template: '{% for i in range(2000) %}{% endfor %}', limits: { maxIterations: 1000 } },
  // Output size: out of memory without the limit.
  {
    name: 'output: 10^6 iterations of 1,000 characters',
    template: "{% for i in range(1000) %}{% for j in range(1000) %}{{ 'x' * 1000 }}{% endfor %}{% endfor %}",
  },
  {
    name: 'output: a string doubled 40 times',
    template: "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}",
  },
  { name: "output: 'x' * 10^10", template: "{{ ('x' * 10000000000) | length }}" },
  {
    name: 'output: a list doubled 40 times',
    template: '{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l | length }}',
  },
  { name: 'output: maxOutput 1000 stops 2000 characters', template: "{{ 'y' * 2000 }}", limits: { maxOutput: 1000 } },
  // Filters and methods that build a string or list from a small value and a large number: the
  // size is refused before it is allocated (V8 aborts the process on some oversized arrays).
  { name: 'output: [1] | batch(300000000, 0)', template: '{{ [1] | batch(300000000, 0) | list | length }}' },
  { name: 'output: [1] | slice(300000000, 0)', template: '{{ [1] | slice(300000000, 0) | list | length }}' },
  { name: "output: a 60 M string | replace('', 'y')", template: "{{ ('x' * (6 * 10**7)) | replace('', 'y') | length }}" },
  { name: "output: a 60 M string .replace('', 'y')", template: "{{ ('x' * (6 * 10**7)).replace('', 'y') | length }}" },
  { name: "output: replace('x', 1,000 characters) over 10^6 x", template: "{{ ('x' * 1000000) | replace('x', 'y' * 1000) | length }}" },
  { name: "output: '%500000000s' | format", template: "{{ '%500000000s' | format('a') | length }}" },
  { name: "output: '{:>500000000}'.format", template: "{{ '{:>500000000}'.format('a') | length }}" },
  { name: 'output: center(500000000)', template: "{{ 'a' | center(500000000) | length }}" },
  {
    name: 'output: ljust / rjust / zfill(500000000)',
    template: "{{ 'a'.ljust(500000000) | length }}{{ 'a'.rjust(500000000) | length }}{{ 'a'.zfill(500000000) | length }}",
  },
  { name: 'output: expandtabs(10^6) of 1,000 tabs', template: "{{ ('\t' * 1000).expandtabs(1000000) | length }}" },
  { name: 'output: indent(500000000)', template: "{{ 'a\nb' | indent(500000000) | length }}" },
  { name: 'output: tojson(indent=500000000)', template: '{{ [1, 2] | tojson(indent=500000000) | length }}' },
  {
    name: 'output: a 10 M separator joined 100 times',
    template: "{% set sep = 'x' * 10000000 %}{{ sep.join(['a'] * 100) | length }}{{ (['a'] * 100) | join(sep) | length }}",
  },
  { name: 'output: sum(start=[]) of 2,000 lists of 1,000', template: '{{ ([[1] * 1000] * 2000) | sum(start=[]) | length }}' },
  // Past V8's own string maximum (about 2^29) under a raised maxOutput: V8's RangeError is a limit too.
  { name: 'output: a string past V8 maximum (maxOutput raised)', template: "{{ ('x' * 600000000) | length }}", limits: { maxOutput: 2_000_000_000 } },
  // A big string operation repeated in a loop: its work counts toward maxIterations (one per
  // 1024 characters built, one per 16 replacements), or this runs for hours.
  {
    name: 'work: replace over 10 M characters, 10^5 times',
    template: "{% set big = 'x' * 10000000 %}{% for i in range(100000) %}{% set y = big.replace('x', 'y') %}{% endfor %}done",
  },
  {
    name: 'work: center(2000000), 10^5 times',
    template: "{% set big = 'x' * 1000000 %}{% for i in range(100000) %}{% set y = big | center(2000000) %}{% endfor %}done",
  },
  // Big integers: Python computes them (slowly), the engine refuses a result over MAX_INT_BITS
  // (runtime.ts) and counts big results against maxIterations.
  { name: 'integers: 7 ** (3 * 10**7)', template: '{{ 7 ** (3 * 10**7) }}' },
  { name: 'integers: (3 ** 10**8) > 5', template: '{{ (3 ** (10**8)) > 5 }}' },
  {
    name: 'integers: a product squared 40 times',
    template: '{% set ns = namespace(x=3) %}{% for i in range(40) %}{% set ns.x = ns.x * ns.x %}{% endfor %}{{ ns.x > 0 }}',
  },
  {
    name: 'integers: 10^5 multiplications of 60,000-bit numbers',
    template: '{% set big = 3 ** 37000 %}{% for i in range(100000) %}{% set x = big * 7 %}{% endfor %}done',
  },
  // Recursion depth: a stack overflow without the limit.
  { name: 'depth: a macro that calls itself forever', template: '{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}' },
  { name: 'depth: two macros calling each other', template: '{% macro a(n) %}{{ b(n) }}{% endmacro %}{% macro b(n) %}{{ a(n + 1) }}{% endmacro %}{{ a(0) }}' },
  {
    name: 'depth: maxDepth 10 stops depth 20',
    template: '{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(20) }}',
    limits: { maxDepth: 10 },
  },
  // Data nested deeper than the stack, built by the template: printing or serialising it recurses.
  {
    name: 'depth: tojson of a list nested 100,000 deep',
    template: '{% set ns = namespace(x=[]) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x | tojson }}',
  },
  {
    name: 'depth: printing a list nested 100,000 deep',
    template: '{% set ns = namespace(x=[]) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}',
  },
  {
    name: 'depth: comparing two lists nested 100,000 deep',
    template: '{% set ns = namespace(x=[], y=[]) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% set ns.y = [ns.y] %}{% endfor %}{{ ns.x == ns.y }}',
  },
  { name: 'depth: 100,000 nested parentheses', template: `{{ ${'('.repeat(100_000)}1${')'.repeat(100_000)} }}` },
  { name: 'depth: 20,000 nested if blocks', template: `${'{% if true %}'.repeat(20_000)}x${'{% endif %}'.repeat(20_000)}` },
];

describe('template limits (each in a child process)', () => {
  it.each(LIMIT_CASES)('$name → E_TEMPLATE_LIMIT', ({ template, limits, codes }) => {
    const r = renderInChild(template, { limits });
    if (codes) {
      expect(r).toHaveProperty('code');
      expect(codes).toContain((r as { code: string }).code);
    } else expect(r).toMatchObject({ code: 'E_TEMPLATE_LIMIT' });
  });

  it('a render under each lowered limit is unaffected', () => {
    expect(renderInChild('{% for i in range(500) %}{% endfor %}ok', { limits: { maxIterations: 1000 } })).toMatchObject({ text: 'ok' });
    expect(renderInChild("{{ ('y' * 900) | length }}", { limits: { maxOutput: 1000 } })).toMatchObject({ text: '900' });
    expect(renderInChild('{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{% endif %}{% endmacro %}[{{ f(5) }}]', { limits: { maxDepth: 10 } })).toMatchObject({
      text: '[]',
    });
  });

  it('the default limits allow a large real render (200,000 iterations, 10 MB of output)', () => {
    const r = renderInChild("{% for i in range(1000) %}{% for j in range(200) %}{{ 'z' * 50 }}{% endfor %}{% endfor %}");
    expect(r).toMatchObject({ text: '10000000 chars' });
  });

  // Python's answers for the same cyclic context (messages[0].self is messages[0], and messages
  // contains itself), from Jinja2 3.1.6: json.dumps raises "Circular reference detected"; repr
  // prints {...} and [...]. Either that exact text or a clear error is acceptable; a stack
  // overflow or a hang is not.
  it.each([
    ['{{ messages | tojson }}', undefined],
    ['{{ messages }}', "[{'role': 'user', 'content': 'hi', 'self': {...}}, [...]]"],
    ['{{ messages[0] | string }}', "{'role': 'user', 'content': 'hi', 'self': {...}}"],
    ['{{ messages[0] | dictsort }}', "[('content', 'hi'), ('role', 'user'), ('self', {'role': 'user', 'content': 'hi', 'self': {...}})]"],
  ])("cyclic data: %s gives a clear error (or Python's text), not a stack overflow", (template, python) => {
    const r = renderInChild(template, { cyclic: true });
    if ('text' in r) {
      expect(r.text).toBe(python);
      return;
    }
    expect(r).toHaveProperty('code');
    const e = r as { code: string; message: string };
    expect(['E_TEMPLATE', 'E_TEMPLATE_LIMIT']).toContain(e.code);
    expect(e.message).not.toMatch(/Maximum call stack/);
  });
});

describe('loadTokenizer({ templateLimits })', () => {
  const template = "{% for i in range(20) %}{% for j in range(20) %}{{ 'ab' }}{% endfor %}{% endfor %}";
  const messages = [{ role: 'user', content: 'hi' }];
  it('a lower limit stops renderChat and sessions with E_TEMPLATE_LIMIT; the default renders', async () => {
    const { loadTokenizer } = await import('../src/index.js');
    expect((await loadTokenizer('qwen3')).renderChat(messages, { chatTemplate: template })).toBe('ab'.repeat(400));
    for (const limits of [{ maxIterations: 100 }, { maxOutput: 500 }]) {
      const tok = await loadTokenizer('qwen3', { templateLimits: limits });
      expect(() => tok.renderChat(messages, { chatTemplate: template }), JSON.stringify(limits)).toThrow(expect.objectContaining({ code: 'E_TEMPLATE_LIMIT' }));
      expect(() => tok.createSession().encodeChat(messages, { chatTemplate: template })).toThrow(expect.objectContaining({ code: 'E_TEMPLATE_LIMIT' }));
    }
    const deep = await loadTokenizer('qwen3', { templateLimits: { maxDepth: 3 } });
    const nested = '{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{% endif %}x{% endmacro %}{{ f(5) }}';
    expect(() => deep.renderChat(messages, { chatTemplate: nested })).toThrow(expect.objectContaining({ code: 'E_TEMPLATE_LIMIT' }));
  });
  it.each([
    [{ maxIterations: -1 }, /options\.templateLimits\.maxIterations: expected a positive integer/],
    [{ maxOutput: 1.5 }, /options\.templateLimits\.maxOutput: expected a positive integer/],
    [{ maxDepht: 3 }, /options\.templateLimits\.maxDepht: unknown limit/],
    [5, /options\.templateLimits: expected an object/],
  ])('%j is refused with E_ARGUMENT', async (limits, message) => {
    const { loadTokenizer } = await import('../src/index.js');
    await expect(loadTokenizer('qwen3', { templateLimits: limits as never })).rejects.toMatchObject({
      code: 'E_ARGUMENT',
      message: expect.stringMatching(message),
    });
  });
});
