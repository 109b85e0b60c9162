import type { Environment, Interpreter, parse } from '@huggingface/jinja';
import { jinja } from './jinja.js';
import { PromptencError } from '../errors.js';
import type { ChatMessage, ToolDefinition } from './messages.js';
import { makeStringValue, parseArgumentsToRuntime, rt, toPythonJson, type PyJsonOptions } from './pyjson.js';
import { certifiedCommonPrefix, createMemoInterpreter, incrementalRenderingSupported, markMappingList, tagFunction, type RenderMemo } from './incremental.js';

type Program = ReturnType<typeof parse>;

/** Raised by a template's own `raise_exception(...)`; kept apart so the message is the template's. */
class TemplateRaised extends Error {}

function raiseException(message: unknown): never {
  throw new TemplateRaised(String(message));
}

/**
 * Python's `json.dumps(value, ensure_ascii=False)`: `", "` and `": "` separators.
 * Used when an argument object has to be shown as text.
 */
export function pythonJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
  if (typeof value === 'object') {
    const parts = Object.entries(value as Record<string, unknown>).map(([k, v]) => `${JSON.stringify(k)}: ${pythonJsonDumps(v)}`);
    return `{${parts.join(', ')}}`;
  }
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) return value.toString();
  return JSON.stringify(value);
}

/** jinja2/sandbox.py MAX_RANGE: the sandbox transformers renders in refuses longer ranges. */
const MAX_RANGE = 100_000;

/**
 * Python `range` semantics; @huggingface/jinja does not export its own globals,
 * so the environment is set up here with the same set transformers provides. As Jinja2's
 * sandbox (`safe_range`), a range of more than MAX_RANGE items is an error: without it
 * `range(10**9)` grows one array until V8 aborts the process, which no limit can catch.
 */
