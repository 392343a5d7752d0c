#include "catalog-service/page_token.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status/errors.h"

namespace modelatlas::catalog {
namespace {
constexpr absl::string_view kTokenVersion = "v1";
}  // namespace

std::string EncodePageToken(const PageCursor& cursor) {
  return absl::WebSafeBase64Escape(
      absl::StrCat(kTokenVersion, "\n", cursor.query, "\n", cursor.after_id));
}

absl::StatusOr<PageCursor> DecodePageToken(absl::string_view token, absl::string_view query) {
  std::string raw;
  if (!absl::WebSafeBase64Unescape(token, &raw)) {
    return InvalidFieldError("page_token", "not a page token issued by this service");
  }
  std::vector<std::string> parts = absl::StrSplit(raw, absl::MaxSplits('\n', 2));
  if (parts.size() != 3 || parts[0] != kTokenVersion) {
    return InvalidFieldError("page_token", "not a page token issued by this service");
  }
  if (parts[1] != query) {
    return InvalidFieldError("page_token",
                             "the token was issued for a different query; request the first page "
                             "again with the new parameters");
  }
  return PageCursor{parts[2], parts[1]};
}

absl::StatusOr<int> EffectivePageSize(int requested, int default_size, int max_size) {
  if (requested < 0) {
    return InvalidFieldError("page_size", absl::StrCat("must not be negative, got ", requested));
  }
  if (requested == 0) return default_size;
  return requested > max_size ? max_size : requested;
}

}  // namespace modelatlas::catalog
