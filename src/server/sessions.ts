import { createHash } from 'node:crypto';
import type { ChatOptions } from '../options.js';
import type { PromptSession } from '../prompt-session.js';
import type { ChatMessage } from '../template/messages.js';
import type { ServedModel } from './models.js';
import type { ChatEncoding } from './chat.js';

export interface SessionLimits {
  /** Most sessions kept (LRU beyond it). */
  maxSessions: number;
  /** Estimated bytes of all sessions together (LRU beyond it). */
  maxBytes: number;
  /** A session unused this long is dropped. */
  idleMs: number;
  /** Also keep conversations sent without a session_id, found again by their messages. Default true. */
  prefixCache?: boolean;
}

interface Entry {
  model: ServedModel;
  session: PromptSession;
  /** The previous request's full ids: the response needs them all, the session returns a delta. */
  ids: Uint32Array;
  bytes: number;
  lastUsed: number;
}

/**
 * Rough memory of a session holding `tokens` ids of a `chars`-long prompt rendered from
 * `messages` messages: this store's id copy and the session's own id buffer, the prompt text,
 * the request's messages it keeps (about their text again), and the render memo, about 4.5 KB a
 * message; plus a session's fixed cost (~30 KB). Fitted to heap + external growth on Qwen3 with
 * 1 to 390 messages (test/server-prefix-cache.test.ts); the first estimate, 12 * tokens + 4 * chars +
 * 4096, was 3.5-7x low, so the budget let the sessions grow well past --session-memory.
 */
function estimateBytes(tokens: number, chars: number, messages: number): number {
  return 12 * tokens + 6 * chars + 4608 * messages + 32768;
}

export interface SessionStats {
  sessions: number;
  bytes: number;
  hits: number;
  misses: number;
  evictions: number;
  /** Requests without a session_id whose leading messages matched a kept conversation. */
  prefixHits: number;
  prefixMisses: number;
}

/**
 * Keys of every leading run of messages: keys[k] names (model, options, messages[0, k)), a
 * SHA-256 chain over each message's JSON, so finding the longest kept prefix costs one
 * serialization of the request and a map lookup per message. A collision could only make a
 * session render from the wrong memo, which it checks anyway: ids never depend on a key.
 */
/** Keys of recognized prefixes start with U+0001; session keys with the model id. */
const isPrefixKey = (key: string): boolean => key.charCodeAt(0) === 1;

function prefixKeys(modelId: string, messages: readonly ChatMessage[], opts: ChatOptions): string[] {
  let h = createHash('sha256').update(modelId).update('\u0000').update(JSON.stringify(opts)).digest('base64');
  const keys = [''];
  for (const m of messages) {
    h = createHash('sha256')
      .update(h)
      .update(JSON.stringify(m) ?? 'undefined')
      .digest('base64');
    keys.push(`\u0001${h}`);
  }
  return keys;
}

/**
 * Conversations kept between requests, keyed by (model, session_id): an LRU bounded in count,
 * in estimated bytes and by an idle timeout. A cache only: a request whose session is gone is
 * encoded in full and gets the same ids, so any process may answer any request.
 * Cost per request: the session's incremental render and encode, plus one O(n) copy of the ids.
 */
