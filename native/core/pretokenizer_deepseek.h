// DeepSeek-V3's pre-tokenizer (three chained Splits), part of pretokenizer.h: it uses that
// file's char classes and run helpers, and is included from it after them.
#pragma once
#include <cstddef>
#include <cstdint>

namespace promptenc {
namespace pretok_detail {

inline bool isAsciiPunct(uint8_t b) {
  return (b >= 0x21 && b <= 0x2F) || (b >= 0x3A && b <= 0x40) || (b >= 0x5B && b <= 0x60) || (b >= 0x7B && b <= 0x7E);
}
inline bool isAsciiAlpha(uint8_t b) { return ((b | 0x20) >= 'a' && (b | 0x20) <= 'z'); }

constexpr uint16_t kPS = uflag::P | uflag::S;
constexpr uint16_t kLM = uflag::L | uflag::M;

/// One match of DeepSeek-V3's third regex at i, or 0 when no branch matches here
/// (then the char belongs to a gap):
///   [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
///  | ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
inline size_t matchDeepSeekWords(const uint8_t* s, size_t i, size_t n) {
  // [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+
  if (isAsciiPunct(s[i]) && i + 1 < n && isAsciiAlpha(s[i + 1])) {
    size_t j = i + 2;
    while (j < n && isAsciiAlpha(s[j])) j++;
    return j;
  }
  Char c0 = charAt(s, i, n);
  // [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
  if (!(c0.flags & (kL | kPS)) && !isCrLf(c0.cp) && i + c0.len < n) {
    Char c1 = charAt(s, i + c0.len, n);
    if (c1.flags & kLM) return runOf(s, i + c0.len + c1.len, n, kLM);
  }
  if (c0.flags & kLM) return runOf(s, i + c0.len, n, kLM);
  //  ?[\p{P}\p{S}]+[\r\n]*
  if (c0.cp == ' ' && i + 1 < n) {
    Char c1 = charAt(s, i + 1, n);
    if (c1.flags & kPS) return skipCrLf(s, runOf(s, i + 1 + c1.len, n, kPS), n, false);
  }
  if (c0.flags & kPS) return skipCrLf(s, runOf(s, i + c0.len, n, kPS), n, false);
  // \s*[\r\n]+ | \s+(?!\S) | \s+
  if (c0.flags & kS) return whitespaceTail(s, i, n, true);
  return 0;
}

/// The end of the run of ASCII [\p{P}\p{S}] (the 32 ASCII punctuation and symbol chars) from k.
inline size_t skipAsciiPunctSym(const uint8_t* s, size_t k, size_t n) {
  while (k < n && isAsciiPunct(s[k])) k++;
  return k;
}

/// matchDeepSeekWords with an inline ASCII path (the scheme of matchCl100kFast): when s[i] is
/// ASCII and s[i + 1] is ASCII (or absent), the winning branch depends only on their classes.
/// For ASCII, \p{P} and \p{S} are exactly the 32 punctuation chars of the first branch, and no
/// char is \p{M}. A letter or punctuation run that ends at a byte >= 0x80 may go on (a
/// non-ASCII letter, mark, punctuation or symbol), so it goes to matchDeepSeekWords, which
/// decides from s[i] again.
PROMPTENC_ALWAYS_INLINE size_t matchDeepSeekWordsFast(const uint8_t* s, size_t i, size_t n) {
  const uint8_t b0 = s[i];
  const bool hasNext = i + 1 < n;
  const uint8_t b1 = hasNext ? s[i + 1] : 0;
  if (b0 >= 0x80 || b1 >= 0x80) return matchDeepSeekWords(s, i, n);
  const bool punct0 = isAsciiPunct(b0);
  // [punct][A-Za-z]+: ASCII letters only, so a run ending anywhere is final.
  if (punct0 && hasNext && isAsciiAlpha(b1)) return ascii::skipLetters(s, i + 2, n);
  const uint16_t f0 = kAscii.f[b0];
  size_t j = SIZE_MAX;
  if (f0 & kL) {
    j = i + 1;  // [\p{L}\p{M}]+ from s[i]
  } else if (!punct0 && b0 != '\r' && b0 != '\n' && hasNext && isAsciiAlpha(b1)) {
    j = i + 2;  // the prefix char, then [\p{L}\p{M}]+ from s[i + 1]
  }
  if (j != SIZE_MAX) {
    const size_t k = ascii::skipLetters(s, j, n);
    return k == n || s[k] < 0x80 ? k : matchDeepSeekWords(s, i, n);
  }
  //  ?[\p{P}\p{S}]+[\r\n]*
  size_t p = SIZE_MAX;
  if (punct0) {
    p = i + 1;
  } else if (b0 == ' ' && hasNext && isAsciiPunct(b1)) {
    p = i + 2;
  }
  if (p != SIZE_MAX) {
    const size_t k = skipAsciiPunctSym(s, p, n);
    return k == n || s[k] < 0x80 ? skipCrLf(s, k, n, false) : matchDeepSeekWords(s, i, n);
  }
  if (f0 & kS) return whitespaceTailAscii(s, i, n, true);
  return 0;  // no branch matches: a gap char
}

/// [一-龥぀-ゟ゠-ヿ]: U+4E00–U+9FA5, U+3040–U+309F, U+30A0–U+30FF.
inline bool isDeepSeekCjk(uint32_t cp) { return (cp >= kHanFirst && cp <= kHanLast) || (cp >= 0x3040 && cp <= 0x30FF); }

/// The code point at s[j] when it is one of those CJK chars, else 0: what charAt decodes
/// there (all of them take three bytes, led by 0xE3 to 0xE9), without the class lookup.
inline uint32_t deepSeekCjkAt(const uint8_t* s, size_t j, size_t e) {
  const uint32_t cp = threeByteAt(s, j, e, 0xE3, 0xE9);
  return isDeepSeekCjk(cp) ? cp : 0;
}

/// The first index >= i (or e) whose byte is an ASCII digit or not ASCII: the only
/// bytes at which DeepSeek-V3's first two Splits can cut. 16 bytes per step with SSE2.
inline size_t skipAsciiNonDigits(const uint8_t* s, size_t i, size_t e) {
#if defined(__SSE2__)
  const __m128i bias = _mm_set1_epi8(char(0x80 - '0'));  // '0'..'9' -> -128..-119
  const __m128i lim = _mm_set1_epi8(char(-128 + 10));
  for (; i + 16 <= e; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    // Signed compares: a byte >= 0x80 is negative; a digit, shifted by the bias, is below lim.
    const __m128i high = _mm_cmplt_epi8(v, _mm_setzero_si128());
    const __m128i digit = _mm_cmplt_epi8(_mm_add_epi8(v, bias), lim);
    const int mask = _mm_movemask_epi8(_mm_or_si128(high, digit));
    if (mask) return i + size_t(__builtin_ctz(unsigned(mask)));
  }
#endif
  while (i < e && s[i] < 0x80 && !(s[i] >= '0' && s[i] <= '9')) i++;
  return i;
}

/// Runs `match` over [b, e) with Isolated behavior: matches and the gaps between
/// them are both emitted, in order. `match(i)` returns the match end or 0.
template <class Match, class Emit>
inline void splitIsolated(const uint8_t* s, size_t b, size_t e, Match&& match, Emit&& emit) {
  size_t gap = b;
  size_t i = b;
  while (i < e) {
    size_t m = match(i);
    if (m) {
      if (gap < i) emit(gap, i);
      emit(i, m);
      i = m;
      gap = m;
    } else {
      i += charAt(s, i, e).len;
    }
  }
  if (gap < e) emit(gap, e);
}

/// DeepSeek-V3's three chained Splits over s[b, e), emitting each piece. Fast: the third
/// regex's ASCII path (matchDeepSeekWordsFast); false: matchDeepSeekWords alone (the
/// reference the core tests compare the fast path with).
template <bool Fast, class Emit>
inline void splitDeepSeekV3(const uint8_t* s, size_t b, size_t e, Emit&& emit) {
  // Splits 1 and 2 in one pass. They only cut the text: \p{N}{1,3} chunks and
  // [一-龥぀-ゟ゠-ヿ]+ runs become pieces, and so do the stretches between them.
  // No char is both N and in those CJK ranges, so one classification per char
  // gives the same pieces as running the two Isolated splits one after the other.
  // Split 3 then runs on every piece; on an N chunk it matches nothing (its
  // branches need L, M, P, S or whitespace), so the chunk stays whole.
  auto split3 = [&](size_t b2, size_t e2) {
    const uint8_t* p = s + b2;
    const size_t n = e2 - b2;
    splitIsolated(
        p, 0, n, [&](size_t i) { return Fast ? matchDeepSeekWordsFast(p, i, n) : matchDeepSeekWords(p, i, n); },
        [&](size_t x, size_t y) { emit(b2 + x, b2 + y); });
  };
  size_t i = b;
  size_t pieceStart = b;
  while (i < e) {
    const uint8_t b0 = s[i];
    if (b0 < 0x80 && !(b0 >= '0' && b0 <= '9')) {
      i = skipAsciiNonDigits(s, i + 1, e);
      continue;
    }
    Char c = charAt(s, i, e);
    if (c.flags & kN) {
      if (pieceStart < i) split3(pieceStart, i);
      size_t j = i + c.len;
      for (int k = 1; k < 3 && j < e; k++) {
        Char d = charAt(s, j, e);
        if (!(d.flags & kN)) break;
        j += d.len;
      }
      emit(i, j);
      i = pieceStart = j;
    } else if (isDeepSeekCjk(c.cp)) {
      if (pieceStart < i) split3(pieceStart, i);
      size_t j = i + c.len;
      if (Fast) {
        // One decode per char, and no split 3 when the run is all letters and marks (then
        // its [\p{L}\p{M}]+ takes the run whole): U+4E00-U+9FA5 are all Lo, kana are looked
        // up. Chinese text was half char decoding, each char decoded two or three times.
        bool lm = (c.flags & kLM) != 0;
        for (uint32_t cp; (cp = deepSeekCjkAt(s, j, e)) != 0; j += 3) {
          if (cp < kHanFirst) lm = lm && (unicodeFlags(cp) & kLM);
        }
        if (lm) {
          emit(i, j);
        } else {
          split3(i, j);
        }
      } else {
        while (j < e) {
          Char d = charAt(s, j, e);
          if (!isDeepSeekCjk(d.cp)) break;
          j += d.len;
        }
        split3(i, j);
      }
      i = pieceStart = j;
    } else {
      i += c.len;
    }
  }
  if (pieceStart < e) split3(pieceStart, e);
}

/// The first k' >= k (k >= 1) that is a DeepSeek-V3 piece start whatever precedes s[k' - 1],
/// or n: an ASCII punctuation or symbol char after an ASCII letter (the letter run ends
/// there and nothing takes both), an ASCII letter after \r or \n (newlines end their piece
/// there), an ASCII digit after an ASCII byte that is not one (a \p{N} run starts), or the
/// first char of a run of split 2's CJK chars (a char of three bytes: the one before is CJK
/// only if its three bytes are).
inline size_t deepSeekStartFrom(const uint8_t* s, size_t k, size_t n) {
  for (; k < n; k++) {
    const uint8_t a = s[k - 1], c = s[k];
    if (c >= 0x80) {
      if (c >= 0xE3 && c <= 0xE9 && deepSeekCjkAt(s, k, n) && (k < 3 || !deepSeekCjkAt(s, k - 3, n))) return k;
      continue;
    }
    if ((isAsciiAlpha(a) && isAsciiPunct(c)) || ((a == '\n' || a == '\r') && isAsciiAlpha(c)) ||
        (ascii::isDigit(c) && a < 0x80 && !ascii::isDigit(a)))
      return k;
  }
  return n;
}

}  // namespace pretok_detail
}  // namespace promptenc
