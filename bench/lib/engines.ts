/**
 * Benchmark engines behind one interface: promptenc (native, js) and the peers a user would
 * otherwise reach for. Peers are devDependencies, so each is loaded with a dynamic import()
 * inside try/catch; an engine that is not installed, cannot load, or does not speak this
 * model's vocabulary is reported as `missing` with the reason. Nothing is ever substituted.
 *
 * Every engine encodes "as HF encode(text, add_special_tokens=False)": added/special tokens
 * that appear in the text are split out (tiktoken-family peers get allowed_special = all and,
 * for gpt-oss, the harmony specials from the model's own added_tokens).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLED_MODELS, loadTokenizer, PromptencError, type PromptTokenizer } from 'promptenc';

const require = createRequire(import.meta.url);

export const ENGINE_NAMES = ['promptenc-native', 'promptenc-js', 'hf-tokenizers', 'tiktoken', 'gpt-tokenizer', 'ai-tokenizer', 'hypertok'] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];
export const PEER_NAMES: readonly EngineName[] = ['hf-tokenizers', 'tiktoken', 'gpt-tokenizer', 'ai-tokenizer', 'hypertok'];

const PACKAGES: Record<EngineName, string> = {
  'promptenc-native': 'promptenc',
  'promptenc-js': 'promptenc',
  'hf-tokenizers': 'tokenizers',
  tiktoken: 'tiktoken',
  'gpt-tokenizer': 'gpt-tokenizer',
  'ai-tokenizer': 'ai-tokenizer',
  hypertok: 'hypertok',
};

type Ids = ArrayLike<number>;

export interface Engine {
  name: EngineName;
  status: 'ok';
  package: string;
  version: string;
  /** Engines with the same key produce the same IDs for the same text, so they are compared. */
  vocabulary: string;
  /** Build time of the tokenizer object (file read + parse + tables), excluding the module import. */
  loadMs: number;
  /** Time of the module's dynamic import() (first use in this process). */
  importMs: number;
  /** RSS after this engine was loaded, bytes (process-wide, so only the first is clean). */
  rssAfterLoad: number;
  /** True when encode/count return promises (Rust tokenizers). */
  async: boolean;
  /** How count is implemented: a dedicated API, or encode().length. */
  countApi: 'count' | 'encode().length';
  encode(text: string): Ids | Promise<Ids>;
  count(text: string): number | Promise<number>;
  /** Only engines whose thread count we control (promptenc). */
  encodeBatch?: (texts: readonly string[], threads: number) => Promise<Ids[]>;
  /**
   * A new, independent tokenizer of the same engine (empty caches), for cold timings: a fresh
   * tokenizer's first pass. Absent when the engine cannot make one (a module-level singleton).
   */
  fresh?: () => Promise<{ encode(text: string): Ids; dispose?: () => void }>;
  /** The PromptTokenizer behind promptenc engines (chat timing uses it). */
  tokenizer?: PromptTokenizer;
  dispose?: () => void;
}

export interface MissingEngine {
  name: EngineName;
  status: 'missing';
  package: string;
  version?: string;
  reason: string;
}

export type EngineSlot = Engine | MissingEngine;

