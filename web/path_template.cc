#include "web/path_template.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "web/text.h"

namespace modelatlas::web {
namespace {

absl::Status Bad(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("path template \"", text, "\": ", why));
}

bool IsLiteral(absl::string_view s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (c == '{' || c == '}' || c == '=' || c == '*' || c == '/') return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<PathTemplate> PathTemplate::Parse(absl::string_view text) {
  PathTemplate t;
  t.text_ = std::string(text);
  if (text.empty() || text[0] != '/') return Bad(text, "must start with /");
  absl::string_view rest = text.substr(1);
  // The verb: a ':' after the last '/' and the last '}'.
  const size_t last_slash = rest.rfind('/');
  const size_t last_brace = rest.rfind('}');
  size_t from = 0;
  if (last_slash != absl::string_view::npos) from = last_slash;
  if (last_brace != absl::string_view::npos && last_brace > from) from = last_brace;
  const size_t colon = rest.find(':', from);
  if (colon != absl::string_view::npos) {
    t.verb_ = std::string(rest.substr(colon + 1));
    if (!IsLiteral(t.verb_)) return Bad(text, "bad verb");
    rest = rest.substr(0, colon);
  }
  size_t i = 0;
  while (i <= rest.size()) {
    if (i < rest.size() && rest[i] == '{') {
      const size_t close = rest.find('}', i);
      if (close == absl::string_view::npos) return Bad(text, "unclosed {");
      absl::string_view inner = rest.substr(i + 1, close - i - 1);
      absl::string_view field = inner;
      absl::string_view pattern = "*";
      if (const size_t eq = inner.find('='); eq != absl::string_view::npos) {
        field = inner.substr(0, eq);
        pattern = inner.substr(eq + 1);
      }
      if (field.empty() || field.find_first_of("{}/*") != absl::string_view::npos) {
        return Bad(text, "bad variable name");
      }
      Variable var{std::string(field), static_cast<int>(t.segments_.size()), 0};
      for (absl::string_view s : absl::StrSplit(pattern, '/')) {
        if (s == "*") {
          t.segments_.push_back({Segment::kSingle, ""});
        } else if (s == "**") {
          t.segments_.push_back({Segment::kMulti, ""});
        } else if (IsLiteral(s)) {
          t.segments_.push_back({Segment::kLiteral, std::string(s)});
        } else {
          return Bad(text, absl::StrCat("bad segment \"", s, "\" in {", inner, "}"));
        }
      }
      var.end = static_cast<int>(t.segments_.size());
      t.variables_.push_back(std::move(var));
      i = close + 1;
    } else {
      size_t end = rest.find('/', i);
      if (end == absl::string_view::npos) end = rest.size();
      absl::string_view s = rest.substr(i, end - i);
      if (s == "*") {
        t.segments_.push_back({Segment::kSingle, ""});
      } else if (s == "**") {
        t.segments_.push_back({Segment::kMulti, ""});
      } else if (IsLiteral(s)) {
        t.segments_.push_back({Segment::kLiteral, std::string(s)});
      } else {
        return Bad(text, absl::StrCat("bad segment \"", s, "\""));
      }
      i = end;
    }
    if (i >= rest.size()) break;
    if (rest[i] != '/') return Bad(text, "expected / between segments");
    ++i;
    if (i == rest.size()) return Bad(text, "trailing /");
  }
  for (size_t k = 0; k + 1 < t.segments_.size(); ++k) {
    if (t.segments_[k].kind == Segment::kMulti) return Bad(text, "** must be the last segment");
  }
  return t;
}

int PathTemplate::literal_count() const {
  int n = verb_.empty() ? 0 : 1;
  for (const Segment& s : segments_) n += s.kind == Segment::kLiteral ? 1 : 0;
  return n;
}

std::optional<std::map<std::string, std::string>> PathTemplate::Match(
    absl::string_view path) const {
  if (path.empty() || path[0] != '/') return std::nullopt;
  path.remove_prefix(1);
  if (!verb_.empty()) {
    const std::string suffix = ":" + verb_;
    if (path.size() <= suffix.size() || path.substr(path.size() - suffix.size()) != suffix) {
      return std::nullopt;
    }
    path.remove_suffix(suffix.size());
  }
  std::vector<absl::string_view> parts = absl::StrSplit(path, '/');
  const bool multi = !segments_.empty() && segments_.back().kind == Segment::kMulti;
  if (multi ? parts.size() < segments_.size() : parts.size() != segments_.size()) {
    return std::nullopt;
  }
  for (size_t k = 0; k < segments_.size(); ++k) {
    const Segment& s = segments_[k];
    if (parts[k].empty()) return std::nullopt;
    if (s.kind == Segment::kLiteral && parts[k] != s.literal) return std::nullopt;
  }
  std::map<std::string, std::string> bound;
  for (const Variable& v : variables_) {
    const bool last_multi = multi && v.end == static_cast<int>(segments_.size());
    const size_t end = last_multi ? parts.size() : static_cast<size_t>(v.end);
    std::vector<std::string> decoded;
    for (size_t k = v.first; k < end; ++k) decoded.push_back(UrlDecode(parts[k], false));
    bound[v.field_path] = absl::StrJoin(decoded, "/");
  }
  return bound;
}

}  // namespace modelatlas::web
