// N-API binding: the only file that includes napi.h. It converts JS values into the
// plain structs of native/core and maps every C++ exception to a JS Error with a
// `code` (E_TOKENIZER_INVALID for a bad spec, E_NATIVE_INTERNAL otherwise).
// There is no mutable global state: each Encoder object owns a shared_ptr to an
// immutable core, so worker_threads may load the addon at the same time and async
// work keeps the core alive even if the JS object is collected.
#include <napi.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/batch.h"
#include "core/encoder.h"
#include "core/model_json.h"
#include "core/utf16.h"
#include "core/vocab_builder.h"

namespace {

using promptenc::Encoder;

Napi::Error codedError(Napi::Env env, const char* code, const std::string& message) {
  Napi::Error err = Napi::Error::New(env, message);
  err.Set("code", Napi::String::New(env, code));
  return err;
}

[[noreturn]] void throwTypeError(Napi::Env env, const std::string& message) {
  Napi::TypeError err = Napi::TypeError::New(env, message);
  err.Set("code", Napi::String::New(env, "E_ARGUMENT"));
  throw err;
}

/// A typed array of the spec, borrowed (valid during the constructor call only).
template <class T>
const T* borrowTypedArray(Napi::Env env, const Napi::Object& spec, const char* name, napi_typedarray_type type,
                          size_t& length) {
  Napi::Value v = spec.Get(name);
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != type)
    throwTypeError(env, std::string("Expected a typed array for spec.") + name);
  Napi::TypedArray ta = v.As<Napi::TypedArray>();
  length = ta.ElementLength();
  return reinterpret_cast<const T*>(static_cast<const uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset());
}

Napi::Uint32Array toUint32Array(Napi::Env env, const std::vector<uint32_t>& ids);

/// What the external made by scanModelJson holds.
/// Its bytes are reported to V8 (AdjustExternalMemory) while it holds them, so an
/// unused scan (the JS backend was chosen) is collected soon rather than whenever.
struct ScannedModel {
  promptenc::ModelJson model;
  bool used = false;     // an Encoder took it
  int64_t reported = 0;  // bytes currently reported to V8

  void report(Napi::Env env) {
    const auto& m = model;
    reported = int64_t(m.keyBytes.size + m.mergeBytes.size +
                       4 * (m.keySpans.size() + m.ids.size() + m.keyUtf16Lengths.size() + m.mergeSpans.size()));
    Napi::MemoryManagement::AdjustExternalMemory(env, reported);
  }
  void unreport(Napi::Env env) {
    if (reported != 0) Napi::MemoryManagement::AdjustExternalMemory(env, -reported);
    reported = 0;
  }
};

/// Marks the externals made by scanModelJson, so the Encoder never unwraps a foreign one.
constexpr napi_type_tag kModelJsonTag = {0x9b1c4f2e7a3d5e61ull, 0x2f8e6c1b0d4a7395ull};

/// scanModelJson(bytes: Uint8Array): the parsed model.vocab / model.merges of a
/// tokenizer.json (model_json.h), or a string saying why the file is left to JSON.parse.
/// Returns { vocab: [begin, end], merges: [begin, end], ids, keyLengths, model } where the
/// ranges are byte offsets into `bytes`, ids / keyLengths (UTF-16) are per key in file
/// order, and `model` is an external that `new Encoder({ model, ... })` consumes.
Napi::Value ScanModelJson(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    throwTypeError(env, "Expected a Uint8Array for bytes");
  Napi::Uint8Array bytes = info[0].As<Napi::Uint8Array>();
  auto scanned = std::make_unique<ScannedModel>();
  promptenc::ModelJson* model = &scanned->model;
  std::string why;
  try {
    if (!promptenc::scanModelJson(bytes.Data(), bytes.ElementLength(), *model, why)) return Napi::String::New(env, why);
  } catch (const std::exception& e) {
    throw codedError(env, "E_NATIVE_INTERNAL", std::string("scanModelJson failed: ") + e.what());
  }
  Napi::Object out = Napi::Object::New(env);
  auto range = [&](size_t b, size_t e) {
    Napi::Array a = Napi::Array::New(env, 2);
    a.Set(uint32_t(0), Napi::Number::New(env, double(b)));
    a.Set(uint32_t(1), Napi::Number::New(env, double(e)));
    return a;
  };
  out.Set("vocab", range(model->vocabBegin, model->vocabEnd));
  out.Set("merges", range(model->mergesBegin, model->mergesEnd));
  out.Set("ids", toUint32Array(env, model->ids));
  out.Set("keyLengths", toUint32Array(env, model->keyUtf16Lengths));
  scanned->report(env);
  auto ext = Napi::External<ScannedModel>::New(env, scanned.release(), [](Napi::Env e, ScannedModel* m) {
    m->unreport(e);
    delete m;
  });
  if (napi_type_tag_object(env, ext, &kModelJsonTag) != napi_ok)
    throw Napi::Error::New(env, "napi_type_tag_object failed");
  out.Set("model", ext);
  return out;
}