/** Version of an installed package, read from its package.json; undefined when not installed. */
export function packageVersion(pkg: string): string | undefined {
  if (pkg === 'promptenc') {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
    return (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
  }
  let entry: string;
  try {
    entry = require.resolve(pkg);
  } catch {
    return undefined;
  }
  // Walk up from the entry point: several packages do not export ./package.json.
  let dir = path.dirname(entry);
  for (let i = 0; i < 6; i++) {
    try {
      const json = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (json.name === pkg && json.version) return json.version;
    } catch {
      // no package.json at this level
    }
    dir = path.dirname(dir);
  }
  return undefined;
}

/** The OpenAI encoding a bundled model's IDs equal, or undefined when it is not an OpenAI vocabulary. */
export function openAiEncoding(tokenizerPath: string): 'o200k_base' | 'o200k_harmony' | undefined {
  for (const [name, pkg] of Object.entries(BUNDLED_MODELS)) {
    let p: string;
    try {
      p = require.resolve(`${pkg}/models/tokenizer.json`);
    } catch {
      continue;
    }
    if (path.resolve(p) !== path.resolve(tokenizerPath)) continue;
    if (name === 'gpt-4o') return 'o200k_base';
    if (name === 'gpt-oss') return 'o200k_harmony';
  }
  return undefined;
}

/** The bundled model whose tokenizer.json is at tokenizerPath, if any. */
export function bundledName(tokenizerPath: string): string | undefined {
  for (const [name, pkg] of Object.entries(BUNDLED_MODELS)) {
    try {
      if (path.resolve(require.resolve(`${pkg}/models/tokenizer.json`)) === path.resolve(tokenizerPath)) return name;
    } catch {
      // not installed
    }
  }
  return undefined;
}

async function timed<T>(fn: () => Promise<T> | T): Promise<{ value: T; ms: number }> {
  const t0 = process.hrtime.bigint();
  const value = await fn();
  return { value, ms: Number(process.hrtime.bigint() - t0) / 1e6 };
}

function missing(name: EngineName, reason: string): MissingEngine {
  const version = packageVersion(PACKAGES[name]);
  return { name, status: 'missing', package: PACKAGES[name], ...(version ? { version } : {}), reason };
}

function firstLine(err: unknown): string {
  const e = err as { code?: string; message?: string };
  const msg = (e?.message ?? String(err)).split('\n')[0]!;
  return e?.code && !msg.includes(e.code) ? `${e.code}: ${msg}` : msg;
}

export interface LoadContext {
  /** Bundled name, model directory or tokenizer.json path. */
  source: string;
  tokenizerPath: string;
  /** Added tokens of the model: the special tokens tiktoken-family peers must also split out. */
  addedTokens: Record<string, number>;
  openai: 'o200k_base' | 'o200k_harmony' | undefined;
  /** The bundled model name when source is (or resolves to) one, else undefined. */
  bundled: string | undefined;
  vocabulary: string;
}

/**
 * Resolve the source through the public API: a loaded tokenizer names its tokenizer.json and
 * its added tokens (the same `added_tokens` of tokenizer.json the peers must split out). The
 * tokenizer is dropped here; each promptenc engine loads its own, timed.
 */
export async function loadContext(source: string): Promise<LoadContext> {
  const tok = await loadTokenizer(source);
  const tokenizerPath = tok.tokenizerPath;
  const addedTokens: Record<string, number> = {};
  for (const [id, t] of tok.addedTokens) addedTokens[t.content] = id;
  const openai = openAiEncoding(tokenizerPath);
  return {
    source,
    tokenizerPath,
    addedTokens,
    openai,
    bundled: bundledName(tokenizerPath),
    // OpenAI models' HF IDs equal the tiktoken encoding's IDs, so every engine shares one key.
    vocabulary: openai ?? `hf:${path.basename(path.dirname(path.dirname(tokenizerPath)))}/${path.basename(path.dirname(tokenizerPath))}`,
  };
}

async function promptencEngine(ctx: LoadContext, backend: 'native' | 'js'): Promise<EngineSlot> {
  const name: EngineName = backend === 'native' ? 'promptenc-native' : 'promptenc-js';
  let loaded;
  try {
    loaded = await timed(() => loadTokenizer(ctx.source, { backend }));
  } catch (err) {
    if (err instanceof PromptencError) return missing(name, firstLine(err));
    throw err;
  }
  const tok = loaded.value;
  return {
    name,
    status: 'ok',
    package: 'promptenc',
    version: `${packageVersion('promptenc')} (${backend})`,
    vocabulary: ctx.vocabulary,
    loadMs: loaded.ms,
    importMs: 0,
    rssAfterLoad: process.memoryUsage().rss,
    async: false,
    countApi: 'count',
    encode: (text) => tok.encode(text, { addSpecialTokens: false }),
    count: (text) => tok.count(text, { addSpecialTokens: false }),
    encodeBatch: (texts, threads) => tok.encodeBatch(texts, { threads, addSpecialTokens: false }),
    fresh: async () => {
      const t = await loadTokenizer(ctx.source, { backend });
      return { encode: (text: string) => t.encode(text, { addSpecialTokens: false }) };
    },
    tokenizer: tok,
  };
}

async function hfTokenizersEngine(ctx: LoadContext): Promise<EngineSlot> {
  // A single encode() does not use tokenizers' rayon pool, so disabling the pool costs it
  // nothing and keeps idle pool workers from competing with the engine being timed. (An
  // early A/B here suggested a 2× effect, but the machine was shared and later CPU-share
  // samples showed that noise of that size; so this is a precaution, not a measured win.)
  // The user's explicit setting wins.
  process.env.TOKENIZERS_PARALLELISM ??= 'false';
  let mod: { default?: unknown; Tokenizer?: unknown };
  const imp = await timed(async () => {
    try {
      return (await import('tokenizers')) as typeof mod;
    } catch (err) {
      return err as Error;
    }
  });
  if (imp.value instanceof Error) return missing('hf-tokenizers', `not installed or failed to load: ${firstLine(imp.value)}`);
  mod = imp.value;
  // CJS napi package: the classes hang off the default export.
  const Tokenizer = ((mod.default as { Tokenizer?: unknown } | undefined)?.Tokenizer ?? mod.Tokenizer) as
    | { fromFile(p: string): { encode(t: string, pair: null, o: { addSpecialTokens: boolean }): Promise<{ getIds(): number[]; getLength(): number }> } }
    | undefined;
  if (!Tokenizer) return missing('hf-tokenizers', 'the tokenizers module has no Tokenizer export');
  let loaded;
  try {
    loaded = await timed(() => Tokenizer.fromFile(ctx.tokenizerPath));
  } catch (err) {
    return missing('hf-tokenizers', `Tokenizer.fromFile failed: ${firstLine(err)}`);
  }
  const t = loaded.value;
  const opts = { addSpecialTokens: false };
  return {
    name: 'hf-tokenizers',
    status: 'ok',
    package: 'tokenizers',
    version: packageVersion('tokenizers') ?? 'unknown',
    vocabulary: ctx.vocabulary,
    loadMs: loaded.ms,
    importMs: imp.ms,
    rssAfterLoad: process.memoryUsage().rss,
    async: true,
    countApi: 'encode().length',
    encode: async (text) => (await t.encode(text, null, opts)).getIds(),
    count: async (text) => (await t.encode(text, null, opts)).getLength(),
  };
}

function notOpenAi(name: EngineName, ctx: LoadContext): MissingEngine {
  return missing(name, `not applicable: ${name} only ships OpenAI encodings (o200k, cl100k, …) and ${ctx.source} is not an OpenAI vocabulary`);
}

async function tiktokenEngine(ctx: LoadContext): Promise<EngineSlot> {
  if (!ctx.openai) return notOpenAi('tiktoken', ctx);
  const imp = await timed(async () => {
    try {
      return await import('tiktoken');
    } catch (err) {
      return err as Error;
    }
  });
  if (imp.value instanceof Error) return missing('tiktoken', `not installed or failed to load: ${firstLine(imp.value)}`);
  const tk = imp.value as unknown as {
    get_encoding(n: string): { encode(t: string, allowed: 'all'): Uint32Array; free(): void };
    Tiktoken: new (ranks: string, special: Record<string, number>, pat: string) => { encode(t: string, allowed: 'all'): Uint32Array; free(): void };
  };
  let loaded;
  try {
    loaded = await timed(async () => {
      if (ctx.openai === 'o200k_base') return tk.get_encoding('o200k_base');
      // tiktoken 1.0.x has no o200k_harmony: it is o200k_base's ranks plus the harmony specials,
      // which we take from the model's own added_tokens so that both sides split the same strings.
      const enc = (await import('tiktoken/encoders/o200k_base.json', { with: { type: 'json' } })).default as {
        bpe_ranks: string;
        special_tokens: Record<string, number>;
        pat_str: string;
      };
      return new tk.Tiktoken(enc.bpe_ranks, { ...enc.special_tokens, ...ctx.addedTokens }, enc.pat_str);
    });
  } catch (err) {
    return missing('tiktoken', `could not build ${ctx.openai}: ${firstLine(err)}`);
  }
  const enc = loaded.value;
  return {
    name: 'tiktoken',
    status: 'ok',
    package: 'tiktoken',
    version: packageVersion('tiktoken') ?? 'unknown',
    vocabulary: ctx.vocabulary,
    loadMs: loaded.ms,
    importMs: imp.ms,
    rssAfterLoad: process.memoryUsage().rss,
    async: false,
    countApi: 'encode().length',
    encode: (text) => enc.encode(text, 'all'),
    count: (text) => enc.encode(text, 'all').length,
    dispose: () => enc.free(),
  };
}

async function gptTokenizerEngine(ctx: LoadContext): Promise<EngineSlot> {
  if (!ctx.openai) return notOpenAi('gpt-tokenizer', ctx);
  const imp = await timed(async () => {
    try {
      return (await import(`gpt-tokenizer/encoding/${ctx.openai}`)) as Record<string, unknown>;
    } catch (err) {
      return err as Error;
    }
  });
  if (imp.value instanceof Error) return missing('gpt-tokenizer', `not installed or has no ${ctx.openai}: ${firstLine(imp.value)}`);
  const mod = imp.value as {
    encode(t: string, o: { allowedSpecial: unknown }): number[];
    countTokens(t: string, o: { allowedSpecial: unknown }): number;
    ALL_SPECIAL_TOKENS: unknown;
  };
  // The encoder is built when the module is evaluated, so load time is the import.
  const t0 = process.hrtime.bigint();
  const opts = { allowedSpecial: mod.ALL_SPECIAL_TOKENS };
  mod.encode('warm', opts);
  const firstCallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  return {
    name: 'gpt-tokenizer',
    status: 'ok',
    package: 'gpt-tokenizer',
    version: packageVersion('gpt-tokenizer') ?? 'unknown',
    vocabulary: ctx.vocabulary,
    loadMs: imp.ms + firstCallMs,
    importMs: imp.ms,
    rssAfterLoad: process.memoryUsage().rss,
    async: false,
    countApi: 'count',
    encode: (text) => mod.encode(text, opts),
    count: (text) => mod.countTokens(text, opts),
  };
}

async function aiTokenizerEngine(ctx: LoadContext): Promise<EngineSlot> {
  if (!ctx.openai) return notOpenAi('ai-tokenizer', ctx);
  const imp = await timed(async () => {
    try {
      const [main, enc] = await Promise.all([import('ai-tokenizer'), import('ai-tokenizer/encoding/o200k_base')]);
      return { main: main as Record<string, unknown>, enc: enc as Record<string, unknown> };
    } catch (err) {
      return err as Error;
    }
  });
  if (imp.value instanceof Error) return missing('ai-tokenizer', `not installed or failed to load: ${firstLine(imp.value)}`);
  const Tokenizer = (imp.value.main.Tokenizer ?? imp.value.main.default) as new (
    data: unknown,
    extraSpecial?: Record<string, number>,
  ) => { encode(t: string, allowed: string[]): number[]; count(t: string): number };
  let loaded;
  try {
    // o200k_harmony = o200k_base + the model's added tokens as extra specials.
    loaded = await timed(
      () => new Tokenizer(imp.value instanceof Error ? undefined : imp.value.enc, ctx.openai === 'o200k_harmony' ? ctx.addedTokens : undefined),
    );
  } catch (err) {
    return missing('ai-tokenizer', `could not build ${ctx.openai}: ${firstLine(err)}`);
  }
  const t = loaded.value;
  // encode(text, 'all') takes its ordinary-text path (specials are NOT split), so the
  // allowed list is passed explicitly: every special it knows, as HF splits every added token.
  const enc = imp.value instanceof Error ? undefined : (imp.value.enc as { special_tokens?: Record<string, number> });
  const allowed = Object.keys({ ...(enc?.special_tokens ?? {}), ...(ctx.openai === 'o200k_harmony' ? ctx.addedTokens : {}) });
  return {
    name: 'ai-tokenizer',
    status: 'ok',
    package: 'ai-tokenizer',
    version: packageVersion('ai-tokenizer') ?? 'unknown',
    vocabulary: ctx.vocabulary,
    loadMs: loaded.ms,
    importMs: imp.ms,
    rssAfterLoad: process.memoryUsage().rss,
    async: false,
    // Its count(input) is encode(input).length with the default policy (throws on special-token text).
    countApi: 'encode().length',
    encode: (text) => t.encode(text, allowed),
    count: (text) => t.encode(text, allowed).length,
  };
}

/** hypertok's vocabulary package for a bundled model: exact for the text outside added tokens. */
const HYPERTOK_VOCABS: Record<string, string> = { 'gpt-4o': 'o200k', 'gpt-oss': 'o200k', llama3: 'llama3' };

async function hypertokEngine(ctx: LoadContext): Promise<EngineSlot> {
  const vocab = ctx.bundled ? HYPERTOK_VOCABS[ctx.bundled] : undefined;
  if (!vocab) {
    return missing('hypertok', `not applicable: no hypertok vocabulary package for ${ctx.source} (it has o200k for gpt-4o/gpt-oss and llama3 for llama3)`);
  }
  const imp = await timed(async () => {
    try {
      return (await import('hypertok')) as unknown as Record<string, unknown>;
    } catch (err) {
      return err as Error;
    }
  });
  if (imp.value instanceof Error) return missing('hypertok', `not installed or failed to load: ${firstLine(imp.value)}`);
  type Ht = { encodeSync(t: string, o?: unknown): Uint32Array; free(): void };
  const fromBytes = imp.value.fromBytes as (b: Uint8Array, o: { tier: 'single' }) => Promise<Ht>;
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(readFileSync(require.resolve(`@hypertok/vocab-${vocab}/vocab.htk`)));
  } catch (err) {
    return missing('hypertok', `@hypertok/vocab-${vocab} is not installed: ${firstLine(err)}`);
  }
  let loaded;
  try {
    loaded = await timed(() => fromBytes(bytes, { tier: 'single' }));
  } catch (err) {
    return missing('hypertok', `fromBytes(@hypertok/vocab-${vocab}) failed: ${firstLine(err)}`);
  }
  const t = loaded.value;
  // Reserved (special) tokens in the text are matched, as HF splits out added tokens (the
  // agreement check shows whether its reserved set is the model's added tokens). That option
  // costs hypertok ~3x on plain text, so it is passed only when the text could hold one: every
  // special token of o200k and Llama 3 starts with "<|".
  const opts = { reserved: { match: 'all' } };
  const encodeWith = (h: Ht) => (text: string) => (text.includes('<|') ? h.encodeSync(text, opts) : h.encodeSync(text));
  return {
    name: 'hypertok',
    status: 'ok',
    package: 'hypertok',
    version: `${packageVersion('hypertok') ?? 'unknown'} (@hypertok/vocab-${vocab} ${packageVersion(`@hypertok/vocab-${vocab}`) ?? '?'}, tier single)`,
    vocabulary: ctx.vocabulary,
    loadMs: loaded.ms,
    importMs: imp.ms,
    rssAfterLoad: process.memoryUsage().rss,
    async: false,
    countApi: 'encode().length',
    encode: encodeWith(t),
    count: (text) => encodeWith(t)(text).length,
    fresh: async () => {
      const f = await fromBytes(bytes, { tier: 'single' });
      return { encode: encodeWith(f), dispose: () => f.free() };
    },
    dispose: () => t.free(),
  };
}

