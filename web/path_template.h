// google.api.HttpRule path templates: "/v1/{name=models/*}",
// "/v1/{hardware=hardware/*}/runnableModels", "/v1/estimates:memory".
// Grammar (google/api/http.proto):
//   Template = "/" Segments [ Verb ] ;
//   Segments = Segment { "/" Segment } ;
//   Segment  = "*" | "**" | LITERAL | Variable ;
//   Variable = "{" FieldPath [ "=" Segments ] "}" ;
//   Verb     = ":" LITERAL ;
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace modelatlas::web {

class PathTemplate {
 public:
  // Parses a template; INVALID_ARGUMENT naming the fault otherwise.
  static absl::StatusOr<PathTemplate> Parse(absl::string_view text);

  // The variables a path binds (field path -> value, percent-decoded), or
  // nullopt when the path does not match. `path` excludes the query string.
  std::optional<std::map<std::string, std::string>> Match(absl::string_view path) const;

  const std::string& text() const { return text_; }
  const std::string& verb() const { return verb_; }
  // Literal segments count: more specific templates are tried first.
  int literal_count() const;

 private:
  struct Segment {
    enum Kind { kLiteral, kSingle, kMulti } kind = kLiteral;
    std::string literal;
  };
  struct Variable {
    std::string field_path;
    int first = 0;  // first segment index
    int end = 0;    // one past the last
  };

  std::string text_;
  std::vector<Segment> segments_;
  std::vector<Variable> variables_;
  std::string verb_;
};

}  // namespace modelatlas::web
