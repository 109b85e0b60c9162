/**
 * Model-output test cases, one table per format. Sources, cited per case:
 * - vLLM tests: https://github.com/vllm-project/vllm/blob/main/tests/tool_parsers/test_glm4_moe_tool_parser.py
 *   and .../test_deepseekv31_tool_parser.py;
 * - llama.cpp tests: https://github.com/ggml-org/llama.cpp/blob/master/tests/test-chat.cpp (the
 *   "I'm\nthinking" / "Hello, world!\nWhat's up?" / special_function {"arg1": 1} vectors);
 * - the seeds (../shared/seeds/000_*.txt, the GLM examples);
 * - the formats as the model templates write them (../shared/templates) and the bug classes
 *   users report against the engines' parsers (unfinished calls, markers in code blocks, calls
 *   inside <think>, reasoning without <think>, marker text that is only text).
 * Where promptenc departs from an engine on purpose (text after the calls is kept in content,
 * content is trimmed), the case says so.
 */
import type { OutputFormat } from '../../src/output/types.js';
import { DEEPSEEK_CASES, GENERATED_CASES, HARMONY_CASES } from './output-cases-2.js';

export interface OutputCase {
  name: string;
  format: OutputFormat;
  text: string;
  tools?: unknown[];
  startInReasoning?: boolean;
  reasoning: string | null;
  content: string | null;
  calls: Array<{ name: string; arguments: Record<string, unknown>; argumentsText?: string }>;
  /** Each a substring of one warning, in order; [] means no warnings. */
  warnings: string[];
}

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: {
      type: 'object',
      properties: {
        city: { type: 'string' },
        days: { type: 'integer' },
        metric: { type: 'boolean' },
        temp: { type: 'number' },
        opts: { type: 'object' },
        tags: { type: 'array' },
      },
    },
  },
};
const runShell = {
  type: 'function',
  function: { name: 'run_shell', parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } },
};

const GLM_VLLM_1 = `<tool_call>get_current_weather
    <arg_key>city</arg_key>
    <arg_value>Dallas</arg_value>
    <arg_key>state</arg_key>
    <arg_value>TX</arg_value>
    <arg_key>unit</arg_key>
    <arg_value>fahrenheit</arg_value>
    </tool_call>`;

