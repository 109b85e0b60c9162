import { PromptencError, describeValue } from './errors.js';
import { checkAddedTokenIds, readTokenizerFiles, type TokenizerFiles } from './load.js';
import { sequenceWrap, specialTokenStrings, type SequenceWrap } from './postprocess.js';
import { createBackend } from './backend/select.js';
import type { Backend, BackendChoice, BackendKind } from './backend/types.js';
import { compileTemplate, type ChatTemplate, type RenderContext } from './template/render.js';
import { RenderMemo, tailOfPieces } from './template/incremental.js';
import { validateMessages, validateTools, type ChatMessage, type ToolDefinition } from './template/messages.js';
import { AddedTokenScanner, matchesAgree } from './split.js';
import { byteLevelTokenLengths } from './offsets.js';
import { preTokenizerFamily } from './families.js';
import { EncodeSession, type PrefixHint, type SessionHost } from './session.js';
import { SegmentCache, type SegmentCacheStats } from './segment-cache.js';
import { attribute, markerWrapper, searchSpans, stripMarkers, tokenStarts, type ChatTokenBreakdown } from './accounting.js';
import type { PrescannedModel, TokenizerJson } from './backend/types.js';

export interface LoadOptions {
  /** 'auto' (default) uses the native core when it handles this tokenizer exactly, else JS. */
  backend?: BackendChoice;
  /** Cache the IDs of text chunks between added tokens, bounded in bytes (LRU). Off by default. */
  segmentCache?: { maxBytes: number };
}

export interface FitOptions extends ChatOptions {
  maxTokens: number;
}

export interface FitResult {
  messages: ChatMessage[];
  count: number;
  /** Indices (in the input) of the messages that were dropped, oldest first. */
  dropped: number[];
}

export interface EncodeOptions {
  /** Add what `tokenizer(text)` adds in transformers (e.g. DeepSeek-V3's BOS). Default true. */
  addSpecialTokens?: boolean;
}

export interface DecodeOptions {
  skipSpecialTokens?: boolean;
}

export interface ChatOptions {
  tools?: ToolDefinition[];
  /** Default true, as promptenc is mostly used to build the prompt for the next model turn. */
  addGenerationPrompt?: boolean;
  /** A template source, or the name of one of the model's named templates; overrides the default. */
  chatTemplate?: string;
  /** Extra template variables, e.g. { enable_thinking: false, reasoning_effort: 'high' }. */
  kwargs?: Record<string, unknown>;
  /** Clock for strftime_now (tests pin it). */
  now?: () => Date;
}

function checkText(text: unknown, name = 'text'): asserts text is string {
  if (typeof text !== 'string') {
    throw new PromptencError('E_ARGUMENT', `${name}: expected a string, received ${describeValue(text)}`);
  }
}

function checkOptions(opts: unknown, name: string): void {
  if (opts !== undefined && (typeof opts !== 'object' || opts === null || Array.isArray(opts))) {
    throw new PromptencError('E_ARGUMENT', `${name}: expected an options object, received ${describeValue(opts)}`);
  }
}

export function toIdArray(ids: unknown, name = 'ids'): Uint32Array {
  if (ids instanceof Uint32Array) return ids;
  if (!Array.isArray(ids) && !ArrayBuffer.isView(ids)) {
    throw new PromptencError('E_IDS_INVALID', `${name}: expected an array of token ids, received ${describeValue(ids)}`);
  }
  const list = ids as ArrayLike<unknown>;
  const out = new Uint32Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff) {
      throw new PromptencError('E_IDS_INVALID', `${name}[${i}]: expected a non-negative integer token id, received ${describeValue(v)}`);
    }
    out[i] = v;
  }
  return out;
}

/**
 * A loaded tokenizer plus its chat template. Policy lives here (BOS/EOS, templates,
 * validation); text → IDs is the backend's job, and both backends give the same IDs.
 */
