// The Llama-3 / Qwen2 and o200k pre-tokenizer regexes over 64 ASCII bytes at a time: every
// piece start in the block is computed at once from byte-class bit masks, and the pieces
// are emitted by walking the set bits. The per-piece scanners (matchCl100kFast, matchO200k)
// branch on each piece's kind, which mispredicts on most pieces of real text; here a block
// costs a fixed number of mask operations whatever its pieces are.
//
// Why the masks give the regex's pieces. A regex is scanned left to right from a known piece
// start; a later position p is a start exactly when the match that covers p - 1 ends at p.
// With c(p) the class of byte p (L letter, U upper case, D digit, SP ' ', ST \t \v \f,
// NL \r \n, A ', P any other ASCII; PA = P or A, S = SP or ST, W = S or NL) and b = c(p - 1):
//
// Llama 3 / Qwen2:
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*
//   |\s*[\r\n]+|\s+(?!\S)|\s+
//   c(p) in PA: a start iff b is L, D, NL or ST (after SP the space takes it: " ?[^\s..]+";
//     after PA the run goes on).
//   c(p) in L: after L only where a contraction ends; after D or NL always; after S never (the
//     whitespace before a letter is always a start, and takes it as its prefix); after PA iff
//     p - 1 was not a start (a start there is a prefix or a contraction; otherwise p - 1 ends a
//     PA run).
//   c(p) in D: at the digit run's start and every maxDigits digits after it.
//   c(p) in NL: iff b is L or D (after PA the NLs are the run's tail; after W, inside \s*[\r\n]+).
//   c(p) in S: after L, D or PA always; after S iff c(p + 1) is not W (\s+(?!\S) gives back the
//     run's last space); after NL iff those NLs were a PA run's tail, or no NL follows in this
//     run of spaces (the start of what \s*[\r\n]+ leaves).
//   A contraction is an A that is a start, followed by s t m d, or re ve ll (any case).
//
// o200k: [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|..)?
//   |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|..)?
//   |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   In ASCII a word is [A-Z]*[a-z]* (one branch or the other), so inside a run of letters a
//   word starts where a lower-case letter is followed by an upper-case one. A word takes a
//   contraction that follows it: an A right after a letter that is not itself a contraction's
//   (decided in order, as the regex does), followed by s t m d or re ve ll. Its letters are
//   inside the word, and where it ends a piece starts. The PA run's tail is [\r\n/]*: from the
//   run's first NL on, '/' is tail too, and a PA after a tail '/' is a start. Otherwise the
//   rules are Llama 3's (there is no contraction branch of its own: an A before letters is
//   their prefix, as any PA).
//
// Non-ASCII case folding onto a contraction letter (U+017F LONG S folds to s in "'ſ") needs
// no rule: that byte is >= 0x80, so the A before it is past the trusted limit.
//
// The block's first position is the known start it is scanned from. Positions whose rule
// looks at a byte >= 0x80 or past the block (the bytes after a space or an A; the end of a
// run of spaces after a newline) are not trusted: pieces are emitted only up to the last
// trusted start, and the next block begins there. core_test compares both with the per-piece
// scanners on random text built to hit every rule at every offset; the Node tests compare
// them with the Rust oracle.
#pragma once
#include <cassert>
#include <cstddef>
#include <cstdint>

#include "ascii_runs.h"
#include "unicode.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace promptenc {
namespace pretok_detail {

#if defined(__SSE2__)
struct BlockMasks {
  uint64_t letter, upper, digit, space, nl, sp, apos, slash, high;
};

inline uint64_t byteMask(__m128i v, char c) {
  return uint64_t(unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c)))));
}

/// Bit k of each mask: byte k of s[0, 64) is in the class.
inline BlockMasks classify64(const uint8_t* s) {
  BlockMasks m{0, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int k = 0; k < 4; k++) {
    const __m128i v = ascii::load16(s + 16 * k);
    const int sh = 16 * k;
    m.letter |= uint64_t(ascii::letters(v)) << sh;
    m.upper |= uint64_t(ascii::inRange(v, 'A', 26)) << sh;
    m.digit |= uint64_t(ascii::inRange(v, '0', 10)) << sh;
    m.space |= uint64_t(ascii::spaces(v)) << sh;
    m.nl |= uint64_t(ascii::crlf(v)) << sh;
    m.sp |= byteMask(v, ' ') << sh;
    m.apos |= byteMask(v, '\'') << sh;
    m.slash |= byteMask(v, '/') << sh;
    m.high |= uint64_t(ascii::nonAscii(v)) << sh;
  }
  return m;
}

