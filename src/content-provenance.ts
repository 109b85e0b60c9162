/**
 * encodeChat's contentSpecialTokens 'text': the caller's text (message content, tool results,
 * reasoning, tool-call arguments) is encoded as plain text, while the template's own
 * scaffolding still becomes special tokens.
 *
 * The template is rendered by promptenc's engine with provenance (template/engine/provenance.ts):
 * the render knows exactly which output characters came from caller text (no string search).
 * The rendered text is then split as Hugging Face splits added tokens, but only inside the
 * scaffolding:
 * - each maximal run of scaffolding is scanned for added tokens on its own, exactly as HF scans
 *   a text (leftmost-longest, single_word, lstrip/rstrip, normalized tokens in the gaps); a
 *   token is therefore recognised only where every character of it, and any whitespace its
 *   lstrip/rstrip takes, is scaffolding. Caller text can neither become a token nor be taken by
 *   one, nor change which tokens the scaffolding holds.
 * - the text between two recognised tokens (scaffolding and caller text together) is one
 *   segment, normalized, pre-tokenized and BPE-encoded as a whole with no added-token split at
 *   all (Backend.encodeOrdinary), as HF encodes the text between added tokens. Special-token
 *   text in caller text (`<|im_start|>`, and non-special added tokens such as DeepSeek's
 *   `<｜tool▁call▁begin｜>` or Qwen3's `<think>`) is so encoded as the characters it is.
 */
import { PromptencError } from './errors.js';
import { isIdentityNormalizer, type AddedTokenScanner } from './split.js';
import { Engine, type TemplateLimits } from './template/engine/index.js';
import { loads } from './template/engine/json.js';
import { content, ContentTextMap } from './template/engine/provenance.js';
import { PyObject } from './template/engine/values.js';
import type { ChatMessage } from './template/messages.js';
import { plainCopy, pythonJsonDumps } from './template/arguments.js';
import type { RenderContext } from './template/render.js';
import type { TokenizerJson } from './tokenizer-json.js';

export type ContentSpecialTokens = 'special' | 'text';

/** Provenance engines by limits and source (bounded, as render.ts's cache). */
const engines = new Map<string, Engine>();
const ENGINES_LIMIT = 64;

function engineFor(source: string, limits: TemplateLimits | undefined): Engine {
  const key = limits === undefined ? `/${source}` : `${limits.maxOutput}/${limits.maxIterations}/${limits.maxDepth}/${source}`;
  let e = engines.get(key);
  if (e === undefined) {
    e = new Engine(source, limits === undefined ? { provenance: true } : { provenance: true, limits });
    if (engines.size >= ENGINES_LIMIT) engines.delete(engines.keys().next().value as string);
    engines.set(key, e);
  }
  return e;
}

/**
 * Caller data as caller text: every string value (not mapping keys) marked. Engine values that
 * are not containers (a PyFloat from json.loads, a bigint) stay as they are.
 */
function callerValue(v: unknown): unknown {
  if (typeof v === 'string') return content(v);
  if (Array.isArray(v)) return v.map(callerValue);
  if (v instanceof Map) return new Map([...v.entries()].map(([k, x]) => [k, callerValue(x)]));
  if (v !== null && typeof v === 'object' && !(v instanceof PyObject)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, callerValue(x)]));
  return v;
}

/**
 * Tool-call arguments, by the rule of template/arguments.ts: a JSON object text or an object
 * reaches the template as a mapping that prints as its JSON text; anything else as it is. Values
 * and the printed text are caller text.
 */
function callerArguments(args: unknown, asGiven: boolean): unknown {
  if (asGiven) return callerValue(args);
  if (typeof args === 'string') {
    const parsed = loads(args);
    if (!(parsed instanceof Map)) return content(args);
    return new ContentTextMap(
      [...parsed.entries()].map(([k, x]) => [k, callerValue(x)] as const),
      content(args),
    );
  }
  if (args !== null && typeof args === 'object' && !Array.isArray(args)) {
    return new ContentTextMap(
      Object.entries(args).map(([k, x]) => [k, callerValue(x)] as const),
      content(pythonJsonDumps(args)),
    );
  }
  return callerValue(args);
}

