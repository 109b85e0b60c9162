/**
 * The seed conversations (seeds 000 and 002, examples 1-4, English and Chinese) with GLM's
 * real vocabulary: a GLM-4.5-format tokenizer = GLM-4's 151,329 ranks
 * (../shared/models/glm-4/tokenizer.model) plus GLM-4.5's added tokens from 151329
 * (/work/shared/docs/facts.md: the published ids, `<think>` 151350, and the tool tokens after
 * it), rendered with the seed fixture template and with the real GLM-4.5 template
 * (../shared/templates/glm-4.5.jinja).
 *
 * Real: the ordinary-text ids of GLM-4, and the template. Believed: that GLM-4.5's text ids
 * equal GLM-4's (public vectors agree; not proven here), and the tool-token ids after
 * 151351 (facts.md: "commonly cited, not confirmed").
 *
 * Expected values: the prompt text from the seeds themselves (fixture template) or from Python
 * Jinja2 configured as transformers (real template), and ids from tiktoken built from the same
 * ranks with ChatGLM4Tokenizer's pat_str and these added tokens as specials
 * (encode(text, "all")), and from the Rust `tokenizers` package on the same tokenizer.json.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Tiktoken } from 'tiktoken/lite';
import tokenizers from 'tokenizers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativeAddonStatus } from '../src/backend/native.js';
import { loadTokenizer, type ChatMessage, type PromptTokenizer } from '../src/index.js';
import { readTokenizerFiles } from '../src/load.js';
import { SEED_CONVERSATIONS } from './fixtures/seed-conversations.js';
import { GLM_ADDED_TOKENS, GLM_SEED_TEMPLATE_PATH, GLM_SPECIAL_IDS } from '../bench/helpers/glm-tokenizer.mjs';
import { HAVE_PYTHON_JINJA, pyRender } from './helpers/py-render.js';
import { sharedPath } from './helpers/shared-files.js';

const RANKS = sharedPath('models/glm-4/tokenizer.model', 'seeds with the real GLM vocabulary');
const GLM45_TEMPLATE_PATH = sharedPath('templates/glm-4.5.jinja', 'seeds with the real GLM-4.5 template');
const GLM4_PAT_STR = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** GLM-4.5's added tokens in order from 151329 (facts.md, "Building the GLM-format test tokenizer"). */
const GLM45_ADDED: readonly string[] = GLM_ADDED_TOKENS;

/**
 * What vLLM hands the template (vllm/entrypoints/chat_utils.py, and promptenc's default
 * normalization): `content: null` as '' (None becomes an empty list of parts, joined to a
 * string for a template that reads content as a string), tool-call arguments as a mapping.
 */
function engineMessages(messages: ChatMessage[]): unknown[] {
  return messages.map((m) => {
    if (!m.tool_calls) return m.content === null ? { ...m, content: '' } : m;
    return {
      ...m,
      ...(m.content === null && { content: '' }),
      tool_calls: m.tool_calls.map((tc) => {
        const args = tc.function.arguments;
        return { ...tc, function: { ...tc.function, arguments: typeof args === 'string' ? JSON.parse(args) : args } };
      }),
    };
  });
}

