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
 * The context of a source, from a tokenizer loaded through the public API: it names its
 * tokenizer.json and its added tokens (the same `added_tokens` of tokenizer.json the peers
 * must split out).
 */
function contextOf(source: string, tok: PromptTokenizer): LoadContext {
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

/** Resolve the source with a tokenizer of its own, dropped afterwards (loadEngines reuses a promptenc engine's instead). */
export async function loadContext(source: string): Promise<LoadContext> {
  return contextOf(source, await loadTokenizer(source));
}

type Encoder = (text: string) => Ids;

/** What a peer's table entry gives the one loader: how to encode and count, and what its build left to free. */
interface PeerCalls {
  encode(text: string): Ids | Promise<Ids>;
  count(text: string): number | Promise<number>;
  async?: boolean;
  countApi: Engine['countApi'];
  version?: string;
  fresh?: Engine['fresh'];
  dispose?: () => void;
  /** With builtAtImport: the first call's time, added to loadMs (work left for the first call). */
  firstCallMs?: number;
}

/**
 * One peer: when it applies, its module import (timed as importMs), the build of its
 * tokenizer from that module (timed as loadMs) and the calls on what was built. A failure at
 * any step is a `missing` entry whose reason says which step failed.
 */
interface PeerSpec<M, B> {
  /** A reason the peer cannot speak this model's vocabulary, or undefined when it can. */
  notApplicable?(ctx: LoadContext): string | undefined;
  import(ctx: LoadContext): Promise<M>;
  /** The start of the reason when the import fails. */
  importFailure?(ctx: LoadContext): string;
  build(mod: M, ctx: LoadContext): B | Promise<B>;
  /** The start of the reason when the build fails. */
  buildFailure(ctx: LoadContext): string;
  /** The module builds its encoder while it is evaluated: loadMs is then the import plus firstCallMs. */
  builtAtImport?: boolean;
  calls(built: B, mod: M, ctx: LoadContext): PeerCalls;
}

/** A missing-engine reason raised inside a step (hypertok's vocabulary file), passed on as is. */
class Unavailable extends Error {}

function notOpenAi(name: EngineName) {
  return (ctx: LoadContext) =>
    ctx.openai ? undefined : `not applicable: ${name} only ships OpenAI encodings (o200k, cl100k, …) and ${ctx.source} is not an OpenAI vocabulary`;
}

type HfTokenizer = { encode(t: string, pair: null, o: { addSpecialTokens: boolean }): Promise<{ getIds(): number[]; getLength(): number }> };
type TiktokenEncoder = { encode(t: string, allowed: 'all'): Uint32Array; free(): void };
type TiktokenModule = {
  get_encoding(n: string): TiktokenEncoder;
  Tiktoken: new (ranks: string, special: Record<string, number>, pat: string) => TiktokenEncoder;
};
type GptTokenizerModule = {
  encode(t: string, o: { allowedSpecial: unknown }): number[];
  countTokens(t: string, o: { allowedSpecial: unknown }): number;
  ALL_SPECIAL_TOKENS: unknown;
};
type AiTokenizerModules = { main: Record<string, unknown>; enc: { special_tokens?: Record<string, number> } };
type AiTokenizer = { encode(t: string, allowed: string[]): number[] };
type Hypertok = { encodeSync(t: string, o?: unknown): Uint32Array; free(): void };
type HypertokFromBytes = (b: Uint8Array, o: { tier: 'single' }) => Promise<Hypertok>;

/** hypertok's vocabulary package for a bundled model: exact for the text outside added tokens. */
const HYPERTOK_VOCABS: Record<string, string> = { 'gpt-4o': 'o200k', 'gpt-oss': 'o200k', llama3: 'llama3' };
const hypertokVocab = (ctx: LoadContext) => (ctx.bundled ? HYPERTOK_VOCABS[ctx.bundled] : undefined);

const HF_TOKENIZERS: PeerSpec<{ default?: { Tokenizer?: unknown }; Tokenizer?: unknown }, HfTokenizer> = {
  import: async () => {
    // A single encode() does not use tokenizers' rayon pool, so disabling the pool costs it
    // nothing and keeps idle pool workers from competing with the engine being timed. (An
    // early A/B here suggested a 2× effect, but the machine was shared and later CPU-share
    // samples showed that noise of that size; so this is a precaution, not a measured win.)
    // The user's explicit setting wins.
    process.env.TOKENIZERS_PARALLELISM ??= 'false';
    return (await import('tokenizers')) as { default?: { Tokenizer?: unknown }; Tokenizer?: unknown };
  },
  build: (mod, ctx) => {
    // CJS napi package: the classes hang off the default export.
    const Tokenizer = (mod.default?.Tokenizer ?? mod.Tokenizer) as { fromFile(p: string): HfTokenizer } | undefined;
    if (!Tokenizer) throw new Unavailable('the tokenizers module has no Tokenizer export');
    return Tokenizer.fromFile(ctx.tokenizerPath);
  },
  buildFailure: () => 'Tokenizer.fromFile failed',
  calls: (t) => {
    const opts = { addSpecialTokens: false };
    return {
      async: true,
      countApi: 'encode().length',
      encode: async (text) => (await t.encode(text, null, opts)).getIds(),
      count: async (text) => (await t.encode(text, null, opts)).getLength(),
    };
  },
};

const TIKTOKEN: PeerSpec<TiktokenModule, TiktokenEncoder> = {
  notApplicable: notOpenAi('tiktoken'),
  import: async () => (await import('tiktoken')) as unknown as TiktokenModule,
  build: async (tk, ctx) => {
    if (ctx.openai === 'o200k_base') return tk.get_encoding('o200k_base');
    // tiktoken 1.0.x has no o200k_harmony: it is o200k_base's ranks plus the harmony specials,
    // which we take from the model's own added_tokens so that both sides split the same strings.
    const enc = (await import('tiktoken/encoders/o200k_base.json', { with: { type: 'json' } })).default as {
      bpe_ranks: string;
      special_tokens: Record<string, number>;
      pat_str: string;
    };
    return new tk.Tiktoken(enc.bpe_ranks, { ...enc.special_tokens, ...ctx.addedTokens }, enc.pat_str);
  },
  buildFailure: (ctx) => `could not build ${ctx.openai}`,
  calls: (enc) => ({
    countApi: 'encode().length',
    encode: (text) => enc.encode(text, 'all'),
    count: (text) => enc.encode(text, 'all').length,
    dispose: () => enc.free(),
  }),
};

const GPT_TOKENIZER: PeerSpec<GptTokenizerModule, { allowedSpecial: unknown }> = {
  notApplicable: notOpenAi('gpt-tokenizer'),
  import: async (ctx) => (await import(`gpt-tokenizer/encoding/${ctx.openai}`)) as GptTokenizerModule,
  importFailure: (ctx) => `not installed or has no ${ctx.openai}`,
  // The encoder is built when the module is evaluated; there is nothing to build.
  builtAtImport: true,
  build: (mod) => ({ allowedSpecial: mod.ALL_SPECIAL_TOKENS }),
  buildFailure: (ctx) => `could not use ${ctx.openai}`,
  calls: (opts, mod) => {
    const t0 = process.hrtime.bigint();
    mod.encode('warm', opts);
    return {
      firstCallMs: Number(process.hrtime.bigint() - t0) / 1e6,
      countApi: 'count',
      encode: (text) => mod.encode(text, opts),
      count: (text) => mod.countTokens(text, opts),
    };
  },
};

const AI_TOKENIZER: PeerSpec<AiTokenizerModules, AiTokenizer> = {
  notApplicable: notOpenAi('ai-tokenizer'),
  import: async () => {
    const [main, enc] = await Promise.all([import('ai-tokenizer'), import('ai-tokenizer/encoding/o200k_base')]);
    return { main: main as Record<string, unknown>, enc: enc as AiTokenizerModules['enc'] };
  },
  build: ({ main, enc }, ctx) => {
    const Tokenizer = (main.Tokenizer ?? main.default) as new (data: unknown, extraSpecial?: Record<string, number>) => AiTokenizer;
    // o200k_harmony = o200k_base + the model's added tokens as extra specials.
    return new Tokenizer(enc, ctx.openai === 'o200k_harmony' ? ctx.addedTokens : undefined);
  },
  buildFailure: (ctx) => `could not build ${ctx.openai}`,
  calls: (t, { enc }, ctx) => {
    // encode(text, 'all') takes its ordinary-text path (specials are NOT split), so the
    // allowed list is passed explicitly: every special it knows, as HF splits every added token.
    const allowed = Object.keys({ ...(enc.special_tokens ?? {}), ...(ctx.openai === 'o200k_harmony' ? ctx.addedTokens : {}) });
    return {
      // Its count(input) is encode(input).length with the default policy (throws on special-token text).
      countApi: 'encode().length',
      encode: (text) => t.encode(text, allowed),
      count: (text) => t.encode(text, allowed).length,
    };
  },
};

const HYPERTOK: PeerSpec<{ fromBytes: HypertokFromBytes }, { t: Hypertok; bytes: Uint8Array; vocab: string }> = {
  notApplicable: (ctx) =>
    hypertokVocab(ctx) ? undefined : `not applicable: no hypertok vocabulary package for ${ctx.source} (it has o200k for gpt-4o/gpt-oss and llama3 for llama3)`,
  import: async () => (await import('hypertok')) as unknown as { fromBytes: HypertokFromBytes },
  // The vocabulary file's read is part of the build, as tokenizer.json's is for the others.
  build: async ({ fromBytes }, ctx) => {
    const vocab = hypertokVocab(ctx)!;
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(readFileSync(require.resolve(`@hypertok/vocab-${vocab}/vocab.htk`)));
    } catch (err) {
      throw new Unavailable(`@hypertok/vocab-${vocab} is not installed: ${firstLine(err)}`);
    }
    return { t: await fromBytes(bytes, { tier: 'single' }), bytes, vocab };
  },
  buildFailure: (ctx) => `fromBytes(@hypertok/vocab-${hypertokVocab(ctx)}) failed`,
  calls: ({ t, bytes, vocab }, { fromBytes }) => {
    // Reserved (special) tokens in the text are matched, as HF splits out added tokens (the
    // agreement check shows whether its reserved set is the model's added tokens). That option
    // costs hypertok ~3x on plain text, so it is passed only when the text could hold one: every
    // special token of o200k and Llama 3 starts with "<|".
    const opts = { reserved: { match: 'all' } };
    const encodeWith =
      (h: Hypertok): Encoder =>
      (text) =>
        text.includes('<|') ? h.encodeSync(text, opts) : h.encodeSync(text);
    const encode = encodeWith(t);
    return {
      version: `${packageVersion('hypertok') ?? 'unknown'} (@hypertok/vocab-${vocab} ${packageVersion(`@hypertok/vocab-${vocab}`) ?? '?'}, tier single)`,
      countApi: 'encode().length',
      encode,
      count: (text) => encode(text).length,
      fresh: async () => {
        const f = await fromBytes(bytes, { tier: 'single' });
        return { encode: encodeWith(f), dispose: () => f.free() };
      },
      dispose: () => t.free(),
    };
  },
};

