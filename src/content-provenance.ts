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
import { Engine } from './template/engine/index.js';
import { loads } from './template/engine/json.js';
import { content, ContentTextMap } from './template/engine/provenance.js';
import { PyObject, TextMap } from './template/engine/values.js';
import type { ChatMessage } from './template/messages.js';
import { pythonJsonDumps, type RenderContext } from './template/render.js';
import type { TokenizerJson } from './tokenizer-json.js';

export type ContentSpecialTokens = 'special' | 'text';

const engines = new Map<string, Engine>();
const ENGINES_LIMIT = 64;

function engineFor(source: string): Engine {
  let e = engines.get(source);
  if (e === undefined) {
    e = new Engine(source, { provenance: true });
    if (engines.size >= ENGINES_LIMIT) engines.delete(engines.keys().next().value as string);
    engines.set(source, e);
  }
  return e;
}

/**
 * Caller data as caller text: every string value (not mapping keys) marked. Engine values that
 * are not containers (a PyFloat from json.loads, a bigint) stay as they are.
 */
function callerValue(v: unknown, mark: Mark): unknown {
  if (typeof v === 'string') return mark(v);
  if (Array.isArray(v)) return v.map((x) => callerValue(x, mark));
  if (v instanceof Map) return new Map([...v.entries()].map(([k, x]) => [k, callerValue(x, mark)]));
  if (v !== null && typeof v === 'object' && !(v instanceof PyObject)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, callerValue(x, mark)]));
  return v;
}

/** How a caller string enters the context: as caller text (content()), or as it is (for the plain render a test compares with). */
type Mark = (s: string) => unknown;
const asIs: Mark = (s) => s;

function argumentsMap(entries: Array<readonly [unknown, unknown]>, text: string, mark: Mark): TextMap {
  return mark === asIs ? new TextMap(entries, text) : new ContentTextMap(entries, content(text));
}

/**
 * Tool-call arguments, by render.ts's rule: a JSON object text or an object reaches the template
 * as a mapping that prints as its JSON text; anything else as it is. Values and the printed
 * text are caller text.
 */
function callerArguments(args: unknown, asGiven: boolean, mark: Mark): unknown {
  if (asGiven) return callerValue(args, mark);
  if (typeof args === 'string') {
    const parsed = loads(args);
    if (!(parsed instanceof Map)) return mark(args);
    return argumentsMap(
      [...parsed.entries()].map(([k, x]) => [k, callerValue(x, mark)] as const),
      args,
      mark,
    );
  }
  if (args !== null && typeof args === 'object' && !Array.isArray(args)) {
    return argumentsMap(
      Object.entries(args).map(([k, x]) => [k, callerValue(x, mark)] as const),
      pythonJsonDumps(args),
      mark,
    );
  }
  return callerValue(args, mark);
}

function callerMessage(m: ChatMessage, asGiven: boolean, mark: Mark): unknown {
  const out: Record<string, unknown> = { ...m };
  if (typeof m.content === 'string') out.content = mark(m.content);
  else if (Array.isArray(m.content))
    out.content = m.content.map((part) =>
      part !== null && typeof part === 'object' && typeof part.text === 'string' ? { ...part, text: mark(part.text) } : part,
    );
  if (typeof m.reasoning_content === 'string') out.reasoning_content = mark(m.reasoning_content);
  if (typeof m.reasoning === 'string') out.reasoning = mark(m.reasoning);
  if (Array.isArray(m.tool_calls))
    out.tool_calls = m.tool_calls.map((tc) =>
      tc !== null && typeof tc === 'object' && tc.function !== null && typeof tc.function === 'object'
        ? { ...tc, function: { ...tc.function, arguments: callerArguments(tc.function.arguments, asGiven, mark) } }
        : tc,
    );
  return out;
}

/**
 * The engine's variables for a render: transformers' context (special tokens first, then
 * messages/tools/..., then kwargs override everything), caller text marked when `provenance`
 * (without it: what a plain render of the same context gets, for the tests that compare).
 */
export function engineVariables(ctx: RenderContext, provenance: boolean): Record<string, unknown> {
  const asGiven = ctx.argumentsAsGiven === true;
  const mark = provenance ? content : asIs;
  return {
    ...ctx.specialTokens,
    messages: ctx.messages.map((m) => callerMessage(m, asGiven, mark)),
    tools: ctx.tools ?? null,
    documents: null,
    add_generation_prompt: ctx.addGenerationPrompt,
    ...ctx.kwargs,
  };
}

/**
 * Render with provenance: the same text as renderChat, and the [start, end) offsets of caller
 * text in it. E_CONTENT_UNSAFE when the template transforms caller text in a way whose
 * provenance cannot be followed.
 */
export function renderWithProvenance(source: string, ctx: RenderContext): { text: string; spans: number[] } {
  return engineFor(source).renderProvenance(engineVariables(ctx, true), ctx.now ? { now: ctx.now } : {});
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
