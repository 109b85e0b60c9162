import type { AddedTokenSpec, TokenizerJson } from './tokenizer-json.js';

/**
 * A TypeScript mirror of Hugging Face `AddedVocabulary::find_matches`, used by the
 * session, the segment cache and token accounting to know where added tokens sit in a
 * string. Encoding itself never depends on it: the backends split on their own, and
 * every use here is checked against the IDs a backend produced (see `matchesAgree`).
 *
 * Semantics: leftmost-longest, non-overlapping matches over the raw text for tokens
 * with normalized=false, then over each gap for normalized=true tokens (only when the
 * normalizer is the identity, else gaps are left whole). single_word discards a match
 * glued to a word character; lstrip/rstrip widen it over adjacent whitespace.
 */
export interface AddedMatch {
  /** UTF-16 offsets of the split, whitespace taken by lstrip/rstrip included. */
  start: number;
  end: number;
  id: number;
  /**
   * True when the text can be cut right after this match: encode(a + b) ===
   * encode(a) ++ encode(b) for a = text[0, end), whatever follows, as long as the
   * scanner's view of text[0, end + maxTokenLength) is unchanged.
   */
  safeEnd: boolean;
  /**
   * safeEnd, and the texts need only agree on text[0, end) (no maxTokenLength beyond it):
   * see AddedTokenScanner.isClosed.
   */
  closed: boolean;
}

interface TrieNode {
  next: Map<number, TrieNode>;
  token?: AddedTokenSpec;
  /** Root only: 1 for UTF-16 units that start some token, so most positions cost one array read. */
  first?: Uint8Array;
  /** Root only: the characters that start some token, when there are at most 4 ("<", "[" …). */
  firstChars?: string[];
}

function buildTrie(tokens: AddedTokenSpec[]): TrieNode {
  const root: TrieNode = { next: new Map() };
  for (const t of tokens) {
    let node = root;
    for (let i = 0; i < t.content.length; i++) {
      const c = t.content.charCodeAt(i);
      let child = node.next.get(c);
      if (!child) {
        child = { next: new Map() };
        node.next.set(c, child);
      }
      node = child;
    }
    // Duplicate contents: HF keeps the last one registered for a pattern.
    node.token = t;
  }
  root.first = new Uint8Array(65536);
  for (const c of root.next.keys()) root.first[c] = 1;
  if (root.next.size <= 4) root.firstChars = [...root.next.keys()].map((c) => String.fromCharCode(c));
  return root;
}

// HF's lstrip/rstrip use the regex crate's Unicode `\s`, which is White_Space (U+0085 yes, U+FEFF no, unlike JS `\s`).
const WHITESPACE = /^\p{White_Space}$/u;
function isWhite(ch: string): boolean {
  return WHITESPACE.test(ch);
}
// HF ENDS_WITH_WORD / STARTS_WITH_WORD use the regex crate's Unicode `\w`.
const WORD = /[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]/u;

function charBefore(text: string, i: number): string {
  if (i <= 0) return '';
  const c = text.charCodeAt(i - 1);
  if (c >= 0xdc00 && c <= 0xdfff && i >= 2) {
    const h = text.charCodeAt(i - 2);
    if (h >= 0xd800 && h <= 0xdbff) return text.slice(i - 2, i);
  }
  return text[i - 1]!;
}

function charAt(text: string, i: number): string {
  const cp = text.codePointAt(i);
  return cp === undefined ? '' : String.fromCodePoint(cp);
}

export function isIdentityNormalizer(normalizer: unknown): boolean {
  if (normalizer === null || normalizer === undefined) return true;
  const n = normalizer as { type?: string; normalizers?: unknown[] };
  return n.type === 'Sequence' && Array.isArray(n.normalizers) && n.normalizers.every(isIdentityNormalizer);
}

