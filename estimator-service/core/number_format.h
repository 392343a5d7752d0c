// Number formats of weights and cache entries, and their storage cost in
// bits per element, including quantization schemes with per-group scales
// (docs/FORMULAS.md, "Weights").
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace modelatlas::estimator {

enum class NumberFormat {
  kFp32,
  kFp16,
  kBf16,
  kFp8,
  kInt8,
  kInt4,
  kGptqInt4,
  kAwqInt4,
  kGptqInt8,
  kNf4,
  kNf4DoubleQuant,
  kGgufQ2K,
  kGgufQ3K,
  kGgufQ4_0,
  kGgufQ4K,
  kGgufQ5K,
  kGgufQ6K,
  kGgufQ8_0,
  kGgufQ3KM,
  kGgufQ4KM,
  kGgufQ5KM,
  kGgufIq2Xxs,
  kGgufIq2Xs,
  kGgufIq3Xxs,
  kGgufIq4Xs,
  kGgufIq4Nl,
  kMxfp4,
  kNvfp4,
  kFp8Block,
};

// Storage cost of one format: bits per element and how that figure arises.
struct Encoding {
  double bits_per_element = 0;
  // e.g. "4 bits + (16-bit scale + 4-bit zero) / 128-weight group".
  std::string derivation;
};

// `group_size` matters for GPTQ/AWQ only (0 = 128). INVALID_ARGUMENT for a
// group size that is not a positive power of two up to 4096.
absl::StatusOr<Encoding> EncodingOf(NumberFormat format, int group_size = 0);

// EncodingOf for a format whose cost does not depend on a group size (all
// but GPTQ/AWQ), without building a string (the memory answer asks once per
// call): the derivation is the table's own text. nullopt for GPTQ/AWQ.
struct FixedEncoding {
  double bits_per_element = 0;
  absl::string_view derivation;
};
std::optional<FixedEncoding> FixedEncodingOf(NumberFormat format);

// Bits per element of the plain formats (fp32 ... int4); 0 for others.
double BitsPerElement(NumberFormat format);
std::string NumberFormatName(NumberFormat format);
// The same name without a string of its own (the table's text).
absl::string_view NumberFormatNameView(NumberFormat format);
// Parses "fp32", "bf16", "gptq-int4", "gguf-q4_k_m", ... (any case).
bool ParseNumberFormat(absl::string_view text, NumberFormat* format);
// Whether a format can hold KV-cache entries (plain formats only).
bool IsPlainFormat(NumberFormat format);

}  // namespace modelatlas::estimator
