// NFC exactly as the tokenizers oracle computes it: UAX #15 over the Unicode 9.0.0 data of
// unicode-normalization-alignments 0.1.12, read from the oracle (native/core/nfc_tables.h,
// scripts/gen-nfc-tables.mjs). Node's ICU is a newer Unicode and composes pairs the oracle
// leaves apart, so text is never normalized in JS.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace promptenc {

/// Writes NFC(s[0, n)) to `out` (replacing its contents) and returns true, or returns false
/// with `out` untouched when s[0, n) is NFC already. s is valid UTF-8. `work` is scratch.
/// Cost: one quick-check pass (a compare per ASCII byte, a two-stage table load per other
/// code point); only the stretch between the stable starters around each code point that
/// fails the check is decomposed and recomposed, the rest is copied.
bool nfcNormalize(const uint8_t* s, size_t n, std::string& out, std::vector<uint32_t>& work);

}  // namespace promptenc
