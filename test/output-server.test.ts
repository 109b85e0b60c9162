/**
 * POST /v1/parse on the real server (test/helpers/server.ts): text and ids, the model's own
 * format and an explicit one, on the event loop and on a worker thread (a body over
 * --inline-max), and the bad-input cases by status and code. Expected values are the library's
 * parseAssistantOutput of the same text (the endpoint stands for it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer, parseAssistantOutput } from '../src/index.js';
import { GLM_CASES } from './helpers/output-cases.js';
import { startServer, type TestServer } from './helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer(['--model', 'qwen3', '--model', 'llama3', '--inline-max', '2kb', '--threads', '1']);
});
afterAll(async () => {
  expect(await server.stop()).toBe(0);
});

const QWEN_OUT = '<think>\nhmm\n</think>\n\nSure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris 🇫🇷"}}\n</tool_call><|im_end|>';

describe('POST /v1/parse', () => {
  it('text in the model format: an OpenAI assistant message', async () => {
    const r = await server.post('/v1/parse', { text: QWEN_OUT });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      object: 'promptenc.parse',
      model: 'qwen3',
      format: 'qwen3',
      message: {
        role: 'assistant',
        content: 'Sure.',
        reasoning_content: 'hmm',
        tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris 🇫🇷"}' } }],
      },
      finish_reason: 'tool_calls',
      warnings: [],
    });
  });

  it('ids give the same as their text; a large body runs on a worker thread', async () => {
    const tok = await loadTokenizer('qwen3');
    const ids = Array.from(tok.encode(QWEN_OUT, { addSpecialTokens: false }));
    const byText = await server.post('/v1/parse', { text: QWEN_OUT });
    const byIds = await server.post('/v1/parse', { tokens: ids });
    expect(byIds.body).toEqual(byText.body);
    const long = `${'word '.repeat(2000)}<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>`;
    const big = await server.post('/v1/parse', { text: long, start_in_reasoning: false });
    expect(big.status).toBe(200);
    const want = parseAssistantOutput(long, { format: 'qwen3', startInReasoning: false });
    expect(big.body.message.content).toBe(want.content);
    expect(big.body.message.tool_calls[0].function).toEqual({ name: 'f', arguments: '{}' });
  });

  it('an explicit format and tools (the seed example 3), prompt opens reasoning', async () => {
    const c = GLM_CASES[1]!;
    const r = await server.post('/v1/parse', { text: c.text, format: 'glm47', tools: c.tools, prompt: '[gMASK]<sop><|user|>Show me<|assistant|><think>' });
    expect(r.status).toBe(200);
    expect(r.body.message).toEqual({
      role: 'assistant',
      content: null,
      reasoning_content: c.reasoning,
      tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'run_shell', arguments: '{"cmd": "du -ah . | sort -rh | head -n 5"}' } }],
    });
    const plain = await server.post('/v1/parse', { text: 'Hello.', format: 'glm47', start_in_reasoning: false });
    expect(plain.body).toMatchObject({ finish_reason: 'stop', message: { content: 'Hello.', reasoning_content: null, tool_calls: [] } });
  });

  it('warnings: an unfinished call stays in content', async () => {
    const r = await server.post('/v1/parse', { text: 'x<tool_call>\n{"name": "f"', start_in_reasoning: false });
    expect(r.status).toBe(200);
    expect(r.body.message.content).toBe('x<tool_call>\n{"name": "f"');
    expect(r.body.warnings).toHaveLength(1);
  });

  for (const [name, body, status, code] of [
    ['neither text nor tokens', {}, 400, 'E_REQUEST_INVALID'],
    ['both text and tokens', { text: 'a', tokens: [1] }, 400, 'E_REQUEST_INVALID'],
    ['an unknown format', { text: 'a', format: 'llama9' }, 400, 'E_REQUEST_INVALID'],
    ['text of the wrong type', { text: 3 }, 400, 'E_REQUEST_INVALID'],
    ['a negative id', { tokens: [-1] }, 400, 'E_REQUEST_INVALID'],
    ['an id over 2^32', { tokens: [2 ** 33] }, 400, 'E_IDS_INVALID'],
    ['an unknown model', { text: 'a', model: 'nope' }, 404, 'E_MODEL_NOT_FOUND'],
    ['a model whose format cannot be told, and no format', { text: 'a', model: 'llama3' }, 400, 'E_ARGUMENT'],
  ] as const) {
    it(`${name} → ${status} ${code}`, async () => {
      const r = await server.post('/v1/parse', body);
      expect(r.status).toBe(status);
      expect(r.body.error).toMatchObject({ code });
      expect(typeof r.body.error.message).toBe('string');
    });
  }
});
