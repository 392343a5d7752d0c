#include "catalog-service/validation.h"

#include <cmath>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/records/bounds.h"
#include "common/status/resource_names.h"
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

using records::Bound;
using records::RecordKind;

// Where a field is: `path` names it in messages (with the caller's prefix,
// "models[3].architecture.num_layers"), `relative` within its record
// ("architecture.num_layers"), which is how the bounds table knows it.
struct FieldPlace {
  std::string path;
  std::string relative;
};

FieldPlace Child(const FieldPlace& parent, absl::string_view field) {
  return {Join(parent.path, field), Join(parent.relative, field)};
}

// Beyond the shared bounds table (common/records/bounds.h): named with the
// bound and its unit, never clamped.
template <typename Number>
void CheckBound(Number value, RecordKind kind, const FieldPlace& place,
                FieldViolations* violations) {
  const Bound* bound = records::FindBound(kind, place.relative);
  // Whole numbers compare as whole numbers (2^53 + 1 is no double); every
  // bound is far below INT64_MAX.
  if (bound != nullptr && value > static_cast<Number>(bound->max)) {
    violations->Add(place.path,
                    absl::StrCat("is ", value, " ", bound->unit, ", beyond the bound of ",
                                 bound->max, " ", bound->unit, " (common/records/bounds.h)"));
  }
}

void CheckNumber(double value, const FieldDescriptor& field, RecordKind kind,
                 const FieldPlace& place, FieldViolations* violations) {
  if (!std::isfinite(value)) {
    violations->Add(place.path, "must be a finite number");
  } else if (value < 0) {
    violations->Add(place.path, absl::StrCat("must not be negative, got ", value));
  } else if (IsFraction(field) && value > 1) {
    violations->Add(place.path, absl::StrCat("is a fraction and must be at most 1, got ", value));
  } else {
    CheckBound(value, kind, place, violations);
  }
}

// Every number in a record is a count, a size, a time, a power or a price:
// none may be negative or non-finite, and none beyond its bound in the shared
// table. Walks the message by reflection so a field added to the contract is
// checked without a new line here.
void CheckNumbers(const Message& message, RecordKind kind, const FieldPlace& prefix,
                  FieldViolations* violations) {
  const auto* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    const FieldPlace place = Child(prefix, field->name());
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_DOUBLE:
        if (field->is_repeated()) {
          for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
            CheckNumber(reflection->GetRepeatedDouble(message, field, i), *field, kind,
                        {absl::StrCat(place.path, "[", i, "]"), place.relative}, violations);
          }
        } else {
          CheckNumber(reflection->GetDouble(message, field), *field, kind, place, violations);
        }
        break;
      case FieldDescriptor::CPPTYPE_INT32:
      case FieldDescriptor::CPPTYPE_INT64:
        if (!field->is_repeated()) {
          const int64_t value = field->cpp_type() == FieldDescriptor::CPPTYPE_INT32
                                    ? reflection->GetInt32(message, field)
                                    : reflection->GetInt64(message, field);
          if (value < 0 && field->name() != "revision") {
            violations->Add(place.path, absl::StrCat("must not be negative, got ", value));
          } else if (value > 0) {
            CheckBound(value, kind, place, violations);
          }
        } else {
          // A list of whole numbers (architecture.layer_intermediate_sizes):
          // each entry under the list's bound.
          for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
            const int64_t value = field->cpp_type() == FieldDescriptor::CPPTYPE_INT32
                                      ? reflection->GetRepeatedInt32(message, field, i)
                                      : reflection->GetRepeatedInt64(message, field, i);
            const FieldPlace entry{absl::StrCat(place.path, "[", i, "]"), place.relative};
            if (value < 0) {
              violations->Add(entry.path, absl::StrCat("must not be negative, got ", value));
            } else {
              CheckBound(value, kind, entry, violations);
            }
          }
        }
        break;
      case FieldDescriptor::CPPTYPE_MESSAGE:
        if (!field->is_repeated() && field->message_type()->full_name() != "google.type.Date" &&
            field->message_type()->full_name() != "google.protobuf.Timestamp") {
          CheckNumbers(reflection->GetMessage(message, field), kind, place, violations);
        }
        break;
      default:
        break;
    }
  }
}

