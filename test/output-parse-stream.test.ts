/**
 * Streaming == one-shot: for every case of the tables, the events of createOutputParser fed any
 * split of the text fold to parseAssistantOutput of the whole text. Splits: every split into
 * two deltas (at every UTF-16 index, so inside characters too), one code unit per delta, and
 * random splits into many (multi-token deltas, as speculative decoding gives). Then the cost:
 * linear in the output length.
 */
import { describe, expect, it } from 'vitest';
import { createOutputParser, OutputCollector, parseAssistantOutput, type OutputParserOptions } from '../src/index.js';
import { ALL_CASES } from './helpers/output-cases.js';

function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 0x100000000;
  };
}

function streamed(text: string, cuts: number[], opts: OutputParserOptions) {
  const p = createOutputParser(opts);
  const c = new OutputCollector();
  let at = 0;
  for (const cut of [...cuts, text.length]) {
    const events = p.push(text.slice(at, cut));
    for (const e of events) if (e.type === 'tool_call_delta') expect(typeof e.argumentsText).toBe('string');
    c.add(events);
    at = cut;
  }
  return c.add(p.end()).result();
}

describe('stream == one-shot for every split', () => {
  const r = rng(5);
  for (const c of ALL_CASES) {
    it(`${c.format}: ${c.name}`, () => {
      const opts: OutputParserOptions = { format: c.format, tools: c.tools, startInReasoning: c.startInReasoning };
      const want = parseAssistantOutput(c.text, opts);
      for (let k = 0; k <= c.text.length; k++) expect(streamed(c.text, [k], opts)).toEqual(want);
      expect(
        streamed(
          c.text,
          Array.from({ length: c.text.length }, (_, i) => i),
          opts,
        ),
      ).toEqual(want);
      for (let n = 0; n < 30; n++) {
        const cuts = Array.from({ length: c.text.length }, (_, i) => i).filter(() => r() < 0.15);
        expect(streamed(c.text, cuts, opts)).toEqual(want);
      }
      // The same with the auto start (undefined) and each explicit start, where the format thinks.
      for (const start of [undefined, true, false]) {
        const o = { ...opts, startInReasoning: start };
        const w = parseAssistantOutput(c.text, o);
        for (let k = 0; k <= c.text.length; k += 3) expect(streamed(c.text, [k], o)).toEqual(w);
      }
    });
  }
});

describe('events', () => {
  it('content streams as it comes; a call comes whole at its end', () => {
    const p = createOutputParser({ format: 'qwen3', startInReasoning: false });
    expect(p.push('Hello ')).toEqual([{ type: 'content', text: 'Hello' }]);
    expect(p.push('world<tool_')).toEqual([{ type: 'content', text: ' world' }]);
    expect(p.push('call>\n{"name": "f", "arguments": {"a": 1}}\n')).toEqual([]);
    expect(p.push('</tool_call>')).toEqual([
      { type: 'tool_call_start', index: 0, id: 'call_0', name: 'f' },
      { type: 'tool_call_delta', index: 0, argumentsText: '{"a": 1}' },
      { type: 'tool_call_end', index: 0, arguments: { a: 1 } },
    ]);
    expect(p.end()).toEqual([]);
    expect(() => p.push('x')).toThrow(expect.objectContaining({ code: 'E_ARGUMENT' }));
  });

  it('reasoning streams when the start is known', () => {
    const p = createOutputParser({ format: 'glm47', startInReasoning: true });
    expect(p.push('step one, ')).toEqual([{ type: 'reasoning', text: 'step one,' }]);
    expect(p.push('two</thi')).toEqual([{ type: 'reasoning', text: ' two' }]);
    expect(p.push('nk>Done')).toEqual([{ type: 'content', text: 'Done' }]);
  });
});

describe('cost', () => {
  // Deterministic: the characters of every string the parsers search (String.prototype.indexOf,
  // what findFirst uses), counted by the whole string's length -- also what V8 pays to flatten a
  // rope before searching it, the quadratic this guards against (held text kept as one growing
  // string). Timing it instead was noise on a loaded machine.
  const work = (text: string, step: number, opts: OutputParserOptions): number => {
    const indexOf = String.prototype.indexOf;
    let chars = 0;
    String.prototype.indexOf = function (this: string, ...args: [string, number?]) {
      chars += this.length;
      return indexOf.apply(this, args);
    };
    try {
      const p = createOutputParser(opts);
      for (let i = 0; i < text.length; i += step) p.push(text.slice(i, i + step));
      p.end();
    } finally {
      String.prototype.indexOf = indexOf;
    }
    return chars;
  };
  const body = (n: number) => 'word <tool and text `code` 👋 '.repeat(n);
  it('linear in the output length, in content, in a held region, in an auto-start lead and in harmony', () => {
    for (const [make, opts] of [
      [(n: number) => body(n), { format: 'glm47', startInReasoning: false }],
      [(n: number) => `<tool_call>\n{"name": "f", "arguments": {"s": "${body(n)}"}}\n</tool_call>`, { format: 'qwen3', startInReasoning: false }],
      [(n: number) => `${body(n)}</think>ok`, { format: 'glm47' }],
      [(n: number) => `<|channel|>analysis<|message|>${body(n)}<|end|>`, { format: 'gpt-oss' }],
      [(n: number) => `<|channel|>commentary to=functions.f<|message|>{"s": "${body(n)}"}<|call|>`, { format: 'gpt-oss' }],
    ] as const) {
      const small = work(make(200), 3, opts);
      const large = work(make(3200), 3, opts);
      // 16x the text: linear is 16x the work, quadratic 256x.
      expect(large / small).toBeLessThan(18);
    }
  });
});
