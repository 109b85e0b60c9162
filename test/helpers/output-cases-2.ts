/** The DeepSeek and gpt-oss tables of test/helpers/output-cases.ts (sources cited there and per case). */
import type { OutputCase } from './output-cases.js';

const B = '<｜tool▁calls▁begin｜>';
const E = '<｜tool▁calls▁end｜>';
const CB = '<｜tool▁call▁begin｜>';
const CE = '<｜tool▁call▁end｜>';
const SEP = '<｜tool▁sep｜>';

export const DEEPSEEK_CASES: OutputCase[] = [
  {
    name: "llama.cpp test-chat (DeepSeek R1): <think>I'm\\nthinking</think> then content",
    format: 'deepseek-r1',
    text: "<think>I'm\nthinking</think>Hello, world!\nWhat's up?",
    reasoning: "I'm\nthinking",
    content: "Hello, world!\nWhat's up?",
    calls: [],
    warnings: [],
  },
  {
    name: 'llama.cpp test-chat (DeepSeek R1, thinking forced open): no <think> in the output',
    format: 'deepseek-r1',
    startInReasoning: true,
    text: "I'm\nthinking</think>Hello, world!\nWhat's up?",
    reasoning: "I'm\nthinking",
    content: "Hello, world!\nWhat's up?",
    calls: [],
    warnings: [],
  },
  {
    name: 'vLLM v3.1 single call with content before',
    format: 'deepseek-v3.1',
    text: `normal text${B}${CB}foo${SEP}{"x":1}${CE}${E}`,
    reasoning: null,
    content: 'normal text',
    calls: [{ name: 'foo', arguments: { x: 1 }, argumentsText: '{"x":1}' }],
    warnings: [],
  },
  {
    name: 'vLLM v3.1 multiple calls; the suffix text is kept (vLLM drops it)',
    format: 'deepseek-v3.1',
    text: `some prefix text${B}${CB}foo${SEP}{"x":1}${CE}${CB}bar${SEP}{"y":2}${CE}${E} some suffix text`,
    reasoning: null,
    content: 'some prefix text some suffix text',
    calls: [
      { name: 'foo', arguments: { x: 1 }, argumentsText: '{"x":1}' },
      { name: 'bar', arguments: { y: 2 }, argumentsText: '{"y":2}' },
    ],
    warnings: [],
  },
  {
    name: 'v3 fenced form (the seed 003 template) with nested JSON and Unicode',
    format: 'deepseek-v3',
    text: `${B}${CB}function${SEP}search\n\`\`\`json\n{"q": "東京 🗼", "filters": {"year": [2024, 2025]}}\n\`\`\`${CE}${E}<｜end▁of▁sentence｜>`,
    reasoning: null,
    content: null,
    calls: [
      { name: 'search', arguments: { q: '東京 🗼', filters: { year: [2024, 2025] } }, argumentsText: '{"q": "東京 🗼", "filters": {"year": [2024, 2025]}}' },
    ],
    warnings: [],
  },
  {
    name: 'r1: reasoning (prompt opened <think>), content, two fenced calls separated by a newline',
    format: 'deepseek-r1',
    startInReasoning: true,
    text: `\nI should search twice.\n</think>\n\nSearching.${B}${CB}function${SEP}a\n\`\`\`json\n{}\n\`\`\`${CE}\n${CB}function${SEP}b\n\`\`\`json\n{"k": "v"}\n\`\`\`${CE}${E}`,
    reasoning: 'I should search twice.',
    content: 'Searching.',
    calls: [
      { name: 'a', arguments: {}, argumentsText: '{}' },
      { name: 'b', arguments: { k: 'v' } },
    ],
    warnings: [],
  },
  {
    name: 'r1 without <think> at the start: the text before </think> is reasoning',
    format: 'deepseek-r1',
    text: 'Hmm, 2+2.\n</think>\n\n4',
    reasoning: 'Hmm, 2+2.',
    content: '4',
    calls: [],
    warnings: [],
  },
  {
    name: 'v3.1 invalid arguments JSON: content and a warning',
    format: 'deepseek-v3.1',
    text: `${B}${CB}foo${SEP}{"x":${CE}${E}`,
    reasoning: null,
    content: `${B}${CB}foo${SEP}{"x":${CE}${E}`,
    calls: [],
    warnings: ['malformed tool call'],
  },
  {
    name: 'v3.1 unfinished region',
    format: 'deepseek-v3.1',
    text: `ok${B}${CB}foo${SEP}{"x":1}${CE}`,
    reasoning: null,
    content: `ok${B}${CB}foo${SEP}{"x":1}${CE}`,
    calls: [],
    warnings: ['unfinished tool call'],
  },
];