export const GLM_CASES: OutputCase[] = [
  {
    name: 'seed example 1: reasoning without <think> (the prompt opened it), then content',
    format: 'glm47',
    text: 'I will use du, sort the results, and limit them to five entries.</think>\nUse:\n\n```bash\ndu -ah . | sort -rh | head -n 5\n```\n\nTo include files only and exclude directories, use:\n\n```bash\nfind . -type f -exec du -h {} + | sort -rh | head -n 5\n```',
    reasoning: 'I will use du, sort the results, and limit them to five entries.',
    content:
      'Use:\n\n```bash\ndu -ah . | sort -rh | head -n 5\n```\n\nTo include files only and exclude directories, use:\n\n```bash\nfind . -type f -exec du -h {} + | sort -rh | head -n 5\n```',
    calls: [],
    warnings: [],
  },
  {
    name: 'seed example 3: reasoning then a run_shell call',
    format: 'glm47',
    tools: [runShell],
    startInReasoning: true,
    text: 'I need to run du to inspect the results.</think>\n<tool_call>run_shell<arg_key>cmd</arg_key><arg_value>du -ah . | sort -rh | head -n 5</arg_value></tool_call>',
    reasoning: 'I need to run du to inspect the results.',
    content: null,
    calls: [{ name: 'run_shell', arguments: { cmd: 'du -ah . | sort -rh | head -n 5' }, argumentsText: '{"cmd": "du -ah . | sort -rh | head -n 5"}' }],
    warnings: [],
  },
  {
    name: 'seed example 4: a call with no reasoning at all',
    format: 'glm47',
    tools: [runShell],
    text: '<tool_call>run_shell<arg_key>cmd</arg_key><arg_value>rm -rf dist</arg_value></tool_call>',
    reasoning: null,
    content: null,
    calls: [{ name: 'run_shell', arguments: { cmd: 'rm -rf dist' } }],
    warnings: [],
  },
  {
    name: 'seed example 4 after a prompt that opened <think>: an output that opens with a call has no reasoning',
    format: 'glm47',
    tools: [runShell],
    startInReasoning: true,
    text: '\n<tool_call>run_shell<arg_key>cmd</arg_key><arg_value>rm -rf dist</arg_value></tool_call>',
    reasoning: null,
    content: null,
    calls: [{ name: 'run_shell', arguments: { cmd: 'rm -rf dist' } }],
    warnings: [],
  },
  {
    name: 'deepseek-r1 after <think>: an output that opens with the calls region has no reasoning',
    format: 'deepseek-r1',
    startInReasoning: true,
    text: '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    reasoning: null,
    content: null,
    calls: [{ name: 'f', arguments: {} }],
    warnings: [],
  },
  {
    name: 'vLLM single_tool_call (indented glm45 form)',
    format: 'glm45',
    text: GLM_VLLM_1,
    reasoning: null,
    content: null,
    calls: [{ name: 'get_current_weather', arguments: { city: 'Dallas', state: 'TX', unit: 'fahrenheit' } }],
    warnings: [],
  },
  {
    name: 'vLLM multiple_tool_calls',
    format: 'glm45',
    text: `${GLM_VLLM_1}\n    ${GLM_VLLM_1.replace('Dallas', 'Orlando').replace('TX', 'FL')}`,
    reasoning: null,
    content: null,
    calls: [
      { name: 'get_current_weather', arguments: { city: 'Dallas', state: 'TX', unit: 'fahrenheit' } },
      { name: 'get_current_weather', arguments: { city: 'Orlando', state: 'FL', unit: 'fahrenheit' } },
    ],
    warnings: [],
  },
  {
    name: 'vLLM tool_call_with_content_before',
    format: 'glm45',
    text: `I'll help you check the weather. ${GLM_VLLM_1.replace('Dallas', 'Seattle')}`,
    reasoning: null,
    content: "I'll help you check the weather.",
    calls: [{ name: 'get_current_weather', arguments: { city: 'Seattle', state: 'TX', unit: 'fahrenheit' } }],
    warnings: [],
  },
  {
    name: 'vLLM thinking tags, content, call (glm45 newlines)',
    format: 'glm45',
    text: '<think>I want to get the weather.</think>\n\nI will help you get the weather.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2025-08-01</arg_value>\n</tool_call>',
    reasoning: 'I want to get the weather.',
    content: 'I will help you get the weather.',
    calls: [{ name: 'get_weather', arguments: { city: 'Beijing', date: '2025-08-01' } }],
    warnings: [],
  },
  {
    name: 'vLLM empty arguments (zero-argument call)',
    format: 'glm45',
    text: '<tool_call>get_current_time\n</tool_call>',
    reasoning: null,
    content: null,
    calls: [{ name: 'get_current_time', arguments: {}, argumentsText: '{}' }],
    warnings: [],
  },
  {
    name: 'vLLM mixed content: text between and after calls is kept (vLLM keeps only the text before the first)',
    format: 'glm45',
    text: 'I will help you get the weather info.\n\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n</tool_call>\n\nmeanwhile, Shanghai.\n\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Shanghai</arg_value>\n</tool_call>',
    reasoning: null,
    content: 'I will help you get the weather info.\n\n\n\nmeanwhile, Shanghai.',
    calls: [
      { name: 'get_weather', arguments: { city: 'Beijing' } },
      { name: 'get_weather', arguments: { city: 'Shanghai' } },
    ],
    warnings: [],
  },
  {
    name: 'vLLM incomplete tool call: stays in content, with a warning',
    format: 'glm45',
    text: '<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2025-08-01</arg_value>',
    reasoning: null,
    content: '<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2025-08-01</arg_value>',
    calls: [],
    warnings: ['unfinished tool call'],
  },
  {
    name: 'vLLM malformed XML (arg_key not closed): content and a warning',
    format: 'glm45',
    text: '<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Seattle</arg_value>\n<arg_key>incomplete_arg\n<arg_value>value</arg_value>\n</tool_call>',
    reasoning: null,
    content:
      '<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Seattle</arg_value>\n<arg_key>incomplete_arg\n<arg_value>value</arg_value>\n</tool_call>',
    calls: [],
    warnings: ['malformed tool call'],
  },
  {
    name: 'typed by schema: integer, boolean, number, object, array; string stays; unknown stays a string',
    format: 'glm47',
    tools: [weatherTool],
    text: '<tool_call>get_weather<arg_key>city</arg_key><arg_value>123</arg_value><arg_key>days</arg_key><arg_value>3</arg_value><arg_key>metric</arg_key><arg_value>true</arg_value><arg_key>temp</arg_key><arg_value>-1.5e2</arg_value><arg_key>opts</arg_key><arg_value>{"a": [1, {"b": null}]}</arg_value><arg_key>tags</arg_key><arg_value>["x","y"]</arg_value><arg_key>extra</arg_key><arg_value>42</arg_value></tool_call>',
    reasoning: null,
    content: null,
    calls: [
      { name: 'get_weather', arguments: { city: '123', days: 3, metric: true, temp: -150, opts: { a: [1, { b: null }] }, tags: ['x', 'y'], extra: '42' } },
    ],
    warnings: [],
  },
  {
    name: 'a value that does not read as its schema type stays a string, with a warning',
    format: 'glm47',
    tools: [weatherTool],
    text: '<tool_call>get_weather<arg_key>days</arg_key><arg_value>three</arg_value></tool_call>',
    reasoning: null,
    content: null,
    calls: [{ name: 'get_weather', arguments: { days: 'three' } }],
    warnings: ['not a integer'],
  },
  {
    name: 'no tools: values stay strings',
    format: 'glm47',
    text: '<tool_call>get_weather<arg_key>days</arg_key><arg_value>3</arg_value></tool_call>',
    reasoning: null,
    content: null,
    calls: [{ name: 'get_weather', arguments: { days: '3' } }],
    warnings: [],
  },
  {
    name: 'Unicode and emoji in reasoning, content and values',
    format: 'glm47',
    tools: [runShell],
    text: '<think>需要执行 du 命令 👀</think>可以 👋：<tool_call>run_shell<arg_key>cmd</arg_key><arg_value>echo "你好 🌍" | wc -c</arg_value></tool_call>',
    reasoning: '需要执行 du 命令 👀',
    content: '可以 👋：',
    calls: [{ name: 'run_shell', arguments: { cmd: 'echo "你好 🌍" | wc -c' } }],
    warnings: [],
  },
  {
    name: 'a marker inside a fenced code block is text',
    format: 'glm47',
    text: 'The format is:\n\n```\n<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>\n```\nDone.',
    reasoning: null,
    content: 'The format is:\n\n```\n<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>\n```\nDone.',
    calls: [],
    warnings: ['inside a fenced code block'],
  },
  {
    name: 'a call after a closed code block is a call',
    format: 'glm47',
    text: '```js\nx()\n```\n<tool_call>f<arg_key>a</arg_key><arg_value>b</arg_value></tool_call>',
    reasoning: null,
    content: '```js\nx()\n```',
    calls: [{ name: 'f', arguments: { a: 'b' } }],
    warnings: [],
  },
  {
    name: 'a tool call inside <think> stays in the reasoning, with a warning',
    format: 'glm47',
    text: '<think>maybe <tool_call>f<arg_key>a</arg_key><arg_value>b</arg_value></tool_call> no</think>Answer.',
    reasoning: 'maybe <tool_call>f<arg_key>a</arg_key><arg_value>b</arg_value></tool_call> no',
    content: 'Answer.',
    calls: [],
    warnings: ['inside the reasoning'],
  },
  {
    name: 'marker text that is only text: a </think> in content after the reasoning ended',
    format: 'glm47',
    text: 'ok</think>Use the `</think>` tag to end reasoning.',
    reasoning: 'ok',
    content: 'Use the `</think>` tag to end reasoning.',
    calls: [],
    warnings: [],
  },
  {
    name: 'no </think> and no <think>: all content (auto start)',
    format: 'glm47',
    text: 'Just an answer.',
    reasoning: null,
    content: 'Just an answer.',
    calls: [],
    warnings: [],
  },
  {
    name: 'the prompt opened <think> and the output was cut in the reasoning',
    format: 'glm47',
    startInReasoning: true,
    text: 'Let me think about',
    reasoning: 'Let me think about',
    content: null,
    calls: [],
    warnings: ['ended inside the reasoning'],
  },
  {
    name: 'end-of-turn marker: what follows is ignored, with a warning',
    format: 'glm47',
    text: 'Hi.<|user|>next turn',
    reasoning: null,
    content: 'Hi.',
    calls: [],
    warnings: ['was ignored'],
  },
  {
    name: 'a new <tool_call> before the previous one ended: the region does not parse, it stays text',
    format: 'glm47',
    text: '<tool_call>f<arg_key>a<tool_call>g<arg_key>x</arg_key><arg_value>1</arg_value></tool_call>',
    reasoning: null,
    content: '<tool_call>f<arg_key>a<tool_call>g<arg_key>x</arg_key><arg_value>1</arg_value></tool_call>',
    calls: [],
    warnings: ['malformed tool call'],
  },
];

