/**
 * Messages as inference engines receive them: vLLM's chat preprocessing, as a pure function
 * that runs after validation and before rendering (so it composes with any template engine
 * and with a guard on the caller's objects).
 *
 * Source followed (read, not copied): vllm-project/vllm `vllm/entrypoints/chat_utils.py` at
 * 001eadcf (`parse_chat_messages`, `_parse_chat_message_content`,
 * `_parse_chat_message_content_part(s)`, `_postprocess_messages`) and the content-format
 * detection that moved to `vllm/renderers/hf.py` (`_detect_content_format` and the
 * `_iter_nodes_assign_*` walk). Each rule, and where promptenc departs from it, is in
 * docs/semantics.md ("Messages as engines receive them").
 */
import { PromptencError, describeValue } from './errors.js';
import { parse } from './template/engine/parser.js';
import { DEFAULT_LIMITS } from './template/engine/runtime.js';
import type { ChatMessage, ContentPart, ToolCall } from './template/messages.js';

/** 'vllm' (default): vLLM's normalization. 'none': the messages as given, as transformers' apply_chat_template passes them. */
export type NormalizeMode = 'vllm' | 'none';

/** vLLM's chat-template content format: content joined into one string, or a list of typed parts. */
export type ContentFormat = 'string' | 'openai';

export const NORMALIZE_MODES: readonly NormalizeMode[] = ['vllm', 'none'];

/** Part types vLLM reads as text, and the key that holds the text. */
const TEXT_PART_KEYS: Readonly<Record<string, string>> = {
  text: 'text',
  input_text: 'text',
  output_text: 'text',
  refusal: 'refusal',
  thinking: 'thinking',
};

/** Part types that carry media: vLLM hands them to a multimodal processor, which a text-only tokenizer does not have. */
const MEDIA_PART_TYPES = new Set([
  'image_url',
  'input_image',
  'image_embeds',
  'image_pil',
  'audio_url',
  'input_audio',
  'audio_embeds',
  'video_url',
  'video_embeds',
  'prompt_embeds',
  'file',
]);

/** vLLM's separator between the text parts of one message, in the "string" format. */
const PART_SEPARATOR = '\n';

function invalid(path: string, message: string): never {
  throw new PromptencError('E_MESSAGES_INVALID', `${path}: ${message}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

type Part = string | { type: string; text?: string; name?: string };

/** One content part → its text (string format) or its typed dict (openai format); undefined: skipped, as vLLM skips a text part with no text. */
function normalizePart(part: unknown, path: string, wrap: boolean): Part | undefined {
  if (typeof part === 'string') return wrap ? { type: 'text', text: part } : part;
  if (!isObject(part)) invalid(path, `expected a content part object or a string, received ${describeValue(part)}`);
  const type = part.type;
  if (type === undefined || type === null) {
    const media = Object.keys(part).find((k) => MEDIA_PART_TYPES.has(k));
    if (media !== undefined) invalid(path, mediaMessage(media));
    invalid(path, 'missing "type" field in content part');
  }
  if (typeof type !== 'string') invalid(`${path}.type`, `expected a string, received ${describeValue(type)}`);
  const textKey = TEXT_PART_KEYS[type];
  if (textKey !== undefined) {
    const text = part[textKey];
    if ((text === undefined || text === null) && (type === 'text' || type === 'refusal')) return undefined;
    if (typeof text !== 'string') invalid(`${path}.${textKey}`, `expected a string, received ${describeValue(text)}`);
    return wrap ? { type: 'text', text } : text;
  }
  if (type === 'tool_reference') {
    const name = part.name;
    if (typeof name !== 'string') invalid(`${path}.name`, `expected a string, received ${describeValue(name)}`);
    return wrap ? { type: 'tool_reference', name } : name;
  }
  if (MEDIA_PART_TYPES.has(type)) invalid(path, mediaMessage(type));
  invalid(`${path}.type`, `unsupported content part type ${JSON.stringify(type)}; supported: ${[...Object.keys(TEXT_PART_KEYS), 'tool_reference'].join(', ')}`);
}

function mediaMessage(type: string): string {
  return `a ${type} part needs a multimodal model's processor; promptenc renders text only (vLLM rejects media for a text-only model too)`;
}

/**
 * vLLM's `_postprocess_messages`, for one tool call: JSON-string arguments are parsed
 * (json.loads), anything that is not a dict or list becomes {}. A string holding a JSON object
 * stays the string here: the renderer parses it with Python's number semantics and keeps the
 * text for printing (docs/semantics.md, tool-call arguments).
 */
function normalizeArguments(args: unknown): unknown {
  if (typeof args === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(args);
    } catch {
      return {};
    }
    return isObject(parsed) ? args : parsed;
  }
  if (Array.isArray(args) || isObject(args)) return args;
  return {};
}