/// The ScannedModel behind spec.model.
ScannedModel* scannedModelArg(Napi::Env env, Napi::Value v) {
  bool tagged = false;
  if (v.IsExternal()) napi_check_object_type_tag(env, v, &kModelJsonTag, &tagged);
  if (!tagged) throwTypeError(env, "Expected spec.model to come from scanModelJson");
  return v.As<Napi::External<ScannedModel>>().Data();
}

/// releaseModel(model): frees a scan no Encoder will use (native.ts, when the JS backend
/// serves the file), instead of waiting for the GC to run the external's finalizer.
Napi::Value ReleaseModel(const Napi::CallbackInfo& info) {
  ScannedModel* scanned = scannedModelArg(info.Env(), info[0]);
  scanned->used = true;
  scanned->model = promptenc::ModelJson();
  scanned->unreport(info.Env());
  return info.Env().Undefined();
}

bool boolField(const Napi::Object& o, const char* name) {
  Napi::Value v = o.Get(name);
  return v.IsBoolean() && v.As<Napi::Boolean>().Value();
}

/// A byte buffer that, unlike std::string::resize, does not zero what it allocates: the
/// UTF-8 of a JS string needs up to 3 bytes per UTF-16 unit reserved, and zero-filling that
/// made RSS grow by 3 bytes per input byte for one-byte text that only writes 1. It also
/// keeps the UTF-16 copy the conversion reads (the same reuse, the same reason).
class Utf8Buffer {
 public:
  char* reserve(size_t n) { return grow(data_, cap_, n); }
  uint16_t* reserveUnits(size_t n) { return grow(units_, unitsCap_, n); }
  const uint8_t* bytes() const { return reinterpret_cast<const uint8_t*>(data_.get()); }
  size_t capacity() const { return cap_ + 2 * unitsCap_; }
  void release() {
    data_.reset();
    units_.reset();
    cap_ = unitsCap_ = 0;
  }

 private:
  template <typename T>
  static T* grow(std::unique_ptr<T[]>& p, size_t& cap, size_t n) {
    if (n > cap) {
      p.reset(new T[n]);  // default-initialized: pages are touched only when written
      cap = n;
    }
    return p.get();
  }
  std::unique_ptr<char[]> data_;
  std::unique_ptr<uint16_t[]> units_;
  size_t cap_ = 0;
  size_t unitsCap_ = 0;
};

/// Text argument: a JS string (converted to UTF-8, lone surrogates become U+FFFD exactly as
/// for the oracle) or UTF-8 bytes in a Uint8Array.
/// A JS string into `buf`: its UTF-16 copied out by N-API, then converted here
/// (core/utf16.h says why). Above kUtf16Units the UTF-16 copy would cost 2 more bytes per
/// unit of memory, so N-API's own UTF-8 writer converts (the same bytes, slower). The
/// UTF-16 length is O(1), and utf8Capacity of it always suffices. Returns the UTF-8 length; the bytes are
/// buf.bytes()[0, length).
constexpr size_t kUtf16Units = size_t(1) << 22;
size_t stringToUtf8(napi_env env, napi_value v, Utf8Buffer& buf) {
  size_t units = 0;
  napi_status st = napi_get_value_string_utf16(env, v, nullptr, 0, &units);
  if (st != napi_ok) throw Napi::Error::New(env, "napi_get_value_string_utf16 failed");
  if (units <= kUtf16Units) {
    uint16_t* u = buf.reserveUnits(units + 1);
    size_t copied = 0;
    st = napi_get_value_string_utf16(env, v, reinterpret_cast<char16_t*>(u), units + 1, &copied);
    if (st != napi_ok) throw Napi::Error::New(env, "napi_get_value_string_utf16 failed");
    char* out = buf.reserve(promptenc::utf8Capacity(copied));
    return promptenc::utf16ToUtf8(u, copied, reinterpret_cast<uint8_t*>(out));
  }
  const size_t cap = promptenc::utf8Capacity(units);
  char* out = buf.reserve(cap);
  size_t written = 0;
  st = napi_get_value_string_utf8(env, v, out, cap, &written);
  if (st != napi_ok) throw Napi::Error::New(env, "napi_get_value_string_utf8 failed");
  return written;
}

