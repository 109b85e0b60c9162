// Which tokens BPE maps to themselves: the tokens t for which the merge loop of word.rs, run on
// t's own bytes, ends with the one symbol t. With ignore_merges (Llama 3, gpt-oss) a piece
// that is a token is emitted whole by rule; for the other byte-level models (the o200k of
// gpt-4o's tokenizer.json, Qwen3, DeepSeek-V3) this table lets encodeWord answer such a piece
// by the same one vocabulary lookup, where it ran the merges before. A first pass over text
// is mostly such pieces (" the", " function", "IQ" in a rank table).
//
// Computed in two passes over the ranks, O(merges x chain length), without running the merge
// loop on any token: ~15 ms for o200k's 200k merges, ~9 ms for Qwen3's 151k on this project's
// bench machine (a tokenizer load is 135-175 ms in Node). Why that is exact, when (1) every
// merge that can fire yields a token as long as its parts together (joinsExact_; a merge with
// an empty part never fires, as no symbol is empty), each marked token's bytes are its parts'
// bytes joined (checked per token), and (2) every merge in force ranks after every merge in
// force that yields one of its parts ("ordered", checked below; trained merge lists are):
// - By (2), the ranks word.rs applies never decrease: a merge creates a token, and any pair
//   with that token in it ranks after the merge that created it. So within one piece, the
//   merge applied at rank k happens after those of lower rank, and equal ranks are the same
//   pair, applied left to right. (word.rs's stale test compares only the new id; by (1) a pair
//   that has changed yields a longer token, so that test keeps exactly the unchanged pairs.)
// - If t has one merge (l, r) that yields it and BPE on t's bytes ends in [t], that merge came
//   last and no earlier merge crossed the boundary between l's bytes and r's (a symbol that
//   covers it can never become exactly l). Until then each side runs exactly as BPE on l's or
//   r's bytes alone, and so each must end in [l] and [r]: l and r map to themselves.
// - Conversely, with l and r mapping to themselves, the only pair that can cross is the one at
//   the boundary: (the last symbol of l's side, the first of r's). Each side's edge symbol
//   changes at known ranks: on l's side it goes up the chain l's last byte, ..., right(right(l)),
//   right(l), l, each link made by the merge that yields it; likewise up r's chain of left
//   parts. The walk below follows both chains in rank order (when both change at one rank,
//   either order gives the same answer: the pair in between ranks after both). At each state
//   the boundary pair merges iff its rank is below the next change on l's side (on a tie that
//   change is the same pair further left, and goes first) and not above the next change on
//   r's side (there the boundary pair is the left one). If it never merges, the sides end as
//   [l, r], which then merge into t.
// A token with several merges that yield it, or any doubt, is left out: the bit only lets a
// lookup replace the merges, so a missing bit costs speed, never exactness.
#include <algorithm>
#include <cstring>

#include "bpe.h"