export class SessionStore {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private readonly counters = { hits: 0, misses: 0, evictions: 0, prefixHits: 0, prefixMisses: 0 };
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly limits: SessionLimits,
    private readonly now: () => number = Date.now,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.max(1000, Math.min(30_000, limits.idleMs / 4)));
    this.sweeper.unref();
  }

  get prefixCache(): boolean {
    return this.limits.prefixCache !== false && this.limits.maxSessions > 0;
  }

  encodeChat(model: ServedModel, sessionId: string, messages: ChatMessage[], opts: ChatOptions): ChatEncoding {
    const key = `${model.spec.id}\u0000${sessionId}`;
    const entry = this.take(key);
    const enc = this.encodeWith(model, key, entry, messages, opts);
    if (entry) this.counters.hits++;
    else this.counters.misses++;
    return enc;
  }

  /**
   * A request without a session_id: encoded from the kept conversation whose messages are the
   * longest prefix of these (with the same model and options), then kept under all of them. What
   * a client that resends its whole history gets from vLLM's prefix cache, for the tokenizer.
   */
  encodeChatByPrefix(model: ServedModel, messages: ChatMessage[], opts: ChatOptions): ChatEncoding {
    // No message, no prefix to find later: keys[0] is shared by every model and option set and
    // is never looked up, so keeping it would only replace an entry without its bytes.
    if (messages.length === 0) {
      this.counters.prefixMisses++;
      return this.encodeWith(model, undefined, undefined, messages, opts);
    }
    const keys = prefixKeys(model.spec.id, messages, opts);
    let entry: Entry | undefined;
    for (let k = messages.length; k >= 1 && !entry; k--) entry = this.take(keys[k]!);
    const enc = this.encodeWith(model, keys[messages.length]!, entry, messages, opts);
    if (entry) this.counters.prefixHits++;
    else this.counters.prefixMisses++;
    return enc;
  }

  /** The live entry under key, taken out of the map (encodeWith puts it back), or undefined. */
  private take(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.remove(key, entry); // re-inserted by encodeWith: Map order is the LRU order
    return this.now() - entry.lastUsed > this.limits.idleMs ? undefined : entry;
  }

  /** key undefined: encoded through a fresh session that is not kept. */
  private encodeWith(model: ServedModel, key: string | undefined, found: Entry | undefined, messages: ChatMessage[], opts: ChatOptions): ChatEncoding {
    const hit = found !== undefined;
    const entry = found ?? { model, session: model.tok.createSession(), ids: new Uint32Array(0), bytes: 0, lastUsed: 0 };
    // A call that throws may leave the session half-updated; being a cache, it then stays out
    // of the map (it was taken out above) and the next request starts afresh.
    const rendered = entry.session.renderIncremental(messages, opts);
    const delta = entry.session.encodeRenderedDelta(rendered);
    const ids = new Uint32Array(delta.total);
    ids.set(entry.ids.subarray(0, delta.reused), 0);
    ids.set(delta.ids, delta.reused);
    entry.ids = ids;
    entry.lastUsed = this.now();
    entry.bytes = estimateBytes(ids.length, rendered.text.length, messages.length);
    if (key === undefined) return { ids, prompt: rendered.text, reused: 0 };
    // Whatever is still under key (none when take found it) leaves with its bytes.
    const previous = this.entries.get(key);
    if (previous) this.remove(key, previous);
    this.entries.set(key, entry);
    this.bytes += entry.bytes;
    this.evict(key);
    return { ids, prompt: rendered.text, reused: hit ? delta.reused : 0 };
  }

  stats(): SessionStats {
    return { sessions: this.entries.size, bytes: this.bytes, ...this.counters };
  }

  close(): void {
    clearInterval(this.sweeper);
    this.entries.clear();
    this.bytes = 0;
  }

  private remove(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }

  /** Oldest first until both bounds hold, recognized prefixes before sessions; the entry just used stays when it alone is over budget. */
  private evict(keep: string): void {
    const over = () => this.entries.size > this.limits.maxSessions || this.bytes > this.limits.maxBytes;
    const drop = (key: string, entry: Entry) => {
      this.remove(key, entry);
      this.counters.evictions++;
    };
    // Recognized prefixes go first, oldest first, then the one just kept if it is one: a
    // session_id is what a client asked to keep, and one-off requests without one must not
    // push those out.
    for (const [key, entry] of this.entries) {
      if (!over()) return;
      if (key !== keep && isPrefixKey(key)) drop(key, entry);
    }
    const kept = this.entries.get(keep);
    if (over() && kept && isPrefixKey(keep) && this.entries.size > 1) drop(keep, kept);
    for (const [key, entry] of this.entries) {
      if (!over()) return;
      if (key !== keep) drop(key, entry);
    }
  }

  private sweep(): void {
    const cutoff = this.now() - this.limits.idleMs;
    for (const [key, entry] of this.entries) if (entry.lastUsed < cutoff) this.remove(key, entry);
  }
}