function range(start: number, stop?: number, step = 1): number[] {
  if (stop === undefined) [start, stop] = [0, start];
  if (step === 0) throw new Error('range() arg 3 must not be zero');
  const length = Math.max(0, Math.ceil((stop - start) / step));
  if (length > MAX_RANGE) throw new Error(`Range too big. The sandbox blocks ranges larger than MAX_RANGE (${MAX_RANGE}).`);
  const out: number[] = [];
  if (step > 0) for (let i = start; i < stop; i += step) out.push(i);
  else for (let i = start; i > stop; i += step) out.push(i);
  return out;
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** The strftime subset that chat templates use (Llama 3.x: "%d %b %Y"). Locale is C, as in Python. */
export function strftime(date: Date, format: string): string {
  return format.replace(/%[YmdbBaAHMSjy%]/g, (t) => {
    switch (t) {
      case '%Y':
        return String(date.getFullYear());
      case '%y':
        return pad2(date.getFullYear() % 100);
      case '%m':
        return pad2(date.getMonth() + 1);
      case '%d':
        return pad2(date.getDate());
      case '%b':
        return MONTHS[date.getMonth()]!.slice(0, 3);
      case '%B':
        return MONTHS[date.getMonth()]!;
      case '%a':
        return DAYS[date.getDay()]!.slice(0, 3);
      case '%A':
        return DAYS[date.getDay()]!;
      case '%H':
        return pad2(date.getHours());
      case '%M':
        return pad2(date.getMinutes());
      case '%S':
        return pad2(date.getSeconds());
      case '%j': {
        const start = new Date(date.getFullYear(), 0, 1);
        return String(Math.floor((date.getTime() - start.getTime()) / 86_400_000) + 1).padStart(3, '0');
      }
      default:
        return '%';
    }
  });
}

/**
 * Tool-call arguments, the rule (vLLM's, plus one extension):
 * - A JSON string that parses to an object, or an object, reaches the template as a
 *   mapping, so `arguments.items()` works (GLM, Qwen tool templates), as vLLM does.
 * - When such a mapping is printed (`{{ arguments }}`) or joined to a string with `+`
 *   (DeepSeek templates), it becomes the original JSON string, or for an object
 *   `json.dumps(obj, ensure_ascii=False)`. Python would raise there; printing the
 *   text the client sent is what those templates were written for.
 * - Any other string (not JSON, or JSON that is not an object) stays a string.
 * `| tojson` re-serialises the mapping, as it would in transformers with a dict.
 */
interface ArgumentsText {
  text: string;
  parsed: Record<string, unknown>;
}
/** How a call's arguments reached us: JSON text (re-parsed with Python semantics) or an object. */
interface ArgumentsSource {
  text: string;
  json: boolean;
}

function argumentsOf(args: unknown): ArgumentsText | undefined {
  if (typeof args === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(args);
    } catch {
      return undefined;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
    return { text: args, parsed: parsed as Record<string, unknown> };
  }
  if (args !== null && typeof args === 'object' && !Array.isArray(args)) {
    return { text: pythonJsonDumps(args), parsed: args as Record<string, unknown> };
  }
  return undefined;
}

class MapWithText<K, V> extends Map<K, V> {
  constructor(
    entries: Iterable<[K, V]>,
    private readonly text: string,
  ) {
    super(entries);
  }
  override toString(): string {
    return this.text;
  }
}

type RuntimeLike = { value: unknown; toString(): string };

function runtimeGet(container: RuntimeLike | undefined, key: string): RuntimeLike | undefined {
  const v = container?.value;
  return v instanceof Map ? (v.get(key) as RuntimeLike | undefined) : undefined;
}

/**
 * Give each converted tool-call arguments mapping the text it prints as (see the rule
 * above). Arguments sent as JSON text are re-parsed with Python's semantics (floats stay
 * floats, big ints stay exact, keys keep their order), as vLLM's json.loads does.
 */
function attachArgumentTexts(messagesValue: RuntimeLike, texts: Map<string, ArgumentsSource>, wrap?: FieldWrapper): void {
  const list = messagesValue.value as RuntimeLike[];
  list.forEach((message, i) => {
    const calls = runtimeGet(message, 'tool_calls');
    if (!calls || !Array.isArray(calls.value)) return;
    (calls.value as RuntimeLike[]).forEach((call, j) => {
      const src = texts.get(`${i}.${j}`);
      if (src === undefined) return;
      const fn = runtimeGet(call, 'function');
      let args = runtimeGet(fn, 'arguments');
      const shown = wrap ? wrap(src.text, i) : src.text;
      const makeMap = (entries: Array<[string, unknown]>) => new MapWithText(entries, shown);
      if (src.json) {
        const parsed = parseArgumentsToRuntime(src.text, makeMap as never, wrap ? (s) => wrap(s, i) : undefined);
        if (parsed && fn && fn.value instanceof Map) {
          fn.value.set('arguments', parsed);
          args = parsed;
        }
      }
      if (!args || !(args.value instanceof Map)) return;
      if (!(args.value instanceof MapWithText)) args.value = makeMap([...(args.value as Map<string, unknown>).entries()]);
      Object.defineProperty(args, 'toString', { value: () => shown });
    });
  });
}

/** Marks a piece of caller text with its owner (used by token accounting); identity when rendering normally. */
export type FieldWrapper = (text: string, owner: number) => string;

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
  if (Array.isArray(content)) return content.map((part) => (typeof part.text === 'string' ? { ...part, text: wrap(part.text, owner) } : part));
  return content;
}

/**
 * Copy messages so that the template sees arguments as mappings; the caller's objects
 * are not touched. With `wrap`, every text the caller wrote (content, reasoning, tool-call
 * names and arguments) is wrapped so accounting can find what it rendered to.
 */
function prepareMessages(
  messages: readonly ChatMessage[],
  wrap?: FieldWrapper,
  argumentsAsGiven = false,
): { messages: unknown[]; texts: Map<string, ArgumentsSource> } {
  const texts = new Map<string, ArgumentsSource>();
  const out = messages.map((m, i) => {
    let msg: ChatMessage = m;
    if (wrap) {
      msg = { ...m, content: wrapContent(m.content, i, wrap) };
      if (typeof m.reasoning_content === 'string') msg.reasoning_content = wrap(m.reasoning_content, i);
      if (typeof m.reasoning === 'string') msg.reasoning = wrap(m.reasoning, i);
    }
    if (!m.tool_calls || m.tool_calls.length === 0) return msg;
    const toolCalls = m.tool_calls.map((tc, j) => {
      const name = wrap ? wrap(tc.function.name, i) : tc.function.name;
      const a = argumentsAsGiven ? undefined : argumentsOf(tc.function.arguments);
      if (!a) {
        const raw = tc.function.arguments;
        return { ...tc, function: { ...tc.function, name, arguments: wrap && typeof raw === 'string' ? wrap(raw, i) : raw } };
      }
      const json = typeof tc.function.arguments === 'string';
      texts.set(`${i}.${j}`, { text: a.text, json });
      const parsed = wrap && !json ? (wrapDeep(a.parsed, i, wrap) as Record<string, unknown>) : a.parsed;
      return { ...tc, function: { ...tc.function, name, arguments: parsed } };
    });
    return { ...msg, tool_calls: toolCalls };
  });
  return { messages: out, texts };
}

