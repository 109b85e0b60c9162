import { PromptencError, describeValue } from './errors.js';
import { checkAddedTokenIds, readTokenizerFiles, type TokenizerFiles } from './load.js';
import { framed, NO_WRAP, sequenceWrap, specialTokenStrings, type SequenceWrap } from './postprocess.js';
import { createBackend, modelScanner } from './backend/select.js';
import type { Backend, BackendKind } from './backend/types.js';
import { disposedBackend, disposedError } from './backend/disposed.js';
import { compileTemplate, type ChatTemplate, type RenderContext, type RenderMemo, type TemplateLimits } from './template/render.js';
import { validateMessages, validateTools, type ChatMessage } from './template/messages.js';
import { attributeTemplateError, detectContentFormat, normalizeMessages } from './chat-messages.js';
import { checkChatOptions } from './chat-options.js';
import { checkProvenanceTokenizer, encodeSegments, provenanceSegments, renderWithProvenance } from './content-provenance.js';
import { AddedTokenScanner, matchesAgree } from './split.js';
import { preTokenizerFamily } from './families.js';
import type { TokenizerJson } from './tokenizer-json.js';
import { EncodeSession, type SessionHost } from './session.js';
import { SegmentCache, type SegmentCacheStats } from './segment-cache.js';
import { attribute, countWithinBudget, markerWrapper, searchSpans, stripMarkers, tokenStarts, withToolCost, type ChatTokenBreakdown } from './accounting.js';
import {
  checkBackendChoice,
  checkTemplateLimits,
  checkBatch,
  checkOptions,
  checkSegmentCacheOptions,
  checkText,
  splitSpecialOf,
  toIdArray,
  type BatchOptions,
  type ChatOptions,
  type DecodeOptions,
  type EncodeOptions,
  type FitOptions,
  type FitResult,
  type LoadOptions,
} from './options.js';
import { PromptSession } from './prompt-session.js';
import { checkInputSize, checkMaxInputBytesOption, DEFAULT_MAX_INPUT_BYTES } from './tokenizer-checks.js';
import { snapshotMessages } from './messages-guard.js';
import { fitChat } from './fit-chat.js';
import { createStreamDecoder, type DecoderOptions, type StreamDecoder } from './output/decoder.js';
import { createOutputParser, parseAssistantOutput } from './output/parser.js';
import { outputFormatOfTemplate, outputFormatOfTokens, promptOpensReasoning } from './output/detect.js';
import type { OutputFormat, OutputParser, ParsedOutput } from './output/types.js';

/** Options of parseOutput and createOutputParser on a tokenizer. */
export interface OutputOptions {
  /** The format; default: tok.outputFormat. */
  format?: OutputFormat;
  /** The request's tools: their schemas type glm and qwen3-coder argument values. */
  tools?: readonly unknown[];
  /** The rendered prompt: when it ends with `<think>`, the output starts inside reasoning. */
  prompt?: string;
  /** Overrides what `prompt` tells. */
  startInReasoning?: boolean;
}