export class PromptTokenizer {
  readonly backend: BackendKind;
  /** Absolute path of the tokenizer.json in use. */
  readonly tokenizerPath: string;
  /** Added-token id → { content, special }. */
  readonly addedTokens: ReadonlyMap<number, { content: string; special: boolean }>;
  private readonly wrap: SequenceWrap;
  private readonly specialStrings: Record<string, string | string[]>;
  private readonly templates: { default?: string; named: Map<string, string> };
  private readonly json: TokenizerJson;
  private readonly prescanned: PrescannedModel | undefined;
  private scannerValue: AddedTokenScanner | undefined;
  private tokenLengthsValue: Uint16Array | undefined | null = null;
  private cache: SegmentCache | undefined;

  /** @internal use loadTokenizer */
  constructor(
    readonly impl: Backend,
    files: TokenizerFiles,
  ) {
    this.backend = impl.kind;
    this.tokenizerPath = files.tokenizerPath;
    const added = new Map<number, { content: string; special: boolean }>();
    const addedByContent = new Map<string, number>();
    for (const t of files.tokenizerJson.added_tokens ?? []) {
      added.set(t.id, { content: t.content, special: t.special });
      addedByContent.set(t.content, t.id);
    }
    this.addedTokens = added;
    // model.vocab may be lazy (load.ts): only read it for a token that is not an added one.
    const model = files.tokenizerJson.model;
    const tokenToId = (s: string) => {
      const id = addedByContent.get(s);
      if (id !== undefined) return id;
      const vocab = model.vocab as Record<string, number>;
      return Array.isArray(vocab) ? undefined : vocab[s];
    };
    this.wrap = sequenceWrap(files.tokenizerJson, files.tokenizerConfig, tokenToId, files.tokenizerPath);
    this.specialStrings = specialTokenStrings(files.tokenizerConfig);
    const named = new Map<string, string>();
    let def: string | undefined;
    if (typeof files.chatTemplate === 'string') def = files.chatTemplate;
    else if (Array.isArray(files.chatTemplate)) {
      for (const t of files.chatTemplate) if (t && typeof t.name === 'string' && typeof t.template === 'string') named.set(t.name, t.template);
      def = named.get('default');
    }
    this.templates = { default: def, named };
    this.json = files.tokenizerJson;
    // Kept only when a native Encoder consumed it (its key list is then exact); an unused
    // scan (JS backend) is dropped so that the GC frees it.
    this.prescanned = files.prescanned?.unique === true ? files.prescanned : undefined;
  }

  /** The added-token scanner (built on first use: sessions, cache, accounting). */
  private get scanner(): AddedTokenScanner {
    return (this.scannerValue ??= new AddedTokenScanner(this.json));
  }

  private get tokenLengths(): Uint16Array | undefined {
    if (this.tokenLengthsValue === null) {
      // The native core's key list is exact once its build found no duplicates; else
      // (or for the JS backend) the parsed vocab is read.
      const keys = this.prescanned?.unique === true ? this.prescanned : undefined;
      this.tokenLengthsValue = byteLevelTokenLengths(this.json, keys);
    }
    return this.tokenLengthsValue;
  }

