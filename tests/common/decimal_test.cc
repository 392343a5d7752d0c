// FixedDecimals and SignificantDigits write what printf writes.
#include "common/text/decimal.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace modelatlas {
namespace {

std::string Printf(const char* spec, int precision, double value) {
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer), spec, precision, value);
  return buffer;
}

std::vector<double> Values() {
  std::vector<double> values = {0.0,
                                -0.0,
                                0.5,
                                1.5,
                                2.5,
                                0.125,
                                0.9,
                                1.0 / 3,
                                0.005,
                                0.015,
                                1e-7,
                                123456.789,
                                8030261248.0,
                                80e9 / 1073741824.0,
                                9.9999,
                                99995.0,
                                -42.4242,
                                1e300,
                                -1e-300,
                                std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::denorm_min(),
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity()};
  std::mt19937_64 random(20261201);
  std::uniform_real_distribution<double> exponent(-12, 22);
  std::uniform_real_distribution<double> mantissa(-10, 10);
  for (int i = 0; i < 20000; ++i)
    values.push_back(mantissa(random) * std::pow(10, exponent(random)));
  return values;
}

TEST(DecimalTest, FixedDecimalsIsPrintfF) {
  for (double value : Values()) {
    for (int decimals : {0, 1, 2, 4, 6}) {
      ASSERT_EQ(FixedDecimals(value, decimals), Printf("%.*f", decimals, value))
          << value << " with " << decimals;
    }
  }
}

TEST(DecimalTest, SignificantDigitsIsPrintfG) {
  for (double value : Values()) {
    for (int digits : {1, 2, 3, 4, 5, 6, 7, 8, 9, 17}) {  // 1-8: the packed digits
      ASSERT_EQ(SignificantDigits(value, digits), Printf("%.*g", digits, value))
          << value << " with " << digits;
    }
  }
}

// The texts are memoized per thread by value, format and precision: the same
// values again, in another order, with both formats interleaved, must still
// give printf's text each time.
TEST(DecimalTest, RepeatedValuesInAnyOrderStillMatchPrintf) {
  const std::vector<double> values = Values();
  for (int pass = 0; pass < 2; ++pass) {
    for (auto it = values.rbegin(); it != values.rend(); ++it) {
      for (int precision : {2, 4}) {
        ASSERT_EQ(SignificantDigits(*it, precision), Printf("%.*g", precision, *it)) << *it;
        ASSERT_EQ(FixedDecimals(*it, precision), Printf("%.*f", precision, *it)) << *it;
      }
    }
  }
}

// Both are written by integer arithmetic unless the value is too close to a
// tie for that to be exact (then by to_chars): decimal ties ("2.675", which
// is 2.67499999... in binary), their neighbours one ulp apart, round numbers
// and the carries of 9.9995 must all still be printf's text.
TEST(DecimalTest, NearTiesAndCarriesMatchPrintf) {
  std::vector<double> values;
  std::mt19937_64 random(1201);
  std::uniform_int_distribution<int> digits(0, 999999);
  std::uniform_int_distribution<int> exponent(-8, 16);
  for (int i = 0; i < 20000; ++i) {
    const std::string text =
        std::to_string(digits(random)) + "5e" + std::to_string(exponent(random));
    const double tie = std::strtod(text.c_str(), nullptr);
    for (double v : {tie, std::nextafter(tie, 0.0), std::nextafter(tie, 1e300), -tie}) {
      values.push_back(v);
    }
  }
  for (double base : {9.9995, 99.995, 0.99995, 999.95, 9999.5, 1.0, 10.0, 1e15, 1e-4, 1e-5}) {
    values.push_back(base);
    values.push_back(std::nextafter(base, 0.0));
    values.push_back(std::nextafter(base, 1e300));
  }
  for (int i = 0; i < 4000; ++i) values.push_back(i / 8.0);  // exact binary ties
  for (double value : values) {
    for (int precision = 0; precision <= 15; ++precision) {
      ASSERT_EQ(FixedDecimals(value, precision), Printf("%.*f", precision, value))
          << value << " with " << precision;
      ASSERT_EQ(SignificantDigits(value, precision), Printf("%.*g", precision, value))
          << value << " with " << precision;
      std::string appended = "x";
      AppendFixedDecimals(&appended, value, precision);
      ASSERT_EQ(appended, "x" + Printf("%.*f", precision, value)) << value;
      appended = "y";
      AppendSignificantDigits(&appended, value, precision);
      ASSERT_EQ(appended, "y" + Printf("%.*g", precision, value)) << value;
    }
  }
}

