// The immutable encoder: added-token split -> pre-tokenizer -> byte-level BPE,
// and decode. Built once from plain buffers; any number of threads may call the
// const methods at once (all scratch space is per call).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "added_tokens.h"
#include "bpe.h"
#include "pretokenizer.h"

namespace promptenc {

enum class NormalizerKind : uint32_t {
  None = 0,
  /// NFC (normalize.h) of each gap between normalized=false added tokens, as HF's
  /// AddedVocabulary does; patterns of normalized=true tokens come already normalized.
  Nfc = 1,
};

struct EncoderSpec {
  std::vector<uint8_t> vocabBytes;      // raw bytes of model tokens, concatenated by id
  std::vector<uint32_t> vocabOffsets;   // vocabSize + 1 offsets into vocabBytes
  std::vector<uint8_t> vocabEncodable;  // 1 when the token is made of ByteLevel chars only
  std::vector<uint32_t> mergeTriples;   // (left, right, new) per merge, in rank order
  std::vector<AddedTokenSpec> added;
  PreTokenizerKind preTokenizer = PreTokenizerKind::Cl100k;
  bool addPrefixSpace = false;  // only meaningful for Gpt2 (plain ByteLevel with use_regex)
  bool ignoreMerges = false;
  NormalizerKind normalizer = NormalizerKind::None;
  size_t queueMinSymbols = 0;  // 0 = default; see BpeModel::setQueueMinSymbols
  bool sse2Only = false;       // testing knob: the added-token scan does not use AVX2
};

/// Mutable per-thread state for Encoder::encode: scratch buffers and a word cache.
/// Use one per thread (or per call); never share one between threads at once.
struct EncodeState {
  BpeScratch bpe;
  std::vector<Segment> raw;
  std::vector<Segment> inner;
  std::string prefixed;
  std::string normalized;         // NFC of the current gap, when it was not NFC
  std::vector<uint32_t> nfcWork;  // nfcNormalize scratch
  // Pieces waiting for their cache lookups while the cache lines are prefetched (a ring).
  // Four words: n is in hi (the short key's top byte, or all of hi for other pieces).
  struct Pending {
    uint64_t lo;  // 2 to ShortWordCache::kMaxLen bytes: the key's lo; 1 byte: its id
    uint64_t hi;  // the key's hi (n in its top byte), or n when the piece is not short
    // A short piece: its set in the short cache (re-derived if the table moves); another
    // piece of >= 2 bytes: hashBytes of it.
    uint64_t where;
    size_t start;
  };
  static constexpr size_t kLookahead = 8;
  // Ids go here first and are appended to the output in blocks: a store through a pointer
  // kept in a register instead of a push_back (a capacity check and the vector's end
  // pointer reloaded and stored back) per id. A short-cache hit copies all
  // ShortWordCache::kMaxIds ids (and the count word) at once, hence the slack.
  static constexpr size_t kIdBlock = 512;
  uint32_t ids[kIdBlock + ShortWordCache::kMaxIds + 1];
  std::vector<uint32_t> wordIds;  // encodeWord's output for one piece
  uint32_t wordMisses = 0;        // WordCache misses in a row (see Encoder::encodeMiss)
  uint32_t wordProbes = 0;
  bool missCached = false;  // the last encodeMiss found its piece in WordCache
  // The ring is the kLookahead entries of `pending` that start at a 256-byte boundary, so the
  // piece loop steps through it with one pointer and no index; the rest stay inert. Entries
  // are 32-byte aligned so that such a boundary is an entry's start (with 8-byte alignment
  // it fell inside one, and the ring's slots were not the entries encodeMiss re-derives).
  static_assert(kLookahead * sizeof(Pending) == 256, "the ring wraps at 256 bytes");
  alignas(sizeof(Pending)) Pending pending[2 * kLookahead];
};

/// Where encode put an added token: its split in the text (byte offsets, whitespace taken
/// by lstrip/rstrip included, as Segment) and out.size() right after its id was appended.
/// Sessions cut the text after such tokens without scanning it again.
struct AddedMark {
  size_t start;
  size_t end;
  size_t after;
};

/// Rewrites the byte offsets of `marks` (inside s[0, n), n = UTF-8 of a JS string; ends
/// ascending, a start possibly before the previous end) as UTF-16 offsets: one pass over s.
void marksToUtf16(const uint8_t* s, std::vector<AddedMark>& marks);

class Encoder {
 public:
  explicit Encoder(EncoderSpec spec);  // throws std::invalid_argument on inconsistent input

