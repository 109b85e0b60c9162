/**
 * Round trip through the real templates: render a conversation whose last message is an
 * assistant turn with reasoning, content and tool calls; the text after the generation prompt
 * is what the model would have written; parse it; the parsed message equals the original (as
 * far as the template keeps it), and rendering toAssistantMessage(parsed) in its place gives the
 * same prompt again (so the same tokens). For two models the "model output" also goes through
 * the ids: encoded, decoded one id at a time by the streaming decoder, parsed by the streaming
 * parser.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadTokenizer, toAssistantMessage, type ChatMessage, type OutputFormat, type PromptTokenizer } from '../src/index.js';
import { OutputCollector, promptOpensReasoning } from '../src/output/index.js';
import { sharedTemplate, templatesAvailable } from './helpers/output-templates.js';

const weather = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' }, detail: { type: 'object' } }, required: ['city'] },
  },
};
const runShell = {
  type: 'function',
  function: {
    name: 'run_shell',
    description: 'Run a shell command',
    parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
  },
};
const TOOLS = [weather, runShell];
const ARGS_A = { city: 'Zürich 🇨🇭', days: 3, detail: { hourly: true, fields: ['temp', 'wind'] } };
const ARGS_B = { cmd: 'du -ah . | sort -rh | head -n 5' };

interface Case {
  name: string;
  format: OutputFormat;
  model: 'qwen3' | 'deepseek-v3' | 'gpt-oss';
  template: () => string;
  /** The assistant message as the runtime holds it. */
  assistant: ChatMessage;
  /** What the template keeps of it (it may drop reasoning or content). */
  kept: { reasoning: string | null; content: string | null };
  kwargs?: Record<string, unknown>;
  /**
   * The template cannot render a tools list, as in Jinja2: the render gets none (the parser still
   * gets the tools). Seed 003 prints `tools | map(...) | tojson`, and Jinja2's map is a generator,
   * which json.dumps refuses (TypeError; see test/seeds.test.ts).
   */
  promptWithoutTools?: true;
  /**
   * 'none': messages as transformers passes them. gpt-oss's template reads the reasoning from
   * `thinking`, which vLLM's message preprocessing (promptenc's default) does not pass on.
   */
  normalize?: 'none';
  /** Also run the ids path (encode → streaming decoder → streaming parser). */
  ids?: boolean;
  /**
   * The generation prompt is not a prefix of the rendered turn (seed 003 opens `<think>\n` in the
   * generation prompt but renders a tool-call turn without it): the output is then the text after
   * the common prefix of the prompt and the rendered turn.
   */
  genPromptNotPrefix?: boolean;
}

const call = (id: string, name: string, args: Record<string, unknown>, asString: boolean) => ({
  id,
  type: 'function',
  function: { name, arguments: asString ? JSON.stringify(args) : args },
});

