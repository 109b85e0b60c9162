// Performance notes (see also native/README.md, "Long pieces"):
// - Merge loop: the queue keyed by (rank, position) of word.rs, with its
//   stale-entry test (the pair now at `pos` must still produce the same new id; a plain
//   "least (rank, pos) pair" rescan is equivalent only when every merge yields its two
//   parts joined, see bpe_short.cc). Chunks of <= kShortAnyBytes bytes of such a
//   vocabulary, and ASCII ones of <= kShortMaxSymbols: that rescan, in stack arrays
//   (mergeShort). Other short pieces: the initial
//   pairs sorted once plus a binary heap of later pushes. Chunks of >= 1024 symbols use
//   RankQueue instead, which pops the identical (rank, pos) sequence in O(1) per step.
// - Pieces of >= 1024 bytes are first cut at provably uncrossable boundaries (safeCut)
//   into ~512-byte chunks: unbroken CJK then stays in L1 (1 MB: 220 -> 45 ms CPU).
//   Runs of one character have no such boundary and go through RankQueue whole, in
//   mergeLong's compact form (4 bytes per byte, not 12) when the vocabulary's cuts are exact.
// - Per merge, the memory touched is kept small: initial pairs from a 256 x 256 rank
//   table, the stale test compares against the rank's own pair before probing, neighbour
//   pairs go through a Bloom filter first, the rank's triple is prefetched at push time.
// - Vocab lookup (vocab_map.h): tokens of <= 15 bytes with their keys inline in 64-byte
//   buckets, longer ones in an open-addressing table of ids over the model byte buffer;
//   merges are a second open-addressing table keyed by (left << 32 | right), slots
//   clustered by left id.
// Tried and dropped (no gain here): software prefetch of the symbols of queued entries,
// compacting the symbol array once half of it is dead, a per-id "is a left/right part"
// bit filter before the Bloom filter, cut targets of 256 and 1000 bytes.
#include "bpe.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>
#include <stdexcept>

#include "ascii_runs.h"

