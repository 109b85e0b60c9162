import { PromptencError } from './errors.js';
import { checkFitOptions, type ChatOptions, type FitOptions, type FitResult } from './options.js';
import { SegmentCache } from './segment-cache.js';
import { validateMessages, type ChatMessage } from './template/messages.js';

/** What fitChat needs from its tokenizer (PromptTokenizer implements it). */
export interface FitChatHost {
  /** The prompt of `messages`, as renderChat renders it. */
  renderChat(messages: ChatMessage[], opts: ChatOptions): string;
  /** The exact token count of a rendered prompt (encodeChat's), encoded through `cache`. */
  countPrompt(prompt: string, cache: SegmentCache): number;
  /** The token count of a piece of text; fitChat only estimates with it. */
  countText(text: string): number;
  /** The tokenizer's own segment cache, when it is on. */
  readonly segmentCache: SegmentCache | undefined;
}

/**
 * Drop the oldest turns until the prompt fits in `maxTokens`. System/developer messages
 * and everything from the last user message on are never dropped; a turn (a user
 * message up to the next one) goes whole, so a tool call never loses its results.
 * Candidates are encoded through a segment cache (their text is mostly cached segments) and
 * the search starts at an estimate, so it costs a few renders, not one per halving.
 */
export function fitChat(host: FitChatHost, messages: ChatMessage[], opts: FitOptions): FitResult {
  const max = checkFitOptions(opts);
  const checked = validateMessages(messages);
  const { maxTokens: _max, ...chatOpts } = opts;
  const cache = host.segmentCache ?? new SegmentCache(64 * 1024 * 1024);
  const countFor = (dropUnits: number): { kept: ChatMessage[]; dropped: number[]; count: number } => {
    const dropped = units.slice(0, dropUnits).flat();
    const drop = new Set(dropped);
    const kept = checked.filter((_, i) => !drop.has(i));
    return { kept, dropped, count: host.countPrompt(host.renderChat(kept, chatOpts), cache) };
  };
  // Units: the droppable turns, oldest first.
  let lastUser = -1;
  checked.forEach((m, i) => {
    if (m.role === 'user') lastUser = i;
  });
  const units: number[][] = [];
  for (let i = 0; i < Math.max(lastUser, 0); i++) {
    const role = checked[i]!.role;
    if (role === 'system' || role === 'developer') continue;
    if (role === 'user' || units.length === 0) units.push([i]);
    else units[units.length - 1]!.push(i);
  }
  const full = countFor(0);
  if (full.count <= max) return { messages: full.kept, count: full.count, dropped: [] };
  // Rendering dominates each candidate (≈ 75 ms at 200k tokens against ≈ 14 ms of encoding),
  // so the search starts where the text sizes say the budget is met and only verifies
  // around it: usually two or three renders instead of log2(turns) + 2. The estimate
  // only picks where to look; every answer is an exact count.
  const textTokens = checked.map((m) => messageTextTokens(host, m));
  const scaffold = Math.max(0, (full.count - textTokens.reduce((x, y) => x + y, 0)) / Math.max(1, checked.length));
  let guess = units.length;
  for (let d = 0, est = full.count; d < units.length; d++) {
    for (const i of units[d]!) est -= textTokens[i]! + scaffold;
    if (est <= max) {
      guess = d + 1;
      break;
    }
  }
  // Invariant of the search below: drop = lo does not fit (lo = 0 is `full`), drop = hi fits.
  let lo = 0;
  let hi = -1;
  let best: ReturnType<typeof countFor> | undefined;
  let minimalCount = -1; // the count with every droppable turn gone, once known not to fit
  const tryDrop = (d: number): boolean => {
    const c = countFor(d);
    if (c.count > max) {
      lo = Math.max(lo, d);
      if (d === units.length) minimalCount = c.count;
      return false;
    }
    if (hi < 0 || d < hi) {
      hi = d;
      best = c;
    }
    return true;
  };
  if (tryDrop(guess)) {
    // Fits: gallop towards fewer dropped turns until one does not fit.
    for (let step = 1; guess - step > lo && tryDrop(guess - step); step *= 2);
  } else {
    // Does not fit: gallop towards more dropped turns, up to dropping all of them.
    for (let step = 1; hi < 0; step *= 2) {
      if (minimalCount >= 0) {
        throw new PromptencError(
          'E_BUDGET',
          `the conversation needs at least ${minimalCount} tokens after dropping every droppable turn (system messages and the last user turn stay), more than maxTokens ${max}`,
        );
      }
      tryDrop(Math.min(units.length, guess + step));
    }
  }
  // Fewest dropped turns that fit; the count shrinks as turns go, so binary search.
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    tryDrop(mid);
  }
  return { messages: best!.kept, count: best!.count, dropped: best!.dropped };
}

/** Tokens of a message's own text (content, reasoning, tool calls), encoded apart: only an estimate. */
function messageTextTokens(host: FitChatHost, m: ChatMessage): number {
  let n = 0;
  const add = (t: unknown) => {
    if (typeof t === 'string' && t !== '') n += host.countText(t);
  };
  if (typeof m.content === 'string') add(m.content);
  else if (Array.isArray(m.content)) for (const part of m.content) add((part as { text?: unknown }).text);
  add(m.reasoning_content);
  for (const tc of m.tool_calls ?? []) {
    add(tc.function?.name);
    const args = tc.function?.arguments;
    add(typeof args === 'string' ? args : JSON.stringify(args ?? null));
  }
  return n;
}