/// The same into a new std::string (async work owns its copy).
std::string stringToUtf8(napi_env env, napi_value v) {
  Utf8Buffer tmp;
  const size_t n = stringToUtf8(env, v, tmp);
  return std::string(reinterpret_cast<const char*>(tmp.bytes()), n);
}

/// The text argument as bytes, converted into `buf` (reused between calls) when it
/// is a string; a Uint8Array is borrowed (valid for the call).
std::pair<const uint8_t*, size_t> textBytes(const Napi::CallbackInfo& info, size_t index, Utf8Buffer& buf) {
  Napi::Value v = info[index];
  if (v.IsString()) {
    const size_t n = stringToUtf8(info.Env(), v, buf);
    return {buf.bytes(), n};
  }
  if (v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array) {
    Napi::Uint8Array a = v.As<Napi::Uint8Array>();
    return {a.Data(), a.ElementLength()};
  }
  throwTypeError(info.Env(), "Expected a string or Uint8Array for text");
}

std::string textArg(const Napi::CallbackInfo& info, size_t index) {
  Napi::Value v = info[index];
  if (v.IsString()) return stringToUtf8(info.Env(), v);
  if (v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array) {
    Napi::Uint8Array a = v.As<Napi::Uint8Array>();
    return std::string(reinterpret_cast<const char*>(a.Data()), a.ElementLength());
  }
  throwTypeError(info.Env(), "Expected a string or Uint8Array for text");
}

Napi::Uint32Array toUint32Array(Napi::Env env, const std::vector<uint32_t>& ids) {
  Napi::Uint32Array out = Napi::Uint32Array::New(env, ids.size());
  if (!ids.empty()) std::memcpy(out.Data(), ids.data(), ids.size() * sizeof(uint32_t));
  return out;
}

class EncodeWorker : public Napi::AsyncWorker {
 public:
  EncodeWorker(Napi::Env env, std::shared_ptr<const Encoder> core, std::shared_ptr<promptenc::StatePool> pool,
               std::vector<std::string> texts, size_t threads, bool batch)
      : Napi::AsyncWorker(env),
        deferred_(Napi::Promise::Deferred::New(env)),
        core_(std::move(core)),
        states_(std::move(pool)),
        texts_(std::move(texts)),
        threads_(threads),
        batch_(batch) {}
  Napi::Promise promise() { return deferred_.Promise(); }

