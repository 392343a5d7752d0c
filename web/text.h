// Text for web pages: HTML escaping (every record string goes through
// Html()) and numbers formatted for people (1.5 × 10²⁰, 395M,
// 1,300,000,000, 20 April 2019, 262.6 kW).
#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "google/type/date.pb.h"

namespace modelatlas::web {

// Escapes & < > " ' for element text and quoted attribute values. Also
// neutralises bidirectional controls (U+202A-U+202E, U+2066-U+2069) as
// visible text ("[U+202E]"), so a right-to-left override shows up instead
// of reordering the page around it (a numeric reference would not: the
// browser decodes it back into the control). Right-to-left letters (Arabic,
// Hebrew) are kept as they are.
std::string Html(absl::string_view text);

// A text value safe inside an AIP-160 filter's string literal (quotes and
// backslashes dropped).
std::string FilterLiteral(std::string text);

// Percent-encodes a query-string or path component (RFC 3986 unreserved kept).
std::string UrlEncode(absl::string_view text);
// Decodes %XX and '+' (as a space in query strings when plus_is_space).
std::string UrlDecode(absl::string_view text, bool plus_is_space);

// 1300000000 -> "1,300,000,000" (rounded to a whole number).
std::string Grouped(double value);
// 395e6 -> "395M", 3.9e9 -> "3.9B", 1.2e12 -> "1.2T", 950 -> "950".
std::string ShortCount(double value);
// 1.5405e20 -> "1.5 × 10²⁰" (two significant digits); below 1e6 Grouped().
std::string Scientific(double value);
// 262600 -> "262.6 kW", 400 -> "400 W", 2.5e6 -> "2.5 MW".
std::string Watts(double watts);
// 16060522496 -> "16.1 GB" (decimal GB), 512e6 -> "512 MB".
std::string Bytes(double bytes);
// 171819.4 -> "$171,819"; below 10 two decimals ("$0.42").
std::string Usd(double usd);
// 12.345 -> "12.3"; at most `digits` decimals, trailing zeros dropped.
std::string Decimal(double value, int digits = 1);
// {2019, 4, 20} -> "20 April 2019"; day 0 -> "April 2019"; year only ->
// "2019"; unset -> "".
std::string DateText(const google::type::Date& date);

}  // namespace modelatlas::web