  /**
   * Turn on the segment cache: text between safe added-token cuts is encoded once and
   * reused (LRU, bounded by `maxBytes`). Returns nothing; see segmentCacheStats().
   */
  enableSegmentCache(opts: { maxBytes: number }): void {
    checkOptions(opts, 'options');
    const max = opts?.maxBytes;
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 1024) {
      throw new PromptencError('E_ARGUMENT', `options.maxBytes: expected an integer >= 1024, received ${describeValue(max)}`);
    }
    this.cache = new SegmentCache(max);
  }

  disableSegmentCache(): void {
    this.cache = undefined;
  }

  segmentCacheStats(): SegmentCacheStats | undefined {
    return this.cache?.stats();
  }

  /**
   * encode(text, addSpecialTokens=false) through the segment cache when it is on.
   * Chunks end at safe added-token cuts, so their IDs concatenate to the full encoding.
   */
  private encodeBody(text: string, cache = this.cache): Uint32Array {
    if (!cache || text.length === 0) return this.impl.encode(text);
    const scanner = this.scanner;
    const matches = scanner.scan(text);
    const parts: Uint32Array[] = [];
    let total = 0;
    let chunkStart = 0;
    let firstMatch = 0;
    for (let m = 0; m <= matches.length; m++) {
      const last = m === matches.length;
      if (!last && !matches[m]!.safeEnd) continue;
      const chunkEnd = last ? text.length : matches[m]!.end;
      if (chunkEnd === chunkStart) continue;
      const chunk = text.slice(chunkStart, chunkEnd);
      let ids = cache.get(chunk);
      if (!ids) {
        ids = this.impl.encode(chunk);
        const local = matches.slice(firstMatch, last ? matches.length : m + 1).map((x) => ({ ...x, start: x.start - chunkStart, end: x.end - chunkStart }));
        // The chunk must hold exactly the added tokens the scanner saw, else the cut is not trusted.
        if (!matchesAgree(local, ids, scanner)) return this.impl.encode(text);
        cache.set(chunk, ids);
      }
      parts.push(ids);
      total += ids.length;
      chunkStart = chunkEnd;
      firstMatch = m + 1;
    }
    const out = new Uint32Array(total);
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }

  /** An incremental encoder for a growing text or conversation; see EncodeSession. */
  createSession(): PromptSession {
    const family = preTokenizerFamily(this.json);
    const marksAvailable = (): boolean => !this.cache && this.impl.encodeMarked !== undefined;
    const host: SessionHost = {
      // The backend's marks spare the session its own scan; the segment cache (chunked encodes) gives none.
      encodeBody: (text) => (marksAvailable() && text.length > 0 ? this.impl.encodeMarked!(text) : { ids: this.encodeBody(text), marks: undefined }),
      scanner: this.scanner,
      tokenLengths: this.tokenLengths,
      newlineBreaks: family !== undefined && family !== 'gpt2',
      get marks() {
        return marksAvailable();
      },
    };
    return new PromptSession(this, new EncodeSession(host));
  }

  /** @internal used by PromptSession: the ids added around the body when special tokens are on. */
  sessionWrap(opts: EncodeOptions): SequenceWrap {
    return opts.addSpecialTokens === false ? NO_WRAP : this.wrap;
  }

  /** The model's default chat template source, if it has one. */
  get chatTemplate(): string | undefined {
    return this.templates.default;
  }

  encode(text: string, opts: EncodeOptions = {}): Uint32Array {
    checkText(text);
    checkOptions(opts, 'options');
    const body = this.encodeBody(text);
    if (opts.addSpecialTokens === false) return body;
    return this.wrapIds(body);
  }

  count(text: string, opts: EncodeOptions = {}): number {
    checkText(text);
    checkOptions(opts, 'options');
    const n = this.cache ? this.encodeBody(text).length : this.impl.count(text);
    return opts.addSpecialTokens === false ? n : n + this.wrap.prefix.length + this.wrap.suffix.length;
  }

  async encodeAsync(text: string, opts: EncodeOptions = {}): Promise<Uint32Array> {
    checkText(text);
    checkOptions(opts, 'options');
    const body = await this.impl.encodeAsync(text);
    return opts.addSpecialTokens === false ? body : this.wrapIds(body);
  }

  /** Encode many texts; with the native backend this runs on up to `threads` worker threads. */
  async encodeBatch(texts: readonly string[], opts: EncodeOptions & { threads?: number } = {}): Promise<Uint32Array[]> {
    if (!Array.isArray(texts)) throw new PromptencError('E_ARGUMENT', `texts: expected an array of strings, received ${describeValue(texts)}`);
    texts.forEach((t, i) => checkText(t, `texts[${i}]`));
    checkOptions(opts, 'options');
    const threads = opts.threads ?? 1;
    if (!Number.isInteger(threads) || threads < 1 || threads > 256) {
      throw new PromptencError('E_ARGUMENT', `options.threads: expected an integer from 1 to 256, received ${describeValue(threads)}`);
    }
    const out = await this.impl.encodeBatch(texts, threads);
    return opts.addSpecialTokens === false ? out : out.map((ids) => this.wrapIds(ids));
  }

  decode(ids: Uint32Array | readonly number[], opts: DecodeOptions = {}): string {
    checkOptions(opts, 'options');
    return this.impl.decode(toIdArray(ids), opts.skipSpecialTokens === true);
  }

  /** The prompt string, exactly as transformers' apply_chat_template(tokenize=False) renders it. */
  renderChat(messages: ChatMessage[], opts: ChatOptions = {}): string {
    const { template, ctx } = this.renderInputs(messages, opts);
    return template.render(ctx);
  }

  /** @internal sessions: renderChat reusing `memo` (see src/template/incremental.ts). */
  renderChatIncremental(messages: ChatMessage[], opts: ChatOptions, memo: RenderMemo): ReturnType<ChatTemplate['renderIncremental']> {
    const { template, ctx } = this.renderInputs(messages, opts);
    return template.renderIncremental(ctx, memo);
  }

  private renderInputs(messages: ChatMessage[], opts: ChatOptions): { template: ChatTemplate; ctx: RenderContext } {
    checkOptions(opts, 'options');
    const checked = validateMessages(messages);
    const tools = validateTools(opts.tools);
    if (opts.kwargs !== undefined) checkOptions(opts.kwargs, 'options.kwargs');
    const source = this.templateSource(opts.chatTemplate, tools);
    return {
      template: compileTemplate(source),
      ctx: {
        messages: checked,
        tools,
        addGenerationPrompt: opts.addGenerationPrompt ?? true,
        specialTokens: this.specialStrings,
        kwargs: opts.kwargs,
        now: opts.now,
      },
    };
  }

  /**
   * apply_chat_template(tokenize=True): the rendered prompt encoded with no extra special
   * tokens, because the template already wrote BOS where the model wants it.
   */
  encodeChat(messages: ChatMessage[], opts: ChatOptions = {}): Uint32Array {
    return this.encodeBody(this.renderChat(messages, opts));
  }

  countChat(messages: ChatMessage[], opts: ChatOptions = {}): number {
    const prompt = this.renderChat(messages, opts);
    return this.cache ? this.encodeBody(prompt).length : this.impl.count(prompt);
  }

  /**
   * Which tokens of the prompt each message, the tool list and the template produced.
   * The parts sum to `total`, which equals countChat. The rule is in src/accounting.ts.
   */
  countChatByMessage(messages: ChatMessage[], opts: ChatOptions = {}): ChatTokenBreakdown {
    const { template, ctx } = this.renderInputs(messages, opts);
    const prompt = template.render(ctx);
    const ids = this.encodeBody(prompt);
    const checked = ctx.messages;
    const tools = ctx.tools;
    let spans: ReturnType<typeof searchSpans> | undefined;
    try {
      const marked = template.render({ ...ctx, wrap: markerWrapper() });
      const stripped = stripMarkers(marked);
      if (stripped && stripped.text === prompt) spans = stripped.spans;
    } catch {
      // A template that inspects text may fail on marked text; fall back to searching.
    }
    spans ??= searchSpans(prompt, checked.map((m) => (typeof m.content === 'string' ? m.content : undefined)));
    const starts = tokenStarts(prompt, ids, this.tokenLengths, this.scanner) ?? this.approximateStarts(prompt, ids);
    return attribute(prompt.length, starts, spans, checked.length);
  }

  /** Token starts from decoded lengths, for models whose offsets cannot be computed exactly. */
  private approximateStarts(prompt: string, ids: Uint32Array): Int32Array {
    const starts = new Int32Array(ids.length);
    let pos = 0;
    for (let t = 0; t < ids.length; t++) {
      starts[t] = Math.min(pos, prompt.length);
      pos += this.impl.decode(ids.subarray(t, t + 1), false).length;
    }
    return starts;
  }

  /**
   * Drop the oldest turns until the prompt fits in `maxTokens`. System/developer messages
   * and everything from the last user message on are never dropped; a turn (a user
   * message up to the next one) goes whole, so a tool call never loses its results.
   * Candidates are encoded through a segment cache (their text is mostly cached segments) and
   * the search starts at an estimate, so it costs a few renders, not one per halving.
   */
  fitChat(messages: ChatMessage[], opts: FitOptions): FitResult {
    checkOptions(opts, 'options');
    const max = opts?.maxTokens;
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 0) {
      throw new PromptencError('E_ARGUMENT', `options.maxTokens: expected a non-negative integer, received ${describeValue(max)}`);
    }
    const checked = validateMessages(messages);
    const { maxTokens: _max, ...chatOpts } = opts;
    const cache = this.cache ?? new SegmentCache(64 * 1024 * 1024);
    const countFor = (dropUnits: number): { kept: ChatMessage[]; dropped: number[]; count: number } => {
      const dropped = units.slice(0, dropUnits).flat();
      const drop = new Set(dropped);
      const kept = checked.filter((_, i) => !drop.has(i));
      return { kept, dropped, count: this.encodeBody(this.renderChat(kept, chatOpts), cache).length };
    };
    // Units: the droppable turns, oldest first.
    let lastUser = -1;
    checked.forEach((m, i) => {
      if (m.role === 'user') lastUser = i;
    });
    const units: number[][] = [];
    for (let i = 0; i < (lastUser < 0 ? 0 : lastUser); i++) {
      const role = checked[i]!.role;
      if (role === 'system' || role === 'developer') continue;
      if (role === 'user' || units.length === 0) units.push([i]);
      else units[units.length - 1]!.push(i);
    }
    const full = countFor(0);
    if (full.count <= max) return { messages: full.kept, count: full.count, dropped: [] };
    // Rendering dominates each candidate (≈ 75 ms at 200k tokens against ≈ 14 ms of encoding),
    // so the search starts where the text sizes say the budget is met and only verifies
    // around it: usually two or three renders instead of log2(turns) + 2. The estimate
    // only picks where to look; every answer is an exact count.
    const textTokens = checked.map((m) => this.messageTextTokens(m));
    const scaffold = Math.max(0, (full.count - textTokens.reduce((x, y) => x + y, 0)) / Math.max(1, checked.length));
    let guess = units.length;
    for (let d = 0, est = full.count; d < units.length; d++) {
      for (const i of units[d]!) est -= textTokens[i]! + scaffold;
      if (est <= max) {
        guess = d + 1;
        break;
      }
    }
    // Invariant of the search below: drop = lo does not fit (lo = 0 is `full`), drop = hi fits.
    let lo = 0;
    let hi = -1;
    let best: ReturnType<typeof countFor> | undefined;
    let minimalCount = -1; // the count with every droppable turn gone, once known not to fit
    const tryDrop = (d: number): boolean => {
      const c = countFor(d);
      if (c.count > max) {
        lo = Math.max(lo, d);
        if (d === units.length) minimalCount = c.count;
        return false;
      }
      if (hi < 0 || d < hi) {
        hi = d;
        best = c;
      }
      return true;
    };
    if (tryDrop(guess)) {
      // Fits: gallop towards fewer dropped turns until one does not fit.
      for (let step = 1; guess - step > lo && tryDrop(guess - step); step *= 2);
    } else {
      // Does not fit: gallop towards more dropped turns, up to dropping all of them.
      for (let step = 1; hi < 0; step *= 2) {
        if (minimalCount >= 0) {
          throw new PromptencError(
            'E_BUDGET',
            `the conversation needs at least ${minimalCount} tokens after dropping every droppable turn (system messages and the last user turn stay), more than maxTokens ${max}`,
          );
        }
        tryDrop(Math.min(units.length, guess + step));
      }
    }
    // Fewest dropped turns that fit; the count shrinks as turns go, so binary search.
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      tryDrop(mid);
    }
    return { messages: best!.kept, count: best!.count, dropped: best!.dropped };
  }

  /** Tokens of a message's own text (content, reasoning, tool calls), encoded apart: only an estimate. */
  private messageTextTokens(m: ChatMessage): number {
    let n = 0;
    const add = (t: unknown) => {
      if (typeof t === 'string' && t !== '') n += this.impl.count(t);
    };
    if (typeof m.content === 'string') add(m.content);
    else if (Array.isArray(m.content)) for (const part of m.content) add((part as { text?: unknown }).text);
    add(m.reasoning_content);
    for (const tc of m.tool_calls ?? []) {
      add(tc.function?.name);
      const args = tc.function?.arguments;
      add(typeof args === 'string' ? args : JSON.stringify(args ?? null));
    }
    return n;
  }

  private wrapIds(body: Uint32Array): Uint32Array {
    return this.wrap.prefix.length === 0 && this.wrap.suffix.length === 0 ? body : framed(this.wrap, body);
  }

  private templateSource(override: string | undefined, tools: unknown[] | undefined): string {
    if (override !== undefined) {
      if (typeof override !== 'string') throw new PromptencError('E_ARGUMENT', `options.chatTemplate: expected a template source string, received ${describeValue(override)}`);
      return this.templates.named.get(override) ?? override;
    }
    // transformers picks the "tool_use" named template when tools are given and it exists.
    if (tools && this.templates.named.has('tool_use')) return this.templates.named.get('tool_use')!;
    if (this.templates.default !== undefined) return this.templates.default;
    throw new PromptencError(
      'E_TEMPLATE_MISSING',
      `${this.tokenizerPath}: this tokenizer has no chat template (no chat_template.jinja and no chat_template in tokenizer_config.json); pass options.chatTemplate`,
    );
  }
}

