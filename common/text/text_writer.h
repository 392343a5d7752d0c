// A short text (an estimate's arithmetic: a dozen literal pieces and a few
// whole numbers) written into a buffer on the stack and appended to its
// string in one copy. std::string::append is an out-of-line call with a
// capacity check per piece, and absl's AlphaNum writes a number's digits
// into a buffer of its own before they are copied again: for the memory
// answer's texts those calls were most of the instructions of the formulas
// (docs/BENCHMARKS.md, session 15, branch s15-core). Here a literal is a
// copy of a length known at compile time, and a number's digits are written
// in place, two at a time.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/string_view.h"

namespace modelatlas {

// Writes the decimal digits of `value` at `out` (room for 20 characters);
// returns the end of what it wrote.
char* WriteUnsignedDecimal(uint64_t value, char* out);

// The same with a '-' before a negative value (room for 20 characters).
inline char* WriteIntegerDecimal(int64_t value, char* out) {
  if (value < 0) {
    *out++ = '-';
    // Negated as unsigned: INT64_MIN has no positive int64.
    return WriteUnsignedDecimal(0 - static_cast<uint64_t>(value), out);
  }
  return WriteUnsignedDecimal(static_cast<uint64_t>(value), out);
}

// Appends to `*out` what is written, when the writer is flushed or goes out
// of scope (whichever is first; Flush() then writing more appends again).
// A text longer than the buffer is appended in several copies.
class TextWriter {
 public:
  explicit TextWriter(std::string* out) : out_(out) {}
  TextWriter(const TextWriter&) = delete;
  TextWriter& operator=(const TextWriter&) = delete;
  ~TextWriter() { Flush(); }

  // A string literal: its length is known at compile time.
  template <size_t N>
  TextWriter& Literal(const char (&text)[N]) {
    static_assert(N >= 1 && N - 1 <= kBufferBytes, "a literal piece fits the buffer");
    Room(N - 1);
    std::memcpy(end_, text, N - 1);
    end_ += N - 1;
    return *this;
  }

  // Any text (a format's name, a derivation).
  TextWriter& Text(absl::string_view text);

  // An integer's decimal digits, as absl::StrCat and printf("%lld") write them.
  TextWriter& Integer(int64_t value) {
    Room(kNumberBytes);
    end_ = WriteIntegerDecimal(value, end_);
    return *this;
  }

  // `value` rounded to a whole number as estimator::AppendWholeNumber writes
  // it (core/arithmetic_text.h): below 2^53 the int64 nearest (ties to
  // even), else printf's "%.0f" (the same digits for every double below
  // 2^63, all of which are whole).
  TextWriter& WholeNumber(double value) {
    const double magnitude = std::abs(value);
    if (magnitude < 9007199254740992.0) {  // 2^53: the int64 path of AppendWholeNumber
      // Most figures are whole already (byte counts, products of counts).
      const auto whole = static_cast<int64_t>(value);
      return Integer(static_cast<double>(whole) == value
                         ? whole
                         : static_cast<int64_t>(std::nearbyint(value)));
    }
    // Whole already; %.0f writes its exact digits, the int64's.
    if (magnitude < 9223372036854775808.0) return Integer(static_cast<int64_t>(value));
    return WholeNumberByPrintf(value);
  }

  // printf("%.*g", digits, value) (common/text/decimal.h).
  TextWriter& SignificantDigits(double value, int digits);

  // Appends what is written so far to the string and empties the buffer.
  void Flush() {
    if (end_ != buffer_) {
      out_->append(buffer_, static_cast<size_t>(end_ - buffer_));
      end_ = buffer_;
    }
  }

 private:
  static constexpr size_t kBufferBytes = 256;
  // The longest integer: a sign and 19 digits, or 20 digits.
  static constexpr size_t kNumberBytes = 20;

  // 2^63 and beyond, infinities and NaN: printf's "%.0f".
  TextWriter& WholeNumberByPrintf(double value);

  // Makes room for `bytes` (at most kBufferBytes) more.
  void Room(size_t bytes) {
    if (static_cast<size_t>(buffer_ + kBufferBytes - end_) < bytes) Flush();
  }

  std::string* out_;
  char buffer_[kBufferBytes];
  char* end_ = buffer_;
};

}  // namespace modelatlas
