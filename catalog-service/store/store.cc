#include "catalog-service/store/store.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"

namespace modelatlas::catalog {

absl::string_view RecordKindName(RecordKind kind) {
  return kind == RecordKind::kModel ? "model" : "hardware";
}

absl::Status StaleEtagError(RecordKind kind, absl::string_view id, int64_t expected,
                            int64_t actual) {
  return WithReason(absl::AbortedError(absl::StrCat(
                        RecordKindName(kind), " \"", id, "\" has changed: etag r", expected,
                        " is stale, the record is at r", actual, "; read it again and retry")),
                    "ETAG_MISMATCH");
}

}  // namespace modelatlas::catalog
