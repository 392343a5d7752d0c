#include "common/text/decimal.h"

#include <array>
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstdio>

namespace modelatlas {
namespace {

std::string ToChars(double value, std::chars_format format, int precision) {
  // Enough for any double in fixed notation with up to 17 decimals
  // (309 integer digits, sign, point); larger precisions fall back.
  char buffer[352];
  const std::to_chars_result result =
      std::to_chars(buffer, buffer + sizeof(buffer), value, format, precision);
  if (result.ec == std::errc()) return std::string(buffer, result.ptr);
  const char* spec = format == std::chars_format::fixed ? "%.*f" : "%.*g";
  const int needed = std::snprintf(nullptr, 0, spec, precision, value);
  std::string out(static_cast<size_t>(needed), '\0');
  std::snprintf(out.data(), out.size() + 1, spec, precision, value);
  return out;
}

// The texts last written on this thread, direct-mapped by value and format:
// an answer repeats many figures (a plan writes the model's weights, KV cache
// and activations, and the same memory utilization, once per accelerator), so
// most lookups hit. 256 entries, a few KiB per thread.
std::string Memoized(double value, std::chars_format format, int precision) {
  struct Entry {
    uint64_t bits = 0;
    int precision = -1;  // -1: empty
    std::chars_format format = std::chars_format::fixed;
    std::string text;
  };
  thread_local std::array<Entry, 256> memo;
  const uint64_t bits = std::bit_cast<uint64_t>(value);
  const uint64_t key =
      (bits ^ (static_cast<uint64_t>(precision) << 3) ^ static_cast<uint64_t>(format)) *
      0x9E3779B97F4A7C15ull;
  Entry& entry = memo[key >> 56];
  if (entry.precision != precision || entry.bits != bits || entry.format != format) {
    entry.text = ToChars(value, format, precision);
    entry.bits = bits;
    entry.precision = precision;
    entry.format = format;
  }
  return entry.text;
}

}  // namespace

std::string FixedDecimals(double value, int decimals) {
  return Memoized(value, std::chars_format::fixed, decimals);
}

std::string SignificantDigits(double value, int digits) {
  return Memoized(value, std::chars_format::general, digits);
}

}  // namespace modelatlas
