/**
 * vLLM's endpoints over real HTTP. Requests are the ones vLLM's own tests send
 * (tests/entrypoints/openai/test_tokenization.py, tests/entrypoints/serve/render/test_render.py);
 * expected ids come from the Rust `tokenizers` oracle and the Python Jinja2 oracle, and each
 * endpoint is also checked against the library call it stands for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer, type PromptTokenizer } from '../src/index.js';
import { modelPath, oracleDecode, oracleEncode, oracleFor } from './helpers/oracle.js';
import { HAVE_PYTHON_JINJA, pyRender } from './helpers/py-render.js';
import { startServer, type TestServer } from './helpers/server.js';

const QWEN = modelPath('qwen3');
let server: TestServer;
let qwen: PromptTokenizer;
let deepseek: PromptTokenizer;

beforeAll(async () => {
  server = await startServer(['--model', 'qwen3', '--model', 'deepseek-v3', '--threads', '1']);
  qwen = await loadTokenizer('qwen3');
  deepseek = await loadTokenizer('deepseek-v3');
});
afterAll(async () => {
  expect(await server.stop()).toBe(0);
});

// test_tokenization.py's conversation and tool.
const CONVERSATION = [
  { role: 'user', content: 'Hi there!' },
  { role: 'assistant', content: 'Nice to meet you!' },
  { role: 'user', content: 'Can I ask a question? vllm1' },
];
const WEATHER_TOOL = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } }];

describe('POST /tokenize (vLLM), completion form', () => {
  for (const addSpecial of [false, true]) {
    it(`add_special_tokens=${addSpecial}: tokens from the oracle, count, max_model_len, token_strs null`, async () => {
      const prompt = 'vllm1 This is a test prompt.';
      const r = await server.post('/tokenize', { add_special_tokens: addSpecial, model: 'qwen3', prompt });
      expect(r.status).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual(['count', 'max_model_len', 'token_strs', 'tokens']);
      expect(r.body.tokens).toEqual(await oracleEncode(QWEN, prompt, addSpecial));
      expect(r.body.count).toBe(r.body.tokens.length);
      expect(Number.isInteger(r.body.max_model_len)).toBe(true);
      expect(r.body.token_strs).toBeNull();
    });
  }

  it('defaults to add_special_tokens=true: DeepSeek-V3 gets the BOS transformers adds (the library encode)', async () => {
    const prompt = 'Hello <｜User｜> 世界';
    const r = await server.post('/tokenize', { model: 'deepseek-v3', prompt });
    expect(r.body.tokens).toEqual(Array.from(deepseek.encode(prompt)));
    expect(r.body.tokens).toEqual([0, ...(await oracleEncode(modelPath('deepseek-v3'), prompt, false))]);
  });

  it('return_token_strs gives convert_ids_to_tokens (the oracle id_to_token)', async () => {
    const prompt = 'This is a token_strs test prompt! vllm1';
    const r = await server.post('/tokenize', { prompt, model: 'qwen3', return_token_strs: true });
    const ids = await oracleEncode(QWEN, prompt, true);
    expect(r.body.tokens).toEqual(ids);
    expect(r.body.token_strs).toEqual(ids.map((id) => oracleFor(QWEN).idToToken(id)));
  });
});

describe.skipIf(!HAVE_PYTHON_JINJA)('POST /tokenize (vLLM), chat form', () => {
  if (!HAVE_PYTHON_JINJA) console.warn('skipping chat-form oracle tests: python3 with jinja2 is not available');
  const cases: Array<{ name: string; tools?: unknown[]; messages: typeof CONVERSATION }> = [
    { name: 'conversation', messages: CONVERSATION },
    { name: 'tools', tools: WEATHER_TOOL, messages: [{ role: 'user', content: "What's the weather like in Paris today?" }] },
  ];
  for (const c of cases) {
    for (const addGeneration of [false, true]) {
      for (const addSpecial of [false, true]) {
        for (const continueFinal of [false, true]) {
          if (addGeneration && continueFinal) continue;
          it(`${c.name}: add_generation_prompt=${addGeneration} add_special_tokens=${addSpecial} continue_final_message=${continueFinal}`, async () => {
            const messages = continueFinal ? [...c.messages, { role: 'assistant', content: 'Sure,' }] : c.messages;
            const prompt = pyRender({
              template: qwen.chatTemplate!,
              messages,
              tools: c.tools ?? null,
              add_generation_prompt: addGeneration,
              continue_final_message: continueFinal,
            });
            const body = {
              add_generation_prompt: addGeneration,
              continue_final_message: continueFinal,
              add_special_tokens: addSpecial,
              messages,
              model: 'qwen3',
              ...(c.tools ? { tools: c.tools } : {}),
            };
            const r = await server.post('/tokenize', body);
            expect(r.status).toBe(200);
            expect(r.body.tokens).toEqual(await oracleEncode(QWEN, prompt, addSpecial));
            expect(r.body.count).toBe(r.body.tokens.length);
            expect(r.body.token_strs).toBeNull();
            if (!continueFinal) {
              // The library call it stands for.
              expect(r.body.tokens).toEqual(
                Array.from(
                  qwen.encode(qwen.renderChat(messages, { tools: c.tools as never, addGenerationPrompt: addGeneration }), { addSpecialTokens: addSpecial }),
                ),
              );
            }
          });
        }
      }
    }
  }
});

describe('POST /detokenize (vLLM)', () => {
  it('answers exactly {prompt} (test_detokenize)', async () => {
    const prompt = 'This is a test prompt. vllm1';
    const tokens = await oracleEncode(QWEN, prompt, false);
    const r = await server.post('/detokenize', { model: 'qwen3', tokens });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ prompt });
  });

  it('keeps special tokens, as tokenizer.decode does by default', async () => {
    const tokens = Array.from(deepseek.encode('<｜User｜>hi'));
    const r = await server.post('/detokenize', { model: 'deepseek-v3', tokens });
    expect(r.body.prompt).toBe(await oracleDecode(modelPath('deepseek-v3'), tokens, false));
    expect(r.body.prompt).toBe(deepseek.decode(tokens));
  });
});

describe('POST /v1/chat/completions/render and /v1/completions/render (vLLM)', () => {
  it('basic chat render: a GenerateRequest whose token_ids are encodeChat', async () => {
    const messages = [{ role: 'user', content: 'Returning an empty string for the prompt may be confusing.' }];
    const r = await server.post('/v1/chat/completions/render', { model: 'deepseek-v3', messages });
    expect(r.status).toBe(200);
    for (const k of [
      'request_id',
      'token_ids',
      'features',
      'sampling_params',
      'model',
      'stream',
      'stream_options',
      'cache_salt',
      'priority',
      'kv_transfer_params',
    ])
      expect(r.body).toHaveProperty(k);
    expect(r.body.request_id).toMatch(/^chatcmpl-/);
    expect(r.body.model).toBe('deepseek-v3');
    expect(r.body.token_ids).toEqual(Array.from(deepseek.encodeChat(messages)));
    // vLLM's test checks for the model's BOS first (1 for its Llama); DeepSeek-V3's template writes BOS 0.
    expect(r.body.token_ids[0]).toBe(0);
    expect(r.body.prompt).toBe(deepseek.renderChat(messages));
  });

  it("render = encodeChat with the request's options (tools, chat_template_kwargs, add_generation_prompt)", async () => {
    const messages = [{ role: 'user', content: "What's the weather like in Paris today?" }];
    const body = { model: 'qwen3', messages, tools: WEATHER_TOOL, chat_template_kwargs: { enable_thinking: false }, add_generation_prompt: true };
    const r = await server.post('/v1/chat/completions/render', body);
    const expected = Array.from(qwen.encodeChat(messages, { tools: WEATHER_TOOL as never, kwargs: { enable_thinking: false }, addGenerationPrompt: true }));
    expect(r.body.token_ids).toEqual(expected);
    // enable_thinking=false changes Qwen3's generation prompt: the kwargs reached the template.
    expect(expected).not.toEqual(Array.from(qwen.encodeChat(messages, { tools: WEATHER_TOOL as never })));
  });

  it('multi-turn chat render', async () => {
    const messages = [
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Hi there!' },
      { role: 'user', content: 'How are you?' },
    ];
    const r = await server.post('/v1/chat/completions/render', { model: 'qwen3', messages });
    expect(r.body.token_ids).toEqual(Array.from(qwen.encodeChat(messages)));
  });

  it('keeps stream and stream_options, and answers JSON', async () => {
    const body = {
      model: 'qwen3',
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
      messages: [{ role: 'user', content: 'Stream options should be accepted by /render.' }],
    };
    const r = await server.post('/v1/chat/completions/render', body);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.body.stream).toBe(true);
    expect(r.body.stream_options).toEqual({ include_usage: true, continuous_usage_stats: true });
  });

  it('passes sampling params through, without vLLM-internal fields', async () => {
    const r = await server.post('/v1/chat/completions/render', {
      model: 'qwen3',
      messages: [{ role: 'user', content: 'Test sampling params' }],
      temperature: 0.123,
      top_p: 0.456,
      frequency_penalty: 1.1,
    });
    const sp = r.body.sampling_params;
    expect(sp.temperature).toBe(0.123);
    expect(sp.top_p).toBe(0.456);
    expect(sp.frequency_penalty).toBe(1.1);
    expect(sp).not.toHaveProperty('_all_stop_token_ids');
    // get_max_tokens: what the context leaves after the prompt when the request sets no limit.
    const models = await server.get('/v1/models');
    const maxLen = models.body.data.find((m: { id: string }) => m.id === 'qwen3').max_model_len;
    expect(sp.max_tokens).toBe(maxLen - r.body.token_ids.length);
  });

  it('completion render: a list of GenerateRequests, one per prompt, cmpl- ids', async () => {
    const one = await server.post('/v1/completions/render', { model: 'qwen3', prompt: 'When should a chat-completions handler return an empty string?' });
    expect(Array.isArray(one.body)).toBe(true);
    expect(one.body[0].request_id).toMatch(/^cmpl-/);
    expect(one.body[0].model).toBe('qwen3');
    expect(one.body[0].token_ids).toEqual(await oracleEncode(QWEN, 'When should a chat-completions handler return an empty string?', true));
    const two = await server.post('/v1/completions/render', { model: 'deepseek-v3', prompt: ['Hello world', 'Goodbye world'] });
    expect(two.body).toHaveLength(2);
    expect(two.body.map((g: { token_ids: number[] }) => g.token_ids)).toEqual([
      Array.from(deepseek.encode('Hello world')),
      Array.from(deepseek.encode('Goodbye world')),
    ]);
  });

  for (const [path, body] of [
    ['/v1/completions/render', { model: 'invalid-model-name', prompt: 'Hello' }],
    ['/v1/chat/completions/render', { model: 'invalid-model-name', messages: [{ role: 'user', content: 'Hello' }] }],
  ] as const) {
    it(`${path}: an unknown model is a 404 with an error object`, async () => {
      const r = await server.post(path, body);
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('E_MODEL_NOT_FOUND');
      expect(r.body.error.type).toBe('NotFoundError');
    });
  }
});
