import type { FieldWrapper } from './template/render.js';
import { matchesAgree, type AddedTokenScanner } from './split.js';

/**
 * Per-message token accounting for a rendered chat prompt.
 *
 * The rule: the prompt is rendered once more with every piece of caller text (message
 * content, reasoning, tool-call names and arguments; tool names and descriptions)
 * wrapped in invisible markers. Each message (and the tool list) owns the span from the
 * first to the last character its own text rendered to, so tool-call syntax between its
 * pieces counts for the message; everything outside every span (role headers, BOS, the
 * generation prompt) is `template`. A token belongs to the innermost span that holds its
 * FIRST character, so a token straddling a boundary goes where it starts. The parts
 * always sum to the total, which equals countChat.
 * If the marked render differs from the real one once markers are removed (a template
 * that inspects text, e.g. `content == ''`), spans fall back to finding each message's
 * content verbatim, in order.
 */
export interface ChatTokenBreakdown {
  total: number;
  /** What the tools cost: the count with them minus without them (see withToolCost). */
  tools: number;
  template: number;
  messages: number[];
  /** Tools were given and the template rendered the same prompt without them (DeepSeek-V3's renders none). */
  toolsIgnored?: boolean;
}

const OPEN = '\uFDD0';
const CLOSE = '\uFDD1';
const OWNER_BASE = 0xe000;
const MAX_OWNERS = 0xf8ff - OWNER_BASE;

export function markerWrapper(): FieldWrapper {
  return (text, owner) => {
    if (text === '' || owner > MAX_OWNERS) return text;
    const tag = String.fromCharCode(OWNER_BASE + owner);
    // Markers go inside leading/trailing whitespace so `| trim` still trims, and after each
    // `</think>` so templates that keep only the part after it still carry an opening marker.
    const lead = text.length - text.trimStart().length;
    const trail = text.length - text.trimEnd().length;
    const core = text
      .slice(lead, text.length - trail)
      .split('</think>')
      .join(`</think>${OPEN}${tag}`);
    return `${text.slice(0, lead)}${OPEN}${tag}${core}${CLOSE}${tag}${text.slice(text.length - trail)}`;
  };
}

export type Spans = Map<number, [number, number]>;

/** Remove markers; spans are in the coordinates of the unmarked text. Undefined if malformed. */
export function stripMarkers(marked: string): { text: string; spans: Spans } | undefined {
  const spans: Spans = new Map();
  let text = '';
  let last = 0;
  for (let i = 0; i < marked.length; i++) {
    const c = marked[i];
    if (c !== OPEN && c !== CLOSE) continue;
    if (i + 1 >= marked.length) return undefined;
    text += marked.slice(last, i);
    const owner = marked.charCodeAt(i + 1) - OWNER_BASE;
    if (owner < 0 || owner > MAX_OWNERS) return undefined;
    const pos = text.length;
    const span = spans.get(owner);
    if (span) {
      span[0] = Math.min(span[0], pos);
      span[1] = Math.max(span[1], pos);
    } else spans.set(owner, [pos, pos]);
    i++;
    last = i + 1;
  }
  text += marked.slice(last);
  return { text, spans };
}

/** Fallback spans: each message's plain content, found verbatim and in order. */
export function searchSpans(prompt: string, contents: Array<string | undefined>): Spans {
  const spans: Spans = new Map();
  let cursor = 0;
  contents.forEach((content, i) => {
    const needle = content?.trim();
    if (!needle) return;
    const at = prompt.indexOf(needle, cursor);
    if (at < 0) return;
    spans.set(i, [at, at + needle.length]);
    cursor = at + needle.length;
  });
  return spans;
}

/**
 * The UTF-16 offset where each token starts, from token byte lengths (byte-level BPE)
 * and the added-token splits. Undefined when they do not add up to the text (a
 * normalizer changed it, or the model is not byte-level).
 */
export function tokenStarts(prompt: string, ids: Uint32Array, tokenLengths: Uint16Array | undefined, scanner: AddedTokenScanner): Int32Array | undefined {
  if (!tokenLengths) return undefined;
  const matches = scanner.scan(prompt);
  const after = matchesAgree(matches, ids, scanner);
  if (!after) return undefined;
  const starts = new Int32Array(ids.length);
  let charPos = 0;
  let charBytes = 0;
  let tokBytes = 0;
  let m = 0;
  const charLen = (i: number): [number, number] => {
    const c = prompt.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < prompt.length && (prompt.charCodeAt(i + 1) & 0xfc00) === 0xdc00) return [2, 4];
    return [1, c < 0x80 ? 1 : c < 0x800 ? 2 : 3];
  };
  for (let t = 0; t < ids.length; t++) {
    if (m < matches.length && after[m] === t + 1) {
      const match = matches[m]!;
      while (charPos < match.start) {
        const [u, b] = charLen(charPos);
        charPos += u;
        charBytes += b;
      }
      if (charPos !== match.start || charBytes !== tokBytes) return undefined;
      starts[t] = match.start;
      while (charPos < match.end) {
        const [u, b] = charLen(charPos);
        charPos += u;
        charBytes += b;
      }
      tokBytes = charBytes;
      m++;
      continue;
    }
    const id = ids[t]!;
    if (id >= tokenLengths.length || tokenLengths[id] === 0) return undefined;
    // The token starts in the character that holds its first byte.
    for (;;) {
      const [u, b] = charLen(charPos);
      if (charPos >= prompt.length || charBytes + b > tokBytes) break;
      charPos += u;
      charBytes += b;
    }
    starts[t] = charPos;
    tokBytes += tokenLengths[id]!;
  }
  while (charPos < prompt.length) {
    const [u, b] = charLen(charPos);
    charPos += u;
    charBytes += b;
  }
  return charBytes === tokBytes ? starts : undefined;
}

