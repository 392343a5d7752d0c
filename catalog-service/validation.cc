#include "catalog-service/validation.h"

#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/resource_names.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"

namespace modelatlas::catalog {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

std::string Join(const std::string& prefix, absl::string_view field) {
  return prefix.empty() ? std::string(field) : absl::StrCat(prefix, ".", field);
}

// Fields holding a fraction 0..1.
bool IsFraction(const FieldDescriptor& field) {
  return absl::StartsWith(field.name(), "hardware_utilization_");
}

void CheckNumber(double value, const FieldDescriptor& field, const std::string& path,
                 FieldViolations* violations) {
  if (!std::isfinite(value)) {
    violations->Add(path, "must be a finite number");
  } else if (value < 0) {
    violations->Add(path, absl::StrCat("must not be negative, got ", value));
  } else if (IsFraction(field) && value > 1) {
    violations->Add(path, absl::StrCat("is a fraction and must be at most 1, got ", value));
  }
}

// Every number in a record is a count, a size, a time, a power or a price:
// none may be negative or non-finite. Walks the message by reflection so a
// field added to the contract is checked without a new line here.
void CheckNumbers(const Message& message, const std::string& prefix, FieldViolations* violations) {
  const auto* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    const std::string path = Join(prefix, field->name());
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_DOUBLE:
        if (field->is_repeated()) {
          for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
            CheckNumber(reflection->GetRepeatedDouble(message, field, i), *field,
                        absl::StrCat(path, "[", i, "]"), violations);
          }
        } else {
          CheckNumber(reflection->GetDouble(message, field), *field, path, violations);
        }
        break;
      case FieldDescriptor::CPPTYPE_INT32:
      case FieldDescriptor::CPPTYPE_INT64:
        if (!field->is_repeated()) {
          const int64_t value = field->cpp_type() == FieldDescriptor::CPPTYPE_INT32
                                    ? reflection->GetInt32(message, field)
                                    : reflection->GetInt64(message, field);
          if (value < 0 && field->name() != "revision") {
            violations->Add(path, absl::StrCat("must not be negative, got ", value));
          }
        }
        break;
      case FieldDescriptor::CPPTYPE_MESSAGE:
        if (!field->is_repeated() && field->message_type()->full_name() != "google.type.Date" &&
            field->message_type()->full_name() != "google.protobuf.Timestamp") {
          CheckNumbers(reflection->GetMessage(message, field), path, violations);
        }
        break;
      default:
        break;
    }
  }
}

void CheckDate(const google::type::Date& date, const std::string& path,
               FieldViolations* violations) {
  if (date.year() < 1 || date.year() > 9999 || date.month() < 0 || date.month() > 12 ||
      date.day() < 0 || date.day() > 31 || (date.month() == 0 && date.day() != 0)) {
    violations->Add(path, absl::StrCat("is not a valid date (", date.year(), "-", date.month(), "-",
                                       date.day(), ")"));
  }
}

void CheckCommon(absl::string_view name, absl::string_view collection,
                 absl::string_view display_name, const common::v1::Provenance& provenance,
                 const std::string& prefix, FieldViolations* violations) {
  if (!ResourceIdFromName(name, collection).has_value()) {
    violations->Add(Join(prefix, "name"),
                    absl::StrCat("must be \"", collection,
                                 "/{id}\" with an id of lower-case letters, digits and hyphens "
                                 "(AIP-122), got \"",
                                 name, "\""));
  }
  if (display_name.empty()) violations->Add(Join(prefix, "display_name"), "must not be empty");
  if (provenance.source().empty()) {
    violations->Add(Join(prefix, "provenance.source"), "must say where the record came from");
  }
}

}  // namespace

void ValidateModel(const common::v1::Model& model, const std::string& prefix,
                   FieldViolations* violations) {
  CheckCommon(model.name(), kModelsCollection, model.display_name(), model.provenance(), prefix,
              violations);
  if (model.has_publication_date()) {
    CheckDate(model.publication_date(), Join(prefix, "publication_date"), violations);
  }
  CheckNumbers(model, prefix, violations);
  const auto& arch = model.architecture();
  if (model.has_architecture() && arch.num_attention_heads() > 0 &&
      arch.num_key_value_heads() > 0 && arch.num_attention_heads() % arch.num_key_value_heads()) {
    violations->Add(Join(prefix, "architecture.num_key_value_heads"),
                    "must divide num_attention_heads");
  }
}

void ValidateHardware(const common::v1::Hardware& hardware, const std::string& prefix,
                      FieldViolations* violations) {
  CheckCommon(hardware.name(), kHardwareCollection, hardware.display_name(), hardware.provenance(),
              prefix, violations);
  if (hardware.has_release_date()) {
    CheckDate(hardware.release_date(), Join(prefix, "release_date"), violations);
  }
  CheckNumbers(hardware, prefix, violations);
}

}  // namespace modelatlas::catalog
