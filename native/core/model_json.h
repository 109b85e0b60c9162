// Reads model.vocab and model.merges straight from the bytes of tokenizer.json, so a
// 128 k-token vocabulary never becomes a JS object: JSON.parse of the whole file plus
// Object.keys of the vocab cost 250-350 ms for deepseek-v3 here, this scan ~15 ms.
//
// Strict by design. Anything it does not fully understand makes it decline (returns
// false with a reason), and the caller takes the JSON.parse path, which accepts or
// reports exactly what it always did: invalid JSON or UTF-8 inside the two values, an
// id that is not a plain integer (-1, 1.0, 1e3, > 2^31 - 1), a merge that is not a
// string with a space or a pair of strings, a second "model" / "vocab" / "merges" key,
// a "model" that is not an object. Outside the two values it only finds value
// boundaries (strings, brackets); the caller JSON.parses that rest, which validates it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vocab_builder.h"

namespace promptenc {

/// Bytes that are never zero-filled: the scanner allocates the value's size in the file
/// (an upper bound) and only the pages it writes become resident.
struct ScanBuffer {
  std::unique_ptr<uint8_t[]> data;
  size_t size = 0;
};

struct ModelJson {
  // Byte ranges [begin, end) of the two values inside the file.
  size_t vocabBegin = 0, vocabEnd = 0, mergesBegin = 0, mergesEnd = 0;
  // Keys and merge strings unescaped to UTF-8 exactly as JSON.parse + Buffer.from would
  // give them (a lone surrogate escape becomes U+FFFD), in file order.
  ScanBuffer keyBytes;
  std::vector<uint32_t> keySpans;         // two per key
  std::vector<uint32_t> ids;              // one per key
  std::vector<uint32_t> keyUtf16Lengths;  // one per key: the JS string length
  ScanBuffer mergeBytes;
  std::vector<uint32_t> mergeSpans;  // four per merge, as ModelStrings::mergeSpans

  /// The input of buildModel; duplicates are rejected because file order is not JS key order.
  ModelStrings strings() const;
};

/// For each string (UTF-8), the id of the vocab key equal to it, or -1. One pass over the keys
/// with a hash lookup for each key of a wanted length: ~3 ms for the 128–200 k keys of the
/// bundled models (of a ~70 ms load). Meaningful when the keys are unique (buildModel with
/// rejectDuplicates accepted them); with duplicates the first key wins here.
std::vector<int64_t> vocabIdsOf(const ModelJson& model, const std::vector<std::string>& strings);

/// false (and `why`) when the file is not in the subset described above.
bool scanModelJson(const uint8_t* p, size_t n, ModelJson& out, std::string& why);

}  // namespace promptenc
