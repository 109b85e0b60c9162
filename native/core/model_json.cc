// A small JSON scanner for the two large values of tokenizer.json; see model_json.h.
// Cost: one pass over the bytes with an ASCII fast path per string; the output is
// written into buffers sized from the input (an unescaped string is never longer
// than its JSON form), so there is no per-string allocation.
#include "model_json.h"

#include <cstring>
#include <string_view>
#include <unordered_map>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace promptenc {

namespace {

/// Length of the well-formed UTF-8 sequence at p (lead byte >= 0x80), 0 when ill-formed
/// (Unicode table 3-7: no overlongs, no surrogates, nothing above U+10FFFF).
inline size_t utf8SequenceLength(const uint8_t* p, size_t avail) {
  const uint8_t b = p[0];
  auto cont = [&](size_t i, uint8_t lo = 0x80, uint8_t hi = 0xBF) { return i < avail && p[i] >= lo && p[i] <= hi; };
  if (b >= 0xC2 && b <= 0xDF) return cont(1) ? 2 : 0;
  if (b >= 0xE0 && b <= 0xEF) {
    const uint8_t lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (b >= 0xF0 && b <= 0xF4) {
    const uint8_t lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

inline int hexValue(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// Extra bytes at the end of every output buffer: string() may copy 16 bytes at once.
constexpr size_t kSlack = 16;

/// Bytes that a JSON string holds as they are: not '"', not '\\', not a control char, ASCII.
struct PlainTable {
  bool t[256];
  constexpr PlainTable() : t() {
    for (int c = 0; c < 256; c++) t[c] = c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
  }
  constexpr bool operator[](uint8_t c) const { return t[c]; }
};
constexpr PlainTable kPlain;

inline uint8_t* putUtf8(uint8_t* o, uint32_t cp) {
  if (cp < 0x80) {
    *o++ = uint8_t(cp);
  } else if (cp < 0x800) {
    *o++ = uint8_t(0xC0 | (cp >> 6));
    *o++ = uint8_t(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *o++ = uint8_t(0xE0 | (cp >> 12));
    *o++ = uint8_t(0x80 | ((cp >> 6) & 0x3F));
    *o++ = uint8_t(0x80 | (cp & 0x3F));
  } else {
    *o++ = uint8_t(0xF0 | (cp >> 18));
    *o++ = uint8_t(0x80 | ((cp >> 12) & 0x3F));
    *o++ = uint8_t(0x80 | ((cp >> 6) & 0x3F));
    *o++ = uint8_t(0x80 | (cp & 0x3F));
  }
  return o;
}

class Scanner {
 public:
  Scanner(const uint8_t* p, size_t n, ModelJson& out) : p_(p), n_(n), out_(out) {}

  bool document() {
    if (!expect('{')) return false;
    bool sawModel = false;
    if (!lit('}')) {
      for (;;) {
        std::string key;
        if (!plainKey(key) || !expect(':')) return false;
        if (key == "model") {
          if (sawModel) return fail("a second \"model\" key");
          sawModel = true;
          if (!model()) return false;
        } else if (!skipValue()) {
          return false;
        }
        if (lit(',')) continue;
        if (!expect('}')) return false;
        break;
      }
    }
    ws();
    if (i_ != n_) return fail("text after the top-level object");
    if (!sawModel) return fail("no \"model\" key");
    return true;
  }

  std::string why;

 private:
  bool fail(const char* what) {
    if (why.empty()) why = std::string(what) + " at byte " + std::to_string(i_);
    return false;
  }
  void ws() {
    size_t i = i_;
    while (i < n_ && (p_[i] == ' ' || p_[i] == '\n' || p_[i] == '\r' || p_[i] == '\t')) {
      // Pretty-printed files indent every entry by 12 spaces: skip 8 at a time.
      uint64_t w;
      if (i + 8 <= n_ && (std::memcpy(&w, p_ + i, 8), w == 0x2020202020202020ull)) {
        i += 8;
      } else {
        i++;
      }
    }
    i_ = i;
  }
  bool lit(char c) {
    ws();
    if (i_ < n_ && p_[i_] == uint8_t(c)) {
      i_++;
      return true;
    }
    return false;
  }
  bool expect(char c) { return lit(c) || fail("unexpected character"); }

  bool model() {
    ws();
    if (!expect('{')) return false;
    bool sawVocab = false, sawMerges = false;
    if (!lit('}')) {
      for (;;) {
        std::string key;
        if (!plainKey(key) || !expect(':')) return false;
        ws();
        if (key == "vocab") {
          if (sawVocab) return fail("a second \"vocab\" key");
          sawVocab = true;
          out_.vocabBegin = i_;
          if (!vocab()) return false;
          out_.vocabEnd = i_;
        } else if (key == "merges") {
          if (sawMerges) return fail("a second \"merges\" key");
          sawMerges = true;
          out_.mergesBegin = i_;
          if (!merges()) return false;
          out_.mergesEnd = i_;
        } else if (!skipValue()) {
          return false;
        }
        if (lit(',')) continue;
        if (!expect('}')) return false;
        break;
      }
    }
    if (!sawVocab || !sawMerges) return fail("model has no vocab or no merges");
    return true;
  }

  /// A JSON string at i_ (after whitespace) unescaped into `out`; advances it. `units`
  /// gets its UTF-16 length. The caller guarantees room: the output is never longer than
  /// the input. Works on local copies of the position and output (stores through a
  /// uint8_t* may alias the members, so the compiler would reload them per byte).
  bool string(uint8_t*& out, uint64_t& units) {
    ws();
    if (i_ >= n_ || p_[i_] != '"') return fail("expected a string");
    const uint8_t* const p = p_;
    const size_t n = n_;
    size_t i = i_ + 1;
    uint8_t* o = out;
    uint64_t u = units;
    auto failAt = [&](const char* what) {
      i_ = i;
      return fail(what);
    };
    for (;;) {
      const size_t start = i;
#if defined(__SSE2__)
      // 16 bytes at a time: copy them, then find the first '"', '\\', control or
      // non-ASCII byte (a signed compare < 0x20 catches both of the last two). The
      // output has 16 bytes of slack (see kSlack), so the copy may run past the string.
      while (i + 16 <= n) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o), v);
        const __m128i special =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                         _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
        const unsigned mask = unsigned(_mm_movemask_epi8(special));
        if (mask == 0) {
          i += 16;
          o += 16;
          continue;
        }
        const unsigned k = unsigned(__builtin_ctz(mask));
        i += k;
        o += k;
        break;
      }
#endif
      while (i < n && kPlain[p[i]]) *o++ = p[i++];
      u += i - start;
      if (i >= n) return failAt("unterminated string");
      const uint8_t c = p[i];
      if (c == '"') {
        i_ = i + 1;
        out = o;
        units = u;
        return true;
      }
      if (c < 0x20) return failAt("control character in a string");
      if (c >= 0x80) {
        const size_t len = utf8SequenceLength(p + i, n - i);
        if (len == 0) return failAt("invalid UTF-8");
        for (size_t k = 0; k < len; k++) *o++ = p[i + k];
        u += len == 4 ? 2 : 1;
        i += len;
        continue;
      }
      // An escape.
      if (i + 1 >= n) return failAt("unterminated string");
      const uint8_t e = p[i + 1];
      i += 2;
      u++;
      switch (e) {
        case '"':
          *o++ = '"';
          break;
        case '\\':
          *o++ = '\\';
          break;
        case '/':
          *o++ = '/';
          break;
        case 'b':
          *o++ = '\b';
          break;
        case 'f':
          *o++ = '\f';
          break;
        case 'n':
          *o++ = '\n';
          break;
        case 'r':
          *o++ = '\r';
          break;
        case 't':
          *o++ = '\t';
          break;
        case 'u': {
          const int32_t hi = hex4(p, n, i);
          if (hi < 0) return failAt("bad \\u escape");
          i += 4;
          if (hi >= 0xD800 && hi <= 0xDBFF && i + 1 < n && p[i] == '\\' && p[i + 1] == 'u') {
            const int32_t lo = hex4(p, n, i + 2);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
              o = putUtf8(o, 0x10000 + ((uint32_t(hi) - 0xD800) << 10) + (uint32_t(lo) - 0xDC00));
              i += 6;
              u++;
              break;
            }
            // Not a pair: the next escape is read on its own.
          }
          // A lone surrogate: Buffer.from(string, 'utf8') writes U+FFFD for it.
          o = putUtf8(o, (hi >= 0xD800 && hi <= 0xDFFF) ? 0xFFFD : uint32_t(hi));
          break;
        }
        default:
          return failAt("bad escape");
      }
    }
  }

  /// The 4 hex digits at p[i], or -1.
  static int32_t hex4(const uint8_t* p, size_t n, size_t i) {
    if (i + 4 > n) return -1;
    int32_t v = 0;
    for (int k = 0; k < 4; k++) {
      const int h = hexValue(p[i + k]);
      if (h < 0) return -1;
      v = v * 16 + h;
    }
    return v;
  }

  /// An object key compared as text ("mod\u0065l" is "model").
  bool plainKey(std::string& key) {
    ws();
    // Room: a key is never longer unescaped than in the file.
    size_t end = i_ + 1;
    while (end < n_ && p_[end] != '"') end += p_[end] == '\\' ? 2 : 1;
    key.resize(end - i_ + 1 + kSlack);
    uint8_t* o = reinterpret_cast<uint8_t*>(&key[0]);
    uint8_t* const b = o;
    uint64_t units = 0;
    if (!string(o, units)) return false;
    key.resize(size_t(o - b));
    return true;
  }

  /// Skips any JSON value without validating it (the caller's JSON.parse of the rest does).
  bool skipValue() {
    ws();
    if (i_ >= n_) return fail("expected a value");
    uint8_t c = p_[i_];
    if (c == '"') return skipString();
    if (c != '{' && c != '[') {
      const size_t s = i_;
      while (i_ < n_ && (c = p_[i_]) != ',' && c != '}' && c != ']' && c != ' ' && c != '\n' && c != '\r' && c != '\t')
        i_++;
      return i_ > s || fail("expected a value");
    }
    size_t depth = 0;
    while (i_ < n_) {
      c = p_[i_];
      if (c == '"') {
        if (!skipString()) return false;
        continue;
      }
      if (c == '{' || c == '[') {
        depth++;
      } else if ((c == '}' || c == ']') && --depth == 0) {
        i_++;
        return true;
      }
      i_++;
    }
    return fail("unterminated value");
  }

  bool skipString() {
    for (i_++; i_ < n_; i_++) {
      if (p_[i_] == '\\') {
        i_++;
      } else if (p_[i_] == '"') {
        i_++;
        return true;
      }
    }
    return fail("unterminated string");
  }

  /// A vocab id: 0 or [1-9][0-9]* up to 2^31 - 1, as isTokenId in load.ts accepts.
  bool id(uint32_t& v) {
    ws();
    const size_t s = i_;
    uint64_t x = 0;
    while (i_ < n_ && p_[i_] >= '0' && p_[i_] <= '9') {
      x = x * 10 + (p_[i_] - '0');
      if (x > 0x7FFFFFFFu) return fail("vocab id too large");
      i_++;
    }
    if (i_ == s || (p_[s] == '0' && i_ - s > 1)) return fail("vocab id is not a plain integer");
    if (i_ < n_ && (p_[i_] == '.' || p_[i_] == 'e' || p_[i_] == 'E')) return fail("vocab id is not a plain integer");
    v = uint32_t(x);
    return true;
  }

  bool vocab() {
    if (!expect('{')) return false;
    // Room: the rest of the file bounds the unescaped keys (not zero-filled, see ScanBuffer).
    auto& bytes = out_.keyBytes;
    bytes.data.reset(new uint8_t[n_ - i_ + kSlack]);
    uint8_t* const base = bytes.data.get();
    uint8_t* o = base;
    // An entry takes at least 5 bytes ("":0,); reserving for 1 per 8 bytes of the rest
    // of the file avoids regrowth (copies + page faults) and costs only address space
    // (untouched pages are never faulted in).
    const size_t guess = (n_ - i_) / 8;
    out_.keySpans.reserve(2 * guess);
    out_.ids.reserve(guess);
    out_.keyUtf16Lengths.reserve(guess);
    if (!lit('}')) {
      for (;;) {
        const uint32_t start = uint32_t(o - base);
        uint64_t units = 0;
        if (!string(o, units)) return false;
        if (units > 0xFFFFFFFFu) return fail("key too long");
        uint32_t v;
        if (!expect(':') || !id(v)) return false;
        out_.keySpans.push_back(start);
        out_.keySpans.push_back(uint32_t(o - base));
        out_.ids.push_back(v);
        out_.keyUtf16Lengths.push_back(uint32_t(units));
        if (lit(',')) continue;
        if (!expect('}')) return false;
        break;
      }
    }
    bytes.size = size_t(o - base);
    return true;
  }

  bool merges() {
    if (!expect('[')) return false;
    auto& bytes = out_.mergeBytes;
    bytes.data.reset(new uint8_t[n_ - i_ + kSlack]);
    uint8_t* const base = bytes.data.get();
    uint8_t* o = base;
    auto& spans = out_.mergeSpans;
    spans.reserve((n_ - i_) / 8 * 4);  // as in vocab(): at least 6 bytes per merge
    if (!lit(']')) {
      int form = -1;  // 1: [a, b] pairs, 0: "a b" strings; HF refuses a list that mixes them
      for (;;) {
        uint64_t units = 0;
        const uint32_t a0 = uint32_t(o - base);
        ws();
        const int pair = i_ < n_ && p_[i_] == '[' ? 1 : 0;
        if (form >= 0 && pair != form) return fail("merges that mix \"a b\" strings and [a, b] pairs");
        form = pair;
        if (lit('[')) {
          if (!string(o, units)) return false;
          const uint32_t a1 = uint32_t(o - base);
          if (!expect(',') || !string(o, units) || !expect(']')) return false;
          spans.insert(spans.end(), {a0, a1, a1, uint32_t(o - base)});
        } else {
          if (!string(o, units)) return false;
          const uint32_t e0 = uint32_t(o - base);
          // load.ts requires a space in the string form; without one it reports the merge.
          uint8_t* sp = static_cast<uint8_t*>(std::memchr(base + a0, ' ', e0 - a0));
          if (!sp) return fail("a merge string without a space");
          const uint32_t at = uint32_t(sp - base);
          if (e0 - a0 >= 8 && std::memcmp(base + a0, "#version", 8) == 0) {
            spans.insert(spans.end(), {a0, e0, kSplitOnSpace, 0});  // skipped by buildModel
          } else if (std::memchr(sp + 1, ' ', e0 - at - 1)) {
            spans.insert(spans.end(), {a0, e0, kSplitOnSpace, 0});  // reported by buildModel
          } else {
            // "a b" with one space stored as a then b, adjacent: buildModel then finds the
            // merged token a + b without copying it (the same parts as its own split).
            std::memmove(sp, sp + 1, e0 - at - 1);
            o--;
            spans.insert(spans.end(), {a0, at, at, e0 - 1});
          }
        }
        if (lit(',')) continue;
        if (!expect(']')) return false;
        break;
      }
    }
    bytes.size = size_t(o - base);
    return true;
  }

  const uint8_t* p_;
  size_t n_;
  size_t i_ = 0;
  ModelJson& out_;
};

}  // namespace

ModelStrings ModelJson::strings() const {
  ModelStrings s;
  s.keyBytes = keyBytes.data.get();
  s.keySpans = keySpans.data();
  s.ids = ids.data();
  s.keyCount = ids.size();
  s.mergeBytes = mergeBytes.data.get();
  s.mergeSpans = mergeSpans.data();
  s.mergeCount = mergeSpans.size() / 4;
  s.rejectDuplicates = true;
  return s;
}

bool scanModelJson(const uint8_t* p, size_t n, ModelJson& out, std::string& why) {
  out = ModelJson();
  if (n > 0xFFFFFFFFu) {
    why = "file larger than 4 GB";
    return false;
  }
  Scanner s(p, n, out);
  if (s.document()) return true;
  why = s.why;
  out = ModelJson();
  return false;
}

std::vector<int64_t> vocabIdsOf(const ModelJson& model, const std::vector<std::string>& strings) {
  std::vector<int64_t> out(strings.size(), -1);
  // Few strings (the added tokens), many keys: index the strings, walk the keys once.
  std::unordered_multimap<std::string_view, size_t> wanted;
  wanted.reserve(strings.size());
  // Keys are mostly short and added tokens long: only keys of a wanted length are hashed.
  std::vector<bool> length;
  for (size_t i = 0; i < strings.size(); i++) {
    wanted.emplace(std::string_view(strings[i]), i);
    if (strings[i].size() >= length.size()) length.resize(strings[i].size() + 1, false);
    length[strings[i].size()] = true;
  }
  const char* bytes = reinterpret_cast<const char*>(model.keyBytes.data.get());
  for (size_t k = 0; k < model.ids.size(); k++) {
    const size_t n = model.keySpans[2 * k + 1] - model.keySpans[2 * k];
    if (n >= length.size() || !length[n]) continue;
    const std::string_view key(bytes + model.keySpans[2 * k], n);
    auto range = wanted.equal_range(key);
    for (auto it = range.first; it != range.second; ++it)
      if (out[it->second] < 0) out[it->second] = model.ids[k];
  }
  return out;
}

}  // namespace promptenc