/// Bit k: byte k of s[0, 64), with bit 5 set (ASCII case folded), is one of a or b.
inline uint64_t foldedMask(const uint8_t* s, char a, char b) {
  uint64_t m = 0;
  for (int k = 0; k < 4; k++) {
    const __m128i v = _mm_or_si128(ascii::load16(s + 16 * k), _mm_set1_epi8(0x20));
    m |= (byteMask(v, a) | byteMask(v, b)) << (16 * k);
  }
  return m;
}

/// The contraction letters after an A: bit k of two is s t m d, of three the start of re ve
/// ll (byte k and k + 1).
struct ContractionMasks {
  uint64_t two, three;
};
inline ContractionMasks contractionLetters(const uint8_t* s) {
  const uint64_t rv = foldedMask(s, 'r', 'v'), e = foldedMask(s, 'e', 'e'), l = foldedMask(s, 'l', 'l');
  return {foldedMask(s, 's', 't') | foldedMask(s, 'm', 'd'), (rv & (e >> 1)) | (l & (l >> 1))};
}

/// The digit starts: each run's first digit (and bit 0, the known start) and every maxDigits
/// digits after it.
inline uint64_t digitStarts(uint64_t D, int maxDigits) {
  assert(maxDigits == 1 || maxDigits == 3);  // the regexes' \p{N} and \p{N}{1,3}
  const uint64_t pD = D << 1;
  if (maxDigits == 1) return D;
  uint64_t starts = D & (~pD | 1);
  for (uint64_t t = starts; t;) {
    t = (t << 3) & D & pD & (D << 2);
    starts |= t;
  }
  return starts;
}

/// The starts among spaces right after a newline that is not a PA run's tail: a start iff
/// the byte after the run of spaces is not a newline. A run that reaches `hard` (the first
/// byte >= 0x80, or 64) is undecided, and so is everything from its start on: *limit drops
/// to its start.
inline uint64_t spacesAfterNewline(uint64_t afterNl, uint64_t S, uint64_t NL, size_t hard, size_t* limit) {
  uint64_t good = 0;
  for (uint64_t r = afterNl; r; r &= r - 1) {
    const unsigned p = unsigned(__builtin_ctzll(r));
    const uint64_t ends = ~S >> p;  // its bit 0 is p itself, a space: never set
    const size_t q = ends ? size_t(p) + size_t(__builtin_ctzll(ends)) : 64;
    if (q >= hard) {  // the run may go on past the block or into a non-ASCII space
      if (p < *limit) *limit = p;
      break;
    }
    if (!((NL >> q) & 1)) good |= uint64_t(1) << p;
  }
  return good;
}

inline size_t firstHigh(const BlockMasks& m) { return m.high ? size_t(__builtin_ctzll(m.high)) : 64; }

/// The Llama 3 / Qwen2 piece starts in s[0, 64) (bit 0, the known start, always set), and in
/// *trusted the number of leading positions whose bits are final.
inline uint64_t cl100kStarts(const uint8_t* s, int maxDigits, size_t* trusted) {
  const BlockMasks m = classify64(s);
  const uint64_t L = m.letter, D = m.digit, NL = m.nl, S = m.space & ~m.nl, W = m.space;
  const uint64_t ST = S & ~m.sp, PA = ~(L | D | W | m.high);
  const uint64_t pL = L << 1, pD = D << 1, pNL = NL << 1, pS = S << 1, pPA = PA << 1;

  const uint64_t startPA = PA & (pL | pD | pNL | (ST << 1) | 1);
  uint64_t contractionEnd = 0;
  if (const uint64_t a = m.apos & startPA) {
    const ContractionMasks c = contractionLetters(s);
    contractionEnd = ((a << 2) & (c.two << 1)) | ((a << 3) & (c.three << 2));
  }
  const uint64_t startL = L & (pD | pNL | (pPA & ~(startPA << 1)) | (pL & contractionEnd) | 1);
  const uint64_t startNL = NL & (pL | pD | 1);
  const uint64_t tail = ((NL + ((PA << 1) & NL)) ^ NL) & NL;
  // Every rule reads at most the byte after p: positions before hard - 1 are decided.
  const size_t hard = firstHigh(m);
  size_t limit = hard ? hard - 1 : 0;
  const uint64_t good = spacesAfterNewline(S & pNL & ~(tail << 1), S, NL, hard, &limit);
  const uint64_t startS = S & (pL | pD | pPA | (pS & ~(W >> 1)) | (pNL & (tail << 1)) | good | 1);
  *trusted = limit;
  return startPA | startL | digitStarts(D, maxDigits) | startNL | startS | 1;
}

