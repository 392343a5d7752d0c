#include "estimator-service/core/number_format.h"

#include "absl/strings/ascii.h"

namespace modelatlas::estimator {

double BitsPerElement(NumberFormat format) {
  switch (format) {
    case NumberFormat::kFp32:
      return 32;
    case NumberFormat::kFp16:
      return 16;
    case NumberFormat::kBf16:
      return 16;
    case NumberFormat::kFp8:
      return 8;
    case NumberFormat::kInt8:
      return 8;
    case NumberFormat::kInt4:
      return 4;
  }
  return 0;
}

absl::string_view NumberFormatName(NumberFormat format) {
  switch (format) {
    case NumberFormat::kFp32:
      return "fp32";
    case NumberFormat::kFp16:
      return "fp16";
    case NumberFormat::kBf16:
      return "bf16";
    case NumberFormat::kFp8:
      return "fp8";
    case NumberFormat::kInt8:
      return "int8";
    case NumberFormat::kInt4:
      return "int4";
  }
  return "?";
}

bool ParseNumberFormat(absl::string_view text, NumberFormat* format) {
  const std::string lower = absl::AsciiStrToLower(text);
  for (NumberFormat candidate : {NumberFormat::kFp32, NumberFormat::kFp16, NumberFormat::kBf16,
                                 NumberFormat::kFp8, NumberFormat::kInt8, NumberFormat::kInt4}) {
    if (lower == NumberFormatName(candidate)) {
      *format = candidate;
      return true;
    }
  }
  return false;
}

}  // namespace modelatlas::estimator