// Bounds on what one record may hold: far beyond any real record (the
// longest cell in Epoch's files is 7,860 bytes), small enough that one
// record cannot exhaust memory or a page of results.
constexpr size_t kMaxTextBytes = 64 * 1024;
constexpr int kMaxListEntries = 10000;

void CheckLength(absl::string_view text, const std::string& path, FieldViolations* violations) {
  if (text.size() > kMaxTextBytes) {
    violations->Add(path,
                    absl::StrCat("is ", text.size(), " bytes long; the limit is ", kMaxTextBytes));
  }
}

// A string field: bounded, and (not bytes) well-formed UTF-8, which is all a
// protobuf string may hold: a record holding anything else is written but
// cannot be parsed back.
void CheckText(absl::string_view text, const FieldDescriptor& field, const std::string& path,
               FieldViolations* violations) {
  CheckLength(text, path, violations);
  if (field.type() != FieldDescriptor::TYPE_STRING) return;
  if (const size_t bad = InvalidUtf8Offset(text); bad != absl::string_view::npos) {
    violations->Add(path, absl::StrCat("is not valid UTF-8 (byte ", bad + 1, " of ", text.size(),
                                       " is not part of a UTF-8 character)"));
  }
}

void CheckSizes(const Message& message, const std::string& prefix, FieldViolations* violations);

// A calendar date, or a year-month or year alone (google.type.Date with
// zeros), between years 1 and 9999.
void CheckDate(const Message& message, const std::string& path, FieldViolations* violations) {
  google::type::Date date;
  date.CopyFrom(message);
  if (!IsValidDate(date)) {
    violations->Add(
        path,
        absl::StrCat("is not a date of the calendar (", date.year(), "-", date.month(), "-",
                     date.day(), "): years 1 to 9999, months 1 to 12, days within the month"));
  }
}

// google.protobuf.Timestamp's own range: 0001-01-01T00:00:00Z to
// 9999-12-31T23:59:59.999999999Z (what RFC 3339 text, and so JSON and
// exports, can show).
void CheckTimestamp(const Message& message, const std::string& path, FieldViolations* violations) {
  google::protobuf::Timestamp timestamp;
  timestamp.CopyFrom(message);
  if (!IsValidTimestamp(timestamp)) {
    violations->Add(path, absl::StrCat("is not a time between 0001-01-01 and 9999-12-31 (seconds ",
                                       timestamp.seconds(), ", nanos ", timestamp.nanos(), ")"));
  }
}

// A nested message: dates and times checked as values, others field by field.
void CheckMessage(const Message& message, const std::string& path, FieldViolations* violations) {
  const std::string& type = message.GetDescriptor()->full_name();
  if (type == "google.type.Date") {
    CheckDate(message, path, violations);
  } else if (type == "google.protobuf.Timestamp") {
    CheckTimestamp(message, path, violations);
  } else {
    CheckSizes(message, path, violations);
  }
}

// One entry of a map field, its path naming its key ("other_source_columns[\"Notes\"]").
void CheckMapEntry(const Message& entry, const std::string& path, FieldViolations* violations) {
  const auto* reflection = entry.GetReflection();
  const FieldDescriptor* key = entry.GetDescriptor()->map_key();
  const FieldDescriptor* value = entry.GetDescriptor()->map_value();
  std::string scratch;
  std::string entry_path = path;
  if (key->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
    const std::string& text = reflection->GetStringReference(entry, key, &scratch);
    entry_path = absl::StrCat(path, "[\"", QuoteInput(text, 100), "\"]");
    CheckText(text, *key, entry_path, violations);
  }
  if (value->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
    CheckText(reflection->GetStringReference(entry, value, &scratch), *value, entry_path,
              violations);
  } else if (value->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    CheckMessage(reflection->GetMessage(entry, value), entry_path, violations);
  }
}

// Open enums accept any number on the wire; only declared values mean something.
void CheckEnum(int value, const FieldDescriptor& field, const std::string& path,
               FieldViolations* violations) {
  if (field.enum_type()->FindValueByNumber(value) == nullptr) {
    violations->Add(path,
                    absl::StrCat("has no value ", value, " (", field.enum_type()->name(), ")"));
  }
}

