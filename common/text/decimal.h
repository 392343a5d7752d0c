// printf's "%.Nf" and "%.Ng" for doubles, through std::to_chars (shortest
// exact digits, no locale), several times faster than absl::StrFormat: the
// estimator writes the arithmetic of every figure it answers, and a plan over
// every accelerator formats thousands of numbers (docs/BENCHMARKS.md).
// The output is the same characters printf writes (the C++ standard defines
// to_chars with a precision as printf's conversion; tests compare).
#pragma once

#include <string>

namespace modelatlas {

// printf("%.*f", decimals, value): 1.5 with 2 -> "1.50".
std::string FixedDecimals(double value, int decimals);

// printf("%.*g", digits, value): 0.9 with 4 -> "0.9", 123456 -> "1.235e+05".
std::string SignificantDigits(double value, int digits);

// The same texts appended to *out, with no string of their own (no memo:
// for figures that differ on every line, such as each card's).
void AppendFixedDecimals(std::string* out, double value, int decimals);
void AppendSignificantDigits(std::string* out, double value, int digits);

}  // namespace modelatlas
