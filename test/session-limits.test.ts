/**
 * maxInputBytes on sessions: the limit is on the session's whole text (what its ids encode),
 * not on the part one call adds. A call that would take the text over it fails with
 * E_INPUT_TOO_LARGE and leaves the session as it was: same text, same ids, and later calls
 * still equal full encodes. Without this, a session re-encoding only the text after its last
 * added token grew past any limit, one turn at a time.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer, PromptencError, type PromptTokenizer } from '../src/index.js';

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof PromptencError) return err.code;
    throw err;
  }
  return 'ok';
}

const backends = ['native', 'js'] as const;

describe.each(backends)('session maxInputBytes (%s)', (backend) => {
  let tok: PromptTokenizer;
  beforeAll(async () => {
    tok = await loadTokenizer('qwen3', { maxInputBytes: 40, backend });
  });
  const plain = { addSpecialTokens: false };
  // An added token ends each turn: the session re-encodes only the text after the last one,
  // which was all that the limit used to see.
  const turn = (t: string) => `${t}<|im_end|>`; // 5 + 10 bytes for a 5-letter t

  it('append: the accumulated text counts, and a refused append changes nothing', () => {
    const s = tok.createSession();
    expect(Array.from(s.append(turn('hello'), plain))).toEqual(Array.from(tok.encode(turn('hello'), plain)));
    expect(code(() => s.append(turn('world'), plain))).toBe('ok'); // 30 bytes
    expect(code(() => s.append('0123456789', plain))).toBe('ok'); // 40: at the limit
    const full = `${turn('hello')}${turn('world')}0123456789`;
    const before = Array.from(s.append('', plain));
    expect(before).toEqual(Array.from(tok.encode(full, plain)));
    expect(code(() => s.append('!', plain))).toBe('E_INPUT_TOO_LARGE');
    expect(code(() => s.appendDelta('!', plain))).toBe('E_INPUT_TOO_LARGE');
    // Unchanged: the same ids, and the session goes on from the text it had.
    expect(Array.from(s.append('', plain))).toEqual(before);
    const next = `${turn('hello')}${turn('world')}012345678!`;
    expect(Array.from(s.encode(next, plain))).toEqual(Array.from(tok.encode(next, plain)));
  });

  it('refuses turn after turn once the whole text is over the limit, though each turn fits', () => {
    const s = tok.createSession();
    expect(code(() => s.append(turn('aaaaa'), plain))).toBe('ok');
    expect(code(() => s.append(turn('bbbbb'), plain))).toBe('ok');
    expect(code(() => s.append(turn('ccccc'), plain))).toBe('E_INPUT_TOO_LARGE'); // 45 bytes
    expect(Array.from(s.append('', plain))).toEqual(Array.from(tok.encode(turn('aaaaa') + turn('bbbbb'), plain)));
  });

  it('counts UTF-8 bytes of the whole text, surrogate pairs joined across appends', () => {
    const s = tok.createSession();
    expect(code(() => s.append(turn('ééééé'), plain))).toBe('ok'); // 20 bytes
    expect(code(() => s.append(turn('éééé'), plain))).toBe('ok'); // 38
    expect(code(() => s.append('é', plain))).toBe('ok'); // 40: at the limit
    expect(code(() => s.append('é', plain))).toBe('E_INPUT_TOO_LARGE'); // 42, though 21 UTF-16 units
    // 28 bytes, then 'abcdefgh' and a high surrogate (8 + 3: a lone surrogate reads as U+FFFD);
    // with the low one appended the text ends in '😀': 28 + 12 = 40 bytes, not 28 + 8 + 3 + 3.
    const t = tok.createSession();
    const head = `${turn('hello')}${'x'.repeat(13)}`;
    expect(code(() => t.append(head, plain))).toBe('ok');
    expect(code(() => t.append('abcdefgh\ud83d', plain))).toBe('ok');
    expect(Array.from(t.append('\ude00', plain))).toEqual(Array.from(tok.encode(`${head}abcdefgh😀`, plain)));
    expect(code(() => t.append('x', plain))).toBe('E_INPUT_TOO_LARGE');
  });

  it('encode and encodeDelta: a refused text keeps the previous ids', () => {
    const s = tok.createSession();
    const text = `${turn('hello')}${turn('world')}0123456789`;
    const ids = Array.from(s.encode(text, plain));
    expect(code(() => s.encode(`${text}!`, plain))).toBe('E_INPUT_TOO_LARGE');
    expect(code(() => s.encodeDelta(`${text}!`, plain))).toBe('E_INPUT_TOO_LARGE');
    expect(Array.from(s.append('', plain))).toEqual(ids);
    expect(s.encodeDelta(`${turn('hello')}${turn('world')}012345678.`, plain).total).toBe(
      tok.encode(`${turn('hello')}${turn('world')}012345678.`, plain).length,
    );
  });
});

describe('session maxInputBytes on chat renders', () => {
  it('encodeChat and countChat refuse a render over the limit and keep the last one', async () => {
    const probe = await loadTokenizer('qwen3');
    const short = [{ role: 'user', content: 'hi' }];
    const long = [...short, { role: 'assistant', content: 'hello' }, { role: 'user', content: 'more' }];
    const bytes = (m: typeof short) => Buffer.byteLength(probe.renderChat(m, { addGenerationPrompt: true }));
    // Over the limit in all, while the part after the short render (what a session encodes) fits.
    const limit = bytes(short) + 24;
    expect(bytes(long)).toBeGreaterThan(limit);
    expect(bytes(long) - bytes(short)).toBeLessThan(limit);
    const tok = await loadTokenizer('qwen3', { maxInputBytes: limit });
    const s = tok.createSession();
    const first = Array.from(s.encodeChat(short, { addGenerationPrompt: true }));
    expect(first).toEqual(Array.from(tok.encodeChat(short, { addGenerationPrompt: true })));
    expect(code(() => s.encodeChat(long, { addGenerationPrompt: true }))).toBe('E_INPUT_TOO_LARGE');
    expect(code(() => s.countChat(long, { addGenerationPrompt: true }))).toBe('E_INPUT_TOO_LARGE');
    expect(code(() => s.encodeChatDelta(long, { addGenerationPrompt: true }))).toBe('E_INPUT_TOO_LARGE');
    // The session still answers from the render it kept, and still equals a full encode.
    expect(Array.from(s.encodeChat(short, { addGenerationPrompt: true }))).toEqual(first);
    expect(s.countChat(short)).toBe(tok.countChat(short));
  });
});
