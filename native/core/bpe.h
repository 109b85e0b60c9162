// Byte-level BPE model: vocab lookup by raw bytes, merge ranks, and the merge loop
// of Hugging Face `tokenizers` (models/bpe/word.rs `merge_all`), reproduced exactly.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hash_bytes.h"
#include "unicode.h"  // PROMPTENC_ALWAYS_INLINE
#include "vocab_map.h"

namespace promptenc {

/// (left id, right id) -> (rank, merged id). Later duplicates overwrite earlier
/// ones, as when HF collects the merges into a HashMap.
class MergeMap {
 public:
  struct Entry {
    uint64_t key;
    uint32_t rank;
    uint32_t newId;
  };
  void build(const uint32_t* triples, size_t count);
  /// find() behind a blocked Bloom filter (3 bits in one 64-bit word, ~8 bits per
  /// merge: a few hundred KB that stay in L2). Most neighbour pairs tested in the
  /// merge loop are not merges; the filter answers those without touching the table,
  /// whose random probes miss the cache.
  const Entry* findFiltered(uint32_t left, uint32_t right) const {
    const uint64_t key = (uint64_t(left) << 32) | right;
    const uint64_t f = key * 0xD6E8FEB86659FD93ull;
    const uint64_t want = filterBits(f);
    if ((filter_[(f >> 20) & filterMask_] & want) != want) return nullptr;
    return find(left, right);
  }
  /// findFiltered in two steps, so a caller with several independent pairs can start all
  /// their memory reads before it waits on any: probe() prefetches the pair's filter word
  /// and home slot, resolve() answers as findFiltered would.
  struct Probe {
    uint64_t key = kEmpty;
    uint64_t slot = 0;
    const uint64_t* word = nullptr;
    uint64_t want = 0;
  };
  Probe probe(uint32_t left, uint32_t right) const {
    const uint64_t key = (uint64_t(left) << 32) | right;
    const uint64_t f = key * 0xD6E8FEB86659FD93ull;
    Probe pr{key, slotOf(left, right), &filter_[(f >> 20) & filterMask_], filterBits(f)};
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(pr.word);
    __builtin_prefetch(&slots_[pr.slot]);
#endif
    return pr;
  }
  const Entry* resolve(const Probe& pr) const {
    if ((*pr.word & pr.want) != pr.want) return nullptr;
    return findFrom(pr.key, pr.slot);
  }
  const Entry* find(uint32_t left, uint32_t right) const {
    return findFrom((uint64_t(left) << 32) | right, slotOf(left, right));
  }
  /// Whether some pair was listed twice (then an earlier rank of it is not in force).
  bool hasRepeats() const { return repeats_; }

