import { matchesAgree, type AddedMatch, type AddedTokenScanner } from './split.js';
import { commonPrefixLength } from './offsets.js';
import { tailOfPieces } from './template/render.js';

/**
 * What a session needs from its tokenizer. The session never encodes by itself:
 * every ID comes from `encodeBody`, the same path as PromptTokenizer.encode.
 */
export interface SessionHost {
  /**
   * The ids, and where the backend put the added tokens when it reports it (Backend.encodeMarked:
   * triples of UTF-16 start, end and id count after); without marks the session scans the text.
   */
  encodeBody(text: string): { ids: Uint32Array; marks: Uint32Array | undefined };
  /**
   * Throws (E_INPUT_TOO_LARGE) when the session's whole text is over the tokenizer's
   * maxInputBytes: the limit is on what the ids encode, not on the part one call encodes.
   * O(1) from the length unless the text has more than maxInputBytes / 3 UTF-16 units; then
   * one Buffer.byteLength pass (checkInputSize).
   */
  checkSize(text: string): void;
  scanner: AddedTokenScanner;
  /** Byte length per token id (byte-level BPE only); enables cut points inside long text. */
  tokenLengths: Uint16Array | undefined;
  /** The pre-tokenizer always breaks after "\n" before a letter or digit, whatever follows (see EncodeSession). */
  newlineBreaks: boolean;
  /** encodeBody reports marks (the native backend, no segment cache): cuts before added tokens can be verified. */
  marks: boolean;
}

/**
 * What a caller knows about the new text without reading it (an incremental render):
 * it agrees with the previous text on [0, common), and tail(c) is text.slice(c).
 * Then the O(n) compare is skipped, and so is flattening a rope-shaped text.
 */
export interface PrefixHint {
  common: number;
  tail(from: number): string;
  /** Set by EncodeSession.appendHint only: the text is the previous one followed by this. */
  appended?: string;
}

export interface SessionStats {
  /** Characters whose IDs were reused from the previous call. */
  reusedChars: number;
  /** Characters that were encoded. */
  encodedChars: number;
  calls: number;
}

/**
 * A cut before an added token is tried only when it spares at least this many characters: the
 * try costs a few µs of checks that run once per call, cold (DeepSeek-V3 at 200 k, old and new
 * build alternating in one process: sparing the 88 characters of a short previous turn made the
 * call 0–15 µs slower, sparing a 1 KB turn 3–20 µs faster).
 */
const START_CUT_GAIN = 512;
/** Long text runs get cut points every this many characters, so an edit inside re-encodes about this much. */
const INNER_STRIDE = 2048;
const LETTER_OR_DIGIT = /^[\p{L}\p{N}]$/u;

/**
 * Incremental encoding of a text that changes a little between calls (a growing chat).
 *
 * A cut point (c, k) records that ids[0, k) === encodeBody(text[0, c)) and that
 * encodeBody(text) === ids[0, k) ++ encodeBody(text[c..]). Two kinds exist:
 * - after an added token (AddedMatch.safeEnd): HF encodes the text between added tokens
 *   independently, so the cut is exact as long as the scan before c is unchanged, which
 *   holds when the new text agrees with the old one up to c + maxTokenLength, or up to c
 *   after a closed token (AddedTokenScanner.isClosed);
 * - inside a long text run, after "\n" followed by a letter or digit: in the cl100k, Qwen,
 *   o200k and DeepSeek regexes no branch matches across it (letter runs may not take
 *   \r\n as a prefix, `\s*[\r\n]+` and `[\r\n]*` tails stop at the last newline,
 *   `\s+(?!\S)` cannot end before a non-space), so it is a pre-token boundary decided by
 *   text[c - 1, c] alone; DeepSeek's digit and CJK splits are local too.
 *   NFC cannot compose across "\n" either. Such cuts are placed by summing token byte
 *   lengths and are dropped when the sum disagrees with the text (normalization changed it).
 * On the next call the session backs off to the last cut that the edit cannot reach,
 * keeps ids before it and encodes the rest. With the native backend it first tries the end of
 * the old text when the new text only appends to it and begins with an added token, then a later
 * start of an added-token split (startChars), each verified after its encode (startCutHolds). Tests check every prefix and random edits
 * against a full encode.
 * Cost: O(changed suffix) encode work, plus an O(n) memcmp for the common prefix
 * (≈ 0.06 ms for 1 MB of prompt, comparing slices in V8); ids stay in one growing buffer.
 * A call that re-encodes more than half of the text defers placing its cuts to the next
 * call, which places them only up to its own common prefix (see pendingChar).
 */
