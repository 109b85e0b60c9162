// Added-token splitting, as tokenizers/src/tokenizer/added_vocabulary.rs
// `find_matches`: leftmost-longest matches of all patterns in one pass, then
// single_word / lstrip / rstrip adjust or discard each match.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

// x86-64 builds target SSE2; the added-token scan also has an AVX2 loop chosen at run time.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PROMPTENC_AVX2_DISPATCH 1
#else
#define PROMPTENC_AVX2_DISPATCH 0
#endif

namespace promptenc {

struct AddedTokenSpec {
  uint32_t id = 0;
  std::string content;  // the token text, as in tokenizer.json
  std::string pattern;  // what is matched: content, or normalized(content) when normalized
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  bool singleWord = false;
  bool normalized = false;
};

/// A byte trie over the patterns of one pass. Matching is leftmost-longest, like the
/// daachorse automaton HF builds with MatchKind::LeftmostLongest: the leftmost start
/// with any match wins, then the longest pattern there. Cost: O(n) to skip bytes
/// that start no pattern (first-byte bitmap), O(longest pattern) per candidate start.
class AddedTokenTrie {
 public:
  /// sse2Only: never take the AVX2 scan loop (a testing knob; the result is the same).
  void build(const std::vector<AddedTokenSpec>& tokens, bool normalizedPass, bool sse2Only = false);
  bool empty() const { return nodes_.size() <= 1; }
  /// Finds the leftmost-longest match in s[from, n). Returns false when none.
  bool find(const uint8_t* s, size_t from, size_t n, size_t& start, size_t& end, uint32_t& tokenIndex) const;

 private:
  struct Node {
    uint32_t firstEdge = 0;
    uint32_t edgeCount = 0;
    uint32_t token = kNone;  // index into the token list, or kNone
  };
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  // Built as maps, then flattened: edges of a node are contiguous and sorted.
  std::vector<Node> nodes_;
  std::vector<uint8_t> edgeByte_;
  std::vector<uint32_t> edgeChild_;
  /// The first index >= i (or n) at which some pattern could start: its byte starts a
  /// pattern, and it is a whole pattern or its next byte can follow it in one.
  size_t nextCandidate(const uint8_t* s, size_t i, size_t n) const;
  bool isFirst(uint8_t b) const { return (firstByte_[b >> 6] >> (b & 63)) & 1; }
  /// A match can start at k: s[k] is a whole pattern, or (s[k], s[k + 1]) begins one.
  bool viable(const uint8_t* s, size_t k, size_t n) const {
    const uint8_t b0 = s[k];
    if ((oneByte_[b0 >> 6] >> (b0 & 63)) & 1) return true;
    if (k + 1 == n) return false;
    const size_t pair = size_t(b0) * 256 + s[k + 1];
    return ((pairStarts_[pair >> 6] >> (pair & 63)) & 1) != 0;
  }
#if PROMPTENC_AVX2_DISPATCH
  size_t scanAvx2(const uint8_t* s, size_t i, size_t n) const;
#endif
  uint64_t firstByte_[4] = {0, 0, 0, 0};
  int singleFirstByte_ = -1;  // the only byte that starts a pattern, or -1
  // Up to kMaxScanBytes distinct first bytes are searched 16 bytes at a time (SSE2).
  static constexpr int kMaxScanBytes = 8;
  uint8_t scanBytes_[kMaxScanBytes] = {};
  int scanByteCount_ = 0;                   // 0 = more than kMaxScanBytes: byte-by-byte bitmap test
  bool avx2_ = false;                       // the CPU has AVX2 and the knob allows it
  int16_t scanSecond_[kMaxScanBytes] = {};  // the only byte that can follow scanBytes_[k], or -1
  // A candidate start i with no one-byte pattern for s[i] needs (s[i], s[i+1]) to begin
  // some pattern: with Gemma 3's 6 K tokens, '\n' starts patterns ("\n\n\n…") but "\n"
  // + a letter starts none, so most newlines are dismissed without a trie walk.
  std::vector<uint64_t> pairStarts_;    // bit b0 * 256 + b1
  uint64_t oneByte_[4] = {0, 0, 0, 0};  // b0 that is a whole pattern by itself
};

/// One piece of the added-token split: either an added token id, or a text range.
struct Segment {
  uint32_t tokenId;  // kNoSegmentToken for text
  size_t start;
  size_t end;
};
constexpr uint32_t kNoSegmentToken = 0xFFFFFFFFu;

/// added_vocabulary.rs `find_matches` over s[0, n). Text segments are never empty.
/// splitSpecial is the Rust tokenizer's `encode_special_tokens`: a special token's match is
/// still consumed by the leftmost-longest scan but left in the text, as a discarded single_word is.
void findAddedTokens(const AddedTokenTrie& trie, const std::vector<AddedTokenSpec>& tokens, const uint8_t* s, size_t n,
                     std::vector<Segment>& out, bool splitSpecial = false);

}  // namespace promptenc