/** The keys vLLM's ConversationMessage carries over, by role; anything else is dropped. */
function plainTextMessage(m: ChatMessage): boolean {
  if (typeof m.content !== 'string' || m.role === 'developer') return false;
  for (const k in m) {
    if (!Object.hasOwn(m, k)) continue;
    if (k !== 'role' && k !== 'content' && !(k === 'name' && typeof m.name === 'string')) return false;
  }
  return true;
}

/**
 * vLLM's parse_chat_messages for a text-only model: the conversation the chat template sees.
 * `messages` must have passed validateMessages. Returns new objects (the caller's are not
 * touched), except a message vLLM would rebuild identically ({role, content: string} in the
 * string format), which is returned as is so sessions allocate nothing for it.
 * Throws E_MESSAGES_INVALID naming the path of a media part or a malformed part.
 */
export function normalizeMessages(messages: readonly ChatMessage[], format: ContentFormat): ChatMessage[] {
  const wrap = format === 'openai';
  const out: ChatMessage[] = new Array(messages.length);
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (!wrap && plainTextMessage(m)) {
      out[i] = m;
      continue;
    }
    const raw = m.content;
    const parts: Part[] = [];
    if (typeof raw === 'string') parts.push(wrap ? { type: 'text', text: raw } : raw);
    else if (Array.isArray(raw)) {
      for (let k = 0; k < raw.length; k++) {
        const p = normalizePart(raw[k], `messages[${i}].content[${k}]`, wrap);
        if (p !== undefined) parts.push(p);
      }
    } else if (raw !== null && raw !== undefined) invalid(`messages[${i}].content`, `expected a string, an array or null, received ${describeValue(raw)}`);
    let content: ChatMessage['content'] = wrap ? (parts as ContentPart[]) : (parts as string[]).join(PART_SEPARATOR);
    const msg: ChatMessage = { role: m.role, content };
    if (m.role === 'assistant') {
      if (m.tool_calls !== undefined && m.tool_calls !== null) {
        const calls = normalizeToolCalls(m.tool_calls);
        if (calls !== undefined) msg.tool_calls = calls as ToolCall[];
      }
      // vLLM reads `reasoning` and writes it under both names. It does not read
      // `reasoning_content` (vllm-project/vllm#38488, against its own docs): promptenc takes it
      // when `reasoning` is absent, which is what the docs promise and clients send.
      const reasoning = m.reasoning ?? m.reasoning_content;
      if (reasoning !== undefined && reasoning !== null) {
        msg.reasoning = reasoning;
        msg.reasoning_content = reasoning as string;
      }
    } else if (m.role === 'tool') {
      if (Object.hasOwn(m, 'tool_call_id')) msg.tool_call_id = m.tool_call_id;
      // Tool results sent as text parts become one string even for "openai" templates.
      if (Array.isArray(content) && content.every((p) => (p as { type?: unknown }).type === 'text')) {
        content = (content as Array<{ text: string }>).map((p) => p.text).join(PART_SEPARATOR);
        msg.content = content;
      }
    }
    if (typeof m.name === 'string') msg.name = m.name;
    if (typeof m.task === 'string') msg.task = m.task;
    if (m.role === 'developer') msg.tools = m.tools ?? null;
    out[i] = msg;
  }
  return out;
}

function normalizeToolCalls(calls: unknown): unknown {
  if (!Array.isArray(calls)) return calls;
  // An empty list is dropped, which keeps templates on the plain assistant path.
  if (calls.length === 0) return undefined;
  return calls.map((tc: ToolCall) => {
    const fn = tc.function;
    return { ...tc, function: { ...fn, arguments: normalizeArguments(fn.arguments) } };
  });
}

// ---- content format detection (vLLM's _detect_content_format) ----

/** A node of the engine's syntax tree (engine/ast.ts): an object with a string `t`. */
type Node = { t: string; [k: string]: unknown };

function isNode(v: unknown): v is Node {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as Node).t === 'string';
}

/** Every node of the tree in document order (Jinja2's find_all, which also descends into macros and blocks). */
function* allNodes(node: unknown): Generator<Node> {
  if (Array.isArray(node)) {
    for (const n of node) yield* allNodes(n);
    return;
  }
  if (!isNode(node)) return;
  yield node;
  for (const k in node) if (k !== 't') yield* allNodes(node[k]);
}

const isVar = (n: unknown, name: string): boolean => isNode(n) && n.t === 'name' && n.name === name;

/** `name.key` or `name['key']` (vLLM's _is_attr_access: Getattr, or Getitem with a constant). */
function isAttr(n: Node, name: string, key: string): boolean {
  if (n.t === 'getattr') return isVar(n.obj, name) && n.name === key;
  if (n.t === 'getitem') return isVar(n.obj, name) && isNode(n.key) && n.key.t === 'const' && n.key.v === key;
  return false;
}

