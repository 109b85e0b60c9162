// Pre-tokenizer microbenchmark (not a test): pre-tokenize 8 MB of mixed text per family.
//   cmake -S . -B build-test && cmake --build build-test --target promptenc_pretokenizer_bench
//   ./build-test/promptenc_pretokenizer_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "pretokenizer.h"

using namespace promptenc;

// With a file argument, pre-tokenizes that file's bytes instead (best of 5 passes).
int main(int argc, char** argv) {
  std::string text;
  if (argc > 1) {
    std::FILE* f = std::fopen(argv[1], "rb");
    if (!f) return 1;
    char buf[65536];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, got);
    std::fclose(f);
  }
  while (argc <= 1 && text.size() < (8u << 20))
    text += "The quick brown fox, 12345 jumps!\n  def f(x): return x**2  # 中文字符 🎉\n";
  for (auto k : {PreTokenizerKind::Cl100k, PreTokenizerKind::O200k, PreTokenizerKind::DeepSeekV3}) {
    size_t count = 0;
    double s = 1e9;
    for (int r = 0; r < 5; r++) {
      count = 0;
      auto t0 = std::chrono::steady_clock::now();
      preTokenize(k, reinterpret_cast<const uint8_t*>(text.data()), 0, text.size(), [&](size_t, size_t) { count++; });
      s = std::min(s, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::printf("pre-tokenizer %u: %zu pieces, %.0f MB/s\n", unsigned(k), count, text.size() / 1e6 / s);
  }
  return 0;
}