export class AddedTokenScanner {
  /** Longest added-token content, in UTF-16 units: how far one scan decision looks ahead. */
  readonly maxLength: number;
  private readonly raw: TrieNode;
  private readonly normalized: TrieNode | undefined;
  private readonly anySingleWord: boolean;
  /** isAdded[id] === 1 for added-token ids: the per-id test of matchesAgree (a Set lookup per id cost ~0.3 ms per 16 k ids). */
  readonly isAdded: Uint8Array;
  /** safeEndId[id] === 1 when a match of that added token is a safe cut (AddedMatch.safeEnd), for splits a backend reports. */
  readonly safeEndId: Uint8Array;
  /** isSafeEnd per token entry, decided once (it looks at the other tokens). */
  private readonly safeSpec = new Map<AddedTokenSpec, boolean>();
  /**
   * isClosed(id): a cut after a match of that token holds for any text that agrees with the
   * scanned one on [0, end), not only on [0, end + maxLength). Leftmost-longest can only
   * change a match before `end` through a pattern that reaches past `end`: one that starts
   * inside the match cannot (the scan resumes at `end`), and one that starts at or before the
   * match's start must contain the whole token followed by one more character. So: a safe
   * cut, not single_word (its verdict reads the character at `end`), not a normalized token
   * under a real normalizer (safeEndId is 0 for those), and no added token contains this one
   * followed by more text. A normalized token is matched only in the gaps the raw pass leaves,
   * so for one the raw pass must not be able to change either: no raw token may begin with a
   * suffix of its content and go on. A new turn after "<｜end▁of▁sentence｜>" is then encoded from there,
   * not from an earlier token. Decided per id on first use (O(added tokens) string searches):
   * a session meets a handful of ids, and deciding all of DeepSeek's 818 cost ~6 ms cold.
   */
  private readonly closedMemo: Int8Array;
  /** Every normalized token, also under a real normalizer (straddles). */
  private everyNormalized: TrieNode | undefined;
  /** startCutOk per id, decided on first use (it looks through every token entry). */
  private readonly startMemo: Int8Array;
  private readonly tokens: AddedTokenSpec[];

  constructor(json: TokenizerJson) {
    const tokens = json.added_tokens ?? [];
    this.maxLength = tokens.reduce((m, t) => Math.max(m, t.content.length), 0);
    this.raw = buildTrie(tokens.filter((t) => !t.normalized));
    const normalizedTokens = tokens.filter((t) => t.normalized);
    // With a real normalizer, normalized tokens match in normalized text whose offsets differ: leave those gaps whole.
    this.normalized = normalizedTokens.length > 0 && isIdentityNormalizer(json.normalizer) ? buildTrie(normalizedTokens) : undefined;
    this.anySingleWord = tokens.some((t) => t.single_word);
    this.isAdded = new Uint8Array(tokens.reduce((m, t) => Math.max(m, t.id + 1), 0));
    for (const t of tokens) this.isAdded[t.id] = 1;
    // Entries with different contents may share an id; the id alone then cannot tell which matched, so all must be safe.
    this.tokens = tokens;
    this.safeEndId = new Uint8Array(this.isAdded.length);
    for (const t of tokens) this.safeEndId[t.id] = 1;
    for (const t of tokens) {
      const safe = this.isSafeEnd(t);
      this.safeSpec.set(t, safe);
      if (!safe) this.safeEndId[t.id] = 0;
    }
    // A backend with a real normalizer matches normalized tokens in text this scanner leaves
    // whole; cuts after them were never placed, and still are not. (Such tokens are never
    // tried in the raw pass either, so they cannot extend a raw token's match.)
    if (!this.normalized) for (const t of normalizedTokens) this.safeEndId[t.id] = 0;
    this.closedMemo = new Int8Array(this.isAdded.length).fill(-1);
    this.startMemo = new Int8Array(this.isAdded.length).fill(-1);
  }

  /** decide(id), remembered in memo (-1 = not decided yet); ids past the memo are decided each time. */
  private static memoized(memo: Int8Array, id: number, decide: (id: number) => boolean): boolean {
    const known = memo[id];
    if (known !== undefined && known >= 0) return known === 1;
    const answer = decide(id);
    if (id < memo.length) memo[id] = answer ? 1 : 0;
    return answer;
  }

  /** See closedMemo. */
  isClosed(id: number): boolean {
    return AddedTokenScanner.memoized(this.closedMemo, id, (i) => this.decideClosed(i));
  }