export class EncodeSession {
  /** The whole current text; after an append or a chat call a rope that is never read here (see tail). */
  private text = '';
  /**
   * text = baseText ++ appended.join(''), so that tail() reads only what it returns: reading one
   * character of a rope (a render's, or the `+` of appends) flattens all of it (~1 ms at 200 k
   * tokens per call). baseTail is the tail of baseText when that is a render's rope.
   */
  private baseText = '';
  private baseTail: ((from: number) => string) | undefined;
  private appended: string[] = [];
  private appendedLength = 0;
  /** ids[0, len) = encodeBody(text); capacity grows by doubling, so an append never copies the kept prefix. */
  private buf = new Uint32Array(0);
  private len = 0;
  private cutChars: number[] = [];
  private cutTokens: number[] = [];
  /** 1 for a cut after a closed added token (AddedTokenScanner.isClosed): it needs the texts to agree only up to it. */
  private cutClosed: number[] = [];
  /**
   * Where each added-token split of the text starts, and how many ids come before it: the text
   * before such a start ends a gap, so ids[0, k) encode it however the text goes on, as long as
   * the new text also has an added token starting there (see startCutHolds). Sorted.
   */
  private startChars: number[] = [];
  private startTokens: number[] = [];
  /**
   * The old text around each start: its last reach - 1 characters before it and reach from it
   * (reach = max(maxLength, 1), so the start is at reach - 1 in every window; a slice of the
   * flat string the backend encoded, so no copy). A match that crossed the start in the old text
   * (a discarded single_word one, which still consumed the characters it covered) may change the
   * split before it when the text after changes.
   */
  private startWindows: string[] = [];
  /**
   * Cuts of text[pendingChar..] (ids[pendingTok..]) not placed yet, or -1. A call that
   * re-encodes most of the text (a template that rewrote earlier turns) leaves them to the
   * next call, which places them only as far as its own common prefix reaches: with the GLM
   * template below ~60 k tokens almost every call rewrites early turns, and placing cuts the
   * next call cannot use cost about half a full encode.
   */
  private pendingChar = -1;
  private pendingTok = 0;
  /** The backend's marks for text[pendingChar..] (offsets relative to pendingChar), if it gave them. */
  private pendingMarks: Uint32Array | undefined;
  private readonly counters: SessionStats = { reusedChars: 0, encodedChars: 0, calls: 0 };

  constructor(private readonly host: SessionHost) {}

  stats(): SessionStats {
    return { ...this.counters };
  }

  reset(): void {
    this.text = '';
    this.baseText = '';
    this.baseTail = undefined;
    this.appended = [];
    this.appendedLength = 0;
    this.buf = new Uint32Array(0);
    this.len = 0;
    this.cutChars = [];
    this.cutTokens = [];
    this.cutClosed = [];
    this.startChars = [];
    this.startTokens = [];
    this.startWindows = [];
    this.pendingChar = -1;
    this.pendingMarks = undefined;
  }

  /** The current ids (a copy: O(n), the only O(n) step of a call that returns them all). */
  ids(): Uint32Array {
    return this.buf.slice(0, this.len);
  }

  /** The current ids without a copy; valid until the next update. */
  view(): Uint32Array {
    return this.buf.subarray(0, this.len);
  }

