#include "encoder.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "normalize.h"

namespace promptenc {

uint32_t byteLevelChar(uint8_t b) {
  // bytes_to_unicode: printable Latin-1 bytes map to themselves, the other 68
  // bytes map to U+0100.. in byte order.
  auto printable = [](uint32_t c) { return (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174); };
  if (printable(b)) return b;
  uint32_t k = 0;
  for (uint32_t c = 0; c < b; c++)
    if (!printable(c)) k++;
  return 256 + k;
}

namespace {

/// ByteLevel decoder for one token string: its chars mapped back to bytes when all
/// are in the alphabet, else the token's own UTF-8 (decoders/byte_level.rs).
std::string byteLevelDecodeToken(const std::string& token) {
  static_assert(sizeof(char) == 1, "");
  uint8_t charToByteLow[0x180];
  bool known[0x180] = {};
  for (uint32_t b = 0; b < 256; b++) {
    uint32_t c = byteLevelChar(uint8_t(b));
    charToByteLow[c] = uint8_t(b);
    known[c] = true;
  }
  std::string out;
  const uint8_t* s = reinterpret_cast<const uint8_t*>(token.data());
  size_t i = 0, n = token.size();
  while (i < n) {
    CodePoint c = decodeUtf8(s, i, n);
    if (c.cp >= 0x180 || !known[c.cp]) return token;
    out.push_back(char(charToByteLow[c.cp]));
    i += c.len;
  }
  return out;
}

}  // namespace

void appendUtf8Lossy(const uint8_t* p, size_t n, std::string& out) {
  out.reserve(out.size() + n);
  size_t i = 0;
  while (i < n) {
    const uint8_t b0 = p[i];
    if (b0 < 0x80) {
      out.push_back(char(b0));
      i++;
      continue;
    }
    size_t need;
    uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      need = 1;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      need = 2;
      if (b0 == 0xE0) lo = 0xA0;
      if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      need = 3;
      if (b0 == 0xF0) lo = 0x90;
      if (b0 == 0xF4) hi = 0x8F;
    } else {
      out.append("\xEF\xBF\xBD");
      i++;
      continue;
    }
    size_t k = 1;
    bool ok = true;
    for (; k <= need; k++) {
      if (i + k >= n) {
        ok = false;
        break;
      }
      const uint8_t c = p[i + k];
      const uint8_t l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
      if (c < l || c > h) {
        ok = false;
        break;
      }
    }
    if (ok) {
      out.append(reinterpret_cast<const char*>(p + i), need + 1);
      i += need + 1;
    } else {
      out.append("\xEF\xBF\xBD");  // the maximal subpart p[i, i+k)
      i += k;
    }
  }
}

Encoder::Encoder(EncoderSpec spec)
    : model_(std::move(spec.vocabBytes), std::move(spec.vocabOffsets), spec.vocabEncodable, spec.mergeTriples.data(),
             spec.mergeTriples.size() / 3, spec.ignoreMerges),
      added_(std::move(spec.added)),
      preTokenizer_(spec.preTokenizer),
      addPrefixSpace_(spec.addPrefixSpace),
      nfc_(spec.normalizer == NormalizerKind::Nfc) {
  if (spec.mergeTriples.size() % 3 != 0) throw std::invalid_argument("merges must be (left, right, new) triples");
  if (uint32_t(preTokenizer_) > uint32_t(PreTokenizerKind::DeepSeekV3))
    throw std::invalid_argument("unknown pre-tokenizer kind");
  if (uint32_t(spec.normalizer) > uint32_t(NormalizerKind::Nfc)) throw std::invalid_argument("unknown normalizer kind");
  if (spec.queueMinSymbols) model_.setQueueMinSymbols(spec.queueMinSymbols);
  rawTrie_.build(added_, false, spec.sse2Only);
  normalizedTrie_.build(added_, true, spec.sse2Only);

  // Decode table: HF decode looks an id up in the added vocabulary first, then the model.
  size_t maxId = model_.vocabSize();
  for (const auto& t : added_) maxId = std::max<size_t>(maxId, size_t(t.id) + 1);
  std::vector<const AddedTokenSpec*> addedById(maxId, nullptr);
  for (const auto& t : added_) addedById[t.id] = &t;
  decodeOffsets_.assign(maxId + 1, 0);
  decodeFlags_.assign(maxId, 0);
  const auto& mb = model_.bytes();
  const auto& mo = model_.offsets();
  for (size_t id = 0; id < maxId; id++) {
    decodeOffsets_[id] = uint32_t(decodeBytes_.size());
    if (const AddedTokenSpec* t = addedById[id]) {
      std::string b = byteLevelDecodeToken(t->content);
      decodeBytes_.insert(decodeBytes_.end(), b.begin(), b.end());
      decodeFlags_[id] = t->special ? 3 : 1;
    } else if (id < model_.vocabSize() && mo[id + 1] > mo[id]) {
      decodeBytes_.insert(decodeBytes_.end(), mb.begin() + mo[id], mb.begin() + mo[id + 1]);
      decodeFlags_[id] = 1;
    }
  }
  decodeOffsets_[maxId] = uint32_t(decodeBytes_.size());
}

