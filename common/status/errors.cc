#include "common/status/errors.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace modelatlas {
namespace {

// Payload type URLs; values are tab/newline separated text (no tabs or
// newlines occur in field paths, reasons or resource names).
constexpr char kViolationsUrl[] = "type.modelatlas.dev/field_violations";
constexpr char kReasonUrl[] = "type.modelatlas.dev/reason";
constexpr char kResourceUrl[] = "type.modelatlas.dev/resource";

std::string Sanitize(absl::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\t' || c == '\n') c = ' ';
  }
  return out;
}

}  // namespace

size_t InvalidUtf8Offset(absl::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const size_t size = text.size();
  size_t i = 0;
  while (i < size) {
    const unsigned char c = bytes[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;  // bounds of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) low = 0xA0;   // overlong
      if (c == 0xED) high = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) low = 0x90;   // overlong
      if (c == 0xF4) high = 0x8F;  // beyond U+10FFFF
    } else {
      return i;
    }
    if (i + length > size || bytes[i + 1] < low || bytes[i + 1] > high) return i;
    for (size_t k = 2; k < length; ++k) {
      if ((bytes[i + k] & 0xC0) != 0x80) return i;
    }
    i += length;
  }
  return absl::string_view::npos;
}

std::string ValidUtf8(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const size_t bad = InvalidUtf8Offset(text);
    if (bad == absl::string_view::npos) {
      out.append(text.data(), text.size());
      break;
    }
    out.append(text.data(), bad);
    out.append("\xEF\xBF\xBD");  // U+FFFD
    text.remove_prefix(bad + 1);
  }
  return out;
}

std::string QuoteInput(absl::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return ValidUtf8(text);
  size_t cut = max_bytes;
  // Back to the start of a character (at most 3 continuation bytes).
  for (int k = 0; k < 3 && cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80; ++k) {
    --cut;
  }
  return absl::StrCat(ValidUtf8(text.substr(0, cut)), "... (", text.size(), " bytes)");
}

void FieldViolations::Add(std::string field, std::string description) {
  violations_.push_back({std::move(field), std::move(description)});
}

absl::Status FieldViolations::ToStatus() const {
  if (violations_.empty()) return absl::OkStatus();
  std::vector<std::string> messages;
  std::string payload;
  for (const FieldViolation& v : violations_) {
    messages.push_back(absl::StrCat(v.field, ": ", v.description));
    absl::StrAppend(&payload, Sanitize(v.field), "\t", Sanitize(v.description), "\n");
  }
  absl::Status status = absl::InvalidArgumentError(absl::StrJoin(messages, "; "));
  status.SetPayload(kViolationsUrl, absl::Cord(payload));
  return status;
}

absl::Status InvalidFieldError(absl::string_view field, absl::string_view description) {
  FieldViolations violations;
  violations.Add(std::string(field), std::string(description));
  return violations.ToStatus();
}

absl::Status ResourceNotFoundError(absl::string_view resource_type,
                                   absl::string_view resource_name) {
  absl::Status status = absl::NotFoundError(
      absl::StrCat(resource_type, " \"", QuoteInput(resource_name), "\" not found"));
  status.SetPayload(kResourceUrl, absl::Cord(absl::StrCat(Sanitize(resource_type), "\t",
                                                          Sanitize(resource_name))));
  return WithReason(std::move(status), "RESOURCE_NOT_FOUND");
}

absl::Status WithReason(absl::Status status, absl::string_view reason) {
  status.SetPayload(kReasonUrl, absl::Cord(std::string(reason)));
  return status;
}

absl::Status PrefixFieldViolations(const absl::Status& status, absl::string_view prefix) {
  std::vector<FieldViolation> violations = GetFieldViolations(status);
  if (violations.empty()) return status;
  FieldViolations prefixed;
  for (FieldViolation& v : violations) {
    prefixed.Add(absl::StrCat(prefix, v.field), std::move(v.description));
  }
  return prefixed.ToStatus();
}

std::vector<FieldViolation> GetFieldViolations(const absl::Status& status) {
  std::vector<FieldViolation> out;
  auto payload = status.GetPayload(kViolationsUrl);
  if (!payload.has_value()) return out;
  for (absl::string_view line : absl::StrSplit(std::string(*payload), '\n', absl::SkipEmpty())) {
    std::pair<std::string, std::string> parts = absl::StrSplit(line, absl::MaxSplits('\t', 1));
    out.push_back({parts.first, parts.second});
  }
  return out;
}

std::string GetReason(const absl::Status& status) {
  auto payload = status.GetPayload(kReasonUrl);
  return payload.has_value() ? std::string(*payload) : std::string();
}

std::pair<std::string, std::string> GetResource(const absl::Status& status) {
  auto payload = status.GetPayload(kResourceUrl);
  if (!payload.has_value()) return {};
  std::pair<std::string, std::string> parts =
      absl::StrSplit(std::string(*payload), absl::MaxSplits('\t', 1));
  return parts;
}

}  // namespace modelatlas