/// The o200k piece starts in s[0, 64), as cl100kStarts.
inline uint64_t o200kStarts(const uint8_t* s, size_t* trusted) {
  const BlockMasks m = classify64(s);
  const uint64_t L = m.letter, U = m.upper, Lo = L & ~U, D = m.digit, NL = m.nl, S = m.space & ~m.nl;
  const uint64_t W = m.space, ST = S & ~m.sp, SL = m.slash, PA = ~(L | D | W | m.high);
  const uint64_t pL = L << 1, pD = D << 1, pNL = NL << 1, pS = S << 1, pPA = PA << 1;
  // Each A's contraction is decided in order: an A after a contraction's last letter does not
  // take one (that letter belongs to no word).
  uint64_t attached = 0, inside = 0, ends = 0;
  if (const uint64_t cand = m.apos & pL) {
    const ContractionMasks c = contractionLetters(s);
    for (uint64_t r = cand; r; r &= r - 1) {
      const unsigned p = unsigned(__builtin_ctzll(r));
      if (p >= 62 || ((inside >> (p - 1)) & 1)) continue;  // p >= 62: past the trusted limit
      const unsigned len = ((c.two >> (p + 1)) & 1) ? 2 : ((c.three >> (p + 1)) & 1) ? 3 : 0;
      if (!len) continue;
      attached |= uint64_t(1) << p;
      inside |= ((uint64_t(1) << (len - 1)) - 1) << (p + 1);
      if (p + len < 64) ends |= uint64_t(1) << (p + len);
    }
  }
  // [\r\n/]* after a PA run: from its first NL to the end of the NL-or-'/' run. Adding the
  // seeds carries each through its run; a second seed in a run (an NL after a tail '/') is
  // cleared by the carry and put back.
  const uint64_t C = NL | SL, seeds = NL & pPA;
  const uint64_t fill = ((C + seeds) ^ C) & C;
  const uint64_t tail = fill | (seeds & (fill << 1));
  const uint64_t afterTail = tail << 1;

  const uint64_t startPA =
      (PA & (pL | pD | pNL | (ST << 1) | 1) & ~attached & ~(SL & afterTail)) | (PA & ~SL & afterTail & pPA);
  const uint64_t startL =
      L & (pD | pNL | (pPA & ~(startPA << 1) & ~(attached << 1)) | (pL & ends) | (U & (Lo << 1) & ~inside) | 1);
  const uint64_t startNL = NL & (pL | pD | 1);
  // The A rule reads two bytes after p: positions before hard - 2 are decided.
  const size_t hard = firstHigh(m);
  size_t limit = hard >= 2 ? hard - 2 : 0;
  const uint64_t good = spacesAfterNewline(S & pNL & ~afterTail, S, NL, hard, &limit);
  const uint64_t startS = S & (pL | pD | pPA | (pS & ~(W >> 1)) | (pNL & afterTail) | good | 1);
  *trusted = limit;
  return startPA | startL | digitStarts(D, 3) | startNL | startS | 1;
}