const LOADERS: Record<EngineName, (ctx: LoadContext) => Promise<EngineSlot>> = {
  'promptenc-native': (ctx) => promptencEngine(ctx, 'native'),
  'promptenc-js': (ctx) => promptencEngine(ctx, 'js'),
  'hf-tokenizers': hfTokenizersEngine,
  tiktoken: tiktokenEngine,
  'gpt-tokenizer': gptTokenizerEngine,
  'ai-tokenizer': aiTokenizerEngine,
  hypertok: hypertokEngine,
};

/**
 * Load the requested engines in order (promptenc first). A failure to load is a `missing`
 * entry with the reason; it never aborts the run. `afterContext` runs between reading the
 * context and the first engine (load-time.mjs collects the context's garbage there).
 */
export async function loadEngines(
  source: string,
  names: readonly EngineName[] = ENGINE_NAMES,
  opts: { afterContext?: () => void } = {},
): Promise<{ context: LoadContext; slots: EngineSlot[] }> {
  const context = await loadContext(source);
  opts.afterContext?.();
  const slots: EngineSlot[] = [];
  for (const name of names) {
    try {
      slots.push(await LOADERS[name](context));
    } catch (err) {
      slots.push(missing(name, `failed to load: ${firstLine(err)}`));
    }
  }
  return { context, slots };
}

export function parseEngineList(list: string, flag = '--peers'): EngineName[] {
  const out: EngineName[] = [];
  for (const raw of list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const name = raw === 'tokenizers' || raw === 'rust' ? 'hf-tokenizers' : raw === 'native' || raw === 'js' ? `promptenc-${raw}` : raw;
    if (!(ENGINE_NAMES as readonly string[]).includes(name)) {
      throw new PromptencError('E_ARGUMENT', `${flag}: unknown engine ${JSON.stringify(raw)}; expected a comma-separated list of ${ENGINE_NAMES.join(', ')}`);
    }
    if (!out.includes(name as EngineName)) out.push(name as EngineName);
  }
  return out;
}
