/**
 * Which output format a model writes, guessed from its chat template (the template teaches the
 * model the format, so it names the markers), and whether a rendered prompt opens reasoning.
 * A guess: undefined when the template shows no format promptenc parses (DeepSeek-V3.2's DSML,
 * Kimi K2, MiniMax-M2, Seed-OSS, Llama 3.1's JSON calls are not parsed).
 */
import type { OutputFormat } from './types.js';

export function outputFormatOfTemplate(source: string): OutputFormat | undefined {
  if (source.includes('<|channel|>') && source.includes('<|message|>')) return 'gpt-oss';
  if (source.includes('｜DSML｜')) return undefined;
  if (source.includes('<｜tool▁call▁begin｜>') || source.includes('<｜tool▁calls▁begin｜>')) {
    // V3 / R1 write a type ("function") before the separator and the name after it; V3.1 the name before it.
    const v3Form = /\[['"]type['"]\]\s*\+\s*['"]<｜tool▁sep｜>/.test(source) || source.includes('function<｜tool▁sep｜>');
    if (!v3Form) return 'deepseek-v3.1';
    return source.includes('<think>') || source.includes('</think>') ? 'deepseek-r1' : 'deepseek-v3';
  }
  if (source.includes('<arg_key>')) return source.includes('\n<arg_key>') ? 'glm45' : 'glm47';
  if (source.includes('<function=') && source.includes('<parameter=')) return 'qwen3-coder';
  if (source.includes('<tool_call>')) return 'qwen3';
  return undefined;
}

/** Without a template: the model family from its added tokens. */
export function outputFormatOfTokens(contents: Iterable<string>): OutputFormat | undefined {
  const has = new Set(contents);
  if (has.has('<|channel|>') && has.has('<|message|>')) return 'gpt-oss';
  if (has.has('<｜tool▁calls▁begin｜>')) return 'deepseek-v3';
  if (has.has('<arg_key>')) return 'glm47';
  if (has.has('<tool_call>')) return 'qwen3';
  return undefined;
}

/**
 * Whether generation starts inside reasoning: the prompt ends with `<think>` (and maybe
 * whitespace) → true; with `</think>` → false (thinking turned off); else undefined.
 */
export function promptOpensReasoning(prompt: string): boolean | undefined {
  const end = prompt.trimEnd();
  if (end.endsWith('<think>')) return true;
  if (end.endsWith('</think>')) return false;
  return undefined;
}
