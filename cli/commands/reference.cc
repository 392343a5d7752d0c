// What the other commands accept: the fields a filter or order_by can name
// (`fields`), and every accepted value of every enum flag and field
// (`values`, whose output is docs/VALUES.md).
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command.h"
#include "cli/enum_spellings.h"
#include "cli/output.h"
#include "common/query/fields.h"
#include "modelatlas/common/v1/hardware.pb.h"
#include "modelatlas/common/v1/model.pb.h"

namespace modelatlas::cli {
namespace {

int Fields(Session& session, const Arguments& args) {
  const google::protobuf::Descriptor* descriptor =
      args[0] == "models"     ? common::v1::Model::descriptor()
      : args[0] == "hardware" ? common::v1::Hardware::descriptor()
                              : nullptr;
  if (descriptor == nullptr) {
    return UsageError(absl::StrCat("fields: KIND is models or hardware, got \"", args[0], "\""));
  }
  const std::vector<query::QueryField> fields = query::QueryFields(descriptor);
  if (session.json()) {
    std::cout << "[";
    for (size_t i = 0; i < fields.size(); ++i) {
      std::cout << (i == 0 ? "" : ",") << "\n  {\"path\": \"" << fields[i].path
                << "\", \"kind\": \"" << fields[i].kind
                << "\", \"repeated\": " << (fields[i].repeated ? "true" : "false") << "}";
    }
    std::cout << "\n]\n";
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  for (const query::QueryField& field : fields) {
    std::string kind = field.repeated ? absl::StrCat("list of ", field.kind) : field.kind;
    rows.push_back({field.path, kind, absl::StrJoin(field.enum_values, ", ")});
  }
  PrintTable({"FIELD", "KIND", "VALUES"}, rows);
  std::cout << "\nCompare with = != < <= > >=, match text or list entries with :, test presence "
               "with field:*; combine with AND, OR, NOT (OR binds tighter). A list field is not "
               "a key for --order_by.\n";
  return 0;
}

int Values(Session& /*session*/, const Arguments& /*args*/) {
  std::cout << EnumValuesMarkdown();
  return 0;
}

}  // namespace

CommandGroup ReferenceCommands() {
  return {"Reference (what the other commands accept)",
          {
              {{"fields"},
               "KIND",
               "every field a --filter or --order_by can name, with its kind (KIND: models or "
               "hardware)",
               {"json"},
               "fields models",
               Fields},
              {{"values"},
               "",
               "every accepted value of every enum flag and field (docs/VALUES.md)",
               {},
               "values",
               Values},
          }};
}

}  // namespace modelatlas::cli
