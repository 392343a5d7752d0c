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

// The common cases of the two written straight into a caller's buffer (a
// writer that keeps its own text, such as a plan's lines, with no string in
// between): finite values whose digits fit 15 decimal places, by integer
// arithmetic. `buffer` has room for kFastDecimalBytes, any of which may be
// written (the text is copied in fixed-size blocks); returns the text's
// length, or -1 when the value is not such a case (the functions above then
// give the text).
inline constexpr int kFastDecimalBytes = 48;
int TryFixedDecimals(double value, int decimals, char* buffer);
int TrySignificantDigits(double value, int digits, char* buffer);

}  // namespace modelatlas
