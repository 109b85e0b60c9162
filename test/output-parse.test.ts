/**
 * Output parsers, one table per format (test/helpers/output-cases.ts, each case citing its
 * source), the seeds' GLM examples, format detection from the real templates, and the
 * argument checks.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadTokenizer, parseAssistantOutput, outputFormatOfTemplate, promptOpensReasoning, type ParsedOutput } from '../src/index.js';
import { ALL_CASES, type OutputCase } from './helpers/output-cases.js';
import { sharedTemplate, templatesAvailable } from './helpers/output-templates.js';

function checkCase(c: OutputCase, got: ParsedOutput): void {
  expect(got.reasoning).toBe(c.reasoning);
  expect(got.content).toBe(c.content);
  expect(got.toolCalls.map((t) => ({ name: t.name, arguments: t.arguments }))).toEqual(c.calls.map((t) => ({ name: t.name, arguments: t.arguments })));
  got.toolCalls.forEach((t, i) => {
    expect(t.id).toBe(`call_${i}`);
    expect(JSON.parse(t.argumentsText)).toEqual(t.arguments);
    const want = c.calls[i]!.argumentsText;
    if (want !== undefined) expect(t.argumentsText).toBe(want);
  });
  expect(got.warnings.length).toBe(c.warnings.length);
  c.warnings.forEach((w, i) => {
    expect(got.warnings[i]).toContain(w);
  });
}

describe('parseAssistantOutput tables', () => {
  for (const c of ALL_CASES) {
    it(`${c.format}: ${c.name}`, () => {
      checkCase(c, parseAssistantOutput(c.text, { format: c.format, tools: c.tools, startInReasoning: c.startInReasoning }));
    });
  }
});

describe('errors', () => {
  it('an unknown format is E_ARGUMENT', () => {
    expect(() => parseAssistantOutput('x', { format: 'llama9' as never })).toThrow(expect.objectContaining({ code: 'E_ARGUMENT' }));
    expect(() => parseAssistantOutput(3 as never, { format: 'glm47' })).toThrow(expect.objectContaining({ code: 'E_ARGUMENT' }));
    expect(() => parseAssistantOutput('x', { format: 'glm47', tools: {} as never })).toThrow(expect.objectContaining({ code: 'E_ARGUMENT' }));
    expect(() => parseAssistantOutput('x', { format: 'glm47', startInReasoning: 'yes' as never })).toThrow(expect.objectContaining({ code: 'E_ARGUMENT' }));
  });
});

// Which format each real template teaches (../shared/templates/README.md names the families).
const TEMPLATE_FORMATS: Array<[string, string | undefined]> = [
  ['glm-4.5.jinja', 'glm45'],
  ['glm-4.6.llamacpp.jinja', 'glm45'],
  ['glm-4.7-flash.llamacpp.jinja', 'glm47'],
  ['glm-5.1.jinja', 'glm47'],
  ['deepseek-v3.1.jinja', 'deepseek-v3.1'],
  ['deepseek-r1.jinja', 'deepseek-r1'],
  ['deepseek-v3.2.llamacpp.jinja', undefined],
  ['qwen3.jinja', 'qwen3'],
  ['qwen3-coder.jinja', 'qwen3-coder'],
  ['qwen3.5.jinja', 'qwen3-coder'],
  ['gpt-oss.jinja', 'gpt-oss'],
  ['hermes-3-llama-3.1-tool-use.jinja', 'qwen3'],
  ['llama-3.1.jinja', undefined],
  ['kimi-k2-thinking.jinja', undefined],
  ['minimax-m2.jinja', undefined],
];

describe.skipIf(!templatesAvailable)('outputFormat from the real templates', () => {
  for (const [file, want] of TEMPLATE_FORMATS) {
    it(file, () => {
      expect(outputFormatOfTemplate(sharedTemplate(file))).toBe(want);
    });
  }
  it('the seed 003 DeepSeek template (fenced calls, <think> at the generation prompt)', () => {
    expect(outputFormatOfTemplate(readFileSync(new URL('./fixtures/seed-003.jinja', import.meta.url), 'utf8'))).toBe('deepseek-r1');
  });
});

describe('tok.outputFormat and tok.parseOutput', () => {
  it('bundled models: deepseek-v3 and qwen3 from their templates, gpt-oss from its tokens', async () => {
    expect((await loadTokenizer('deepseek-v3', { backend: 'js' })).outputFormat).toBe('deepseek-v3');
    expect((await loadTokenizer('gpt-oss', { backend: 'js' })).outputFormat).toBe('gpt-oss');
    const qwen = await loadTokenizer('qwen3', { backend: 'js' });
    expect(qwen.outputFormat).toBe('qwen3');
    // The prompt's end tells where the output starts.
    const open = qwen.renderChat([{ role: 'user', content: 'hi' }]) + '<think>\n';
    expect(qwen.parseOutput('hmm\n</think>\n\nHello', { prompt: open })).toEqual({ reasoning: 'hmm', content: 'Hello', toolCalls: [], warnings: [] });
    const off = qwen.renderChat([{ role: 'user', content: 'hi' }], { kwargs: { enable_thinking: false } });
    expect(promptOpensReasoning(off)).toBe(false);
    expect(qwen.parseOutput('Hello', { prompt: off }).content).toBe('Hello');
    const llama = await loadTokenizer('llama3', { backend: 'js' });
    expect(() => llama.parseOutput('x')).toThrow(expect.objectContaining({ code: 'E_ARGUMENT' }));
    expect(llama.parseOutput('x', { format: 'qwen3' }).content).toBe('x');
  });
});
