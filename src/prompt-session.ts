import { RenderMemo, tailOfPieces, type ChatTemplate } from './template/render.js';
import type { ChatMessage } from './template/messages.js';
import { PromptencError } from './errors.js';
import { checkOptions, checkText, splitSpecialOf, type ChatOptions, type EncodeOptions } from './options.js';
import { framed, NO_WRAP, type SequenceWrap } from './postprocess.js';
import type { EncodeSession, PrefixHint } from './session.js';

/**
 * What a PromptSession needs from its tokenizer (PromptTokenizer implements it): the wrap
 * of the options and the chat render. The ids come from the EncodeSession it is given.
 */
export interface PromptSessionHost {
  /** The ids added around the body for these options (none when addSpecialTokens is false). */
  sessionWrap(opts: EncodeOptions): SequenceWrap;
  /** renderChat reusing `memo` (see src/template/render.ts and engine/memo.ts); checks messages and options. */
  renderChatIncremental(messages: ChatMessage[], opts: ChatOptions, memo: RenderMemo): ReturnType<ChatTemplate['renderIncremental']>;
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
    private readonly tok: PromptSessionHost,
    private readonly inner: EncodeSession,
  ) {}

  /** Exactly `tok.encode(text, opts)`. */
  encode(text: string, opts: EncodeOptions = {}): Uint32Array {
    checkText(text);
    checkOptions(opts, 'options');
    noSplitSpecial(opts);
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
    noSplitSpecial(opts);
    return this.delta(text, this.tok.sessionWrap(opts));
  }

  /**
   * Exactly `tok.encode(previous + text, opts)`, where `previous` is the text of this session's
   * last call (empty before the first): the work is O(text) plus one copy of the ids, with no
   * comparison of the history (encode and encodeDelta compare the whole prompt with the previous
   * one first). The text before the last safe cut (an added token, or a boundary the history's
   * pieces cannot cross) is not encoded again, so the ids equal a full encode.
   */
  append(text: string, opts: EncodeOptions = {}): Uint32Array {
    this.appendDelta(text, opts);
    return framed(this.lastWrap!, this.inner.view());
  }

  /** `append` as a delta from the previous result: O(text) work, no copy of the history's ids. */
  appendDelta(text: string, opts: EncodeOptions = {}): SessionDelta {
    checkText(text);
    checkOptions(opts, 'options');
    noSplitSpecial(opts);
    const wrap = this.tok.sessionWrap(opts);
    // The new text agrees with the previous one on [0, common) by construction: the hint lets
    // the session skip the comparison and never read (flatten) the history.
    const { text: whole, hint } = this.inner.appendHint(text);
    this.chatLinked = false;
    this.lastRendered = undefined;
    return this.delta(whole, wrap, hint);
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
   * Incremental render (ChatTemplate.renderIncremental over the engine's memo, src/template/engine/memo.ts). Its prefix bound holds against the
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

/**
 * The session's ids are cut at added tokens and kept across calls; with special-token text read
 * as text those cuts differ. Refused rather than answered with the special tokens' ids.
 */
function noSplitSpecial(opts: EncodeOptions): void {
  if (splitSpecialOf(opts)) {
    throw new PromptencError('E_ARGUMENT', 'options.splitSpecialTokens: a session does not support it; use tok.encode(text, { splitSpecialTokens: true })');
  }
}