/** Attribute tokens to owners by their first character; the innermost span wins. */
export function attribute(promptLength: number, starts: Int32Array, spans: Spans, messageCount: number): ChatTokenBreakdown {
  const owner = new Int32Array(promptLength + 1).fill(-1);
  const ordered = [...spans.entries()].sort((a, b) => b[1][1] - b[1][0] - (a[1][1] - a[1][0]));
  for (const [who, [s, e]] of ordered) owner.fill(who, s, e);
  const messages = new Array<number>(messageCount).fill(0);
  let tools = 0;
  let template = 0;
  for (let t = 0; t < starts.length; t++) {
    const who = owner[starts[t]!]!;
    if (who < 0) template++;
    else if (who === messageCount) tools++;
    else messages[who]!++;
  }
  return { total: starts.length, tools, template, messages };
}

/**
 * The tools row, defined as what the tools cost: the prompt's count minus the count of the same
 * template rendered without tools (`countWithoutTools`), so that on Qwen3 the "# Tools" system
 * block and its instructions count for the tools, not only the tool names and descriptions.
 * Bounded below by the tokens the tool text itself rendered to (a template whose prompt without
 * tools is longer) and above by what no message owns, so the parts still sum to the total.
 * `toolsIgnored` is set when tools were given and the prompt is the same without them.
 */
export function withToolCost(b: ChatTokenBreakdown, countWithoutTools: number, samePrompt: boolean): ChatTokenBreakdown {
  const owned = b.messages.reduce((x, y) => x + y, 0);
  const tools = Math.min(Math.max(b.total - countWithoutTools, b.tools), b.total - owned);
  return { ...b, tools, template: b.total - owned - tools, toolsIgnored: samePrompt };
}

/** A cut of `text` at `c` that no pre-token of the cl100k, Qwen2, o200k or DeepSeek-V3 regexes crosses (see src/session.ts). */
function isPreTokenBoundary(text: string, c: number): boolean {
  const prev = text.charCodeAt(c - 1);
  const next = text[c] ?? '';
  if (prev === 10) return /^[\p{L}\p{N}]$/u.test(next);
  // "a b" cut before the space: letter runs stop at the space and ` ?\p{L}+` takes " b". ASCII
  // letters only, so no composition (NFC) or mark can reach across.
  const isAsciiLetter = (ch: number) => (ch >= 65 && ch <= 90) || (ch >= 97 && ch <= 122);
  return next === ' ' && isAsciiLetter(prev) && isAsciiLetter(text.charCodeAt(c + 1));
}

/**
 * The token count of `text` if it is at most `budget`, else -1, encoding only as much as it
 * must: the text is counted in chunks (4 K characters, doubling) cut at pre-token boundaries
 * that no added token reaches across, so the chunk counts add up to the full count exactly, and
 * counting stops at the first chunk that passes the budget. `count` counts a chunk as
 * encode(text, add_special_tokens=False) does; `chunked` false (another pre-tokenizer family,
 * or a segment cache that wants whole texts) counts the whole text at once.
 * Cost: O(min(n, chars up to the budget × 2)) encode work, plus a scan of a short window per cut.
 */
export function countWithinBudget(text: string, budget: number, count: (chunk: string) => number, scanner: AddedTokenScanner, chunked: boolean): number {
  if (!chunked) {
    const n = count(text);
    return n <= budget ? n : -1;
  }
  const margin = scanner.maxLength + 1;
  let total = 0;
  let start = 0;
  let size = 4096;
  while (start < text.length) {
    let cut = text.length;
    for (let c = start + size; c < text.length - 1; c++) {
      if (!isPreTokenBoundary(text, c)) continue;
      // No added token may straddle the cut: none may occur in the window around it at all.
      if (margin > 1 && scanner.scan(text.slice(Math.max(0, c - margin), c + margin)).length > 0) continue;
      cut = c;
      break;
    }
    total += count(text.slice(start, cut));
    if (total > budget) return -1;
    start = cut;
    size *= 2;
  }
  return total;
}
