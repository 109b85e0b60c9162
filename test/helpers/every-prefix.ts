// Shared body of the every-prefix session tests (one file per tokenizer, so vitest can
// run them on both cores): session.encodeChat must equal encodeChat for every prefix.
import { expect } from 'vitest';
import type { PromptTokenizer } from '../../src/index.js';
import { agentConversation, TOOLS } from '../../bench/helpers/conversation.mjs';

export function checkEveryPrefix(tok: PromptTokenizer): void {
  const fast = tok.backend === 'native';
  // The JS backend encodes ~1 MB/s; the quadratic sum over prefixes then needs a smaller history.
  const messages = agentConversation(7, fast ? 200 : 40, fast ? {} : { bigMin: 2_000, bigMax: 12_000 });
  expect(messages.filter((m) => m.role === 'user').length).toBeGreaterThanOrEqual(fast ? 200 : 40);
  const toolSizes = messages.filter((m) => m.role === 'tool').map((m) => (m.content as string).length);
  if (fast) expect(Math.max(...toolSizes)).toBeGreaterThanOrEqual(10_000);
  const opts = { tools: TOOLS };
  // Two sessions: one fed the prompt text (prefix compare), one the messages (incremental
  // render, whose prefix bound replaces the compare).
  const session = tok.createSession();
  const chat = tok.createSession();
  let mismatches = 0;
  let firstBad = -1;
  for (let k = 2; k <= messages.length; k++) {
    const prefix = messages.slice(0, k);
    // A full render per prefix (~25 ms per 200 KB prompt) is the reference for both sessions.
    const prompt = tok.renderChat(prefix, opts);
    const want = tok.encode(prompt, { addSpecialTokens: false });
    const got = session.encode(prompt, { addSpecialTokens: false });
    const gotChat = chat.encodeChat(prefix, opts);
    if (k % 16 === 0) expect(Array.from(tok.encodeChat(prefix, opts))).toEqual(Array.from(want));
    const same = (ids: Uint32Array) => ids.length === want.length && ids.every((v, i) => v === want[i]);
    if (!same(got) || !same(gotChat)) {
      mismatches++;
      if (firstBad < 0) firstBad = k;
    }
  }
  expect({ mismatches, firstBad }).toEqual({ mismatches: 0, firstBad: -1 });
  for (const st of [session.stats(), chat.stats()]) {
    expect(st.calls).toBe(messages.length - 1);
    // Append-only growth: almost everything is reused, not re-encoded.
    expect(st.encodedChars).toBeLessThan(st.reusedChars / 5);
  }
}