/**
 * The messages as runtime values, reusing the previous render's value of message i when the
 * caller's message i is structurally the same as then (a snapshot is kept: callers may edit a
 * message in place). Runtime values are never mutated by rendering (only namespaces are), so
 * sharing them between renders is safe; conversion is most of an incremental render otherwise.
 */
function cachedMessages(messages: readonly ChatMessage[], memo: RenderMemo, argumentsAsGiven: boolean): RuntimeLike {
  const cache = memo.messages as Array<{ snap: MessageSnapshot; value: RuntimeLike }> & { argumentsAsGiven?: boolean };
  // Values converted under the other arguments rule (normalize 'none' vs 'vllm') are not reused.
  if ((cache.argumentsAsGiven === true) !== argumentsAsGiven) {
    cache.length = 0;
    cache.argumentsAsGiven = argumentsAsGiven;
  }
  const out: RuntimeLike[] = new Array(messages.length);
  const miss: number[] = [];
  for (let i = 0; i < messages.length; i++) {
    const c = cache[i];
    if (c !== undefined && sameMessage(messages[i]!, c.snap)) out[i] = c.value;
    else miss.push(i);
  }
  if (miss.length > 0) {
    const { messages: prepared, texts } = prepareMessages(
      miss.map((i) => messages[i]!),
      undefined,
      argumentsAsGiven,
    );
    const converted = new (jinja().Environment)().set('m', prepared) as unknown as RuntimeLike;
    attachArgumentTexts(converted, texts);
    miss.forEach((i, k) => {
      out[i] = (converted.value as RuntimeLike[])[k]!;
      cache[i] = { snap: messageSnapshot(messages[i]!), value: out[i]! };
    });
  }
  cache.length = messages.length;
  markMappingList(out as never);
  return new (rt().Array)(out) as unknown as RuntimeLike;
}

/**
 * Every slot holds an object that is not an array, so it converts to a mapping (validateMessages
 * ensures it; a template given anything else renders without the cache; see markMappingList).
 */
function allObjects(list: readonly unknown[]): boolean {
  for (let i = 0; i < list.length; i++) if (list[i] === null || typeof list[i] !== 'object' || Array.isArray(list[i])) return false;
  return true;
}

/**
 * The fields prepareMessages reads of a caller's message by property access, which need not be
 * enumerable or own (its own enumerable entries, spread and converted, are MessageSnapshot.own).
 * sameMessage compares the same reads against this, without building them.
 */
function messageReads(m: ChatMessage): unknown[] {
  const calls = m.tool_calls;
  return [
    m.content,
    m.reasoning_content,
    calls,
    Array.isArray(calls) ? calls.map((tc) => [tc, tc?.function, tc?.function?.name, tc?.function?.arguments]) : undefined,
  ];
}

/** What sameMessage compares a caller's message with. */
interface MessageSnapshot {
  /** snapshotSource(m): its own enumerable entries, deep (what a spread or a conversion reads). */
  own: unknown;
  /**
   * snapshotSource(messageReads(m)), or undefined when `own` already covers every read but the
   * absent fields (see coveredReads): the usual message, whose check is then one walk.
   */
  reads: unknown[] | undefined;
  /** ABSENT_* bits: fields that read as undefined, and must still. */
  absent: number;
}

const ABSENT_CONTENT = 1;
const ABSENT_REASONING = 2;
const ABSENT_CALLS = 4;
const FIELDS: ReadonlyArray<readonly [string, number]> = [
  ['content', ABSENT_CONTENT],
  ['reasoning_content', ABSENT_REASONING],
  ['tool_calls', ABSENT_CALLS],
];

function messageSnapshot(m: ChatMessage): MessageSnapshot {
  const absent = coveredReads(m);
  return { own: snapshotSource(m), reads: absent === undefined ? (snapshotSource(messageReads(m)) as unknown[]) : undefined, absent: absent ?? 0 };
}

function plainObject(o: unknown): o is Record<string, unknown> {
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return false;
  const p = Object.getPrototypeOf(o) as unknown;
  return p === Object.prototype || p === null;
}

/** An own, enumerable data property: a walk over the own enumerable entries reads it, and reads what property access reads. */
function ownData(o: object, k: string): boolean {
  const d = Object.getOwnPropertyDescriptor(o, k);
  return d !== undefined && d.enumerable === true && 'value' in d;
}

