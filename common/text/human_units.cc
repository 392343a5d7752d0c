#include "common/text/human_units.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace modelatlas {
namespace {

// "1234567" -> "1,234,567" (digits only, an optional leading minus).
std::string GroupDigits(const std::string& digits) {
  const size_t start = !digits.empty() && digits[0] == '-' ? 1 : 0;
  std::string out = digits.substr(0, start);
  const size_t count = digits.size() - start;
  for (size_t i = 0; i < count; ++i) {
    if (i > 0 && (count - i) % 3 == 0) out += ',';
    out += digits[start + i];
  }
  return out;
}

}  // namespace

std::string WithThousands(double value) {
  if (!std::isfinite(value)) return absl::StrCat(value);
  return GroupDigits(absl::StrFormat("%.0f", value));
}

std::string HumanCount(double value) {
  const struct {
    double scale;
    const char* suffix;
  } units[] = {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}};
  for (const auto& unit : units) {
    if (value >= unit.scale) return absl::StrFormat("%.3g%s", value / unit.scale, unit.suffix);
  }
  return absl::StrFormat("%.0f", value);
}

std::string HumanPower(double watts) {
  if (watts >= 1e6) return absl::StrFormat("%.1f MW", watts / 1e6);
  if (watts >= 1e3) return absl::StrFormat("%.1f kW", watts / 1e3);
  return absl::StrFormat("%.0f W", watts);
}

std::string HumanUsd(double usd) {
  if (std::fabs(usd) < 100) return absl::StrFormat("$%.2f", usd);
  return absl::StrCat("$", WithThousands(usd));
}

std::string TimesTenTo(double value) {
  if (!std::isfinite(value) || std::fabs(value) < 1e6) return WithThousands(value);
  int exponent = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  std::string mantissa = absl::StrFormat("%.3g", value / std::pow(10.0, exponent));
  if (mantissa == "10" || mantissa == "-10") {  // 9.996e20 rounds up to 1 x 10^21
    ++exponent;
    mantissa = value < 0 ? "-1" : "1";
  }
  return absl::StrCat(mantissa, " × 10^", exponent);
}

std::string HumanDate(int year, int month, int day) {
  static const char* const kMonths[] = {"January",   "February", "March",    "April",
                                        "May",       "June",     "July",     "August",
                                        "September", "October",  "November", "December"};
  if (year == 0) return "";
  if (month < 1 || month > 12) return absl::StrCat(year);
  if (day == 0) return absl::StrCat(kMonths[month - 1], " ", year);
  return absl::StrCat(day, " ", kMonths[month - 1], " ", year);
}

}  // namespace modelatlas
