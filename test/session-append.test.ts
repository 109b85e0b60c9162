/**
 * session.append(text) / appendDelta(text): after every append the ids equal the oracle's
 * encode of everything appended so far (the Rust `tokenizers` library), on both backends, with
 * and without special tokens, for chunks that end and start anywhere: inside words, numbers and
 * whitespace runs, inside and around added tokens, between the halves of a CRLF.
 */
import { describe, expect, it } from 'vitest';
import { nativeAddonStatus } from '../src/backend/native.js';
import { loadTokenizer } from '../src/tokenizer.js';
import { MODELS, oracleEncode } from './helpers/oracle.js';

const status = nativeAddonStatus();
if (!status.available) console.warn('session-append: native backend skipped (addon not built)');

/** xorshift32: reproducible. */
function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

const PIECES = [
  'Hello',
  ' world',
  ',',
  ' 12345',
  '6789',
  '\r',
  '\n',
  '\r\n',
  '   ',
  '\t',
  "'s",
  "'",
  'll',
  ' 中文',
  '字符',
  'ｱｲ',
  '😀',
  '👍🏽',
  'é',
  '\u0301',
  'naïve',
  '  \n  ',
  '...',
  '://x.y',
];

const STEPS = 40;

describe('session.append', () => {
  for (const name of ['llama3', 'qwen3', 'deepseek-v3', 'gpt-4o'] as const) {
    const model = MODELS.find((m) => m.name === name)!;
    for (const backend of ['native', 'js'] as const) {
      it.skipIf(backend === 'native' && !status.available)(
        `${name} ${backend}: every append == the oracle's encode of the whole text`,
        async () => {
          const tok = await loadTokenizer(name, { backend });
          const added = [...tok.addedTokens.values()].map((t) => t.content).slice(0, 64);
          const next = rng(0xa99e + name.length * 31 + (backend === 'js' ? 7 : 0));
          // DeepSeek-V3: transformers adds BOS (add_bos_token) where the oracle's post-processor
          // adds none (docs/semantics.md), so the oracle is the reference without special tokens only.
          for (const addSpecialTokens of name === 'deepseek-v3' ? [false] : [false, true]) {
            const session = tok.createSession();
            let text = '';
            let previous: number[] = [];
            for (let step = 0; step < STEPS; step++) {
              let chunk = '';
              const parts = 1 + Math.floor(next() * 4);
              for (let p = 0; p < parts; p++) {
                const r = next();
                if (r < 0.15 && added.length) {
                  const t = added[Math.floor(next() * added.length)]!;
                  chunk += next() < 0.6 ? t : t.slice(0, 1 + Math.floor(next() * Math.max(1, t.length - 1)));
                } else chunk += PIECES[Math.floor(next() * PIECES.length)]!;
              }
              // Now and then a long chunk, so the session has cuts to keep.
              if (next() < 0.1) chunk += ' lorem ipsum dolor sit amet'.repeat(40 + Math.floor(next() * 60));
              text += chunk;
              const expected = await oracleEncode(model.path, text, addSpecialTokens);
              if (step % 2 === 0) {
                expect(Array.from(session.append(chunk, { addSpecialTokens })), `${name} step ${step}`).toEqual(expected);
              } else {
                const d = session.appendDelta(chunk, { addSpecialTokens });
                const ids = previous.slice(0, d.reused).concat(Array.from(d.ids));
                expect(ids, `${name} step ${step} (delta)`).toEqual(expected);
                expect(d.total).toBe(expected.length);
              }
              previous = expected;
            }
          }
        },
        120_000,
      );
    }
  }

  // The session keeps appended texts as pieces and joins them every 1024 appends; one token-led
  // turn is encoded alone (the cut at the join), another is glued to the text before it.
  it('over 2,000 appends, each == encode of the whole text and == the oracle at the end', async () => {
    const tok = await loadTokenizer('llama3', { backend: status.available ? 'native' : 'js' });
    const m = MODELS.find((x) => x.name === 'llama3')!;
    const session = tok.createSession();
    const next = rng(0x2048);
    let text = '';
    for (let step = 0; step < 2100; step++) {
      const r = next();
      const chunk = r < 0.02 ? `<|eot_id|>${'Turn text here. '.repeat(40)}` : r < 0.5 ? PIECES[Math.floor(next() * PIECES.length)]! : ` w${step}`;
      text += chunk;
      const got = session.append(chunk, { addSpecialTokens: false });
      const want = tok.encode(text, { addSpecialTokens: false });
      if (got.length !== want.length || !got.every((v, i) => v === want[i])) throw new Error(`append #${step} differs from encode`);
    }
    expect(Array.from(session.append('', { addSpecialTokens: false }))).toEqual(await oracleEncode(m.path, text, false));
  }, 120_000);

  it('continues from the text of the previous encode call', async () => {
    const tok = await loadTokenizer('llama3', { backend: status.available ? 'native' : 'js' });
    const m = MODELS.find((x) => x.name === 'llama3')!;
    const session = tok.createSession();
    session.encode('Hello there', { addSpecialTokens: false });
    expect(Array.from(session.append('! How are you', { addSpecialTokens: false }))).toEqual(await oracleEncode(m.path, 'Hello there! How are you', false));
    expect(() => session.append(3 as unknown as string)).toThrow();
  });
});
