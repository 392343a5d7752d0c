// "Did you mean ...?": the names closest to one a caller got wrong, for
// NOT_FOUND and INVALID_ARGUMENT messages (records, filter fields, flags,
// commands).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace modelatlas {

// Levenshtein distance: insertions, deletions and substitutions of bytes.
size_t EditDistance(absl::string_view a, absl::string_view b);

// Up to `max_names` of `candidates` at the smallest edit distance from
// `wanted` (ignoring ASCII case), in the candidates' order; none when even
// the closest is further than a third of the longer name (at least 2), so
// that an unrelated name is never suggested.
std::vector<std::string> ClosestNames(absl::string_view wanted,
                                      const std::vector<std::string>& candidates,
                                      size_t max_names = 3);

// "; did you mean \"a\" or \"b\"?", or "" when nothing is close.
std::string DidYouMean(absl::string_view wanted, const std::vector<std::string>& candidates);

}  // namespace modelatlas
