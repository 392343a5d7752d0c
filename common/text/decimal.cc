#include "common/text/decimal.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace modelatlas {
namespace {

// The longest text of FastFixed and FastGeneral: 16 integer digits, a point,
// 15 decimals and a sign, or 15 digits with an exponent.
constexpr int kFastBufferSize = kFastDecimalBytes;

// Powers of ten up to 1e22 are exact doubles.
constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
constexpr uint64_t kIntPow10[] = {1,
                                  10,
                                  100,
                                  1000,
                                  10000,
                                  100000,
                                  1000000,
                                  10000000,
                                  100000000,
                                  1000000000,
                                  10000000000,
                                  100000000000,
                                  1000000000000,
                                  10000000000000,
                                  100000000000000,
                                  1000000000000000};

// `scaled` (value x a power of ten, one rounding from the exact product)
// rounded to the nearest integer, as printf rounds the exact decimal value;
// false when `scaled` is too close to a tie for that one rounding to tell
// (its error is at most scaled x 2^-53; the margin is 8 times that) or too
// large to hold every integer exactly.
bool RoundScaled(double scaled, uint64_t* rounded) {
  if (!(scaled < 4503599627370496.0)) return false;  // 2^52: floor and the fraction exact
  // `scaled` is not negative: the conversion truncates, which is floor (an
  // integer conversion where std::floor cost more under callgrind,
  // docs/BENCHMARKS.md, session 18, branch s18-plan).
  const uint64_t whole = static_cast<uint64_t>(scaled);
  const double fraction = scaled - static_cast<double>(whole);  // exact below 2^52
  if (std::abs(fraction - 0.5) <= scaled * 0x1p-50 + 0x1p-1074) return false;
  *rounded = whole + (fraction > 0.5 ? 1 : 0);
  return true;
}

// "00" to "99": two digits per division.
constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// Writes the decimal digits of `n` ending at `end`; returns where they start.
[[gnu::always_inline]] inline char* WriteDigits(uint64_t n, char* end) {
  while (n >= 100) {
    end -= 2;
    std::memcpy(end, kDigitPairs + 2 * (n % 100), 2);
    n /= 100;
  }
  if (n >= 10) {
    end -= 2;
    std::memcpy(end, kDigitPairs + 2 * n, 2);
  } else {
    *--end = static_cast<char>('0' + n);
  }
  return end;
}

// Copies the `size` (at most kCopyBytes) chars at `from` to `to`, by copying
// kCopyBytes: a copy of a size known when compiled is a few moves, where a
// loop of a few chars was a memcpy call. Both sides have kCopyBytes of room.
constexpr size_t kCopyBytes = 16;
char* CopyShort(char* to, const char* from, size_t size) {
  std::memcpy(to, from, kCopyBytes);
  return to + size;
}

// The `digits` (1 to kMaxPackedDigits) decimal digits of `n` (it has exactly
// that many) as chars in one word, the most significant in its lowest byte:
// stored, the word writes them in order. Built in a register: digits stored
// a pair at a time and then read back as one block (CopyShort) stalled on
// store-to-load forwarding, 41% of TrySignificantDigits's samples in a plan
// over every accelerator under perf (docs/BENCHMARKS.md, session 20).
constexpr int kMaxPackedDigits = 8;
// Two digits (n < 100) as two chars from the table, in order.
[[gnu::always_inline]] inline uint64_t PackedPair(uint64_t n) {
  uint16_t pair;
  std::memcpy(&pair, kDigitPairs + 2 * n, 2);
  return pair;
}
// Four digits (n < 10,000): two pairs found side by side.
[[gnu::always_inline]] inline uint64_t PackedFour(uint64_t n) {
  return PackedPair(n / 100) | PackedPair(n % 100) << 16;
}
[[gnu::always_inline]] inline uint64_t PackedDigits(uint64_t n, int digits) {
  // Four digits as two pairs and eight as two fours, found side by side
  // (their divisions do not wait on each other).
  if (digits == 4) return PackedFour(n);
  if (digits == 8) return PackedFour(n / 10000) | PackedFour(n % 10000) << 32;
  uint64_t packed = 0;
  int at = digits;  // the digits before `at` are still to place
  for (; at >= 2; at -= 2) {
    packed |= PackedPair(n % 100) << (8 * (at - 2));
    n /= 100;
  }
  if (at == 1) packed |= uint64_t{'0'} + n;
  return packed;
}

// The char at `index` of PackedDigits' word.
[[gnu::always_inline]] inline char PackedChar(uint64_t packed, int index) {
  return static_cast<char>((packed >> (8 * index)) & 0xff);
}

// %g's fixed notation (-4 <= exponent < digits) of d.ddd x 10^exponent,
// `packed` its digits (PackedDigits), at `p`: the integer part, then the
// fraction without trailing zeros (and no point when none is left); or "0."
// and zeros before the digits. Stores whole words: `p` has 8 chars of room
// past the text. Returns the text's end.
[[gnu::always_inline]] inline char* WritePackedFixed(uint64_t packed, int digits, int exponent,
                                                     char* p) {
  if (exponent >= 0) {
    const int whole = exponent + 1;
    int kept = digits;
    while (kept > whole && PackedChar(packed, kept - 1) == '0') --kept;
    std::memcpy(p, &packed, sizeof(packed));
    p += whole;
    if (kept > whole) {
      *p++ = '.';
      const uint64_t fraction = packed >> (8 * whole);  // whole < digits <= 8
      std::memcpy(p, &fraction, sizeof(fraction));
      p += kept - whole;
    }
    return p;
  }
  // "0." and -exponent - 1 zeros (at most 3).
  std::memcpy(p, "0.000", 5);
  p += 1 - exponent;
  int kept = digits;
  while (kept > 1 && PackedChar(packed, kept - 1) == '0') --kept;
  std::memcpy(p, &packed, sizeof(packed));
  return p + kept;
}

// printf("%.*f") for the common case (finite, |value| x 10^decimals below
// 2^52, decimals up to 15), by integer arithmetic: several times faster than
// to_chars's exact conversion, which stays the answer for the rest (false).
// Writes into `buffer` (at least kFastBufferSize chars); returns the length,
// or -1 when the value is not such a case.
[[gnu::always_inline]] inline int FastFixed(double value, int decimals, char* buffer) {
  if (decimals < 0 || decimals > 15 || !std::isfinite(value)) return -1;
  uint64_t rounded = 0;
  if (!RoundScaled(std::abs(value) * kPow10[decimals], &rounded)) return -1;
  // Written from the end of the first kFastBufferSize chars; the whole
  // kFastBufferSize copied (at most 33 are the text: a fixed-size copy).
  char digits[2 * kFastBufferSize];
  char* end = digits + kFastBufferSize;
  char* begin = end;
  if (decimals > 0) {
    const uint64_t unit = kIntPow10[decimals];
    uint64_t fraction = rounded % unit;
    for (int i = 0; i < decimals; ++i) {
      *--begin = static_cast<char>('0' + fraction % 10);
      fraction /= 10;
    }
    *--begin = '.';
    rounded /= unit;
  }
  begin = WriteDigits(rounded, begin);
  if (std::signbit(value)) *--begin = '-';  // printf writes "-0.00" for -0.001
  std::memcpy(buffer, begin, kFastBufferSize);
  return static_cast<int>(end - begin);
}

// printf("%.*g") for the common case (finite, non-zero, digits 1 to 15, the
// decimal exponent within +-22 of the digits): the value rounded to `digits`
// significant digits by integer arithmetic, then written as %g does (C11
// 7.21.6.1: fixed when -4 <= exponent < digits, else scientific; trailing
// zeros and a bare point removed). false for the rest.
[[gnu::always_inline]] inline int FastGeneral(double value, int digits, char* buffer) {
  if (digits < 1 || digits > 15 || !std::isfinite(value) || value == 0) return -1;
  const double magnitude = std::abs(value);
  // The decimal exponent from the binary one (magnitude in [2^b, 2^(b+1)),
  // log10(2) = 0.30103): at most one below the true one, which the loop
  // corrects; cheaper than log10, which showed in the plan's profile.
  const int binary_exponent =
      static_cast<int>((std::bit_cast<uint64_t>(magnitude) >> 52) & 0x7ff) - 1023;
  if (binary_exponent == -1023) return -1;  // subnormal
  // floor(binary_exponent x log10(2)) in integers: 78913 / 2^18 = 0.3010292
  // (the shift of a negative product rounds toward minus infinity).
  int exponent = (binary_exponent * 78913) >> 18;
  uint64_t rounded = 0;
  // The estimate may be one off: a retry or two settles it.
  for (int attempt = 0;; ++attempt) {
    const int shift = digits - 1 - exponent;
    if (shift > 22 || shift < -22 || attempt > 2) return -1;
    const double scaled =
        shift >= 0 ? magnitude * kPow10[shift] : magnitude / kPow10[-shift];  // one rounding
    if (scaled < static_cast<double>(kIntPow10[digits - 1])) {
      --exponent;
      continue;
    }
    if (scaled >= static_cast<double>(kIntPow10[digits])) {
      ++exponent;
      continue;
    }
    if (!RoundScaled(scaled, &rounded)) return -1;
    break;
  }
  if (rounded == kIntPow10[digits]) {  // 9.9996 to 4 digits: 10.00
    rounded = kIntPow10[digits - 1];
    ++exponent;
  }
  // `rounded` has exactly `digits` digits: d.ddd x 10^exponent.
  char* p = buffer;
  if (std::signbit(value)) *p++ = '-';
  if (digits <= kMaxPackedDigits && exponent >= -4 && exponent < digits) {
    return static_cast<int>(WritePackedFixed(PackedDigits(rounded, digits), digits, exponent, p) -
                            buffer);
  }
  // Room past the digits for CopyShort.
  char mantissa[24 + kCopyBytes];
  char* mantissa_end = mantissa + digits;
  WriteDigits(rounded, mantissa_end);
  const auto trimmed_end = [&](const char* from, const char* to) {
    while (to > from && to[-1] == '0') --to;  // trailing zeros of the fraction
    return to;
  };
  if (exponent >= -4 && exponent < digits) {
    if (exponent >= 0) {
      const char* point = mantissa + exponent + 1;
      p = CopyShort(p, mantissa, static_cast<size_t>(point - mantissa));
      const char* fraction_end = trimmed_end(point, mantissa_end);
      if (fraction_end > point) {
        *p++ = '.';
        p = CopyShort(p, point, static_cast<size_t>(fraction_end - point));
      }
    } else {
      // "0." and -exponent - 1 zeros (at most 3).
      std::memcpy(p, "0.000", 5);
      p += 1 - exponent;
      const char* fraction_end = trimmed_end(mantissa, mantissa_end);
      p = CopyShort(p, mantissa, static_cast<size_t>(fraction_end - mantissa));
    }
  } else {
    *p++ = mantissa[0];
    const char* fraction_end = trimmed_end(mantissa + 1, mantissa_end);
    if (fraction_end > mantissa + 1) {
      *p++ = '.';
      for (const char* d = mantissa + 1; d < fraction_end; ++d) *p++ = *d;
    }
    *p++ = 'e';
    *p++ = exponent < 0 ? '-' : '+';
    const int e = std::abs(exponent);
    if (e < 10) *p++ = '0';
    char exponent_digits[8];
    char* exponent_end = exponent_digits + sizeof(exponent_digits);
    for (const char* d = WriteDigits(static_cast<uint64_t>(e), exponent_end); d < exponent_end;
         ++d) {
      *p++ = *d;
    }
  }
  return static_cast<int>(p - buffer);
}

std::string ToChars(double value, std::chars_format format, int precision) {
  char fast[kFastBufferSize];
  const int length = format == std::chars_format::fixed ? FastFixed(value, precision, fast)
                                                        : FastGeneral(value, precision, fast);
  if (length >= 0) return std::string(fast, static_cast<size_t>(length));
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

// The plans' shapes (GiB with 2 decimals, figures to 4 digits) compiled with
// their precision known: its powers of ten and loops are constants.
int TryFixedDecimals(double value, int decimals, char* buffer) {
  return decimals == 2 ? FastFixed(value, 2, buffer) : FastFixed(value, decimals, buffer);
}

int TrySignificantDigits(double value, int digits, char* buffer) {
  return digits == 4 ? FastGeneral(value, 4, buffer) : FastGeneral(value, digits, buffer);
}

void AppendFixedDecimals(std::string* out, double value, int decimals) {
  char fast[kFastBufferSize];
  if (const int length = FastFixed(value, decimals, fast); length >= 0) {
    out->append(fast, static_cast<size_t>(length));
  } else {
    out->append(ToChars(value, std::chars_format::fixed, decimals));
  }
}

void AppendSignificantDigits(std::string* out, double value, int digits) {
  char fast[kFastBufferSize];
  if (const int length = FastGeneral(value, digits, fast); length >= 0) {
    out->append(fast, static_cast<size_t>(length));
  } else {
    out->append(ToChars(value, std::chars_format::general, digits));
  }
}

}  // namespace modelatlas