// Every string at most kMaxTextBytes, every list and map at most
// kMaxListEntries entries, every enum a declared value; by reflection, like
// CheckNumbers.
void CheckSizes(const Message& message, const std::string& prefix, FieldViolations* violations) {
  const auto* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  std::string scratch;
  for (const FieldDescriptor* field : fields) {
    const std::string path = Join(prefix, field->name());
    if (field->is_repeated()) {
      const int size = reflection->FieldSize(message, field);
      if (size > kMaxListEntries) {
        violations->Add(path,
                        absl::StrCat("has ", size, " entries; the limit is ", kMaxListEntries));
        continue;
      }
      for (int i = 0; i < size; ++i) {
        if (field->is_map()) {
          CheckMapEntry(reflection->GetRepeatedMessage(message, field, i), path, violations);
          continue;
        }
        const std::string item = absl::StrCat(path, "[", i, "]");
        if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
          CheckText(reflection->GetRepeatedStringReference(message, field, i, &scratch), *field,
                    item, violations);
        } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
          CheckMessage(reflection->GetRepeatedMessage(message, field, i), item, violations);
        } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_ENUM) {
          CheckEnum(reflection->GetRepeatedEnumValue(message, field, i), *field, item, violations);
        }
      }
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_ENUM) {
      CheckEnum(reflection->GetEnumValue(message, field), *field, path, violations);
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
      CheckText(reflection->GetStringReference(message, field, &scratch), *field, path, violations);
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      CheckMessage(reflection->GetMessage(message, field), path, violations);
    }
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
                                 QuoteInput(name), "\""));
  }
  if (display_name.empty()) violations->Add(Join(prefix, "display_name"), "must not be empty");
  if (provenance.source().empty()) {
    violations->Add(Join(prefix, "provenance.source"), "must say where the record came from");
  }
}

}  // namespace

bool IsValidDate(const google::type::Date& date) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const int year = date.year(), month = date.month(), day = date.day();
  if (year < 1 || year > 9999 || month < 0 || month > 12 || day < 0) return false;
  if (month == 0) return day == 0;
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return day <= kDays[month - 1] + (month == 2 && leap ? 1 : 0);
}

bool IsValidTimestamp(const google::protobuf::Timestamp& timestamp) {
  constexpr int64_t kMinSeconds = -62135596800;  // 0001-01-01T00:00:00Z
  constexpr int64_t kMaxSeconds = 253402300799;  // 9999-12-31T23:59:59Z
  return timestamp.seconds() >= kMinSeconds && timestamp.seconds() <= kMaxSeconds &&
         timestamp.nanos() >= 0 && timestamp.nanos() <= 999999999;
}

namespace {

// The checkpoint's group size goes with a grouped format only, and a
// quantization not sized with no format: either alone says what the answer
// will assume.
void CheckCheckpointQuantization(const common::v1::Architecture& arch, const std::string& prefix,
                                 FieldViolations* violations) {
  const std::string& format = arch.checkpoint_weight_format();
  const int32_t group = arch.checkpoint_quantization_group_size();
  const bool grouped = records::IsGroupedCheckpointWeightFormat(format);
  // A negative one beside a grouped format: CheckNumbers names it.
  if (std::string problem = records::CheckpointGroupSizeProblem(format, group);
      !problem.empty() && !(group < 0 && grouped)) {
    if (!grouped) absl::StrAppend(&problem, " (got \"", format, "\")");
    violations->Add(Join(prefix, "architecture.checkpoint_quantization_group_size"), problem);
  }
  if (arch.checkpoint_attention_output_16bit() && format != "fp8-block128") {
    violations->Add(
        Join(prefix, "architecture.checkpoint_attention_output_16bit"),
        absl::StrCat("needs checkpoint_weight_format \"fp8-block128\" (got \"", format, "\")"));
  }
  const std::string& not_sized = arch.checkpoint_quantization_not_sized();
  if (not_sized.empty()) return;
  const std::string field = Join(prefix, "architecture.checkpoint_quantization_not_sized");
  if (!format.empty()) {
    violations->Add(field, absl::StrCat("must be empty when checkpoint_weight_format is set (\"",
                                        format, "\")"));
  }
  if (not_sized.size() > records::kMaxCheckpointNotSizedChars) {
    violations->Add(field, absl::StrCat("is ", not_sized.size(), " characters; the limit is ",
                                        records::kMaxCheckpointNotSizedChars));
  } else if (!absl::c_all_of(not_sized, [](char c) { return c >= 0x20 && c < 0x7f; })) {
    violations->Add(field, "must be printable ASCII (no control or non-ASCII characters)");
  }
}

}  // namespace

