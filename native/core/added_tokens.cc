#include "added_tokens.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "unicode.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if PROMPTENC_AVX2_DISPATCH
#include <immintrin.h>
#endif

namespace promptenc {

void AddedTokenTrie::build(const std::vector<AddedTokenSpec>& tokens, bool normalizedPass, bool sse2Only) {
#if PROMPTENC_AVX2_DISPATCH
  avx2_ = !sse2Only && __builtin_cpu_supports("avx2");
#else
  (void)sse2Only;
#endif
  struct BuildNode {
    std::map<uint8_t, uint32_t> children;
    uint32_t token = kNone;
  };
  std::vector<BuildNode> tmp(1);
  for (uint32_t t = 0; t < tokens.size(); t++) {
    const AddedTokenSpec& tok = tokens[t];
    if (tok.normalized != normalizedPass || tok.pattern.empty()) continue;
    uint32_t node = 0;
    for (unsigned char c : tok.pattern) {
      auto it = tmp[node].children.find(c);
      if (it == tmp[node].children.end()) {
        tmp.push_back({});
        uint32_t child = uint32_t(tmp.size() - 1);
        tmp[node].children.emplace(c, child);
        node = child;
      } else {
        node = it->second;
      }
    }
    // Duplicate patterns: the later token wins (a hash map keyed by content would keep one).
    tmp[node].token = t;
    const uint8_t b0 = uint8_t(tok.pattern[0]);
    firstByte_[b0 >> 6] |= uint64_t(1) << (b0 & 63);
    if (tok.pattern.size() == 1) {
      oneByte_[b0 >> 6] |= uint64_t(1) << (b0 & 63);
    } else {
      const size_t pair = size_t(b0) * 256 + uint8_t(tok.pattern[1]);
      pairStarts_.resize(256 * 256 / 64, 0);
      pairStarts_[pair >> 6] |= uint64_t(1) << (pair & 63);
    }
  }
  pairStarts_.resize(256 * 256 / 64, 0);
  int firstBytes = 0;
  for (int b = 0; b < 256; b++) {
    if (firstByte_[b >> 6] & (uint64_t(1) << (b & 63))) {
      if (firstBytes < kMaxScanBytes) scanBytes_[firstBytes] = uint8_t(b);
      firstBytes++;
      singleFirstByte_ = b;
    }
  }
  if (firstBytes != 1) singleFirstByte_ = -1;
  scanByteCount_ = firstBytes <= kMaxScanBytes ? firstBytes : 0;
  for (int k = 0; k < scanByteCount_; k++) {
    const uint8_t b0 = scanBytes_[k];
    int only = -1;  // the one byte that follows b0 in every pattern, if there is one
    if (!((oneByte_[b0 >> 6] >> (b0 & 63)) & 1)) {
      for (int b1 = 0; b1 < 256; b1++) {
        const size_t pair = size_t(b0) * 256 + size_t(b1);
        if (!((pairStarts_[pair >> 6] >> (pair & 63)) & 1)) continue;
        only = only == -1 ? b1 : -2;
      }
    }
    scanSecond_[k] = only >= 0 ? int16_t(only) : int16_t(-1);
  }
  nodes_.assign(tmp.size(), Node{});
  edgeByte_.clear();
  edgeChild_.clear();
  for (size_t i = 0; i < tmp.size(); i++) {
    nodes_[i].token = tmp[i].token;
    nodes_[i].firstEdge = uint32_t(edgeByte_.size());
    nodes_[i].edgeCount = uint32_t(tmp[i].children.size());
    for (auto& [b, child] : tmp[i].children) {
      edgeByte_.push_back(b);
      edgeChild_.push_back(child);
    }
  }
}

#if PROMPTENC_AVX2_DISPATCH
// The SSE2 loop below, 32 bytes per step; runs only where the CPU has AVX2 (checked once).
__attribute__((target("avx2"))) size_t AddedTokenTrie::scanAvx2(const uint8_t* s, size_t i, size_t n) const {
  __m256i want[kMaxScanBytes], second[kMaxScanBytes];
  for (int k = 0; k < scanByteCount_; k++) {
    want[k] = _mm256_set1_epi8(char(scanBytes_[k]));
    second[k] = _mm256_set1_epi8(char(scanSecond_[k]));
  }
  for (; i + 33 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 1));
    __m256i any = _mm256_setzero_si256();
    for (int k = 0; k < scanByteCount_; k++) {
      __m256i e = _mm256_cmpeq_epi8(v, want[k]);
      if (scanSecond_[k] >= 0) e = _mm256_and_si256(e, _mm256_cmpeq_epi8(v1, second[k]));
      any = _mm256_or_si256(any, e);
    }
    for (unsigned mask = unsigned(_mm256_movemask_epi8(any)); mask; mask &= mask - 1) {
      const size_t k = i + size_t(__builtin_ctz(mask));
      if (viable(s, k, n)) return k;
    }
  }
  return i;  // fewer than 33 bytes left: the caller goes on from here
}
#endif