namespace promptenc {

namespace {
constexpr uint32_t kMany = 0xFFFFFFFEu;  // more than one merge in force yields the token
}  // namespace

void BpeModel::initSelfTokens(const uint32_t* triples, size_t count) {
  const size_t vocab = vocabSize();
  selfBits_.assign((vocab + 63) / 64, 0);
  if (ignoreMerges_ || !joinsExact_) return;
  auto tokenLen = [&](uint32_t id) { return size_t(offsets_[id + 1] - offsets_[id]); };
  // A merge fires only if both parts are encodable (symbols start as byte tokens) and it is
  // the rank in force for its pair (a repeated pair keeps its last rank, as in MergeMap).
  const bool repeats = merges_.hasRepeats();
  auto inForce = [&](size_t r) {
    const uint32_t a = triples[r * 3], b = triples[r * 3 + 1];
    if (!encodable_[a] || !encodable_[b]) return false;
    // Nor one with an empty part: no symbol is ever empty. (Left in, ("", z) -> b would make
    // byte b look merged, and its chain would end at "" instead of at b.)
    if (tokenLen(a) == 0 || tokenLen(b) == 0) return false;
    if (!repeats) return true;
    const MergeMap::Entry* e = merges_.find(a, b);
    return e && e->rank == r;
  };
  // Per token: the rank in force that yields it (kNoId: none, kMany: several), the greatest
  // such rank, and its parts. One record, so that a step up a chain reads one line.
  // Also the least rank in force of a merge with the token as its left part, and as its right
  // part: the rank of a pair (x, y) is at least the greater of x's and y's, which settles most
  // steps of the walk below without a probe.
  struct Made {
    uint32_t rank = kNoId, last = kNoId, left = 0, right = 0, asLeft = kNoId, asRight = kNoId;
  };
  std::vector<Made> made(vocab);
  for (size_t r = 0; r < count; r++) {
    if (!inForce(r)) continue;
    const uint32_t a = triples[r * 3], b = triples[r * 3 + 1];
    Made& m = made[triples[r * 3 + 2]];
    m.rank = m.rank == kNoId ? uint32_t(r) : kMany;
    m.last = uint32_t(r);  // ranks ascend: the greatest so far
    m.left = a;
    m.right = b;
    if (made[a].asLeft == kNoId) made[a].asLeft = uint32_t(r);
    if (made[b].asRight == kNoId) made[b].asRight = uint32_t(r);
  }
  const uint8_t* bytes = bytes_.data();
  auto isSelf = [&](uint32_t id) { return (selfBits_[id >> 6] >> (id & 63)) & 1; };
  auto mark = [&](uint32_t id) { selfBits_[id >> 6] |= uint64_t(1) << (id & 63); };
  for (int b = 0; b < 256; b++) {
    const uint32_t id = byteToId_[b];
    if (id != kNoId && tokenLen(id) == 1) mark(id);
  }
  // A side's chain, bottom-up: c.id[k] its links, c.rank[k] the rank that made link k (kNoId
  // for the byte), c.edge[k] the least rank of a merge with link k on the boundary side (as a
  // left part on l's side, a right part on r's). Every link maps to itself, so its rank is its
  // one rank. Filled from the top (the token) down, at the end of the arrays. A chain longer
  // than kMaxChain (a token of more bytes) is not followed: the token is left out.
  constexpr size_t kMaxChain = 256;
  struct Chain {
    uint32_t id[kMaxChain], rank[kMaxChain + 1], edge[kMaxChain];
    size_t at;  // the chain is [at, kMaxChain); rank[kMaxChain] = kNoId ends it
  };
  Chain cl, cr;
  cl.rank[kMaxChain] = cr.rank[kMaxChain] = kNoId;
  auto follow = [&](uint32_t id, bool lSide, Chain& c) {
    size_t k = kMaxChain;
    while (k > 0) {
      const Made& m = made[id];
      k--;
      c.id[k] = id;
      c.edge[k] = lSide ? m.asLeft : m.asRight;
      if (m.rank == kNoId) {  // a byte
        c.rank[k] = kNoId;
        c.at = k;
        return true;
      }
      c.rank[k] = m.rank;
      id = lSide ? m.right : m.left;
    }
    return false;
  };
  const size_t budget = kSelfLinksPerMerge * count + (size_t(1) << 16);
  size_t work = 0;
  for (size_t r = 0; r < count; r++) {
    if (!inForce(r)) continue;
    const uint32_t l = triples[r * 3], rt = triples[r * 3 + 1], t = triples[r * 3 + 2];
    if ((made[l].last != kNoId && made[l].last >= r) || (made[rt].last != kNoId && made[rt].last >= r)) {
      std::fill(selfBits_.begin(), selfBits_.end(), 0);  // not ordered: the proof above fails
      return;
    }
    if (made[t].rank != r || !isSelf(l) || !isSelf(rt)) continue;
    if (std::memcmp(bytes + offsets_[t], bytes + offsets_[l], tokenLen(l)) != 0 ||
        std::memcmp(bytes + offsets_[t] + tokenLen(l), bytes + offsets_[rt], tokenLen(rt)) != 0)
      continue;
    if (!follow(l, true, cl) || !follow(rt, false, cr)) continue;
    // A walk costs its two chains' lengths. Real merge lists take ~5 links per merge; a hostile
    // one can make every walk 512 links long, so past the budget the rest stay unmarked.
    work += (kMaxChain - cl.at) + (kMaxChain - cr.at);
    if (work > budget) return;
    // Chain indices: the next change of a side is at rank[k + 1] (kNoId past its top); lam and
    // mu are the next ranks at which l's side and r's side change.
    size_t i = cl.at, j = cr.at;
    bool crosses = false;
    while (!crosses && (i + 1 < kMaxChain || j + 1 < kMaxChain)) {
      const uint32_t lam = cl.rank[i + 1], mu = cr.rank[j + 1];
      // The pair ranks at least both parts' least edge rank: below that, no probe.
      const uint32_t least = std::max(cl.edge[i], cr.edge[j]);
      if (least < lam && least <= mu) {
        const MergeMap::Entry* e = merges_.findFiltered(cl.id[i], cr.id[j]);
        const uint32_t beta = e ? e->rank : kNoId;
        crosses = beta < lam && beta <= mu;
      }
      const bool leftFirst = lam <= mu;
      i += leftFirst;
      j += !leftFirst;
    }
    if (!crosses) mark(t);
  }
}

}  // namespace promptenc