const CASES: Case[] = [
  {
    name: 'GLM-4.5 (newline form), reasoning + content + two calls',
    format: 'glm45',
    model: 'qwen3',
    template: () => sharedTemplate('glm-4.5.jinja'),
    assistant: {
      role: 'assistant',
      reasoning_content: 'Two lookups.',
      content: 'Checking now.',
      tool_calls: [call('call_0', 'get_weather', ARGS_A, false), call('call_1', 'run_shell', ARGS_B, false)],
    },
    kept: { reasoning: 'Two lookups.', content: 'Checking now.' },
  },
  {
    name: 'GLM-4.7-Flash (compact form), reasoning + call',
    format: 'glm47',
    model: 'qwen3',
    template: () => sharedTemplate('glm-4.7-flash.llamacpp.jinja'),
    assistant: { role: 'assistant', reasoning_content: 'I need to run du.', content: null, tool_calls: [call('call_0', 'run_shell', ARGS_B, false)] },
    kept: { reasoning: 'I need to run du.', content: null },
  },
  {
    name: 'GLM seed template (test/fixtures/glm-seed.jinja), the seed example 3 call',
    format: 'glm47',
    model: 'qwen3',
    template: () => readFileSync(new URL('./fixtures/glm-seed.jinja', import.meta.url), 'utf8'),
    assistant: {
      role: 'assistant',
      reasoning_content: 'I need to run du to inspect the results.',
      content: '',
      tool_calls: [call('call_0', 'run_shell', ARGS_B, false)],
    },
    kept: { reasoning: 'I need to run du to inspect the results.', content: null },
  },
  {
    name: 'Qwen3 (hermes), reasoning + content + call',
    format: 'qwen3',
    model: 'qwen3',
    template: () => sharedTemplate('qwen3.jinja'),
    assistant: {
      role: 'assistant',
      reasoning_content: 'The user wants weather.',
      content: 'Let me check.',
      tool_calls: [call('call_0', 'get_weather', ARGS_A, true)],
    },
    kept: { reasoning: 'The user wants weather.', content: 'Let me check.' },
    ids: true,
  },
  {
    name: 'Qwen3-Coder (XML), content + two calls',
    format: 'qwen3-coder',
    model: 'qwen3',
    template: () => sharedTemplate('qwen3-coder.jinja'),
    assistant: {
      role: 'assistant',
      content: 'Running both.',
      tool_calls: [call('call_0', 'get_weather', ARGS_A, false), call('call_1', 'run_shell', ARGS_B, false)],
    },
    kept: { reasoning: null, content: 'Running both.' },
  },
  {
    name: 'DeepSeek-V3.1, content + two calls (thinking off)',
    format: 'deepseek-v3.1',
    model: 'deepseek-v3',
    template: () => sharedTemplate('deepseek-v3.1.jinja'),
    assistant: {
      role: 'assistant',
      content: 'Looking up.',
      tool_calls: [call('call_0', 'get_weather', ARGS_A, true), call('call_1', 'run_shell', ARGS_B, true)],
    },
    kept: { reasoning: null, content: 'Looking up.' },
    ids: true,
  },
  {
    name: 'DeepSeek-R1 (fenced calls): the template drops reasoning and content of a tool-call turn',
    format: 'deepseek-r1',
    model: 'deepseek-v3',
    template: () => sharedTemplate('deepseek-r1.jinja'),
    assistant: { role: 'assistant', content: null, tool_calls: [call('call_0', 'get_weather', ARGS_A, true), call('call_1', 'run_shell', ARGS_B, true)] },
    kept: { reasoning: null, content: null },
  },
  {
    name: 'DeepSeek seed 003 template (fenced calls)',
    format: 'deepseek-r1',
    model: 'deepseek-v3',
    template: () => readFileSync(new URL('./fixtures/seed-003.jinja', import.meta.url), 'utf8'),
    assistant: { role: 'assistant', content: null, tool_calls: [call('call_0', 'run_shell', ARGS_B, true)] },
    kept: { reasoning: null, content: null },
    genPromptNotPrefix: true,
    promptWithoutTools: true,
  },
  {
    name: 'gpt-oss (harmony), analysis + call',
    format: 'gpt-oss',
    model: 'gpt-oss',
    template: () => sharedTemplate('gpt-oss.jinja'),
    // No content key: the template tests `"content" in message` and searches it (null fails).
    assistant: { role: 'assistant', thinking: 'Need the weather.', tool_calls: [call('call_0', 'get_weather', ARGS_A, false)] },
    kept: { reasoning: 'Need the weather.', content: null },
    normalize: 'none',
  },
  {
    name: 'gpt-oss (harmony), analysis + final answer',
    format: 'gpt-oss',
    model: 'gpt-oss',
    template: () => sharedTemplate('gpt-oss.jinja'),
    assistant: { role: 'assistant', thinking: 'Simple sum.', content: '2 + 2 = 4 ✅' },
    kept: { reasoning: 'Simple sum.', content: '2 + 2 = 4 ✅' },
    normalize: 'none',
  },
];

const HISTORY: ChatMessage[] = [
  { role: 'system', content: 'You are helpful.' },
  { role: 'user', content: 'Weather in Zürich, and the biggest files?' },
];