/** `name`, `name.key`, `name['key']`, through filters, tests and slices (vLLM's _is_var_or_elems_access). */
function isVarOrElems(n: unknown, name: string, key?: string): boolean {
  if (!isNode(n)) return false;
  if (n.t === 'filter' || n.t === 'test' || n.t === 'slice') return isVarOrElems(n.t === 'slice' ? n.obj : n.arg, name, key);
  return key !== undefined ? isAttr(n, name, key) : isVar(n, name);
}

class Undetectable extends Error {}

function loopTarget(f: Node): string {
  const v = f.target as Node;
  // vLLM asserts a plain name here; the assertion makes the detection fall back to "string".
  if (v.t !== 'name') throw new Undetectable();
  return v.name as string;
}

function detectOnTree(program: unknown): ContentFormat {
  const nodes = [...allNodes(program)];
  // Jinja2's Assign (`{% set x = ... %}`); a set block is an AssignBlock, which vLLM does not visit.
  const sets = nodes.filter((n) => n.t === 'set');
  const loops = nodes.filter((n) => n.t === 'for');
  // Names that hold `messages` or a slice / filter of it.
  const messageVars = ['messages'];
  for (let q = 0; q < messageVars.length; q++) {
    const name = messageVars[q]!;
    for (const s of sets) {
      if (!isVarOrElems(s.e, name)) continue;
      const target = s.target as Node;
      if (target.t !== 'name') throw new Undetectable();
      // vLLM's BFS re-queues a name it has seen (and loops forever on `a = b; b = a`): a set of names is the same answer.
      if (!messageVars.includes(target.name as string)) messageVars.push(target.name as string);
    }
  }
  // Loop variables over those: `{% for message in messages %}`.
  const messageItems: string[] = [];
  for (const f of loops) if (messageVars.some((v) => isVarOrElems(f.iter, v))) messageItems.push(loopTarget(f));
  // A loop over message.content (or, since vLLM's renderer rewrite, over a variable named `content`).
  for (const f of loops) {
    const it = f.iter;
    if (messageItems.some((v) => isVarOrElems(it, v, 'content'))) {
      loopTarget(f);
      return 'openai';
    }
    if (isVar(it, 'content')) {
      loopTarget(f);
      return 'openai';
    }
  }
  return 'string';
}

const detected = new Map<string, ContentFormat>();

/**
 * vLLM's content-format detection: "openai" when the template loops over a message's content
 * (it expects a list of parts), else "string". A template that does not parse, or whose walk
 * vLLM's assertions would reject, is "string" (vLLM's default). Cached per source (bounded).
 */
export function detectContentFormat(source: string): ContentFormat {
  let f = detected.get(source);
  if (f !== undefined) return f;
  try {
    f = detectOnTree(parse(source, DEFAULT_LIMITS.maxDepth));
  } catch {
    f = 'string';
  }
  if (detected.size >= 64) detected.delete(detected.keys().next().value as string);
  detected.set(source, f);
  return f;
}

// ---- template errors, attributed to a message ----

/**
 * Name the message a template failed on: the shortest prefix of the conversation that fails
 * to render the same way (binary search, so O(log n) renders, only on the error path). The
 * message is `messages[i] (role): …`, with the fields of that message that are null or
 * absent where templates usually read them. When no shorter prefix fails the same way, the
 * last message is named.
 */
export function attributeTemplateError(err: PromptencError, messages: readonly ChatMessage[], renderPrefix: (n: number) => void): PromptencError {
  if (err.code !== 'E_TEMPLATE' || messages.length === 0) return err;
  const fails = (n: number): boolean => {
    try {
      renderPrefix(n);
      return false;
    } catch (e) {
      // The same failure: a prefix that fails otherwise (a template that wants the last turn to be the user's) says nothing.
      return e instanceof PromptencError && e.code === 'E_TEMPLATE' && e.message === err.message;
    }
  };
  // Invariant: the prefix of length hi fails; lo - 1 is a length that renders (0 always does).
  let lo = 1;
  let hi = messages.length;
  if (hi > 1 && !fails(hi - 1)) lo = hi;
  else {
    if (hi > 1) hi--;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (fails(mid)) hi = mid;
      else lo = mid + 1;
    }
  }
  const i = lo - 1;
  const m = messages[i]!;
  const nullFields = ['content', 'tool_calls', 'reasoning_content', 'tool_call_id'].filter((k) => Object.hasOwn(m, k) && m[k] === null);
  const hint = nullFields.length > 0 ? ` (${nullFields.map((k) => `${k} is null`).join(', ')})` : '';
  const role = typeof m.role === 'string' ? m.role : String(m.role);
  return new PromptencError('E_TEMPLATE', `messages[${i}] (${role})${hint}: ${err.message}`, { cause: err });
}
