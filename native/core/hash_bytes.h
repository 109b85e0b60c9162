// The byte-string helpers under every hash table of the BPE core: the table allocator,
// fixed-width loads, the piece hash, and the packed key of a short piece.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace promptenc {

/// Allocator for the big random-access tables (vocab/merge hash tables, vocab bytes):
/// blocks of >= 1 MB are 2 MB-aligned and, on Linux, advised as transparent huge pages
/// (THP is often "madvise" only). Every lookup is a random probe into tens of MB, so with
/// 4 KB pages nearly each one also misses the TLB.
/// The per-state word caches (CacheVector) are not advised. They are allocated while a
/// text is encoded, so the fault of each 2 MB page lands in the timed pass; on this VM
/// that took 150-300 ms of system time in some first passes over the o200k rank table
/// (2 MB of text; the caches grow to ~50 MB), which ran 0.6-0.75x as fast as without the
/// advice, while a warm pass over the same text gained ~5% from the huge pages.
struct AdviseHuge {
  static constexpr bool kAdvise = true;
};
struct AdviseNone {
  static constexpr bool kAdvise = false;
};
template <class T, class Policy = AdviseHuge>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() noexcept = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U, Policy>&) noexcept {}
  static constexpr size_t kHuge = size_t(2) << 20;
  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
#if defined(__linux__)
    if (Policy::kAdvise && bytes >= (size_t(1) << 20)) {
      const size_t rounded = (bytes + kHuge - 1) & ~(kHuge - 1);
      void* p = nullptr;
      if (posix_memalign(&p, kHuge, rounded) != 0) throw std::bad_alloc();
      madvise(p, rounded, MADV_HUGEPAGE);
      return static_cast<T*>(p);
    }
#endif
    void* p = nullptr;
    if (posix_memalign(&p, 64, bytes ? bytes : 1) != 0) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) noexcept { std::free(p); }
  template <class U>
  bool operator==(const HugePageAllocator<U, Policy>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const HugePageAllocator<U, Policy>&) const noexcept {
    return false;
  }
};
template <class T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;
template <class T>
using CacheVector = std::vector<T, HugePageAllocator<T, AdviseNone>>;

constexpr uint32_t kNoId = 0xFFFFFFFFu;

inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

/// The bytes of a string of n <= 8 bytes as one integer, zero-padded: byte k in bits
/// 8k..8k+7, so it equals a little-endian 8-byte load masked to n bytes (what the piece loop
/// computes when 8 bytes are readable). Two overlapping fixed-size loads instead of
/// memcpy(&v, p, n): a variable-length memcpy is a library call plus a store-forwarding
/// stall, and pieces are mostly this short (the hash and the word-cache compare run once per
/// piece). Overlapping bytes are equal, so OR joins the parts.
inline uint64_t packShort(const uint8_t* p, size_t n) {
  if (n >= 4) return uint64_t(load32(p)) | (uint64_t(load32(p + n - 4)) << (8 * (n - 4)));
  if (n >= 2) return uint64_t(p[0]) | uint64_t(p[1]) << 8 | uint64_t(p[n - 1]) << (8 * (n - 1));
  return n ? p[0] : 0;
}

/// hashBytes' starting value for a string of n bytes: the piece loop hashes every piece, and
/// for n <= 16 a table load replaces a multiply and two 64-bit constants.
constexpr uint64_t hashSeed(size_t n) { return 0x9E3779B97F4A7C15ull ^ (uint64_t(n) * 0xA24BAED4963EE407ull); }
struct HashSeeds {
  uint64_t v[17];
  constexpr HashSeeds() : v() {
    for (size_t n = 0; n <= 16; n++) v[n] = hashSeed(n);
  }
};
inline constexpr HashSeeds kHashSeeds{};

/// hashBytes of a string of n <= 8 bytes from its packShort value.
inline uint64_t hashShort(uint64_t v, size_t n) {
  uint64_t h = kHashSeeds.v[n];
  h = (h ^ v) * 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 29;
  return h + (h == 0);
}

/// Fast 64-bit hash of a byte string (never 0, so 0 can mark empty slots). Tables index
/// it with its low bits, so none of them is fixed (an earlier `h | 1` left every odd
/// slot as the only home slots: half of each table unused, probe runs twice as long).
inline uint64_t hashBytes(const uint8_t* p, size_t n) {
  if (n <= 8) return hashShort(packShort(p, n), n);
  uint64_t h = hashSeed(n);
  const uint8_t* last = p + n - 8;
  for (; p < last; p += 8) {
    h = (h ^ load64(p)) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
  }
  h = (h ^ load64(last)) * 0xC4CEB9FE1A85EC53ull;  // the final 8 bytes, overlapping when n % 8 != 0
  h ^= h >> 29;
  return h + (h == 0);
}

/// hashBytes of a string of 9 to 16 bytes from its first and last 8 bytes.
inline uint64_t hashMid(uint64_t lo, uint64_t hi, size_t n) {
  uint64_t h = kHashSeeds.v[n];
  h = (h ^ lo) * 0xFF51AFD7ED558CCDull;
  h ^= h >> 32;
  h = (h ^ hi) * 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 29;
  return h + (h == 0);
}

/// memcmp(a, b, n) == 0, inlined for the short keys of the hot path.
inline bool bytesEqual(const uint8_t* a, const uint8_t* b, size_t n) {
  if (n <= 8) return packShort(a, n) == packShort(b, n);
  if (n <= 16) return load64(a) == load64(b) && load64(a + n - 8) == load64(b + n - 8);
  return std::memcmp(a, b, n) == 0;
}

/// A table of 64-byte lines indexed by a hash's low bits, as two plain values a piece loop
/// keeps in registers: where a lookup of hash h starts, for a prefetch.
struct LineTable {
  const void* slots;
  size_t mask;
  const void* slot(uint64_t h) const { return static_cast<const char*>(slots) + (h & mask) * 64; }
};

/// Slots of an open-addressing table for count keys: a power of two above 2 x count.
inline uint64_t openTableSize(size_t count) {
  uint64_t size = 16;
  while (size < count * 2 + 1) size <<= 1;
  return size;
}

/// A piece of n bytes (2 <= n <= 15) as two words that determine it: lo = bytes [0, 8)
/// and hi = bytes [8, n), each zero-padded (byte k in bits 8k.., as packShort), with n in
/// hi's top byte (bytes [8, n) take at most 7). hi is never 0, which marks empty entries.
/// The short word cache and the short-token map share it, so a piece is packed once.
struct ShortKey {
  static constexpr size_t kMaxLen = 15;
  uint64_t lo, hi;
  static uint64_t lenBits(size_t n) { return uint64_t(n) << 56; }
  /// hi of a piece of 9 to 15 bytes from its last 8 bytes (the load that hashMid takes);
  /// on a little-endian machine, what of() computes.
  static uint64_t hiOfLast8(uint64_t last8, size_t n) { return (last8 >> (8 * (16 - n))) | lenBits(n); }
  static ShortKey of(const uint8_t* p, size_t n) {
    return n <= 8 ? ShortKey{packShort(p, n), lenBits(n)} : ShortKey{load64(p), packShort(p + 8, n - 8) | lenBits(n)};
  }
};

}  // namespace promptenc
