/**
 * Named real-text workloads for the throughput bench (issue: "real text in the benchmark").
 * Each is built at bench time from files every install has (the Markdown and JavaScript in
 * node_modules, including the devDependencies `chinese-poetry` and `@biomejs/biome`'s
 * translated READMEs), deterministically: file lists are sorted, then a seeded shuffle picks
 * from them, so the same lockfile and seed give the same bytes and the same sha256, which every
 * result prints next to the byte count.
 *
 * - prose: English Markdown from node_modules.
 * - code: JavaScript/TypeScript source from node_modules (no minified bundles, no data files).
 * - cjk: classical Chinese (chinese-poetry: Tang and Song poems, the Analects), plus the
 *   Chinese, Japanese and Korean translations of biome's README.
 * - multilingual: paragraphs of the es/fr/pl/pt-BR/ru/uk/hi/ja/kr/zh READMEs of biome, English
 *   prose and Chinese poetry, interleaved.
 * - agent: what an agent loop sends: JSON tool calls, tool outputs (file reads, logs, unified
 *   diffs, shell listings and test runs), as JSON-escaped strings and raw.
 * - rank-table: gpt-tokenizer's `src/bpeRanks/o200k_base.js` (≈2 MB, ≈180k distinct pieces in
 *   one string): a working set larger than a small word cache, the worst case of issue 19.
 * - mixed: the generated mixed corpus of corpus.ts (prose, code, CJK, emoji, chat).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  buildCorpus,
  type Corpus,
  type CorpusDocument,
  DEFAULT_SEED,
  defaultNodeModules,
  finish,
  listFiles,
  seededRandom,
  shuffle,
  splitDocument,
  takeFiles,
} from './corpus.js';
import type { PromptTokenizer } from 'promptenc';

export const WORKLOAD_NAMES = ['prose', 'code', 'cjk', 'multilingual', 'agent', 'rank-table', 'mixed'] as const;
export type WorkloadName = (typeof WORKLOAD_NAMES)[number];
export const DEFAULT_WORKLOAD_BYTES = 1024 * 1024;

export interface WorkloadOptions {
  /** Target UTF-8 bytes (rank-table is always the whole file). Default 1 MiB. */
  sizeBytes?: number;
  seed?: number;
  nodeModules?: string;
  /** For `mixed`: renders its chat transcripts with the model's template. */
  tokenizer?: Pick<PromptTokenizer, 'chatTemplate' | 'renderChat'>;
}

const utf8Length = (s: string) => Buffer.byteLength(s, 'utf8');

function resolveIn(nodeModules: string, rel: string): string | undefined {
  const p = path.join(nodeModules, rel);
  try {
    statSync(p);
    return p;
  } catch {
    return undefined;
  }
}

function sortedFiles(dir: string, pattern: RegExp): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && pattern.test(e.name)) out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

/** Poems and passages of chinese-poetry as plain text ("title\nline\nline\n\n"), in file order. */
function chinesePoetry(nodeModules: string, budget: number, rand: () => number): string[] {
  const root = resolveIn(nodeModules, 'chinese-poetry/dist');
  if (!root) return [];
  const files = shuffle(
    sortedFiles(root, /\.json$/).filter((f) => !/author|error|rank/.test(f)),
    rand,
  );
  const out: string[] = [];
  let used = 0;
  for (const f of files) {
    if (used >= budget) break;
    let data: unknown;
    try {
      data = JSON.parse(readFileSync(f, 'utf8'));
    } catch {
      continue;
    }
    if (!Array.isArray(data)) continue;
    // A few poems from each file, so one collection does not fill the budget.
    for (const item of data.slice(0, 200) as Array<Record<string, unknown>>) {
      const lines = (item.paragraphs ?? item.content ?? item.para) as unknown;
      if (!Array.isArray(lines) || lines.length === 0) continue;
      const title =
        typeof item.title === 'string' ? item.title : typeof item.chapter === 'string' ? item.chapter : typeof item.rhythmic === 'string' ? item.rhythmic : '';
      const text = `${title}\n${lines.filter((l) => typeof l === 'string').join('\n')}\n\n`;
      out.push(text);
      used += utf8Length(text);
      if (used >= budget) break;
    }
  }
  return out;
}

const README_LANGS = ['es', 'fr', 'pl', 'pt-BR', 'ru', 'uk', 'hi', 'ja', 'kr', 'zh-CN', 'zh-TW'];

function translatedReadmes(nodeModules: string, langs: readonly string[]): string[] {
  const out: string[] = [];
  for (const l of langs) {
    const p = resolveIn(nodeModules, `@biomejs/biome/README.${l}.md`);
    if (p) out.push(readFileSync(p, 'utf8'));
  }
  return out;
}

/** Repeats the paragraphs of `sources` (shuffled) until `budget` bytes. */
function fill(paragraphs: string[], budget: number, rand: () => number): string {
  if (paragraphs.length === 0) return '';
  let text = '';
  let bytes = 0;
  while (bytes < budget) {
    for (const p of shuffle([...paragraphs], rand)) {
      text += p;
      bytes += utf8Length(p);
      if (bytes >= budget) break;
    }
  }
  return text;
}

