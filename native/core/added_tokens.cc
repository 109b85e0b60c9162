#include "added_tokens.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "unicode.h"

namespace promptenc {

void AddedTokenTrie::build(const std::vector<AddedTokenSpec>& tokens, bool normalizedPass) {
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
  }
  int firstBytes = 0;
  for (int b = 0; b < 256; b++) {
    if (firstByte_[b >> 6] & (uint64_t(1) << (b & 63))) {
      firstBytes++;
      singleFirstByte_ = b;
    }
  }
  if (firstBytes != 1) singleFirstByte_ = -1;
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

bool AddedTokenTrie::find(const uint8_t* s, size_t from, size_t n, size_t& start, size_t& end,
                          uint32_t& tokenIndex) const {
  if (empty()) return false;
  for (size_t i = from; i < n; i++) {
    if (singleFirstByte_ >= 0) {
      // Common case (every added token starts with '<'): let memchr skip ahead.
      const void* hit = std::memchr(s + i, singleFirstByte_, n - i);
      if (!hit) return false;
      i = size_t(static_cast<const uint8_t*>(hit) - s);
    }
    const uint8_t b0 = s[i];
    if (!(firstByte_[b0 >> 6] & (uint64_t(1) << (b0 & 63)))) continue;
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

void findAddedTokens(const AddedTokenTrie& trie, const std::vector<AddedTokenSpec>& tokens, const uint8_t* s,
                     size_t n, std::vector<Segment>& out) {
  size_t startOffset = 0;
  size_t searchFrom = 0;  // the automaton resumes after the raw match, whatever rstrip did
  size_t mStart, mEnd;
  uint32_t t;
  while (trie.find(s, searchFrom, n, mStart, mEnd, t)) {
    searchFrom = mEnd;
    const AddedTokenSpec& tok = tokens[t];
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
