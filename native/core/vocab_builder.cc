// One pass over the UTF-8 of all vocab keys (char -> byte through a table), one
// open-addressing map of key bytes -> id for the merges. Input is byte spans, from
// either model_json.cc (the file bytes) or the joined JS strings (buildModelFromStrings). deepseek-v3 (128 k tokens,
// 127 k merges) builds in a few ms; see native/README.md "performance notes".
#include "vocab_builder.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace promptenc {

namespace {

/// Length of the UTF-8 sequence at s[i] and how many UTF-16 units it stands for.
inline void utf8Step(const uint8_t* s, size_t i, size_t n, size_t& len, uint32_t& units, uint32_t& cp) {
  const uint8_t b = s[i];
  if (b < 0x80) {
    len = 1, units = 1, cp = b;
  } else if (b < 0xE0) {
    len = 2, units = 1, cp = (i + 1 < n) ? ((b & 0x1Fu) << 6) | (s[i + 1] & 0x3Fu) : 0xFFFD;
  } else if (b < 0xF0) {
    len = 3, units = 1, cp = 0xFFFD;  // >= 0x800: never a ByteLevel char
  } else {
    len = 4, units = 2, cp = 0x10000;
  }
  if (i + len > n) throw std::invalid_argument("vocab strings are not valid UTF-8");
}

/// Walks `units` UTF-16 units of s from pos; returns the end byte offset.
inline size_t advanceUnits(const uint8_t* s, size_t pos, size_t n, uint64_t units) {
  while (units > 0) {
    if (pos >= n) throw std::invalid_argument("vocab string lengths do not match the strings");
    size_t len;
    uint32_t u, cp;
    utf8Step(s, pos, n, len, u, cp);
    if (u > units) throw std::invalid_argument("vocab string lengths do not match the strings");
    units -= u;
    pos += len;
  }
  return pos;
}

std::string quoted(const uint8_t* p, size_t n) {
  std::string out = "\"";
  for (size_t i = 0; i < n; i++) {
    const char c = char(p[i]);
    if (c == '"' || c == '\\') out.push_back('\\');
    if (uint8_t(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(uint8_t(c)));
      out += buf;
    } else {
      out.push_back(c);
    }
  }
  return out + "\"";
}

/// Key bytes -> id over the joined key buffer. A slot holds everything a probe needs
/// (hash tag, span, id), so a lookup touches one slot line and the key bytes.
class KeyMap {
 public:
  KeyMap(const uint8_t* base, const uint32_t* spans, size_t count, const uint32_t* ids, bool rejectDuplicates)
      : base_(base) {
    uint64_t size = 16;
    while (size < count * 2 + 1) size <<= 1;
    slots_.assign(size, Slot{0, 0, 0, 0});
    mask_ = size - 1;
    std::vector<uint64_t> hashes(count);
    for (size_t k = 0; k < count; k++) hashes[k] = hashBytes(base + spans[2 * k], spans[2 * k + 1] - spans[2 * k]);
    // Random slot accesses dominate (a VM's TLB + cache miss is ~100-200 ns):
    // prefetch the slot of the key kAhead positions on.
    for (uint32_t k = 0; k < count; k++) {
      if (k + kAhead < count) __builtin_prefetch(&slots_[hashes[k + kAhead] & mask_], 1);
      const uint8_t* p = base + spans[2 * k];
      const uint32_t n = spans[2 * k + 1] - spans[2 * k];
      const uint64_t hash = hashes[k];
      uint64_t h = hash & mask_;
      const uint32_t tag = uint32_t(hash >> 32) | 1;
      for (;;) {
        Slot& sl = slots_[h];
        // JSON.parse keeps one value per key, so in a parsed vocab equal keys only come
        // from two different lone surrogates (both U+FFFD here): keep the later, like a JS object.
        const bool empty = sl.tag == 0;
        if (empty || (sl.tag == tag && sl.len == n && std::memcmp(base + sl.start, p, n) == 0)) {
          if (!empty && rejectDuplicates) throw DuplicateVocabEntry("model.vocab: two keys are equal");
          sl = Slot{tag, spans[2 * k], n, ids[k]};
          break;
        }
        h = (h + 1) & mask_;
      }
    }
  }