const PEERS: Record<Exclude<EngineName, 'promptenc-native' | 'promptenc-js'>, PeerSpec<any, any>> = {
  'hf-tokenizers': HF_TOKENIZERS,
  tiktoken: TIKTOKEN,
  'gpt-tokenizer': GPT_TOKENIZER,
  'ai-tokenizer': AI_TOKENIZER,
  hypertok: HYPERTOK,
};

/** The one loader of every peer: its table entry's steps, timed, each failure a `missing` entry with the step named. */
async function loadPeer(name: keyof typeof PEERS, ctx: LoadContext): Promise<EngineSlot> {
  const spec = PEERS[name];
  const why = spec.notApplicable?.(ctx);
  if (why !== undefined) return missing(name, why);
  const reason = (prefix: string, err: unknown) => (err instanceof Unavailable ? err.message : `${prefix}: ${firstLine(err)}`);
  let imp;
  try {
    imp = await timed(() => spec.import(ctx));
  } catch (err) {
    return missing(name, reason(spec.importFailure?.(ctx) ?? 'not installed or failed to load', err));
  }
  let built;
  try {
    built = await timed(() => spec.build(imp.value, ctx));
  } catch (err) {
    return missing(name, reason(spec.buildFailure(ctx), err));
  }
  const calls = spec.calls(built.value, imp.value, ctx);
  return {
    name,
    status: 'ok',
    package: PACKAGES[name],
    version: calls.version ?? packageVersion(PACKAGES[name]) ?? 'unknown',
    vocabulary: ctx.vocabulary,
    loadMs: spec.builtAtImport ? imp.ms + (calls.firstCallMs ?? 0) : built.ms,
    importMs: imp.ms,
    rssAfterLoad: process.memoryUsage().rss,
    async: calls.async ?? false,
    countApi: calls.countApi,
    encode: calls.encode,
    count: calls.count,
    ...(calls.fresh && { fresh: calls.fresh }),
    ...(calls.dispose && { dispose: calls.dispose }),
  };
}

