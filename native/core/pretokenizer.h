// Hand-written scanners, each exactly equivalent to one Oniguruma regex used by a
// Hugging Face `Split` pre-tokenizer (behavior Isolated, or Removed+invert which is
// the same for these regexes because they match every position: there are no gaps).
//
// Oniguruma semantics reproduced: at each start position the alternation is tried
// in order and the first branch that matches wins (not the longest); quantifiers
// are greedy and give characters back when the rest of the branch fails; when no
// branch matches at a position the search moves one character on, and the
// characters skipped become a "gap" piece (Isolated keeps gaps as pieces).
// Every piece boundary acts as start/end of string (each Split runs per piece).
//
// Cost: each scanner is O(length of the match) per match, so a whole split is
// linear in the input (whitespace runs are scanned once per match; the
// `\s+(?!\S)` give-back is O(1)).
#pragma once
#include <cstddef>
#include <cstdint>

#include "ascii_runs.h"
#include "piece_blocks.h"
#include "unicode.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace promptenc {

enum class PreTokenizerKind : uint32_t {
  /// ByteLevel(use_regex=true): 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  Gpt2 = 0,
  /// Llama 3 / GLM-4: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
  /// ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  Cl100k = 1,
  /// Qwen2 / Qwen3: the same with \p{N} instead of \p{N}{1,3}.
  Qwen2 = 2,
  /// GPT-4o / gpt-oss (o200k), see scanO200k.
  O200k = 3,
  /// DeepSeek-V3: three chained Splits, see splitDeepSeekV3.
  DeepSeekV3 = 4,
};