  void prefetchSlot(uint64_t hash) const { __builtin_prefetch(&slots_[hash & mask_]); }
  void prefetchKey(uint64_t hash) const {
    const Slot& sl = slots_[hash & mask_];
    if (sl.tag != 0) __builtin_prefetch(base_ + sl.start);
  }
  static constexpr size_t kAhead = 16;

  uint32_t find(const uint8_t* p, size_t n, uint64_t hash) const {
    uint64_t h = hash & mask_;
    const uint32_t tag = uint32_t(hash >> 32) | 1;
    for (;;) {
      const Slot& sl = slots_[h];
      if (sl.tag == 0) return kNoId;
      if (sl.tag == tag && sl.len == n && bytesEqual(base_ + sl.start, p, n)) return sl.id;
      h = (h + 1) & mask_;
    }
  }

 private:
  struct Slot {
    uint32_t tag;  // 0 = empty
    uint32_t start;
    uint32_t len;
    uint32_t id;
  };
  const uint8_t* base_;
  std::vector<Slot> slots_;
  uint64_t mask_;
};

}  // namespace

void buildModel(const ModelStrings& in, EncoderSpec& spec) {
  // char -> byte of the GPT-2 ByteLevel alphabet (all chars are < U+0144).
  int16_t charToByte[0x180];
  for (auto& c : charToByte) c = -1;
  for (uint32_t b = 0; b < 256; b++) charToByte[byteLevelChar(uint8_t(b))] = int16_t(b);

  // Pass 1: raw lengths and encodability of each key; the key that names each id.
  const size_t count = in.keyCount;
  const uint8_t* s = in.keyBytes;
  const uint32_t* spans = in.keySpans;
  std::vector<uint8_t> enc(count);
  uint64_t size = 0;
  for (size_t k = 0; k < count; k++)
    if (uint64_t(in.ids[k]) + 1 > size) size = uint64_t(in.ids[k]) + 1;
  // Tables below are sized by the largest id: refuse one above the limit before allocating.
  if (size > uint64_t(kMaxTokenId) + 1)
    throw std::invalid_argument("model.vocab: id " + std::to_string(size - 1) + " is above the limit " +
                                std::to_string(kMaxTokenId));
  std::vector<uint32_t> keyOfId(size, kNoId);
  std::vector<uint32_t> rawLen(count);
  for (size_t k = 0; k < count; k++) {
    const size_t b = spans[2 * k], e = spans[2 * k + 1];
    bool encodable = true;
    uint32_t chars = 0;
    for (size_t pos = b; pos < e; chars++) {
      size_t len;
      uint32_t u, cp;
      utf8Step(s, pos, e, len, u, cp);
      if (cp >= 0x180 || charToByte[cp] < 0) encodable = false;
      pos += len;
    }
    enc[k] = encodable;
    // ByteLevel decoder rule: a token with a char outside the alphabet is its own UTF-8.
    rawLen[k] = encodable ? chars : uint32_t(e - b);
    if (const uint32_t other = keyOfId[in.ids[k]]; other != kNoId) {
      if (in.rejectDuplicates) throw DuplicateVocabEntry("model.vocab: two keys share an id");
      const auto key = [&](uint32_t j) {
        return std::string(reinterpret_cast<const char*>(s + spans[2 * j]), spans[2 * j + 1] - spans[2 * j]);
      };
      throw UnsupportedVocab("model.vocab maps both \"" + key(other) + "\" and \"" + key(uint32_t(k)) + "\" to id " +
                             std::to_string(in.ids[k]) + " (the native core keeps one token per id)");
    }
    keyOfId[in.ids[k]] = uint32_t(k);
  }

  // Pass 2: raw bytes by id.
  auto& offsets = spec.vocabOffsets;
  auto& bytes = spec.vocabBytes;
  offsets.assign(size + 1, 0);
  spec.vocabEncodable.assign(size, 0);
  uint64_t total = 0;
  for (size_t id = 0; id < size; id++) {
    offsets[id] = uint32_t(total);
    if (keyOfId[id] != kNoId) total += rawLen[keyOfId[id]];
    if (total > 0xFFFFFFFFu) throw std::invalid_argument("vocab too large");
  }
  offsets[size] = uint32_t(total);
  bytes.resize(total);
  for (size_t id = 0; id < size; id++) {
    const uint32_t k = keyOfId[id];
    if (k == kNoId) continue;
    uint8_t* out = bytes.data() + offsets[id];
    if (!enc[k]) {
      std::memcpy(out, s + spans[2 * k], spans[2 * k + 1] - spans[2 * k]);
      continue;
    }
    spec.vocabEncodable[id] = 1;
    for (size_t i = spans[2 * k]; i < spans[2 * k + 1];) {
      const uint8_t b = s[i];
      if (b < 0x80) {
        *out++ = uint8_t(charToByte[b]);
        i++;
      } else {  // 2-byte sequence (encodable chars are < U+0180)
        *out++ = uint8_t(charToByte[((b & 0x1Fu) << 6) | (s[i + 1] & 0x3Fu)]);
        i += 2;
      }
    }
  }

  // Merges: resolve a, b and a + b through the key map.
  KeyMap map(s, spans, count, in.ids, in.rejectDuplicates);
  // Merges: three lookups per rank (a, b, a + b), 3 * 127 k random accesses for a big
  // vocab. One streaming software pipeline: query q is parsed and hashed (its slot
  // prefetched), kAhead queries later its key bytes are prefetched, and kAhead after
  // that it is resolved. Nothing of size O(merges) is allocated besides the triples.
  struct Query {
    const uint8_t* p;
    uint64_t hash;
    uint32_t n;
  };
  constexpr size_t kAhead = KeyMap::kAhead;
  constexpr size_t kRing = 64;  // > 2 * kAhead queries in flight
  static_assert(kRing > 2 * kAhead + 3, "ring too small");
  Query ring[kRing];
  std::string concat[kRing / 3 + 2];  // a + b of the ranks in flight
  auto& triples = spec.mergeTriples;
  triples.clear();
  triples.reserve(in.mergeCount * 3);
  const uint8_t* m = in.mergeBytes;
  size_t mi = 0;        // index in the merge input
  std::string pending;  // a parse error, thrown once the earlier ranks are resolved
  static const char kVersion[] = "#version";
  // Parses the next merge into queries q, q+1, q+2; false at the end or on an error.
  auto parseNext = [&](size_t q) -> bool {
    for (; mi < in.mergeCount; mi++) {
      const uint32_t* sp4 = in.mergeSpans + 4 * mi;
      size_t aB, aE, bB, bE;
      if (sp4[2] == kSplitOnSpace) {
        const size_t b0 = sp4[0], e0 = sp4[1];
        if (e0 - b0 >= 8 && std::memcmp(m + b0, kVersion, 8) == 0) continue;  // skipped by HF, no rank
        size_t sp = b0, spaces = 0;
        for (size_t j = b0; j < e0; j++)
          if (m[j] == ' ' && spaces++ == 0) sp = j;
        if (spaces != 1) {
          pending = "model.merges[" + std::to_string(q / 3) + "]: expected \"left right\", received " +
                    quoted(m + b0, e0 - b0);
          mi = in.mergeCount;
          return false;
        }
        aB = b0, aE = sp, bB = sp + 1, bE = e0;
      } else {
        aB = sp4[0], aE = sp4[1], bB = sp4[2], bE = sp4[3];
      }
      mi++;
      // a + b: adjacent in the input (model_json.cc stores pairs so), else copied.
      const uint8_t* cp = m + aB;
      const size_t cn = (aE - aB) + (bE - bB);
      if (aE != bB) {
        std::string& c = concat[(q / 3) % (kRing / 3 + 2)];
        c.assign(reinterpret_cast<const char*>(m + aB), aE - aB);
        c.append(reinterpret_cast<const char*>(m + bB), bE - bB);
        cp = reinterpret_cast<const uint8_t*>(c.data());
      }
      ring[q % kRing] = {m + aB, hashBytes(m + aB, aE - aB), uint32_t(aE - aB)};
      ring[(q + 1) % kRing] = {m + bB, hashBytes(m + bB, bE - bB), uint32_t(bE - bB)};
      ring[(q + 2) % kRing] = {cp, hashBytes(cp, cn), uint32_t(cn)};
      return true;
    }
    return false;
  };
  size_t produced = 0;  // queries parsed so far
  bool more = true;
  for (size_t q = 0;; q++) {
    // Stage 1: keep the parser 2 * kAhead queries ahead of the resolver.
    while (more && produced < q + 2 * kAhead + 1) {
      if (parseNext(produced)) {
        for (int k = 0; k < 3; k++) map.prefetchSlot(ring[(produced + k) % kRing].hash);
        produced += 3;
      } else {
        more = false;
      }
    }
    if (q + kAhead < produced) map.prefetchKey(ring[(q + kAhead) % kRing].hash);
    if (q >= produced) break;
    // Stage 3: resolve query q.
    const Query& x = ring[q % kRing];
    const uint32_t id = map.find(x.p, x.n, x.hash);
    if (id == kNoId) {
      static const char* const kWhat[3] = {"left part ", "right part ", "merged token "};
      throw std::invalid_argument("model.merges[" + std::to_string(q / 3) + "]: " + kWhat[q % 3] + quoted(x.p, x.n) +
                                  " is not in model.vocab");
    }
    triples.push_back(id);
  }
  if (!pending.empty()) throw std::invalid_argument(pending);
}