size_t AddedTokenTrie::nextCandidate(const uint8_t* s, size_t i, size_t n) const {
  if (singleFirstByte_ >= 0) {
    // Common case (every added token starts with '<'): let memchr skip ahead.
    for (;;) {
      const void* hit = std::memchr(s + i, singleFirstByte_, n - i);
      if (!hit) return n;
      i = size_t(static_cast<const uint8_t*>(hit) - s);
      if (viable(s, i, n)) return i;
      i++;
    }
  }
#if PROMPTENC_AVX2_DISPATCH
  if (scanByteCount_ > 0 && avx2_) {
    i = scanAvx2(s, i, n);
    if (i + 33 <= n) return i;  // a viable candidate
  }
#endif
#if defined(__SSE2__)
  if (scanByteCount_ > 0) {
    __m128i want[kMaxScanBytes], second[kMaxScanBytes];
    for (int k = 0; k < scanByteCount_; k++) {
      want[k] = _mm_set1_epi8(char(scanBytes_[k]));
      second[k] = _mm_set1_epi8(char(scanSecond_[k]));
    }
    // 17 bytes per step are read: the block and, shifted by one, each byte's successor.
    for (; i + 17 <= n; i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
      const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 1));
      __m128i any = _mm_setzero_si128();
      for (int k = 0; k < scanByteCount_; k++) {
        __m128i e = _mm_cmpeq_epi8(v, want[k]);
        // A first byte whose patterns all continue with one byte ('\n' -> '\n' in Gemma 3)
        // is a candidate only before that byte; viable() below stays the exact test.
        if (scanSecond_[k] >= 0) e = _mm_and_si128(e, _mm_cmpeq_epi8(v1, second[k]));
        any = _mm_or_si128(any, e);
      }
      // Candidates that fail the pair test (a newline before a letter) stay in this loop.
      for (unsigned mask = unsigned(_mm_movemask_epi8(any)); mask; mask &= mask - 1) {
        const size_t k = i + size_t(__builtin_ctz(mask));
        if (viable(s, k, n)) return k;
      }
    }
  }
#endif
  for (; i < n; i++)
    if (isFirst(s[i]) && viable(s, i, n)) return i;
  return n;
}

bool AddedTokenTrie::find(const uint8_t* s, size_t from, size_t n, size_t& start, size_t& end,
                          uint32_t& tokenIndex) const {
  if (empty()) return false;
  for (size_t i = from; i < n; i++) {
    i = nextCandidate(s, i, n);
    if (i == n) return false;
    uint32_t node = 0;
    uint32_t best = kNone;
    size_t bestEnd = 0;
    for (size_t j = i; j < n; j++) {
      const Node& nd = nodes_[node];
      const uint8_t* eb = edgeByte_.data() + nd.firstEdge;
      const uint8_t* ee = eb + nd.edgeCount;
      const uint8_t* it = std::lower_bound(eb, ee, s[j]);
      if (it == ee || *it != s[j]) break;
      node = edgeChild_[nd.firstEdge + uint32_t(it - eb)];
      if (nodes_[node].token != kNone) {
        best = nodes_[node].token;
        bestEnd = j + 1;
      }
    }
    if (best != kNone) {
      start = i;
      end = bestEnd;
      tokenIndex = best;
      return true;
    }
  }
  return false;
}

namespace {

/// Decodes the code point that ends at s[end-1] (s valid UTF-8 up to end).
CodePoint lastCodePoint(const uint8_t* s, size_t end) {
  size_t b = end - 1;
  while (b > 0 && (s[b] & 0xC0) == 0x80 && end - b < 4) b--;
  return decodeUtf8(s, b, end);
}

/// Regex `\w$` on s[0, end): the last char is a word char (Rust regex \w).
bool endsWithWord(const uint8_t* s, size_t end) { return end > 0 && isRustWordChar(lastCodePoint(s, end).cp); }
/// Regex `^\w` on s[begin, n).
bool startsWithWord(const uint8_t* s, size_t begin, size_t n) {
  return begin < n && isRustWordChar(decodeUtf8(s, begin, n).cp);
}
/// Regex `\s*$` on s[0, end): start of the trailing whitespace.
size_t spaceLeftmostAtEnd(const uint8_t* s, size_t end) {
  size_t i = end;
  while (i > 0) {
    CodePoint c = lastCodePoint(s, i);
    if (!isRustWhitespace(c.cp)) break;
    i -= c.len;
  }
  return i;
}
/// Regex `^\s*` on s[begin, n): its length.
size_t spaceRightmostAtStart(const uint8_t* s, size_t begin, size_t n) {
  size_t i = begin;
  while (i < n) {
    CodePoint c = decodeUtf8(s, i, n);
    if (!isRustWhitespace(c.cp)) break;
    i += c.len;
  }
  return i - begin;
}

}  // namespace

void findAddedTokens(const AddedTokenTrie& trie, const std::vector<AddedTokenSpec>& tokens, const uint8_t* s, size_t n,
                     std::vector<Segment>& out, bool splitSpecial) {
  size_t startOffset = 0;
  size_t searchFrom = 0;  // the automaton resumes after the raw match, whatever rstrip did
  size_t mStart, mEnd;
  uint32_t t;
  while (trie.find(s, searchFrom, n, mStart, mEnd, t)) {
    searchFrom = mEnd;
    const AddedTokenSpec& tok = tokens[t];
    if (splitSpecial && tok.special) continue;
    size_t start = mStart, stop = mEnd;
    if (tok.singleWord) {
      const bool startSpace = start == 0 || !endsWithWord(s, start);
      const bool stopSpace = stop == n || !startsWithWord(s, stop, n);
      if (!stopSpace || !startSpace) continue;
    }
    if (tok.lstrip) start = std::max(spaceLeftmostAtEnd(s, start), startOffset);
    if (tok.rstrip) stop += spaceRightmostAtStart(s, stop, n);
    if (startOffset < start) out.push_back({kNoSegmentToken, startOffset, start});
    out.push_back({tok.id, start, stop});
    startOffset = stop;
  }
  if (startOffset < n) out.push_back({kNoSegmentToken, startOffset, n});
}

}  // namespace promptenc
