// Opaque page tokens (AIP-158). A token carries where the previous page
// ended and a fingerprint of the query it was issued for, so that a token
// reused with other parameters is refused instead of giving a wrong page.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace modelatlas::catalog {

struct PageCursor {
  // The last id of the previous page; the next page starts after it.
  std::string after_id;
  // Fingerprint of the query (collection, filter, order) the token belongs to.
  std::string query;
};

std::string EncodePageToken(const PageCursor& cursor);
// INVALID_ARGUMENT (field page_token) when malformed or issued for another query.
absl::StatusOr<PageCursor> DecodePageToken(absl::string_view token, absl::string_view query);

// Page size after AIP-158: 0 = default, above max = max, negative = INVALID_ARGUMENT.
absl::StatusOr<int> EffectivePageSize(int requested, int default_size, int max_size);

}  // namespace modelatlas::catalog
