// Structured errors for domain code. Domain code returns absl::Status; these
// helpers attach the machine-readable detail (which field, which resource,
// which reason) as status payloads, and common/grpc_status.h turns them into
// google.rpc error details at the gRPC boundary. No gRPC here.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace modelatlas {

// Domain used in every google.rpc.ErrorInfo ModelAtlas sends.
inline constexpr absl::string_view kErrorDomain = "modelatlas.dev";

// One invalid request field and why.
struct FieldViolation {
  std::string field;
  std::string description;
};

// Collects field violations while validating a request; ToStatus() gives
// OK when there are none, else INVALID_ARGUMENT naming every bad field.
class FieldViolations {
 public:
  void Add(std::string field, std::string description);
  bool empty() const { return violations_.empty(); }
  const std::vector<FieldViolation>& violations() const { return violations_; }
  absl::Status ToStatus() const;

 private:
  std::vector<FieldViolation> violations_;
};

// INVALID_ARGUMENT for one field: "field: description".
absl::Status InvalidFieldError(absl::string_view field, absl::string_view description);

// NOT_FOUND naming the resource, e.g. ("Model", "models/x").
absl::Status ResourceNotFoundError(absl::string_view resource_type,
                                   absl::string_view resource_name);

// Returns `status` with an ErrorInfo reason (UPPER_SNAKE_CASE) attached.
absl::Status WithReason(absl::Status status, absl::string_view reason);

// The same status with every field-violation path prefixed ("inline_model."),
// for errors of a nested part of a request; other statuses pass unchanged.
absl::Status PrefixFieldViolations(const absl::Status& status, absl::string_view prefix);

// The offset of the first byte of `text` that is not part of well-formed
// UTF-8 (overlong forms, surrogates and code points beyond U+10FFFF
// included), or absl::string_view::npos when all of it is.
size_t InvalidUtf8Offset(absl::string_view text);
// `text` with every byte that is not part of well-formed UTF-8 replaced by
// U+FFFD, so it can go into a protobuf string.
std::string ValidUtf8(absl::string_view text);
// Caller input as error messages quote it: valid UTF-8, cut at a character
// boundary to at most `max_bytes` (then followed by "... (N bytes)"), so an
// error never echoes a whole input back.
inline constexpr size_t kMaxQuotedBytes = 200;
std::string QuoteInput(absl::string_view text, size_t max_bytes = kMaxQuotedBytes);

// Readers of the attached detail (used by the gRPC adapter and tests).
std::vector<FieldViolation> GetFieldViolations(const absl::Status& status);
std::string GetReason(const absl::Status& status);
// The resource (type, name) a status is about, or empty strings.
std::pair<std::string, std::string> GetResource(const absl::Status& status);

}  // namespace modelatlas
