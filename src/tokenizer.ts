import { PromptencError, describeValue } from './errors.js';
import { readTokenizerFiles, type TokenizerFiles } from './load.js';
import { sequenceWrap, specialTokenStrings, type SequenceWrap } from './postprocess.js';
import { createBackend } from './backend/select.js';
import type { Backend, BackendChoice, BackendKind } from './backend/types.js';
import { compileTemplate } from './template/render.js';
import { validateMessages, validateTools, type ChatMessage, type ToolDefinition } from './template/messages.js';

export interface LoadOptions {
  /** 'auto' (default) uses the native core when it handles this tokenizer exactly, else JS. */
  backend?: BackendChoice;
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
    const vocab = files.tokenizerJson.model.vocab as Record<string, number>;
    const tokenToId = (s: string) => addedByContent.get(s) ?? (Array.isArray(vocab) ? undefined : vocab[s]);
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
  }

  /** The model's default chat template source, if it has one. */
  get chatTemplate(): string | undefined {
    return this.templates.default;
  }

  encode(text: string, opts: EncodeOptions = {}): Uint32Array {
    checkText(text);
    checkOptions(opts, 'options');
    const body = this.impl.encode(text);
    if (opts.addSpecialTokens === false) return body;
    return this.wrapIds(body);
  }

  count(text: string, opts: EncodeOptions = {}): number {
    checkText(text);
    checkOptions(opts, 'options');
    const n = this.impl.count(text);
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
    checkOptions(opts, 'options');
    const checked = validateMessages(messages);
    const tools = validateTools(opts.tools);
    if (opts.kwargs !== undefined) checkOptions(opts.kwargs, 'options.kwargs');
    const source = this.templateSource(opts.chatTemplate, tools);
    return compileTemplate(source).render({
      messages: checked,
      tools,
      addGenerationPrompt: opts.addGenerationPrompt ?? true,
      specialTokens: this.specialStrings,
      kwargs: opts.kwargs,
      now: opts.now,
    });
  }

  /**
   * apply_chat_template(tokenize=True): the rendered prompt encoded with no extra special
   * tokens, because the template already wrote BOS where the model wants it.
   */
  encodeChat(messages: ChatMessage[], opts: ChatOptions = {}): Uint32Array {
    return this.impl.encode(this.renderChat(messages, opts));
  }

  countChat(messages: ChatMessage[], opts: ChatOptions = {}): number {
    return this.impl.count(this.renderChat(messages, opts));
  }

  private wrapIds(body: Uint32Array): Uint32Array {
    const { prefix, suffix } = this.wrap;
    if (prefix.length === 0 && suffix.length === 0) return body;
    const out = new Uint32Array(prefix.length + body.length + suffix.length);
    out.set(prefix, 0);
    out.set(body, prefix.length);
    out.set(suffix, prefix.length + body.length);
    return out;
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

/** Load a tokenizer from a model directory, a tokenizer.json path or a bundled name. */
export async function loadTokenizer(source: string, opts: LoadOptions = {}): Promise<PromptTokenizer> {
  checkOptions(opts, 'options');
  const choice = opts.backend ?? 'auto';
  if (choice !== 'auto' && choice !== 'native' && choice !== 'js') {
    throw new PromptencError('E_ARGUMENT', `options.backend: expected 'auto', 'native' or 'js', received ${describeValue(choice)}`);
  }
  const files = await readTokenizerFiles(source);
  const impl = await createBackend({ tokenizerJson: files.tokenizerJson, tokenizerConfig: files.tokenizerConfig }, choice);
  return new PromptTokenizer(impl, files);
}
