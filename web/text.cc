#include "web/text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/text/human_units.h"

namespace modelatlas::web {

std::string Html(absl::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default: {
        const auto b0 = static_cast<unsigned char>(c);
        // U+202A..U+202E are E2 80 AA..AE; U+2066..U+2069 are E2 81 A6..A9.
        if (b0 == 0xE2 && i + 2 < text.size()) {
          const auto b1 = static_cast<unsigned char>(text[i + 1]);
          const auto b2 = static_cast<unsigned char>(text[i + 2]);
          const bool embedding = b1 == 0x80 && b2 >= 0xAA && b2 <= 0xAE;
          const bool isolate = b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9;
          if (embedding || isolate) {
            const int code = 0x2000 + ((b1 & 0x3F) << 6) + (b2 & 0x3F);
            // Written out as visible text: a numeric reference (&#x202E;)
            // would be decoded by the browser and reorder the text after it.
            absl::StrAppendFormat(&out, "[U+%04X]", code);
            i += 2;
            break;
          }
        }
        if (b0 < 0x20 && c != '\n' && c != '\t') break;  // other controls dropped
        out += c;
      }
    }
  }
  return out;
}

std::string FilterLiteral(std::string text) {
  text.erase(std::remove_if(text.begin(), text.end(), [](char c) { return c == '"' || c == '\\'; }),
             text.end());
  return text;
}

std::string UrlEncode(absl::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      absl::StrAppendFormat(&out, "%%%02X", u);
    }
  }
  return out;
}

std::string UrlDecode(absl::string_view text, bool plus_is_space) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+' && plus_is_space) {
      out += ' ';
    } else if (c == '%' && i + 2 < text.size() && std::isxdigit(text[i + 1]) &&
               std::isxdigit(text[i + 2])) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string Grouped(double value) {
  if (!std::isfinite(value)) return "—";
  return WithThousands(value);
}

std::string Decimal(double value, int digits) {
  std::string s = absl::StrFormat("%.*f", digits, value);
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

namespace {

// Two significant digits: "3.9" below 10, "395" from 10 up.
std::string Significant(double scaled) {
  return scaled < 9.95 ? Decimal(scaled, 1) : absl::StrFormat("%.0f", scaled);
}

std::string Superscript(int exponent) {
  static const char* const kDigits[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
  std::string out = exponent < 0 ? "⁻" : "";
  for (const char c : std::to_string(std::abs(exponent))) out += kDigits[c - '0'];
  return out;
}

}  // namespace

std::string ShortCount(double value) {
  if (!std::isfinite(value)) return "—";
  const double v = std::fabs(value);
  const char* sign = value < 0 ? "-" : "";
  if (v >= 999.5e9) return absl::StrCat(sign, Significant(v / 1e12), "T");
  if (v >= 999.5e6) return absl::StrCat(sign, Significant(v / 1e9), "B");
  if (v >= 999.5e3) return absl::StrCat(sign, Significant(v / 1e6), "M");
  if (v >= 1e4) return absl::StrCat(sign, Significant(v / 1e3), "K");
  return Grouped(value);
}

std::string Scientific(double value) {
  if (!std::isfinite(value)) return "—";
  if (std::fabs(value) < 1e6) return Decimal(value, 2);
  int exponent = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  double mantissa = value / std::pow(10.0, exponent);
  if (std::fabs(mantissa) >= 9.95) {
    mantissa /= 10;
    ++exponent;
  }
  return absl::StrCat(Decimal(mantissa, 1), " × 10", Superscript(exponent));
}

std::string Watts(double watts) {
  if (watts >= 1e6) return Decimal(watts / 1e6, 1) + " MW";
  if (watts >= 1e3) return Decimal(watts / 1e3, 1) + " kW";
  return Decimal(watts, 1) + " W";
}

std::string Bytes(double bytes) {
  const double v = std::fabs(bytes);
  if (v >= 1e12) return Decimal(bytes / 1e12, 2) + " TB";
  if (v >= 1e9) return Decimal(bytes / 1e9, 1) + " GB";
  if (v >= 1e6) return Decimal(bytes / 1e6, 0) + " MB";
  if (v >= 1e3) return Decimal(bytes / 1e3, 0) + " kB";
  return Decimal(bytes, 0) + " B";
}

std::string Usd(double usd) {
  if (std::fabs(usd) < 10) return "$" + absl::StrFormat("%.2f", usd);
  return "$" + Grouped(usd);
}

std::string DateText(const google::type::Date& date) {
  return HumanDate(date.year(), date.month(), date.day());
}

}  // namespace modelatlas::web
