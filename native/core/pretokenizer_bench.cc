// Pre-tokenizer microbenchmark (not a test): pre-tokenize 8 MB of mixed text per family.
//   cmake -S . -B build-test && cmake --build build-test --target promptenc_pretokenizer_bench
//   ./build-test/promptenc_pretokenizer_bench
#include <chrono>
#include <cstdio>
#include <string>

#include "pretokenizer.h"

using namespace promptenc;

int main() {
  std::string text;
  while (text.size() < (8u << 20)) text += "The quick brown fox, 12345 jumps!\n  def f(x): return x**2  # 中文字符 🎉\n";
  for (auto k : {PreTokenizerKind::Cl100k, PreTokenizerKind::O200k, PreTokenizerKind::DeepSeekV3}) {
    size_t count = 0;
    auto t0 = std::chrono::steady_clock::now();
    preTokenize(k, reinterpret_cast<const uint8_t*>(text.data()), 0, text.size(), [&](size_t, size_t) { count++; });
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("pre-tokenizer %u: %zu pieces, %.0f MB/s\n", unsigned(k), count, text.size() / 1e6 / s);
  }
  return 0;
}
