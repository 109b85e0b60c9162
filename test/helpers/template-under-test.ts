/**
 * The template engine the Jinja2 differential tests check: our own engine
 * (src/template/engine/index.ts) with PROMPTENC_TEST_ENGINE=1, else the renderer promptenc
 * ships today (src/template/render.ts's ChatTemplate over @huggingface/jinja).
 * Tests import only this file, so the same cases run unchanged on either. Divergences that
 * are allowed on the fallback (KNOWN lists in the tests) never apply to the engine.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ChatTemplate } from '../../src/template/render.js';

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

type EngineModule = {
  compileTemplate(source: string, options?: { limits?: TemplateLimitsUnderTest }): CompiledUnderTest;
};

const engineUrl = new URL('../../src/template/engine/index.ts', import.meta.url);
/** Where the engine's entry is expected; exported for the child processes of the limits test. */
export const ENGINE_ENTRY = fileURLToPath(engineUrl);
// The engine is in the tree but promptenc does not render through it yet (src/template/render.ts
// uses @huggingface/jinja); PROMPTENC_TEST_ENGINE=1 runs these tests on it instead.
/** The engine's source is in the tree (the limits tests run on it whatever USING_ENGINE says). */
export const ENGINE_PRESENT = existsSync(ENGINE_ENTRY);
export const USING_ENGINE = ENGINE_PRESENT && process.env.PROMPTENC_TEST_ENGINE === '1';
/** Spelled as a variable so TypeScript does not resolve it before the engine exists. */
const engineSpecifier: string = '../../src/template/engine/index.js';
const engine: EngineModule | undefined = USING_ENGINE ? ((await import(engineSpecifier)) as EngineModule) : undefined;

/**
 * Whether promptenc's own ChatTemplate (src/template/render.ts, what renderChat uses) renders
 * through the engine: read from its imports, never from how it behaves (a behavioural probe
 * would excuse the engine's own regressions as "fallback").
 */
export const RENDER_USES_ENGINE = readFileSync(new URL('../../src/template/render.ts', import.meta.url), 'utf8').includes("from './engine/");

export const UNDER_TEST = USING_ENGINE ? 'engine (src/template/engine)' : 'fallback (src/template/render.ts over @huggingface/jinja)';

/** The fallback: a raw context mapped onto ChatTemplate's RenderContext (everything but messages/tools/add_generation_prompt goes to kwargs, which override all). */
function compileFallback(source: string): CompiledUnderTest {
  const t = new ChatTemplate(source);
  return {
    render(context) {
      const { messages, tools, add_generation_prompt, ...rest } = context;
      return t.render({
        messages: (messages ?? []) as never,
        ...(tools === undefined || tools === null ? {} : { tools: tools as never }),
        addGenerationPrompt: add_generation_prompt === true,
        specialTokens: {},
        kwargs: rest,
      });
    },
  };
}

/** Compiles with whichever engine is under test. Both throw PromptencError (E_TEMPLATE, E_TEMPLATE_LIMIT). */
export function compileUnderTest(source: string, options?: { limits?: TemplateLimitsUnderTest }): CompiledUnderTest {
  return engine ? engine.compileTemplate(source, options) : compileFallback(source);
}

/** The outcome of one render: its text, or the error's code and message. */
export type Outcome = { text: string } | { code: string; message: string };

export function renderUnderTest(source: string, context: Record<string, unknown>): Outcome {
  try {
    return { text: compileUnderTest(source).render(context) };
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    return { code: typeof e.code === 'string' ? e.code : `uncoded ${(err as Error)?.name}`, message: String(e.message) };
  }
}

/** Python errors that mean "a resource ran out": our limit (E_TEMPLATE_LIMIT) is the same answer. */
const RESOURCE_ERRORS = new Set(['RecursionError', 'MemoryError', 'OverflowError']);

/** Our outcome matches Jinja2 raising `pythonType`: E_TEMPLATE, or E_TEMPLATE_LIMIT where Python ran out of a resource. */
export function raisesLikeJinja2(pythonType: string | undefined, ours: Outcome): boolean {
  if (!('code' in ours)) return false;
  return ours.code === 'E_TEMPLATE' || (ours.code === 'E_TEMPLATE_LIMIT' && RESOURCE_ERRORS.has(pythonType ?? ''));
}