 protected:
  // Runs on a libuv pool thread: touches no JS value.
  void Execute() override {
    try {
      results_ = promptenc::encodeBatch(*core_, *states_, texts_, threads_);
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  void OnOK() override {
    Napi::Env env = Env();
    if (!batch_) {
      deferred_.Resolve(toUint32Array(env, results_.empty() ? std::vector<uint32_t>() : results_[0]));
      return;
    }
    Napi::Array arr = Napi::Array::New(env, results_.size());
    for (size_t i = 0; i < results_.size(); i++) arr.Set(uint32_t(i), toUint32Array(env, results_[i]));
    deferred_.Resolve(arr);
  }
  void OnError(const Napi::Error& e) override {
    deferred_.Reject(codedError(Env(), "E_NATIVE_INTERNAL", e.Message()).Value());
  }

 private:
  Napi::Promise::Deferred deferred_;
  std::shared_ptr<const Encoder> core_;
  std::shared_ptr<promptenc::StatePool> states_;
  std::vector<std::string> texts_;
  std::vector<std::vector<uint32_t>> results_;
  size_t threads_;
  bool batch_;
};

/// The EncoderSpec of a createEncoder spec object; the model is built from its strings here.
/// Throws what buildModel / buildModelFromStrings throw (see CreateEncoder).
promptenc::EncoderSpec specArg(Napi::Env env, Napi::Value v) {
  if (!v.IsObject()) throwTypeError(env, "Expected a spec object");
  Napi::Object spec = v.As<Napi::Object>();
  promptenc::EncoderSpec s;
  if (spec.Has("model")) {
    // The file bytes parsed by scanModelJson; consumed here whatever happens, so the
    // ~6 MB of key and merge text do not wait for the GC.
    ScannedModel* scanned = scannedModelArg(env, spec.Get("model"));
    if (scanned->used) throwTypeError(env, "spec.model was already used by an Encoder");
    scanned->used = true;
    promptenc::ModelJson taken = std::move(scanned->model);
    scanned->model = promptenc::ModelJson();
    scanned->unreport(env);
    promptenc::buildModel(taken.strings(), s);
  } else if (spec.Has("vocabKeys")) {
    // The token strings themselves (native.ts): converted and resolved here.
    promptenc::StringModelInput in;
    size_t idCount = 0, mergeLenCount = 0;
    in.keys = borrowTypedArray<uint8_t>(env, spec, "vocabKeys", napi_uint8_array, in.keysSize);
    in.keyLens = borrowTypedArray<uint32_t>(env, spec, "vocabKeyLens", napi_uint32_array, in.keyCount);
    in.ids = borrowTypedArray<uint32_t>(env, spec, "vocabIds", napi_uint32_array, idCount);
    in.merges = borrowTypedArray<uint8_t>(env, spec, "mergeText", napi_uint8_array, in.mergesSize);
    in.mergeLens = borrowTypedArray<uint32_t>(env, spec, "mergeLens", napi_uint32_array, mergeLenCount);
    if (idCount != in.keyCount) throwTypeError(env, "spec.vocabIds and spec.vocabKeyLens differ in length");
    if (mergeLenCount % 2 != 0) throwTypeError(env, "spec.mergeLens must hold two entries per merge");
    in.mergeCount = mergeLenCount / 2;
    promptenc::buildModelFromStrings(in, s);
  } else {
    throwTypeError(env, "Expected spec.model (from scanModelJson) or spec.vocabKeys");
  }
  Napi::Value added = spec.Get("added");
  if (!added.IsArray()) throwTypeError(env, "Expected an array for spec.added");
  Napi::Array arr = added.As<Napi::Array>();
  for (uint32_t i = 0; i < arr.Length(); i++) {
    Napi::Value item = arr.Get(i);
    if (!item.IsObject()) throwTypeError(env, "Expected an object for spec.added[" + std::to_string(i) + "]");
    Napi::Object o = item.As<Napi::Object>();
    promptenc::AddedTokenSpec t;
    Napi::Value id = o.Get("id"), content = o.Get("content"), pattern = o.Get("pattern");
    if (!id.IsNumber() || !content.IsString() || !pattern.IsString())
      throwTypeError(
          env, "Expected {id: number, content: string, pattern: string} for spec.added[" + std::to_string(i) + "]");
    t.id = id.As<Napi::Number>().Uint32Value();
    t.content = content.As<Napi::String>().Utf8Value();
    t.pattern = pattern.As<Napi::String>().Utf8Value();
    t.special = boolField(o, "special");
    t.lstrip = boolField(o, "lstrip");
    t.rstrip = boolField(o, "rstrip");
    t.singleWord = boolField(o, "single_word");
    t.normalized = boolField(o, "normalized");
    s.added.push_back(std::move(t));
  }
  s.preTokenizer = promptenc::PreTokenizerKind(spec.Get("preTokenizer").ToNumber().Uint32Value());
  s.normalizer = promptenc::NormalizerKind(spec.Get("normalizer").ToNumber().Uint32Value());
  s.addPrefixSpace = boolField(spec, "addPrefixSpace");
  s.ignoreMerges = boolField(spec, "ignoreMerges");
  if (spec.Get("sse2Only").IsBoolean()) s.sse2Only = spec.Get("sse2Only").As<Napi::Boolean>().Value();
  if (spec.Get("queueMinSymbols").IsNumber())
    s.queueMinSymbols = spec.Get("queueMinSymbols").As<Napi::Number>().Uint32Value();
  return s;
}

/// A core made by createEncoder on its way to the Encoder constructor.
struct BuiltCore {
  std::shared_ptr<const Encoder> core;
  int64_t bytes = 0;  // coreBytesEstimate of its spec
};

/// About what an Encoder built from `s` holds, reported to V8 (AdjustExternalMemory) for the
/// Encoder object's life: a dropped encoder is freed only when V8 collects its wrapper, and
/// V8 sees only the wrapper's few bytes otherwise. 1,000 small tokenizers loaded and dropped
/// then held ~440 MB until a GC came (scripts/test-leak.mjs --gc-every 0). From bpe.h and
/// encoder.h: the vocab bytes and offsets twice (model and decode table), the id hash table
/// (2-4 slots of 4 bytes per id), the merge table (2-4 slots of 16 bytes per merge), the
/// rank triples and the Bloom filter, the 256 x 256 byte-pair tables, and the sync state's
/// word caches at their first size. Not exact: an estimate that scales as the real size does.
int64_t coreBytesEstimate(const promptenc::EncoderSpec& s) {
  const int64_t vocab = int64_t(s.vocabOffsets.size()), merges = int64_t(s.mergeTriples.size() / 3);
  return 2 * int64_t(s.vocabBytes.size()) + 22 * vocab + 61 * merges + (int64_t(1) << 19) +
         int64_t(promptenc::WordCache::kMinSlots) * 64 + int64_t(promptenc::ShortWordCache::kMinSets) * 32;
}

/// Encoder objects that still hold their core (liveEncoders(): what dispose() and the GC free).
std::atomic<int64_t> liveCores{0};

/// Marks the externals made by createEncoder, so the constructor never unwraps a foreign one.
constexpr napi_type_tag kCoreTag = {0x51d3a7c90e2b4f86ull, 0x8c4e1f0a6b2d9375ull};

class EncoderWrap : public Napi::ObjectWrap<EncoderWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(
        env, "Encoder",
        {InstanceMethod<&EncoderWrap::Encode>("encode"), InstanceMethod<&EncoderWrap::Count>("count"),
         InstanceMethod<&EncoderWrap::Decode>("decode"), InstanceMethod<&EncoderWrap::DecodeBytes>("decodeBytes"),
         InstanceMethod<&EncoderWrap::EncodeAsync>("encodeAsync"),
         InstanceMethod<&EncoderWrap::EncodeBatch>("encodeBatch"), InstanceMethod<&EncoderWrap::SharedIds>("sharedIds"),
         InstanceMethod<&EncoderWrap::EncodeMarked>("encodeMarked"),
         InstanceMethod<&EncoderWrap::EncodeOrdinary>("encodeOrdinary"),
         InstanceMethod<&EncoderWrap::SharedMarks>("sharedMarks"), InstanceMethod<&EncoderWrap::Dispose>("dispose")});
  }

