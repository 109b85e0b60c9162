/**
 * The seeds' own examples, read from the seed documents at test time (../shared/seeds, English 000
 * and Chinese 002): each "model might output" text, parsed as GLM output after a prompt that ends
 * with `<|assistant|><think>` (as the seeds' prompts do), gives the seeds' "user receives" text, and
 * the tool-call outputs give run_shell {cmd: ...}. The seeds' texts are split on their own
 * headings; nothing is retyped.
 */
import { readFileSync } from 'node:fs';
import { sharedPath } from './helpers/shared-files.js';
import { describe, expect, it } from 'vitest';
import { parseAssistantOutput } from '../src/index.js';

const FILES = {
  en: sharedPath('seeds/000_0104ab63a013bf7c.txt', 'output-seeds: the English seed examples') ?? '',
  zh: sharedPath('seeds/002_b547628d53125219.txt', 'output-seeds: the Chinese seed examples') ?? '',
};
const available = FILES.en !== '' && FILES.zh !== '';

/** The text between `start` and `end` (both headings of the seed), after `from`. */
function between(doc: string, start: string, end: string, from = 0): string {
  const a = doc.indexOf(start, from);
  if (a < 0) throw new Error(`seed heading not found: ${start}`);
  const b = doc.indexOf(end, a + start.length);
  if (b < 0) throw new Error(`seed heading not found: ${end}`);
  return doc.slice(a + start.length, b).trim();
}

const HEADINGS = {
  en: {
    out1: ['The model might output:', 'The user receives:'],
    user1: ['The user receives:', '<think>...</think> contains'],
    call3: ['The model might first output a tool call:', 'The user usually does not receive'],
    out3: ['The model finally outputs:', 'The user finally receives:'],
    user3: ['The user finally receives:', 'Example 4'],
    call4: ['it might call:', 'An agent runtime with'],
  },
  zh: {
    out1: ['模型可能输出：', '用户实际收到：'],
    user1: ['用户实际收到：', '<think>...</think> 是内部思考区'],
    call3: ['模型可能先输出工具调用：', '用户这时通常不会收到'],
    out3: ['模型最终输出：', '用户最终收到：'],
    user3: ['用户最终收到：', '例子 4'],
    call4: ['它可能调用：', '更安全的'],
  },
} as const;

const runShell = {
  type: 'function',
  function: { name: 'run_shell', parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } },
};
const opts = { format: 'glm47' as const, tools: [runShell], startInReasoning: true };

describe.skipIf(!available)('the seeds: what the model outputs → what the user receives', () => {
  for (const lang of ['en', 'zh'] as const) {
    const doc = available ? readFileSync(FILES[lang], 'utf8') : '';
    const h = HEADINGS[lang];
    const get = (k: keyof typeof h) => {
      const [a, b] = h[k];
      // "The user receives:" also heads example 2: read each one after its example's model output.
      const from = k === 'user1' ? doc.indexOf(h.out1[0]) : k === 'user3' ? doc.indexOf(h.out3[0]) : 0;
      return between(doc, a, b, from);
    };

    it(`${lang}: example 1, reasoning then an answer`, () => {
      const r = parseAssistantOutput(get('out1'), opts);
      expect(r.content).toBe(get('user1'));
      expect(r.reasoning).not.toBeNull();
      expect(r.toolCalls).toEqual([]);
      expect(r.warnings).toEqual([]);
    });

    it(`${lang}: example 3, a run_shell call, then the final answer`, () => {
      const call = parseAssistantOutput(get('call3'), opts);
      expect(call.content).toBeNull();
      expect(call.toolCalls.map((t) => [t.name, t.arguments])).toEqual([['run_shell', { cmd: 'du -ah . | sort -rh | head -n 5' }]]);
      const final = parseAssistantOutput(get('out3'), opts);
      expect(final.content).toBe(get('user3'));
      expect(final.reasoning).toContain('./node_modules');
    });

    it(`${lang}: example 4, a call with no reasoning after a prompt that opened <think>`, () => {
      const r = parseAssistantOutput(get('call4'), opts);
      expect(r).toMatchObject({ reasoning: null, content: null, warnings: [] });
      expect(r.toolCalls.map((t) => [t.name, t.arguments])).toEqual([['run_shell', { cmd: 'rm -rf dist' }]]);
    });
  }
});
