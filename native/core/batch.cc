#include "batch.h"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace promptenc {

std::unique_ptr<EncodeState> StatePool::take() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      auto s = std::move(free_.back());
      free_.pop_back();
      return s;
    }
  }
  return std::make_unique<EncodeState>();
}

void StatePool::give(std::unique_ptr<EncodeState> state) {
  std::lock_guard<std::mutex> lock(mu_);
  if (free_.size() < kMaxKept) free_.push_back(std::move(state));
}

size_t StatePool::kept() const {
  std::lock_guard<std::mutex> lock(mu_);
  return free_.size();
}

std::vector<std::vector<uint32_t>> encodeBatch(const Encoder& encoder, StatePool& states,
                                               const std::vector<std::string>& texts, size_t threads) {
  std::vector<std::vector<uint32_t>> results(texts.size());
  const size_t workers = std::max<size_t>(1, std::min(threads, texts.size()));
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::string failure;
  std::mutex failureMu;
  auto run = [&]() {
    std::unique_ptr<EncodeState> state = states.take();
    for (;;) {
      if (failed.load(std::memory_order_relaxed)) break;
      const size_t i = next.fetch_add(1);
      if (i >= texts.size()) break;
      try {
        const std::string& t = texts[i];
        results[i].reserve(t.size() / 3 + 4);
        encoder.encode(reinterpret_cast<const uint8_t*>(t.data()), t.size(), results[i], *state);
      } catch (const std::exception& e) {
        if (!failed.exchange(true)) {
          std::lock_guard<std::mutex> lock(failureMu);
          failure = e.what();
        }
        return;  // drops this state
      }
    }
    states.give(std::move(state));
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  try {
    for (size_t w = 1; w < workers; w++) pool.emplace_back(run);
  } catch (const std::system_error&) {
    // No more threads to be had: the ones started and this one share the texts.
  }
  run();
  for (auto& th : pool) th.join();
  if (failed) throw std::runtime_error(failure);
  return results;
}

}  // namespace promptenc
