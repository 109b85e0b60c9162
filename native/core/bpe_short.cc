// The merge loop of word.rs for short chunks, without its queue: the symbols' ids and the
// rank of each adjacent pair sit in two small arrays on the stack, and each step merges the
// pair of least (rank, position), then updates only the two pairs next to it. Most pieces
// of real text are a few bytes long; for them the queue (sorting the initial pairs, heap
// pushes, the prev/next list) cost several times more than the merges themselves.
#include <cstring>

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
void BpeModel::mergeShort(const uint8_t* p, size_t n, std::vector<uint32_t>& out) const {
  // sym[i].rank and sym[i].merged: the pair (sym[i].id, sym[i + 1].id), rank kNoId = no
  // merge. The merged id is kept from the probe that found the rank (same cache line), so a
  // merge does not load mergeByRank_ again: on a cold cache that load was a fifth of the
  // time here. One array, so closing the gap after a merge is one memmove.
  struct Sym {
    uint32_t rank;
    uint32_t merged;
    uint32_t id;
  };
  Sym sym[kShortMaxSymbols];
  size_t count = 0;
  uint32_t prevByte = 0;
  for (size_t k = 0; k < n; k++) {
    const uint32_t id = byteToId_[p[k]];
    if (id == kNoId) continue;
    if (count > 0) {
      const uint32_t r = bytePairRank_[prevByte * 256 + p[k]];
      if (r != kNoId) prefetchRank(r);
      sym[count - 1].rank = r;
    }
    sym[count++].id = id;
    prevByte = p[k];
  }
  // Byte-pair ranks come from a table without the merged id: fetch those after the fill,
  // so the (prefetched) loads overlap instead of each waiting in turn.
  for (size_t i = 0; i + 1 < count; i++) {
    if (sym[i].rank != kNoId) sym[i].merged = mergeByRank_[sym[i].rank].newId;
  }
  auto set = [](Sym& s, const MergeMap::Entry* e) {
    s.rank = e ? e->rank : kNoId;
    s.merged = e ? e->newId : 0;
  };
  while (count > 1) {
    size_t at = 0;
    uint32_t best = sym[0].rank;
    for (size_t i = 1; i + 1 < count; i++) {
      const uint32_t r = sym[i].rank;
      at = r < best ? i : at;
      best = r < best ? r : best;
    }
    if (best == kNoId) break;  // no adjacent pair is a merge
    const uint32_t id = sym[at].merged;
    sym[at].id = id;
    count--;
    // sym[at + 1] goes; its rank (the pair after it) becomes the new symbol's pair.
    std::memmove(sym + at + 1, sym + at + 2, (count - at - 1) * sizeof(Sym));
    // The two new pairs' probes are independent: both filter words and both slots are
    // requested before either is read, so on a cold table their misses overlap.
    const bool right = at + 1 < count, left = at > 0;
    const MergeMap::Probe pr = right ? merges_.probe(id, sym[at + 1].id) : MergeMap::Probe{};
    const MergeMap::Probe pl = left ? merges_.probe(sym[at - 1].id, id) : MergeMap::Probe{};
    if (right) set(sym[at], merges_.resolve(pr));
    if (left) set(sym[at - 1], merges_.resolve(pl));
  }
  for (size_t i = 0; i < count; i++) out.push_back(sym[i].id);
}

}  // namespace promptenc
