// The Llama-3 / Qwen2 pre-tokenizer regex (PreTokenizerKind::Cl100k, Qwen2) over 64 ASCII
// bytes at a time: every piece start in the block is computed at once from byte-class bit
// masks, and the pieces are emitted by walking the set bits. The per-piece scanner
// (matchCl100kFast) branches on each piece's kind, which mispredicts on most pieces of real
// text; here a block costs a fixed number of mask operations whatever its pieces are.
//
// Why the masks give the regex's pieces. The regex is scanned left to right from a known
// piece start; a later position p is a start exactly when the match that covers p-1 ends at p.
// With c(p) the class of byte p (L letter, D digit, SP ' ', ST \t \v \f, NL \r \n, A ', P any
// other ASCII; PA = P or A, S = SP or ST, W = S or NL), the branches
//   (?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N}{1,3} | ?[^\s\p{L}\p{N}]+[\r\n]*
//   | \s*[\r\n]+ | \s+(?!\S) | \s+
// give, for p inside the block (b = c(p - 1)):
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
// A contraction is an A that is a start, followed by s t m d, or re ve ll (any case).
// The block's first position is the known start it is scanned from. Positions whose rule
// looks at a byte >= 0x80 or past the block (the byte after a space; the end of a run of
// spaces after a newline) are not trusted: pieces are emitted only up to the last trusted
// start, and the next block begins there. A block that emits nothing leaves one piece to
// matchCl100kFast. core_test compares this with matchCl100kFast on random text built to hit
// every rule at every offset; the Node tests compare both with the Rust oracle.
#pragma once
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
  uint64_t letter, digit, space, nl, sp, apos, high;
};

inline uint64_t byteMask(__m128i v, char c) {
  return uint64_t(unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c)))));
}

