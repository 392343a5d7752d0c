#include "common/query/fields.h"

#include "absl/strings/str_cat.h"

namespace modelatlas::query {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

// Nested messages deeper than this are not listed (records are shallow;
// the bound keeps a recursive message type from looping).
constexpr int kMaxDepth = 4;

bool IsMessageNamed(const FieldDescriptor* field, const char* full_name) {
  return field->message_type() != nullptr && field->message_type()->full_name() == full_name;
}

// The kind a filter compares a leaf field as, or "" for a message with fields.
std::string KindName(const FieldDescriptor* field) {
  if (IsMessageNamed(field, "google.type.Date")) return "date";
  if (IsMessageNamed(field, "google.protobuf.Timestamp")) return "timestamp";
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING:
      return "text";
    case FieldDescriptor::CPPTYPE_ENUM:
      return "enum";
    case FieldDescriptor::CPPTYPE_BOOL:
      return "bool";
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return "";
    default:
      return "number";
  }
}

void Collect(const Descriptor* descriptor, const std::string& prefix, int depth,
             std::vector<QueryField>* out) {
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    const std::string path = absl::StrCat(prefix, field->name());
    const std::string kind = KindName(field);
    if (!kind.empty()) {
      QueryField entry{.path = path, .kind = kind, .repeated = field->is_repeated()};
      if (field->enum_type() != nullptr) {
        for (int v = 0; v < field->enum_type()->value_count(); ++v) {
          entry.enum_values.push_back(field->enum_type()->value(v)->name());
        }
      }
      out->push_back(std::move(entry));
    } else if (!field->is_repeated() && depth < kMaxDepth) {
      Collect(field->message_type(), absl::StrCat(path, "."), depth + 1, out);
    }
  }
}

}  // namespace

std::vector<QueryField> QueryFields(const Descriptor* descriptor) {
  std::vector<QueryField> fields;
  Collect(descriptor, "", 0, &fields);
  return fields;
}

std::vector<std::string> QueryFieldPaths(const Descriptor* descriptor) {
  std::vector<std::string> paths;
  for (QueryField& field : QueryFields(descriptor)) paths.push_back(std::move(field.path));
  return paths;
}

}  // namespace modelatlas::query
