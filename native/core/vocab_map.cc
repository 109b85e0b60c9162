#include "vocab_map.h"

#include <cstring>

namespace promptenc {

bool BytesToIdMap::build(const HugeVector<uint8_t>* bytes, const HugeVector<uint32_t>* offsets,
                         const std::vector<uint8_t>& encodable, size_t minLen) {
  bytes_ = bytes;
  offsets_ = offsets;
  const size_t count = offsets->size() - 1;
  size_t keys = 0;
  for (size_t id = 0; id < count; id++) keys += encodable[id] && (*offsets)[id + 1] - (*offsets)[id] >= minLen;
  const uint64_t size = openTableSize(keys);
  slots_.assign(size, Slot{kNoId, 0});
  mask_ = size - 1;
  bool unique = true;
  for (size_t id = 0; id < count; id++) {
    const uint32_t b = (*offsets)[id], e = (*offsets)[id + 1];
    if (!encodable[id] || e - b < minLen || e == b) continue;
    const uint64_t hash = hashBytes(bytes->data() + b, e - b);
    uint64_t h = hash & mask_;
    for (;;) {
      const uint32_t cur = slots_[h].id;
      if (cur == kNoId) {
        slots_[h] = Slot{uint32_t(id), tagOf(hash)};
        break;
      }
      // Two ids with the same bytes cannot happen for encodable tokens (the
      // ByteLevel alphabet is a bijection), but keep the first like a map would.
      const uint32_t cb = (*offsets)[cur], ce = (*offsets)[cur + 1];
      if (ce - cb == e - b && std::memcmp(bytes->data() + cb, bytes->data() + b, e - b) == 0) {
        unique = false;
        break;
      }
      h = (h + 1) & mask_;
    }
  }
  return unique;
}

uint32_t BytesToIdMap::find(const uint8_t* p, size_t n, uint64_t hash) const {
  uint64_t h = hash & mask_;
  const uint8_t* base = bytes_->data();
  const uint32_t* off = offsets_->data();
  const uint32_t tag = tagOf(hash);
  for (;;) {
    const Slot s = slots_[h];
    if (s.id == kNoId) return kNoId;
    if (s.tag == tag) {
      const uint32_t b = off[s.id], e = off[s.id + 1];
      if (e - b == n && bytesEqual(base + b, p, n)) return s.id;
    }
    h = (h + 1) & mask_;
  }
}

void ShortTokenMap::reset(size_t count) {
  size_t buckets = 1;
  while (buckets * 2 < count) buckets <<= 1;
  buckets_.assign(buckets, Bucket{});
  mask_ = buckets - 1;
}

bool ShortTokenMap::insert(ShortKey k, uint64_t h, uint32_t id) {
  Bucket* b = buckets_.data() + (h & mask_);
  for (;;) {
    for (int i = 0; i < 3; i++) {
      if (b->hi[i] == k.hi && b->lo[i] == k.lo) return false;
      if (!b->hi[i]) {
        b->lo[i] = k.lo;
        b->hi[i] = k.hi;
        b->id[i] = id;
        return true;
      }
    }
    b = b == &buckets_.back() ? buckets_.data() : b + 1;
  }
}

void VocabMap::build(const HugeVector<uint8_t>* bytes, const HugeVector<uint32_t>* offsets,
                     const std::vector<uint8_t>& encodable, bool inlineShort) {
  const size_t count = offsets->size() - 1;
  const uint8_t* base = bytes->data();
  shortMax_ = inlineShort ? ShortKey::kMaxLen : 0;
  size_t shortCount = 0;
  for (size_t id = 0; id < count; id++) {
    const uint32_t n = (*offsets)[id + 1] - (*offsets)[id];
    shortCount += encodable[id] && n >= 1 && n <= shortMax_;
  }
  short_.reset(shortCount);
  bool unique = true;
  for (size_t id = 0; id < count; id++) {
    const uint32_t b = (*offsets)[id], n = (*offsets)[id + 1] - b;
    if (!encodable[id] || n < 1 || n > shortMax_) continue;
    if (!short_.insert(ShortKey::of(base + b, n), hashBytes(base + b, n), uint32_t(id))) unique = false;
  }
  unique = long_.build(bytes, offsets, encodable, shortMax_ + 1) && unique;
  duplicates_ = !unique;
}

}  // namespace promptenc