/// Bit k of each mask: byte k of s[0, 64) is in the class.
inline BlockMasks classify64(const uint8_t* s) {
  BlockMasks m{0, 0, 0, 0, 0, 0, 0};
  for (int k = 0; k < 4; k++) {
    const __m128i v = ascii::load16(s + 16 * k);
    const int sh = 16 * k;
    m.letter |= uint64_t(ascii::letters(v)) << sh;
    m.digit |= uint64_t(ascii::inRange(v, '0', 10)) << sh;
    m.space |= uint64_t(ascii::spaces(v)) << sh;
    m.nl |= uint64_t(ascii::crlf(v)) << sh;
    m.sp |= byteMask(v, ' ') << sh;
    m.apos |= byteMask(v, '\'') << sh;
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

/// The piece starts in s[0, 64) (bit 0, the known start, always set) and the number of
/// leading positions whose bits are trusted (see the file comment).
inline uint64_t cl100kStarts(const uint8_t* s, int maxDigits, size_t* trusted) {
  const BlockMasks m = classify64(s);
  const uint64_t L = m.letter, D = m.digit, NL = m.nl, S = m.space & ~m.nl, SP = m.sp;
  const uint64_t ST = S & ~SP, W = m.space, A = m.apos;
  const uint64_t PA = ~(L | D | W | m.high);
  const uint64_t pL = L << 1, pD = D << 1, pNL = NL << 1, pS = S << 1, pPA = PA << 1;

  const uint64_t startPA = PA & (pL | pD | pNL | (ST << 1) | 1);
  uint64_t contractionEnd = 0;
  if (const uint64_t a = A & startPA) {
    const uint64_t two = foldedMask(s, 's', 't') | foldedMask(s, 'm', 'd');
    const uint64_t rv = foldedMask(s, 'r', 'v'), e = foldedMask(s, 'e', 'e'), l = foldedMask(s, 'l', 'l');
    contractionEnd = ((a << 2) & (two << 1)) | ((a << 3) & (((rv << 2) & (e << 1)) | ((l << 2) & (l << 1))));
  }
  const uint64_t startL = L & (pD | pNL | (pPA & ~(startPA << 1)) | (pL & contractionEnd) | 1);

  uint64_t startD = D & (~pD | 1);
  if (maxDigits == 1) {
    startD = D;
  } else {
    for (uint64_t t = startD; t;) {
      t = (t << 3) & D & pD & (D << 2);
      startD |= t;
    }
  }
  const uint64_t startNL = NL & (pL | pD | 1);

  // Runs of spaces right after a newline that is not a PA run's tail: a start iff the byte
  // after the run is not a newline. A run that reaches the block's end or a byte >= 0x80 is
  // undecided, and so is everything from its start on.
  const uint64_t tail = ((NL + ((PA << 1) & NL)) ^ NL) & NL;
  const uint64_t afterNl = S & pNL & ~(tail << 1);
  const uint64_t stop = ~S;  // bit q: a run of spaces that reaches q ends there
  // Every rule reads at most the byte after p, so positions before hard - 1 are decided when
  // no byte >= 0x80 comes before hard.
  const size_t hard = m.high ? size_t(__builtin_ctzll(m.high)) : 64;
  size_t limit = hard ? hard - 1 : 0;
  uint64_t goodAfterNl = 0;
  for (uint64_t r = afterNl; r; r &= r - 1) {
    const unsigned p = unsigned(__builtin_ctzll(r));
    const uint64_t ends = stop >> p;  // its bit 0 is p itself, a space: never set
    const size_t q = ends ? size_t(p) + size_t(__builtin_ctzll(ends)) : 64;
    if (q >= hard) {  // the run may go on past the block or into a non-ASCII space
      if (p < limit) limit = p;
      break;
    }
    if (!((NL >> q) & 1)) goodAfterNl |= uint64_t(1) << p;
  }
  const uint64_t startS = S & (pL | pD | pPA | (pS & ~(W >> 1)) | (pNL & (tail << 1)) | goodAfterNl | 1);
  *trusted = limit;  // bits [0, limit) are final
  return startPA | startL | startD | startNL | startS | 1;
}
#endif

/// scanPieces(s, b, e, emit, scalar) for the Cl100k / Qwen2 scanner `scalar`
/// (matchCl100kFast), with the pieces of ASCII text found 64 bytes at a time. After a block
/// that would get or got less than 16 bytes on (a byte >= 0x80 near its start), the rest of
/// that block goes piece by piece: text that is mostly non-ASCII pays one 16-byte test per
/// 64 bytes, and at most one classification.
template <class Emit, class Scalar>
PROMPTENC_ALWAYS_INLINE void scanCl100kBlocks(const uint8_t* s, size_t b, size_t e, Emit& emit, int maxDigits,
                                              Scalar scalar) {
  const uint8_t* p = s + b;
  const size_t n = e - b;
  size_t i = 0;
  auto one = [&]() PROMPTENC_LAMBDA_INLINE {
    const size_t m = scalar(p, i, n);
    emit(b + i, b + m);
    i = m;
  };
#if defined(__SSE2__)
  while (i + 64 <= n) {
    const size_t blockEnd = i + 64;
    if (ascii::nonAscii(ascii::load16(p + i))) {  // a byte >= 0x80 in the first 16: the block would get little
      while (i < blockEnd) one();
      continue;
    }
    size_t trusted = 0;
    // trusted <= 63, and bit 0 is the block's own start
    uint64_t starts = cl100kStarts(p + i, maxDigits, &trusted) & ((uint64_t(1) << trusted) - 1) & ~uint64_t(1);
    size_t at = i;
    for (; starts; starts &= starts - 1) {
      const size_t k = i + size_t(__builtin_ctzll(starts));
      emit(b + at, b + k);
      at = k;
    }
    if (at - i >= 16) {
      i = at;
      continue;
    }
    i = at;
    while (i < blockEnd) one();
  }
#endif
  while (i < n) one();
}

}  // namespace pretok_detail
}  // namespace promptenc
