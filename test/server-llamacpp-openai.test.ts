/**
 * llama.cpp's endpoints (requests from tools/server/tests/unit/test_tokenize.py and
 * test_template.py, the README's with_pieces example), OpenAI's /v1/responses/input_tokens
 * (the API reference's request), and promptenc's /v1/count, /v1/models, /health.
 */
import { readFileSync } from 'node:fs';
import tokenizers from 'tokenizers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer, type PromptTokenizer } from '../src/index.js';
import { BYTE_CHARS } from './helpers/byte-level.js';
import { modelPath, oracleEncode, oracleFor } from './helpers/oracle.js';
import { HAVE_PYTHON_JINJA, pyRender } from './helpers/py-render.js';
import { startServer, type TestServer } from './helpers/server.js';

const QWEN = modelPath('qwen3');
let server: TestServer;
let qwen: PromptTokenizer;
let deepseek: PromptTokenizer;

beforeAll(async () => {
  server = await startServer(['--model', 'qwen3', '--model', 'deepseek-v3']);
  qwen = await loadTokenizer('qwen3');
  deepseek = await loadTokenizer('deepseek-v3');
});
afterAll(async () => {
  expect(await server.stop()).toBe(0);
});

/** The bytes of a byte-level vocabulary key, by GPT-2's alphabet (independent of the server's table). */
function keyBytes(key: string): number[] {
  return [...key].map((c) => BYTE_CHARS.indexOf(c));
}

describe('llama.cpp /tokenize, /detokenize', () => {
  for (const base of ['', '/llamacpp']) {
    it(`${base}/tokenize then /llamacpp/detokenize round-trips (test_tokenize_detokenize)`, async () => {
      const content = 'What is the capital of France ?';
      const tok = await server.post(`${base}/tokenize`, { content });
      expect(tok.status).toBe(200);
      expect(Object.keys(tok.body)).toEqual(['tokens']);
      expect(tok.body.tokens).toEqual(await oracleEncode(QWEN, content, false));
      const detok = await server.post('/llamacpp/detokenize', { tokens: tok.body.tokens });
      expect(detok.status).toBe(200);
      expect(detok.body).toEqual({ content });
    });
  }

  it('add_special inserts the BOS (test_tokenize_with_bos; DeepSeek-V3 BOS is 0)', async () => {
    const r = await server.post('/llamacpp/tokenize', { model: 'deepseek-v3', content: 'What is the capital of France ?', add_special: true });
    expect(r.body.tokens[0]).toBe(0);
    expect(r.body.tokens).toEqual(Array.from(deepseek.encode('What is the capital of France ?')));
  });

  it('with_pieces: {id, piece} per token; a piece that is not UTF-8 is a byte array (test_tokenize_with_pieces, README)', async () => {
    const content = 'This is a test string with unicode 媽 and emoji 🤗';
    const r = await server.post('/llamacpp/tokenize', { content, with_pieces: true });
    const ids = await oracleEncode(QWEN, content, false);
    expect(r.body.tokens.map((t: { id: number }) => t.id)).toEqual(ids);
    const all: number[] = [];
    for (const [i, t] of (r.body.tokens as Array<{ id: number; piece: string | number[] }>).entries()) {
      expect(Object.keys(t)).toEqual(['id', 'piece']);
      expect(t.piece.length).toBeGreaterThan(0);
      const bytes = keyBytes(oracleFor(QWEN).idToToken(ids[i]!)!);
      const valid = (() => {
        try {
          new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
          return true;
        } catch {
          return false;
        }
      })();
      if (valid) expect(t.piece).toBe(Buffer.from(bytes).toString('utf8'));
      else expect(t.piece).toEqual(bytes);
      all.push(...bytes);
    }
    // 🤗 is split into byte tokens in Qwen3's vocabulary: at least one piece is a byte array.
    expect(r.body.tokens.some((t: { piece: unknown }) => Array.isArray(t.piece))).toBe(true);
    expect(Buffer.from(all).toString('utf8')).toBe(content);
  });

  it('parse_special=false reads control-token text as text; <think> (user-defined) still matches', async () => {
    const content = '<|im_start|>user <think> hi<|im_end|>';
    const r = await server.post('/llamacpp/tokenize', { content, parse_special: false });
    expect(r.status).toBe(200);
    // The oracle on Qwen3's file without its special tokens (test/split-special.test.ts checks
    // that this equals encode_special_tokens for Qwen3's vocabulary).
    const json = JSON.parse(readFileSync(QWEN, 'utf8'));
    const noSpecials = tokenizers.Tokenizer.fromString(
      JSON.stringify({ ...json, added_tokens: json.added_tokens.filter((t: { special: boolean }) => !t.special) }),
    );
    // Without the special entries the oracle numbers the rest afresh: back through their content.
    const expected = (await noSpecials.encode(content, null, { addSpecialTokens: false }))
      .getIds()
      .map((id) => oracleFor(QWEN).tokenToId(noSpecials.idToToken(id)!)!);
    expect(r.body.tokens).toEqual(expected);
    expect(r.body.tokens).toContain(oracleFor(QWEN).tokenToId('<think>'));
    expect(r.body.tokens).not.toContain(oracleFor(QWEN).tokenToId('<|im_start|>'));
    const special = await server.post('/llamacpp/tokenize', { content, parse_special: true });
    expect(special.body.tokens).toEqual(await oracleEncode(QWEN, content, false));
  });
});