describe.skipIf(!RANKS)('seed conversations with the real GLM vocabulary (GLM-4.5 format)', () => {
  const backends: Array<'js' | 'native'> = nativeAddonStatus().available ? ['native', 'js'] : ['js'];
  const toks = new Map<string, PromptTokenizer>();
  let oracle: Tiktoken;
  let rust: InstanceType<typeof tokenizers.Tokenizer>;
  let tmp: string;
  const seedTemplate = readFileSync(GLM_SEED_TEMPLATE_PATH, 'utf8');

  beforeAll(async () => {
    const specials = Object.fromEntries(GLM45_ADDED.map((c, i) => [c, 151329 + i]));
    for (const [content, id] of Object.entries(GLM_SPECIAL_IDS)) expect(specials[content], content).toBe(id);
    oracle = new Tiktoken(readFileSync(RANKS!, 'utf8'), specials, GLM4_PAT_STR);
    // The GLM-4 directory read by promptenc, its added tokens replaced by GLM-4.5's, written
    // out as a Hugging Face model directory with a tokenizer.json (as GLM-4.5 ships).
    const glm4 = await readTokenizerFiles(path.dirname(RANKS!));
    const json = {
      ...glm4.tokenizerJson,
      added_tokens: GLM45_ADDED.map((content, i) => ({
        id: 151329 + i,
        content,
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: false,
        special: true,
      })),
      post_processor: null,
    };
    tmp = mkdtempSync(path.join(os.tmpdir(), 'promptenc-glm45-'));
    writeFileSync(path.join(tmp, 'tokenizer.json'), JSON.stringify(json));
    writeFileSync(
      path.join(tmp, 'tokenizer_config.json'),
      JSON.stringify({ tokenizer_class: 'PreTrainedTokenizerFast', eos_token: '<|endoftext|>', pad_token: '<|endoftext|>' }),
    );
    if (GLM45_TEMPLATE_PATH) writeFileSync(path.join(tmp, 'chat_template.jinja'), readFileSync(GLM45_TEMPLATE_PATH, 'utf8'));
    for (const b of backends) toks.set(b, await loadTokenizer(tmp, { backend: b }));
    rust = tokenizers.Tokenizer.fromFile(path.join(tmp, 'tokenizer.json'));
  }, 120_000);

  afterAll(() => {
    oracle?.free();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  const oracleIds = (text: string): number[] => Array.from(oracle.encode(text, 'all'));

  it('covers examples 1-4 of both seeds', () => {
    expect(SEED_CONVERSATIONS).toHaveLength(10);
  });

  for (const c of SEED_CONVERSATIONS) {
    it(`${c.name}: the seed's prompt, encoded with the real vocabulary`, async () => {
      const want = oracleIds(c.expected);
      expect((await rust.encode(c.expected, null, { addSpecialTokens: false })).getIds()).toEqual(want);
      // Every special token of the prompt is one id.
      for (const t of [
        '[gMASK]',
        '<sop>',
        '<|system|>',
        '<|user|>',
        '<|assistant|>',
        '<think>',
        '</think>',
        '<tool_call>',
        '<arg_key>',
        '<|observation|>',
        '<tool_response>',
      ]) {
        const id = GLM_SPECIAL_IDS[t]!;
        expect(want.filter((x) => x === id).length, t).toBe(c.expected.split(t).length - 1);
      }
      for (const [b, tok] of toks) {
        const opts = { tools: c.tools, addGenerationPrompt: c.addGenerationPrompt, chatTemplate: seedTemplate, kwargs: c.kwargs };
        expect(tok.renderChat(c.messages, opts), b).toBe(c.expected);
        expect(Array.from(tok.encodeChat(c.messages, opts)), b).toEqual(want);
      }
    });
  }

  it.skipIf(!HAVE_PYTHON_JINJA || !GLM45_TEMPLATE_PATH)("the same conversations through the real GLM-4.5 template: Jinja2's text, tiktoken's ids", () => {
    const template = readFileSync(GLM45_TEMPLATE_PATH!, 'utf8');
    for (const c of SEED_CONVERSATIONS) {
      const want = pyRender({
        template,
        messages: engineMessages(c.messages),
        tools: c.tools ?? null,
        add_generation_prompt: c.addGenerationPrompt,
        special_tokens: { eos_token: '<|endoftext|>', pad_token: '<|endoftext|>' },
        kwargs: c.kwargs,
      });
      expect(want.startsWith('[gMASK]<sop>')).toBe(true);
      const ids = oracleIds(want);
      for (const [b, tok] of toks) {
        const opts = { tools: c.tools, addGenerationPrompt: c.addGenerationPrompt, kwargs: c.kwargs };
        expect(tok.renderChat(c.messages, opts), `${b} ${c.name}`).toBe(want);
        expect(Array.from(tok.encodeChat(c.messages, opts)), `${b} ${c.name}`).toEqual(ids);
      }
    }
  });
});