namespace promptenc {

namespace {
// word.rs merge_all's queue: lowest rank first, then lowest position. An entry is the
// 64-bit key (rank << 32 | pos); std heap is a max-heap, so keys are stored negated.
// Same push/pushInitial/pop surface as RankQueue, so both run the one merge loop below.
struct HeapQueue {
  static constexpr size_t kMemoSlots = 0;
  std::vector<uint64_t>& initial;  // (rank << 32 | pos), sorted by finishInitial
  std::vector<uint64_t>& heap;     // later pushes, negated
  std::vector<uint64_t>& tmp;      // radix sort buffer
  size_t next = 0;                 // initial[next..] are pending
  void push(uint32_t rank, uint32_t pos) {
    heap.push_back(~((uint64_t(rank) << 32) | pos));
    std::push_heap(heap.begin(), heap.end());
  }
  // The initial fill is sorted once; pops take the smaller of its head and the heap top
  // (most pops of a short piece are initial pairs, so the heap stays small).
  void pushInitial(uint32_t rank, uint32_t pos) { initial.push_back((uint64_t(rank) << 32) | pos); }
  // Positions arrive in ascending order, so a stable sort by rank alone gives the
  // (rank, pos) order. Past ~64 pairs an LSD radix sort on the rank bytes (three passes of
  // counting, no data-dependent branches) beats std::sort, whose compares mispredict about
  // half the time (a 512-byte chunk of CJK has ~500 initial pairs).
  void finishInitial() {
    const size_t n = initial.size();
    uint64_t all = 0;  // OR of every key: passes over rank bytes that are zero everywhere are skipped
    if (n >= 64)
      for (uint64_t k : initial) all |= k;
    if (n < 64 || (all >> 56) != 0) {  // short, or a rank of 2^24 or more (three passes cover 24 bits)
      std::sort(initial.begin(), initial.end());
      return;
    }
    tmp.resize(n);
    uint64_t* src = initial.data();
    uint64_t* dst = tmp.data();
    for (int shift = 32; shift < 56; shift += 8) {
      if (((all >> shift) & 0xFF) == 0) continue;
      size_t count[257] = {};
      for (size_t i = 0; i < n; i++) count[((src[i] >> shift) & 0xFF) + 1]++;
      for (int b = 0; b < 256; b++) count[b + 1] += count[b];
      for (size_t i = 0; i < n; i++) dst[count[(src[i] >> shift) & 0xFF]++] = src[i];
      std::swap(src, dst);
    }
    if (src != initial.data()) std::memcpy(initial.data(), src, n * sizeof(uint64_t));
  }
  template <class Dead>
  bool pop(uint64_t& key, Dead) {
    if (!heap.empty() && (next == initial.size() || ~heap.front() < initial[next])) {
      std::pop_heap(heap.begin(), heap.end());
      key = ~heap.back();
      heap.pop_back();
      return true;
    }
    if (next == initial.size()) return false;
    key = initial[next++];
    return true;
  }
};
}  // namespace

namespace {

// bytesEqual for the word cache's keys (up to WordCache::kMaxKey bytes): 8 bytes at a time
// and an overlapping last word, inline, where memcmp would be a library call per hit.
inline bool keyEqual(const uint8_t* a, const uint8_t* b, size_t n) {
  if (n < 8) return bytesEqual(a, b, n);
  uint64_t diff = load64(a + n - 8) ^ load64(b + n - 8);
  for (size_t i = 0; i + 8 < n && !diff; i += 8) diff = load64(a + i) ^ load64(b + i);
  return diff == 0;
}

}  // namespace

const uint32_t* WordCache::find(const uint8_t* p, size_t n, uint64_t h, size_t* count) {
  if (slots_.empty()) return nullptr;
  size_t i = h & mask_;
  for (size_t w = 0; w < kWindow; w++, i = (i + 1) & mask_) {
    Slot& s = slots_[i];
    if (s.hash == 0) return nullptr;  // inserts fill a window front to back
    if (s.hash == h && s.keyLen == n && keyEqual(n <= kInlineKey ? s.key : keys_.data() + s.keyOff, p, n)) {
      if (s.hits != 0xFFFF) s.hits++;
      *count = s.idCount;
      return s.idCount <= kInlineIds ? s.ids : ids_.data() + s.idOff;
    }
  }
  return nullptr;
}

bool WordCache::lookup(const uint8_t* p, size_t n, uint64_t h, std::vector<uint32_t>& out) {
  size_t count;
  const uint32_t* src = find(p, n, h, &count);
  if (!src) return false;
  if (count == 1)
    out.push_back(src[0]);
  else
    out.insert(out.end(), src, src + count);  // no zero-fill first, unlike resize
  return true;
}

// Doubling rehash while below kMaxSlots. An entry whose new window is full is dropped (at
// most half full, that is rare), and so are entries evicted in the meantime: it is a cache.
void WordCache::grow() {
  if (slots_.empty()) {
    slots_.assign(kMinSlots, Slot{});
    mask_ = slots_.size() - 1;
    return;
  }
  CacheVector<Slot> old;
  old.swap(slots_);
  slots_.assign(old.size() * 2, Slot{});
  mask_ = slots_.size() - 1;
  count_ = 0;
  for (const Slot& s : old) {
    if (s.hash == 0) continue;
    size_t i = s.hash & mask_;
    for (size_t w = 0; w < kWindow; w++, i = (i + 1) & mask_) {
      if (slots_[i].hash == 0) {
        slots_[i] = s;
        count_++;
        break;
      }
    }
  }
}

// The spill arenas are full: empty every slot that points into them. An emptied slot can
// end a later lookup's window walk early, which only costs a miss (and a second copy of
// an entry further on is never read wrongly: both copies hold the same ids).
void WordCache::dropSpilled() {
  for (Slot& s : slots_) {
    if (s.hash != 0 && spills(s)) {
      s = Slot{};
      count_--;
    }
  }
  keys_.clear();
  ids_.clear();
}

bool WordCache::admitLong(uint64_t h) {
  if (seen_.empty()) seen_.assign(kSeenSlots, 0);
  // Bits above the slot index, so pieces in one window of slots spread over the table.
  uint64_t& s = seen_[size_t(h >> 32) & (kSeenSlots - 1)];
  if (s == h) return true;
  s = h;
  return false;
}

void WordCache::insert(const uint8_t* p, size_t n, uint64_t h, const uint32_t* ids, size_t count) {
  if (n > kMaxKey || count > 0xFFFF) return;
  if (n > kFirstSightKey && (count * 2 > n || !admitLong(h))) return;
  if (slots_.empty() || (slots_.size() < kMaxSlots && (count_ + 1) * 2 > slots_.size())) grow();
  const bool spill = n > kInlineKey || count > kInlineIds;
  if (spill && (keys_.size() + n > kMaxArenaBytes || (ids_.size() + count) * 4 > kMaxArenaBytes)) dropSpilled();
  size_t i = h & mask_;
  size_t victim = i;
  uint16_t fewest = 0xFFFF;
  bool empty = false;
  for (size_t w = 0; w < kWindow; w++, i = (i + 1) & mask_) {
    const Slot& s = slots_[i];
    if (s.hash == 0) {
      victim = i;
      empty = true;
      break;
    }
    // Already here (its ids are the same: they depend on the bytes alone). The short cache
    // pushes out pieces that it took from here; a second copy took a slot of the window
    // and, when the window was full, evicted another piece and halved every hit count.
    if (s.hash == h && s.keyLen == n && keyEqual(n <= kInlineKey ? s.key : keys_.data() + s.keyOff, p, n)) return;
    if (s.hits < fewest) {
      fewest = s.hits;
      victim = i;
    }
  }
  if (empty) {
    count_++;
  } else {
    evictions_++;
    size_t j = h & mask_;
    for (size_t w = 0; w < kWindow; w++, j = (j + 1) & mask_) slots_[j].hits >>= 1;
  }
  Slot& s = slots_[victim];
  s.hash = h;
  s.keyLen = uint16_t(n);
  s.idCount = uint16_t(count);
  s.hits = 0;
  if (n <= kInlineKey) {
    std::memcpy(s.key, p, n);
  } else {
    s.keyOff = uint32_t(keys_.size());
    keys_.insert(keys_.end(), p, p + n);
  }
  if (count <= kInlineIds) {
    std::memcpy(s.ids, ids, count * sizeof(uint32_t));
  } else {
    s.idOff = uint32_t(ids_.size());
    ids_.insert(ids_.end(), ids, ids + count);
  }
}

std::unique_ptr<ShortWordCache::Entry[], ShortWordCache::Free> ShortWordCache::allocate(size_t entries) {
  void* p = nullptr;
  if (posix_memalign(&p, 64, entries * sizeof(Entry)) != 0) throw std::bad_alloc();
  return std::unique_ptr<Entry[], Free>(static_cast<Entry*>(p));
}

uint64_t ShortWordCache::hashOf(const Entry& e) {
  const size_t n = size_t(e.hi >> 56);
  if (n <= 8) return hashShort(e.lo, n);
  // Bytes [n - 8, n): the top 16 - n bytes of lo, then the n - 8 bytes of hi.
  const uint64_t hiBytes = e.hi & ~(uint64_t(0xFF) << 56);
  return hashMid(e.lo, (e.lo >> (8 * (n - 8))) | (hiBytes << (8 * (16 - n))), n);
}

void ShortWordCache::grow() {
  const size_t oldSets = mask_ + 1, sets = oldSets * 2;
  std::unique_ptr<Entry[], Free> old = std::move(table_);
  table_ = allocate(sets * 2);
  mask_ = sets - 1;
  // Set s splits into s and s + oldSets (one more bit of the hash): both are written here,
  // once each. An entry keeps its way, but for way 1 when way 0 of its new set is free: as
  // place() into an empty set would put them.
  for (size_t s = 0; s < oldSets; s++) {
    Entry* low = table_.get() + s * 2;
    Entry* high = table_.get() + (s + oldSets) * 2;
    low[0] = low[1] = high[0] = high[1] = Entry{};
    for (int way = 0; way < 2; way++) {
      const Entry& e = old[s * 2 + way];
      if (!e.hi) continue;
      Entry* to = setOf(hashOf(e)) == s ? low : high;
      to[to[0].hi ? 1 : 0] = e;
    }
  }
}

void MergeMap::build(const uint32_t* triples, size_t count) {
  const uint64_t size = openTableSize(count);
  slots_.assign(size, Entry{kEmpty, 0, 0});
  mask_ = size - 1;
  for (size_t rank = 0; rank < count; rank++) {
    const uint32_t left = triples[rank * 3], right = triples[rank * 3 + 1], newId = triples[rank * 3 + 2];
    const uint64_t key = (uint64_t(left) << 32) | right;
    uint64_t h = slotOf(left, right);
    for (;;) {
      Entry& e = slots_[h];
      if (e.key == kEmpty || e.key == key) {
        repeats_ = repeats_ || e.key == key;
        e = Entry{key, uint32_t(rank), newId};
        break;
      }
      h = (h + 1) & mask_;
    }
  }
  size_t words = 1;
  while (words * 64 < count * 8) words <<= 1;
  filter_.assign(words, 0);
  filterMask_ = words - 1;
  for (size_t rank = 0; rank < count; rank++) {
    const uint64_t key = (uint64_t(triples[rank * 3]) << 32) | triples[rank * 3 + 1];
    const uint64_t f = key * 0xD6E8FEB86659FD93ull;
    filter_[(f >> 20) & filterMask_] |= filterBits(f);
  }
}

void RankQueue::reset(uint32_t rankCount) {
  if (listOf_.size() != rankCount) {
    listOf_.assign(rankCount, kNil);
    bits0_.assign((size_t(rankCount) + 63) / 64, 0);
    bits1_.assign((bits0_.size() + 63) / 64 + 1, 0);
  }
  // A drained queue has closed every array and cleared every bit: nothing else to reset.
  minRank_ = kNone;
  overflow_.clear();
}

RankQueue::~RankQueue() {
  for (List& l : lists_) {
    for (Segment* s = l.head; s;) {
      Segment* next = s->next;
      std::free(s);
      s = next;
    }
  }
}

void RankQueue::addSegment(List& l) {
  const uint32_t cap = l.nextCap;
  l.nextCap = std::min(cap * 2, kMaxSegment);
  void* mem = std::malloc(offsetof(Segment, pos) + size_t(cap) * sizeof(uint32_t));
  if (!mem) throw std::bad_alloc();
  Segment* s = static_cast<Segment*>(mem);
  s->next = nullptr;
  s->cap = cap;
  if (l.tail) {
    l.tail->next = s;  // full: every segment but the tail is
  } else {
    l.head = s;
    l.rd = s->pos;
  }
  l.tail = s;
  l.wr = s->pos;
  l.wrEnd = s->pos + cap;
}

uint32_t RankQueue::openList(uint32_t rank) {
  uint32_t li;
  if (!freeLists_.empty()) {
    li = freeLists_.back();
    freeLists_.pop_back();
  } else {
    li = uint32_t(lists_.size());
    lists_.emplace_back();
  }
  List& l = lists_[li];
  if (!l.head) addSegment(l);
  listOf_[rank] = li;
  setBit(rank);
  if (rank < minRank_) minRank_ = rank;
  return li;
}

// A list is closed when everything in it has been read, so head == tail: that segment is
// kept for the list's next use when it is small (opening a list is then no allocation).
void RankQueue::closeList(uint32_t rank) {
  const uint32_t li = listOf_[rank];
  List& l = lists_[li];
  Segment* s = l.head;
  if (s->cap > 1024) {
    std::free(s);
    l = List{};
  } else {
    l.rd = l.wr = s->pos;
    l.nextCap = std::min(s->cap * 2, kMaxSegment);
  }
  freeLists_.push_back(li);
  listOf_[rank] = kNil;
  clearBit(rank);
  if (rank == minRank_) minRank_ = findMinFrom(rank);
}

void RankQueue::pushOverflow(uint32_t rank, uint32_t pos) {
  overflow_.push_back(~((uint64_t(rank) << 32) | pos));
  std::push_heap(overflow_.begin(), overflow_.end());
}

uint64_t RankQueue::popOverflow() {
  const uint64_t k = ~overflow_.front();
  std::pop_heap(overflow_.begin(), overflow_.end());
  overflow_.pop_back();
  return k;
}

uint32_t RankQueue::findMinFrom(uint32_t rank) const {
  size_t w0 = rank >> 6;
  if (w0 >= bits0_.size()) return kNone;
  uint64_t w = bits0_[w0] & (~uint64_t(0) << (rank & 63));
  if (w) return uint32_t(w0 * 64 + __builtin_ctzll(w));
  // The next non-empty level-0 word after w0, through level 1.
  const size_t start = w0 + 1;
  size_t w1 = start >> 6;
  if (w1 >= bits1_.size()) return kNone;
  uint64_t v = bits1_[w1] & (~uint64_t(0) << (start & 63));
  while (!v) {
    if (++w1 >= bits1_.size()) return kNone;
    v = bits1_[w1];
  }
  const size_t nw0 = w1 * 64 + __builtin_ctzll(v);
  return uint32_t(nw0 * 64 + __builtin_ctzll(bits0_[nw0]));
}

BpeModel::BpeModel(std::vector<uint8_t> bytes, std::vector<uint32_t> offsets, const std::vector<uint8_t>& encodable,
                   const uint32_t* mergeTriples, size_t mergeCount, bool ignoreMerges)
    : bytes_(bytes.begin(), bytes.end()), offsets_(offsets.begin(), offsets.end()), ignoreMerges_(ignoreMerges) {
  if (offsets_.empty() || offsets_.back() != bytes_.size() || encodable.size() + 1 != offsets_.size())
    throw std::invalid_argument("vocab offsets do not match the vocab bytes");
  for (size_t i = 0; i + 1 < offsets_.size(); i++)
    if (offsets_[i] > offsets_[i + 1]) throw std::invalid_argument("vocab offsets are not ascending");
  const size_t vocab = offsets_.size() - 1;
  for (size_t i = 0; i < mergeCount * 3; i++)
    if (mergeTriples[i] >= vocab) throw std::invalid_argument("merge refers to an id outside the vocab");
  encodable_ = encodable;
  merges_.build(mergeTriples, mergeCount);
  mergeByRank_.resize(mergeCount);
  // joinsExact_: a merge with a part that is not encodable never fires (symbols start as
  // byte tokens and, by induction, stay encodable), so only the others are checked.
  bool joins = true;
  for (size_t r = 0; r < mergeCount; r++) {
    const uint32_t a = mergeTriples[r * 3], b = mergeTriples[r * 3 + 1], c = mergeTriples[r * 3 + 2];
    mergeByRank_[r] = RankedMerge{a, b, c};
    if (joins && encodable[a] && encodable[b])
      joins = encodable[c] && uint64_t(offsets_[c + 1] - offsets_[c]) ==
                                  uint64_t(offsets_[a + 1] - offsets_[a]) + (offsets_[b + 1] - offsets_[b]);
  }
  joinsExact_ = joins;
  // Short tokens inline (4 MB for o200k) when whole pieces may be looked up: with ignore_merges,
  // or when tokens can map to themselves (joinsExact_, see initSelfTokens).
  vocab_.build(&bytes_, &offsets_, encodable, ignoreMerges || joins);
  for (int b = 0; b < 256; b++) {
    uint8_t c = uint8_t(b);
    byteToId_[b] = vocab_.find(&c, 1);
  }
  // Straight from the merge list (ranks in order, so a repeated pair keeps its last rank,
  // as in MergeMap): 64 K hash probes would cost more.
  bytePairRank_.assign(256 * 256, kNoId);
  std::vector<int16_t> byteOf(vocab, -1);
  for (int b = 0; b < 256; b++)
    if (byteToId_[b] != kNoId) byteOf[byteToId_[b]] = int16_t(b);
  for (size_t r = 0; r < mergeCount; r++) {
    const int a = byteOf[mergeTriples[r * 3]], b = byteOf[mergeTriples[r * 3 + 1]];
    if (a >= 0 && b >= 0) bytePairRank_[a * 256 + b] = uint32_t(r);
  }
  initSelfTokens(mergeTriples, mergeCount);
  wholeTokens_ = ignoreMerges_;
  for (uint64_t w : selfBits_) wholeTokens_ = wholeTokens_ || w != 0;
}

void BpeModel::encodeWord(const uint8_t* p, size_t n, uint64_t h, std::vector<uint32_t>& out,
                          BpeScratch& scratch) const {
  if (n == 0) return;
  // models/bpe/model.rs `tokenize`: with ignore_merges a pre-token that is itself
  // in the vocab is emitted whole, before any merging.
  if (n == 1) {
    uint32_t id = byteToId_[p[0]];
    if (id != kNoId) out.push_back(id);  // else: not in vocab and no unk_token, dropped as in HF
    return;
  }
  // The short cache comes first: it holds whatever this function produced for the same
  // bytes. Then a short piece that is a token (with ignore_merges any, else one that BPE maps
  // to itself: see bpe_self.cc) is answered by its vocabulary bucket (which the piece loop prefetched when the last
  // miss was not in WordCache), before WordCache, which seldom has a short piece (only what the short cache pushed out)
  // and whose slot was not prefetched then.
  const bool isShort = n <= ShortWordCache::kMaxLen;
  const ShortWordCache::Key key = isShort ? ShortWordCache::keyOf(p, n) : ShortWordCache::Key{0, 0};
  const size_t outStart = out.size();
  if (isShort) {
    if (const ShortWordCache::Entry* e = scratch.shortCache.find(key, n, h)) {
      out.insert(out.end(), e->ids, e->ids + e->count);
      return;
    }
    if (wholeTokens_) {
      const uint32_t id = vocab_.findShort(key, h);
      if (id != kNoId && mapsToSelf(id)) {
        out.push_back(id);
        scratch.keepShort(key, n, h, &id, 1);
        return;
      }
    }
  }
  const bool cacheable = n <= WordCache::kMaxKey;
  // Returns whether the piece went to the short cache (else it belongs in cache).
  auto remember = [&] {
    const size_t count = out.size() - outStart;
    if (!isShort || count < 1 || count > ShortWordCache::kMaxIds) return false;
    scratch.keepShort(key, n, h, out.data() + outStart, count);
    return true;
  };
  if (cacheable && scratch.cache.lookup(p, n, h, out)) {
    remember();
    return;
  }
  if (!isShort && wholeTokens_) {
    uint32_t id = vocab_.find(p, n, h);
    if (id != kNoId && mapsToSelf(id)) {
      out.push_back(id);
      if (cacheable) scratch.cache.insert(p, n, h, &id, 1);
      return;
    }
  }
  mergeWord(p, n, out, scratch);
  if (!remember() && cacheable) scratch.cache.insert(p, n, h, out.data() + outStart, out.size() - outStart);
}

// Cut support (cutsExact_, crossMax_; see bpe.h), built on the first long piece: one pass
// over the merges with random reads of the vocab bytes, which most callers never need.
void BpeModel::initCuts() const {
  bool exact = !vocab_.hasDuplicates();
  for (int b = 0; b < 256; b++)
    if (byteToId_[b] == kNoId) exact = false;
  crossMax_.assign(256 * 256, 0);
  const size_t mergeCount = mergeByRank_.size();
  for (size_t r = 0; r < mergeCount && exact; r++) {
    const uint32_t a = mergeByRank_[r].left, b = mergeByRank_[r].right, c = mergeByRank_[r].newId;
    const uint32_t ab = offsets_[a], ae = offsets_[a + 1], bb = offsets_[b], be = offsets_[b + 1];
    // A merge with a part that is not encodable never fires (no symbol has that id).
    if (!encodable_[a] || !encodable_[b]) continue;
    const uint32_t cb = offsets_[c], ce = offsets_[c + 1];
    if (ae == ab || be == bb || !encodable_[c] || ce - cb != (ae - ab) + (be - bb) ||
        std::memcmp(bytes_.data() + cb, bytes_.data() + ab, ae - ab) != 0 ||
        std::memcmp(bytes_.data() + cb + (ae - ab), bytes_.data() + bb, be - bb) != 0) {
      exact = false;
      break;
    }
    uint32_t& x = crossMax_[bytes_[ae - 1] * 256u + bytes_[bb]];
    const uint32_t l = std::min<uint32_t>(ae - ab, 0xFFFF), rr = std::min<uint32_t>(be - bb, 0xFFFF);
    x = std::max(x & 0xFFFF, l) | (std::max(x >> 16, rr) << 16);
  }
  cutsExact_ = exact;
}

// Why a cut is exact: merges only ever join two adjacent symbols. If no merge can join
// the symbol ending at k with the one starting at k, no symbol ever spans k, every queue
// entry of word.rs on one side only reads and writes symbols of that side (the pair
// across k is never pushed: it is not a merge), and popping in (rank, pos) order restricted
// to one side is that side's own (rank, pos) order. So merging [s, k) and [k, n) apart
// gives the same symbols. Such a k is proven by looking at every vocab token that could be
// the symbol ending at k (a suffix of p[s, k) of at most the longest left part of any merge
// across the byte pair (p[k-1], p[k])) and every one that could start there, and checking
// that no (left, right) pair of them is a merge. s is itself a proven cut (or 0), so no
// symbol reaches across it.
bool BpeModel::safeCut(const uint8_t* p, size_t s, size_t k, size_t n) const {
  const uint32_t pair = uint32_t(p[k - 1]) * 256 + p[k];
  const uint32_t cm = crossMax_[pair];
  if (cm == 0) return true;
  if (bytePairRank_[pair] != kNoId) return false;  // the two bytes themselves merge
  constexpr size_t kMaxPart = 64;                  // longer parts: give up on this k (not a cut)
  const size_t maxL = std::min<size_t>(cm & 0xFFFF, k - s), maxR = std::min<size_t>(cm >> 16, n - k);
  if (maxL > kMaxPart || maxR > kMaxPart) return false;
  uint32_t right[kMaxPart];
  size_t nr = 0;
  for (size_t len = 1; len <= maxR; len++) {
    const uint32_t id = len == 1 ? byteToId_[p[k]] : vocab_.find(p + k, len);
    if (id != kNoId) right[nr++] = id;
  }
  for (size_t len = 1; len <= maxL; len++) {
    const uint32_t id = len == 1 ? byteToId_[p[k - 1]] : vocab_.find(p + k - len, len);
    if (id == kNoId) continue;
    for (size_t j = 0; j < nr; j++)
      if (merges_.findFiltered(id, right[j])) return false;
  }
  return true;
}

// The first proven cut at or after s + cutTarget_ (a few tries, then the next target), or n.
size_t BpeModel::nextCut(const uint8_t* p, size_t s, size_t n) const {
  constexpr size_t kTries = 8;
  for (size_t k = s + cutTarget_; k < n; k += cutTarget_) {
    for (size_t t = 0; t < kTries && k + t < n; t++)
      if (safeCut(p, s, k + t, n)) return k + t;
  }
  return n;
}

void BpeModel::mergeWord(const uint8_t* p, size_t n, std::vector<uint32_t>& out, BpeScratch& scratch) const {
  if (n <= shortMax_ && n < queueMinSymbols_ && joinsExact_ &&
      (n <= kShortAnyBytes || ascii::skipAscii(p, 0, n) == n)) {
    mergeShort(p, n, out);
    return;
  }
  if (n >= queueMinSymbols_) std::call_once(cutsOnce_, [this] { initCuts(); });
  if (n < queueMinSymbols_ || !cutsExact_) {
    mergeChunk(p, n, out, scratch);
    return;
  }
  for (size_t s = 0; s < n;) {
    const size_t k = nextCut(p, s, n);
    mergeChunk(p + s, k - s, out, scratch);
    s = k;
  }
}

void BpeModel::mergeChunk(const uint8_t* p, size_t n, std::vector<uint32_t>& out, BpeScratch& scratch) const {
  // Long chunks (mergeWord ran initCuts for them) of an exact vocabulary: the compact form.
  if (n >= queueMinSymbols_ && cutsExact_ && n < kSpanBit && vocabSize() < kSpanBit) {
    mergeLong(p, n, out, scratch);
    return;
  }
  // merge_word: one symbol per byte-level char (= per byte); bytes missing from the
  // vocab are dropped (unk_token is null for every supported model).
  auto& sym = scratch.symbols;
  sym.resize(n);
  int32_t count = 0;
  for (size_t i = 0; i < n; i++) {
    const uint32_t id = byteToId_[p[i]];
    if (id == kNoId) continue;
    sym[count] = BpeScratch::Symbol{id, count - 1, count + 1};
    count++;
  }
  if (count == 0) return;
  sym[count - 1].next = -1;
  sym.resize(size_t(count));

  if (size_t(count) >= queueMinSymbols_) {
    scratch.queue.reset(uint32_t(mergeByRank_.size()));
    mergeAll(p, n, scratch, scratch.queue);
  } else {
    scratch.initial.clear();
    scratch.heap.clear();
    HeapQueue heap{scratch.initial, scratch.heap, scratch.sortTmp};
    mergeAll(p, n, scratch, heap);
  }
  for (int32_t i = 0; i != -1; i = sym[i].next) out.push_back(sym[i].id);
  // As mergeLong's spans: a huge chunk's symbols (12 bytes a byte) are not kept for the rest
  // of the state's life.
  if (n > kKeepSpans) HugeVector<BpeScratch::Symbol>().swap(sym);
}

// The merge loop of word.rs. Both queues pop the same (rank, pos) sequence (each
// returns the minimum of the same multiset), so the result does not depend on Queue.
// A rank identifies one merge: mergeByRank_[rank].
template <class Queue>
void BpeModel::mergeAll(const uint8_t* p, size_t n, BpeScratch& scratch, Queue& q) const {
  auto& sym = scratch.symbols;
  const int32_t count = int32_t(sym.size());
  // The initial pairs are the adjacent kept bytes: their ranks come from bytePairRank_.
  {
    int32_t i = -1;
    uint32_t prevByte = 0;
    for (size_t k = 0; k < n; k++) {
      if (byteToId_[p[k]] == kNoId) continue;
      if (i >= 0) {
        const uint32_t r = bytePairRank_[prevByte * 256 + p[k]];
        if (r != kNoId) {
          prefetchRank(r);
          q.pushInitial(r, uint32_t(i));
        }
      }
      prevByte = p[k];
      i++;
    }
    q.finishInitial();
  }
  // Long pieces (RankQueue): a small direct-mapped memo of pair lookups. A run of one
  // character tests the same few pairs a million times; each hit skips filter + probe.
  struct Memo {
    uint64_t key = ~uint64_t(0);
    const MergeMap::Entry* entry = nullptr;
  };
  Memo memo[Queue::kMemoSlots > 0 ? Queue::kMemoSlots : 1];
  auto lookup = [&](uint32_t left, uint32_t right, bool filtered) -> const MergeMap::Entry* {
    if constexpr (Queue::kMemoSlots > 0) {
      const uint64_t key = (uint64_t(left) << 32) | right;
      Memo& slot = memo[(left * 31u + right) & (Queue::kMemoSlots - 1)];
      if (slot.key == key) return slot.entry;
      slot.key = key;
      return slot.entry = merges_.find(left, right);
    } else {
      return filtered ? merges_.findFiltered(left, right) : merges_.find(left, right);
    }
  };
  uint64_t top;
  while (q.pop(top, [&sym](uint32_t pos) { return sym[pos].id == kNoId; })) {
    const uint32_t topPos = uint32_t(top);
    const RankedMerge& m = mergeByRank_[top >> 32];
    BpeScratch::Symbol& cur = sym[topPos];
    if (cur.id == kNoId || cur.next == -1) continue;
    const int32_t nextPos = cur.next;
    const BpeScratch::Symbol right = sym[nextPos];
    // Stale entry: the pair now at `pos` must still merge into the same id. When the
    // pair is still the one this rank merges, the lookup would return this very rank.
    if (cur.id != m.left || right.id != m.right) {
      const MergeMap::Entry* now = lookup(cur.id, right.id, false);
      if (!now || now->newId != m.newId) continue;
    }
    cur.id = m.newId;
    cur.next = right.next;
    sym[nextPos].id = kNoId;
    if (right.next > -1 && right.next < count) sym[right.next].prev = int32_t(topPos);
    if (cur.prev >= 0) {
      if (const MergeMap::Entry* e = lookup(sym[cur.prev].id, cur.id, true)) {
        prefetchRank(e->rank);
        q.push(e->rank, uint32_t(cur.prev));
      }
    }
    if (cur.next > -1 && cur.next < count) {
      if (const MergeMap::Entry* e = lookup(cur.id, sym[cur.next].id, true)) {
        prefetchRank(e->rank);
        q.push(e->rank, topPos);
      }
    }
  }
}

// mergeAll over a compact symbol list, for long chunks when cuts are exact (initCuts): then
// every byte is a symbol and a symbol's bytes are its token's bytes, so a symbol starting at
// byte i ends at i + the token's length and its neighbours need not be stored. One word per
// byte instead of mergeAll's 12-byte (id, prev, next): spans[i] is the id of the symbol
// starting at i; any other byte holds kSpanBit | start of the symbol it is in, written at
// least in its last byte (the only other one read: it gives the left neighbour's start).
// Pops and pushes are mergeAll's, in the same order, so the ids are the same; the memory
// per input byte is 4 here plus the queue's 4 per pending entry (bench/input-memory.mjs).
void BpeModel::mergeLong(const uint8_t* p, size_t n, std::vector<uint32_t>& out, BpeScratch& scratch) const {
  auto& spans = scratch.spans;
  spans.resize(n);
  uint32_t* sp = spans.data();
  for (size_t i = 0; i < n; i++) sp[i] = byteToId_[p[i]];  // every byte has an id (cutsExact_)
  RankQueue& q = scratch.queue;
  q.reset(uint32_t(mergeByRank_.size()));
  for (size_t k = 0; k + 1 < n; k++) {
    const uint32_t r = bytePairRank_[p[k] * 256u + p[k + 1]];
    if (r != kNoId) {
      prefetchRank(r);
      q.pushInitial(r, uint32_t(k));
    }
  }
  q.finishInitial();
  const uint32_t* off = offsets_.data();
  auto length = [off](uint32_t id) -> size_t { return off[id + 1] - off[id]; };
  // A run of one character tests the same few pairs a million times (see mergeAll).
  struct Memo {
    uint64_t key = ~uint64_t(0);
    const MergeMap::Entry* entry = nullptr;
  };
  Memo memo[RankQueue::kMemoSlots];
  auto lookup = [&](uint32_t left, uint32_t right) -> const MergeMap::Entry* {
    const uint64_t key = (uint64_t(left) << 32) | right;
    Memo& slot = memo[(left * 31u + right) & (RankQueue::kMemoSlots - 1)];
    if (slot.key == key) return slot.entry;
    slot.key = key;
    return slot.entry = merges_.find(left, right);
  };
  uint64_t top;
  while (q.pop(top, [sp](uint32_t pos) { return (sp[pos] & kSpanBit) != 0; })) {
    const uint32_t pos = uint32_t(top);
    const RankedMerge& m = mergeByRank_[top >> 32];
    const uint32_t cur = sp[pos];
    if (cur & kSpanBit) continue;  // merged away
    const size_t rightPos = pos + length(cur);
    if (rightPos >= n) continue;  // the last symbol
    const uint32_t right = sp[rightPos];
    if (cur != m.left || right != m.right) {  // stale entry, as in mergeAll
      const MergeMap::Entry* now = lookup(cur, right);
      if (!now || now->newId != m.newId) continue;
    }
    const size_t end = rightPos + length(right);
    sp[pos] = m.newId;
    sp[rightPos] = kSpanBit | pos;
    sp[end - 1] = kSpanBit | pos;
    if (pos > 0) {
      const uint32_t before = sp[pos - 1];
      const uint32_t prev = (before & kSpanBit) ? (before & ~kSpanBit) : uint32_t(pos - 1);
      if (const MergeMap::Entry* e = lookup(sp[prev], m.newId)) {
        prefetchRank(e->rank);
        q.push(e->rank, prev);
      }
    }
    if (end < n) {
      if (const MergeMap::Entry* e = lookup(m.newId, sp[end])) {
        prefetchRank(e->rank);
        q.push(e->rank, pos);
      }
    }
  }
  for (size_t i = 0; i < n; i += length(sp[i])) out.push_back(sp[i]);
  // Do not keep a huge chunk's scratch for the rest of the state's life.
  if (n > kKeepSpans) HugeVector<uint32_t>().swap(spans);
}

}  // namespace promptenc
