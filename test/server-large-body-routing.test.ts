/**
 * The worker pool (src/server/pool.ts) and the routing of large bodies without a
 * session_id (src/server/app.ts routeKey):
 * - a request queued behind one stopped at --job-timeout runs on the replacement thread (it was
 *   handed to the thread being terminated, then failed with E_LIMIT a timeout later);
 * - bodies that share their first 4 KB (one long system prompt, the same tools) do not queue
 *   behind each other on one thread while another is idle.
 * The ids are checked against the library's full encodeChat.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer, type ChatMessage, type PromptTokenizer } from '../src/index.js';
import { startServer, type TestServer } from './helpers/server.js';
import { SLOW_TEMPLATE } from './helpers/slow-template.js';

const endless = SLOW_TEMPLATE;
const system = { role: 'system', content: 'Shared agent instructions. '.repeat(300) } as ChatMessage;
let qwen: PromptTokenizer;
beforeAll(async () => {
  qwen = await loadTokenizer('qwen3');
});

for (const threads of ['1', '2']) {
  describe(`--threads ${threads}: large bodies with the same opening`, () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startServer(['--model', 'qwen3', '--threads', threads, '--inline-max', '1', '--job-timeout', '3']);
    });
    afterAll(async () => {
      expect(await server.stop()).toBe(0);
    });

    it('a request behind a stopped one is answered', async () => {
      const slow = server.post('/apply-template', { model: 'qwen3', messages: [system, { role: 'user', content: 'a' }], chat_template: endless });
      await new Promise((r) => setTimeout(r, 300));
      const t0 = Date.now();
      const messages = [system, { role: 'user', content: 'b' }] as ChatMessage[];
      const quick = await server.post('/tokenize', { model: 'qwen3', messages });
      const waited = Date.now() - t0;
      expect(quick.body.error).toBeUndefined();
      expect(quick.status).toBe(200);
      expect(quick.body.tokens).toEqual(Array.from(qwen.encodeChat(messages)));
      const s = await slow;
      expect(s.status).toBe(400);
      expect(s.body.error.code).toBe('E_LIMIT');
      // With a second, idle thread, it does not wait for the first one's time limit.
      if (threads === '2') expect(waited).toBeLessThan(2000);
      // The server still serves, on every thread.
      const after = await Promise.all([1, 2, 3].map(() => server.post('/tokenize', { model: 'qwen3', messages })));
      for (const r of after) expect(r.status).toBe(200);
    });
  });
}