/**
 * What changed since the session's previous result: the new ids are the previous result's
 * first `reused` ids followed by `ids`. `reused` is the longest such count (0 on the
 * first call and after a call with other options), so an inference engine can keep that
 * many positions of its KV cache and prefill only `ids`.
 */
export interface SessionDelta {
  reused: number;
  ids: Uint32Array;
  /** reused + ids.length: the length of the full result. */
  total: number;
}

const NO_WRAP: SequenceWrap = { prefix: [], suffix: [] };

/** prefix ++ body ++ suffix as a new array (body is copied once, even when it is a view). */
function framed(wrap: SequenceWrap, body: Uint32Array): Uint32Array {
  const out = new Uint32Array(wrap.prefix.length + body.length + wrap.suffix.length);
  out.set(wrap.prefix, 0);
  out.set(body, wrap.prefix.length);
  out.set(wrap.suffix, wrap.prefix.length + body.length);
  return out;
}

/** @internal a session's chat render: the prompt, what it shares with the previous one, whether the next may rely on it. */
export interface RenderedChat {
  text: string;
  hint: PrefixHint | undefined;
  linkable: boolean;
}

/**
 * A session: the same results as the tokenizer's encode / encodeChat, computed
 * incrementally from the previous call (see EncodeSession for the exactness argument).
 * Sessions are independent; many may share one tokenizer.
 */