namespace pretok_detail {

constexpr uint16_t kL = uflag::L;
constexpr uint16_t kN = uflag::N;
constexpr uint16_t kS = uflag::SPACE;

inline bool isCrLf(uint32_t cp) { return cp == '\r' || cp == '\n'; }

/// Returns the end of the maximal run of chars whose flags intersect `mask`, from i.
/// Han chars are classed inline (hanAt): in Chinese text they are most of every letter run.
inline size_t runOf(const uint8_t* s, size_t i, size_t n, uint16_t mask) {
  const bool han = (kHanFlags & mask) != 0;
  while (i < n) {
    if (han) {
      if (const size_t k = hanAt(s, i, n)) {
        i += k;
        continue;
      }
    }
    Char c = charAt(s, i, n);
    if (!(c.flags & mask)) break;
    i += c.len;
  }
  return i;
}

/// Returns the end of the maximal run of chars whose flags do not intersect `mask`
/// from i.
inline size_t runNot(const uint8_t* s, size_t i, size_t n, uint16_t mask) {
  while (i < n) {
    Char c = charAt(s, i, n);
    if (c.flags & mask) break;
    i += c.len;
  }
  return i;
}

/// Skips \r and \n (and '/' when `slash`), as [\r\n]* or [\r\n/]*.
inline size_t skipCrLf(const uint8_t* s, size_t i, size_t n, bool slash) {
  while (i < n && (s[i] == '\r' || s[i] == '\n' || (slash && s[i] == '/'))) i++;
  return i;
}

inline bool isAsciiLetter(uint8_t b) { return uint8_t((b | 0x20) - 'a') < 26; }

/// Case-insensitive contraction at i, as Oniguruma's (?i:'s|'t|'re|'ve|'m|'ll|'d).
/// Returns the end, or 0 when there is none. Besides ASCII case, Oniguruma case
/// folding makes U+017F LATIN SMALL LETTER LONG S equal to 's' (checked against the oracle).
inline size_t contractionCI(const uint8_t* s, size_t i, size_t n) {
  if (i + 1 >= n || s[i] != '\'') return 0;
  uint8_t a = s[i + 1];
  if (a == 0xC5 && i + 2 < n && s[i + 2] == 0xBF) return i + 3;  // 'ſ
  a |= 0x20;
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
  if (i + 2 >= n) return 0;
  uint8_t b = s[i + 2] | 0x20;
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
  return 0;
}

/// Case-sensitive contraction ('s|'t|'re|'ve|'m|'ll|'d), for GPT-2.
inline size_t contractionCS(const uint8_t* s, size_t i, size_t n) {
  if (i + 1 >= n || s[i] != '\'') return 0;
  uint8_t a = s[i + 1];
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
  if (i + 2 >= n) return 0;
  uint8_t b = s[i + 2];
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
  return 0;
}

/// The shared tail of the cl100k-style regexes, at a whitespace char c0 at i:
///   \s*[\r\n]+      → up to and including the last \r or \n of the whitespace run
///   \s+(?!\S)       → the whole run at end of piece, else the run minus its last char (if ≥ 2 chars)
///   \s+             → the whole run
inline size_t whitespaceTail(const uint8_t* s, size_t i, size_t n, bool withNewlineBranch) {
  size_t j = i;
  size_t lastNl = SIZE_MAX;
  size_t lastStart = i;
  while (j < n) {
    Char c = charAt(s, j, n);
    if (!(c.flags & kS)) break;
    if (isCrLf(c.cp)) lastNl = j;
    lastStart = j;
    j += c.len;
  }
  if (withNewlineBranch && lastNl != SIZE_MAX) return lastNl + 1;
  if (j == n) return j;
  if (lastStart > i) return lastStart;  // run of ≥ 2 chars gives back its last one
  return j;
}

/// whitespaceTail at an ASCII whitespace char, its ASCII run found 16 bytes at a time. A
/// run that stops at a byte >= 0x80 (U+0085, U+00A0, U+3000 … are White_Space too) goes
/// to whitespaceTail; otherwise the run's last char starts at j - 1.
inline size_t whitespaceTailAscii(const uint8_t* s, size_t i, size_t n, bool withNewlineBranch) {
  size_t lastNl = SIZE_MAX;
  const size_t j = ascii::skipSpaces(s, i, n, &lastNl);
  if (j < n && s[j] >= 0x80) return whitespaceTail(s, i, n, withNewlineBranch);
  if (withNewlineBranch && lastNl != SIZE_MAX) return lastNl + 1;
  if (j == n || j - i < 2) return j;
  return j - 1;
}

/// runNot(s, i, n, S | L | N), its ASCII part found 16 bytes at a time; from a byte
/// >= 0x80 on, runNot itself goes on.
inline size_t runPunct(const uint8_t* s, size_t i, size_t n) {
  const size_t k = ascii::skipPunct(s, i, n);
  return k < n && s[k] >= 0x80 ? runNot(s, k, n, kS | kL | kN) : k;
}

/// One match of the Llama-3 (maxDigits 3) / Qwen2 (maxDigits 1) regex at i.
/// Every char starts some branch, so this always consumes at least one char.
PROMPTENC_NOINLINE inline size_t matchCl100k(const uint8_t* s, size_t i, size_t n, int maxDigits) {
  // (?i:'s|'t|'re|'ve|'m|'ll|'d)
  if (size_t e = contractionCI(s, i, n)) return e;
  Char c0 = charAt(s, i, n);
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (c0.flags & kL) return runOf(s, i + c0.len, n, kL);
  if (!(c0.flags & kN) && !isCrLf(c0.cp) && i + c0.len < n) {
    Char c1 = charAt(s, i + c0.len, n);
    if (c1.flags & kL) return runOf(s, i + c0.len + c1.len, n, kL);
  }
  // \p{N}{1,3}   (Qwen2: \p{N})
  if (c0.flags & kN) {
    size_t j = i + c0.len;
    for (int k = 1; k < maxDigits && j < n; k++) {
      Char c = charAt(s, j, n);
      if (!(c.flags & kN)) break;
      j += c.len;
    }
    return j;
  }
  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  if (c0.cp == ' ' && i + 1 < n) {
    Char c1 = charAt(s, i + 1, n);
    if (!(c1.flags & (kS | kL | kN))) return skipCrLf(s, runNot(s, i + 1, n, kS | kL | kN), n, false);
  }
  if (!(c0.flags & (kS | kL | kN))) return skipCrLf(s, runNot(s, i, n, kS | kL | kN), n, false);
  // \s*[\r\n]+ | \s+(?!\S) | \s+   (c0 is whitespace here)
  return whitespaceTail(s, i, n, true);
}

/// matchCl100k with an inline ASCII path (the same scheme as matchO200k): when s[i] is ASCII
/// and s[i + 1] is ASCII (or absent), the winning branch depends only on their classes:
///   s[i] = '\'': the contraction branch may win: general path.
///   [^\r\n\p{L}\p{N}]?\p{L}+: s[i] a letter (no prefix: letters are not in the prefix class), or
///     s[i] a prefix char (not a letter, digit, CR or LF) and s[i + 1] a letter; the letter run
///     then ends at an ASCII non-letter or the end (a non-ASCII byte could continue it: general).
///   \p{N}{1,3}: ASCII digits (a non-ASCII byte before the third could be another \p{N}).
///   " ?[^\s\p{L}\p{N}]+[\r\n]*" and the whitespace branches as in matchCl100k.
PROMPTENC_ALWAYS_INLINE size_t matchCl100kFast(const uint8_t* s, size_t i, size_t n, int maxDigits) {
  const uint8_t b0 = s[i];
  if (b0 >= 0x80 || b0 == '\'') return matchCl100k(s, i, n, maxDigits);
  const uint16_t f0 = kAscii.f[b0];
  const bool hasNext = i + 1 < n;
  const uint8_t b1 = hasNext ? s[i + 1] : 0;
  size_t j = SIZE_MAX;
  if (isAsciiLetter(b0)) {
    j = i;
  } else if (!(f0 & kN) && b0 != '\r' && b0 != '\n' && hasNext && isAsciiLetter(b1)) {
    j = i + 1;
  }
  if (j != SIZE_MAX) {
    const size_t k = ascii::skipLetters(s, j + 1, n);
    if (k == n || s[k] < 0x80) return k;
    return matchCl100k(s, i, n, maxDigits);
  }
  if (hasNext && b1 >= 0x80) return matchCl100k(s, i, n, maxDigits);
  if (f0 & kN) {
    size_t k = i + 1;
    while (k < n && k < i + size_t(maxDigits) && s[k] >= '0' && s[k] <= '9') k++;
    if (k == i + size_t(maxDigits) || k == n || s[k] < 0x80) return k;
    return matchCl100k(s, i, n, maxDigits);
  }
  if (!(f0 & (kS | kL | kN))) return skipCrLf(s, runPunct(s, i, n), n, false);
  if (b0 == ' ' && hasNext && !(kAscii.f[b1] & (kS | kL | kN))) return skipCrLf(s, runPunct(s, i + 1, n), n, false);
  return whitespaceTailAscii(s, i, n, true);
}

/// One match of the GPT-2 regex at i:
/// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
inline size_t matchGpt2(const uint8_t* s, size_t i, size_t n) {
  // 's|'t|'re|'ve|'m|'ll|'d
  if (size_t e = contractionCS(s, i, n)) return e;
  Char c0 = charAt(s, i, n);
  size_t j = i;
  Char c = c0;
  if (c0.cp == ' ' && i + 1 < n) {
    j = i + 1;
    c = charAt(s, j, n);
  }
  if (j != i) {
    //  ?\p{L}+ |  ?\p{N}+ |  ?[^\s\p{L}\p{N}]+   (with the space)
    if (c.flags & kL) return runOf(s, j, n, kL);
    if (c.flags & kN) return runOf(s, j, n, kN);
    if (!(c.flags & (kS | kL | kN))) return runNot(s, j, n, kS | kL | kN);
  }
  // the same three without the space
  if (c0.flags & kL) return runOf(s, i, n, kL);
  if (c0.flags & kN) return runOf(s, i, n, kN);
  if (!(c0.flags & (kS | kL | kN))) return runNot(s, i, n, kS | kL | kN);
  // \s+(?!\S) | \s+
  return whitespaceTail(s, i, n, false);
}

// o200k character classes.
constexpr uint16_t kUpper =
    uflag::LU | uflag::LT | uflag::LM | uflag::LO | uflag::M;              // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
constexpr uint16_t kLower = uflag::LL | uflag::LM | uflag::LO | uflag::M;  // [\p{Ll}\p{Lm}\p{Lo}\p{M}]

/// [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+ from s, with Oniguruma's
/// backtracking: the upper run is greedy; if no lower char follows it, it gives
/// chars back until one of them (an Lm/Lo/M, which is in both classes) can start
/// the lower run. Returns the end or 0 when the sub-pattern fails.
inline size_t upperStarLowerPlus(const uint8_t* s, size_t start, size_t n) {
  size_t u = start;
  size_t lastBoth = SIZE_MAX, lastBothEnd = 0;
  static_assert((kHanFlags & kUpper) && (kHanFlags & kLower), "Han chars (Lo) are in both classes");
  while (u < n) {
    if (const size_t k = hanAt(s, u, n)) {
      lastBoth = u;
      u += k;
      lastBothEnd = u;
      continue;
    }
    Char c = charAt(s, u, n);
    if (!(c.flags & kUpper)) break;
    if (c.flags & kLower) {
      lastBoth = u;
      lastBothEnd = u + c.len;
    }
    u += c.len;
  }
  if (u < n) {
    Char c = charAt(s, u, n);
    if (c.flags & kLower) return runOf(s, u + c.len, n, kLower);
  }
  if (lastBoth != SIZE_MAX) return lastBothEnd;
  return 0;
}

/// One match of the o200k regex at i (the general path; matchO200k below tries ASCII first):
///   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
///  |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
///  |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
PROMPTENC_NOINLINE inline size_t matchO200kGeneral(const uint8_t* s, size_t i, size_t n) {
  Char c0 = charAt(s, i, n);
  const bool prefixOk = !(c0.flags & (kL | kN)) && !isCrLf(c0.cp);
  auto withContraction = [&](size_t e) {
    size_t c = contractionCI(s, e, n);
    return c ? c : e;
  };
  // Branch 1, first with the optional prefix char, then without it.
  if (prefixOk && i + c0.len < n) {
    if (size_t e = upperStarLowerPlus(s, i + c0.len, n)) return withContraction(e);
  }
  if (size_t e = upperStarLowerPlus(s, i, n)) return withContraction(e);
  // Branch 2: [^\r\n\p{L}\p{N}]?[upper]+[lower]*(contraction)?
  if (prefixOk && i + c0.len < n) {
    Char c1 = charAt(s, i + c0.len, n);
    if (c1.flags & kUpper) {
      size_t e = runOf(s, i + c0.len + c1.len, n, kUpper);
      return withContraction(runOf(s, e, n, kLower));
    }
  }
  if (c0.flags & kUpper) {
    size_t e = runOf(s, i + c0.len, n, kUpper);
    return withContraction(runOf(s, e, n, kLower));
  }
  // \p{N}{1,3}
  if (c0.flags & kN) {
    size_t j = i + c0.len;
    for (int k = 1; k < 3 && j < n; k++) {
      Char c = charAt(s, j, n);
      if (!(c.flags & kN)) break;
      j += c.len;
    }
    return j;
  }
  //  ?[^\s\p{L}\p{N}]+[\r\n/]*
  if (c0.cp == ' ' && i + 1 < n) {
    Char c1 = charAt(s, i + 1, n);
    if (!(c1.flags & (kS | kL | kN))) return skipCrLf(s, runNot(s, i + 1, n, kS | kL | kN), n, true);
  }
  if (!(c0.flags & (kS | kL | kN))) return skipCrLf(s, runNot(s, i, n, kS | kL | kN), n, true);
  // \s*[\r\n]+ | \s+(?!\S) | \s+
  return whitespaceTail(s, i, n, true);
}

/// One match of the o200k regex at i. An ASCII char at i followed by ASCII (or the end)
/// is decided here, inline in the scan loop: which branch wins then depends only on the
/// classes of s[i] and s[i + 1], as spelled out per case. Anything that meets a non-ASCII
/// byte where the decision needs it goes to matchO200kGeneral (the out-of-line call with
/// its large frame was most of the scanner's cost per piece).
PROMPTENC_ALWAYS_INLINE size_t matchO200k(const uint8_t* s, size_t i, size_t n) {
  const uint8_t b0 = s[i];
  if (b0 >= 0x80) return matchO200kGeneral(s, i, n);
  const uint16_t f0 = kAscii.f[b0];
  const bool hasNext = i + 1 < n;
  const uint8_t b1 = hasNext ? s[i + 1] : 0;
  // Letter branches 1/2: an optional prefix char ([^\r\n\p{L}\p{N}]: not a digit, CR or LF),
  // then [A-Z]*[a-z]* ending before an ASCII non-letter or the end. The result is plain
  // there: branch 1 when a lowercase run exists, else branch 2; both take the optional
  // contraction.
  size_t j = SIZE_MAX;
  if (isAsciiLetter(b0)) {
    j = i;
  } else if (!(f0 & kN) && b0 != '\r' && b0 != '\n' && hasNext && isAsciiLetter(b1)) {
    j = i + 1;
  }
  if (j != SIZE_MAX) {
    const size_t k = ascii::skipUpperThenLower(s, j, n);
    if (k == n || s[k] < 0x80) {
      size_t c = contractionCI(s, k, n);
      return c ? c : k;
    }
    return matchO200kGeneral(s, i, n);
  }
  if (hasNext && b1 >= 0x80) return matchO200kGeneral(s, i, n);
  // From here s[i] is not a letter and s[i + 1] is an ASCII non-letter (or absent), so the
  // letter branches fail: with the prefix they need a letter at i + 1, without it at i.
  if (f0 & kN) {
    // \p{N}{1,3}: ASCII digits; a non-ASCII byte before the third could be another \p{N}.
    size_t k = i + 1;
    while (k < n && k < i + 3 && s[k] >= '0' && s[k] <= '9') k++;
    if (k == i + 3 || k == n || s[k] < 0x80) return k;
    return matchO200kGeneral(s, i, n);
  }
  //  ?[^\s\p{L}\p{N}]+[\r\n/]*  without the space (s[i] is punctuation, a symbol or a control char)
  if (!(f0 & (kS | kL | kN))) return skipCrLf(s, runPunct(s, i, n), n, true);
  //  ?[^\s\p{L}\p{N}]+[\r\n/]*  with the space
  if (b0 == ' ' && hasNext && !(kAscii.f[b1] & (kS | kL | kN))) return skipCrLf(s, runPunct(s, i + 1, n), n, true);
  // \s*[\r\n]+ | \s+(?!\S) | \s+   (s[i] is whitespace here)
  return whitespaceTailAscii(s, i, n, true);
}

/// Runs one single-regex scanner over s[b, e): each match starts where the last ended
/// (these regexes match every character), so the pieces tile the range.
template <class Emit, class Match>
PROMPTENC_ALWAYS_INLINE void scanPieces(const uint8_t* s, size_t b, size_t e, Emit& emit, Match match) {
  piecesTo(s, b, e, emit, 0, e - b, match);
}

}  // namespace pretok_detail
}  // namespace promptenc