  private decideClosed(id: number): boolean {
    let closed = this.safeEndId[id] === 1;
    for (const t of this.tokens) {
      if (!closed) break;
      if (t.id !== id) continue;
      if (t.single_word) closed = false;
      // An occurrence at i with i + t.length < u.length: lastIndexOf from u.length - t.length - 1.
      for (const u of this.tokens)
        if (u.content.length > t.content.length && u.content.lastIndexOf(t.content, u.content.length - t.content.length - 1) >= 0) closed = false;
      if (t.normalized) {
        // A normalized token is matched in a second pass, inside the gaps the raw tokens leave,
        // so its text is not consumed by the raw pass: a raw token may start inside it. Not
        // closed if one can reach past the end (it begins with a suffix of the content and goes
        // on). (One that is single_word and ends there already makes the cut unsafe.)
        const c = t.content;
        for (const u of this.tokens) {
          if (u.normalized) continue;
          for (let j = 0; j < c.length && closed; j++) if (u.content.length > c.length - j && u.content.startsWith(c.slice(j))) closed = false;
        }
      }
    }
    return closed;
  }

  /**
   * A split of this token that starts at the cut is the same in the whole text as in the text
   * from the cut: not lstrip (it may take whitespace before it), not single_word (its verdict
   * reads the character before), not a normalized token this scanner does not match.
   */
  startCutOk(id: number): boolean {
    return AddedTokenScanner.memoized(this.startMemo, id, (i) => {
      let ok = false;
      for (const t of this.tokens) {
        if (t.id !== i) continue;
        if (t.lstrip || t.single_word || (t.normalized && !this.normalized)) return false;
        ok = true;
      }
      return ok;
    });
  }

  /** Whether some added token (raw or normalized) begins with this UTF-16 unit: one array read, a filter before a start cut is tried. */
  mayStart(unit: number): boolean {
    return this.raw.first![unit] === 1 || (this.normalized !== undefined && this.normalized.first![unit] === 1);
  }

  /**
   * Whether some added token (raw or normalized, whatever its flags) matches `text` starting
   * before `at` and ending after it, or is single_word and ends at it. O(maxLength²) trie steps
   * at most, over the characters around `at`.
   */
  straddles(text: string, at: number): boolean {
    this.everyNormalized ??= buildTrie(this.tokens.filter((t) => t.normalized));
    const end = Math.min(text.length, at + this.maxLength);
    for (let pass = 0; pass < 2; pass++) {
      const trie = pass === 0 ? this.raw : this.everyNormalized;
      for (let q = Math.max(0, at - this.maxLength + 1); q < at; q++) {
        if (trie.first![text.charCodeAt(q)] !== 1) continue;
        let node: TrieNode | undefined = trie;
        for (let i = q; i < end; i++) {
          node = node.next.get(text.charCodeAt(i));
          if (!node) break;
          // Ending at `at`, a single_word token's verdict may read the end of a gap that ends there.
          if (node.token && (i + 1 > at || (i + 1 === at && node.token.single_word))) return true;
        }
      }
    }
    return false;
  }

  /**
   * All added-token splits in `text`, in order, as HF finds them. splitSpecial is the Rust
   * tokenizer's `encode_special_tokens` (added_vocabulary.rs `find_matches`): a special token's
   * match is consumed by the scan and left in the text, as a discarded single_word one is.
   */
  scan(text: string, splitSpecial = false): AddedMatch[] {
    const first = this.findMatches(text, 0, text.length, this.raw, splitSpecial);
    if (!this.normalized) return first;
    const out: AddedMatch[] = [];
    let gapStart = 0;
    for (const m of first) {
      if (gapStart < m.start) out.push(...this.findMatches(text, gapStart, m.start, this.normalized, splitSpecial));
      out.push(m);
      gapStart = m.end;
    }
    if (gapStart < text.length) out.push(...this.findMatches(text, gapStart, text.length, this.normalized, splitSpecial));
    return out;
  }

