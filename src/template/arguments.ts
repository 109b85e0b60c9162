import { loads } from './engine/json.js';
import { intNum, intStr, TextMap } from './engine/values.js';
import { pythonFloatRepr, pythonJsonString } from './pyjson.js';
import type { ChatMessage, ToolDefinition } from './messages.js';

/** Marks a piece of caller text with its owner (used by token accounting); identity when rendering normally. */
export type FieldWrapper = (text: string, owner: number) => string;

/**
 * Python's `json.dumps(value, ensure_ascii=False)`: `", "` and `": "` separators.
 * Used when an argument object has to be shown as text.
 */
export function pythonJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
  if (typeof value === 'object') {
    const parts = Object.entries(value as Record<string, unknown>).map(([k, v]) => `${pythonJsonString(k, false)}: ${pythonJsonDumps(v)}`);
    return `{${parts.join(', ')}}`;
  }
  // As the engine reads a number (an integral one is an int): Python prints a float with repr,
  // 1e-05 where JS writes 0.00001.
  if (typeof value === 'number') return intNum(value) ? intStr(value) : pythonFloatRepr(value);
  if (typeof value === 'string') return pythonJsonString(value, false);
  return JSON.stringify(value);
}

/**
 * A plain copy of a caller's value as the template sees it: arrays element by element (holes
 * stay holes), any other object by its own enumerable string keys in Object.keys order, whatever
 * its prototype, with keys whose value is undefined left out (transformers receives JSON, which
 * has no undefined: such a key is absent); a Map as a Map. Everything else is kept as is (strings
 * are shared, functions stay functions). The engine compares the values an iteration read by
 * identity first, so a caller's object edited in place between renders must not be what it
 * reads: every render sees copies (message-cache.ts keeps one per unchanged message).
 */
export function plainCopy(v: unknown): unknown {
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) if (i in v) out[i] = plainCopy(v[i]);
    return out;
  }
  if (v instanceof Map) {
    const out = new Map<unknown, unknown>();
    for (const [k, x] of v) out.set(k, plainCopy(x));
    return out;
  }
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined) out[k] = plainCopy(x);
    }
    return out;
  }
  return v;
}

function wrapDeep(value: unknown, owner: number, wrap: FieldWrapper): unknown {
  if (typeof value === 'string') return wrap(value, owner);
  if (Array.isArray(value)) return value.map((v) => wrapDeep(v, owner, wrap));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [wrap(k, owner), wrapDeep(v, owner, wrap)]));
  }
  return value;
}

function wrapContent(content: ChatMessage['content'], owner: number, wrap: FieldWrapper): ChatMessage['content'] {
  if (typeof content === 'string') return wrap(content, owner);
  if (Array.isArray(content)) return content.map((part) => (typeof part?.text === 'string' ? { ...part, text: wrap(part.text, owner) } : part));
  return content;
}

/**
 * Tool-call arguments, the rule (vLLM's, plus one extension):
 * - A JSON string that parses to an object, or an object, reaches the template as a mapping,
 *   so `arguments.items()` works (GLM, Qwen tool templates), as vLLM does. JSON text is read
 *   as Python's json.loads reads it (engine/json.ts loads): `1.0` stays a float, big integers
 *   stay exact, keys keep their order.
 * - When such a mapping is printed (`{{ arguments }}`) or joined to a string with `+`
 *   (DeepSeek templates), it becomes the original JSON string, or for an object
 *   `json.dumps(obj, ensure_ascii=False)` (a TextMap). Python would raise there; printing the
 *   text the client sent is what those templates were written for.
 * - Any other string (not JSON, or JSON that is not an object) stays a string.
 * `| tojson` re-serialises the mapping, as it would in transformers with a dict.
 */
function argumentsValue(args: unknown, owner: number, wrap: FieldWrapper | undefined): unknown {
  if (typeof args === 'string') {
    const shown = wrap ? wrap(args, owner) : args;
    const parsed = loads(args, (entries) => new TextMap(entries, shown), wrap ? (s) => wrap(s, owner) : undefined);
    return parsed instanceof TextMap ? parsed : shown;
  }
  if (args !== null && typeof args === 'object' && !Array.isArray(args)) {
    const text = pythonJsonDumps(args);
    const value = wrap ? (wrapDeep(args, owner, wrap) as Record<string, unknown>) : (args as Record<string, unknown>);
    return new TextMap(Object.entries(value), wrap ? wrap(text, owner) : text);
  }
  return args;
}

/**
 * What the template sees of message `m` (a plainCopy, which this does not modify): tool-call
 * arguments as the rule above says, unless `argumentsAsGiven` (normalize 'none': exactly as
 * given, as transformers passes them). With `wrap`, every text the caller wrote (content,
 * reasoning, tool-call names and arguments) is wrapped so accounting can find what it rendered to.
 */
export function templateMessage(m: Record<string, unknown>, owner: number, wrap: FieldWrapper | undefined, argumentsAsGiven: boolean): unknown {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return m;
  let msg = m;
  if (wrap) {
    msg = { ...m };
    if (Object.hasOwn(m, 'content')) msg.content = wrapContent(m.content as ChatMessage['content'], owner, wrap);
    if (typeof m.reasoning_content === 'string') msg.reasoning_content = wrap(m.reasoning_content, owner);
    if (typeof m.reasoning === 'string') msg.reasoning = wrap(m.reasoning, owner);
  }
  const calls = m.tool_calls;
  if (!Array.isArray(calls) || calls.length === 0) return msg;
  if (argumentsAsGiven && !wrap) return msg;
  const toolCalls = calls.map((tc: unknown) => {
    const fn = (tc as { function?: unknown } | null)?.function as Record<string, unknown> | undefined;
    if (fn === null || typeof fn !== 'object') return tc;
    const name = wrap && typeof fn.name === 'string' ? wrap(fn.name, owner) : fn.name;
    const raw = fn.arguments;
    const args = argumentsAsGiven ? (wrap && typeof raw === 'string' ? wrap(raw, owner) : raw) : argumentsValue(raw, owner, wrap);
    const f: Record<string, unknown> = { ...fn, name };
    if (Object.hasOwn(fn, 'arguments')) f.arguments = args;
    return { ...(tc as object), function: f };
  });
  return { ...msg, tool_calls: toolCalls };
}

/** Tools with their names and descriptions wrapped; schema keywords stay intact so templates can inspect them. */
export function templateTools(tools: readonly ToolDefinition[] | undefined, owner: number, wrap?: FieldWrapper): unknown {
  if (!tools || !wrap) return tools ?? null;
  const wrapDescriptions = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(wrapDescriptions);
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => [k, (k === 'description' || k === 'name') && typeof x === 'string' ? wrap(x, owner) : wrapDescriptions(x)]),
    );
  };
  return tools.map(wrapDescriptions);
}