export class PromptSession {
  /** The wrap of the previous result; undefined before the first call. */
  private lastWrap: SequenceWrap | undefined;
  /** What the previous chat render computed, reused by the next one. */
  private readonly memo = new RenderMemo();
  /** The session's current text is the memo's last render (so the memo's prefix bound applies to it). */
  private chatLinked = false;
  /**
   * Moved by every render and every update of this session. Caller code that runs inside a render
   * (a function passed in kwargs, a getter) may call this same session; a render that sees the
   * epoch move while it ran gives no prefix bound (the session's text is no longer the one it
   * was linked to).
   */
  private epoch = 0;
  /** The memo's latest render (the only one whose bound is against the session's text). */
  private lastRendered: RenderedChat | undefined;

  /** @internal use tok.createSession() */
  constructor(
    private readonly tok: PromptTokenizer,
    private readonly inner: EncodeSession,
  ) {}

  /** Exactly `tok.encode(text, opts)`. */
  encode(text: string, opts: EncodeOptions = {}): Uint32Array {
    checkText(text);
    checkOptions(opts, 'options');
    return this.wrapped(text, this.tok.sessionWrap(opts));
  }

  /** Exactly `tok.encodeChat(messages, opts)`. */
  encodeChat(messages: ChatMessage[], opts: ChatOptions = {}): Uint32Array {
    const { text, hint, linkable } = this.render(messages, opts);
    this.inner.update(text, hint);
    this.chatLinked = linkable;
    this.lastWrap = NO_WRAP;
    return framed(NO_WRAP, this.inner.view());
  }