  /// Only createEncoder calls this, with the core it built (an External tagged kCoreTag).
  explicit EncoderWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<EncoderWrap>(info) {
    Napi::Env env = info.Env();
    bool tagged = false;
    if (info[0].IsExternal()) napi_check_object_type_tag(env, info[0], &kCoreTag, &tagged);
    if (!tagged) throwTypeError(env, "Encoder objects are made by createEncoder(spec)");
    BuiltCore* built = info[0].As<Napi::External<BuiltCore>>().Data();
    if (!built->core) throwTypeError(env, "this core was already given to an Encoder");
    core_ = std::move(built->core);
    liveCores++;
    reported_ = built->bytes;
    Napi::MemoryManagement::AdjustExternalMemory(env, reported_);
    syncState_ = std::make_unique<promptenc::EncodeState>();
    asyncStates_ = std::make_shared<promptenc::StatePool>();
    Napi::Uint32Array ids = Napi::Uint32Array::New(env, kSharedIds);
    shared_ = ids.Data();  // stable: an ArrayBuffer's backing store does not move
    sharedRef_ = Napi::Persistent(ids);
    newMarksArray(env, kSharedMarks);
  }

 private:
  /// Every method that uses the core runs through here: after dispose() it throws E_DISPOSED.
  template <class F>
  Napi::Value guard(Napi::Env env, F&& f) {
    if (!core_) throw codedError(env, "E_DISPOSED", "this tokenizer was disposed: load a new one");
    try {
      return f();
    } catch (const Napi::Error&) {
      throw;
    } catch (const std::exception& e) {
      throw codedError(env, "E_NATIVE_INTERNAL", std::string("Native encoder failed: ") + e.what());
    }
  }

  /// The text argument encoded into idsBuf_ with the sync state (JS thread only); with
  /// `marks`, also where its added tokens went (UTF-16 offsets).
  std::vector<uint32_t>& encodeArg(const Napi::CallbackInfo& info, std::vector<promptenc::AddedMark>* marks = nullptr,
                                   bool splitSpecial = false) {
    auto text = textBytes(info, 0, textBuf_);
    idsBuf_.clear();
    idsBuf_.reserve(text.second / 2 + 4);
    core_->encode(text.first, text.second, idsBuf_, *syncState_, marks, splitSpecial);
    if (marks) promptenc::marksToUtf16(text.first, *marks);
    return idsBuf_;
  }

  /// ids as encode returns them (a count into sharedIds(), or a new array).
  Napi::Value sharedResult(Napi::Env env, const std::vector<uint32_t>& ids) {
    if (ids.size() > kSharedIds) return toUint32Array(env, ids);
    if (!ids.empty()) std::memcpy(shared_, ids.data(), ids.size() * sizeof(uint32_t));
    return Napi::Number::New(env, double(ids.size()));
  }

