// Run scanners for the ASCII fast paths of the pre-tokenizers. Each returns exactly what the
// byte loop named in its comment returns, but tests 16 bytes per step with SSE2: a run's end
// is a bit scan of a compare mask instead of one compare-and-branch per byte, whose exit
// branch mispredicts at the end of nearly every word. The last < 16 bytes of a range use
// the byte loop (a load past n could cross into memory that is not the caller's).
#pragma once
#include <cstddef>
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace promptenc {
namespace ascii {

#if defined(__SSE2__)
inline __m128i load16(const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }

/// Bit k set when byte k of v is in [lo, lo + count): the shift moves the range to the
/// bottom of the signed bytes, so one signed compare tests both ends.
inline unsigned inRange(__m128i v, uint8_t lo, uint8_t count) {
  const __m128i x = _mm_add_epi8(v, _mm_set1_epi8(char(0x80 - lo)));
  return unsigned(_mm_movemask_epi8(_mm_cmplt_epi8(x, _mm_set1_epi8(char(-128 + count)))));
}
/// ASCII letters [A-Za-z]: setting bit 5 folds upper case onto lower case, and sends no
/// other byte into [a-z] ('@' -> '`', '[' -> '{'; bytes >= 0x80 stay >= 0x80).
inline unsigned letters(__m128i v) { return inRange(_mm_or_si128(v, _mm_set1_epi8(0x20)), 'a', 26); }
/// ASCII White_Space (Oniguruma's \s on ASCII): \t \n \v \f \r and space.
inline unsigned spaces(__m128i v) {
  return inRange(v, 9, 5) | unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(' '))));
}
inline unsigned crlf(__m128i v) {
  return unsigned(
      _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\n')))));
}
inline unsigned nonAscii(__m128i v) { return unsigned(_mm_movemask_epi8(v)); }
/// Index of the lowest set bit of a 16-bit mask, 16 when none.
inline size_t firstSet(unsigned m) { return size_t(__builtin_ctz(m | 0x10000u)); }
#endif

inline bool isLetter(uint8_t b) { return uint8_t((b | 0x20) - 'a') < 26; }
inline bool isSpace(uint8_t b) { return b == ' ' || uint8_t(b - 9) < 5; }
inline bool isDigit(uint8_t b) { return uint8_t(b - '0') < 10; }

/// while (k < n && s[k] >= lo && s[k] <= hi) k++;
inline size_t skipRange(const uint8_t* s, size_t k, size_t n, uint8_t lo, uint8_t hi) {
#if defined(__SSE2__)
  for (; k + 16 <= n; k += 16) {
    const unsigned out = ~inRange(load16(s + k), lo, uint8_t(hi - lo + 1)) & 0xFFFFu;
    if (out) return k + firstSet(out);
  }
#endif
  while (k < n && s[k] >= lo && s[k] <= hi) k++;
  return k;
}

/// skipRange(s, skipRange(s, k, n, 'A', 'Z'), n, 'a', 'z'), both runs from one load when
/// they end within 16 bytes (o200k's [A-Z]*[a-z]*: most words).
inline size_t skipUpperThenLower(const uint8_t* s, size_t k, size_t n) {
#if defined(__SSE2__)
  if (k + 16 <= n) {
    const __m128i v = load16(s + k);
    const size_t u = firstSet(~inRange(v, 'A', 26) & 0xFFFFu);
    if (u < 16) {
      const size_t l = firstSet(~inRange(v, 'a', 26) & (0xFFFFu << u) & 0xFFFFu);
      return l < 16 ? k + l : skipRange(s, k + 16, n, 'a', 'z');
    }
  }
#endif
  return skipRange(s, skipRange(s, k, n, 'A', 'Z'), n, 'a', 'z');
}

/// while (k < n && isLetter(s[k])) k++;
inline size_t skipLetters(const uint8_t* s, size_t k, size_t n) {
#if defined(__SSE2__)
  for (; k + 16 <= n; k += 16) {
    const unsigned out = ~letters(load16(s + k)) & 0xFFFFu;
    if (out) return k + firstSet(out);
  }
#endif
  while (k < n && isLetter(s[k])) k++;
  return k;
}

/// The end of the run of ASCII bytes that are not letters, digits or White_Space from k:
/// the ASCII part of runNot(s, k, n, S | L | N), which stops here or at a byte >= 0x80.
inline size_t skipPunct(const uint8_t* s, size_t k, size_t n) {
#if defined(__SSE2__)
  for (; k + 16 <= n; k += 16) {
    const __m128i v = load16(s + k);
    const unsigned out = letters(v) | inRange(v, '0', 10) | spaces(v) | nonAscii(v);
    if (out) return k + firstSet(out);
  }
#endif
  while (k < n && s[k] < 0x80 && !isLetter(s[k]) && !isDigit(s[k]) && !isSpace(s[k])) k++;
  return k;
}

/// while (k < n && s[k] < 0x80) k++;
inline size_t skipAscii(const uint8_t* s, size_t k, size_t n) {
#if defined(__SSE2__)
  for (; k + 16 <= n; k += 16) {
    if (const unsigned high = nonAscii(load16(s + k))) return k + firstSet(high);
  }
#endif
  while (k < n && s[k] < 0x80) k++;
  return k;
}

/// The end of the run of ASCII White_Space from k, and (when there is one in the run) the
/// index of its last \r or \n in *lastNl (left alone otherwise).
inline size_t skipSpaces(const uint8_t* s, size_t k, size_t n, size_t* lastNl) {
#if defined(__SSE2__)
  for (; k + 16 <= n; k += 16) {
    const __m128i v = load16(s + k);
    const size_t run = firstSet(~spaces(v) & 0xFFFFu);
    const unsigned nl = crlf(v) & ((1u << run) - 1);
    if (nl) *lastNl = k + size_t(31 - __builtin_clz(nl));
    if (run < 16) return k + run;
  }
#endif
  for (; k < n && isSpace(s[k]); k++)
    if (s[k] == '\r' || s[k] == '\n') *lastNl = k;
  return k;
}

}  // namespace ascii
}  // namespace promptenc
