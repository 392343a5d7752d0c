#include "common/status/resource_names.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace modelatlas {

bool IsValidResourceId(absl::string_view id) {
  if (id.empty() || id.size() > 63) return false;
  if (!absl::ascii_islower(id.front())) return false;
  if (id.back() == '-') return false;
  for (char c : id) {
    if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '-') return false;
  }
  return true;
}

std::optional<std::string> ResourceIdFromName(absl::string_view name,
                                              absl::string_view collection) {
  if (!absl::StartsWith(name, collection) || name.size() <= collection.size() + 1 ||
      name[collection.size()] != '/') {
    return std::nullopt;
  }
  absl::string_view id = name.substr(collection.size() + 1);
  if (!IsValidResourceId(id)) return std::nullopt;
  return std::string(id);
}

std::string ResourceName(absl::string_view collection, absl::string_view id) {
  return absl::StrCat(collection, "/", id);
}

std::string ResourceIdFromDisplayName(absl::string_view display_name) {
  std::string id;
  bool pending_dash = false;
  for (char c : display_name) {
    if (absl::ascii_isalnum(c)) {
      if (pending_dash && !id.empty()) id.push_back('-');
      pending_dash = false;
      id.push_back(absl::ascii_tolower(c));
    } else {
      pending_dash = true;
    }
  }
  if (id.empty() || !absl::ascii_islower(id.front())) id = absl::StrCat("m-", id);
  if (id.size() > 63) id.resize(63);
  while (!id.empty() && id.back() == '-') id.pop_back();
  return id;
}

std::string LookupKey(absl::string_view text) {
  // Sized once and cut to what is kept: a push_back per character checked
  // the capacity each time (~250 instructions for a 12-character name, on
  // every estimate that names a model; docs/BENCHMARKS.md, session 17).
  std::string key(text.size(), '\0');
  size_t kept = 0;
  for (char c : text) {
    if (absl::ascii_isalnum(c)) {
      key[kept++] = absl::ascii_tolower(c);
    } else if (static_cast<unsigned char>(c) >= 0x80) {
      key[kept++] = c;  // a byte of a non-ASCII character: kept whole
    }
  }
  key.resize(kept);
  return key;
}

}  // namespace modelatlas