void Encoder::encodeText(const uint8_t* s, size_t b, size_t e, std::vector<uint32_t>& out, EncodeState& scratch) const {
  if (preTokenizer_ == PreTokenizerKind::Gpt2 && addPrefixSpace_ && s[b] != ' ') {
    // ByteLevel add_prefix_space: each segment gets a leading space unless it has one.
    std::string& t = scratch.prefixed;
    t.assign(1, ' ');
    t.append(reinterpret_cast<const char*>(s + b), e - b);
    const uint8_t* p = reinterpret_cast<const uint8_t*>(t.data());
    encodePieces(p, 0, t.size(), out, scratch);
    return;
  }
  encodePieces(s, b, e, out, scratch);
}

namespace {

// Out of line: inlined, vector::insert grows the piece loop past what the compiler inlines
// preTokenize into, and the loop's state then lives in memory instead of registers.
PROMPTENC_NOINLINE uint32_t* appendIds(std::vector<uint32_t>& out, uint32_t* block, uint32_t* end) {
  out.insert(out.end(), block, end);
  return block;
}

// kLowBytes[n]: the mask of a little-endian word's n low bytes (a load, not a variable shift).
constexpr uint64_t kLowBytes[9] = {0,
                                   0xFFull,
                                   0xFFFFull,
                                   0xFFFFFFull,
                                   0xFFFFFFFFull,
                                   0xFFFFFFFFFFull,
                                   0xFFFFFFFFFFFFull,
                                   0xFFFFFFFFFFFFFFull,
                                   ~uint64_t(0)};

}  // namespace

namespace {

// A short piece's ids when its set (q.where) holds it, else null.
PROMPTENC_ALWAYS_INLINE const ShortWordCache::Entry* findShort(const EncodeState::Pending& q) {
  const ShortWordCache::Entry* en = reinterpret_cast<const ShortWordCache::Entry*>(q.where);
  if (en[0].lo == q.lo && en[0].hi == q.hi) return en;
  if (en[1].lo == q.lo && en[1].hi == q.hi) return en + 1;
  return nullptr;
}

}  // namespace

// The piece went past the short cache. A WordCache hit is copied here (and a short piece of
// few ids goes back into the short cache, as encodeWord would put it); anything else goes to
// encodeWord, into scratch.wordIds (appending to out would first need the block flushed),
// or, for a piece longer than the block, into out after a flush.
// After a run of WordCache misses (a text seen for the first time) only every 16th piece
// looks there first, since encodeWord looks again. When the short table moved (its first
// insert, or a doubling), the sets that the pending pieces recorded are re-derived.
PROMPTENC_NOINLINE uint32_t* Encoder::encodeMiss(const uint8_t* s, size_t start, size_t n, uint64_t h, uint32_t* w,
                                                 std::vector<uint32_t>& out, EncodeState& scratch) const {
  uint32_t* const block = scratch.ids;
  BpeScratch& bs = scratch.bpe;
  const uint8_t* p = s + start;
  const ShortWordCache::Entry* before = bs.shortCache.view().table;
  size_t count = 0;
  const uint32_t* ids = nullptr;
  if (n >= 2 && n <= WordCache::kMaxKey && (scratch.wordMisses < 8 || (++scratch.wordProbes & 15) == 0)) {
    ids = bs.cache.find(p, n, h, &count);
    scratch.wordMisses = ids ? 0 : scratch.wordMisses + 1;
  }
  // A hit is copied out before the short cache takes it: what that pushes out goes into
  // cache, and an insert there invalidates ids.
  const bool found = ids != nullptr;
  scratch.missCached = found;
  if (!found && n > EncodeState::kIdBlock) {
    // A long piece (up to 1 id per byte) goes straight into out, after the block: through
    // wordIds, every state kept 4 bytes per byte of the longest piece it had seen.
    w = appendIds(out, block, w);
    model_.encodeWord(p, n, h, out, bs);
  } else if (!found) {
    std::vector<uint32_t>& word = scratch.wordIds;  // at most kIdBlock ids: bounded
    word.clear();
    model_.encodeWord(p, n, h, word, bs);
    ids = word.data();
    count = word.size();
  }
  if (w + count > block + EncodeState::kIdBlock) w = appendIds(out, block, w);
  if (count > EncodeState::kIdBlock) {
    out.insert(out.end(), ids, ids + count);
  } else {
    for (size_t i = 0; i < count; i++) w[i] = ids[i];
    w += count;
  }
  if (found && n <= ShortWordCache::kMaxLen && count >= 1 && count <= ShortWordCache::kMaxIds)
    bs.keepShort(ShortWordCache::keyOf(p, n), n, h, w - count, count);
  const ShortWordCache::View now = bs.shortCache.view();
  if (now.table != before) {
    for (EncodeState::Pending& r : scratch.pending) {
      const size_t k = size_t(r.hi >> 56);
      if (k) r.where = uint64_t(now.set(hashBytes(s + r.start, k)));
    }
  }
  return w;
}