  /// The output array of encode and encodeMarked: kSharedIds ids, owned by this object.
  Napi::Value SharedIds(const Napi::CallbackInfo&) { return sharedRef_.Value(); }

  /// The one output protocol of the synchronous encodes: up to kSharedIds ids go into the
  /// sharedIds() array and their count comes back (JS copies them out with slice); more
  /// than fit come back as a new Uint32Array. Why: making a Uint32Array through N-API
  /// (backing store + ArrayBuffer + view) was about half of a ~1.2 µs call on a 20-byte
  /// string; TypedArray.prototype.slice in JS is a fraction of that.
  /// encode(text, splitSpecial?): with a true second argument, special added tokens are text.
  Napi::Value Encode(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      const bool splitSpecial = info.Length() > 1 && info[1].ToBoolean().Value();
      Napi::Value out = sharedResult(info.Env(), encodeArg(info, nullptr, splitSpecial));
      trimBuffers();
      return out;
    });
  }

  /// encodeOrdinary(text): no added-token split at all (Encoder::encodeOrdinary); the output
  /// protocol of encode.
  Napi::Value EncodeOrdinary(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      auto text = textBytes(info, 0, textBuf_);
      idsBuf_.clear();
      idsBuf_.reserve(text.second / 2 + 4);
      core_->encodeOrdinary(text.first, text.second, idsBuf_, *syncState_);
      Napi::Value out = sharedResult(info.Env(), idsBuf_);
      trimBuffers();
      return out;
    });
  }

  /// The marks array of encodeMarked: [count, (start, end, after) per added token]. It is
  /// replaced by a larger one when a call has more marks than fit (count is still written
  /// to the old one's first slot, so a caller holding it knows to ask again).
  Napi::Value SharedMarks(const Napi::CallbackInfo&) { return marksRef_.Value(); }

  /// encode, plus where the added tokens went (sharedMarks()): a session then cuts
  /// after them without scanning the text again in JS and checking that scan against the ids.
  Napi::Value EncodeMarked(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      marksBuf_.clear();
      Napi::Value out = sharedResult(info.Env(), encodeArg(info, &marksBuf_));
      const size_t count = marksBuf_.size();
      marks_[0] = uint32_t(count);
      if (1 + 3 * count > marksCapacity_) newMarksArray(info.Env(), std::max(1 + 3 * count, 2 * marksCapacity_));
      uint32_t* m = marks_;
      m[0] = uint32_t(count);
      for (size_t i = 0; i < count; i++) {
        m[1 + 3 * i] = uint32_t(marksBuf_[i].start);
        m[2 + 3 * i] = uint32_t(marksBuf_[i].end);
        m[3 + 3 * i] = uint32_t(marksBuf_[i].after);
      }
      if (marksBuf_.capacity() > (size_t(1) << 16)) std::vector<promptenc::AddedMark>().swap(marksBuf_);
      trimBuffers();
      return out;
    });
  }

  Napi::Value Count(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      const double count = double(encodeArg(info).size());
      trimBuffers();
      return Napi::Number::New(info.Env(), count);
    });
  }

  Napi::Value Decode(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
        throwTypeError(info.Env(), "Expected a Uint32Array for ids");
      Napi::Uint32Array ids = info[0].As<Napi::Uint32Array>();
      const bool skip = info[1].ToBoolean().Value();
      std::string s = core_->decode(ids.Data(), ids.ElementLength(), skip);
      return Napi::String::New(info.Env(), s);
    });
  }

  /// decodeBytes(ids, skipSpecialTokens): the UTF-8 bytes decode would read, before U+FFFD repair.
  Napi::Value DecodeBytes(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
        throwTypeError(info.Env(), "Expected a Uint32Array for ids");
      Napi::Uint32Array ids = info[0].As<Napi::Uint32Array>();
      std::vector<uint8_t> bytes;
      core_->decodeBytes(ids.Data(), ids.ElementLength(), info[1].ToBoolean().Value(), bytes);
      Napi::Uint8Array out = Napi::Uint8Array::New(info.Env(), bytes.size());
      if (!bytes.empty()) std::memcpy(out.Data(), bytes.data(), bytes.size());
      return out;
    });
  }

  Napi::Value EncodeAsync(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      std::vector<std::string> texts;
      texts.push_back(textArg(info, 0));
      auto* w = new EncodeWorker(info.Env(), core_, asyncStates_, std::move(texts), 1, false);
      Napi::Promise p = w->promise();
      w->Queue();
      return p;
    });
  }

  Napi::Value EncodeBatch(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      if (!info[0].IsArray()) throwTypeError(info.Env(), "Expected an array of strings for texts");
      Napi::Array arr = info[0].As<Napi::Array>();
      std::vector<std::string> texts;
      texts.reserve(arr.Length());
      for (uint32_t i = 0; i < arr.Length(); i++) {
        Napi::Value v = arr.Get(i);
        if (!v.IsString()) throwTypeError(info.Env(), "Expected a string for texts[" + std::to_string(i) + "]");
        texts.push_back(stringToUtf8(info.Env(), v));
      }
      // Checked in TypeScript (1 to MAX_BATCH_THREADS, src/options.ts); only asserted here.
      if (!info[1].IsNumber() || info[1].As<Napi::Number>().DoubleValue() < 1)
        throwTypeError(info.Env(), "Expected a thread count >= 1");
      const size_t t = size_t(info[1].As<Napi::Number>().Uint32Value());
      auto* w = new EncodeWorker(info.Env(), core_, asyncStates_, std::move(texts), t, true);
      Napi::Promise p = w->promise();
      w->Queue();
      return p;
    });
  }

  /// Frees the core (unless async work still holds it: then when that work ends), the sync
  /// state's caches and the text buffers now, instead of when V8 collects this object; what
  /// was reported to V8 is taken back. Idempotent.
  Napi::Value Dispose(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (reported_ != 0) Napi::MemoryManagement::AdjustExternalMemory(env, -reported_);
    reported_ = 0;
    if (core_) liveCores--;
    core_.reset();
    syncState_.reset();
    asyncStates_.reset();
    textBuf_.release();
    std::vector<uint32_t>().swap(idsBuf_);
    return env.Undefined();
  }

  void Finalize(Napi::Env env) override {
    if (reported_ != 0) Napi::MemoryManagement::AdjustExternalMemory(env, -reported_);
    reported_ = 0;
    if (core_) liveCores--;
    core_.reset();
  }

  std::shared_ptr<const Encoder> core_;
  int64_t reported_ = 0;  // bytes reported to V8 (coreBytesEstimate)
  // Used only by the synchronous methods, i.e. only on the JS thread that owns
  // this object; async work gets its own state per call.
  std::unique_ptr<promptenc::EncodeState> syncState_;
  // Reused by the synchronous methods (same thread as syncState_): the UTF-8 text and
  // the ids. Released after a call that grew them past 16 MB.
  Utf8Buffer textBuf_;
  std::vector<uint32_t> idsBuf_;
  // encode's output (see SharedIds); same thread as syncState_.
  static constexpr size_t kSharedIds = 4096;
  Napi::Reference<Napi::Uint32Array> sharedRef_;
  uint32_t* shared_ = nullptr;
  // encodeMarked's marks (see SharedMarks); same thread as syncState_.
  static constexpr size_t kSharedMarks = 1 + 3 * 1024;
  Napi::Reference<Napi::Uint32Array> marksRef_;
  uint32_t* marks_ = nullptr;
  size_t marksCapacity_ = 0;
  std::vector<promptenc::AddedMark> marksBuf_;
  void newMarksArray(Napi::Env env, size_t capacity) {
    Napi::Uint32Array a = Napi::Uint32Array::New(env, capacity);
    marks_ = a.Data();
    marksCapacity_ = capacity;
    marksRef_ = Napi::Persistent(a);
  }
  void trimBuffers() {
    if (textBuf_.capacity() > (size_t(16) << 20)) textBuf_.release();
    if (idsBuf_.capacity() > (size_t(4) << 20)) std::vector<uint32_t>().swap(idsBuf_);
  }
  // States for encodeAsync / encodeBatch workers, reused across calls (shared_ptr:
  // pending work keeps the pool alive if this object is collected).
  std::shared_ptr<promptenc::StatePool> asyncStates_;
};