  /** `encode` as a delta from the previous result: O(changed) work, no O(n) copy of the ids. */
  encodeDelta(text: string, opts: EncodeOptions = {}): SessionDelta {
    checkText(text);
    checkOptions(opts, 'options');
    return this.delta(text, this.tok.sessionWrap(opts));
  }

  /** `encodeChat` as a delta from the previous result. */
  encodeChatDelta(messages: ChatMessage[], opts: ChatOptions = {}): SessionDelta {
    return this.encodeRenderedDelta(this.renderIncremental(messages, opts));
  }

  /** @internal encodeChatDelta's first step, the render (apart so bench/incremental can time it). */
  renderIncremental(messages: ChatMessage[], opts: ChatOptions = {}): RenderedChat {
    return this.render(messages, opts);
  }

  /** @internal encodeChatDelta's second step: the encode work. Only the latest render carries its prefix bound. */
  encodeRenderedDelta(r: RenderedChat): SessionDelta {
    const latest = r === this.lastRendered;
    this.lastRendered = undefined;
    const d = this.delta(r.text, NO_WRAP, latest ? r.hint : undefined);
    this.chatLinked = latest && r.linkable;
    return d;
  }

  countChat(messages: ChatMessage[], opts: ChatOptions = {}): number {
    const { text, hint, linkable } = this.render(messages, opts);
    this.delta(text, NO_WRAP, hint);
    this.chatLinked = linkable;
    return this.inner.length;
  }