PROMPTENC_NOINLINE uint32_t* Encoder::finishPending(const uint8_t* s, const EncodeState::Pending& q, uint32_t* w,
                                                    std::vector<uint32_t>& out, EncodeState& scratch) const {
  if (const size_t n = size_t(q.hi >> 56)) {
    if (const ShortWordCache::Entry* en = findShort(q)) {
      std::memcpy(w, en->ids, 16);
      return w + en->count;
    }
    return encodeMiss(s, q.start, n, hashBytes(s + q.start, n), w, out, scratch);
  }
  if (q.hi == 1) {
    *w = uint32_t(q.lo);
    return w + (q.lo != kNoId);
  }
  return encodeMiss(s, q.start, size_t(q.hi), q.where, w, out, scratch);
}

// Pre-tokenize and BPE each piece in order, kLookahead pieces behind the scanner: each
// piece's cache lines are prefetched when the scanner emits it and looked up a few
// pieces later, so the (random, often missing) loads overlap instead of stalling one
// after another. Output order is unchanged.
// The common pieces are answered here, inline in the scanner's loop: one byte (its id), or
// 2 to 15 bytes found in the short cache, whose table address stays in a register (a View,
// refreshed after encodeMiss, the only thing that inserts). Such a piece is packed once
// (one or two loads, and a mask when 8 bytes are readable) for its hash and its key, and
// the ring keeps its set's address, not its hash. Everything else goes to encodeMiss.
// Ids are written through a pointer into scratch.ids and appended to out in blocks.
void Encoder::encodePieces(const uint8_t* s, size_t b, size_t e, std::vector<uint32_t>& out,
                           EncodeState& scratch) const {
  constexpr size_t K = EncodeState::kLookahead;
  static_assert(K * sizeof(EncodeState::Pending) == 256, "the ring pointer wraps at 256 bytes");
  static_assert(alignof(EncodeState) >= sizeof(EncodeState::Pending), "a 256-byte boundary starts an entry");
  static_assert(sizeof(ShortWordCache::Entry::ids) + sizeof(uint32_t) == 16, "a hit copies 16 bytes");
  using Pending = EncodeState::Pending;
  using Entry = ShortWordCache::Entry;
  BpeScratch& bs = scratch.bpe;
  ShortWordCache::View shortView = bs.shortCache.view();
  WordCache::View cacheView = bs.cache.view();
  // What a short piece prefetches besides its short-cache set: where the last short piece
  // that missed that set was answered. When whole tokens are looked up and WordCache did
  // not have it (a text seen for the first time), its vocabulary bucket, which encodeWord
  // reads on the next miss; else the WordCache slot. (Prefetching the bucket always
  // crowded out the caches of warm passes: -8 % on English prose, -9 % on the o200k rank
  // table, where WordCache answers the misses.) Re-chosen only after a miss, so a hit costs
  // what it did.
  const LineTable tokenLines = model_.shortTokens();
  const bool wholeTokens = model_.wholeTokenLookup();
  LineTable shortLines = cacheView;
  auto refresh = [&]() PROMPTENC_LAMBDA_INLINE {
    shortView = bs.shortCache.view();
    cacheView = bs.cache.view();
    shortLines = wholeTokens && !scratch.missCached ? tokenLines : cacheView;
  };
  uint32_t* const block = scratch.ids;
  uint32_t* w = block;
  // The ring starts full of pieces that emit nothing (a byte with no token), so the loop
  // needs no fill phase.
  constexpr Pending kInert{kNoId, 1, 0, 0};
  for (Pending& r : scratch.pending) r = kInert;
  Pending* head =
      scratch.pending + ((256 - (reinterpret_cast<uintptr_t>(scratch.pending) & 255)) & 255) / sizeof(Pending);
  auto next = [](Pending* p) PROMPTENC_LAMBDA_INLINE {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    return reinterpret_cast<Pending*>((a & ~uintptr_t(255)) | ((a + sizeof(Pending)) & 255));
  };
  preTokenize(preTokenizer_, s, b, e, [&](size_t x, size_t y) PROMPTENC_LAMBDA_INLINE {
    // The piece scanned K pieces ago first: it may move the short table, whose set this
    // piece records.
    Pending& q = *head;
    head = next(head);
    if (q.hi >> 56) {
      if (const Entry* en = findShort(q)) {
        std::memcpy(w, en->ids, 16);  // the ids and the count word: w[count, 4) is rewritten later
        w += en->count;
      } else {
        const size_t n = size_t(q.hi >> 56);
        w = encodeMiss(s, q.start, n, hashBytes(s + q.start, n), w, out, scratch);
        refresh();
      }
    } else if (q.hi == 1) {
      *w = uint32_t(q.lo);
      w += q.lo != kNoId;  // a byte with no token is dropped, as in encodeWord
    } else {
      w = encodeMiss(s, q.start, size_t(q.hi), q.where, w, out, scratch);
      refresh();
    }
    if (w >= block + EncodeState::kIdBlock) w = appendIds(out, block, w);
    const size_t n = y - x;
    uint64_t lo, hi, where;
    if (n <= 8) {
      if (n >= 2) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        lo = x + 8 <= e ? load64(s + x) & kLowBytes[n] : packShort(s + x, n);
#else
        lo = packShort(s + x, n);
#endif
        hi = ShortWordCache::lenBits(n);
        const uint64_t h = hashShort(lo, n);
        const Entry* set = shortView.set(h);
        where = uint64_t(set);
        prefetchLine(set);
        prefetchLine(shortLines.slot(h));
      } else {
        lo = n ? model_.byteId(s[x]) : kNoId;
        hi = n;
        where = 0;
      }
    } else {
      uint64_t h;
      if (n <= ShortWordCache::kMaxLen) {
        lo = load64(s + x);
        const uint64_t last8 = load64(s + x + n - 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        hi = ShortWordCache::hiOfLast8(last8, n);
#else
        hi = ShortWordCache::keyOf(s + x, n).hi;
#endif
        h = hashMid(lo, last8, n);
        const Entry* set = shortView.set(h);
        where = uint64_t(set);
        prefetchLine(set);
        prefetchLine(shortLines.slot(h));
      } else {
        lo = 0;
        hi = n;
        h = n <= 16 ? hashMid(load64(s + x), load64(s + x + n - 8), n) : hashBytes(s + x, n);
        where = h;
        prefetchLine(cacheView.slot(h));
      }
    }
    q = Pending{lo, hi, where, x};
  });
  for (size_t i = 0; i < K; i++) {
    Pending& q = *head;
    head = next(head);
    w = finishPending(s, q, w, out, scratch);
    q = kInert;  // a later miss in this drain re-derives the sets of the pieces still here
    if (w >= block + EncodeState::kIdBlock) w = appendIds(out, block, w);
  }
  appendIds(out, block, w);
}