/// vocabIdsOf(model, strings): for each string, the id of the vocab key equal to it, or -1
/// (load.ts checks added-token ids against the vocabulary with it, before an Encoder takes the scan).
Napi::Value VocabIdsOf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ScannedModel* scanned = scannedModelArg(env, info[0]);
  if (scanned->used) throwTypeError(env, "the scanned model was already used by an Encoder");
  if (!info[1].IsArray()) throwTypeError(env, "Expected an array of strings");
  Napi::Array arr = info[1].As<Napi::Array>();
  std::vector<std::string> strings;
  strings.reserve(arr.Length());
  for (uint32_t i = 0; i < arr.Length(); i++) {
    Napi::Value v = arr.Get(i);
    if (!v.IsString()) throwTypeError(env, "Expected a string at index " + std::to_string(i));
    strings.push_back(stringToUtf8(env, v));
  }
  const std::vector<int64_t> ids = promptenc::vocabIdsOf(scanned->model, strings);
  Napi::Float64Array out = Napi::Float64Array::New(env, ids.size());
  for (size_t i = 0; i < ids.size(); i++) out[i] = double(ids[i]);
  return out;
}

/// createEncoder(spec): an Encoder, or a string when spec.model (a scan) has two equal keys
/// or two keys with one id: a status, not an error of the file, on which native.ts rebuilds
/// the model from the JSON.parse result (whose key order decides which entry wins).
Napi::Value CreateEncoder(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto built = std::make_unique<BuiltCore>();
  try {
    promptenc::EncoderSpec spec = specArg(env, info[0]);
    built->bytes = coreBytesEstimate(spec);
    built->core = std::make_shared<const Encoder>(std::move(spec));
  } catch (const Napi::Error&) {
    throw;
  } catch (const promptenc::DuplicateVocabEntry& e) {
    return Napi::String::New(env, e.what());
  } catch (const promptenc::UnsupportedVocab& e) {
    throw codedError(env, "E_NATIVE_UNSUPPORTED",
                     std::string("The native core cannot reproduce this tokenizer exactly: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw codedError(env, "E_TOKENIZER_INVALID", std::string("Invalid tokenizer for the native core: ") + e.what());
  } catch (const std::exception& e) {
    throw codedError(env, "E_NATIVE_INTERNAL", std::string("Native encoder construction failed: ") + e.what());
  }
  auto ext = Napi::External<BuiltCore>::New(env, built.release(), [](Napi::Env, BuiltCore* b) { delete b; });
  if (napi_type_tag_object(env, ext, &kCoreTag) != napi_ok) throw Napi::Error::New(env, "napi_type_tag_object failed");
  return env.GetInstanceData<Napi::FunctionReference>()->New({ext});
}

/// The binding's interface version; native.ts refuses an addon with another one.
constexpr uint32_t kAbiVersion = 4;

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  // The Encoder class stays out of exports: createEncoder makes its objects. Per env, so
  // each worker thread that loads the addon has its own.
  env.SetInstanceData(new Napi::FunctionReference(Napi::Persistent(EncoderWrap::Define(env))));
  exports.Set("createEncoder", Napi::Function::New(env, CreateEncoder, "createEncoder"));
  exports.Set("scanModelJson", Napi::Function::New(env, ScanModelJson, "scanModelJson"));
  exports.Set("releaseModel", Napi::Function::New(env, ReleaseModel, "releaseModel"));
  exports.Set("vocabIdsOf", Napi::Function::New(env, VocabIdsOf, "vocabIdsOf"));
  // The enums of native/core, by name: native.ts takes the numbers from here.
  Napi::Object pre = Napi::Object::New(env);
  using promptenc::PreTokenizerKind;
  pre.Set("Gpt2", Napi::Number::New(env, double(PreTokenizerKind::Gpt2)));
  pre.Set("Cl100k", Napi::Number::New(env, double(PreTokenizerKind::Cl100k)));
  pre.Set("Qwen2", Napi::Number::New(env, double(PreTokenizerKind::Qwen2)));
  pre.Set("O200k", Napi::Number::New(env, double(PreTokenizerKind::O200k)));
  pre.Set("DeepSeekV3", Napi::Number::New(env, double(PreTokenizerKind::DeepSeekV3)));
  exports.Set("preTokenizerKinds", pre);
  Napi::Object norm = Napi::Object::New(env);
  norm.Set("None", Napi::Number::New(env, double(promptenc::NormalizerKind::None)));
  norm.Set("Nfc", Napi::Number::New(env, double(promptenc::NormalizerKind::Nfc)));
  exports.Set("normalizerKinds", norm);
  exports.Set("abiVersion", Napi::Number::New(env, kAbiVersion));
  exports.Set("liveEncoders", Napi::Function::New(
                                  env,
                                  [](const Napi::CallbackInfo& info) -> Napi::Value {
                                    return Napi::Number::New(info.Env(), double(liveCores.load()));
                                  },
                                  "liveEncoders"));
  return exports;
}

}  // namespace

NODE_API_MODULE(promptenc, Init)