const paragraphsOf = (text: string) =>
  text
    .split(/\n\s*\n/)
    .filter((p) => p.trim().length > 0)
    .map((p) => `${p}\n\n`);

function cjk(nodeModules: string, size: number, rand: () => number): CorpusDocument[] {
  const readmes = translatedReadmes(nodeModules, ['zh-CN', 'zh-TW', 'ja', 'kr']).flatMap(paragraphsOf);
  const readmeText = fill(readmes, size * 0.3, rand);
  const poems = chinesePoetry(nodeModules, size - utf8Length(readmeText), rand);
  const docs = [...splitDocument(poems.join(''), 'cjk', 16 * 1024), ...splitDocument(readmeText, 'cjk', 16 * 1024)];
  return shuffle(docs, rand);
}

function multilingual(nodeModules: string, size: number, rand: () => number, prose: string[]): CorpusDocument[] {
  const paras = translatedReadmes(nodeModules, README_LANGS).flatMap(paragraphsOf);
  const english: CorpusDocument[] = [];
  takeFiles(prose, size * 0.2, 'prose', rand, english);
  const poems = chinesePoetry(nodeModules, size * 0.1, rand);
  const mixed = [...paras, ...english.flatMap((d) => paragraphsOf(d.text)), ...poems];
  return splitDocument(fill(mixed, size, rand), 'multilingual', 16 * 1024);
}

const TOOLS = ['read_file', 'write_file', 'run_shell', 'search_code', 'apply_patch', 'list_dir', 'http_get'];
const LEVELS = ['INFO', 'INFO', 'INFO', 'DEBUG', 'WARN', 'ERROR'];

function pad(n: number, w: number): string {
  return String(n).padStart(w, '0');
}

/** A unified diff of `text` against a copy with a few lines changed (deterministic). */
function unifiedDiff(file: string, text: string, rand: () => number): string {
  const lines = text.split('\n').slice(0, 400);
  let out = `diff --git a/${file} b/${file}\nindex ${Math.floor(rand() * 0xfffffff).toString(16)}..${Math.floor(rand() * 0xfffffff).toString(16)} 100644\n--- a/${file}\n+++ b/${file}\n`;
  for (let at = Math.floor(rand() * 20); at < lines.length; at += 30 + Math.floor(rand() * 60)) {
    const ctx = lines.slice(Math.max(0, at - 3), at);
    const old = lines.slice(at, at + 2);
    const changed = old.map((l) => l.replace(/\b(const|let)\b/, 'var').replace(/;$/, '') + (rand() < 0.5 ? ' // changed' : ''));
    out += `@@ -${at - ctx.length + 1},${ctx.length + old.length + 3} +${at - ctx.length + 1},${ctx.length + changed.length + 3} @@\n`;
    out += ctx.map((l) => ` ${l}\n`).join('') + old.map((l) => `-${l}\n`).join('') + changed.map((l) => `+${l}\n`).join('');
    out += lines
      .slice(at + 2, at + 5)
      .map((l) => ` ${l}\n`)
      .join('');
  }
  return out;
}

function logLines(rand: () => number, n: number): string {
  let out = '';
  let t = Date.UTC(2026, 11, 1, 22, 0, 0);
  for (let i = 0; i < n; i++) {
    t += Math.floor(rand() * 900);
    const ms = Math.floor(rand() * 250);
    const lvl = LEVELS[Math.floor(rand() * LEVELS.length)];
    out += `${new Date(t).toISOString()} ${lvl} [worker-${Math.floor(rand() * 8)}] ${rand() < 0.7 ? `GET /v1/items/${Math.floor(rand() * 1e6)} 200 ${ms}ms` : `retrying upstream (attempt ${1 + Math.floor(rand() * 4)}): ECONNRESET after ${ms}ms`} req_id=${Math.floor(rand() * 2 ** 32).toString(16)}\n`;
  }
  return out;
}

function shellListing(files: string[], root: string, rand: () => number): string {
  let out = `$ ls -la ${path.relative(root, path.dirname(files[0] ?? root)) || '.'}\n`;
  for (const f of files) {
    let size = 0;
    try {
      size = statSync(f).size;
    } catch {
      // listed anyway
    }
    out += `-rw-r--r--  1 dev  staff  ${String(size).padStart(8)} Dec  1 22:${pad(Math.floor(rand() * 60), 2)} ${path.basename(f)}\n`;
  }
  out += `$ npm test\n\n> test\n> vitest run\n\n`;
  for (const f of files.slice(0, 12))
    out += ` ✓ ${path.basename(f).replace(/\.\w+$/, '.test.ts')} (${1 + Math.floor(rand() * 40)} tests) ${Math.floor(rand() * 900)}ms\n`;
  out += `\n Test Files  ${Math.min(12, files.length)} passed\n      Tests  ${Math.floor(rand() * 400)} passed\n`;
  return out;
}

