import { DEFAULT_LIMITS, Engine, EngineMemo, type TemplateLimits } from './engine/index.js';
import { parse } from './engine/parser.js';
import { plainCopy, templateMessage, templateTools, type FieldWrapper } from './arguments.js';
import { cachedMessages, certifiedCommonPrefix } from './message-cache.js';
import type { ChatMessage, ToolDefinition } from './messages.js';

export type { FieldWrapper } from './arguments.js';
export { pythonJsonDumps } from './arguments.js';
export { tailOfPieces } from './message-cache.js';
export type { TemplateLimits } from './engine/index.js';
export { DEFAULT_LIMITS, strftime } from './engine/index.js';
/** What a session keeps between its renders (the engine's memo, plus the message cache of message-cache.ts). */
export { EngineMemo as RenderMemo };

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

/**
 * A chat template compiled once (src/template/engine: Python Jinja2's semantics as transformers
 * configures it) and rendered many times, with transformers' context.
 */
export class ChatTemplate {
  private readonly engine: Engine;
  /**
   * The template tests identity (`is sameas`): reuse keeps values that are equal, not the same
   * objects (a namespace write replayed, an outer list compared by value), which only that test
   * can tell apart. Such templates render in full.
   */
  private readonly identity: boolean;

  /** Throws PromptencError E_TEMPLATE when the template does not parse (E_ARGUMENT for bad limits). */
  constructor(
    readonly source: string,
    limits?: TemplateLimits,
  ) {
    this.engine = new Engine(source, limits === undefined ? {} : { limits });
    this.identity = testsIdentity(parse(source, limits?.maxDepth ?? DEFAULT_LIMITS.maxDepth));
  }

  /** The prompt text. Errors: E_TEMPLATE (with the template line), E_TEMPLATE_LIMIT. */
  render(ctx: RenderContext): string {
    return this.engine.renderWith(this.context(ctx, undefined), { now: ctx.now }).text;
  }

  /**
   * The same text as render(), reusing what the previous render with `memo` computed (the
   * engine's loop over `messages`, engine/memo.ts, and the converted messages). `common` is a
   * prefix length the text shares with that previous render's text (a lower bound, found from
   * the output pieces without reading the text), or -1; `pieces` join to `text`.
   */
  renderIncremental(ctx: RenderContext, memo: EngineMemo): { text: string; pieces: string[] | undefined; common: number } {
    // A render inside this one (caller code in the template calling the same session) renders in
    // full and leaves the memo alone: the outer render holds its records.
    if (memo.rendering) return { text: this.render(ctx), pieces: undefined, common: -1 };
    if (this.identity) {
      memo.reset();
      return { text: this.render(ctx), pieces: undefined, common: -1 };
    }
    memo.reused = 0;
    memo.evaluated = 0;
    // The messages cache belongs to the engine the memo was last used with (renderWith resets
    // a memo another template used; the cache must not outlive that).
    if (memo.owner !== this.engine) {
      memo.reset();
      memo.owner = this.engine;
    }
    const old = memo.pieces;
    let r: { text: string; pieces: string[] | undefined };
    memo.rendering = true;
    try {
      r = this.engine.renderWith(this.context(ctx, memo), { now: ctx.now, memo });
    } catch (err) {
      memo.reset();
      throw err;
    } finally {
      memo.rendering = false;
    }
    memo.pieces = r.pieces;
    return { text: r.text, pieces: r.pieces, common: old !== undefined && r.pieces !== undefined ? certifiedCommonPrefix(old, r.pieces) : -1 };
  }

  /** transformers' context: special tokens first, then messages/tools/..., then kwargs override everything. */
  private context(ctx: RenderContext, memo: EngineMemo | undefined): Record<string, unknown> {
    const wrap = ctx.wrap;
    const asGiven = ctx.argumentsAsGiven === true;
    // Incremental renders convert only the messages that changed; not with accounting's
    // wrapper, nor when kwargs replace `messages`.
    const useCache = memo !== undefined && wrap === undefined && !(ctx.kwargs && Object.hasOwn(ctx.kwargs, 'messages'));
    let messages: unknown[];
    if (useCache) messages = cachedMessages(ctx.messages, memo, asGiven);
    else {
      messages = new Array(ctx.messages.length);
      for (let i = 0; i < ctx.messages.length; i++) messages[i] = templateMessage(plainCopy(ctx.messages[i]) as Record<string, unknown>, i, wrap, asGiven);
    }
    // Object.assign, not a spread: `{ ...special, messages, … }` takes V8's slow path (~5 µs,
    // a third of a short render).
    const vars: Record<string, unknown> = Object.assign({}, ctx.specialTokens, {
      messages,
      tools: plainCopy(templateTools(ctx.tools, ctx.messages.length, wrap)),
      documents: null,
      add_generation_prompt: ctx.addGenerationPrompt,
    });
    // Copies, as for messages (see plainCopy): a caller's kwargs value edited in place between two
    // incremental renders must read as edited.
    const kw = ctx.kwargs;
    if (kw !== undefined) for (const k of Object.keys(kw)) vars[k] = plainCopy(kw[k]);
    return vars;
  }
}

/** Some node of the tree is the `sameas` test. */
function testsIdentity(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(testsIdentity);
  if (node === null || typeof node !== 'object') return false;
  const n = node as Record<string, unknown>;
  if (n.t === 'test' && n.name === 'sameas') return true;
  for (const k in n) if (k !== 't' && testsIdentity(n[k])) return true;
  return false;
}

/** Per limits (usually one entry: the defaults), templates by source. */
const compiled = new Map<string, Map<string, ChatTemplate>>();
const COMPILED_LIMIT = 64;

function limitsKey(l: TemplateLimits | undefined): string {
  return l === undefined ? '' : `${l.maxOutput}/${l.maxIterations}/${l.maxDepth}`;
}

/**
 * Parse-once cache keyed by template source and limits; bounded so per-request templates cannot
 * grow it forever. Keyed by the source string itself (its hash is kept on the string: a key built
 * from it would be hashed anew on every render, most of a short render's time).
 */
export function compileTemplate(source: string, limits?: TemplateLimits): ChatTemplate {
  const lk = limitsKey(limits);
  let bySource = compiled.get(lk);
  if (bySource === undefined) {
    if (compiled.size >= 8) compiled.delete(compiled.keys().next().value as string);
    compiled.set(lk, (bySource = new Map()));
  }
  let t = bySource.get(source);
  if (!t) {
    t = new ChatTemplate(source, limits);
    if (bySource.size >= COMPILED_LIMIT) bySource.delete(bySource.keys().next().value as string);
  } else {
    // Most recently used last, so a hot template is not the one evicted.
    bySource.delete(source);
  }
  bySource.set(source, t);
  return t;
}