 private:
  const Entry* findFrom(uint64_t key, uint64_t h) const {
    for (;;) {
      const Entry& e = slots_[h];
      if (e.key == key) return &e;
      if (e.key == kEmpty) return nullptr;
      h = (h + 1) & mask_;
    }
  }
  static constexpr uint64_t kEmpty = ~uint64_t(0);
  static uint64_t mix(uint64_t k) {
    k ^= k >> 31;
    k *= 0x9E3779B97F4A7C15ull;
    k ^= k >> 29;
    return k;
  }
  // Pairs with the same left id and right ids in one aligned block of 16 start in 16
  // adjacent slots (4 cache lines), so the pairs a piece keeps testing (one left token
  // and the bytes that may follow it) share lines.
  uint64_t slotOf(uint32_t left, uint32_t right) const {
    return (mix((uint64_t(left) << 32) | (right >> 4)) * 16 + (right & 15)) & mask_;
  }
  static uint64_t filterBits(uint64_t f) {
    return (uint64_t(1) << (f >> 58)) | (uint64_t(1) << ((f >> 52) & 63)) | (uint64_t(1) << ((f >> 46) & 63));
  }
  HugeVector<Entry> slots_;
  uint64_t mask_ = 0;
  HugeVector<uint64_t> filter_;
  uint64_t filterMask_ = 0;
  bool repeats_ = false;
};

/// Bounded cache of pre-token -> ids for one encoding state (one thread at a time).
/// Pieces repeat a lot in real text; a hit replaces the merge loop (whose merge-table
/// probes are cache misses) by one probe here.
///
/// Never cleared wholesale: the table doubles (at half full) up to kMaxSlots, then an
/// insert into a full probe window evicts the window's least-hit entry (hit counts are
/// halved at each eviction, so old favourites age out). A key lives in the kWindow slots
/// from its home slot, so a lookup reads at most kWindow adjacent cache lines. A working
/// set of a few hundred thousand distinct pieces (the o200k rank table as JS source:
/// ~200k) stays warm; the old scheme cleared 2^17 entries at a time and so turned every
/// pass over such text into a cold one. Memory: at most 64 B x kMaxSlots plus the spill
/// arenas (kMaxArenaBytes), per state. Cost: O(1) per lookup and insert.
class WordCache {
 public:
  /// Longer pieces are not cached. Pieces of up to kFirstSightKey bytes are cached when first
  /// merged; longer ones (runs of box-drawing characters or spaces in Markdown, long words of
  /// unspaced scripts) only when merged a second time (admitLong) and only when they average
  /// at least 2 bytes per id. Caching them made warm passes over prose and multilingual text
  /// 1.04-1.12x faster (C++ encode bench), but caching every long piece on first sight (up to 4 KB)
  /// took a 1-3 MiB input of distinct ones to 16-25 bytes of peak memory per input byte, past
  /// the documented bound of 16. With both rules, text whose long pieces are all distinct
  /// keeps none of them, and what is kept costs at most 3 bytes of key and ids per byte.
  static constexpr size_t kMaxKey = 1024;
  static constexpr size_t kFirstSightKey = 128;
  /// Returns true and appends the cached ids on a hit.
  bool lookup(const uint8_t* p, size_t n, uint64_t h, std::vector<uint32_t>& out);
  /// The cached ids (*count of them) on a hit, else null: valid until the next insert.
  const uint32_t* find(const uint8_t* p, size_t n, uint64_t h, size_t* count);
  void insert(const uint8_t* p, size_t n, uint64_t h, const uint32_t* ids, size_t count);
  /// Hint: the slot a lookup of hash h starts at will be needed soon.
  void prefetch(uint64_t h) const {
#if defined(__GNUC__) || defined(__clang__)
    if (!slots_.empty()) __builtin_prefetch(&slots_[h & mask_]);
#else
    (void)h;
#endif
  }
  /// The address a lookup of hash h starts at, as plain values (see ShortWordCache::View).
  using View = LineTable;
  View view() const {
    static const char kNone[64] = {};
    return slots_.empty() ? View{kNone, 0} : View{slots_.data(), mask_};
  }
  /// Entries and evictions so far (tests and bench/linearity.mjs).
  size_t size() const { return count_; }
  size_t evictions() const { return evictions_; }
  size_t capacity() const { return slots_.size(); }

  static constexpr size_t kMinSlots = 1u << 12;
  static constexpr size_t kMaxSlots = 1u << 19;
  static constexpr size_t kWindow = 8;
  static constexpr size_t kMaxArenaBytes = size_t(8) << 20;

