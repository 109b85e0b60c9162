/**
 * The template engine the Jinja2 differential tests check: promptenc's own engine
 * (src/template/engine/index.ts), which ChatTemplate (src/template/render.ts, what renderChat
 * and sessions use) renders through. Tests import only this file.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compileTemplate } from '../../src/template/engine/index.js';

/** The engine's limits (src/template/engine/runtime.ts TemplateLimits). */
export interface TemplateLimitsUnderTest {
  /** Longest output, in UTF-16 code units. */
  maxOutput?: number;
  /** Loop iterations summed over a render. */
  maxIterations?: number;
  /** Macro call depth (and syntax nesting). */
  maxDepth?: number;
}

export interface CompiledUnderTest {
  /** The template's text for a raw Jinja2 context (transformers passes special tokens, messages, tools, documents, add_generation_prompt, kwargs). */
  render(context: Record<string, unknown>): string;
}

/** Where the engine's entry is; exported for the child processes of the limits test. */
export const ENGINE_ENTRY = fileURLToPath(new URL('../../src/template/engine/index.ts', import.meta.url));

/**
 * Whether promptenc's own ChatTemplate (src/template/render.ts, what renderChat uses) renders
 * through the engine: read from its imports, never from how it behaves (a behavioural probe
 * would excuse the engine's own regressions).
 */
export const RENDER_USES_ENGINE = readFileSync(new URL('../../src/template/render.ts', import.meta.url), 'utf8').includes("from './engine/");

export const UNDER_TEST = 'engine (src/template/engine)';

/** Compiles with the engine. It throws PromptencError (E_TEMPLATE, E_TEMPLATE_LIMIT). */
export function compileUnderTest(source: string, options?: { limits?: TemplateLimitsUnderTest }): CompiledUnderTest {
  return compileTemplate(source, options);
}

/** The outcome of one render: its text, or the error's code, message and (PromptencError.templateLine) template line. */
export type Outcome = { text: string } | { code: string; message: string; templateLine?: number };

export function renderUnderTest(source: string, context: Record<string, unknown>): Outcome {
  try {
    return { text: compileUnderTest(source).render(context) };
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown; templateLine?: unknown };
    const out: Outcome = { code: typeof e.code === 'string' ? e.code : `uncoded ${(err as Error)?.name}`, message: String(e.message) };
    if (typeof e.templateLine === 'number') out.templateLine = e.templateLine;
    return out;
  }
}

/** Python errors that mean "a resource ran out": our limit (E_TEMPLATE_LIMIT) is the same answer. */
const RESOURCE_ERRORS = new Set(['RecursionError', 'MemoryError', 'OverflowError']);

/** Our outcome matches Jinja2 raising `pythonType`: E_TEMPLATE, or E_TEMPLATE_LIMIT where Python ran out of a resource. */
export function raisesLikeJinja2(pythonType: string | undefined, ours: Outcome): boolean {
  if (!('code' in ours)) return false;
  return ours.code === 'E_TEMPLATE' || (ours.code === 'E_TEMPLATE_LIMIT' && RESOURCE_ERRORS.has(pythonType ?? ''));
}