/**
 * A loaded tokenizer plus its chat template. Policy lives here (BOS/EOS, templates,
 * validation); text → IDs is the backend's job, and both backends give the same IDs.
 * It is the PromptSessionHost of its sessions and the FitChatHost of fitChat (structurally:
 * those members are internal and left out of the published .d.ts, so it names no host interface).
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
  private scannerValue: AddedTokenScanner | undefined;
  private cache: SegmentCache | undefined;
  /** @internal LoadOptions.templateLimits, checked (undefined: the engine's defaults). */
  templateLimits: TemplateLimits | undefined = undefined;
  /** LoadOptions.maxInputBytes (src/tokenizer-checks.ts). */
  private maxInputBytes = DEFAULT_MAX_INPUT_BYTES;
  private disposed = false;

  /** @internal use loadTokenizer */
  constructor(
    public impl: Backend,
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
    const tokenToId = (s: string) => addedByContent.get(s) ?? impl.vocabulary?.idOf(s);
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
  }

  /** @internal loadTokenizer: LoadOptions.maxInputBytes, already checked. */
  setMaxInputBytes(max: number): void {
    this.maxInputBytes = max;
  }

  /** E_INPUT_TOO_LARGE unless `text` fits in maxInputBytes. */
  private checkSize(text: string, name = 'text'): void {
    checkInputSize(text, this.maxInputBytes, name);
  }

  /** The added-token scanner (built on first use: sessions, cache, accounting). */
  private get scanner(): AddedTokenScanner {
    return (this.scannerValue ??= new AddedTokenScanner(this.json));
  }

  private get tokenLengths(): Uint16Array | undefined {
    return this.impl.vocabulary?.tokenByteLengths();
  }

  /**
   * Turn on the segment cache: text between safe added-token cuts is encoded once and
   * reused (LRU, bounded by `maxBytes`). Returns nothing; see segmentCacheStats().
   */
  enableSegmentCache(opts: { maxBytes: number }): void {
    this.cache = new SegmentCache(checkSegmentCacheOptions(opts));
  }

  disableSegmentCache(): void {
    this.cache = undefined;
  }

  segmentCacheStats(): SegmentCacheStats | undefined {
    return this.cache?.stats();
  }

  /** @internal FitChatHost: the segment cache, when it is on. */
  get segmentCache(): SegmentCache | undefined {
    return this.cache;
  }

  /**
   * encode(text, addSpecialTokens=false) through the segment cache when it is on.
   * Chunks end at safe added-token cuts, so their IDs concatenate to the full encoding.
   */
  private encodeBody(text: string, cache = this.cache): Uint32Array {
    this.checkSize(text);
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
      // The session checks its whole text (checkSize) before it encodes a part of it.
      encodeBody: (text) => {
        return marksAvailable() && text.length > 0 ? this.impl.encodeMarked!(text) : { ids: this.encodeBody(text), marks: undefined };
      },
      checkSize: (text) => this.checkSize(text),
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
    this.checkLive();
    return opts.addSpecialTokens === false ? NO_WRAP : this.wrap;
  }

  /** The model's default chat template source, if it has one. */
  get chatTemplate(): string | undefined {
    return this.templates.default;
  }

  encode(text: string, opts: EncodeOptions = {}): Uint32Array {
    checkText(text);
    checkOptions(opts, 'options');
    this.checkSize(text);
    // The segment cache and sessions cut at added tokens; text with split specials skips them.
    const body = splitSpecialOf(opts) ? this.impl.encode(text, true) : this.encodeBody(text);
    if (opts.addSpecialTokens === false) return body;
    return this.wrapIds(body);
  }

  /**
   * Frees the native encoder and the caches now, instead of when the garbage collector gets
   * to this object (as tiktoken's `free()`): a process that loads many tokenizers keeps
   * only the live ones. Every later encode, count or decode, and every session made from
   * this tokenizer, throws PromptencError E_DISPOSED. Idempotent.
   */
  dispose(): void {
    this.impl.dispose?.();
    this.impl = disposedBackend(this.impl.kind);
    this.cache = undefined;
    this.disposed = true;
  }

  /** Sessions answer some calls from their own state: they ask here first. */
  private checkLive(): void {
    if (this.disposed) throw disposedError();
  }

  count(text: string, opts: EncodeOptions = {}): number {
    checkText(text);
    checkOptions(opts, 'options');
    this.checkSize(text);
    const n = splitSpecialOf(opts) ? this.impl.encode(text, true).length : this.cache ? this.encodeBody(text).length : this.impl.count(text);
    return opts.addSpecialTokens === false ? n : n + this.wrap.prefix.length + this.wrap.suffix.length;
  }

  async encodeAsync(text: string, opts: EncodeOptions = {}): Promise<Uint32Array> {
    checkText(text);
    checkOptions(opts, 'options');
    this.checkSize(text);
    // With split specials the encode runs on this thread (the async native path has no such flag).
    const body = splitSpecialOf(opts) ? this.impl.encode(text, true) : await this.impl.encodeAsync(text);
    return opts.addSpecialTokens === false ? body : this.wrapIds(body);
  }

  /** Encode many texts; with the native backend this runs on up to `threads` worker threads. */
  async encodeBatch(texts: readonly string[], opts: BatchOptions = {}): Promise<Uint32Array[]> {
    const threads = checkBatch(texts, opts);
    for (let i = 0; i < texts.length; i++) this.checkSize(texts[i]!, `texts[${i}]`);
    const out = splitSpecialOf(opts) ? texts.map((t) => this.impl.encode(t, true)) : await this.impl.encodeBatch(texts, threads);
    return opts.addSpecialTokens === false ? out : out.map((ids) => this.wrapIds(ids));
  }

  decode(ids: Uint32Array | readonly number[], opts: DecodeOptions = {}): string {
    checkOptions(opts, 'options');
    return this.impl.decode(toIdArray(ids), opts.skipSpecialTokens === true);
  }

  /**
   * A streaming detokenizer: push(ids) returns the text that became final, never half a UTF-8
   * sequence; the outputs concatenate to decode(all ids). See src/output/decoder.ts.
   */
  createDecoder(opts: DecoderOptions = {}): StreamDecoder {
    return createStreamDecoder(this.impl, opts);
  }

  /**
   * The format of this model's output (src/output/detect.ts), guessed from its chat template,
   * else from its added tokens; undefined when neither shows one promptenc parses.
   */
  get outputFormat(): OutputFormat | undefined {
    const t = this.templates.default ?? this.templates.named.get('tool_use');
    return (t !== undefined ? outputFormatOfTemplate(t) : undefined) ?? outputFormatOfTokens([...this.addedTokens.values()].map((a) => a.content));
  }

  /**
   * parseAssistantOutput with this model's format (or `opts.format`); `opts.prompt`, the rendered
   * prompt, tells whether the output starts inside reasoning (a prompt that ends with `<think>`).
   */
  parseOutput(text: string, opts: OutputOptions = {}): ParsedOutput {
    return parseAssistantOutput(text, this.outputOptions(opts));
  }

  /** createOutputParser with this model's format; see parseOutput. */
  createOutputParser(opts: OutputOptions = {}): OutputParser {
    return createOutputParser(this.outputOptions(opts));
  }

  private outputOptions(opts: OutputOptions): { format: OutputFormat; tools?: readonly unknown[]; startInReasoning?: boolean } {
    checkOptions(opts, 'options');
    const format = opts.format ?? this.outputFormat;
    if (format === undefined) {
      throw new PromptencError('E_ARGUMENT', `${this.tokenizerPath}: the output format cannot be told from this model's chat template; pass options.format`);
    }
    if (opts.prompt !== undefined && typeof opts.prompt !== 'string') {
      throw new PromptencError('E_ARGUMENT', `options.prompt: expected the rendered prompt string, received ${describeValue(opts.prompt)}`);
    }
    const startInReasoning = opts.startInReasoning ?? (opts.prompt !== undefined ? promptOpensReasoning(opts.prompt) : undefined);
    return { format, tools: opts.tools, startInReasoning };
  }

  /** The prompt string, exactly as transformers' apply_chat_template(tokenize=False) renders it. */
  renderChat(messages: ChatMessage[], opts: ChatOptions = {}): string {
    const inputs = this.renderInputs(messages, opts);
    if (contentAsText(opts)) return this.renderProvenance(inputs).text;
    return this.attributed(inputs, () => inputs.template.render(inputs.ctx));
  }

  /** contentSpecialTokens 'text': the render with the offsets of caller text (src/content-provenance.ts). */
  private renderProvenance(inputs: ReturnType<PromptTokenizer['renderInputs']>): { text: string; spans: number[] } {
    const { source, ctx } = inputs;
    const limits = this.templateLimits;
    try {
      return renderWithProvenance(source, ctx, limits);
    } catch (err) {
      if (!(err instanceof PromptencError)) throw err;
      throw attributeTemplateError(err, inputs.given, (n) => renderWithProvenance(source, { ...ctx, messages: ctx.messages.slice(0, n) }, limits).text);
    }
  }

  private encodeContentAsText(messages: ChatMessage[], opts: ChatOptions): Uint32Array {
    const { text, spans } = this.renderProvenance(this.renderInputs(messages, opts));
    this.checkSize(text, 'the rendered prompt');
    checkProvenanceTokenizer(this.json);
    const impl = this.impl;
    return encodeSegments(provenanceSegments(text, spans, this.scanner), (t) => impl.encodeOrdinary(t));
  }

  /** @internal sessions: renderChat reusing `memo` (see ChatTemplate.renderIncremental). */
  renderChatIncremental(messages: ChatMessage[], opts: ChatOptions, memo: RenderMemo): ReturnType<ChatTemplate['renderIncremental']> {
    this.checkLive();
    const inputs = this.renderInputs(messages, opts);
    if (contentAsText(opts)) throw new PromptencError('E_ARGUMENT', "options.contentSpecialTokens 'text': sessions do not support it; use encodeChat");
    return this.attributed(inputs, () => inputs.template.renderIncremental(inputs.ctx, memo));
  }

  /** A template error names the message it failed on (see attributeTemplateError). */
  private attributed<T>(inputs: { template: ChatTemplate; ctx: RenderContext; given: readonly ChatMessage[] }, render: () => T): T {
    try {
      return render();
    } catch (err) {
      if (!(err instanceof PromptencError)) throw err;
      const { template, ctx } = inputs;
      throw attributeTemplateError(err, inputs.given, (n) => template.render({ ...ctx, messages: ctx.messages.slice(0, n) }));
    }
  }

  private renderInputs(
    messages: ChatMessage[],
    opts: ChatOptions,
  ): { template: ChatTemplate; source: string; ctx: RenderContext; given: readonly ChatMessage[] } {
    checkOptions(opts, 'options');
    checkChatOptions(opts);
    // A plain-data copy first: getters, Proxies and cycles fail here with E_MESSAGES_INVALID.
    const checked = validateMessages(snapshotMessages(messages, 'messages') as ChatMessage[]);
    const tools = validateTools(opts.tools === undefined ? undefined : (snapshotMessages(opts.tools, 'options.tools') as typeof opts.tools));
    if (opts.kwargs !== undefined) checkOptions(opts.kwargs, 'options.kwargs');
    const source = this.templateSource(opts.chatTemplate, tools);
    const raw = opts.normalize === 'none';
    return {
      template: compileTemplate(source, this.templateLimits),
      source,
      given: checked,
      ctx: {
        messages: raw ? checked : normalizeMessages(checked, detectContentFormat(source)),
        tools,
        addGenerationPrompt: opts.addGenerationPrompt ?? true,
        specialTokens: this.specialStrings,
        kwargs: opts.kwargs,
        now: opts.now,
        argumentsAsGiven: raw,
      },
    };
  }

  /**
   * apply_chat_template(tokenize=True): the rendered prompt encoded with no extra special
   * tokens, because the template already wrote BOS where the model wants it.
   */
  encodeChat(messages: ChatMessage[], opts: ChatOptions = {}): Uint32Array {
    if (contentAsText(opts)) return this.encodeContentAsText(messages, opts);
    return this.encodeBody(this.renderChat(messages, opts));
  }

  countChat(messages: ChatMessage[], opts: ChatOptions = {}): number {
    if (contentAsText(opts)) return this.encodeContentAsText(messages, opts).length;
    const prompt = this.renderChat(messages, opts);
    this.checkSize(prompt, 'the rendered prompt');
    return this.cache ? this.encodeBody(prompt).length : this.impl.count(prompt);
  }

  /**
   * Which tokens of the prompt each message, the tool list and the template produced.
   * The parts sum to `total`, which equals countChat. The rule is in src/accounting.ts.
   */
  countChatByMessage(messages: ChatMessage[], opts: ChatOptions = {}): ChatTokenBreakdown {
    if (contentAsText(opts)) throw new PromptencError('E_ARGUMENT', "options.contentSpecialTokens 'text': countChatByMessage does not support it");
    const { template, ctx } = this.renderInputs(messages, opts);
    const prompt = template.render(ctx);
    const ids = this.encodeBody(prompt);
    const checked = ctx.messages;
    let spans: ReturnType<typeof searchSpans> | undefined;
    try {
      const marked = template.render({ ...ctx, wrap: markerWrapper() });
      const stripped = stripMarkers(marked);
      if (stripped && stripped.text === prompt) spans = stripped.spans;
    } catch {
      // A template that inspects text may fail on marked text; fall back to searching.
    }
    spans ??= searchSpans(
      prompt,
      checked.map((m) => (typeof m.content === 'string' ? m.content : undefined)),
    );
    const starts = tokenStarts(prompt, ids, this.tokenLengths, this.scanner) ?? this.approximateStarts(prompt, ids);
    const b = attribute(prompt.length, starts, spans, checked.length);
    if (!ctx.tools || ctx.tools.length === 0) return b;
    // The same template without the tools: what they cost is the difference.
    const bare = template.render({ ...ctx, tools: undefined });
    return withToolCost(b, this.encodeBody(bare).length, bare === prompt);
  }

  /**
   * gpt-tokenizer's isWithinTokenLimit: the token count of a text (as `count`) or of a chat (as
   * `countChat`) when it is at most `limit`, else false. Encoding stops once the limit is
   * passed, so a 10 MB text over a 4 K limit costs about what its first few KB cost (the text is
   * counted in chunks cut where the count is additive; see countWithinBudget).
   */
  isWithinTokenLimit(input: string | ChatMessage[], limit: number, opts: ChatOptions & EncodeOptions = {}): number | false {
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 0) {
      throw new PromptencError('E_ARGUMENT', `limit: expected a non-negative integer, received ${describeValue(limit)}`);
    }
    checkOptions(opts, 'options');
    let text: string;
    let extra = 0;
    if (typeof input === 'string') {
      checkText(input, 'input');
      const { addSpecialTokens, splitSpecialTokens, ...rest } = opts;
      const stray = Object.keys(rest)[0];
      if (stray !== undefined)
        throw new PromptencError('E_ARGUMENT', `options.${stray}: not an option of isWithinTokenLimit for a text (addSpecialTokens, splitSpecialTokens)`);
      if (splitSpecialTokens === true) {
        // Special-token text read as text: a rare mode, counted whole.
        const n = this.count(input, { addSpecialTokens, splitSpecialTokens });
        return n <= limit ? n : false;
      }
      text = input;
      if (addSpecialTokens !== false) extra = this.wrap.prefix.length + this.wrap.suffix.length;
    } else {
      const { addSpecialTokens: _a, splitSpecialTokens: _s, ...chat } = opts;
      if (contentAsText(chat)) {
        const n = this.countChat(input, chat);
        return n <= limit ? n : false;
      }
      text = this.renderChat(input, chat);
    }
    if (limit - extra < 0) return false;
    const family = preTokenizerFamily(this.json);
    const chunked = !this.cache && this.tokenLengths !== undefined && family !== undefined && family !== 'gpt2';
    const n = countWithinBudget(text, limit - extra, (chunk) => (this.cache ? this.encodeBody(chunk).length : this.impl.count(chunk)), this.scanner, chunked);
    return n < 0 ? false : n + extra;
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
   * See src/fit-chat.ts for the search and its cost.
   */
  fitChat(messages: ChatMessage[], opts: FitOptions): FitResult {
    if (contentAsText(opts)) throw new PromptencError('E_ARGUMENT', "options.contentSpecialTokens 'text': fitChat does not support it");
    // The search reads the messages itself: it gets the guarded copy, the caller its own objects back.
    const plain = snapshotMessages(messages, 'messages') as ChatMessage[];
    const fit = fitChat(this, plain, opts);
    const drop = new Set(fit.dropped);
    return { ...fit, messages: messages.filter((_, i) => !drop.has(i)) };
  }

  /** @internal FitChatHost: encodeChat's count of a rendered prompt, through `cache`. */
  countPrompt(prompt: string, cache: SegmentCache): number {
    return this.encodeBody(prompt, cache).length;
  }

  /** @internal FitChatHost: a plain count of text (addSpecialTokens false, no cache). */
  countText(text: string): number {
    this.checkSize(text);
    return this.impl.count(text);
  }

  private wrapIds(body: Uint32Array): Uint32Array {
    return this.wrap.prefix.length === 0 && this.wrap.suffix.length === 0 ? body : framed(this.wrap, body);
  }

  private templateSource(override: string | undefined, tools: unknown[] | undefined): string {
    if (override !== undefined) {
      if (typeof override !== 'string')
        throw new PromptencError('E_ARGUMENT', `options.chatTemplate: expected a template source string, received ${describeValue(override)}`);
      const named = this.templates.named.get(override);
      if (named !== undefined) return named;
      // vLLM's test for "a name, not a template": none of the characters `{`, `}`, newline.
      if (!/[{}\n]/.test(override)) {
        const names = [...this.templates.named.keys()];
        throw new PromptencError(
          'E_TEMPLATE_MISSING',
          `options.chatTemplate: ${JSON.stringify(override)} is not a named template of ${this.tokenizerPath} (${names.length > 0 ? `it has: ${names.join(', ')}` : 'it has no named templates'}); pass a template source or one of those names`,
        );
      }
      return override;
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
 * Load a tokenizer from a model directory, a tokenizer.json path or a bundled name: read the
 * files, create the backend, check the added-token ids against the backend's vocabulary, and
 * build the PromptTokenizer.
 */
/** options.contentSpecialTokens is 'text' (checkChatOptions checks the value). */
function contentAsText(opts: unknown): boolean {
  return opts !== null && typeof opts === 'object' && (opts as ChatOptions).contentSpecialTokens === 'text';
}

export async function loadTokenizer(source: string, opts: LoadOptions = {}): Promise<PromptTokenizer> {
  checkOptions(opts, 'options');
  const choice = opts.backend ?? 'auto';
  checkBackendChoice(choice);
  const maxInputBytes = checkMaxInputBytesOption(opts.maxInputBytes);
  const templateLimits = checkTemplateLimits(opts.templateLimits);
  const files = await readTokenizerFiles(source, { scan: await modelScanner(choice), ...(opts.encoding !== undefined && { encoding: opts.encoding }) });
  const backend = await createBackend({ tokenizerJson: files.tokenizerJson, tokenizerConfig: files.tokenizerConfig, prescanned: files.prescanned }, choice);
  if (backend.vocabulary) checkAddedTokenIds(files.tokenizerJson, backend.vocabulary, files.tokenizerPath);
  const tok = new PromptTokenizer(backend, files);
  tok.setMaxInputBytes(maxInputBytes);
  tok.templateLimits = templateLimits;
  if (opts.segmentCache !== undefined) tok.enableSegmentCache(opts.segmentCache);
  return tok;
}
