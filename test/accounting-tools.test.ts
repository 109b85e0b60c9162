/**
 * Accounting that adds up (issue 16 §3): the tools row is what the tools cost, the parts sum to
 * the total on every template, and isWithinTokenLimit stops early. Expected counts come from the
 * Rust oracle over prompts rendered by Python (test/helpers/render_vllm.py), never from the code
 * under test; the early stop is checked by counting the characters handed to the encoder.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer, type ChatMessage, type ChatOptions, type PromptTokenizer } from '../src/index.js';
import { AGENT_CONVERSATIONS } from './fixtures/agent-conversations.js';
import { modelPath, oracleEncode, type ModelName } from './helpers/oracle.js';
import { HAVE_PYTHON_JINJA } from './helpers/py-render.js';
import { SHARED_DIR } from './helpers/shared-files.js';
import { pyRenderVllm } from './helpers/py-render-vllm.js';

const SHARED = SHARED_DIR !== undefined && existsSync(path.join(SHARED_DIR, 'templates')) ? path.join(SHARED_DIR, 'templates') : '';
if (!SHARED) console.warn('accounting-tools.test: ../shared/templates is absent; its templates are skipped');

const toks = new Map<string, PromptTokenizer>();
beforeAll(async () => {
  for (const m of ['deepseek-v3', 'qwen3', 'llama3']) toks.set(m, await loadTokenizer(m));
}, 120_000);

const convo = AGENT_CONVERSATIONS[0]!; // examples/agent-chat.json, one tool
/** Templates that render here: not the engine gaps (ENGINE_GAPS in chat-messages.test.ts), not gpt-oss (its own tokenizer), not Kimi K2 (Jinja2's immutable sandbox refuses its list.append). */
const shared = SHARED ? readdirSync(SHARED).filter((f) => f.endsWith('.jinja') && !/^(hermes|seed-oss|gpt-oss|kimi)/.test(f)) : [];

function bundledSpecials(t: PromptTokenizer): Record<string, string> {
  const config = JSON.parse(readFileSync(path.join(path.dirname(t.tokenizerPath), 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
  const out: Record<string, string> = {};
  for (const key of ['bos_token', 'eos_token']) {
    const v = config[key] as string | { content?: string } | null | undefined;
    const s = typeof v === 'string' ? v : v?.content;
    if (typeof s === 'string') out[key] = s;
  }
  return out;
}

describe.skipIf(!HAVE_PYTHON_JINJA)('countChatByMessage: tools = count with tools − count without, and the parts sum to the total', () => {
  const targets: Array<[string, string, string | undefined]> = [
    ['deepseek-v3 (bundled)', 'deepseek-v3', undefined],
    ['qwen3 (bundled)', 'qwen3', undefined],
    ['llama3 (bundled)', 'llama3', undefined],
    ...shared.map((f): [string, string, string] => [`shared/${f}`, f.startsWith('deepseek') ? 'deepseek-v3' : f.startsWith('llama') ? 'llama3' : 'qwen3', f]),
  ];
  it.each(targets)('%s', async (_label, model, file) => {
    const t = toks.get(model)!;
    const template = file !== undefined ? readFileSync(path.join(SHARED, file), 'utf8') : t.chatTemplate!;
    const opts: ChatOptions = { tools: convo.tools as never, ...(file !== undefined ? { chatTemplate: template } : {}) };
    const req = { template, messages: convo.messages, add_generation_prompt: true, special_tokens: bundledSpecials(t) };
    const withTools = pyRenderVllm({ ...req, tools: convo.tools });
    const without = pyRenderVllm({ ...req, tools: null });
    expect(withTools.error).toBeUndefined();
    const count = async (text: string) => (await oracleEncode(modelPath(model as ModelName), text, false)).length;
    const total = await count(withTools.prompt!);
    const b = t.countChatByMessage(convo.messages as ChatMessage[], opts);
    expect(b.total).toBe(total);
    expect(b.tools + b.template + b.messages.reduce((x, y) => x + y, 0)).toBe(total);
    expect(b.tools).toBe(total - (await count(without.prompt!)));
    expect(b.toolsIgnored).toBe(withTools.prompt === without.prompt);
  });
  it('the bundled DeepSeek-V3 template renders no tools, and says so', () => {
    const b = toks.get('deepseek-v3')!.countChatByMessage(convo.messages as ChatMessage[], { tools: convo.tools as never });
    expect(b.tools).toBe(0);
    expect(b.toolsIgnored).toBe(true);
  });
  it('on Qwen3 one tool costs its whole system block (more than its names and descriptions)', () => {
    const b = toks.get('qwen3')!.countChatByMessage(convo.messages as ChatMessage[], { tools: convo.tools as never });
    expect(b.toolsIgnored).toBe(false);
    expect(b.tools).toBeGreaterThan(100);
  });
});

/** Mixed text with newlines, spaces, CJK, digits and Qwen3 added tokens, deterministic. */
function mixedText(chars: number, seed: number): string {
  const pieces = [
    'Hello world',
    ' the',
    '\n',
    '\n\n',
    'def f(x):\n    return x',
    '東京タワー',
    ' 12345',
    '<|im_start|>',
    '<|im_end|>\n',
    'naïve café',
    '  ',
    '\t',
    "it's",
    '😀',
    'x\ny',
  ];
  let s = '';
  let r = seed;
  while (s.length < chars) {
    r = (r * 1103515245 + 12345) >>> 0;
    s += pieces[r % pieces.length];
  }
  return s;
}

describe('isWithinTokenLimit', () => {
  it.each(['qwen3', 'llama3', 'deepseek-v3'])('%s: the count, or false one token over, on texts long enough to be chunked', (model) => {
    const t = toks.get(model)!;
    for (const [size, seed] of [
      [300, 1],
      [9000, 2],
      [40_000, 3],
      [120_000, 4],
    ] as const) {
      const text = mixedText(size, seed);
      const n = t.count(text);
      expect(t.isWithinTokenLimit(text, n)).toBe(n);
      expect(t.isWithinTokenLimit(text, n - 1)).toBe(false);
      const body = t.count(text, { addSpecialTokens: false });
      expect(t.isWithinTokenLimit(text, body, { addSpecialTokens: false })).toBe(body);
    }
  });
  it('a chat: the same count as countChat', () => {
    const t = toks.get('qwen3')!;
    const n = t.countChat(convo.messages as ChatMessage[], { tools: convo.tools as never });
    expect(t.isWithinTokenLimit(convo.messages as ChatMessage[], n, { tools: convo.tools as never })).toBe(n);
    expect(t.isWithinTokenLimit(convo.messages as ChatMessage[], n - 1, { tools: convo.tools as never })).toBe(false);
  });
  it('stops early: a 10 MB text over a 4 K limit hands the encoder a few KB (counted, not timed)', () => {
    const t = toks.get('qwen3')!;
    const text = mixedText(10 * 1024 * 1024, 7);
    let encoded = 0;
    const impl = t.impl as { count(text: string): number };
    const count = impl.count.bind(impl);
    impl.count = (chunk: string) => {
      encoded += chunk.length;
      return count(chunk);
    };
    try {
      expect(t.isWithinTokenLimit(text, 4096)).toBe(false);
    } finally {
      impl.count = count;
    }
    expect(encoded).toBeLessThan(64 * 1024);
  });
  it('a bad limit is E_ARGUMENT', () => {
    expect(() => toks.get('qwen3')!.isWithinTokenLimit('x', -1)).toThrow(expect.objectContaining({ code: 'E_ARGUMENT' }));
  });
});