/**
 * The ABSENT_* bits of m when the walk over its own enumerable entries (MessageSnapshot.own)
 * sees everything messageReads reads: m is a plain object whose content, reasoning_content and
 * tool_calls are own enumerable data properties or absent (not own, not inherited), and every
 * tool call and its function are plain objects whose function, name and arguments are own
 * enumerable data properties. A later change to such a property shows in the walk (a new value,
 * or a key that stopped being own and enumerable); an absent field that starts to read as
 * something (defined as not enumerable, or inherited) is what the bits check. Else undefined.
 */
function coveredReads(m: ChatMessage): number | undefined {
  if (!plainObject(m)) return undefined;
  let absent = 0;
  for (const [f, bit] of FIELDS) {
    if (ownData(m, f)) continue;
    if (f in m) return undefined;
    absent |= bit;
  }
  const calls = m.tool_calls as unknown;
  if (calls === undefined || calls === null) return absent;
  if (!Array.isArray(calls) || Object.getPrototypeOf(calls) !== Array.prototype) return undefined;
  for (let j = 0; j < calls.length; j++) {
    const tc = calls[j] as unknown;
    if (!plainObject(tc) || !ownData(tc, 'function')) return undefined;
    const fn = tc.function;
    if (!plainObject(fn) || !ownData(fn, 'name') || !ownData(fn, 'arguments')) return undefined;
  }
  return absent;
}

/** m converts to the same runtime value as the message `snap` was taken of, allocating nothing (it runs per message per render). */
function sameMessage(m: ChatMessage, snap: MessageSnapshot): boolean {
  if (!sameSource(m, snap.own)) return false;
  const s = snap.reads;
  if (s === undefined) {
    const a = snap.absent;
    return !(
      ((a & ABSENT_CONTENT) !== 0 && m.content !== undefined) ||
      ((a & ABSENT_REASONING) !== 0 && m.reasoning_content !== undefined) ||
      ((a & ABSENT_CALLS) !== 0 && m.tool_calls !== undefined)
    );
  }
  const calls = m.tool_calls;
  if (!sameSource(m.content, s[0]) || !sameSource(m.reasoning_content, s[1]) || !sameSource(calls, s[2])) return false;
  if (!Array.isArray(calls)) return s[3] === undefined;
  const details = s[3];
  if (!Array.isArray(details) || details.length !== calls.length) return false;
  for (let i = 0; i < calls.length; i++) {
    const tc = calls[i];
    const d = details[i] as unknown[];
    // snapshotSource kept each detail as a 4-element array (map fills every slot: no holes).
    if (!sameSource(tc, d[0]) || !sameSource(tc?.function, d[1]) || !sameSource(tc?.function?.name, d[2]) || !sameSource(tc?.function?.arguments, d[3]))
      return false;
  }
  return true;
}

/** An object's own enumerable entries, as convertToRuntimeValues reads them (Object.entries). */
class EntriesSnapshot {
  constructor(
    readonly keys: string[],
    readonly values: unknown[],
  ) {}
}

/**
 * A structural copy of a caller's value, mirroring how the library converts it: arrays
 * element by element, any other object by its own enumerable entries (whatever its
 * prototype), anything else kept as is.
 */
function snapshotSource(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(snapshotSource);
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v);
    return new EntriesSnapshot(
      keys,
      keys.map((k) => snapshotSource((v as Record<string, unknown>)[k])),
    );
  }
  return v;
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * v converts to the same runtime value as the value snapshotSource copied (keys in order, -0
 * is not 0). Objects are walked with for-in and an own-property test, which visits the own
 * enumerable string keys in Object.keys order (for-in skips names shadowed by a non-enumerable
 * own property) without allocating: this runs over every message on every render.
 */
function sameSource(v: unknown, snap: unknown): boolean {
  if (snap instanceof EntriesSnapshot) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
    const { keys, values } = snap;
    let i = 0;
    for (const k in v) {
      if (!hasOwn.call(v, k)) continue;
      if (i >= keys.length || k !== keys[i] || !sameSource((v as Record<string, unknown>)[k], values[i])) return false;
      i++;
    }
    return i === keys.length;
  }
  if (Array.isArray(snap)) {
    if (!Array.isArray(v) || v.length !== snap.length) return false;
    // A hole converts differently from an explicit undefined (map skips holes).
    for (let i = 0; i < v.length; i++) if (i in v !== i in snap || !sameSource(v[i], snap[i])) return false;
    return true;
  }
  // A function may answer differently each call (and its converted value would be shared): never the same.
  if (typeof v === 'function') return false;
  return Object.is(v, snap);
}

