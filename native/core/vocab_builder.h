// Builds the model part of an EncoderSpec (raw-byte vocab by id, merge id triples)
// straight from the token strings of tokenizer.json, so the JS side only has to hand
// over a few flat buffers (or the file bytes, see model_json.h) instead of converting
// 128 k tokens and merges itself.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "encoder.h"

namespace promptenc {

constexpr uint32_t kSplitOnSpace = 0xFFFFFFFFu;

/// The largest token id the core builds (src/tokenizer-checks.ts MAX_TOKEN_ID, checked there
/// first): tables are indexed by id, so one huge id would otherwise allocate gigabytes.
constexpr uint32_t kMaxTokenId = (1u << 22) - 1;

/// The vocab keys and merges as UTF-8 with byte spans; what buildModel reads.
struct ModelStrings {
  const uint8_t* keyBytes = nullptr;
  const uint32_t* keySpans = nullptr;  // [start, end) into keyBytes, two entries per key
  const uint32_t* ids = nullptr;       // model.vocab[key], same order
  size_t keyCount = 0;
  const uint8_t* mergeBytes = nullptr;
  // Four entries per merge: [a0, a1) and [b0, b1) into mergeBytes for the [a, b] form, or
  // [s0, s1), kSplitOnSpace, 0 for the "a b" string form, split on its one space here.
  // Strings starting with "#version" are skipped (no rank), as HF does.
  const uint32_t* mergeSpans = nullptr;
  size_t mergeCount = 0;
  /// Throw DuplicateVocabEntry when two keys are equal or two keys share an id, instead
  /// of letting the later one win. Set when the input order is the file's order and not
  /// JS object key order (which is what "later" means for a parsed vocab).
  bool rejectDuplicates = false;
};

/// See ModelStrings::rejectDuplicates: the caller rebuilds from the JSON.parse result.
struct DuplicateVocabEntry : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Two keys with one id in a vocab that is already deduplicated (no rejectDuplicates): HF
/// encodes both to that id, but the core keeps one token's bytes per id and would drop the
/// other's. The caller serves the tokenizer another way (the binding: E_NATIVE_UNSUPPORTED).
struct UnsupportedVocab : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Fills spec.vocabBytes / vocabOffsets / vocabEncodable / mergeTriples. Two keys with one
/// id throw DuplicateVocabEntry or UnsupportedVocab (see there). Throws
/// std::invalid_argument with a `model.merges[rank]: …` message for a bad merge.
void buildModel(const ModelStrings& in, EncoderSpec& spec);

/// The form native.ts sends for a parsed JSON object: UTF-16 lengths mark where each
/// string ends inside one UTF-8 buffer made by `strings.join('\0')` in JS (the NUL
/// separator keeps a lone surrogate at the end of one string from pairing with the
/// next; lone surrogates arrive as U+FFFD).
struct StringModelInput {
  const uint8_t* keys = nullptr;  // model.vocab keys joined with '\0', as UTF-8
  size_t keysSize = 0;
  const uint32_t* keyLens = nullptr;  // UTF-16 length of each key
  const uint32_t* ids = nullptr;      // model.vocab[key], same order
  size_t keyCount = 0;
  const uint8_t* merges = nullptr;  // merge strings / parts joined with '\0', as UTF-8
  size_t mergesSize = 0;
  // Two entries per merge: (len "a b", kSplitOnSpace) for the string form, or
  // (len a, len b) for the [a, b] form.
  const uint32_t* mergeLens = nullptr;
  size_t mergeCount = 0;
};

/// Converts the joined form to byte spans (checking lengths and separators), then buildModel.
void buildModelFromStrings(const StringModelInput& in, EncoderSpec& spec);

}  // namespace promptenc
