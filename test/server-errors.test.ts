/**
 * Every bad-input case by status and code, on the event loop (small bodies) and on the worker
 * threads (bodies over --inline-max); each error is logged exactly once, and the process keeps
 * serving afterwards.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './helpers/server.js';
import { SLOW_TEMPLATE } from './helpers/slow-template.js';

let server: TestServer;

beforeAll(async () => {
  // --inline-max 2kb: the padded cases below reach the worker threads; --job-timeout 3 for the endless template.
  server = await startServer(['--model', 'qwen3', '--max-body', '64kb', '--inline-max', '2kb', '--threads', '1', '--job-timeout', '3']);
});
afterAll(async () => {
  expect(await server.stop()).toBe(0);
});

const USER = [{ role: 'user', content: 'hi' }];
/** A field that pushes a body over --inline-max without changing its meaning. */
const PAD = { padding: 'x'.repeat(4096) };

interface Case {
  name: string;
  path: string;
  body: unknown;
  status: number;
  code: string;
  /** The field the message must name (error.param). */
  param?: string | null;
}

const CASES: Case[] = [
  { name: 'malformed JSON', path: '/tokenize', body: '{"prompt": ', status: 400, code: 'E_JSON_INVALID', param: 'body' },
  { name: 'empty body', path: '/tokenize', body: '', status: 400, code: 'E_JSON_INVALID', param: 'body' },
  { name: 'a JSON array body', path: '/tokenize', body: '[1,2]', status: 400, code: 'E_REQUEST_INVALID', param: 'body' },
  { name: 'prompt of the wrong type', path: '/tokenize', body: { prompt: 3 }, status: 400, code: 'E_REQUEST_INVALID', param: 'prompt' },
  { name: 'missing prompt', path: '/tokenize', body: { add_special_tokens: true }, status: 400, code: 'E_REQUEST_INVALID', param: 'prompt' },
  {
    name: 'add_special_tokens of the wrong type',
    path: '/tokenize',
    body: { prompt: 'x', add_special_tokens: 'yes' },
    status: 400,
    code: 'E_REQUEST_INVALID',
    param: 'add_special_tokens',
  },
  { name: 'messages not an array', path: '/tokenize', body: { messages: 'hi' }, status: 400, code: 'E_REQUEST_INVALID', param: 'messages' },
  {
    name: 'a message without a role',
    path: '/v1/chat/completions/render',
    body: { messages: [{ content: 'hi' }] },
    status: 400,
    code: 'E_REQUEST_INVALID',
    param: 'messages[0].role',
  },
  {
    name: 'message content of the wrong type',
    path: '/tokenize',
    body: { messages: [{ role: 'user', content: 5 }] },
    status: 400,
    code: 'E_MESSAGES_INVALID',
    param: 'messages[0].content',
  },
  { name: 'a token id that is not an integer', path: '/detokenize', body: { tokens: [1, 'x'] }, status: 400, code: 'E_REQUEST_INVALID', param: 'tokens[1]' },
  { name: 'a negative token id', path: '/llamacpp/detokenize', body: { tokens: [-1] }, status: 400, code: 'E_REQUEST_INVALID', param: 'tokens[0]' },
  { name: 'a token id over 2^32', path: '/detokenize', body: { tokens: [2 ** 40] }, status: 400, code: 'E_IDS_INVALID', param: 'tokens[0]' },
  { name: 'an unknown model', path: '/tokenize', body: { model: 'nope', prompt: 'x' }, status: 404, code: 'E_MODEL_NOT_FOUND', param: null },
  {
    name: 'an unknown model (llama.cpp)',
    path: '/apply-template',
    body: { model: 'nope', messages: USER },
    status: 404,
    code: 'E_MODEL_NOT_FOUND',
    param: null,
  },
  { name: 'an unknown model (count)', path: '/v1/count', body: { model: 'nope', messages: USER }, status: 404, code: 'E_MODEL_NOT_FOUND', param: null },
  {
    name: 'continue_final_message with add_generation_prompt',
    path: '/tokenize',
    body: { messages: USER, continue_final_message: true },
    status: 400,
    code: 'E_ARGUMENT',
    param: 'continue_final_message',
  },
  {
    name: 'a template that does not parse',
    path: '/v1/chat/completions/render',
    body: { messages: USER, chat_template: '{% if %}' },
    status: 400,
    code: 'E_TEMPLATE',
    param: null,
  },
  {
    name: 'a template that raises',
    path: '/tokenize',
    body: { messages: USER, chat_template: "{{ raise_exception('no system role') }}" },
    status: 400,
    code: 'E_TEMPLATE',
    param: null,
  },
  {
    name: 'chat_template_kwargs of the wrong type',
    path: '/apply-template',
    body: { messages: USER, chat_template_kwargs: [1] },
    status: 400,
    code: 'E_REQUEST_INVALID',
    param: 'chat_template_kwargs',
  },
  {
    name: 'an input item that cannot be counted',
    path: '/v1/responses/input_tokens',
    body: { input: [{ type: 'image_generation_call' }] },
    status: 400,
    code: 'E_REQUEST_INVALID',
    param: 'input[0].type',
  },
];