void ValidateModel(const common::v1::Model& model, const std::string& prefix,
                   FieldViolations* violations) {
  CheckCommon(model.name(), kModelsCollection, model.display_name(), model.provenance(), prefix,
              violations);
  CheckNumbers(model, RecordKind::kModel, {prefix, ""}, violations);
  CheckSizes(model, prefix, violations);
  const auto& arch = model.architecture();
  if (model.has_architecture() && arch.num_attention_heads() > 0 &&
      arch.num_key_value_heads() > 0 && arch.num_attention_heads() % arch.num_key_value_heads()) {
    violations->Add(Join(prefix, "architecture.num_key_value_heads"),
                    "must divide num_attention_heads");
  }
  // A mixer the estimator does not count is refused here rather than stored
  // and refused at every estimate (records::kRecurrentMixers).
  const std::string& mixer = arch.recurrent_mixer();
  if (!mixer.empty() && !records::IsRecurrentMixer(mixer)) {
    violations->Add(Join(prefix, "architecture.recurrent_mixer"),
                    absl::StrCat("is \"", QuoteInput(mixer), "\"; must be one of ",
                                 absl::StrJoin(records::kRecurrentMixers, ", "), " (or empty)"));
  }
  // A request naming no weight format is sized in the checkpoint's: a value
  // the estimator cannot size is refused here (records::kCheckpointWeightFormats).
  const std::string& checkpoint = arch.checkpoint_weight_format();
  if (!checkpoint.empty() && !records::IsCheckpointWeightFormat(checkpoint)) {
    violations->Add(
        Join(prefix, "architecture.checkpoint_weight_format"),
        absl::StrCat("is \"", checkpoint, "\"; must be one of ",
                     absl::StrJoin(records::kCheckpointWeightFormats, ", "), " (or empty)"));
  }
  CheckCheckpointQuantization(arch, prefix, violations);
}

void ValidateHardware(const common::v1::Hardware& hardware, const std::string& prefix,
                      FieldViolations* violations) {
  CheckCommon(hardware.name(), kHardwareCollection, hardware.display_name(), hardware.provenance(),
              prefix, violations);
  CheckNumbers(hardware, RecordKind::kHardware, {prefix, ""}, violations);
  CheckSizes(hardware, prefix, violations);
  // What one process can allocate is part of the capacity: a figure above
  // it mixes units (nvidia-smi's MiB against a capacity in decimal GB: H200
  // 143,771 MiB against 141e9 bytes) and would make a plan say "fits" on
  // memory the card does not have (docs/FORMULAS.md, "Memory a runtime can
  // use").
  if (hardware.has_allocatable_memory_bytes() && hardware.has_memory_bytes() &&
      hardware.allocatable_memory_bytes() > hardware.memory_bytes()) {
    violations->Add(Join(prefix, "allocatable_memory_bytes"),
                    absl::StrCat("must not exceed memory_bytes (", hardware.memory_bytes(),
                                 " bytes), got ", hardware.allocatable_memory_bytes(),
                                 ": both are bytes (a MiB or GiB figure against a GB capacity "
                                 "mixes units)"));
  }
}

void ReplaceInvalidUtf8(Message* message) {
  const auto* reflection = message->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(*message, &fields);
  for (const FieldDescriptor* field : fields) {
    if (field->type() == FieldDescriptor::TYPE_STRING) {
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(*message, field); ++i) {
          const std::string text = reflection->GetRepeatedString(*message, field, i);
          if (InvalidUtf8Offset(text) != absl::string_view::npos) {
            reflection->SetRepeatedString(message, field, i, ValidUtf8(text));
          }
        }
      } else {
        const std::string text = reflection->GetString(*message, field);
        if (InvalidUtf8Offset(text) != absl::string_view::npos) {
          reflection->SetString(message, field, ValidUtf8(text));
        }
      }
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(*message, field); ++i) {
          ReplaceInvalidUtf8(reflection->MutableRepeatedMessage(message, field, i));
        }
      } else {
        ReplaceInvalidUtf8(reflection->MutableMessage(message, field));
      }
    }
  }
}

}  // namespace modelatlas::catalog
