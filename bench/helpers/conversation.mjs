/**
 * Seeded generators for long agent conversations and edit scripts, shared by bench/*.mjs and
 * the session, accounting and fitChat tests (plain JS for both). They live under bench/
 * because the benches stand on the public API and their own helpers only, never on test/;
 * tests may import from here.
 */
/** @typedef {import('../../src/index.js').ChatMessage} ChatMessage */
/** @typedef {import('../../src/index.js').ToolDefinition} ToolDefinition */

/** @param {number} seed @returns {() => number} */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PROSE = [
  'The build failed because the linker could not find libssl.',
  'Let me check the logs first, then I will retry with verbose output.',
  '我们需要先检查日志，然后再重新运行构建。',
  '日本語のテキストも少し混ぜておきます。',
  'Résumé: naïve café — déjà vu.',
  '한국어 문장도 포함합니다.',
  'Emoji: 👩‍💻🚀 👍🏽 🇯🇵',
  "It's done; we've checked they'll work and I'd say it's fine.",
  'Numbers: 1234567890 3.14159 1,000,000',
];
const SPECIAL_TEXT = [
  '<｜User｜>',
  '<｜Assistant｜>',
  '<|im_start|>',
  '<|im_end|>',
  '<think>',
  '</think>',
  '<tool_call>',
  '[gMASK]',
  '<|user|>',
  '<｜tool▁call▁begin｜>',
];

/** @template T @param {() => number} r @param {readonly T[]} xs @returns {T} */
function pick(r, xs) {
  return xs[Math.floor(r() * xs.length)];
}

/** Multi-line text of about `size` characters: code, prose, CJK, and lines starting with letters. */
/** @param {() => number} r @param {number} size @returns {string} */
export function bigText(r, size) {
  /** @type {string[]} */
  const lines = [];
  let n = 0;
  while (n < size) {
    const kind = r();
    const line =
      kind < 0.3
        ? `${pick(r, ['drwxr-xr-x', '-rw-r--r--'])} ${Math.floor(r() * 99999)} src/file_${Math.floor(r() * 1000)}.ts`
        : kind < 0.5
          ? `  const value${Math.floor(r() * 100)} = compute(${Math.floor(r() * 1e6)}); // ${pick(r, PROSE)}`
          : kind < 0.6
            ? ''
            : kind < 0.65
              ? ' '.repeat(1 + Math.floor(r() * 20)) + '\t'
              : pick(r, PROSE);
    lines.push(line);
    n += line.length + 1;
  }
  return lines.join('\n');
}

/** @type {ToolDefinition[]} */
export const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'run_shell',
      description: 'Run a shell command',
      parameters: { type: 'object', properties: { command: { type: 'string', description: 'the command' } }, required: ['command'] },
    },
  },
  {
    type: 'function',
    function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  },
];

/**
 * An agent conversation: system, then `turns` turns of user → (assistant tool calls →
 * tool results)* → assistant answer. Some tool outputs are 10–100 KB; content carries
 * special-token text, CJK and reasoning.
 */
/**
 * @param {number} seed @param {number} turns
 * @param {{ bigEvery?: number, bigMin?: number, bigMax?: number }} [opts]
 * @returns {ChatMessage[]}
 */
export function agentConversation(seed, turns, opts = {}) {
  const r = rng(seed);
  const { bigEvery = 25, bigMin = 10_000, bigMax = 100_000 } = opts;
  /** @type {ChatMessage[]} */
  const messages = [{ role: 'system', content: 'You are a careful coding agent. Answer briefly.' }];
  let call = 0;
  for (let t = 0; t < turns; t++) {
    const special = r() < 0.2 ? ` ${pick(r, SPECIAL_TEXT)} ` : ' ';
    messages.push({ role: 'user', content: `${pick(r, PROSE)}${special}${pick(r, PROSE)} (turn ${t})` });
    if (r() < 0.5) {
      const n = 1 + Math.floor(r() * 2);
      const calls = Array.from({ length: n }, () => {
        call++;
        const args = r() < 0.5 ? JSON.stringify({ command: `ls -la dir${call}` }) : { path: `src/f${call}.ts` };
        return { id: `call_${call}`, type: 'function', function: { name: typeof args === 'string' ? 'run_shell' : 'read_file', arguments: args } };
      });
      messages.push({
        role: 'assistant',
        content: '',
        reasoning_content: r() < 0.5 ? `I should look at the files first. ${pick(r, PROSE)}` : undefined,
        tool_calls: calls,
      });
      for (const c of calls) {
        const size = t % bigEvery === bigEvery - 1 ? bigMin + Math.floor(r() * (bigMax - bigMin)) : 50 + Math.floor(r() * 400);
        messages.push({ role: 'tool', tool_call_id: c.id, content: bigText(r, size) });
      }
    }
    const thinking = r() < 0.3 ? `<think>${pick(r, PROSE)}</think>` : '';
    messages.push({ role: 'assistant', content: `${thinking}${pick(r, PROSE)}\n${pick(r, PROSE)}${r() < 0.1 ? pick(r, SPECIAL_TEXT) : ''}` });
  }
  return messages;
}

/**
 * The shortest prefix of `messages` (at least 2) whose chat prompt has `target` tokens or
 * more by `tok.countChat` (binary search; the whole list when it never gets there).
 */
export function prefixWithTokens(tok, messages, target) {
  let lo = 2;
  let hi = messages.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (tok.countChat(messages.slice(0, mid)) < target) lo = mid + 1;
    else hi = mid;
  }
  return messages.slice(0, lo);
}

/**
 * The benches' long history: the seeded agent conversation (seed 42, tool outputs of 10–30 KB
 * every tenth turn), cut where it reaches `target` tokens.
 */
export function agentHistory(tok, target) {
  return prefixWithTokens(tok, agentConversation(42, 400, { bigEvery: 10, bigMin: 10_000, bigMax: 30_000 }), target);
}