 private:
  // One cache line per slot: keys of up to kInlineKey bytes and up to kInlineIds ids
  // live in the slot itself, so a hit on a typical piece is one memory access. Longer
  // keys and id lists spill into keys_ / ids_, which are dropped together (with the
  // slots that point into them) when they reach kMaxArenaBytes.
  static constexpr size_t kInlineKey = 16;
  static constexpr size_t kInlineIds = 6;
  struct alignas(64) Slot {
    uint64_t hash = 0;    // 0 = empty
    uint32_t keyOff = 0;  // into keys_, when keyLen > kInlineKey
    uint32_t idOff = 0;   // into ids_, when idCount > kInlineIds
    uint16_t keyLen = 0;
    uint16_t idCount = 0;
    uint16_t hits = 0;  // saturating; the eviction victim is the window's minimum
    uint16_t pad = 0;
    uint8_t key[kInlineKey];
    uint32_t ids[kInlineIds];
  };
  static_assert(sizeof(Slot) == 64, "one cache line");
  bool spills(const Slot& s) const { return s.keyLen > kInlineKey || s.idCount > kInlineIds; }
  // Whether a long piece of hash h was offered before (then it is cached now); else records
  // it. A direct-mapped table of hashes (8 KB): two long pieces that share a line only make
  // each other wait for a later sight.
  bool admitLong(uint64_t h);
  static constexpr size_t kSeenSlots = 1024;
  void grow();
  void dropSpilled();
  CacheVector<Slot> slots_;
  size_t mask_ = 0;
  CacheVector<uint64_t> seen_;
  CacheVector<uint8_t> keys_;
  CacheVector<uint32_t> ids_;
  size_t count_ = 0;
  size_t evictions_ = 0;
};

/// The front of the word cache for the most common case: a piece of 2 to 15 bytes whose
/// ids are one to three tokens. 32-byte entries (the piece and its length packed in two
/// 8-byte words, the ids, their count) in 2-way sets of one cache line, so a hit is one probe
/// of one line and two word compares per way, and the hot words of a text stay in L2, where
/// the 64-byte slots of WordCache (2x the memory for the same pieces) do not. A new entry
/// takes way 0 and moves the old one to way 1. The table starts at 256 KB and doubles, up to
/// kMaxSets (16 MB, 512k pieces), whenever it has taken half as many entries as it has ways
/// since it was made (an upper bound of what it holds): a text whose short pieces do not fit
/// keeps growing it, one whose pieces fit stops early. (Counting only the entries since the
/// last doubling left 200k distinct pieces in 128k entries, and a third of a warm pass over
/// the o200k rank table fell through to WordCache.)
/// 15 bytes, not 16, so the length fits in the key's top byte; 3 ids, not 2, because the
/// pieces of 3 ids were most of the short pieces that missed it on English prose.
class ShortWordCache {
 public:
  static constexpr size_t kMaxLen = ShortKey::kMaxLen;
  static constexpr size_t kMaxIds = 3;
  static constexpr size_t kMinSets = size_t(1) << 12;
  static constexpr size_t kMaxSets = size_t(1) << 18;
  using Key = ShortKey;
  static uint64_t lenBits(size_t n) { return ShortKey::lenBits(n); }
  static uint64_t hiOfLast8(uint64_t last8, size_t n) { return ShortKey::hiOfLast8(last8, n); }
  static Key keyOf(const uint8_t* p, size_t n) { return ShortKey::of(p, n); }
  struct alignas(32) Entry {
    uint64_t lo = 0, hi = 0;  // hi 0 = empty
    uint32_t ids[kMaxIds] = {};
    uint32_t count = 0;  // ids[count, kMaxIds) are 0: a hit may copy all kMaxIds words
  };
  static_assert(sizeof(Entry) == 32, "two entries per cache line");
  /// The table as two plain values, for a piece loop that keeps them in registers (a
  /// member read after each out.push_back cannot be). Valid until the next insert. An
  /// empty cache is one set that matches nothing, so the loop needs no emptiness test.
  struct View {
    const Entry* table;
    size_t mask;
    const Entry* set(uint64_t h) const { return table + (size_t(h >> 40) & mask) * 2; }
    const Entry* find(Key k, uint64_t h) const {
      const Entry* e = set(h);
      if (e[0].lo == k.lo && e[0].hi == k.hi) return e;
      if (e[1].lo == k.lo && e[1].hi == k.hi) return e + 1;
      return nullptr;
    }
  };
  View view() const {
    alignas(64) static const Entry kNone[2] = {};
    return table_ ? View{table_.get(), mask_} : View{kNone, 0};
  }
  /// n is implied by k (kept for callers that pass it).
  const Entry* find(Key k, size_t /*n*/, uint64_t h) const { return view().find(k, h); }
  /// count: 1 to kMaxIds ids. Returns the entry the insert pushed out of its set (hi 0 when
  /// none), for the caller to keep in WordCache.
  Entry insert(Key k, size_t /*n*/, uint64_t h, const uint32_t* ids, size_t count) {
    if (!table_) {
      table_ = allocate(kMinSets * 2);
      for (size_t i = 0; i < kMinSets * 2; i++) table_[i] = Entry{};
      mask_ = kMinSets - 1;
    } else if (inserts_ >= mask_ + 1 && mask_ + 1 < kMaxSets) {  // half as many inserts as ways
      grow();
    }
    inserts_++;
    Entry en{};
    en.lo = k.lo;
    en.hi = k.hi;
    en.count = uint32_t(count);
    for (size_t i = 0; i < count; i++) en.ids[i] = ids[i];
    return place(en, h);
  }
  /// The bytes of an entry's piece (its length is hi's top byte) into b[16].
  static size_t bytesOf(const Entry& e, uint8_t* b) {
    std::memcpy(b, &e.lo, 8);
    std::memcpy(b + 8, &e.hi, 8);
    return size_t(e.hi >> 56);
  }

