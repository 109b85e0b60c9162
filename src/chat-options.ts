/**
 * Chat options that cannot be misspelled: an unknown option name, or a template variable in
 * `kwargs` that collides with an option, is an E_ARGUMENT naming the closest valid spelling.
 * (transformers' spellings are the usual mistake: `{add_generation_prompt: false}` at the top
 * level used to be ignored silently, so the generation prompt was still added.)
 */
import { PromptencError, describeValue } from './errors.js';
import { NORMALIZE_MODES } from './chat-messages.js';

/** ChatOptions' keys (src/options.ts). */
export const CHAT_OPTION_NAMES = ['tools', 'addGenerationPrompt', 'chatTemplate', 'kwargs', 'normalize', 'now', 'contentSpecialTokens'] as const;

/**
 * kwargs keys that are really options: the template variable they would set is set by the
 * option, and a kwarg would silently override it (kwargs go on top of transformers' context).
 * `chat_template` and `tokenize` are the ones vLLM refuses in chat_template_kwargs.
 */
const RESERVED_KWARGS: Readonly<Record<string, { option: string; flag: string }>> = {
  messages: { option: 'the messages argument', flag: '--messages' },
  tools: { option: 'options.tools', flag: '--tools' },
  add_generation_prompt: { option: 'options.addGenerationPrompt', flag: '--no-generation-prompt' },
  chat_template: { option: 'options.chatTemplate', flag: '--template' },
  tokenize: { option: 'encodeChat (ids) or renderChat (text)', flag: '--format' },
};

/** Levenshtein distance, for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j]!;
      row[j] = Math.min(up + 1, row[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return row[b.length]!;
}

const fold = (s: string) => s.toLowerCase().replace(/[_-]/g, '');

/** The valid name closest to `name` (case and underscores ignored), or undefined when none is near. */
export function closestName(name: string, valid: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const v of valid) {
    const d = distance(fold(name), fold(v));
    if (d < bestD) [best, bestD] = [v, d];
  }
  return bestD <= Math.max(2, Math.floor(fold(name).length / 3)) ? best : undefined;
}

/**
 * Check option names and the `normalize` and `kwargs` values. `extra` are further valid names
 * (fitChat's maxTokens). `where` names the options in messages ('options' in the API).
 */
export function checkChatOptions(opts: object, extra: readonly string[] = [], where = 'options'): void {
  const valid = [...CHAT_OPTION_NAMES, ...extra];
  for (const key of Object.keys(opts)) {
    if ((valid as readonly string[]).includes(key)) continue;
    const near = closestName(key, valid);
    const hint =
      near !== undefined ? `did you mean ${where}.${near}?` : `template variables go in ${where}.kwargs, e.g. { kwargs: { ${JSON.stringify(key)}: … } }`;
    throw new PromptencError('E_ARGUMENT', `${where}.${key}: unknown chat option; ${hint} (valid: ${valid.join(', ')})`);
  }
  const o = opts as { normalize?: unknown; kwargs?: unknown; contentSpecialTokens?: unknown };
  if (o.contentSpecialTokens !== undefined && o.contentSpecialTokens !== 'special' && o.contentSpecialTokens !== 'text') {
    throw new PromptencError('E_ARGUMENT', `${where}.contentSpecialTokens: expected 'special' or 'text', received ${describeValue(o.contentSpecialTokens)}`);
  }
  if (o.normalize !== undefined && !(NORMALIZE_MODES as readonly unknown[]).includes(o.normalize)) {
    throw new PromptencError('E_ARGUMENT', `${where}.normalize: expected 'vllm' or 'none', received ${describeValue(o.normalize)}`);
  }
  if (o.kwargs !== undefined && o.kwargs !== null && typeof o.kwargs === 'object' && !Array.isArray(o.kwargs))
    checkKwargs(o.kwargs as Record<string, unknown>, 'api');
}

/** kwargs keys that collide with an option; `cli` words the hint with the CLI's flags. */
export function checkKwargs(kwargs: Record<string, unknown>, style: 'api' | 'cli'): void {
  for (const key of Object.keys(kwargs)) {
    const r = RESERVED_KWARGS[key];
    if (r === undefined) continue;
    const where = style === 'cli' ? `--kwargs: "${key}"` : `options.kwargs.${key}`;
    throw new PromptencError('E_ARGUMENT', `${where}: collides with ${style === 'cli' ? r.flag : r.option}, which sets it; use that instead`);
  }
}
