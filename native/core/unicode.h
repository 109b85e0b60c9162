// UTF-8 stepping and Unicode class lookup for the pre-tokenizer scanners.
#pragma once
#include <cstddef>
#include <cstdint>

#include "unicode_tables.h"

namespace promptenc {

/// One decoded code point: its value and its encoded length in bytes.
struct CodePoint {
  uint32_t cp;
  uint32_t len;
};

/// Decodes the code point at s[i] (i < n). Input is expected to be valid UTF-8
/// (N-API produces it, with U+FFFD for lone surrogates); a malformed byte is
/// consumed alone and reported as U+FFFD so scanners always make progress.
inline CodePoint decodeUtf8(const uint8_t* s, size_t i, size_t n) {
  uint32_t b0 = s[i];
  if (b0 < 0x80) return {b0, 1};
  if (b0 >= 0xC2 && b0 < 0xE0 && i + 1 < n && (s[i + 1] & 0xC0) == 0x80)
    return {((b0 & 0x1F) << 6) | (s[i + 1] & 0x3F), 2};
  if (b0 >= 0xE0 && b0 < 0xF0 && i + 2 < n && (s[i + 1] & 0xC0) == 0x80 && (s[i + 2] & 0xC0) == 0x80)
    return {((b0 & 0x0F) << 12) | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3F), 3};
  if (b0 >= 0xF0 && b0 < 0xF5 && i + 3 < n && (s[i + 1] & 0xC0) == 0x80 && (s[i + 2] & 0xC0) == 0x80 &&
      (s[i + 3] & 0xC0) == 0x80)
    return {((b0 & 0x07) << 18) | ((s[i + 1] & 0x3Fu) << 12) | ((s[i + 2] & 0x3Fu) << 6) | (s[i + 3] & 0x3F), 4};
  return {0xFFFD, 1};
}

/// Flags for the ASCII range, precomputed so the common case is one load.
struct AsciiFlags {
  uint16_t f[128];
  constexpr AsciiFlags() : f() {
    for (uint32_t c = 0; c < 128; c++) f[c] = kFlagSets[kStage2[(uint32_t)kStage1[0] * 256u + c]];
  }
};
inline constexpr AsciiFlags kAscii{};

/// Flags for U+0080-U+07FF (Latin accents, Greek, Cyrillic, Hebrew, Arabic): one load
/// instead of the three of unicodeFlags. 3.75 KB.
struct TwoByteFlags {
  uint16_t f[0x800 - 0x80];
  constexpr TwoByteFlags() : f() {
    for (uint32_t c = 0x80; c < 0x800; c++) f[c - 0x80] = unicodeFlags(c);
  }
};
inline constexpr TwoByteFlags kTwoByte{};

/// A code point plus its class flags.
struct Char {
  uint32_t cp;
  uint32_t len;
  uint16_t flags;
};

#if defined(__GNUC__) || defined(__clang__)
#define PROMPTENC_ALWAYS_INLINE inline __attribute__((always_inline))
#define PROMPTENC_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define PROMPTENC_ALWAYS_INLINE __forceinline
#define PROMPTENC_NOINLINE __declspec(noinline)
#else
#define PROMPTENC_ALWAYS_INLINE inline
#define PROMPTENC_NOINLINE
#endif
// For a lambda (`[&](...) PROMPTENC_LAMBDA_INLINE { ... }`): the piece loop's callbacks are
// called once per piece from each scanner, and GCC kept them out of line (a call per piece).
#if defined(__GNUC__) || defined(__clang__)
#define PROMPTENC_LAMBDA_INLINE __attribute__((always_inline))
#else
#define PROMPTENC_LAMBDA_INLINE
#endif

/// Starts loading the cache line at p (a hint; no effect where unsupported).
inline void prefetchLine(const void* p) {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

/// U+4E00-U+9FA5 (CJK Unified Ideographs as of Unicode 1.1: nearly every char of Chinese
/// text) all have one set of flags, checked at compile time, so a scanner can class them
/// from the range alone, without charAt's out-of-line call and three-level table lookup.
constexpr uint32_t kHanFirst = 0x4E00, kHanLast = 0x9FA5;
constexpr uint16_t kHanFlags = unicodeFlags(kHanFirst);
constexpr bool hanFlagsUniform() {
  for (uint32_t cp = kHanFirst; cp <= kHanLast; cp++)
    if (unicodeFlags(cp) != kHanFlags) return false;
  return true;
}
static_assert(hanFlagsUniform(), "U+4E00-U+9FA5 share one set of flags");

/// The code point of the char at s[i] (i < n) when it takes three bytes led by a byte in
/// [lo, hi] (as decodeUtf8 decodes it), else 0: the scanners' inline step over CJK chars.
PROMPTENC_ALWAYS_INLINE uint32_t threeByteAt(const uint8_t* s, size_t i, size_t n, uint32_t lo, uint32_t hi) {
  const uint32_t b0 = s[i];
  if (b0 - lo > hi - lo || i + 2 >= n) return 0;
  const uint32_t b1 = s[i + 1], b2 = s[i + 2];
  if ((b1 & 0xC0) != 0x80 || (b2 & 0xC0) != 0x80) return 0;
  return ((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F);
}

/// The length (3) of the char at s[i] when it is in U+4E00-U+9FA5, else 0.
PROMPTENC_ALWAYS_INLINE size_t hanAt(const uint8_t* s, size_t i, size_t n) {
  const uint32_t cp = threeByteAt(s, i, n, 0xE4, 0xE9);
  return cp >= kHanFirst && cp <= kHanLast ? 3 : 0;
}

/// The non-ASCII half of charAt, kept out of line so the ASCII half inlines.
PROMPTENC_NOINLINE inline Char charAtNonAscii(const uint8_t* s, size_t i, size_t n) {
  CodePoint c = decodeUtf8(s, i, n);
  return {c.cp, c.len, unicodeFlags(c.cp)};
}

// GCC outlined the whole function (the table lookup made it too big), which cost a
// call per character in every scanner loop (≈ 20 % of llama3 encode time in perf).
PROMPTENC_ALWAYS_INLINE Char charAt(const uint8_t* s, size_t i, size_t n) {
  uint8_t b = s[i];
  if (b < 0x80) return {b, 1, kAscii.f[b]};
  // Two and three bytes (every char below U+10000), decoded as decodeUtf8 decodes them.
  // Not through threeByteAt: its range test and zero check cost 1.7 % more instructions on
  // a warm Llama 3 pass over the o200k rank table (callgrind).
  if (b >= 0xC2 && b < 0xF0 && i + 1 < n && (s[i + 1] & 0xC0) == 0x80) {
    if (b < 0xE0) {
      const uint32_t cp = ((b & 0x1Fu) << 6) | (s[i + 1] & 0x3Fu);
      return {cp, 2, kTwoByte.f[cp - 0x80]};
    }
    if (i + 2 < n && (s[i + 2] & 0xC0) == 0x80) {
      const uint32_t cp = ((b & 0x0Fu) << 12) | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3Fu);
      return {cp, 3, unicodeFlags(cp)};
    }
  }
  return charAtNonAscii(s, i, n);
}

/// Rust `char::is_whitespace` (White_Space), used by lstrip/rstrip.
inline bool isRustWhitespace(uint32_t cp) { return (unicodeFlags(cp) & uflag::SPACE) != 0; }
/// Rust regex `\w`, used by single_word.
inline bool isRustWordChar(uint32_t cp) { return (unicodeFlags(cp) & uflag::WORD) != 0; }

}  // namespace promptenc