void Encoder::encode(const uint8_t* s, size_t n, std::vector<uint32_t>& out) const {
  EncodeState state;
  encode(s, n, out, state);
}

void Encoder::encode(const uint8_t* s, size_t n, std::vector<uint32_t>& out, EncodeState& scratch) const {
  encode(s, n, out, scratch, nullptr);
}

void Encoder::encode(const uint8_t* s, size_t n, std::vector<uint32_t>& out, EncodeState& scratch,
                     std::vector<AddedMark>* marks) const {
  encode(s, n, out, scratch, marks, false);
}

void Encoder::encode(const uint8_t* s, size_t n, std::vector<uint32_t>& out, EncodeState& scratch,
                     std::vector<AddedMark>* marks, bool splitSpecial) const {
  scratch.raw.clear();
  if (rawTrie_.empty() && normalizedTrie_.empty()) {
    encodeGap(s, 0, n, out, scratch, marks, splitSpecial);
    return;
  }
  // Pass 1: normalized=false tokens on the raw text. Each gap is then normalized and
  // searched for normalized=true tokens (encodeGap).
  findAddedTokens(rawTrie_, added_, s, n, scratch.raw, splitSpecial);
  for (const Segment& seg : scratch.raw) {
    if (seg.tokenId == kNoSegmentToken) {
      encodeGap(s, seg.start, seg.end, out, scratch, marks, splitSpecial);
      continue;
    }
    out.push_back(seg.tokenId);
    if (marks) marks->push_back(AddedMark{seg.start, seg.end, out.size()});
  }
}

