// The web front's text helpers: HTML escaping and numbers for people.
#include "web/text.h"

#include <gtest/gtest.h>

namespace modelatlas::web {
namespace {

TEST(HtmlTest, EscapesMarkupAndQuotes) {
  EXPECT_EQ(Html("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(Html("a & b \"c\" 'd'"), "a &amp; b &quot;c&quot; &#39;d&#39;");
  EXPECT_EQ(Html("plain text, 1.5 × 10²⁰"), "plain text, 1.5 × 10²⁰");
}

TEST(HtmlTest, ShowsBidirectionalControlsInsteadOfApplyingThem) {
  EXPECT_EQ(Html("abc\u202Edef"), "abc[U+202E]def");
  EXPECT_EQ(Html("\u05E9\u05DC\u05D5\u05DD"), "\u05E9\u05DC\u05D5\u05DD");  // Hebrew letters stay
  EXPECT_EQ(Html("\u2066x\u2069"), "[U+2066]x[U+2069]");
  // Other characters of the same UTF-8 lead byte pass through.
  EXPECT_EQ(Html("a\u2014b"), "a\u2014b");
}

TEST(HtmlTest, DropsControlCharactersButKeepsLines) {
  EXPECT_EQ(Html(std::string("a\x01"
                             "b\nc",
                             5)),
            "ab\nc");
}

TEST(UrlTest, EncodesAndDecodes) {
  EXPECT_EQ(UrlEncode("a b/c&d=é"), "a%20b%2Fc%26d%3D%C3%A9");
  EXPECT_EQ(UrlDecode("a%20b%2Fc+d", true), "a b/c d");
  EXPECT_EQ(UrlDecode("a+b%zz", false), "a+b%zz");
}

TEST(NumbersTest, Grouped) {
  EXPECT_EQ(Grouped(1300000000), "1,300,000,000");
  EXPECT_EQ(Grouped(524288), "524,288");
  EXPECT_EQ(Grouped(999), "999");
  EXPECT_EQ(Grouped(-1234.4), "-1,234");
  EXPECT_EQ(Grouped(0), "0");
}

TEST(NumbersTest, ShortCount) {
  EXPECT_EQ(ShortCount(395e6), "395M");
  EXPECT_EQ(ShortCount(3.9e9), "3.9B");
  EXPECT_EQ(ShortCount(8030261248), "8B");
  EXPECT_EQ(ShortCount(70.6e9), "71B");
  EXPECT_EQ(ShortCount(1.2e12), "1.2T");
  EXPECT_EQ(ShortCount(124e6), "124M");
  EXPECT_EQ(ShortCount(950), "950");
}

TEST(NumbersTest, Scientific) {
  EXPECT_EQ(Scientific(1.5405e20), "1.5 × 10²⁰");
  EXPECT_EQ(Scientific(2.2e22), "2.2 × 10²²");
  EXPECT_EQ(Scientific(9.97e23), "1 × 10²⁴");
  EXPECT_EQ(Scientific(3e8), "3 × 10⁸");
  EXPECT_EQ(Scientific(1234.5), "1234.5");
}

TEST(NumbersTest, WattsBytesDollars) {
  EXPECT_EQ(Watts(262600), "262.6 kW");
  EXPECT_EQ(Watts(400), "400 W");
  EXPECT_EQ(Watts(2.5e6), "2.5 MW");
  EXPECT_EQ(Bytes(16060522496), "16.1 GB");
  EXPECT_EQ(Bytes(536870912), "537 MB");
  EXPECT_EQ(Bytes(1.5e12), "1.5 TB");
  EXPECT_EQ(Usd(171819.4), "$171,819");
  EXPECT_EQ(Usd(0.42), "$0.42");
  EXPECT_EQ(Decimal(12.345, 1), "12.3");
  EXPECT_EQ(Decimal(50, 2), "50");
}

TEST(DatesTest, DayMonthYear) {
  google::type::Date date;
  EXPECT_EQ(DateText(date), "");
  date.set_year(2019);
  EXPECT_EQ(DateText(date), "2019");
  date.set_month(4);
  EXPECT_EQ(DateText(date), "April 2019");
  date.set_day(20);
  EXPECT_EQ(DateText(date), "20 April 2019");
}

}  // namespace
}  // namespace modelatlas::web
