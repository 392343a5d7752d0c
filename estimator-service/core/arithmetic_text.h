// Numbers in the arithmetic the estimator shows with every figure.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace modelatlas::estimator {

// `value` rounded to a whole number, as printf's "%.0f" writes it (ties to
// even). Below 2^53 every integer is exact in a double and is written as an
// int64, several times faster than printf (it showed in the fit matrix's
// profile).
inline std::string WholeNumber(double value) {
  if (std::abs(value) < 9007199254740992.0) {
    return absl::StrCat(static_cast<int64_t>(std::nearbyint(value)));
  }
  return absl::StrFormat("%.0f", value);
}

// An integer's decimal digits appended to *out: absl's digit writer
// (AlphaNum) without StrAppend's piece list and resize (the memory answer's
// texts are a dozen short pieces each; docs/BENCHMARKS.md, session 14).
inline void AppendInteger(std::string* out, int64_t value) {
  const absl::AlphaNum digits(value);
  out->append(digits.data(), digits.size());
}

// WholeNumber(value) appended to *out, with no string of its own (the
// memory answer writes each line's text in place).
inline void AppendWholeNumber(std::string* out, double value) {
  if (std::abs(value) < 9007199254740992.0) {
    AppendInteger(out, static_cast<int64_t>(std::nearbyint(value)));
  } else {
    absl::StrAppendFormat(out, "%.0f", value);
  }
}

}  // namespace modelatlas::estimator
