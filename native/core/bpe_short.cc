// The merge loop of word.rs for short chunks, without its queue: the symbols' ids and the
// rank of each adjacent pair sit in small arrays on the stack, and each step merges the
// pair of least (rank, position), then updates only the two pairs next to it. Most pieces
// of real text are a few bytes long; for them the queue (sorting the initial pairs, heap
// pushes, the prev/next list) cost several times more than the merges themselves.
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "bpe.h"

namespace promptenc {

// Why this is word.rs merge_all, given joinsExact_ (every merge that can fire yields the
// token as long as its two parts together, so a symbol's length is the number of kept
// bytes it covers):
// - word.rs queues (rank, pos, new id) for each adjacent pair that is a merge, and applies
//   a popped entry only if the pair now at pos still merges into that new id.
// - The symbol at a position only changes by absorbing all of its right neighbour, and its
//   right neighbour only by absorbing the next one; either way the bytes covered by the
//   pair at that position then end strictly further to the right. Once the pair at pos
//   has changed, any merge of it yields a longer token than the queued new id: a
//   different id. So the stale test passes exactly for entries whose pair is unchanged,
//   and an unchanged pair is never queued twice (a changed one never comes back).
// - Hence the entries word.rs applies are, at every step, the least (rank, pos) among
//   the pairs adjacent right now, which is what the scan below picks. Two pairs with the
//   same rank are the same pair at two positions; the scan keeps the first (strict <),
//   as the queue pops the lower position first.
// Bytes without an id are skipped (no symbol), as in mergeChunk.
namespace {
// Ranks as signed words in the scan arrays: rank ^ 2^31 keeps their order, and kNoId (no
// merge) becomes INT32_MAX, which also pads the last pair and the lanes past it.
constexpr uint32_t kFlip = 0x80000000u;
constexpr int32_t kNone = INT32_MAX;
inline int32_t flip(uint32_t rank) { return int32_t(rank ^ kFlip); }

#if defined(__SSE2__)
inline __m128i min32(__m128i a, __m128i b) {
  const __m128i lt = _mm_cmplt_epi32(a, b);
  return _mm_or_si128(_mm_and_si128(lt, a), _mm_andnot_si128(lt, b));
}
#endif

inline size_t leastPairScalar(const int32_t* r, size_t pairs, int32_t* least) {
  size_t at = 0;
  int32_t best = r[0];
  for (size_t i = 1; i < pairs; i++) {
    at = r[i] < best ? i : at;
    best = r[i] < best ? r[i] : best;
  }
  *least = best;
  return at;
}
// Up to this many pairs a scan by conditional moves is quicker than the vector reduction,
// whose shuffles and compares form one long dependency chain per merge.
constexpr size_t kScalarPairs = 8;

// The position of the least rank among r[0, pairs) and that rank (kNone: no pair merges).
// r[pairs, pairs + 3] must be kNone: whole lanes of four are read.
inline size_t leastPair(const int32_t* r, size_t pairs, int32_t* least) {
#if defined(__SSE2__)
  if (pairs <= kScalarPairs) return leastPairScalar(r, pairs, least);
  const size_t lanes = (pairs + 3) / 4;
  __m128i m = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r));
  for (size_t j = 1; j < lanes; j++) m = min32(m, _mm_loadu_si128(reinterpret_cast<const __m128i*>(r + 4 * j)));
  m = min32(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)));
  m = min32(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
  *least = _mm_cvtsi128_si32(m);
  for (size_t j = 0;; j++) {
    const __m128i eq = _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r + 4 * j)), m);
    const unsigned mask = unsigned(_mm_movemask_ps(_mm_castsi128_ps(eq)));
    if (mask) return 4 * j + size_t(__builtin_ctz(mask));  // the first of equal ranks
  }
#else
  return leastPairScalar(r, pairs, least);
#endif
}
}  // namespace

void BpeModel::mergeShort(const uint8_t* p, size_t n, std::vector<uint32_t>& out) const {
  // Pair i is (id[i], id[i + 1]): rank[i] its flipped rank, merged[i] its new id. The merged
  // id is kept from the probe that found the rank (same cache line), so a merge does not
  // load mergeByRank_ again: on a cold cache that load was a fifth of the time here. Three
  // arrays (not one of structs) so that the least rank is found four pairs per compare:
  // pieces of up to kShortMaxSymbols bytes come here, and for those past ~16 bytes a
  // one-by-one scan per merge cost more than the heap it replaces.
  int32_t rank[kShortMaxSymbols + 4];
  uint32_t merged[kShortMaxSymbols];
  uint32_t id[kShortMaxSymbols];
  size_t count = 0;
  uint32_t prevByte = 0;
  for (size_t k = 0; k < n; k++) {
    const uint32_t b = byteToId_[p[k]];
    if (b == kNoId) continue;
    if (count > 0) {
      const uint32_t r = bytePairRank_[prevByte * 256 + p[k]];
      if (r != kNoId) prefetchRank(r);
      rank[count - 1] = flip(r);
    }
    id[count++] = b;
    prevByte = p[k];
  }
  if (count == 0) return;
  for (size_t i = count - 1; i < count + 3; i++) rank[i] = kNone;
  // Byte-pair ranks come from a table without the merged id: fetch those after the fill,
  // so the (prefetched) loads overlap instead of each waiting in turn.
  for (size_t i = 0; i + 1 < count; i++) {
    if (rank[i] != kNone) merged[i] = mergeByRank_[uint32_t(rank[i]) ^ kFlip].newId;
  }
  auto set = [&](size_t i, const MergeMap::Entry* e) {
    rank[i] = e ? flip(e->rank) : kNone;
    merged[i] = e ? e->newId : 0;
  };
  while (count > 1) {
    int32_t best;
    const size_t at = leastPair(rank, count - 1, &best);
    if (best == kNone) break;  // no adjacent pair is a merge
    const uint32_t newId = merged[at];
    id[at] = newId;
    // id[at + 1] goes, and with it pair at + 1; pair at is probed again below. Moving
    // rank[count - 1] (kNone) down keeps the padding after the last pair.
    // One loop for the three arrays: a few words each, where three memmove calls cost more.
    for (size_t i = at + 1; i + 1 < count; i++) {
      id[i] = id[i + 1];
      merged[i] = merged[i + 1];
      rank[i] = rank[i + 1];
    }
    count--;
    // The two new pairs' probes are independent: both filter words and both slots are
    // requested before either is read, so on a cold table their misses overlap.
    const bool right = at + 1 < count, left = at > 0;
    const MergeMap::Probe pr = right ? merges_.probe(newId, id[at + 1]) : MergeMap::Probe{};
    const MergeMap::Probe pl = left ? merges_.probe(id[at - 1], newId) : MergeMap::Probe{};
    if (right)
      set(at, merges_.resolve(pr));
    else
      rank[at] = kNone;  // at is the last symbol now
    if (left) set(at - 1, merges_.resolve(pl));
  }
  out.insert(out.end(), id, id + count);
}

}  // namespace promptenc