 private:
  // Bits above WordCache's index bits, so pieces that collide there do not collide here too.
  size_t setOf(uint64_t h) const { return size_t(h >> 40) & mask_; }
  // Way 0 keeps the first piece of its set, and a new piece takes way 1, except every 16th
  // insert, which takes way 0 and moves way 0 to way 1: three pieces that take turns in one
  // set then hit one time in three instead of never, and way 0 still turns over slowly.
  Entry place(const Entry& en, uint64_t h) {
    Entry* e = table_.get() + setOf(h) * 2;
    if (!e[0].hi) {
      e[0] = en;
      return Entry{};
    }
    const Entry out = e[1];
    if (e[1].hi && (inserts_ & 15) == 0) {
      e[1] = e[0];
      e[0] = en;
    } else {
      e[1] = en;
    }
    return out;
  }
  void grow();
  // The table is raw memory (posix_memalign), not a vector: grow() writes every set of the new
  // table once, where a vector's zero fill wrote it all first (a tenth of a first pass over
  // the o200k rank table).
  struct Free {
    void operator()(Entry* p) const { std::free(p); }
  };
  static std::unique_ptr<Entry[], Free> allocate(size_t entries);
  // An entry's piece hash (hashBytes of its bytes), from its packed words.
  static uint64_t hashOf(const Entry& e);
  std::unique_ptr<Entry[], Free> table_;
  size_t mask_ = 0;
  size_t inserts_ = 0;
};

/// Priority queue of merge candidates keyed by (rank, position), popping the minimum
/// exactly like the binary heap of word.rs (so the merge result is identical), but in
/// O(1) per operation on the inputs that matter: one FIFO of positions per rank, appended
/// to while positions arrive in order (the initial fill, and almost every push during a
/// left-to-right sweep), plus a small binary heap for the out-of-order rest. The non-empty
/// ranks are a two-level bitset, so the lowest rank is found by bit scans.
/// Used for long pre-tokens (1 MB of one letter is one piece of 1 M symbols).
/// Memory: 4 bytes per pending entry. Each FIFO is a chain of segments (8 entries, then
/// doubling up to kMaxSegment) and a segment is freed as soon as it has been read, so a
/// sweep that consumes one rank's entries while it pushes the next ranks' reuses the same
/// memory; with one growing array per rank, a run of one letter held every entry ever
/// pushed (~8 bytes per input byte) until the piece was done.
class RankQueue {
 public:
  RankQueue() = default;
  RankQueue(const RankQueue&) = delete;
  RankQueue& operator=(const RankQueue&) = delete;
  ~RankQueue();
  /// Ranks must be < rankCount. Cheap when called again with the same count.
  void reset(uint32_t rankCount);
  /// push() for the initial fill, whose positions only increase: no order check.
  void pushInitial(uint32_t rank, uint32_t pos) {
    uint32_t li = listOf_[rank];
    if (li == kNil) li = openList(rank);
    append(lists_[li], pos);
  }
  void finishInitial() {}
  void push(uint32_t rank, uint32_t pos) {
    uint32_t li = listOf_[rank];
    if (li == kNil) {
      li = openList(rank);
    } else if (lists_[li].last > pos) {
      pushOverflow(rank, pos);  // out of order for this rank's FIFO
      return;
    }
    append(lists_[li], pos);
  }
  /// Sets key to the minimum (rank << 32 | pos) and removes it; false when empty.
  /// Entries for which dead(pos) holds may be dropped instead of returned: the caller
  /// would skip them (a merged-away symbol never comes back), so dropping them early
  /// changes nothing. In a run of one letter half of all entries are such.
  template <class Dead>
  bool pop(uint64_t& key, Dead dead) {
    while (minRank_ != kNone) {
      const uint32_t r = minRank_;
      List& l = lists_[listOf_[r]];
      // Skip dead entries, freeing each segment once it has been read (all but the tail are full).
      uint32_t* rd = l.rd;
      const uint32_t* end;
      for (;;) {
        Segment* s = l.head;
        end = s == l.tail ? l.wr : s->pos + s->cap;
        while (rd < end && dead(*rd)) rd++;
        if (rd < end || s == l.tail) break;
        l.head = s->next;
        rd = l.head->pos;
        std::free(s);
      }
      if (rd == end) {
        l.rd = rd;
        closeList(r);
        continue;
      }
      const uint64_t k = (uint64_t(r) << 32) | *rd;
      if (!overflow_.empty() && ~overflow_.front() < k) {
        l.rd = rd;
        break;
      }
      l.rd = ++rd;
      if (rd == l.wr && l.head == l.tail) closeList(r);
      key = k;
      return true;
    }
    if (overflow_.empty()) return false;
    key = popOverflow();
    return true;
  }
  static constexpr uint32_t kNil = 0xFFFFFFFFu;
  static constexpr size_t kMemoSlots = 16;  // see BpeModel::mergeAll
  static constexpr uint32_t kFirstSegment = 8;
  static constexpr uint32_t kMaxSegment = 16384;  // 64 KB