function callerMessage(m: ChatMessage, asGiven: boolean): unknown {
  const out: Record<string, unknown> = { ...m };
  if (typeof m.content === 'string') out.content = content(m.content);
  else if (Array.isArray(m.content))
    out.content = m.content.map((part) =>
      part !== null && typeof part === 'object' && typeof part.text === 'string' ? { ...part, text: content(part.text) } : part,
    );
  if (typeof m.reasoning_content === 'string') out.reasoning_content = content(m.reasoning_content);
  if (typeof m.reasoning === 'string') out.reasoning = content(m.reasoning);
  if (Array.isArray(m.tool_calls))
    out.tool_calls = m.tool_calls.map((tc) =>
      tc !== null && typeof tc === 'object' && tc.function !== null && typeof tc.function === 'object'
        ? { ...tc, function: { ...tc.function, arguments: callerArguments(tc.function.arguments, asGiven) } }
        : tc,
    );
  return out;
}

/**
 * The engine's variables: transformers' context as ChatTemplate builds it (render.ts: special
 * tokens first, then messages/tools/..., then kwargs over everything, each a plainCopy), with
 * caller text marked.
 */
function engineVariables(ctx: RenderContext): Record<string, unknown> {
  const asGiven = ctx.argumentsAsGiven === true;
  const vars: Record<string, unknown> = {
    ...ctx.specialTokens,
    messages: ctx.messages.map((m) => callerMessage(plainCopy(m) as ChatMessage, asGiven)),
    tools: plainCopy(ctx.tools ?? null),
    documents: null,
    add_generation_prompt: ctx.addGenerationPrompt,
  };
  const kw = ctx.kwargs;
  if (kw !== undefined) for (const k of Object.keys(kw)) vars[k] = plainCopy(kw[k]);
  return vars;
}

/**
 * Render with provenance: the same text as renderChat, and the [start, end) offsets of caller
 * text in it. E_CONTENT_UNSAFE when the template transforms caller text in a way whose
 * provenance cannot be followed.
 */
export function renderWithProvenance(source: string, ctx: RenderContext, limits?: TemplateLimits): { text: string; spans: number[] } {
  return engineFor(source, limits).renderProvenance(engineVariables(ctx), ctx.now ? { now: ctx.now } : {});
}

/** What the split needs of a tokenizer. */
export interface ProvenanceEncoder {
  scanner: AddedTokenScanner;
  encodeOrdinary: (text: string) => Uint32Array;
}

/** Refuse tokenizers whose added-token split the scanner cannot reproduce (normalized tokens under a real normalizer). */
export function checkProvenanceTokenizer(json: TokenizerJson): void {
  if ((json.added_tokens ?? []).some((t) => t.normalized) && !isIdentityNormalizer(json.normalizer)) {
    throw new PromptencError(
      'E_ARGUMENT',
      "options.contentSpecialTokens 'text': not supported for this tokenizer (normalized added tokens under a normalizer: their matches depend on the normalized text)",
    );
  }
}

/** One piece of the split: text encoded with no added-token split, or an added token of the scaffolding. */
export type ProvenanceSegment = { text: string } | { id: number; text: string };

/** The split described at the top of this file. */
export function provenanceSegments(text: string, spans: readonly number[], scanner: AddedTokenScanner): ProvenanceSegment[] {
  const out: ProvenanceSegment[] = [];
  let at = 0;
  const scaffold = (a: number, b: number) => {
    if (b <= a) return;
    const run = text.slice(a, b);
    for (const m of scanner.scan(run)) {
      const start = a + m.start;
      if (start > at) out.push({ text: text.slice(at, start) });
      out.push({ id: m.id, text: text.slice(start, a + m.end) });
      at = a + m.end;
    }
  };
  let prev = 0;
  for (let i = 0; i < spans.length; i += 2) {
    scaffold(prev, spans[i]!);
    prev = spans[i + 1]!;
  }
  scaffold(prev, text.length);
  if (at < text.length) out.push({ text: text.slice(at) });
  return out;
}

export function encodeSegments(segments: readonly ProvenanceSegment[], encodeOrdinary: (text: string) => Uint32Array): Uint32Array {
  const parts: Uint32Array[] = [];
  let n = 0;
  for (const s of segments) {
    const ids = 'id' in s ? Uint32Array.of(s.id) : encodeOrdinary(s.text);
    parts.push(ids);
    n += ids.length;
  }
  const out = new Uint32Array(n);
  let k = 0;
  for (const p of parts) {
    out.set(p, k);
    k += p.length;
  }
  return out;
}
