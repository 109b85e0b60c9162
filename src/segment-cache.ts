/**
 * A byte-bounded LRU from a text chunk (ending at a safe added-token cut, see split.ts)
 * to its IDs. A system prompt or tool list repeated across conversations is encoded once.
 * Cost per entry: the key's UTF-16 bytes + the IDs' bytes + a fixed 64-byte estimate for
 * the Map entry and objects; `bytes` counts exactly this, so `maxBytes` is honoured.
 */
export interface SegmentCacheStats {
  hits: number;
  misses: number;
  hitRate: number;
  entries: number;
  bytes: number;
  maxBytes: number;
}

const ENTRY_OVERHEAD = 64;

export class SegmentCache {
  private readonly map = new Map<string, Uint32Array>();
  private bytes = 0;
  private hits = 0;
  private misses = 0;

  constructor(readonly maxBytes: number) {}

  get(key: string): Uint32Array | undefined {
    const ids = this.map.get(key);
    if (ids === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    // Re-insert: Map iteration order is insertion order, so the first key is the least recent.
    this.map.delete(key);
    this.map.set(key, ids);
    return ids;
  }

  set(key: string, ids: Uint32Array): void {
    const size = key.length * 2 + ids.byteLength + ENTRY_OVERHEAD;
    if (size > this.maxBytes / 4 || this.map.has(key)) return;
    this.map.set(key, ids);
    this.bytes += size;
    while (this.bytes > this.maxBytes) {
      const oldest = this.map.keys().next().value as string;
      const old = this.map.get(oldest)!;
      this.map.delete(oldest);
      this.bytes -= oldest.length * 2 + old.byteLength + ENTRY_OVERHEAD;
    }
  }

  clear(): void {
    this.map.clear();
    this.bytes = 0;
  }

  stats(): SegmentCacheStats {
    const total = this.hits + this.misses;
    return {
      hits: this.hits,
      misses: this.misses,
      hitRate: total === 0 ? 0 : this.hits / total,
      entries: this.map.size,
      bytes: this.bytes,
      maxBytes: this.maxBytes,
    };
  }
}
