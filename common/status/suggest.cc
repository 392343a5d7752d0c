#include "common/status/suggest.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace modelatlas {

size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> ClosestNames(absl::string_view wanted,
                                      const std::vector<std::string>& candidates,
                                      size_t max_names) {
  const std::string lower_wanted = absl::AsciiStrToLower(wanted);
  std::vector<std::pair<size_t, size_t>> scored;  // distance, index
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string lower = absl::AsciiStrToLower(candidates[i]);
    const size_t distance = EditDistance(lower_wanted, lower);
    const size_t limit = std::max<size_t>(2, std::max(lower.size(), lower_wanted.size()) / 3);
    if (distance <= limit) scored.emplace_back(distance, i);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> names;
  for (const auto& [distance, index] : scored) {
    // Only the closest: a worse match beside a good one is noise.
    if (names.size() == max_names || distance > scored.front().first) break;
    if (std::find(names.begin(), names.end(), candidates[index]) == names.end()) {
      names.push_back(candidates[index]);
    }
  }
  return names;
}

std::string DidYouMean(absl::string_view wanted, const std::vector<std::string>& candidates) {
  const std::vector<std::string> names = ClosestNames(wanted, candidates);
  if (names.empty()) return "";
  std::vector<std::string> quoted;
  for (const std::string& name : names) quoted.push_back(absl::StrCat("\"", name, "\""));
  return absl::StrCat("; did you mean ", absl::StrJoin(quoted, " or "), "?");
}

}  // namespace modelatlas