function agent(nodeModules: string, size: number, rand: () => number, code: string[], prose: string[]): CorpusDocument[] {
  const docs: CorpusDocument[] = [];
  const codeDocs: CorpusDocument[] = [];
  takeFiles(code, size, 'code', rand, codeDocs);
  const proseDocs: CorpusDocument[] = [];
  takeFiles(prose, size * 0.2, 'prose', rand, proseDocs);
  const snippets = proseDocs.flatMap((d) => paragraphsOf(d.text)).filter((p) => p.length < 1200);
  let bytes = 0;
  let k = 0;
  while (bytes < size && codeDocs.length > 0) {
    const src = codeDocs[k++ % codeDocs.length]!;
    const file = `src/${path.basename(code[Math.floor(rand() * code.length)] ?? 'index.js')}`;
    const r = rand();
    let text: string;
    if (r < 0.25) {
      // An assistant turn with tool calls, as the OpenAI API carries it.
      const calls = Array.from({ length: 1 + Math.floor(rand() * 3) }, (_, i) => ({
        id: `call_${Math.floor(rand() * 2 ** 40).toString(36)}`,
        type: 'function',
        function: {
          name: TOOLS[Math.floor(rand() * TOOLS.length)],
          arguments: JSON.stringify(
            i === 0 && rand() < 0.5 ? { path: file, content: src.text.slice(0, 1500) } : { path: file, pattern: 'export function', max_results: 20 },
          ),
        },
      }));
      text = JSON.stringify({ role: 'assistant', content: snippets.length ? snippets[Math.floor(rand() * snippets.length)] : null, tool_calls: calls });
    } else if (r < 0.45) {
      text = JSON.stringify({ role: 'tool', tool_call_id: `call_${k}`, content: src.text.slice(0, 6000) });
    } else if (r < 0.65) {
      text = unifiedDiff(file, src.text, rand);
    } else if (r < 0.85) {
      text = logLines(rand, 40 + Math.floor(rand() * 120));
    } else {
      const start = Math.floor(rand() * Math.max(1, code.length - 30));
      text = shellListing(code.slice(start, start + 10 + Math.floor(rand() * 20)), nodeModules, rand);
    }
    text += '\n';
    docs.push(...splitDocument(text, 'agent'));
    bytes += utf8Length(text);
  }
  return docs;
}

/** The o200k rank table as JavaScript source, one document (it is one string in the issue). */
function rankTable(nodeModules: string): CorpusDocument[] {
  const p = resolveIn(nodeModules, 'gpt-tokenizer/src/bpeRanks/o200k_base.js');
  if (!p) return [];
  const text = readFileSync(p, 'utf8');
  return [{ kind: 'code', text, bytes: utf8Length(text) }];
}

export function buildWorkload(name: WorkloadName, opts: WorkloadOptions = {}): Corpus {
  const seed = opts.seed ?? DEFAULT_SEED;
  const size = opts.sizeBytes ?? DEFAULT_WORKLOAD_BYTES;
  const nodeModules = opts.nodeModules ?? defaultNodeModules();
  if (name === 'mixed') {
    const c = buildCorpus({ sizeBytes: size, seed, nodeModules, tokenizer: opts.tokenizer });
    return { ...c, source: `mixed: ${c.source}` };
  }
  const rand = seededRandom(seed ^ (WORKLOAD_NAMES.indexOf(name) * 0x9e3779b1));
  const needsFiles = name === 'prose' || name === 'code' || name === 'multilingual' || name === 'agent';
  const files = needsFiles ? listFiles(nodeModules) : { prose: [], code: [] };
  let documents: CorpusDocument[] = [];
  if (name === 'prose') takeFiles(files.prose, size, 'prose', rand, documents);
  else if (name === 'code') takeFiles(files.code, size, 'code', rand, documents);
  else if (name === 'cjk') documents = cjk(nodeModules, size, rand);
  else if (name === 'multilingual') documents = multilingual(nodeModules, size, rand, files.prose);
  else if (name === 'agent') documents = agent(nodeModules, size, rand, files.code, files.prose);
  else if (name === 'rank-table') documents = rankTable(nodeModules);
  if (documents.length === 0) {
    throw new Error(`workload ${name}: no source text found under ${nodeModules} (are the devDependencies installed?)`);
  }
  return finish(documents, `${name} (seed ${seed}, ${name === 'rank-table' ? 'whole file' : `${size} bytes target`}, from ${nodeModules})`, seed);
}

export function parseWorkloadList(list: string): WorkloadName[] {
  const names = list.trim() === 'all' ? [...WORKLOAD_NAMES] : list.split(',').map((s) => s.trim());
  for (const n of names) {
    if (!(WORKLOAD_NAMES as readonly string[]).includes(n)) {
      throw new Error(`unknown workload ${JSON.stringify(n)}; expected a comma-separated list of ${WORKLOAD_NAMES.join(', ')}, or all`);
    }
  }
  return [...new Set(names)] as WorkloadName[];
}