  /** ids[from, len) as a copy. */
  idsFrom(from: number): Uint32Array {
    return this.buf.slice(from, this.len);
  }

  get length(): number {
    return this.len;
  }

  /** text.slice(from) for the current text, reading only the characters it returns. */
  private tail(from: number): string {
    const base = this.baseText.length;
    if (from >= base) return tailOfPieces(this.appended, this.appendedLength, from - base);
    const head = this.baseTail ? this.baseTail(from) : this.baseText.slice(from);
    return this.appendedLength === 0 ? head : head + this.appended.join('');
  }

  /** The current text followed by `piece`, and the hint that lets update() skip comparing and reading the history. */
  appendHint(piece: string): { text: string; hint: PrefixHint } {
    const common = this.text.length;
    const hint: PrefixHint = { common, appended: piece, tail: (from) => (from >= common ? piece.slice(from - common) : this.tail(from) + piece) };
    return { text: this.text + piece, hint };
  }

  /** encodeBody(text), reusing the previous call's IDs up to the last safe cut. */
  encodeBody(text: string): Uint32Array {
    this.update(text);
    return this.ids();
  }

  /**
   * Moves the session to `text` and returns what changed: the new ids equal the old
   * ids[0, reused) followed by ids()[reused..], and `reused` is the longest such count.
   * `oldTail` holds the old ids[reused, reused + 16) (for callers that compare past the body).
   * Cost: O(common prefix) memcmp on the text + O(changed suffix) encode; no O(n) id work.
   */
  update(text: string, hint?: PrefixHint): { reused: number; oldLength: number; oldTail: Uint32Array } {
    // First, before any state moves: a refused text leaves the session as it was.
    this.host.checkSize(text);
    this.counters.calls++;
    const oldLength = this.len;
    if (this.counters.calls > 1 && hint === undefined && text === this.text) {
      this.counters.reusedChars += text.length;
      return { reused: oldLength, oldLength, oldTail: new Uint32Array(0) };
    }
    const common = this.counters.calls > 1 ? (hint ? hint.common : commonPrefixLength(this.text, text)) : 0;
    const margin = Math.max(this.host.scanner.maxLength, 1);
    if (this.pendingChar >= 0) this.placePendingCuts(common, margin);
    // Last cut c with c + margin <= common (binary search: cuts are sorted), then any later
    // closed cut with c <= common. Keeping a cut keeps the earlier ones: the split of the new
    // text agrees with the old one up to it, so they hold for the new text too.
    const cutChars = this.cutChars;
    let lo = 0;
    let hi = cutChars.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cutChars[mid]! + margin <= common) lo = mid + 1;
      else hi = mid;
    }
    let keep = lo; // cuts [0, keep) stay valid
    for (let j = lo; j < cutChars.length && cutChars[j]! <= common; j++) if (this.cutClosed[j] === 1) keep = j + 1;
    let startChar = keep > 0 ? this.cutChars[keep - 1]! : 0;
    let startTok = keep > 0 ? this.cutTokens[keep - 1]! : 0;
    let suffix: string | undefined;
    let encoded: { ids: Uint32Array; marks: Uint32Array | undefined } | undefined;
    // The new text is the old one followed by text that begins with an added token (a new turn
    // appended): the old text's last gap ends where that token starts, so all its ids stay.
    const oldChars = this.text.length;
    if (this.host.marks && this.counters.calls > 1 && common === oldChars && text.length > common && common - startChar >= START_CUT_GAIN) {
      const from = Math.max(0, common - margin + 1);
      const wide = hint ? hint.tail(from) : text.slice(from);
      const at = common - from;
      // (An rstrip token before the join never takes a whitespace-led token's first character:
      // HF keeps the later match; the rstrip cases of session.test.ts check it.)
      if (this.host.scanner.mayStart(wide.charCodeAt(at))) {
        const tail = wide.slice(at);
        const tried = this.host.encodeBody(tail);
        if (this.startCutHolds(wide, at, tried)) {
          startChar = common;
          startTok = oldLength;
          suffix = tail;
          encoded = tried;
        }
      }
    }
    // A later cut before an added token (a new user turn where the generation prompt was): the
    // gap before it need not be encoded again if the new text has an added token starting there.
    const j = this.host.marks && encoded === undefined ? this.lastStartBefore(common) : -1;
    if (j >= 0 && this.startChars[j]! - startChar >= START_CUT_GAIN) {
      const s = this.startChars[j]!;
      // The new text from a little before s: its first characters are the old ones (s < common).
      // Never this.text: after a chat call it is the render's unflattened rope, and reading one
      // character of it flattens all of it (~1 ms at 200 k tokens).
      const from = Math.max(0, s - margin + 1);
      const wide = hint ? hint.tail(from) : text.slice(from);
      const tail = wide.slice(s - from);
      const tried = this.host.encodeBody(tail);
      if (this.startCutHolds(wide, s - from, tried) && !this.host.scanner.straddles(this.startWindows[j]!, margin - 1)) {
        startChar = s;
        startTok = this.startTokens[j]!;
        suffix = tail;
        encoded = tried;
      }
    }
    suffix ??= hint ? hint.tail(startChar) : text.slice(startChar);
    const { ids: suffixIds, marks } = encoded ?? this.host.encodeBody(suffix);

    // The cut only promises equality up to startTok; the re-encoded tokens often match the old ones further.
    const old = this.buf;
    let same = 0;
    const limit = Math.min(suffixIds.length, oldLength - startTok);
    while (same < limit && suffixIds[same] === old[startTok + same]) same++;
    const reused = startTok + same;
    const oldTail = old.slice(reused, Math.min(oldLength, reused + 16));

    const need = startTok + suffixIds.length;
    if (need > this.buf.length) {
      // A quarter of headroom: the next appended turn then fits without copying the whole history.
      const grown = new Uint32Array(Math.max(need + (need >> 2) + 4096, this.buf.length * 2));
      grown.set(this.buf.subarray(0, startTok));
      this.buf = grown;
    }
    this.buf.set(suffixIds, startTok);
    this.len = need;

    // Setting an array's length is a runtime call even when it changes nothing (8 per call).
    if (this.cutChars.length !== keep) {
      this.cutChars.length = keep;
      this.cutTokens.length = keep;
      this.cutClosed.length = keep;
    }
    let starts = this.startChars.length; // starts before startChar are splits of the kept prefix
    while (starts > 0 && this.startChars[starts - 1]! >= startChar) starts--;
    if (this.startChars.length !== starts) {
      this.startChars.length = starts;
      this.startTokens.length = starts;
      this.startWindows.length = starts;
    }
    if (this.counters.calls > 1 && startChar < text.length / 2) {
      this.pendingChar = startChar;
      this.pendingTok = startTok;
      this.pendingMarks = marks;
    } else {
      this.addCuts(suffix, suffixIds, startChar, startTok, false, marks);
    }
    if (hint?.appended !== undefined && hint.common === oldChars) {
      this.appended.push(hint.appended);
      this.appendedLength += hint.appended.length;
      // Bounded: many small appends become one piece (O(appended) once per 1024 appends).
      if (this.appended.length > 1024) this.appended = [this.appended.join('')];
    } else {
      this.baseText = text;
      this.baseTail = hint?.tail;
      this.appended = [];
      this.appendedLength = 0;
    }
    this.text = text;
    this.counters.reusedChars += startChar;
    this.counters.encodedChars += suffix.length;
    return { reused, oldLength, oldTail };
  }

  /** Index of the last split start s with s + 1 <= common (the new text has the old text's character at s), or -1. */
  private lastStartBefore(common: number): number {
    let lo = 0;
    let hi = this.startChars.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.startChars[mid]! + 1 <= common) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  }

  /**
   * Whether ids[0, k) ++ encoded.ids is the new text's encoding, for a split start s of the old
   * text (k ids before it), where `wide` is the new text from a little before s (s is `at` in
   * it) and `encoded` the encode of wide.slice(at). The new text agrees with the old one on
   * [0, s] (so every match before s and every verdict that reads the character at s is the same):
   * - the tail's own encode begins with an added token at 0 (the marks), so in the new text too
   *   a split starts at s and the gap before it ends there, as it did: its ids do not change;
   * - that token is not lstrip (it could take whitespace before s) nor single_word (its verdict
   *   reads the character before s, which the tail's encode does not see), and not a normalized
   *   token under a real normalizer;
   * - no added token can start before s and reach past it in the new text (the text after s is
   *   new), checked by walking the tokens over the characters around s; nor could one in the old
   *   text (startWindows): a discarded single_word match across s consumed what it covered, so a
   *   shorter token inside it did not split there, and may in the new text.
   * Then the new text splits as the old one before s and as the tail from s.
   */
  private startCutHolds(wide: string, at: number, encoded: { ids: Uint32Array; marks: Uint32Array | undefined }): boolean {
    const { marks, ids } = encoded;
    if (marks === undefined || marks.length < 3 || marks[0] !== 0) return false;
    const { scanner } = this.host;
    return scanner.startCutOk(ids[marks[2]! - 1]!) && !scanner.straddles(wide, at);
  }

  /**
   * Places the deferred cuts of the previous text that the new one can use: those below
   * `common` (the previous and the new text agree there). Runs before this call changes
   * text or ids.
   */
  private placePendingCuts(common: number, margin: number): void {
    const charBase = this.pendingChar;
    const tokBase = this.pendingTok;
    const marks = this.pendingMarks;
    this.pendingChar = -1;
    this.pendingMarks = undefined;
    if (common - margin <= charBase) return; // no cut in the region could be kept
    const end = Math.min(common, this.text.length);
    this.addCuts(this.tail(charBase).slice(0, end - charBase), this.buf.subarray(tokBase, this.len), charBase, tokBase, end < this.text.length, marks);
  }

  /**
   * Cuts for `suffix` (= text[charBase..]) whose ids are `ids` (= ids[tokBase..]). With
   * `truncated`, suffix stops before the text does and `ids` still cover the whole rest: only
   * matches the scanner decides from characters inside suffix are used (start + margin + 1
   * <= its length: leftmost-longest reads maxLength characters, single_word one more), their
   * ids are matched against a prefix of `ids`, and the unterminated last gap gets no inner cuts.
   * With `marks` (the backend's split of text[charBase..], see SessionHost) they replace the
   * scan and its check against the ids; the truncation rule is applied to them all the same.
   */
  private addCuts(suffix: string, ids: Uint32Array, charBase: number, tokBase: number, truncated: boolean, marks?: Uint32Array): void {
    const { scanner } = this.host;
    let matches: AddedMatch[];
    let after: number[] | undefined;
    if (marks !== undefined) {
      // The backend's own split of this text: nothing to scan, nothing to check against the ids.
      matches = [];
      after = [];
      for (let i = 0; i < marks.length; i += 3) {
        const tok = marks[i + 2]!;
        const id = ids[tok - 1]!;
        matches.push({ start: marks[i]!, end: marks[i + 1]!, id, safeEnd: scanner.safeEndId[id] === 1, closed: scanner.isClosed(id) });
        after.push(tok);
      }
    } else {
      matches = scanner.scan(suffix);
    }
    if (truncated) {
      const decided = suffix.length - Math.max(scanner.maxLength, 1) - 1;
      while (matches.length > 0 && matches[matches.length - 1]!.start > decided) {
        matches.pop();
        after?.pop();
      }
    }
    after ??= matchesAgree(matches, ids, scanner, truncated);
    if (!after) return; // the scanner and the backend disagree: no cuts, next call re-encodes from here
    let gapStart = 0;
    let gapTok = 0;
    const reach = Math.max(scanner.maxLength, 1);
    for (let m = 0; m <= matches.length; m++) {
      if (m === matches.length && truncated) break;
      const gapEnd = m < matches.length ? matches[m]!.start : suffix.length;
      const gapTokEnd = m < matches.length ? after[m]! - 1 : ids.length;
      if (gapEnd - gapStart >= 2 * INNER_STRIDE) this.addInnerCuts(suffix, ids, gapStart, gapEnd, gapTok, gapTokEnd, charBase, tokBase);
      if (m === matches.length) break;
      const match = matches[m]!;
      // Starts serve only where marks can verify a start cut (host.marks). One within maxLength
      // of charBase is not recorded: a match crossing it could begin before charBase, in text
      // this call does not have.
      if (this.host.marks && match.start >= reach - 1) {
        this.startChars.push(charBase + match.start);
        this.startTokens.push(tokBase + after[m]! - 1);
        this.startWindows.push(suffix.slice(match.start - reach + 1, match.start + reach));
      }
      if (match.safeEnd) {
        this.cutChars.push(charBase + match.end);
        this.cutTokens.push(tokBase + after[m]!);
        this.cutClosed.push(match.closed ? 1 : 0);
      }
      gapStart = match.end;
      gapTok = after[m]!;
    }
  }

  /**
   * Cuts after "\n" + letter/digit inside one long text run, placed by token byte lengths.
   * Jumps from newline to newline (indexOf) and measures the text between candidates with
   * Buffer.byteLength; the token cursor only sums lengths. (A char-by-char walk here was the
   * session's largest cost when a template rewrites most of the prompt: ~1.7 ms per 60 K chars.)
   */
  private addInnerCuts(text: string, ids: Uint32Array, from: number, to: number, tokFrom: number, tokTo: number, charBase: number, tokBase: number): void {
    const { tokenLengths, newlineBreaks } = this.host;
    if (!tokenLengths || !newlineBreaks) return;
    const cuts: Array<[number, number]> = [];
    let t = tokFrom;
    let tokBytes = 0; // bytes of ids[tokFrom, t)
    // Sums token lengths up to `bytes`; false when a token has no length (an added token or an
    // id outside the table: then offsets are unknown and no cut is placed in this run).
    let known = true;
    const advanceTo = (bytes: number): void => {
      while (t < tokTo && tokBytes < bytes) {
        const len = ids[t]! < tokenLengths.length ? tokenLengths[ids[t]!]! : 0;
        if (len === 0) {
          known = false;
          return;
        }
        tokBytes += len;
        t++;
      }
    };
    let textBytes = 0; // bytes of text[from, at)
    let at = from;
    let lastCut = from;
    for (let nl = text.indexOf('\n', from + INNER_STRIDE - 1); nl >= 0 && nl < to - 2 && known; nl = text.indexOf('\n', nl + 1)) {
      const c = nl + 1;
      if (c - lastCut < INNER_STRIDE) continue;
      // A letter or digit after the newline: o200k's ` ?[^\s\p{L}\p{N}]+[\r\n/]*` may run on over "\n/", so punctuation is not safe.
      if (!LETTER_OR_DIGIT.test(text[c]!)) continue;
      // c - 1 is "\n", so neither end of text[at, c) splits a surrogate pair.
      textBytes += Buffer.byteLength(text.slice(at, c));
      at = c;
      advanceTo(textBytes);
      if (known && tokBytes === textBytes) {
        cuts.push([c, t]);
        lastCut = c;
      }
    }
    if (!known) return;
    // Token bytes must cover the run exactly, else normalization changed the text and offsets are unknown.
    advanceTo(Number.MAX_SAFE_INTEGER);
    if (!known || t !== tokTo || tokBytes !== textBytes + Buffer.byteLength(text.slice(at, to))) return;
    for (const [c, k] of cuts) {
      this.cutChars.push(charBase + c);
      this.cutTokens.push(tokBase + k);
      this.cutClosed.push(0);
    }
  }
}