const toks = new Map<string, PromptTokenizer>();
async function tokFor(model: Case['model']): Promise<PromptTokenizer> {
  let t = toks.get(model);
  if (!t) toks.set(model, (t = await loadTokenizer(model)));
  return t;
}

/** Tool calls compared by name and arguments (ids are the runtime's). */
const callsOf = (m: ChatMessage) =>
  (m.tool_calls ?? []).map((c) => ({
    name: c.function.name,
    arguments: typeof c.function.arguments === 'string' ? JSON.parse(c.function.arguments) : c.function.arguments,
  }));

describe.skipIf(!templatesAvailable)('round trip: render → model output → parse → render', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const tok = await tokFor(c.model);
      const template = c.template();
      const opts = {
        chatTemplate: template,
        tools: c.promptWithoutTools ? undefined : TOOLS,
        kwargs: c.kwargs,
        ...(c.normalize && { normalize: c.normalize }),
      };
      let prompt = tok.renderChat(HISTORY, { ...opts, addGenerationPrompt: true });
      const full = tok.renderChat([...HISTORY, c.assistant], { ...opts, addGenerationPrompt: false });
      if (c.genPromptNotPrefix) {
        let k = 0;
        while (k < prompt.length && prompt[k] === full[k]) k++;
        expect(k).toBeLessThan(prompt.length);
        // back to the end of the last marker they share (<｜Assistant｜>)
        prompt = prompt.slice(0, prompt.lastIndexOf('>', k - 1) + 1);
      }
      expect(full.startsWith(prompt)).toBe(true);
      const output = full.slice(prompt.length);

      const parsed = tok.parseOutput(output, { format: c.format, tools: TOOLS, prompt });
      expect(parsed.warnings).toEqual([]);
      expect(parsed.reasoning).toBe(c.kept.reasoning);
      expect(parsed.content).toBe(c.kept.content);
      expect(parsed.toolCalls.map((t) => ({ name: t.name, arguments: t.arguments }))).toEqual(callsOf(c.assistant));

      // toAssistantMessage in the original's place renders the same prompt.
      const asObject = c.format === 'glm45' || c.format === 'glm47' || c.format === 'qwen3-coder' || c.format === 'gpt-oss';
      const message = toAssistantMessage(parsed, { format: c.format, arguments: asObject ? 'object' : 'string' });
      expect(tok.renderChat([...HISTORY, message], { ...opts, addGenerationPrompt: false })).toBe(full);

      if (c.ids) {
        // The same through the ids: prompt ids ++ output ids == the full prompt's ids (the generation prompt ends on an added token).
        const promptIds = tok.encode(prompt, { addSpecialTokens: false });
        const fullIds = tok.encode(full, { addSpecialTokens: false });
        expect(Array.from(fullIds.subarray(0, promptIds.length))).toEqual(Array.from(promptIds));
        const outIds = fullIds.subarray(promptIds.length);
        const decoder = tok.createDecoder({ prefix: promptIds });
        const parser = tok.createOutputParser({ format: c.format, tools: TOOLS, startInReasoning: promptOpensReasoning(prompt) });
        const fold = new OutputCollector();
        for (const id of outIds) fold.add(parser.push(decoder.push([id])));
        fold.add(parser.push(decoder.flush())).add(parser.end());
        expect(fold.result()).toEqual(parsed);
      }
    });
  }

  it('GLM clears earlier reasoning (the seeds example 2): the next render shows <think></think>', async () => {
    const tok = await tokFor('qwen3');
    const template = sharedTemplate('glm-4.5.jinja');
    const prompt = tok.renderChat(HISTORY, { chatTemplate: template });
    const parsed = tok.parseOutput('I will use du.</think>\nUse du.', { format: 'glm45', prompt: `${prompt}<think>` });
    expect(parsed.reasoning).toBe('I will use du.');
    const next = tok.renderChat([...HISTORY, toAssistantMessage(parsed), { role: 'user', content: 'And last 7 days?' }], { chatTemplate: template });
    expect(next).toContain('<|assistant|>\n<think></think>\nUse du.');
    expect(next).not.toContain('I will use du.');
  });
});