void Encoder::encodeOrdinary(const uint8_t* s, size_t n, std::vector<uint32_t>& out, EncodeState& scratch) const {
  if (n == 0) return;
  const uint8_t* g = s;
  if (nfc_ && nfcNormalize(g, n, scratch.normalized, scratch.nfcWork)) {
    g = reinterpret_cast<const uint8_t*>(scratch.normalized.data());
    n = scratch.normalized.size();
  }
  encodeText(g, 0, n, out, scratch);
}

// The marks of normalized=true tokens are offsets in the normalized gap; they are the
// text's own offsets only when normalization left the gap unchanged (the caller knows).
void Encoder::encodeGap(const uint8_t* s, size_t b, size_t e, std::vector<uint32_t>& out, EncodeState& scratch,
                        std::vector<AddedMark>* marks, bool splitSpecial) const {
  if (b == e) return;
  const uint8_t* g = s + b;
  size_t n = e - b;
  if (nfc_ && nfcNormalize(g, n, scratch.normalized, scratch.nfcWork)) {
    g = reinterpret_cast<const uint8_t*>(scratch.normalized.data());
    n = scratch.normalized.size();
  }
  if (normalizedTrie_.empty()) {
    encodeText(g, 0, n, out, scratch);
    return;
  }
  scratch.inner.clear();
  findAddedTokens(normalizedTrie_, added_, g, n, scratch.inner, splitSpecial);
  for (const Segment& in : scratch.inner) {
    if (in.tokenId == kNoSegmentToken) {
      encodeText(g, in.start, in.end, out, scratch);
      continue;
    }
    out.push_back(in.tokenId);
    if (marks) marks->push_back(AddedMark{b + in.start, b + in.end, out.size()});
  }
}

void marksToUtf16(const uint8_t* s, std::vector<AddedMark>& marks) {
  // A UTF-16 unit per UTF-8 sequence, two for a 4-byte one: count the bytes that are not
  // continuation bytes, plus the 4-byte leads. Offsets are sequence boundaries. A start may lie
  // before the previous end (a token after an rstrip token can begin inside the whitespace the
  // rstrip took), so the cursor also steps back.
  size_t at = 0, units = 0;
  auto unitsOf = [&](size_t k) { return size_t((s[k] & 0xC0) != 0x80) + size_t(s[k] >= 0xF0); };
  auto advance = [&](size_t to) {
    for (; at < to; at++) units += unitsOf(at);
    for (; at > to; at--) units -= unitsOf(at - 1);
    return units;
  };
  for (AddedMark& m : marks) {
    m.start = advance(m.start);
    m.end = advance(m.end);
  }
}

void Encoder::decodeBytes(const uint32_t* ids, size_t n, bool skipSpecial, std::vector<uint8_t>& out) const {
  const size_t known = decodeFlags_.size();
  for (size_t i = 0; i < n; i++) {
    const uint32_t id = ids[i];
    if (id >= known) continue;
    const uint8_t f = decodeFlags_[id];
    if (!(f & 1) || (skipSpecial && (f & 2))) continue;
    out.insert(out.end(), decodeBytes_.begin() + decodeOffsets_[id], decodeBytes_.begin() + decodeOffsets_[id + 1]);
  }
}

std::string Encoder::decode(const uint32_t* ids, size_t n, bool skipSpecial) const {
  std::vector<uint8_t> bytes;
  decodeBytes(ids, n, skipSpecial, bytes);
  std::string out;
  appendUtf8Lossy(bytes.data(), bytes.size(), out);
  return out;
}

}  // namespace promptenc