 private:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  struct Segment {
    Segment* next;
    uint32_t cap;
    uint32_t pos[1];  // cap entries (allocated past the struct); full unless it is the tail
  };
  // The cursors live here, not in the segments: push and pop touch one List and the entry.
  struct List {
    Segment* head = nullptr;  // read at rd
    Segment* tail = nullptr;  // appended at wr, up to wrEnd
    uint32_t* rd = nullptr;
    uint32_t* wr = nullptr;
    uint32_t* wrEnd = nullptr;
    uint32_t last = 0;  // the last position appended (the order check of push)
    uint32_t nextCap = kFirstSegment;
  };
  void append(List& l, uint32_t pos) {
    if (l.wr == l.wrEnd) addSegment(l);
    *l.wr++ = pos;
    l.last = pos;
  }
  void addSegment(List& l);
  uint32_t openList(uint32_t rank);
  void closeList(uint32_t rank);
  void pushOverflow(uint32_t rank, uint32_t pos);
  uint64_t popOverflow();
  uint32_t findMinFrom(uint32_t rank) const;
  void setBit(uint32_t r) {
    bits0_[r >> 6] |= uint64_t(1) << (r & 63);
    bits1_[r >> 12] |= uint64_t(1) << ((r >> 6) & 63);
  }
  void clearBit(uint32_t r) {
    uint64_t& w = bits0_[r >> 6];
    w &= ~(uint64_t(1) << (r & 63));
    if (w == 0) bits1_[r >> 12] &= ~(uint64_t(1) << ((r >> 6) & 63));
  }
  std::vector<uint32_t> listOf_;  // per rank: index into lists_, kNil = no pending entry
  std::vector<List> lists_;       // open and recycled lists (a recycled one keeps one segment)
  std::vector<uint32_t> freeLists_;
  std::vector<uint64_t> bits0_, bits1_;
  uint32_t minRank_ = kNone;        // lowest rank with an open list
  std::vector<uint64_t> overflow_;  // ~(rank << 32 | pos), std max-heap
};

/// Reusable per-call scratch space for BpeModel::encodeWord.
struct BpeScratch {
  struct Symbol {
    uint32_t id;  // kNoId = merged away (the right part of a merge)
    int32_t prev;
    int32_t next;
  };
  HugeVector<Symbol> symbols;
  HugeVector<uint32_t> spans;     // long chunks with exact cuts: see BpeModel::mergeLong
  std::vector<uint64_t> initial;  // short pieces: the sorted initial pairs
  std::vector<uint64_t> heap;     // short pieces: later pushes, ~(rank << 32 | pos)
  std::vector<uint64_t> sortTmp;  // short pieces: radix sort buffer
  RankQueue queue;                // long pieces
  // A piece that fits shortCache (<= 15 bytes, <= 3 ids) is kept there alone; cache takes
  // only what shortCache pushes out, and the pieces that do not fit it. (Both took every
  // piece before: on a first pass over English prose with Llama 3, cache's doublings and
  // fills were half of the L2 misses, for pieces that shortCache already held.)
  ShortWordCache shortCache;
  WordCache cache;
  void keepShort(ShortWordCache::Key k, size_t n, uint64_t h, const uint32_t* ids, size_t count) {
    const ShortWordCache::Entry out = shortCache.insert(k, n, h, ids, count);
    if (out.hi) {
      uint8_t b[16];
      const size_t m = ShortWordCache::bytesOf(out, b);
      cache.insert(b, m, hashBytes(b, m), out.ids, out.count);
    }
  }
};

class BpeModel {
 public:
  /// bytes/offsets: raw bytes of model token i are bytes[offsets[i], offsets[i+1]).
  /// encodable[i] = 1 when the token's string is made only of ByteLevel chars
  /// (only those can be produced by encoding). triples: (left, right, new) per rank.
  BpeModel(std::vector<uint8_t> bytes, std::vector<uint32_t> offsets, const std::vector<uint8_t>& encodable,
           const uint32_t* mergeTriples, size_t mergeCount, bool ignoreMerges);
  BpeModel(const BpeModel&) = delete;
  BpeModel& operator=(const BpeModel&) = delete;