const BACKENDS = { 'promptenc-native': 'native', 'promptenc-js': 'js' } as const;

/** A promptenc tokenizer on one backend, timed (loadMs), or the error that stopped it. */
async function loadPromptenc(source: string, backend: 'native' | 'js'): Promise<{ tok: PromptTokenizer; ms: number; rss: number } | { error: string }> {
  try {
    const loaded = await timed(() => loadTokenizer(source, { backend }));
    return { tok: loaded.value, ms: loaded.ms, rss: process.memoryUsage().rss };
  } catch (err) {
    if (err instanceof PromptencError) return { error: firstLine(err) };
    throw err;
  }
}

function promptencEngine(name: 'promptenc-native' | 'promptenc-js', tok: PromptTokenizer, ms: number, rss: number, ctx: LoadContext): Engine {
  const backend = BACKENDS[name];
  return {
    name,
    status: 'ok',
    package: 'promptenc',
    version: `${packageVersion('promptenc')} (${backend})`,
    vocabulary: ctx.vocabulary,
    loadMs: ms,
    importMs: 0,
    rssAfterLoad: rss,
    async: false,
    countApi: 'count',
    encode: (text) => tok.encode(text, { addSpecialTokens: false }),
    count: (text) => tok.count(text, { addSpecialTokens: false }),
    encodeBatch: (texts, threads) => tok.encodeBatch(texts, { threads, addSpecialTokens: false }),
    fresh: async () => {
      const t = await loadTokenizer(ctx.source, { backend });
      // Freed after its pass as the peers' fresh tokenizers are (free()): left to the GC, the
      // dropped encoders were finalized during later cold passes, in their CPU time.
      return { encode: (text: string) => t.encode(text, { addSpecialTokens: false }), dispose: () => t.dispose() };
    },
    tokenizer: tok,
  };
}