// DeepSeek-V3 uses the helpers above.
#include "pretokenizer_deepseek.h"

namespace promptenc {

/// Splits s[b, e) into pre-tokens with the given family and calls emit(start, end)
/// for each, in order. Offsets are absolute in s.
template <class Emit>
inline void preTokenize(PreTokenizerKind kind, const uint8_t* s, size_t b, size_t e, Emit&& emit) {
  using namespace pretok_detail;
  // Each scanner sees only its piece: s + b is its start, e - b its length.
  switch (kind) {
    case PreTokenizerKind::Cl100k:
    case PreTokenizerKind::Qwen2: {
      const int maxDigits = kind == PreTokenizerKind::Cl100k ? 3 : 1;
      auto match = [maxDigits](const uint8_t* p, size_t i, size_t n) { return matchCl100kFast(p, i, n, maxDigits); };
      scanBlocks(
          s, b, e, emit, [maxDigits](const uint8_t* p, size_t* t) { return cl100kStarts(p, maxDigits, t); },
          [&](size_t i, size_t to) { return piecesTo(s, b, e, emit, i, to, match); });
      return;
    }
    case PreTokenizerKind::Gpt2:
      scanPieces(s, b, e, emit, matchGpt2);
      return;
    case PreTokenizerKind::O200k:
      scanBlocks(
          s, b, e, emit, [](const uint8_t* p, size_t* t) { return o200kStarts(p, t); },
          [&](size_t i, size_t to) { return piecesTo(s, b, e, emit, i, to, matchO200k); });
      return;
    case PreTokenizerKind::DeepSeekV3:
      // The splits run from a piece start to the next position that is a piece start
      // whatever comes before it (deepSeekStartFrom): on that stretch they give the pieces
      // the whole text gives there.
      scanBlocks(
          s, b, e, emit, [](const uint8_t* p, size_t* t) { return deepSeekStarts(p, t); },
          [&](size_t i, size_t to) {
            const size_t j = deepSeekStartFrom(s + b, to, e - b);
            splitDeepSeekV3<true>(s, b + i, b + j, emit);
            return j;
          });
      return;
  }
}

}  // namespace promptenc