/// DeepSeek-V3's piece starts in s[0, 64), as cl100kStarts. Its first two Splits make every
/// \p{N}{1,3} chunk a piece and the text between them a range of its own (the third regex
/// sees a digit as the end of the text); the third regex's rules are Llama 3's with PS (the
/// 32 ASCII punctuation and symbol chars) for PA, except: PS then [A-Za-z]+ is one piece
/// when the PS is a start (a PS run's later chars are inside it); a control char C (no
/// branch matches it) is a prefix of the letters after it, else part of a gap that ends where
/// a match starts; and a run of spaces that ends at a digit is whole (\s+(?!\S) at the end).
inline uint64_t deepSeekStarts(const uint8_t* s, size_t* trusted) {
  const BlockMasks m = classify64(s);
  const uint64_t L = m.letter, D = m.digit, NL = m.nl, S = m.space & ~m.nl, W = m.space, ST = S & ~m.sp;
  uint64_t PS = 0;
  for (int k = 0; k < 4; k++) PS |= uint64_t(ascii::inRange(ascii::load16(s + 16 * k), 0x21, 94)) << (16 * k);
  PS &= ~(L | D);
  const uint64_t C = ~(L | D | W | PS | m.high);
  const uint64_t pL = L << 1, pD = D << 1, pNL = NL << 1, pS = S << 1, pPS = PS << 1, pC = C << 1;
  const uint64_t startPS = PS & (pL | pD | pNL | (ST << 1) | pC | 1);
  const uint64_t startL = L & (pD | pNL | (pPS & ~(startPS << 1)) | 1);
  const uint64_t startNL = NL & (pL | pD | pC | 1);
  const uint64_t startC = C & (~pC | (L >> 1) | 1);
  const uint64_t tail = ((NL + ((PS << 1) & NL)) ^ NL) & NL;
  const size_t hard = firstHigh(m);
  size_t limit = hard ? hard - 1 : 0;
  const uint64_t good = spacesAfterNewline(S & pNL & ~(tail << 1), S, NL, hard, &limit);
  const uint64_t startS = S & (pL | pD | pPS | pC | (pS & ~(W >> 1) & ~(D >> 1)) | (pNL & (tail << 1)) | good | 1);
  *trusted = limit;
  return startPS | startL | digitStarts(D, 3) | startNL | startC | startS | 1;
}
#endif

/// The pieces of s[b, e) with those of ASCII text found 64 bytes at a time by
/// starts(block, &trusted) (cl100kStarts, o200kStarts, deepSeekStarts). rest(i, to) emits the
/// pieces from i (a piece start, relative to b) on with the same regex's own scanner, at
/// least up to to, and returns the piece start where it stopped. A block that got less than
/// 16 bytes on goes to rest up to its end, and a block with a byte >= 0x80 in its first 16 is
/// not classified: rest takes the next 256 bytes (text that is mostly non-ASCII pays one
/// 16-byte test per 256 bytes, and DeepSeek-V3's splits start over less often).
template <class Emit, class Starts, class Rest>
PROMPTENC_ALWAYS_INLINE void scanBlocks(const uint8_t* s, size_t b, size_t e, Emit& emit, Starts starts, Rest rest) {
  const uint8_t* p = s + b;
  const size_t n = e - b;
  size_t i = 0;
#if defined(__SSE2__)
  while (i + 64 <= n) {
    const size_t blockEnd = i + 64;
    if (ascii::nonAscii(ascii::load16(p + i))) {
      i = rest(i, i + 256 < n ? i + 256 : n);
      continue;
    }
    size_t trusted = 0;
    // trusted <= 63, and bit 0 is the block's own start
    uint64_t at64 = starts(p + i, &trusted) & ((uint64_t(1) << trusted) - 1) & ~uint64_t(1);
    size_t at = i;
    for (; at64; at64 &= at64 - 1) {
      const size_t k = i + size_t(__builtin_ctzll(at64));
      emit(b + at, b + k);
      at = k;
    }
    const bool far = at - i >= 16;
    i = at;
    if (!far) i = rest(i, blockEnd);
  }
#else
  (void)p;
  (void)starts;
#endif
  if (i < n) rest(i, n);
}

/// A rest for scanBlocks from a per-piece scanner: match(p, i, n) is the end of the piece at i.
template <class Emit, class Match>
PROMPTENC_ALWAYS_INLINE size_t piecesTo(const uint8_t* s, size_t b, size_t e, Emit& emit, size_t i, size_t to,
                                        Match match) {
  const uint8_t* p = s + b;
  const size_t n = e - b;
  while (i < to) {
    const size_t m = match(p, i, n);
    emit(b + i, b + m);
    i = m;
  }
  return i;
}

}  // namespace pretok_detail
}  // namespace promptenc
