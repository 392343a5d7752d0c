// TextWriter writes what the formatters it replaces write: absl::StrCat's
// integers, printf's "%.0f" and "%g", and every piece in order, however long.
// TextMemo gives back a text only for the very key it was remembered with.
#include "common/text/text_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/text/decimal.h"
#include "common/text/text_memo.h"

namespace modelatlas {
namespace {

std::vector<int64_t> Integers() {
  std::vector<int64_t> values = {0,
                                 1,
                                 -1,
                                 std::numeric_limits<int64_t>::max(),
                                 std::numeric_limits<int64_t>::min(),
                                 std::numeric_limits<int64_t>::min() + 1};
  // Every power of ten and its neighbours: the digit count changes there.
  for (int64_t power = 1; power <= std::numeric_limits<int64_t>::max() / 10; power *= 10) {
    for (int64_t v : {power - 1, power, power + 1, 10 * power - 1}) {
      values.push_back(v);
      values.push_back(-v);
    }
  }
  // ... and of two (the digit count is estimated from the bit width).
  for (int bits = 1; bits < 63; ++bits) {
    const int64_t power = int64_t{1} << bits;
    for (int64_t v : {power - 1, power, power + 1}) values.push_back(v);
  }
  std::mt19937_64 random(2026120215);
  std::uniform_int_distribution<int> width(0, 63);
  for (int i = 0; i < 50000; ++i) {
    const uint64_t bits = random() >> width(random);
    values.push_back(static_cast<int64_t>(bits));
  }
  return values;
}

TEST(TextWriterTest, IntegersAreStrCatsDigits) {
  for (int64_t value : Integers()) {
    std::string out;
    TextWriter(&out).Integer(value);
    ASSERT_EQ(out, absl::StrCat(value)) << value;
  }
}

TEST(TextWriterTest, UnsignedDecimalIsPrintfsForEveryWidth) {
  std::vector<uint64_t> values = {0,
                                  9,
                                  10,
                                  std::numeric_limits<uint64_t>::max(),
                                  10000000000000000000ull,
                                  9999999999999999999ull};
  for (int64_t v : Integers()) values.push_back(static_cast<uint64_t>(v));
  for (uint64_t value : values) {
    char buffer[24];
    char* end = WriteUnsignedDecimal(value, buffer);
    char expected[32];
    std::snprintf(expected, sizeof(expected), "%llu", static_cast<unsigned long long>(value));
    ASSERT_EQ(std::string(buffer, end), expected) << value;
  }
}

std::vector<double> Doubles() {
  std::vector<double> values = {0.0,
                                -0.0,
                                0.5,
                                1.5,
                                2.5,
                                -0.5,
                                -2.5,
                                0.4999999999999999,
                                1e-9,
                                999.95,
                                1e15,
                                1e15 + 0.5,
                                8030261248.0,
                                16060522496.0,
                                4503599627370495.5,  // 2^52 - 1/2: a tie below 2^53
                                9007199254740991.0,  // 2^53 - 1
                                9007199254740992.0,  // 2^53: printf's path from here
                                9007199254740994.0,
                                -9007199254740994.0,
                                4.0e18,
                                9223372036854774784.0,  // the largest double below 2^63
                                -9223372036854775808.0,
                                9223372036854775808.0,  // 2^63: printf itself
                                1e19,
                                -1e300,
                                std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::denorm_min(),
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::quiet_NaN()};
  std::mt19937_64 random(20261202);
  std::uniform_real_distribution<double> exponent(-10, 20);
  std::uniform_real_distribution<double> mantissa(-10, 10);
  for (int i = 0; i < 50000; ++i) {
    values.push_back(mantissa(random) * std::pow(10, exponent(random)));
  }
  for (int i = 0; i < 4000; ++i) values.push_back(i / 4.0);  // exact binary ties
  return values;
}

// What estimator::AppendWholeNumber (core/arithmetic_text.h) wrote before
// the writer, spelled out: the int64 nearest below 2^53, else printf.
std::string WholeNumberAsBefore(double value) {
  if (std::abs(value) < 9007199254740992.0) {
    return absl::StrCat(static_cast<int64_t>(std::nearbyint(value)));
  }
  return absl::StrFormat("%.0f", value);
}

TEST(TextWriterTest, WholeNumbersAreTheInt64OrPrintfsText) {
  for (double value : Doubles()) {
    std::string out;
    TextWriter(&out).WholeNumber(value);
    ASSERT_EQ(out, WholeNumberAsBefore(value)) << value;
    // And printf's "%.0f" itself wherever the int64 has the same sign.
    if (!(value < 0 && value >= -0.5) && !(value == 0 && std::signbit(value))) {
      char expected[512];
      std::snprintf(expected, sizeof(expected), "%.0f", value);
      ASSERT_EQ(out, expected) << value;
    }
  }
}

TEST(TextWriterTest, SignificantDigitsArePrintfsG) {
  for (double value : Doubles()) {
    for (int digits : {1, 4, 6}) {
      std::string out = "x";
      TextWriter(&out).Literal(" ").SignificantDigits(value, digits).Literal(";");
      char expected[512];
      std::snprintf(expected, sizeof(expected), "x %.*g;", digits, value);
      ASSERT_EQ(out, expected) << value;
    }
  }
}

// Pieces past the buffer's 256 bytes, a text longer than the buffer and
// numbers that straddle its end all arrive in order.
TEST(TextWriterTest, LongTextsArriveWholeAndInOrder) {
  std::string expected = "kept: ";
  std::string out = expected;
  {
    TextWriter text(&out);
    const std::string long_text(700, 'z');
    for (int i = 0; i < 300; ++i) {
      text.Literal("piece ").Integer(i * 1234567).Literal(", ");
      absl::StrAppend(&expected, "piece ", i * 1234567, ", ");
      if (i % 50 == 0) {
        text.Text(long_text).WholeNumber(i + 0.5);
        absl::StrAppend(&expected, long_text, WholeNumberAsBefore(i + 0.5));
      }
    }
  }
  EXPECT_EQ(out, expected);
}

TEST(TextWriterTest, FlushAppendsWhatIsWrittenSoFarAndWritingGoesOn) {
  std::string out;
  TextWriter text(&out);
  text.Literal("a").Integer(-42);
  EXPECT_EQ(out, "");
  text.Flush();
  EXPECT_EQ(out, "a-42");
  text.Text("b").Flush();
  EXPECT_EQ(out, "a-42b");
}

using SmallMemo = TextMemo<3, 8>;

TEST(TextMemoTest, ATextComesBackForItsKeyOnly) {
  SmallMemo memo;
  const SmallMemo::Key key = {1, SmallMemo::Word(2.5), 3};
  EXPECT_EQ(memo.Find(key), nullptr);
  EXPECT_EQ(memo.Remember(key, "two and a half"), "two and a half");
  ASSERT_NE(memo.Find(key), nullptr);
  EXPECT_EQ(*memo.Find(key), "two and a half");
  // A key that differs in any one word, or only in a double's sign, is
  // another key.
  for (size_t word = 0; word < key.size(); ++word) {
    SmallMemo::Key other = key;
    other[word] ^= 1;
    EXPECT_EQ(memo.Find(other), nullptr) << word;
  }
  EXPECT_EQ(memo.Find({1, SmallMemo::Word(-2.5), 3}), nullptr);
  EXPECT_NE(SmallMemo::Word(0.0), SmallMemo::Word(-0.0));
}

// More keys than slots: each Find answers its own key's text or nothing,
// never another key's, and the newest key of a slot is found.
TEST(TextMemoTest, KeysSharingASlotNeverAnswerForEachOther) {
  TextMemo<2, 16> memo;  // 16 slots
  for (uint64_t i = 0; i < 1000; ++i) {
    memo.Remember({i, i * 7}, absl::StrCat("text ", i));
    ASSERT_NE(memo.Find({i, i * 7}), nullptr);
    EXPECT_EQ(*memo.Find({i, i * 7}), absl::StrCat("text ", i));
  }
  int found = 0;
  for (uint64_t i = 0; i < 1000; ++i) {
    if (const std::string* text = memo.Find({i, i * 7})) {
      ++found;
      EXPECT_EQ(*text, absl::StrCat("text ", i));
    }
  }
  EXPECT_GT(found, 0);
  EXPECT_LE(found, 16);
}

}  // namespace
}  // namespace modelatlas
