#include "common/formats/json_depth.h"

#include "absl/strings/str_cat.h"
#include "common/status/errors.h"

namespace modelatlas {

absl::Status CheckJsonDepth(absl::string_view json, int max_depth, absl::string_view field) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // skip the escaped character
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max_depth) {
        return InvalidFieldError(
            field, absl::StrCat("nests deeper than ", max_depth, " levels at byte ", i));
      }
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return absl::OkStatus();
}

}  // namespace modelatlas