describe.skipIf(!HAVE_PYTHON_JINJA)('llama.cpp /apply-template', () => {
  if (!HAVE_PYTHON_JINJA) console.warn('skipping /apply-template oracle tests: python3 with jinja2 is not available');
  const TEST_TOOL = {
    type: 'function',
    function: {
      name: 'test',
      description: '',
      parameters: { type: 'object', properties: { success: { type: 'boolean', const: true } }, required: ['success'] },
    },
  };
  for (const tools of [null, [], [TEST_TOOL]]) {
    it(`tools=${JSON.stringify(tools)?.slice(0, 20)}: {prompt} equals the Jinja2 render (test_template.py)`, async () => {
      const messages = [{ role: 'user', content: 'What is today?' }];
      const r = await server.post('/apply-template', { messages, tools });
      expect(r.status).toBe(200);
      expect(Object.keys(r.body)).toEqual(['prompt']);
      expect(r.body.prompt).toBe(pyRender({ template: qwen.chatTemplate!, messages, tools: tools?.length ? tools : null, add_generation_prompt: true }));
    });
  }
  for (const addGenerationPrompt of [false, true]) {
    it(`add_generation_prompt=${addGenerationPrompt} (test_add_generation_prompt)`, async () => {
      const messages = [{ role: 'user', content: 'What is today?' }];
      const r = await server.post('/llamacpp/apply-template', { messages, add_generation_prompt: addGenerationPrompt });
      expect(r.body.prompt.includes('<|im_start|>assistant')).toBe(addGenerationPrompt);
      expect(r.body.prompt).toBe(qwen.renderChat(messages, { addGenerationPrompt }));
    });
  }
});

describe('OpenAI /v1/responses/input_tokens', () => {
  it('{model, input: string} → {object: "response.input_tokens", input_tokens} (the API reference request)', async () => {
    const r = await server.post('/v1/responses/input_tokens', { model: 'qwen3', input: 'Tell me a joke.' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ object: 'response.input_tokens', input_tokens: qwen.countChat([{ role: 'user', content: 'Tell me a joke.' }]) });
  });

  it('instructions, message items, function calls and their outputs, flat function tools', async () => {
    const body = {
      model: 'qwen3',
      instructions: 'Be brief.',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Weather in' },
            { type: 'input_text', text: 'Paris?' },
          ],
        },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"location":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '18C' },
      ],
      tools: [{ type: 'function', name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } }],
    };
    const messages = [
      { role: 'system', content: 'Be brief.' },
      // Text parts joined with "\n", as vLLM's "string" content format does.
      { role: 'user', content: 'Weather in\nParis?' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '18C' },
    ];
    const tools = [
      {
        type: 'function',
        function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } },
      },
    ];
    const r = await server.post('/v1/responses/input_tokens', body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.input_tokens).toBe(qwen.countChat(messages, { tools }));
  });

  it('a chat request (messages) is counted as encodeChat', async () => {
    const messages = [{ role: 'user', content: 'hi' }];
    const r = await server.post('/v1/responses/input_tokens', { model: 'deepseek-v3', messages });
    expect(r.body.input_tokens).toBe(deepseek.encodeChat(messages).length);
  });

  it('an item type that cannot be counted is a 400 naming it', async () => {
    const r = await server.post('/v1/responses/input_tokens', { input: [{ type: 'web_search_call', id: 'x' }] });
    expect(r.status).toBe(400);
    expect(r.body.error.param).toBe('input[0].type');
  });
});

describe('/v1/count, /v1/models, /health', () => {
  it('/v1/count is countChatByMessage', async () => {
    const messages = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Count me' },
    ];
    const b = qwen.countChatByMessage(messages);
    const r = await server.post('/v1/count', { messages });
    expect(r.body).toEqual({ count: b.total, by_message: b.messages, tools: b.tools, template: b.template });
  });

  it('/v1/models lists the served models in order; /health answers ok', async () => {
    const m = await server.get('/v1/models');
    expect(m.body.object).toBe('list');
    expect(m.body.data.map((d: { id: string; object: string }) => [d.id, d.object])).toEqual([
      ['qwen3', 'model'],
      ['deepseek-v3', 'model'],
    ]);
    const h = await server.get('/health');
    expect(h.body).toEqual({ status: 'ok', models: ['qwen3', 'deepseek-v3'] });
  });
});
