// Number formats of weights and cache entries, and their storage cost.
#pragma once

#include "absl/strings/string_view.h"

namespace modelatlas::estimator {

enum class NumberFormat { kFp32, kFp16, kBf16, kFp8, kInt8, kInt4 };

// Storage bits per element. Plain formats carry no scales; quantization
// schemes with per-group scales are counted by their effective bits per weight.
double BitsPerElement(NumberFormat format);
absl::string_view NumberFormatName(NumberFormat format);
// Parses "fp32", "fp16", "bf16", "fp8", "int8", "int4" (any case).
bool ParseNumberFormat(absl::string_view text, NumberFormat* format);

}  // namespace modelatlas::estimator