void buildModelFromStrings(const StringModelInput& in, EncoderSpec& spec) {
  // Byte spans from the UTF-16 lengths; each string is followed by one '\0' but the last.
  const uint8_t* s = in.keys;
  const size_t n = in.keysSize;
  std::vector<uint32_t> keySpans(in.keyCount * 2);
  size_t pos = 0;
  auto separator = [](const uint8_t* p, size_t& at, size_t size) {
    if (at >= size || p[at] != 0) throw std::invalid_argument("strings are not separated as expected");
    at++;
  };
  if (n > 0xFFFFFFFFu || in.mergesSize > 0xFFFFFFFFu) throw std::invalid_argument("vocab too large");
  for (size_t k = 0; k < in.keyCount; k++) {
    if (k > 0) separator(s, pos, n);
    keySpans[2 * k] = uint32_t(pos);
    pos = advanceUnits(s, pos, n, in.keyLens[k]);
    keySpans[2 * k + 1] = uint32_t(pos);
  }
  if (pos != n) throw std::invalid_argument("vocab string lengths do not match the strings");

  const uint8_t* m = in.merges;
  const size_t mn = in.mergesSize;
  std::vector<uint32_t> mergeSpans(in.mergeCount * 4);
  size_t mp = 0;
  for (size_t i = 0; i < in.mergeCount; i++) {
    if (i > 0) separator(m, mp, mn);
    uint32_t* sp4 = &mergeSpans[4 * i];
    sp4[0] = uint32_t(mp);
    mp = advanceUnits(m, mp, mn, in.mergeLens[2 * i]);
    sp4[1] = uint32_t(mp);
    if (in.mergeLens[2 * i + 1] == kSplitOnSpace) {
      sp4[2] = kSplitOnSpace;
      continue;
    }
    separator(m, mp, mn);
    sp4[2] = uint32_t(mp);
    mp = advanceUnits(m, mp, mn, in.mergeLens[2 * i + 1]);
    sp4[3] = uint32_t(mp);
  }
  if (mp != mn) throw std::invalid_argument("merge string lengths do not match the strings");

  ModelStrings strings;
  strings.keyBytes = s;
  strings.keySpans = keySpans.data();
  strings.ids = in.ids;
  strings.keyCount = in.keyCount;
  strings.mergeBytes = m;
  strings.mergeSpans = mergeSpans.data();
  strings.mergeCount = in.mergeCount;
  buildModel(strings, spec);
}

}  // namespace promptenc
