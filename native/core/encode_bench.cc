// Encode microbenchmark (not a test): the whole core (pre-tokenizer, caches, BPE) over a
// file of documents, with no Node in the process, so `valgrind --tool=callgrind` counts
// only the core and a run takes seconds instead of minutes.
//   cmake --build build-test --target promptenc_encode_bench
//   ./build-test/promptenc_encode_bench TOKENIZER_JSON KIND IGNORE_MERGES DOCS [warm|cold|fresh] [PASSES]
// KIND: the PreTokenizerKind number (0 gpt2, 1 cl100k, 2 qwen2, 3 o200k, 4 deepseek-v3).
// DOCS: documents, each a little-endian uint32 byte length and that many UTF-8 bytes.
// warm: one untimed pass with the state, then PASSES timed passes; cold: PASSES passes,
// each with a fresh state; fresh: as cold, and each pass with a new Encoder (its tables newly
// built, as a newly loaded tokenizer's). Instruction counts per byte: run under callgrind with
//   --toggle-collect='timedPass*'
// Prints the token count and an FNV-1a hash of the ids (the same for every build that is exact),
// and CPU MB/s (best pass).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "encoder.h"
#include "model_json.h"
#include "unicode.h"  // PROMPTENC_NOINLINE

using namespace promptenc;

static std::string readFile(const char* path) {
  std::string out;
  std::FILE* f = std::fopen(path, "rb");
  if (!f) {
    std::perror(path);
    std::exit(1);
  }
  char buf[65536];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, got);
  std::fclose(f);
  return out;
}

struct Doc {
  const uint8_t* p;
  size_t n;
};

// Each document's ids go into `out` one after another (the caller hashes them afterwards,
// outside what callgrind collects). Two copies, so --toggle-collect sees only the timed one.
template <int Which>
PROMPTENC_NOINLINE static void pass(const Encoder& enc, const std::vector<Doc>& docs, EncodeState& state,
                                    std::vector<uint32_t>& out) {
  out.clear();
  for (const Doc& d : docs) enc.encode(d.p, d.n, out, state);
}
PROMPTENC_NOINLINE static void timedPass(const Encoder& enc, const std::vector<Doc>& docs, EncodeState& state,
                                         std::vector<uint32_t>& out) {
  pass<1>(enc, docs, state, out);
}

static uint32_t fnv(const std::vector<uint32_t>& ids) {
  uint32_t hash = 0x811c9dc5u;
  for (uint32_t id : ids) {
    hash = (hash ^ (id & 0xFFFF)) * 0x01000193u;
    hash = (hash ^ (id >> 16)) * 0x01000193u;
  }
  return hash;
}

static double cpuSeconds() { return double(std::clock()) / CLOCKS_PER_SEC; }

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s TOKENIZER_JSON KIND IGNORE_MERGES DOCS [warm|cold|fresh] [PASSES]\n", argv[0]);
    return 2;
  }
  const std::string json = readFile(argv[1]);
  ModelJson model;
  std::string why;
  if (!scanModelJson(reinterpret_cast<const uint8_t*>(json.data()), json.size(), model, why)) {
    std::fprintf(stderr, "scan: %s\n", why.c_str());
    return 1;
  }
  auto build = [&] {
    EncoderSpec spec;
    buildModel(model.strings(), spec);
    spec.preTokenizer = PreTokenizerKind(std::atoi(argv[2]));
    spec.ignoreMerges = std::atoi(argv[3]) != 0;
    if (spec.preTokenizer == PreTokenizerKind::Qwen2) spec.normalizer = NormalizerKind::Nfc;
    return std::make_unique<Encoder>(std::move(spec));
  };
  const double b0 = cpuSeconds();
  std::unique_ptr<Encoder> encoder = build();
  std::fprintf(stderr, "model built in %.1f CPU-ms\n", (cpuSeconds() - b0) * 1e3);
  const std::string text = readFile(argv[4]);
  std::vector<Doc> docs;
  size_t bytes = 0;
  for (size_t i = 0; i + 4 <= text.size();) {
    uint32_t n;
    std::memcpy(&n, text.data() + i, 4);
    docs.push_back(Doc{reinterpret_cast<const uint8_t*>(text.data()) + i + 4, n});
    bytes += n;
    i += 4 + n;
  }
  const std::string mode = argc > 5 ? argv[5] : "warm";
  const bool warm = mode == "warm";
  const bool fresh = mode == "fresh";  // cold, and a new Encoder (model tables) per pass, as a new tokenizer
  const int passes = argc > 6 ? std::atoi(argv[6]) : 1;
  std::vector<uint32_t> out;
  out.reserve(bytes + 16);
  double best = 1e30;
  EncodeState warmState;
  if (warm) pass<0>(*encoder, docs, warmState, out);
  for (int r = 0; r < passes; r++) {
    if (fresh && r > 0) {
      encoder.reset();
      encoder = build();
    }
    const Encoder& enc = *encoder;
    EncodeState coldState;
    EncodeState& state = warm ? warmState : coldState;
    const double t0 = cpuSeconds();
    timedPass(enc, docs, state, out);
    best = std::min(best, cpuSeconds() - t0);
  }
  const size_t tokens = out.size();
  const uint32_t hash = fnv(out);
  std::printf("%s %zu bytes %zu tokens hash %08x %.1f MB/CPU-s\n", mode.c_str(), bytes, tokens, hash,
              bytes / 1e6 / best);
  return 0;
}