/**
 * Load the requested engines in order (promptenc first). A failure to load is a `missing`
 * entry with the reason; it never aborts the run. The promptenc engines are loaded first and
 * the first that loads also gives the context the peers need (its tokenizer.json and added
 * tokens), so no tokenizer is loaded only to be dropped; without one, a tokenizer of its own
 * resolves the context. `afterContext` runs between reading the context and the first peer
 * (load-time.mjs collects the context's garbage there).
 */
export async function loadEngines(
  source: string,
  names: readonly EngineName[] = ENGINE_NAMES,
  opts: { afterContext?: () => void } = {},
): Promise<{ context: LoadContext; slots: EngineSlot[] }> {
  const own = new Map<EngineName, Awaited<ReturnType<typeof loadPromptenc>>>();
  for (const name of names) if (name in BACKENDS) own.set(name, await loadPromptenc(source, BACKENDS[name as keyof typeof BACKENDS]));
  const first = [...own.values()].find((r) => 'tok' in r);
  const context = first && 'tok' in first ? contextOf(source, first.tok) : await loadContext(source);
  opts.afterContext?.();
  const slots: EngineSlot[] = [];
  for (const name of names) {
    const r = own.get(name);
    try {
      if (r) slots.push('tok' in r ? promptencEngine(name as keyof typeof BACKENDS, r.tok, r.ms, r.rss, context) : missing(name, r.error));
      else slots.push(await loadPeer(name as keyof typeof PEERS, context));
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
