// UTF-16 to UTF-8, as V8's String::WriteUtf8 with REPLACE_INVALID_UTF8 writes it (the flag
// napi_get_value_string_utf8 passes): a surrogate pair becomes one 4-byte sequence, and a
// surrogate that is not part of a pair becomes U+FFFD (EF BF BD), which is also what the
// oracle's napi layer does with a lone surrogate.
// Why not napi_get_value_string_utf8: V8 (Node 20) encodes a two-byte string one char at a
// time through a generic encoder, ~6 ns per UTF-16 unit; a warm encode of English prose
// spent 6.5 % of its time there and of Chinese text 9.6 %. N-API's UTF-16 copy is a memcpy
// (or, for a one-byte string, a widening loop), and ASCII here goes 16 units per step.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace promptenc {

/// Bytes utf16ToUtf8 may write for n UTF-16 units: at most 3 per unit (a pair's 4 bytes are 2
/// per unit), and one more, since each unit's bytes are stored as 4 bytes.
constexpr size_t utf8Capacity(size_t units) { return units * 3 + 1; }

namespace utf16_detail {
// One unit that is not ASCII-fast-pathed: any of the four cases, surrogates included. Returns
// the units read (2 for a pair). Writes up to 4 bytes at out; *len gets how many count.
inline size_t unitToUtf8(const uint16_t* in, size_t i, size_t n, uint8_t* out, size_t* len) {
  const uint32_t c = in[i];
  if (c < 0x80) {
    out[0] = uint8_t(c);
    *len = 1;
  } else if (c < 0x800) {
    out[0] = uint8_t(0xC0 | (c >> 6));
    out[1] = uint8_t(0x80 | (c & 0x3F));
    *len = 2;
  } else if ((c & 0xF800) != 0xD800) {
    out[0] = uint8_t(0xE0 | (c >> 12));
    out[1] = uint8_t(0x80 | ((c >> 6) & 0x3F));
    out[2] = uint8_t(0x80 | (c & 0x3F));
    *len = 3;
  } else if (c < 0xDC00 && i + 1 < n && (in[i + 1] & 0xFC00) == 0xDC00) {
    const uint32_t cp = 0x10000 + ((c - 0xD800) << 10) + (in[i + 1] - 0xDC00);
    out[0] = uint8_t(0xF0 | (cp >> 18));
    out[1] = uint8_t(0x80 | ((cp >> 12) & 0x3F));
    out[2] = uint8_t(0x80 | ((cp >> 6) & 0x3F));
    out[3] = uint8_t(0x80 | (cp & 0x3F));
    *len = 4;
    return 2;
  } else {
    out[0] = 0xEF;  // U+FFFD for a surrogate that is not half of a pair
    out[1] = 0xBF;
    out[2] = 0xBD;
    *len = 3;
  }
  return 1;
}

#if defined(__SSE2__)
inline __m128i select(__m128i mask, __m128i a, __m128i b) {
  return _mm_or_si128(_mm_and_si128(mask, a), _mm_andnot_si128(mask, b));
}
// Four units (zero-extended to 32-bit lanes, none a surrogate): each lane's UTF-8 bytes, low
// byte first, and their count.
inline void fourToUtf8(__m128i c, __m128i* words, __m128i* lens) {
  const __m128i two = _mm_cmpgt_epi32(c, _mm_set1_epi32(0x7F));
  const __m128i three = _mm_cmpgt_epi32(c, _mm_set1_epi32(0x7FF));
  const __m128i cont = _mm_set1_epi32(0x80), six = _mm_set1_epi32(0x3F);
  const __m128i last = _mm_or_si128(_mm_and_si128(c, six), cont);
  const __m128i mid = _mm_or_si128(_mm_and_si128(_mm_srli_epi32(c, 6), six), cont);
  const __m128i w2 = _mm_or_si128(_mm_or_si128(_mm_srli_epi32(c, 6), _mm_set1_epi32(0xC0)), _mm_slli_epi32(last, 8));
  const __m128i w3 = _mm_or_si128(_mm_or_si128(_mm_srli_epi32(c, 12), _mm_set1_epi32(0xE0)),
                                  _mm_or_si128(_mm_slli_epi32(mid, 8), _mm_slli_epi32(last, 16)));
  *words = select(three, w3, select(two, w2, c));
  *lens = _mm_sub_epi32(_mm_sub_epi32(_mm_set1_epi32(1), two), three);  // the masks are -1
}
#endif
}  // namespace utf16_detail

/// Writes the UTF-8 of in[0, n) to out (room for utf8Capacity(n) bytes) and returns its length.
inline size_t utf16ToUtf8(const uint16_t* in, size_t n, uint8_t* out) {
  using namespace utf16_detail;
  uint8_t* const start = out;
  size_t i = 0;
  while (i < n) {
#if defined(__SSE2__)
    // 16 ASCII units: their low bytes, packed.
    if (i + 16 <= n) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i + 8));
      const __m128i high = _mm_and_si128(_mm_or_si128(a, b), _mm_set1_epi16(int16_t(0xFF80)));
      if (_mm_movemask_epi8(_mm_cmpeq_epi16(high, _mm_setzero_si128())) == 0xFFFF) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_packus_epi16(a, b));
        out += 16;
        i += 16;
        continue;
      }
    }
    // 8 units of any length but no surrogate: each unit's bytes computed in lanes, then
    // stored 4 bytes at a time, advancing by the unit's length. A length branch per unit
    // mispredicted on most units of text that mixes ASCII and CJK (2.8 ns per unit; this
    // takes about a third of that).
    if (i + 8 <= n) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
      const __m128i sur =
          _mm_cmpeq_epi16(_mm_and_si128(v, _mm_set1_epi16(int16_t(0xF800))), _mm_set1_epi16(int16_t(0xD800)));
      if (_mm_movemask_epi8(sur) == 0) {
        alignas(16) uint32_t words[8], lens[8];
        __m128i w, l;
        fourToUtf8(_mm_unpacklo_epi16(v, _mm_setzero_si128()), &w, &l);
        _mm_store_si128(reinterpret_cast<__m128i*>(words), w);
        _mm_store_si128(reinterpret_cast<__m128i*>(lens), l);
        fourToUtf8(_mm_unpackhi_epi16(v, _mm_setzero_si128()), &w, &l);
        _mm_store_si128(reinterpret_cast<__m128i*>(words + 4), w);
        _mm_store_si128(reinterpret_cast<__m128i*>(lens + 4), l);
        for (size_t k = 0; k < 8; k++) {
          std::memcpy(out, &words[k], 4);  // x86: little-endian, the first byte lowest
          out += lens[k];
        }
        i += 8;
        continue;
      }
    }
    const size_t stop = i + 8 <= n ? i + 8 : n;
#else
    const size_t stop = n;
#endif
    // A pair that straddles `stop` is read whole (its low unit is at i + 1 < n).
    while (i < stop) {
      size_t len = 0;
      i += unitToUtf8(in, i, n, out, &len);
      out += len;
    }
  }
  return size_t(out - start);
}

}  // namespace promptenc