  /// Appends the ids of one pre-token (raw bytes) to out.
  void encodeWord(const uint8_t* p, size_t n, std::vector<uint32_t>& out, BpeScratch& scratch) const {
    encodeWord(p, n, n >= 2 ? hashBytes(p, n) : 0, out, scratch);
  }
  /// The same with h = hashBytes(p, n) already computed (any value when n < 2).
  void encodeWord(const uint8_t* p, size_t n, uint64_t h, std::vector<uint32_t>& out, BpeScratch& scratch) const;
  /// The id of a one-byte piece (kNoId: dropped, as HF drops a byte with no token).
  uint32_t byteId(uint8_t b) const { return byteToId_[b]; }
  /// Whether encodeWord answers a piece that is a whole token by one vocabulary lookup: with
  /// ignore_merges every such piece, else the tokens that BPE maps to themselves.
  bool wholeTokenLookup() const { return wholeTokens_; }
  /// Whether a piece of exactly this token's bytes encodes to the token alone, as known without
  /// merging (ignore_merges, or selfBits_; false may still be true when merged). encodeWord
  /// asks it after a vocabulary hit; tests compare it with the merges.
  bool mapsToSelf(uint32_t id) const { return ignoreMerges_ || ((selfBits_[id >> 6] >> (id & 63)) & 1); }
  /// The chain links that deciding selfBits_ may follow, per merge (plus 64 K in all): a bound
  /// on its load time for any merge list.
  static constexpr size_t kSelfLinksPerMerge = 32;
  /// Where the vocabulary lookup of a piece of 2 to ShortKey::kMaxLen bytes starts.
  LineTable shortTokens() const { return vocab_.shortLines(); }

  /// The merges of one pre-token (no whole-piece vocab shortcut). Pieces of at least
  /// queueMinSymbols bytes are first cut at provably uncrossable boundaries (see
  /// safeCut) into chunks of about kCutTarget bytes, merged one after another.
  void mergeWord(const uint8_t* p, size_t n, std::vector<uint32_t>& out, BpeScratch& scratch) const;
  /// Pieces (and chunks) with at least this many symbols use the RankQueue instead of the heap.
  static constexpr size_t kDefaultQueueMinSymbols = 1024;
  static constexpr size_t kCutTarget = 512;
  /// Testing knob: 2 sends every piece through the cut search (trying every boundary)
  /// and every chunk through the RankQueue.
  void setQueueMinSymbols(size_t n) {
    queueMinSymbols_ = n < 2 ? 2 : n;
    cutTarget_ = queueMinSymbols_ < kCutTarget ? queueMinSymbols_ / 2 : kCutTarget;
  }
  /// Testing knob: chunks of at most n bytes (capped at kShortMaxSymbols) take mergeShort;
  /// 0 sends every chunk through the heap of word.rs.
  void setShortMaxSymbols(size_t n) { shortMax_ = n < kShortMaxSymbols ? n : kShortMaxSymbols; }
  static constexpr size_t kShortMaxSymbols = 32;
  /// Pieces of more than this many bytes take mergeShort only when they are ASCII
  /// (identifiers, base64, numbers). C++ encode bench, first passes, 17-32-byte pieces
  /// through mergeShort instead of the heap: code 1.07x (gpt-4o), 1.11x (Llama 3), 1.11-1.13x
  /// (Qwen3, DeepSeek-V3), agent 1.01-1.05x; but for every such piece, ASCII or not, CJK
  /// 0.85x and multilingual 0.97x.
  static constexpr size_t kShortAnyBytes = 16;
  /// A chunk longer than this many bytes does not leave its scratch (mergeLong's spans,
  /// mergeChunk's symbols) in the state after it.
  static constexpr size_t kKeepSpans = size_t(4) << 20;
  /// Whether mergeShort is exact for this vocabulary (see joinsExact_); for tests.
  bool mergesJoin() const { return joinsExact_; }
  /// True when no merge can ever join the symbol ending at byte k with the one starting
  /// there, given the chunk [s, n) (which holds every symbol that can touch k).
  bool safeCut(const uint8_t* p, size_t s, size_t k, size_t n) const;
  size_t vocabSize() const { return offsets_.size() - 1; }
  const HugeVector<uint8_t>& bytes() const { return bytes_; }
  const HugeVector<uint32_t>& offsets() const { return offsets_; }