// llama.cpp tests/test-chat.cpp, the GPT-OSS cases: https://github.com/ggml-org/llama.cpp/blob/master/tests/test-chat.cpp
const LLAMA_THINK = "<|channel|>analysis<|message|>I'm\nthinking<|end|>";

export const HARMONY_CASES: OutputCase[] = [
  {
    name: 'llama.cpp test-chat: analysis then final, no <|return|> (the engine strips the stop token)',
    format: 'gpt-oss',
    text: `${LLAMA_THINK}<|start|>assistant<|channel|>final<|message|>Hello, world!\nWhat's up?`,
    reasoning: "I'm\nthinking",
    content: "Hello, world!\nWhat's up?",
    calls: [],
    warnings: [],
  },
  {
    name: 'llama.cpp test-chat: a call whose <|call|> was stripped',
    format: 'gpt-oss',
    text: `${LLAMA_THINK}<|start|>assistant<|channel|>commentary to=functions.special_function <|constrain|>json<|message|>{"arg1": 1}`,
    reasoning: "I'm\nthinking",
    content: null,
    calls: [{ name: 'special_function', arguments: { arg1: 1 }, argumentsText: '{"arg1": 1}' }],
    warnings: [],
  },
  {
    name: "llama.cpp test-chat: a stray 'commentary to=assistant' header before the analysis channel",
    format: 'gpt-oss',
    text: `<|channel|>commentary to=assistant${LLAMA_THINK}<|start|>assistant<|channel|>final<|message|>Hello, world!\nWhat's up?`,
    reasoning: "I'm\nthinking",
    content: "Hello, world!\nWhat's up?",
    calls: [],
    warnings: [],
  },
  {
    name: 'analysis then final',
    format: 'gpt-oss',
    text: '<|channel|>analysis<|message|>User asks 2+2.<|end|><|start|>assistant<|channel|>final<|message|>4<|return|>',
    reasoning: 'User asks 2+2.',
    content: '4',
    calls: [],
    warnings: [],
  },
  {
    name: 'analysis then a call (recipient after the channel, <|constrain|>json)',
    format: 'gpt-oss',
    text: '<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location": "Tokyo", "units": {"t": "C"}}<|call|>',
    reasoning: 'Need weather.',
    content: null,
    calls: [{ name: 'get_weather', arguments: { location: 'Tokyo', units: { t: 'C' } }, argumentsText: '{"location": "Tokyo", "units": {"t": "C"}}' }],
    warnings: [],
  },
  {
    name: 'recipient before the channel (the form the template renders)',
    format: 'gpt-oss',
    text: '<|start|>assistant to=functions.lookup<|channel|>commentary json<|message|>{"id": 7}<|call|>',
    reasoning: null,
    content: null,
    calls: [{ name: 'lookup', arguments: { id: 7 } }],
    warnings: [],
  },
  {
    name: 'a commentary preamble is content',
    format: 'gpt-oss',
    text: '<|channel|>commentary<|message|>Let me check 🌦️.<|end|><|start|>assistant<|channel|>commentary to=functions.w <|constrain|>json<|message|>{}<|call|>',
    reasoning: null,
    content: 'Let me check 🌦️.',
    calls: [{ name: 'w', arguments: {}, argumentsText: '{}' }],
    warnings: [],
  },
  {
    name: 'unfinished call',
    format: 'gpt-oss',
    text: '<|channel|>commentary to=functions.w <|constrain|>json<|message|>{"a": 1',
    reasoning: null,
    content: '{"a": 1',
    calls: [],
    warnings: ['unfinished'],
  },
  {
    name: 'text outside any message is content, with a warning',
    format: 'gpt-oss',
    text: 'Plain answer.',
    reasoning: null,
    content: 'Plain answer.',
    calls: [],
    warnings: ['outside a harmony message'],
  },
];

/**
 * The bug classes of the issue, for every tool-call-region format, built from each format's own
 * call syntax (as its template writes it): the expected values follow from how a case is put
 * together, not from the parser.
 */