TEST(DecimalTest, AppendedTextsAreThePrintfTextsForEveryKindOfValue) {
  for (double value : Values()) {
    for (int precision : {0, 2, 4, 17, 60}) {
      std::string fixed = "a";
      AppendFixedDecimals(&fixed, value, precision);
      ASSERT_EQ(fixed, "a" + Printf("%.*f", precision, value)) << value;
      std::string general;
      AppendSignificantDigits(&general, value, precision);
      ASSERT_EQ(general, Printf("%.*g", precision, value)) << value;
    }
  }
}

// The fast paths written straight into a caller's buffer: printf's text when
// they answer, nothing past kFastDecimalBytes written, and an answer for
// most values. Every binary exponent a double has (the decimal exponent is
// estimated from it), near ties and carries at 2 and 4 digits (the plan's
// shapes), random values, and the values of the other tests.
TEST(DecimalTest, FastPathsIntoABufferArePrintfsTextOrDecline) {
  std::vector<double> values = Values();
  std::mt19937_64 random(1802);
  std::uniform_real_distribution<double> fraction(1.0, 2.0);
  for (int exponent = -1074; exponent <= 1023; ++exponent) {
    for (int i = 0; i < 4; ++i) {
      const double v = std::ldexp(i == 0 ? 1.0 : fraction(random), exponent);
      values.push_back(v);
      values.push_back(-v);
    }
  }
  for (double base : {9.9995, 99.995, 999.95, 9999.5, 0.99995, 0.00099995, 1.005, 2.675, 0.125,
                      12.345, 1.0, 10.0, 100.0, 1000.0, 1e4, 1e5, 1e-4, 1e-5}) {
    double v = base;
    for (int step = 0; step < 50; ++step) v = std::nextafter(v, 0.0);
    for (int step = 0; step < 100; ++step, v = std::nextafter(v, 1e300)) values.push_back(v);
  }
  constexpr char kUntouched = '\x7f';
  int fixed_answers = 0;
  int general_answers = 0;
  for (double value : values) {
    for (int precision : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15}) {
      char buffer[kFastDecimalBytes + 16];
      std::fill(std::begin(buffer), std::end(buffer), kUntouched);
      if (const int length = TryFixedDecimals(value, precision, buffer); length >= 0) {
        ASSERT_EQ(std::string(buffer, length), Printf("%.*f", precision, value))
            << value << " with " << precision;
        ++fixed_answers;
      }
      for (size_t i = kFastDecimalBytes; i < sizeof(buffer); ++i) ASSERT_EQ(buffer[i], kUntouched);
      if (const int length = TrySignificantDigits(value, precision, buffer); length >= 0) {
        ASSERT_EQ(std::string(buffer, length), Printf("%.*g", precision, value))
            << value << " with " << precision;
        ++general_answers;
      }
      for (size_t i = kFastDecimalBytes; i < sizeof(buffer); ++i) ASSERT_EQ(buffer[i], kUntouched);
    }
  }
  // Not a test of declining: most are answered (not the huge, tiny or
  // subnormal ones, nor precision 0 for %g).
  EXPECT_GT(fixed_answers, static_cast<int>(values.size()) * 2);
  EXPECT_GT(general_answers, static_cast<int>(values.size()) * 2);
}

TEST(DecimalTest, NotANumberAsPrintfWritesIt) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(FixedDecimals(nan, 2), Printf("%.*f", 2, nan));
  EXPECT_EQ(SignificantDigits(nan, 4), Printf("%.*g", 4, nan));
}

TEST(DecimalTest, PrecisionBeyondTheBufferStillMatchesPrintf) {
  EXPECT_EQ(FixedDecimals(1e300, 60), Printf("%.*f", 60, 1e300));
}

}  // namespace
}  // namespace modelatlas
