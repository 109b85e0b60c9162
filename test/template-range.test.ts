/**
 * range() as transformers' sandbox has it: jinja2/sandbox.py `safe_range` refuses a range of
 * more than MAX_RANGE = 100000 items with OverflowError("Range too big. The sandbox blocks
 * ranges larger than MAX_RANGE (100000)."); expected values are Jinja2 3.1's output. Without
 * the bound, `range(10**9)` grew one array until V8 aborted the process (a crash of the server
 * thread pool, and of any caller), which no time or heap limit can catch.
 */
import { describe, expect, it } from 'vitest';
import { loadTokenizer, PromptencError } from '../src/index.js';

const msgs = [{ role: 'user', content: 'x' }];
const cases: Array<[string, string | null]> = [
  ['{{ range(100000)|length }}', '100000'],
  ['{{ range(0, 200000, 2)|length }}', '100000'],
  ['{{ range(5, 0, -1)|list }}', '[5, 4, 3, 2, 1]'],
  ['{{ range(100001)|length }}', null],
  ['{{ range(0, 200001, 2)|length }}', null],
  ['{% for i in range(1000000000) %}{% endfor %}', null],
];

describe('range() under the sandbox bound', () => {
  it.each(cases)('%s', async (template, expected) => {
    const tok = await loadTokenizer('qwen3');
    if (expected !== null) {
      expect(tok.renderChat(msgs, { chatTemplate: template })).toBe(expected);
      return;
    }
    let err: unknown;
    try {
      tok.renderChat(msgs, { chatTemplate: template });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PromptencError);
    expect((err as PromptencError).code).toBe('E_TEMPLATE');
    expect((err as Error).message).toContain('Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).');
  });
});