  /// Appends the ids of HF `encode(text, add_special_tokens=False)` to out.
  /// s must be valid UTF-8.
  void encode(const uint8_t* s, size_t n, std::vector<uint32_t>& out) const;
  /// The same, reusing `state` (its word cache makes repeated calls faster).
  void encode(const uint8_t* s, size_t n, std::vector<uint32_t>& out, EncodeState& state) const;
  /// The same, also appending an AddedMark per added token to *marks (when not null).
  void encode(const uint8_t* s, size_t n, std::vector<uint32_t>& out, EncodeState& state,
              std::vector<AddedMark>* marks) const;
  /// The same with special added tokens read as text: HF's `encode_special_tokens`
  /// (transformers' `split_special_tokens=True`, llama.cpp's `parse_special: false`).
  void encode(const uint8_t* s, size_t n, std::vector<uint32_t>& out, EncodeState& state, std::vector<AddedMark>* marks,
              bool splitSpecial) const;
  /// The text with no added-token split at all, special or not: normalizer, pre-tokenizer and
  /// model only (tiktoken's encode_ordinary). Caller text with contentSpecialTokens 'text'.
  void encodeOrdinary(const uint8_t* s, size_t n, std::vector<uint32_t>& out, EncodeState& state) const;

  /// HF `decode` with a ByteLevel decoder; invalid UTF-8 becomes U+FFFD as in
  /// Rust's String::from_utf8_lossy. Unknown ids are skipped.
  std::string decode(const uint32_t* ids, size_t n, bool skipSpecial) const;
  /// The bytes that decode reads as UTF-8, appended to `out`: each id's bytes in order, so
  /// decodeBytes(a ++ b) == decodeBytes(a) ++ decodeBytes(b) (what a streaming decoder needs).
  void decodeBytes(const uint32_t* ids, size_t n, bool skipSpecial, std::vector<uint8_t>& out) const;

 private:
  void encodeText(const uint8_t* s, size_t b, size_t e, std::vector<uint32_t>& out, EncodeState& scratch) const;
  void encodeGap(const uint8_t* s, size_t b, size_t e, std::vector<uint32_t>& out, EncodeState& scratch,
                 std::vector<AddedMark>* marks, bool splitSpecial) const;
  void encodePieces(const uint8_t* s, size_t b, size_t e, std::vector<uint32_t>& out, EncodeState& scratch) const;
  // encodePieces' cold paths, out of line so that the piece loop stays small enough for the
  // compiler to inline the pre-tokenizer into it (and keep its state in registers). Both
  // take and return the write position in scratch.ids.
  uint32_t* encodeMiss(const uint8_t* s, size_t start, size_t n, uint64_t h, uint32_t* w, std::vector<uint32_t>& out,
                       EncodeState& scratch) const;
  uint32_t* finishPending(const uint8_t* s, const EncodeState::Pending& q, uint32_t* w, std::vector<uint32_t>& out,
                          EncodeState& scratch) const;

  BpeModel model_;
  std::vector<AddedTokenSpec> added_;
  AddedTokenTrie rawTrie_;         // normalized == false tokens, matched on the raw text
  AddedTokenTrie normalizedTrie_;  // normalized == true tokens, matched inside each gap
  PreTokenizerKind preTokenizer_;
  bool addPrefixSpace_;
  bool nfc_;

  // Decode table indexed by id: bytes, and flags (1 = known id, 2 = special added token).
  std::vector<uint8_t> decodeBytes_;
  std::vector<uint32_t> decodeOffsets_;
  std::vector<uint8_t> decodeFlags_;
};

/// Rust String::from_utf8_lossy: each maximal invalid subpart becomes one U+FFFD.
void appendUtf8Lossy(const uint8_t* p, size_t n, std::string& out);

/// The GPT-2 ByteLevel alphabet: the char that stands for each byte.
uint32_t byteLevelChar(uint8_t b);

}  // namespace promptenc