type Args = Record<string, string>;
const REGION_FORMATS: Array<{ format: OutputCase['format']; call: (name: string, args: Args) => string; end: string; thinksByDefault: boolean }> = [
  {
    format: 'glm45',
    call: (n, a) =>
      `<tool_call>${n}\n${Object.entries(a)
        .map(([k, v]) => `<arg_key>${k}</arg_key>\n<arg_value>${v}</arg_value>\n`)
        .join('')}</tool_call>`,
    end: '</tool_call>',
    thinksByDefault: true,
  },
  {
    format: 'glm47',
    call: (n, a) =>
      `<tool_call>${n}${Object.entries(a)
        .map(([k, v]) => `<arg_key>${k}</arg_key><arg_value>${v}</arg_value>`)
        .join('')}</tool_call>`,
    end: '</tool_call>',
    thinksByDefault: true,
  },
  { format: 'qwen3', call: (n, a) => `<tool_call>\n${JSON.stringify({ name: n, arguments: a })}\n</tool_call>`, end: '</tool_call>', thinksByDefault: true },
  {
    format: 'qwen3-coder',
    call: (n, a) =>
      `<tool_call>\n<function=${n}>\n${Object.entries(a)
        .map(([k, v]) => `<parameter=${k}>\n${v}\n</parameter>\n`)
        .join('')}</function>\n</tool_call>`,
    end: '</tool_call>',
    thinksByDefault: false,
  },
  { format: 'deepseek-v3', call: (n, a) => `${B}${CB}function${SEP}${n}\n\`\`\`json\n${JSON.stringify(a)}\n\`\`\`${CE}${E}`, end: E, thinksByDefault: false },
  { format: 'deepseek-v3.1', call: (n, a) => `${B}${CB}${n}${SEP}${JSON.stringify(a)}${CE}${E}`, end: E, thinksByDefault: false },
  { format: 'deepseek-r1', call: (n, a) => `${B}${CB}function${SEP}${n}\n\`\`\`json\n${JSON.stringify(a)}\n\`\`\`${CE}${E}`, end: E, thinksByDefault: true },
];

export const GENERATED_CASES: OutputCase[] = REGION_FORMATS.flatMap(({ format, call, end, thinksByDefault }): OutputCase[] => {
  const q = { q: '東京 👋 "quoted" \\ back' };
  const c = call('search', q);
  const two = call('a', { x: '1' }) + (format.startsWith('deepseek') ? '' : '\n') + call('b', { y: 'é' });
  return [
    {
      name: 'generated: Unicode in content and arguments',
      format,
      text: `Voilà 🌍 ${c}`,
      reasoning: null,
      content: 'Voilà 🌍',
      calls: [{ name: 'search', arguments: q }],
      warnings: [],
    },
    {
      name: 'generated: parallel calls, content before and after',
      format,
      startInReasoning: false,
      text: `Two.\n${two}\nDone.`,
      reasoning: null,
      // The whitespace around and between the calls stays, joined (DeepSeek's calls are adjacent regions).
      content: format.startsWith('deepseek') ? 'Two.\n\nDone.' : 'Two.\n\n\nDone.',
      calls: [
        { name: 'a', arguments: { x: '1' } },
        { name: 'b', arguments: { y: 'é' } },
      ],
      warnings: [],
    },
    {
      name: 'generated: zero-argument call',
      format,
      text: call('now', {}),
      reasoning: null,
      content: null,
      calls: [{ name: 'now', arguments: {} }],
      warnings: [],
    },
    {
      name: 'generated: a call inside a fenced code block is text',
      format,
      startInReasoning: false,
      text: `Example:\n\`\`\`\n${c}\n\`\`\``,
      reasoning: null,
      content: `Example:\n\`\`\`\n${c}\n\`\`\``,
      calls: [],
      warnings: ['inside a fenced code block'],
    },
    {
      name: 'generated: a call inside <think> stays in the reasoning',
      format,
      text: `<think>maybe ${c}</think>Answer.`,
      reasoning: `maybe ${c}`,
      content: 'Answer.',
      calls: [],
      warnings: ['inside the reasoning'],
    },
    {
      name: 'generated: reasoning without <think> at the start',
      format,
      ...(thinksByDefault ? {} : { startInReasoning: true }),
      text: `Hmm, search.</think>\n${c}`,
      reasoning: 'Hmm, search.',
      content: null,
      calls: [{ name: 'search', arguments: q }],
      warnings: [],
    },
    {
      name: 'generated: unfinished output (cut inside the end marker)',
      format,
      startInReasoning: false,
      text: `Text ${c.slice(0, -3)}`,
      reasoning: null,
      content: `Text ${c.slice(0, -3)}`,
      calls: [],
      warnings: ['unfinished tool call'],
    },
    {
      name: 'generated: the end marker as plain text in content',
      format,
      startInReasoning: false,
      text: `Close it with ${end} please.`,
      reasoning: null,
      content: `Close it with ${end} please.`,
      calls: [],
      warnings: [],
    },
  ];
});
