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
 * Rough memory of a session holding `tokens` ids of a `chars`-long prompt: this store's id copy
 * and the session's own id buffer (up to twice its length while it grows), the prompt text and
 * the render memo's pieces of it (UTF-16). An estimate for the budget, not a measurement.
 */
function estimateBytes(tokens: number, chars: number): number {
  return 12 * tokens + 4 * chars + 4096;
}

export interface SessionStats {
  sessions: number;
  bytes: number;
  hits: number;
  misses: number;
  evictions: number;
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
  private readonly counters = { hits: 0, misses: 0, evictions: 0 };
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly limits: SessionLimits,
    private readonly now: () => number = Date.now,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.max(1000, Math.min(30_000, limits.idleMs / 4)));
    this.sweeper.unref();
  }

  encodeChat(model: ServedModel, sessionId: string, messages: ChatMessage[], opts: ChatOptions): ChatEncoding {
    const key = `${model.spec.id}\u0000${sessionId}`;
    let entry = this.entries.get(key);
    if (entry && this.now() - entry.lastUsed > this.limits.idleMs) {
      this.remove(key, entry);
      entry = undefined;
    }
    const hit = entry !== undefined;
    if (entry) {
      this.entries.delete(key); // re-inserted below: Map order is the LRU order
      this.bytes -= entry.bytes;
    } else {
      entry = { model, session: model.tok.createSession(), ids: new Uint32Array(0), bytes: 0, lastUsed: 0 };
    }
    // A call that throws may leave the session half-updated; being a cache, it then stays out
    // of the map (it was taken out above) and the next request starts afresh.
    const rendered = entry.session.renderIncremental(messages, opts);
    const delta = entry.session.encodeRenderedDelta(rendered);
    const ids = new Uint32Array(delta.total);
    ids.set(entry.ids.subarray(0, delta.reused), 0);
    ids.set(delta.ids, delta.reused);
    entry.ids = ids;
    entry.lastUsed = this.now();
    entry.bytes = estimateBytes(ids.length, rendered.text.length);
    this.entries.set(key, entry);
    this.bytes += entry.bytes;
    if (hit) this.counters.hits++;
    else this.counters.misses++;
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

  /** Oldest first until both bounds hold; the entry just used stays even when it alone is over budget. */
  private evict(keep: string): void {
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.limits.maxSessions && this.bytes <= this.limits.maxBytes) break;
      if (key === keep) continue;
      this.remove(key, entry);
      this.counters.evictions++;
    }
  }

  private sweep(): void {
    const cutoff = this.now() - this.limits.idleMs;
    for (const [key, entry] of this.entries) if (entry.lastUsed < cutoff) this.remove(key, entry);
  }
}