/** Tools with their names and descriptions wrapped; schema keywords stay intact so templates can inspect them. */
function prepareTools(tools: readonly ToolDefinition[] | undefined, owner: number, wrap?: FieldWrapper): unknown {
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

type FilterNode = { type: string; value?: string; callee?: { type: string; value: string }; args?: unknown[] };
type InterpreterInternals = {
  applyFilter(operand: unknown, filter: FilterNode, env: Environment): unknown;
  evaluateArguments(args: unknown[], env: Environment): [unknown[], Map<string, { type: string; value: unknown }>];
};

/**
 * Route `| tojson` to Python's json.dumps (see pyjson.ts). The interpreter's filter
 * method is internal to @huggingface/jinja, so this patches one interpreter instance.
 */
function pythonToJsonFilter(interpreter: Interpreter): void {
  const it = interpreter as unknown as InterpreterInternals;
  const base = it.applyFilter.bind(it);
  it.applyFilter = (operand, filter, env) => {
    const isCall = filter.type === 'CallExpression' && filter.callee?.type === 'Identifier' && filter.callee.value === 'tojson';
    if (!(filter.type === 'Identifier' && filter.value === 'tojson') && !isCall) return base(operand, filter, env);
    const opts: PyJsonOptions = {};
    if (isCall) {
      const [positional, kwargs] = it.evaluateArguments(filter.args ?? [], env);
      const indent = kwargs.get('indent') ?? (positional[0] as { type: string; value: unknown } | undefined);
      if (indent && indent.type !== 'NullValue') {
        if (indent.type !== 'IntegerValue') throw new Error('If set, indent must be a number');
        opts.indent = indent.value as number;
      }
      const bool = (name: string) => {
        const v = kwargs.get(name);
        if (v === undefined) return undefined;
        if (v.type !== 'BooleanValue') throw new Error(`If set, ${name} must be a boolean`);
        return v.value as boolean;
      };
      opts.ensureAscii = bool('ensure_ascii');
      opts.sortKeys = bool('sort_keys');
      const seps = kwargs.get('separators');
      if (seps && seps.type !== 'NullValue') {
        const pair = seps.value as Array<{ type: string; value: unknown }>;
        if (!Array.isArray(pair) || pair.length !== 2 || pair.some((p) => p.type !== 'StringValue'))
          throw new Error('separators must be a tuple of two strings');
        opts.separators = [pair[0]!.value as string, pair[1]!.value as string];
      }
    }
    return makeStringValue(toPythonJson(operand as never, opts));
  };
}

export interface RenderContext {
  messages: readonly ChatMessage[];
  tools?: readonly ToolDefinition[];
  addGenerationPrompt: boolean;
  /** Special-token strings the template may use: bos_token, eos_token, pad_token, unk_token, ... */
  specialTokens: Record<string, string | string[]>;
  kwargs?: Record<string, unknown>;
  /** Clock for strftime_now; tests pin it. */
  now?: () => Date;
  /** Accounting only: wrap caller text; tools get owner `messages.length`. */
  wrap?: FieldWrapper;
  /** normalize 'none': tool-call arguments reach the template exactly as given (a JSON string stays a string), as in transformers. */
  argumentsAsGiven?: boolean;
}

/** A chat template parsed once and rendered many times. */
export class ChatTemplate {
  private readonly program: Program;
  /** strftime_now reads the clock, an input incremental rendering cannot compare: such templates render in full. */
  private readonly usesClock: boolean;

  constructor(readonly source: string) {
    try {
      const { parse, tokenize } = jinja();
      this.program = parse(tokenize(source, { lstrip_blocks: true, trim_blocks: true }));
      this.usesClock = source.includes('strftime_now');
    } catch (err) {
      throw new PromptencError('E_TEMPLATE', `chat template does not parse: ${(err as Error).message}`, { cause: err });
    }
  }

  render(ctx: RenderContext): string {
    return this.evaluate(ctx, (env) => new (jinja().Interpreter)(env)).text;
  }

  /**
   * The same text as render(), reusing what the previous render with `memo` computed (see
   * incremental.ts). `common` is a prefix length the text shares with that previous render's
   * text (a lower bound, found from the output pieces without reading the text), or -1.
   */
  renderIncremental(ctx: RenderContext, memo: RenderMemo): { text: string; pieces: string[] | undefined; common: number } {
    // A render inside this one (caller code in the template calling the same session) renders in
    // full and leaves the memo alone: the outer render has taken over its records' arrays.
    if (memo.rendering) return { text: this.render(ctx), pieces: undefined, common: -1 };
    if (this.usesClock || !incrementalRenderingSupported()) {
      memo.reset();
      return { text: this.render(ctx), pieces: undefined, common: -1 };
    }
    let pieces: string[] = [];
    let shared = { pieces: 0, length: 0 };
    let text: string;
    memo.rendering = true;
    try {
      text = this.evaluate(
        ctx,
        (env) => {
          const it = createMemoInterpreter(env, memo);
          pieces = it.pieces;
          shared = it.shared;
          return it;
        },
        memo,
      ).text;
    } catch (err) {
      memo.reset();
      throw err;
    } finally {
      memo.rendering = false;
    }
    const old = memo.pieces;
    memo.pieces = pieces;
    return { text, pieces, common: old ? certifiedCommonPrefix(old, pieces, shared) : -1 };
  }

  private evaluate(ctx: RenderContext, makeInterpreter: (env: Environment) => Interpreter | { run(p: unknown): unknown }, memo?: RenderMemo): { text: string } {
    const env = new (jinja().Environment)();
    const now = ctx.now ?? (() => new Date());
    const globals: Record<string, unknown> = {
      false: false,
      true: true,
      none: null,
      False: false,
      True: true,
      None: null,
      range,
      raise_exception: raiseException,
      strftime_now: (format: unknown) => strftime(now(), String(format)),
    };
    // Incremental renders convert only the messages that changed; not with accounting's
    // wrapper, nor when kwargs replace `messages`.
    const useCache = memo !== undefined && ctx.wrap === undefined && !(ctx.kwargs && Object.hasOwn(ctx.kwargs, 'messages')) && allObjects(ctx.messages);
    try {
      const cached = useCache ? cachedMessages(ctx.messages, memo, ctx.argumentsAsGiven === true) : undefined;
      const { messages, texts } = cached
        ? { messages: [], texts: new Map<string, ArgumentsSource>() }
        : prepareMessages(ctx.messages, ctx.wrap, ctx.argumentsAsGiven === true);
      // transformers: special tokens first, then messages/tools/..., then kwargs override everything.
      const vars: Record<string, unknown> = {
        ...globals,
        ...ctx.specialTokens,
        messages,
        tools: prepareTools(ctx.tools, ctx.messages.length, ctx.wrap),
        documents: null,
        add_generation_prompt: ctx.addGenerationPrompt,
        ...ctx.kwargs,
      };
      tagFunction(env.variables.get('namespace'), 'namespace');
      for (const [k, v] of Object.entries(vars)) {
        env.set(k, v);
        // Functions are new FunctionValues each render; tag our globals, which behave the same
        // every time (a caller's function may not: it is never tagged, so no reuse across it).
        if (typeof v === 'function' && v === globals[k]) tagFunction(env.variables.get(k), `global:${k}`);
      }
      if (cached) {
        // The same runtime values a conversion would build, reused per message (see cachedMessages).
        env.variables.set('messages', cached);
      } else {
        const messagesValue = env.variables.get('messages') as RuntimeLike | undefined;
        if (messagesValue && Array.isArray(messagesValue.value)) attachArgumentTexts(messagesValue, texts, ctx.wrap);
      }
      const interpreter = makeInterpreter(env);
      pythonToJsonFilter(interpreter as Interpreter);
      const result = interpreter.run(this.program) as { value: unknown };
      return { text: String(result.value) };
    } catch (err) {
      if (err instanceof TemplateRaised) {
        throw new PromptencError('E_TEMPLATE', `chat template raised: ${err.message}`, { cause: err });
      }
      throw new PromptencError('E_TEMPLATE', `chat template failed: ${(err as Error).message}`, { cause: err });
    }
  }
}

const compiled = new Map<string, ChatTemplate>();
const COMPILED_LIMIT = 64;

/** Parse-once cache keyed by template source; bounded so per-request templates cannot grow it forever. */
export function compileTemplate(source: string): ChatTemplate {
  let t = compiled.get(source);
  if (!t) {
    t = new ChatTemplate(source);
    if (compiled.size >= COMPILED_LIMIT) compiled.delete(compiled.keys().next().value as string);
    compiled.set(source, t);
  }
  return t;
}
