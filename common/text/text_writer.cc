#include "common/text/text_writer.h"

#include <bit>

#include "absl/strings/str_format.h"
#include "common/text/decimal.h"

namespace modelatlas {
namespace {

// "00" "01" ... "99": a number's digits are written two at a time.
constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// 10^n for n >= 1, with 0 for n = 0 so that zero has one digit.
constexpr uint64_t kDigitBounds[] = {0,
                                     10ull,
                                     100ull,
                                     1000ull,
                                     10000ull,
                                     100000ull,
                                     1000000ull,
                                     10000000ull,
                                     100000000ull,
                                     1000000000ull,
                                     10000000000ull,
                                     100000000000ull,
                                     1000000000000ull,
                                     10000000000000ull,
                                     100000000000000ull,
                                     1000000000000000ull,
                                     10000000000000000ull,
                                     100000000000000000ull,
                                     1000000000000000000ull,
                                     10000000000000000000ull};

// Decimal digits of `value` (1 for 0): log10 from the bit width (1233 / 4096
// is log10(2) from below, so the estimate is the digit count or one less).
int DecimalDigits(uint64_t value) {
  const int estimate = (std::bit_width(value | 1) * 1233) >> 12;
  return estimate + (value >= kDigitBounds[estimate] ? 1 : 0);
}

// Two digits of `value` (below 100) at `out`.
void WritePair(uint32_t value, char* out) { std::memcpy(out, kDigitPairs + 2 * value, 2); }

// Exactly four digits of `value` (below 10,000) at `out`, leading zeros
// included. (value x 5243) >> 19 is value / 100 for every value below 43,699.
void WriteFour(uint32_t value, char* out) {
  const uint32_t high = (value * 5243) >> 19;
  WritePair(high, out);
  WritePair(value - high * 100, out + 2);
}

// Exactly eight digits of `value` (below 10^8) at `out`, leading zeros
// included.
void WriteEight(uint32_t value, char* out) {
  const uint32_t high = value / 10000;
  WriteFour(high, out);
  WriteFour(value - high * 10000, out + 4);
}

}  // namespace

char* WriteUnsignedDecimal(uint64_t value, char* out) {
  if (value < 10) {
    *out = static_cast<char>('0' + value);
    return out + 1;
  }
  char* const end = out + DecimalDigits(value);
  char* at = end;
  // Eight digits at a time while the value needs 64 bits' arithmetic (a
  // byte count: ten or eleven digits), then two at a time in 32 bits.
  while (value >= 100000000) {
    const uint64_t high = value / 100000000;
    at -= 8;
    WriteEight(static_cast<uint32_t>(value - high * 100000000), at);
    value = high;
  }
  auto rest = static_cast<uint32_t>(value);
  while (rest >= 100) {
    const uint32_t high = rest / 100;
    at -= 2;
    WritePair(rest - high * 100, at);
    rest = high;
  }
  if (rest >= 10) {
    WritePair(rest, at - 2);
  } else {
    at[-1] = static_cast<char>('0' + rest);
  }
  return end;
}

TextWriter& TextWriter::Text(absl::string_view text) {
  if (text.size() > kBufferBytes) {
    Flush();
    out_->append(text.data(), text.size());
    return *this;
  }
  Room(text.size());
  std::memcpy(end_, text.data(), text.size());
  end_ += text.size();
  return *this;
}

TextWriter& TextWriter::WholeNumberByPrintf(double value) {
  Flush();
  absl::StrAppendFormat(out_, "%.0f", value);
  return *this;
}

TextWriter& TextWriter::SignificantDigits(double value, int digits) {
  Flush();
  AppendSignificantDigits(out_, value, digits);
  return *this;
}

}  // namespace modelatlas