export const QWEN_CASES: OutputCase[] = [
  {
    name: 'llama.cpp test-chat (Hermes 2 Pro): one call',
    format: 'qwen3',
    text: '<tool_call>\n{"name": "special_function", "arguments": {"arg1": 1}}\n</tool_call>',
    reasoning: null,
    content: null,
    calls: [{ name: 'special_function', arguments: { arg1: 1 }, argumentsText: '{"arg1": 1}' }],
    warnings: [],
  },
  {
    name: 'hermes single call with reasoning (Qwen3 thinks by default)',
    format: 'qwen3',
    text: '<think>\nThe user wants the weather.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}\n</tool_call>',
    reasoning: 'The user wants the weather.',
    content: null,
    calls: [{ name: 'get_weather', arguments: { city: 'Paris', days: 2 }, argumentsText: '{"city": "Paris", "days": 2}' }],
    warnings: [],
  },
  {
    name: 'hermes parallel calls with content before and after',
    format: 'qwen3',
    startInReasoning: false,
    text: 'Checking both.\n<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>\n<tool_call>\n{"name": "b", "arguments": {"nested": {"deep": [1, 2, {"x": "y"}]}}}\n</tool_call>\nThen I will answer.<|im_end|>',
    reasoning: null,
    content: 'Checking both.\n\n\nThen I will answer.',
    calls: [
      { name: 'a', arguments: {}, argumentsText: '{}' },
      { name: 'b', arguments: { nested: { deep: [1, 2, { x: 'y' }] } }, argumentsText: '{"nested": {"deep": [1, 2, {"x": "y"}]}}' },
    ],
    warnings: [],
  },
  {
    name: 'hermes arguments as a JSON string',
    format: 'qwen3',
    text: '<tool_call>\n{"name": "f", "arguments": "{\\"q\\": \\"✓\\"}"}\n</tool_call>',
    reasoning: null,
    content: null,
    calls: [{ name: 'f', arguments: { q: '✓' }, argumentsText: '{"q": "✓"}' }],
    warnings: [],
  },
  {
    name: 'hermes invalid JSON: content and a warning',
    format: 'qwen3',
    text: '<tool_call>\n{"name": "f", "arguments": {"a": }\n</tool_call>',
    reasoning: null,
    content: '<tool_call>\n{"name": "f", "arguments": {"a": }\n</tool_call>',
    calls: [],
    warnings: ['malformed tool call'],
  },
  {
    name: 'qwen3 disabled thinking (<think>\\n\\n</think> rendered by the prompt) gives plain content',
    format: 'qwen3',
    startInReasoning: false,
    text: 'Hello there!',
    reasoning: null,
    content: 'Hello there!',
    calls: [],
    warnings: [],
  },
  {
    name: 'qwen3-coder call typed by schema (vLLM qwen3coder rules: one newline trimmed each side)',
    format: 'qwen3-coder',
    tools: [weatherTool],
    text: 'I\'ll check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nNew York\n</parameter>\n<parameter=days>\n5\n</parameter>\n<parameter=metric>\nFalse\n</parameter>\n<parameter=opts>\n{"x": 1}\n</parameter>\n</function>\n</tool_call>',
    reasoning: null,
    content: "I'll check.",
    calls: [{ name: 'get_weather', arguments: { city: 'New York', days: 5, metric: false, opts: { x: 1 } } }],
    warnings: [],
  },
  {
    name: 'qwen3-coder multi-line code value keeps its inner newlines',
    format: 'qwen3-coder',
    text: '<tool_call>\n<function=write_file>\n<parameter=path>\na.py\n</parameter>\n<parameter=content>\n\ndef f():\n    return "<tool_call>"\n\n</parameter>\n</function>\n</tool_call>',
    reasoning: null,
    content: null,
    calls: [{ name: 'write_file', arguments: { path: 'a.py', content: '\ndef f():\n    return "<tool_call>"\n' } }],
    warnings: [],
  },
  {
    name: 'qwen3-coder parallel calls and a zero-argument call',
    format: 'qwen3-coder',
    text: '<tool_call>\n<function=now>\n</function>\n</tool_call>\n<tool_call>\n<function=f>\n<parameter=a>\nb\n</parameter>\n</function>\n</tool_call>',
    reasoning: null,
    content: null,
    calls: [
      { name: 'now', arguments: {}, argumentsText: '{}' },
      { name: 'f', arguments: { a: 'b' } },
    ],
    warnings: [],
  },
  {
    name: 'qwen3-coder missing </parameter> (vLLM accepts it), with a warning',
    format: 'qwen3-coder',
    text: '<tool_call>\n<function=f>\n<parameter=a>\n1\n<parameter=b>\n2\n</parameter>\n</function>\n</tool_call>',
    reasoning: null,
    content: null,
    calls: [{ name: 'f', arguments: { a: '1', b: '2' } }],
    warnings: ['</parameter> missing'],
  },
  {
    name: 'qwen3-coder unfinished call at the end (output cut by max_tokens)',
    format: 'qwen3-coder',
    text: 'Let me look.\n<tool_call>\n<function=f>\n<parameter=a>\n1',
    reasoning: null,
    content: 'Let me look.\n<tool_call>\n<function=f>\n<parameter=a>\n1',
    calls: [],
    warnings: ['unfinished tool call'],
  },
  {
    name: 'qwen3.5: the prompt opened <think>, reasoning then a coder call',
    format: 'qwen3-coder',
    startInReasoning: true,
    text: 'Need the file.\n</think>\n\n<tool_call>\n<function=read>\n<parameter=path>\n/etc/hosts\n</parameter>\n</function>\n</tool_call>',
    reasoning: 'Need the file.',
    content: null,
    calls: [{ name: 'read', arguments: { path: '/etc/hosts' } }],
    warnings: [],
  },
];

export const ALL_CASES: OutputCase[] = [...GLM_CASES, ...QWEN_CASES, ...DEEPSEEK_CASES, ...HARMONY_CASES, ...GENERATED_CASES];
