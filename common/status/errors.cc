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
  absl::Status status =
      absl::NotFoundError(absl::StrCat(resource_type, " \"", resource_name, "\" not found"));
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