  /**
   * Incremental render (src/template/incremental.ts). Its prefix bound holds against the
   * previous chat render only, so it is used when the session's text came from that render.
   */
  private render(messages: ChatMessage[], opts: ChatOptions): RenderedChat {
    const linked = this.chatLinked;
    this.chatLinked = false; // until the caller has stored this render's text
    this.lastRendered = undefined;
    const epoch = ++this.epoch;
    const r = this.tok.renderChatIncremental(messages, opts, this.memo);
    const linkable = r.pieces !== undefined;
    let out: RenderedChat;
    if (!linked || r.common < 0 || r.pieces === undefined || this.epoch !== epoch) {
      out = { text: r.text, hint: undefined, linkable };
    } else {
      const pieces = r.pieces;
      const total = r.text.length;
      out = { text: r.text, hint: { common: r.common, tail: (from) => tailOfPieces(pieces, total, from) }, linkable };
    }
    this.lastRendered = out;
    return out;
  }

  stats(): { reusedChars: number; encodedChars: number; calls: number } {
    return this.inner.stats();
  }

  reset(): void {
    this.epoch++;
    this.inner.reset();
    this.lastWrap = undefined;
    this.memo.reset();
    this.chatLinked = false;
    this.lastRendered = undefined;
  }

  private wrapped(text: string, wrap: SequenceWrap): Uint32Array {
    this.epoch++;
    this.chatLinked = false;
    this.lastRendered = undefined;
    this.inner.update(text);
    this.lastWrap = wrap;
    return framed(wrap, this.inner.view());
  }

