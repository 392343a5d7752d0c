#include "catalog-service/page_token.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status/errors.h"

namespace modelatlas::catalog {
namespace {

// v2: every field length-prefixed ("<bytes>:<field>"), so a field may hold
// any byte (a filter with newlines or CRLF); v1 joined them with '\n'.
constexpr absl::string_view kTokenVersion = "v2";

void AppendField(absl::string_view field, std::string* out) {
  absl::StrAppend(out, field.size(), ":", field);
}

// Reads one field written by AppendField from the front of `in`.
bool ReadField(absl::string_view* in, std::string* field) {
  const size_t colon = in->find(':');
  if (colon == absl::string_view::npos || colon == 0 || colon > 10) return false;
  size_t size = 0;
  for (char c : in->substr(0, colon)) {
    if (c < '0' || c > '9') return false;
    size = size * 10 + static_cast<size_t>(c - '0');
  }
  in->remove_prefix(colon + 1);
  if (size > in->size()) return false;
  field->assign(in->data(), size);
  in->remove_prefix(size);
  return true;
}

absl::Status NotOurs() {
  return InvalidFieldError("page_token", "not a page token issued by this service");
}

}  // namespace

std::string EncodePageToken(const PageCursor& cursor) {
  std::string raw(kTokenVersion);
  AppendField(cursor.query, &raw);
  AppendField(cursor.after_id, &raw);
  return absl::WebSafeBase64Escape(raw);
}

absl::StatusOr<PageCursor> DecodePageToken(absl::string_view token, absl::string_view query) {
  std::string raw;
  if (!absl::WebSafeBase64Unescape(token, &raw)) return NotOurs();
  absl::string_view in = raw;
  if (!absl::ConsumePrefix(&in, kTokenVersion)) return NotOurs();
  PageCursor cursor;
  if (!ReadField(&in, &cursor.query) || !ReadField(&in, &cursor.after_id) || !in.empty()) {
    return NotOurs();
  }
  if (cursor.query != query) {
    return InvalidFieldError("page_token",
                             "the token was issued for a different query; request the first page "
                             "again with the new parameters");
  }
  return cursor;
}

absl::StatusOr<int> EffectivePageSize(int requested, int default_size, int max_size) {
  if (requested < 0) {
    return InvalidFieldError("page_size", absl::StrCat("must not be negative, got ", requested));
  }
  if (requested == 0) return default_size;
  return requested > max_size ? max_size : requested;
}

}  // namespace modelatlas::catalog
