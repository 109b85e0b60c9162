/**
 * LoadOptions.maxInputBytes (issue 20, item 7): every encode entry point refuses text whose
 * UTF-8 form is larger, with E_INPUT_TOO_LARGE, before encoding; the default is 64 MiB.
 * Before the limit, 64 MB of text without spaces took 2.8 GB of RSS.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer, PromptencError, type PromptTokenizer } from '../src/index.js';
import { DEFAULT_MAX_INPUT_BYTES } from '../src/tokenizer-checks.js';

async function code(fn: () => unknown): Promise<string> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof PromptencError) return err.code;
    throw err;
  }
  return 'ok';
}

describe('maxInputBytes', () => {
  let small: PromptTokenizer;
  beforeAll(async () => {
    small = await loadTokenizer('qwen3', { maxInputBytes: 12 });
  });

  it('counts UTF-8 bytes exactly, at the boundary', async () => {
    // 'é' is 2 bytes, '😀' 4 (two UTF-16 units): 12 bytes each, then one more.
    for (const fits of ['abcdefghijkl', 'éééééé', '😀😀😀', 'a😀éé€']) {
      expect(Buffer.byteLength(fits)).toBe(12);
      expect(await code(() => small.encode(fits)), fits).toBe('ok');
      expect(await code(() => small.encode(`${fits}x`)), fits).toBe('E_INPUT_TOO_LARGE');
    }
    // A lone surrogate is 3 bytes in UTF-8 (as U+FFFD), as the encoders read it.
    expect(await code(() => small.encode('\ud800\ud800\ud800\ud800'))).toBe('ok');
    expect(await code(() => small.encode('\ud800\ud800\ud800\ud800a'))).toBe('E_INPUT_TOO_LARGE');
  });

  it('applies to every encode entry point', async () => {
    const big = 'x'.repeat(13);
    const messages = [{ role: 'user', content: 'hello' }];
    const calls: Array<[string, () => unknown]> = [
      ['encode', () => small.encode(big)],
      ['encode no specials', () => small.encode(big, { addSpecialTokens: false })],
      ['count', () => small.count(big)],
      ['encodeAsync', () => small.encodeAsync(big)],
      ['encodeBatch', () => small.encodeBatch(['ok', big])],
      ['encodeChat', () => small.encodeChat(messages)],
      ['countChat', () => small.countChat(messages)],
      ['countChatByMessage', () => small.countChatByMessage(messages)],
      ['fitChat', () => small.fitChat(messages, { maxTokens: 100 })],
      ['session.encode', () => small.createSession().encode(big)],
      ['session.encodeChat', () => small.createSession().encodeChat(messages)],
    ];
    for (const [name, call] of calls) expect({ name, code: await code(call) }).toEqual({ name, code: 'E_INPUT_TOO_LARGE' });
    // renderChat only renders: no limit on the prompt string itself.
    expect(await code(() => small.renderChat(messages))).toBe('ok');
  });

  it('names the input and the option', async () => {
    const err = await small.encodeBatch(['ok', 'y'.repeat(20)]).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/texts\[1\]: .*20 UTF-8 bytes, above options\.maxInputBytes = 12/);
  });

  it('refuses bad values with E_ARGUMENT', async () => {
    for (const v of [0, -1, 1.5, '1000', Number.NaN, 2 ** 31]) {
      expect({ v, code: await code(() => loadTokenizer('qwen3', { maxInputBytes: v as number })) }).toEqual({ v, code: 'E_ARGUMENT' });
    }
  });

  it('defaults to 64 MiB, refused before encoding', async () => {
    const tok = await loadTokenizer('gpt-4o');
    const text = 'a'.repeat(DEFAULT_MAX_INPUT_BYTES + 1);
    const t0 = performance.now();
    expect(await code(() => tok.encode(text))).toBe('E_INPUT_TOO_LARGE');
    expect(await code(() => tok.count(text))).toBe('E_INPUT_TOO_LARGE');
    // Refused from the length alone: no pass over 64 MB of text, no allocation.
    expect(performance.now() - t0).toBeLessThan(500); // encoding 64 MB takes seconds
    const multi = 'é'.repeat(DEFAULT_MAX_INPUT_BYTES / 2 + 1); // fewer units than the limit, more bytes
    expect(await code(() => tok.encode(multi))).toBe('E_INPUT_TOO_LARGE');
  });
});
