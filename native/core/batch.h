// Encoding many texts on several threads with one immutable Encoder: the thread pool of
// encodeBatch / encodeAsync, and the pool of EncodeStates it reuses between calls.
// No N-API: the binding runs encodeBatch on a libuv worker thread and converts the result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "encoder.h"

namespace promptenc {

/// EncodeStates (word cache + scratch) kept between batch calls of one Encoder: a fresh
/// state starts with an empty word cache, which made every encodeBatch call pay the merge
/// loop for every piece again (≈ 2× slower than the warm synchronous encode). A thread
/// takes a state for the whole call and gives it back; the lock is taken twice per thread
/// per call, never per text. Thread-safe.
class StatePool {
 public:
  std::unique_ptr<EncodeState> take();
  /// Keeps at most kMaxKept states; the others are freed.
  void give(std::unique_ptr<EncodeState> state);
  size_t kept() const;

  static constexpr size_t kMaxKept = 8;

 private:
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<EncodeState>> free_;
};

/// The ids of each text, encoded by min(threads, texts.size()) threads (the calling thread is
/// one of them); threads >= 1 is the caller's to check (PromptTokenizer: 1 to 256). Texts are
/// taken from a shared counter, so a long text does not hold up the others. The first
/// exception of any text is rethrown as std::runtime_error after every thread has stopped;
/// the state of the thread that threw is dropped (its scratch may be half-written).
std::vector<std::vector<uint32_t>> encodeBatch(const Encoder& encoder, StatePool& states,
                                               const std::vector<std::string>& texts, size_t threads);

}  // namespace promptenc