  private delta(text: string, wrap: SequenceWrap, hint?: PrefixHint): SessionDelta {
    this.epoch++;
    const sameWrap = this.lastWrap === wrap;
    if (hint === undefined) {
      // A text call: the session's text is no longer the one a pending render was compared with.
      this.chatLinked = false;
      this.lastRendered = undefined;
    }
    const { reused: reusedBody, oldLength, oldTail } = this.inner.update(text, hint);
    this.lastWrap = wrap;
    const { prefix, suffix } = wrap;
    const bodyLength = this.inner.length;
    const total = prefix.length + bodyLength + suffix.length;
    if (!sameWrap) return { reused: 0, ids: framed(wrap, this.inner.view()), total };
    // No wrap (every chat call): the body's own reuse is the answer (reusedBody is maximal, so
    // the comparison below would stop at once), one copy and no views.
    if (prefix.length === 0 && suffix.length === 0) return { reused: reusedBody, ids: this.inner.idsFrom(reusedBody), total };
    // Past the common body prefix the old result continues with oldTail then the suffix and the
    // new one with body[reusedBody..] then the suffix; at most one side still has body ids
    // (reusedBody is maximal), so this loop runs at most suffix.length + 1 times.
    const newBodyTail = this.inner.view().subarray(reusedBody);
    const oldRest = oldLength - reusedBody;
    const oldN = oldRest + suffix.length;
    const newN = newBodyTail.length + suffix.length;
    // Plain loops and typed-array copies: this runs once per call, often before the JIT has
    // optimized it, where a closure call per id cost ~30 µs for a 450-id turn.
    let same = 0;
    while (same < oldN && same < newN) {
      const o = same < oldRest ? oldTail[same] : suffix[same - oldRest];
      const nw = same < newBodyTail.length ? newBodyTail[same] : suffix[same - newBodyTail.length];
      if (o !== nw) break;
      same++;
    }
    const reused = prefix.length + reusedBody + same;
    const ids = new Uint32Array(total - reused);
    if (same < newBodyTail.length) {
      ids.set(newBodyTail.subarray(same), 0);
      ids.set(suffix, newBodyTail.length - same);
    } else {
      ids.set(suffix.slice(same - newBodyTail.length), 0);
    }
    return { reused, ids, total };
  }
}

/** Load a tokenizer from a model directory, a tokenizer.json path or a bundled name. */
export async function loadTokenizer(source: string, opts: LoadOptions = {}): Promise<PromptTokenizer> {
  checkOptions(opts, 'options');
  const choice = opts.backend ?? 'auto';
  if (choice !== 'auto' && choice !== 'native' && choice !== 'js') {
    throw new PromptencError('E_ARGUMENT', `options.backend: expected 'auto', 'native' or 'js', received ${describeValue(choice)}`);
  }
  // When the native core may serve this load, it reads model.vocab / model.merges from
  // the file bytes itself (the slow part of a load was JSON.parse of those two values).
  let native: typeof import('./backend/native.js') | undefined;
  if (choice !== 'js') {
    try {
      native = await import('./backend/native.js');
    } catch {
      // createBackend reports a native module that fails to load.
    }
  }
  const files = await readTokenizerFiles(source, { scan: native?.prescanTokenizerJson });
  const added = files.tokenizerJson.added_tokens ?? [];
  // The vocab id of each added token's content, from the native read (before an Encoder takes it).
  const scannedIds = files.prescanned && native && added.length > 0 ? native.prescannedVocabIds(files.prescanned, added.map((t) => t.content)) : undefined;
  const impl = await createBackend({ tokenizerJson: files.tokenizerJson, tokenizerConfig: files.tokenizerConfig, prescanned: files.prescanned }, choice);
  // The native read serves when it held no duplicate key or id (known after the build); else the parsed vocab.
  if (files.prescanned?.unique === true && (scannedIds !== undefined || added.length === 0)) {
    checkAddedTokenIds(files.tokenizerJson, files.prescanned.ids.length, (i) => (scannedIds![i]! >= 0 ? scannedIds![i]! : undefined), files.tokenizerPath);
  } else {
    const vocab = files.tokenizerJson.model.vocab;
    if (typeof vocab === 'object' && vocab !== null && !Array.isArray(vocab)) {
      const ids = vocab as Record<string, number>;
      checkAddedTokenIds(files.tokenizerJson, Object.keys(ids).length, (_i, content) => (Object.prototype.hasOwnProperty.call(ids, content) ? ids[content] : undefined), files.tokenizerPath);
    }
  }
  const tok = new PromptTokenizer(impl, files);
  if (opts.segmentCache !== undefined) tok.enableSegmentCache(opts.segmentCache);
  return tok;
}
