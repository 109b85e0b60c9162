// Python json semantics used by `tojson`. Expected strings are CPython 3 outputs of
// repr(float) / json.dumps (documented behaviour: floats use repr, which switches to
// exponent notation below 1e-4 and from 1e16, with at least two exponent digits).
import { describe, expect, it } from 'vitest';
import { pythonFloatRepr, pythonJsonString } from '../src/template/pyjson.js';
import { loadTokenizer } from '../src/index.js';

describe('pythonFloatRepr = CPython repr(float)', () => {
  it.each([
    [1, '1.0'],
    [0.1, '0.1'],
    [-0, '-0.0'],
    [0, '0.0'],
    [1e16, '1e+16'],
    [1e15, '1000000000000000.0'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [1.5e-7, '1.5e-07'],
    [1e22, '1e+22'],
    [123456789012345.6, '123456789012345.6'],
    [-2.5, '-2.5'],
    [1e100, '1e+100'],
    [5e-324, '5e-324'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [Infinity, 'Infinity'],
    [NaN, 'NaN'],
  ])('%s → %s', (x, want) => {
    expect(pythonFloatRepr(x)).toBe(want);
  });
});

describe('pythonJsonString = json.dumps(str)', () => {
  it.each([
    ['plain', false, '"plain"'],
    ['a"b\\c', false, '"a\\"b\\\\c"'],
    ['\n\t\r\b\f', false, '"\\n\\t\\r\\b\\f"'],
    ['\u0001\u001f\u007f', false, '"\\u0001\\u001f\u007f"'],
    ['héllo 你好', false, '"héllo 你好"'],
    ['héllo 你好', true, '"h\\u00e9llo \\u4f60\\u597d"'],
    ['😀', true, '"\\ud83d\\ude00"'],
  ])('%j (ensure_ascii=%s)', (s, ascii, want) => {
    expect(pythonJsonString(s as string, ascii as boolean)).toBe(want);
  });
});

describe('tojson in templates follows json.dumps', () => {
  it('indent, sort_keys, separators and key order of JSON-text arguments', async () => {
    const tok = await loadTokenizer('qwen3', { backend: 'js' });
    const messages = [
      { role: 'user', content: 'x' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{"b": 1, "2": [1.0, 2e-7], "a": {"z": null, "y": true}}' } }],
      },
    ];
    const render = (tpl: string) => tok.renderChat(messages, { chatTemplate: tpl, addGenerationPrompt: false });
    const args = '{% set a = messages[1].tool_calls[0].function.arguments %}';
    // json.loads keeps document order, so "2" stays second (a JS object would put it first).
    expect(render(`${args}{{ a | tojson }}`)).toBe('{"b": 1, "2": [1.0, 2e-07], "a": {"z": null, "y": true}}');
    expect(render(`${args}{{ a | tojson(sort_keys=true) }}`)).toBe('{"2": [1.0, 2e-07], "a": {"y": true, "z": null}, "b": 1}');
    expect(render(`${args}{{ a | tojson(separators=(",", ":")) }}`)).toBe('{"b":1,"2":[1.0,2e-07],"a":{"z":null,"y":true}}');
    expect(render(`${args}{{ a.a | tojson(indent=2) }}`)).toBe('{\n  "z": null,\n  "y": true\n}');
    // Printed as text, the arguments are the JSON the client sent.
    expect(render(`${args}{{ 'call:' + a }}`)).toBe('call:{"b": 1, "2": [1.0, 2e-7], "a": {"z": null, "y": true}}');
  });
});
