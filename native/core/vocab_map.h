// Token bytes -> id, for the whole-piece lookups of BPE (ignore_merges) and the cut search.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "hash_bytes.h"

namespace promptenc {

/// Open-addressing map from a token's raw bytes to its id, for tokens longer than
/// ShortKey::kMaxLen. Keys live in the model's concatenated byte buffer; a slot holds the id
/// and a tag (the hash's top 32 bits), so a probe that meets another key moves on without
/// loading that key's offsets and bytes. Immutable after build.
class BytesToIdMap {
 public:
  /// Returns false when two encodable tokens of at least minLen bytes have the same bytes.
  bool build(const HugeVector<uint8_t>* bytes, const HugeVector<uint32_t>* offsets,
             const std::vector<uint8_t>& encodable, size_t minLen);
  uint32_t find(const uint8_t* p, size_t n, uint64_t h) const;

 private:
  const HugeVector<uint8_t>* bytes_ = nullptr;
  const HugeVector<uint32_t>* offsets_ = nullptr;
  struct Slot {
    uint32_t id;  // kNoId = empty
    uint32_t tag;
  };
  static uint32_t tagOf(uint64_t h) { return uint32_t(h >> 32); }
  HugeVector<Slot> slots_;
  uint64_t mask_ = 0;
};

/// Tokens of 1 to ShortKey::kMaxLen bytes with their keys inline: a lookup reads one 64-byte
/// bucket of three keys and their ids (the next bucket when that one is full, for ~1 key in
/// 10). BytesToIdMap reads a slot, then the token's offsets, then its bytes: three dependent
/// misses for a piece seen for the first time, a quarter of the L2 read misses of a first
/// pass of Llama 3 over source code. Buckets fill in order and nothing is removed, so a
/// bucket with a free entry ends a probe. Memory: 64 bytes per 1 to 2 tokens (4 MB for
/// Llama 3's 128k tokens). Immutable after build.
class ShortTokenMap {
 public:
  struct alignas(64) Bucket {
    uint64_t lo[3];
    uint64_t hi[3];  // 0 = free
    uint32_t id[3];
    uint32_t pad;
  };
  static_assert(sizeof(Bucket) == 64, "one cache line");
  /// For at most count inserts: at most 2 per bucket on average, so no bucket run covers
  /// the whole table and every probe ends.
  void reset(size_t count);
  /// Returns false (and keeps the first id) when the key is there already.
  bool insert(ShortKey k, uint64_t h, uint32_t id);
  /// The bucket a lookup of hash h reads first.
  const Bucket* bucket(uint64_t h) const { return buckets_.data() + (h & mask_); }
  LineTable lines() const { return LineTable{buckets_.data(), mask_}; }
  uint32_t find(ShortKey k, uint64_t h) const {
    const Bucket* b = bucket(h);
    for (;;) {
      for (int i = 0; i < 3; i++)
        if (b->hi[i] == k.hi && b->lo[i] == k.lo) return b->id[i];
      if (!b->hi[2]) return kNoId;
      b = b == &buckets_.back() ? buckets_.data() : b + 1;
    }
  }

 private:
  HugeVector<Bucket> buckets_;
  uint64_t mask_ = 0;
};

/// Every encodable token's bytes -> its id: with inlineShort, the short ones in a
/// ShortTokenMap (for a model that looks whole pieces up as they are encoded) and the rest in
/// a BytesToIdMap; else all in the BytesToIdMap (a model that only needs the map to build
/// tables and to search cuts keeps its memory: 4 MB less for o200k). Immutable after
/// build.
class VocabMap {
 public:
  void build(const HugeVector<uint8_t>* bytes, const HugeVector<uint32_t>* offsets,
             const std::vector<uint8_t>& encodable, bool inlineShort);
  /// h = hashBytes(p, n).
  uint32_t find(const uint8_t* p, size_t n, uint64_t h) const {
    if (n == 0) return kNoId;
    return n <= shortMax_ ? short_.find(ShortKey::of(p, n), h) : long_.find(p, n, h);
  }
  uint32_t find(const uint8_t* p, size_t n) const { return find(p, n, hashBytes(p, n)); }
  /// A token of k's length (1 to ShortKey::kMaxLen), h its hash; only with inlineShort.
  uint32_t findShort(ShortKey k, uint64_t h) const { return short_.find(k, h); }
  LineTable shortLines() const { return short_.lines(); }
  /// Two encodable ids with the same bytes (only possible with a malformed vocab).
  bool hasDuplicates() const { return duplicates_; }

 private:
  ShortTokenMap short_;
  BytesToIdMap long_;
  size_t shortMax_ = 0;  // ShortKey::kMaxLen with inlineShort, else 0
  bool duplicates_ = false;
};

}  // namespace promptenc