 private:
  size_t nextCut(const uint8_t* p, size_t s, size_t n) const;
  void mergeChunk(const uint8_t* p, size_t n, std::vector<uint32_t>& out, BpeScratch& scratch) const;
  template <class Queue>
  void mergeAll(const uint8_t* p, size_t n, BpeScratch& scratch, Queue& q) const;
  void mergeLong(const uint8_t* p, size_t n, std::vector<uint32_t>& out, BpeScratch& scratch) const;
  // Chunks of at most shortMax_ bytes when joinsExact_ (bpe_short.cc).
  void mergeShort(const uint8_t* p, size_t n, std::vector<uint32_t>& out) const;
  static constexpr uint32_t kSpanBit = 0x80000000u;  // mergeLong: "not the start of a symbol"
  HugeVector<uint8_t> bytes_;
  HugeVector<uint32_t> offsets_;
  VocabMap vocab_;
  MergeMap merges_;
  struct RankedMerge {
    uint32_t left, right, newId;
  };
  HugeVector<RankedMerge> mergeByRank_;  // the triple of each rank
  // Queued entries are popped soon after (chunks are short): load the rank's triple now.
  void prefetchRank(uint32_t rank) const {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(&mergeByRank_[rank]);
#else
    (void)rank;
#endif
  }
  // Rank of the merge (byteToId_[a], byteToId_[b]) at a * 256 + b, or kNoId. Every
  // initial pair of a piece is a byte pair, so the first fill needs no hash probe.
  HugeVector<uint32_t> bytePairRank_;
  uint32_t byteToId_[256];
  bool ignoreMerges_;
  // Without ignore_merges: bit t set when BPE on token t's bytes yields t alone (bpe_self.cc).
  void initSelfTokens(const uint32_t* triples, size_t count);
  std::vector<uint64_t> selfBits_;
  bool wholeTokens_ = false;  // ignoreMerges_, or some token in selfBits_
  // Every merge of two encodable tokens yields an encodable token whose length is the sum
  // of theirs (checked at construction): the condition under which mergeShort is exact.
  bool joinsExact_ = false;
  size_t shortMax_ = kShortMaxSymbols;
  // Cutting long pieces: exact only when every byte has a symbol and every merge of two
  // encodable tokens yields the token whose bytes are theirs joined (so a symbol's id is
  // the vocab id of the bytes it covers). Checked once at construction.
  // Built by initCuts on the first long piece (std::call_once: encode is const and may
  // run on several threads).
  void initCuts() const;
  mutable std::once_flag cutsOnce_;
  mutable bool cutsExact_ = false;
  // [x * 256 + y] = longest left part | longest right part << 16 over the merges whose
  // left part ends with byte x and right part starts with byte y (0 = none).
  mutable HugeVector<uint32_t> crossMax_;
  std::vector<uint8_t> encodable_;
  size_t queueMinSymbols_ = kDefaultQueueMinSymbols;
  size_t cutTarget_ = kCutTarget;
};

}  // namespace promptenc
