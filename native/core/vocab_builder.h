// Builds the model part of an EncoderSpec (raw-byte vocab by id, merge id triples)
// straight from the token strings of tokenizer.json, so the JS side only has to hand
// over a few flat buffers instead of converting 128 k tokens and merges itself.
#pragma once
#include <cstddef>
#include <cstdint>

#include "encoder.h"

namespace promptenc {

/// UTF-16 lengths mark where each string ends inside one UTF-8 buffer made by
/// `strings.join('\0')` in JS (the NUL separator keeps a lone surrogate at the end of
/// one string from pairing with the next; lone surrogates arrive as U+FFFD).
struct StringModelInput {
  const uint8_t* keys = nullptr;  // model.vocab keys joined with '\0', as UTF-8
  size_t keysSize = 0;
  const uint32_t* keyLens = nullptr;  // UTF-16 length of each key
  const uint32_t* ids = nullptr;      // model.vocab[key], same order
  size_t keyCount = 0;
  const uint8_t* merges = nullptr;  // merge strings / parts joined with '\0', as UTF-8
  size_t mergesSize = 0;
  // Two entries per merge: (len "a b", kSplitOnSpace) for the string form, or
  // (len a, len b) for the [a, b] form. Strings starting with "#version" are skipped.
  const uint32_t* mergeLens = nullptr;
  size_t mergeCount = 0;
};
constexpr uint32_t kSplitOnSpace = 0xFFFFFFFFu;

/// Fills spec.vocabBytes / vocabOffsets / vocabEncodable / mergeTriples. When two keys
/// share an id the later one names it (as a JS loop over the entries would). Throws
/// std::invalid_argument with a `model.merges[rank]: …` message for a bad merge.
void buildModelFromStrings(const StringModelInput& in, EncoderSpec& spec);

}  // namespace promptenc
