// Shared body of the every-prefix session tests (one file per tokenizer, so vitest can
// run them on both cores): session.encodeChat must equal encodeChat for every prefix.
import { expect } from 'vitest';
import type { PromptTokenizer } from '../../src/index.js';
import { agentConversation, TOOLS } from './conversation.mjs';

export function checkEveryPrefix(tok: PromptTokenizer): void {
  const fast = tok.backend === 'native';
  // The JS backend encodes ~1 MB/s; the quadratic sum over prefixes then needs a smaller history.
  const messages = agentConversation(7, fast ? 200 : 40, fast ? {} : { bigMin: 2_000, bigMax: 12_000 });
  expect(messages.filter((m) => m.role === 'user').length).toBeGreaterThanOrEqual(fast ? 200 : 40);
  const toolSizes = messages.filter((m) => m.role === 'tool').map((m) => (m.content as string).length);
  if (fast) expect(Math.max(...toolSizes)).toBeGreaterThanOrEqual(10_000);
  const opts = { tools: TOOLS };
  const session = tok.createSession();
  let mismatches = 0;
  let firstBad = -1;
  for (let k = 2; k <= messages.length; k++) {
    const prefix = messages.slice(0, k);
    // Rendering dominates (~25 ms per 200 KB prompt), so each prompt is rendered once:
    // session.encodeChat (= renderChat + the session's encode) is checked whole every 16th prefix.
    const prompt = tok.renderChat(prefix, opts);
    const want = tok.encode(prompt, { addSpecialTokens: false });
    const got = k % 16 === 0 ? session.encodeChat(prefix, opts) : session.encode(prompt, { addSpecialTokens: false });
    if (k % 16 === 0) expect(Array.from(tok.encodeChat(prefix, opts))).toEqual(Array.from(want));
    if (got.length !== want.length || !got.every((v, i) => v === want[i])) {
      mismatches++;
      if (firstBad < 0) firstBad = k;
    }
  }
  expect({ mismatches, firstBad }).toEqual({ mismatches: 0, firstBad: -1 });
  const st = session.stats();
  expect(st.calls).toBe(messages.length - 1);
  // Append-only growth: almost everything is reused, not re-encoded.
  expect(st.encodedChars).toBeLessThan(st.reusedChars / 5);
}