  private findMatches(text: string, from: number, to: number, trie: TrieNode, splitSpecial = false): AddedMatch[] {
    const out: AddedMatch[] = [];
    if (trie.next.size === 0) return out;
    let startOffset = from;
    let p = from;
    const first = trie.first!;
    const firsts = trie.firstChars;
    // Bounded at `to` (an O(1) sliced string), so a gap's search never runs on to the text's end.
    const hay = firsts === undefined || to === text.length ? text : text.slice(0, to);
    // Next occurrence of each first character at or after p (-1: none left), refreshed
    // only when p passes it, so each character's indexOf walks the text once.
    const nextAt = firsts?.map(() => -2);
    while (p < to) {
      if (firsts !== undefined) {
        // indexOf jumps to the next candidate (V8 searches for one character natively):
        // 4-14 → 0.1-0.4 ns per character for the bundled models, whose tokens all start with "<".
        let next = -1;
        for (let k = 0; k < firsts.length; k++) {
          let at = nextAt![k]!;
          if (at !== -1 && at < p) at = nextAt![k] = hay.indexOf(firsts[k]!, p);
          if (at !== -1 && (next === -1 || at < next)) next = at;
        }
        if (next < 0) break;
        p = next;
      } else if (first[text.charCodeAt(p)] === 0) {
        p++;
        continue;
      }
      let node: TrieNode | undefined = trie.next.get(text.charCodeAt(p));
      if (!node) {
        p++;
        continue;
      }
      let best: AddedTokenSpec | undefined;
      let bestEnd = p;
      let q = p + 1;
      for (;;) {
        if (node.token) {
          best = node.token;
          bestEnd = q;
        }
        if (q >= to) break;
        node = node.next.get(text.charCodeAt(q));
        if (!node) break;
        q++;
      }
      if (!best) {
        p++;
        continue;
      }
      // Leftmost-longest iteration consumes the match even when single_word discards it.
      const matchStart = p;
      p = bestEnd;
      let start = matchStart;
      let stop = bestEnd;
      if (splitSpecial && best.special) continue;
      if (best.single_word) {
        const before = charBefore(text, start);
        const after = charAt(text, stop);
        const startSpace = start === from || !WORD.test(before);
        const stopSpace = stop === to || !WORD.test(after);
        if (!startSpace || !stopSpace) continue;
      }
      if (best.lstrip) {
        let s = start;
        while (s > from) {
          const ch = charBefore(text, s);
          if (!isWhite(ch)) break;
          s -= ch.length;
        }
        start = Math.max(s, startOffset);
      }
      if (best.rstrip) {
        while (stop < to) {
          const ch = charAt(text, stop);
          if (!isWhite(ch)) break;
          stop += ch.length;
        }
      }
      out.push({ start, end: stop, id: best.id, safeEnd: this.safeSpec.get(best)!, closed: this.isClosed(best.id) });
      startOffset = stop;
    }
    return out;
  }

  /**
   * Cutting after this token cannot change what either side encodes to:
   * - rstrip would reach into the next side's whitespace;
   * - a whitespace first/last character lets a neighbour's lstrip/rstrip run across it;
   * - with single_word tokens around, a word character at the cut changes their verdict;
   * - a normalized token is matched in the gaps the raw pass leaves, so a raw single_word
   *   token may cover its last character: ending there, its verdict reads the character after
   *   the cut; reaching past it and discarded, it still consumed the text (a chunk that ends
   *   at the cut sees neither).
   */
  private isSafeEnd(t: AddedTokenSpec): boolean {
    if (t.rstrip) return false;
    const first = charAt(t.content, 0);
    const last = charBefore(t.content, t.content.length);
    if (isWhite(first) || isWhite(last)) return false;
    if (this.anySingleWord && (WORD.test(first) || WORD.test(last))) return false;
    if (t.normalized && this.anySingleWord) {
      // A raw single_word token whose text covers this one's last character: it may end here
      // (its verdict reads the next character) or, discarded, still consume text up to and
      // past the end (the raw pass resumes after a discarded match), which a chunk cut here
      // cannot see. Covering: it begins with a suffix of the content, or contains the content.
      const c = t.content;
      for (const u of this.tokens) {
        if (!u.single_word || u.normalized) continue;
        if (u.content.includes(c)) return false;
        for (let j = 0; j < c.length; j++) if (u.content.startsWith(c.slice(j))) return false;
      }
    }
    return true;
  }
}

/**
 * The scanner agrees with a backend on `ids` (an encoding of the same text) when the
 * added-token IDs appear in the same order. Returns, for each match, the index in `ids`
 * just after its token, or undefined on any disagreement.
 */
export function matchesAgree(
  matches: readonly AddedMatch[],
  ids: Uint32Array,
  scanner: Pick<AddedTokenScanner, 'isAdded'>,
  prefixOnly = false,
): number[] | undefined {
  const { isAdded } = scanner;
  const positions: number[] = [];
  let m = 0;
  for (let i = 0; i < ids.length; i++) {
    if (prefixOnly && m === matches.length) break; // `matches` cover only a prefix of the text `ids` encode
    const id = ids[i]!;
    if (isAdded[id] !== 1) continue; // ids past the table's end read undefined: not added
    if (m >= matches.length || matches[m]!.id !== ids[i]) return undefined;
    positions.push(i + 1);
    m++;
  }
  return m === matches.length ? positions : undefined;
}
