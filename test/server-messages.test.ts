// Issue 16 through the HTTP service: vLLM's /tokenize takes the OpenAI-format agent messages of
// examples/agent-chat.json (normalized as vLLM does), `normalize: 'none'` gives transformers'
// raw rendering, and chat_template_kwargs that shadow a request field are refused.
// Expected ids: the Rust oracle over Python's render (test/helpers/render_vllm.py).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelPath, oracleEncode } from './helpers/oracle.js';
import { HAVE_PYTHON_JINJA } from './helpers/py-render.js';
import { pyRenderVllm } from './helpers/py-render-vllm.js';
import { startServer, type TestServer } from './helpers/server.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const convo = JSON.parse(readFileSync(path.join(root, 'examples', 'agent-chat.json'), 'utf8')) as { messages: unknown[]; tools: unknown[] };
const qwenTemplate = (JSON.parse(readFileSync(path.join(path.dirname(modelPath('qwen3')), 'tokenizer_config.json'), 'utf8')) as { chat_template: string })
  .chat_template;

let server: TestServer;
beforeAll(async () => {
  server = await startServer(['--model', 'qwen3', '--threads', '1']);
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

describe.skipIf(!HAVE_PYTHON_JINJA)('POST /tokenize with OpenAI-format agent messages', () => {
  it('normalized as vLLM does (the default): the oracle ids', async () => {
    const r = await server.post('/tokenize', { model: 'qwen3', messages: convo.messages, tools: convo.tools });
    expect(r.status).toBe(200);
    const py = pyRenderVllm({ template: qwenTemplate, messages: convo.messages, tools: convo.tools, add_generation_prompt: true });
    expect(r.body.tokens).toEqual(await oracleEncode(modelPath('qwen3'), py.prompt!, false));
  });
  it("normalize: 'none' renders as transformers: Qwen3 refuses content null, naming the message", async () => {
    const r = await server.post('/tokenize', { model: 'qwen3', messages: convo.messages, tools: convo.tools, normalize: 'none' });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(r.body)).toContain('messages[1] (assistant) (content is null)');
  });
  it('chat_template_kwargs.add_generation_prompt collides with the request field', async () => {
    const r = await server.post('/tokenize', { model: 'qwen3', messages: convo.messages, chat_template_kwargs: { add_generation_prompt: false } });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain('E_ARGUMENT');
  });
});