function withPad(body: unknown): unknown {
  if (typeof body === 'string') return body.length === 0 ? body : body.startsWith('[') ? `[${'1,'.repeat(2500)}1]` : body + ' '.repeat(4096);
  return { ...(body as object), ...PAD };
}

describe('bad input → status, code and the field named', () => {
  for (const where of ['event loop', 'worker thread'] as const) {
    for (const c of CASES) {
      it(`${where}: ${c.name} → ${c.status} ${c.code}`, async () => {
        const id = `bad-${where === 'event loop' ? 'l' : 'w'}-${CASES.indexOf(c)}`;
        const body = where === 'worker thread' ? withPad(c.body) : c.body;
        const r = await server.post(c.path, body, { 'x-request-id': id });
        expect(r.status, JSON.stringify(r.body)).toBe(c.status);
        expect(Object.keys(r.body)).toEqual(['error']);
        expect(Object.keys(r.body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
        expect(r.body.error.code).toBe(c.code);
        if (c.param !== undefined) expect(r.body.error.param).toBe(c.param);
        if (c.param) expect(r.body.error.message.startsWith(`${c.param}: `)).toBe(true);
        expect(r.headers.get('x-request-id')).toBe(id);
        // Logged once: one line for the request, carrying its error code.
        // The line is written after the response; wait for it (bounded), then a little more for a second one.
        for (let i = 0; i < 100 && !server.logs().some((l) => l.req === id); i++) await new Promise((res) => setTimeout(res, 20));
        await new Promise((res) => setTimeout(res, 50));
        const lines = server.logs().filter((l) => l.req === id);
        expect(lines).toHaveLength(1);
        expect((lines[0]!.error as { code: string }).code).toBe(c.code);
        expect(lines[0]!.status).toBe(c.status);
      });
    }
  }
});

describe('limits', () => {
  it('a body over --max-body is a 413 E_BODY_TOO_LARGE', async () => {
    const r = await server.post('/tokenize', { prompt: 'x'.repeat(70 * 1024) });
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe('E_BODY_TOO_LARGE');
  });

  it('an unknown route is a 404 E_ROUTE_NOT_FOUND', async () => {
    const r = await server.post('/v1/nothing', {});
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('E_ROUTE_NOT_FOUND');
  });

  it('a template that loops past the iteration limit is stopped by the engine: 400 E_TEMPLATE_LIMIT', async () => {
    const loops = '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}';
    const r = await server.post('/apply-template', { messages: USER, chat_template: loops });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('E_TEMPLATE_LIMIT');
  });

  it('a template that never ends is stopped at --job-timeout: 400 E_LIMIT, and the thread is replaced', async () => {
    const endless = SLOW_TEMPLATE;
    const t0 = Date.now();
    const r = await server.post('/apply-template', { messages: USER, chat_template: endless });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('E_LIMIT');
    expect(Date.now() - t0).toBeLessThan(20_000);
    // The replacement thread serves the next large request.
    const ok = await server.post('/tokenize', { prompt: 'still here', ...PAD });
    expect(ok.status).toBe(200);
  });

  it('the process still serves after all of the above', async () => {
    const h = await server.get('/health');
    expect(h.body.status).toBe('ok');
    const t = await server.post('/tokenize', { prompt: 'hello' });
    expect(t.status).toBe(200);
  });
});

describe('--template FILE', () => {
  it("replaces the model's template; a request's chat_template still wins", async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'promptenc-serve-')), 'chat.jinja');
    writeFileSync(file, '{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}');
    const s = await startServer(['--model', 'qwen3', '--threads', '0', '--template', file]);
    try {
      expect((await s.post('/apply-template', { messages: USER })).body).toEqual({ prompt: '[user]hi' });
      expect((await s.post('/apply-template', { messages: USER, chat_template: '<{{ messages[0].content }}>' })).body).toEqual({ prompt: '<hi>' });
    } finally {
      expect(await s.stop()).toBe(0);
    }
  });
});
