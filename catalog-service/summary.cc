#include "catalog-service/summary.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/query/fields.h"
#include "common/status/errors.h"
#include "common/status/suggest.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/reflection.h"
#include "google/type/date.pb.h"

namespace modelatlas::catalog {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// The QueryField named `path`, or nullptr.
const query::QueryField* FindField(const std::vector<query::QueryField>& fields,
                                   absl::string_view path) {
  for (const query::QueryField& field : fields) {
    if (field.path == path) return &field;
  }
  return nullptr;
}

// The descriptors from the record down to the field of `path` (checked by
// FindField first, so every step exists).
std::vector<const FieldDescriptor*> PathOf(const Descriptor* descriptor, absl::string_view path) {
  std::vector<const FieldDescriptor*> steps;
  for (absl::string_view part : absl::StrSplit(path, '.')) {
    const FieldDescriptor* field = descriptor->FindFieldByName(std::string(part));
    if (field == nullptr) return {};
    steps.push_back(field);
    descriptor = field->message_type();
  }
  return steps;
}

// The message holding the path's last field, or nullptr when a message on
// the way is not set.
const Message* Holder(const Message& record, const std::vector<const FieldDescriptor*>& path) {
  const Message* message = &record;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    if (!message->GetReflection()->HasField(*message, path[i])) return nullptr;
    message = &message->GetReflection()->GetMessage(*message, path[i]);
  }
  return message;
}

std::string DateText(const Message& date_message) {
  google::type::Date date;
  date.CopyFrom(date_message);
  if (date.year() == 0) return "";
  if (date.month() == 0) return absl::StrCat(date.year());
  return absl::StrFormat("%04d-%02d-%02d", date.year(), date.month(), date.day());
}

// The text of element `index` of `field` (-1: a singular field).
std::string ValueText(const Message& message, const FieldDescriptor* field, int index) {
  const auto* r = message.GetReflection();
  const bool list = index >= 0;
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING:
      return list ? r->GetRepeatedString(message, field, index) : r->GetString(message, field);
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return absl::StrFormat("%.15g", list ? r->GetRepeatedDouble(message, field, index)
                                           : r->GetDouble(message, field));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return absl::StrFormat(
          "%.7g", list ? r->GetRepeatedFloat(message, field, index) : r->GetFloat(message, field));
    case FieldDescriptor::CPPTYPE_INT32:
      return absl::StrCat(list ? r->GetRepeatedInt32(message, field, index)
                               : r->GetInt32(message, field));
    case FieldDescriptor::CPPTYPE_INT64:
      return absl::StrCat(list ? r->GetRepeatedInt64(message, field, index)
                               : r->GetInt64(message, field));
    case FieldDescriptor::CPPTYPE_UINT32:
      return absl::StrCat(list ? r->GetRepeatedUInt32(message, field, index)
                               : r->GetUInt32(message, field));
    case FieldDescriptor::CPPTYPE_UINT64:
      return absl::StrCat(list ? r->GetRepeatedUInt64(message, field, index)
                               : r->GetUInt64(message, field));
    case FieldDescriptor::CPPTYPE_BOOL:
      return (list ? r->GetRepeatedBool(message, field, index) : r->GetBool(message, field))
                 ? "true"
                 : "false";
    case FieldDescriptor::CPPTYPE_ENUM:
      return (list ? r->GetRepeatedEnum(message, field, index) : r->GetEnum(message, field))
          ->name();
    case FieldDescriptor::CPPTYPE_MESSAGE:  // google.type.Date (timestamps are refused)
      return DateText(list ? r->GetRepeatedMessage(message, field, index)
                           : r->GetMessage(message, field));
  }
  return "";
}

// The distinct values of the path in `record`; {""} when it is not set.
std::set<std::string> GroupValues(const Message& record,
                                  const std::vector<const FieldDescriptor*>& path) {
  std::set<std::string> values;
  const Message* holder = Holder(record, path);
  const FieldDescriptor* field = path.back();
  if (holder != nullptr) {
    const auto* r = holder->GetReflection();
    if (field->is_repeated()) {
      for (int i = 0; i < r->FieldSize(*holder, field); ++i) {
        values.insert(ValueText(*holder, field, i));
      }
    } else if (!field->has_presence() || r->HasField(*holder, field)) {
      values.insert(ValueText(*holder, field, -1));
    }
  }
  if (values.empty()) values.insert("");
  return values;
}

// The number at the path, when the record sets it.
std::optional<double> NumberAt(const Message& record,
                               const std::vector<const FieldDescriptor*>& path) {
  const Message* holder = Holder(record, path);
  if (holder == nullptr) return std::nullopt;
  const FieldDescriptor* field = path.back();
  const auto* r = holder->GetReflection();
  if (field->has_presence() && !r->HasField(*holder, field)) return std::nullopt;
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return r->GetDouble(*holder, field);
    case FieldDescriptor::CPPTYPE_FLOAT:
      return r->GetFloat(*holder, field);
    case FieldDescriptor::CPPTYPE_INT32:
      return r->GetInt32(*holder, field);
    case FieldDescriptor::CPPTYPE_INT64:
      return static_cast<double>(r->GetInt64(*holder, field));
    case FieldDescriptor::CPPTYPE_UINT32:
      return r->GetUInt32(*holder, field);
    case FieldDescriptor::CPPTYPE_UINT64:
      return static_cast<double>(r->GetUInt64(*holder, field));
    default:
      return std::nullopt;
  }
}

struct Accumulator {
  int64_t records = 0;
  int64_t values = 0;
  double sum = 0;
  double min = 0;
  double max = 0;
};

}  // namespace

template <typename Record>
absl::Status ValidateSummaryQuery(const SummaryQuery& query) {
  const Descriptor* descriptor = Record::descriptor();
  const std::vector<query::QueryField> fields = query::QueryFields(descriptor);
  FieldViolations violations;
  if (!query.group_by.empty()) {
    const query::QueryField* field = FindField(fields, query.group_by);
    if (field == nullptr) {
      violations.Add(
          "group_by",
          absl::StrCat("\"", query.group_by, "\" is not a field of ", descriptor->name(),
                       " records", DidYouMean(query.group_by, query::QueryFieldPaths(descriptor))));
    } else if (field->kind == "timestamp") {
      violations.Add("group_by", absl::StrCat("\"", query.group_by,
                                              "\" is a timestamp: every value is its own group"));
    }
  }
  if (!query.value_field.empty()) {
    const query::QueryField* field = FindField(fields, query.value_field);
    if (field == nullptr) {
      violations.Add("value_field", absl::StrCat("\"", query.value_field, "\" is not a field of ",
                                                 descriptor->name(), " records",
                                                 DidYouMean(query.value_field,
                                                            query::QueryFieldPaths(descriptor))));
    } else if (field->kind != "number" || field->repeated) {
      violations.Add("value_field",
                     absl::StrCat("\"", query.value_field, "\" is not a single number (it is ",
                                  field->repeated ? "a list of " : "", field->kind,
                                  "); sum, min and max need one"));
    }
  }
  return violations.ToStatus();
}

template <typename Record>
absl::StatusOr<v1::Summary> SummarizeRecords(const std::vector<Record>& records,
                                             const SummaryQuery& query, int64_t revision) {
  if (absl::Status invalid = ValidateSummaryQuery<Record>(query); !invalid.ok()) return invalid;
  const Descriptor* descriptor = Record::descriptor();
  const std::vector<const FieldDescriptor*> group_path = query.group_by.empty()
                                                             ? std::vector<const FieldDescriptor*>{}
                                                             : PathOf(descriptor, query.group_by);
  const std::vector<const FieldDescriptor*> value_path =
      query.value_field.empty() ? std::vector<const FieldDescriptor*>{}
                                : PathOf(descriptor, query.value_field);
  std::map<std::string, Accumulator> groups;
  for (const Record& record : records) {
    const std::set<std::string> values =
        group_path.empty() ? std::set<std::string>{""} : GroupValues(record, group_path);
    const std::optional<double> found =
        value_path.empty() ? std::nullopt : NumberAt(record, value_path);
    const bool has_number = found.has_value();
    const double number = found.value_or(0);
    for (const std::string& value : values) {
      Accumulator& group = groups[value];
      ++group.records;
      if (!has_number) continue;
      group.min = group.values == 0 ? number : std::min(group.min, number);
      group.max = group.values == 0 ? number : std::max(group.max, number);
      group.sum += number;
      ++group.values;
    }
  }
  std::vector<std::pair<std::string, Accumulator>> ordered(groups.begin(), groups.end());
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    return a.second.records > b.second.records;  // ties keep the map's value order
  });
  v1::Summary summary;
  summary.set_group_by(query.group_by);
  summary.set_value_field(query.value_field);
  summary.set_record_count(static_cast<int64_t>(records.size()));
  summary.set_catalog_revision(revision);
  for (const auto& [value, group] : ordered) {
    v1::SummaryGroup* out = summary.add_groups();
    out->set_value(value);
    out->set_record_count(group.records);
    out->set_value_count(group.values);
    if (group.values > 0) {
      out->set_value_sum(group.sum);
      out->set_value_min(group.min);
      out->set_value_max(group.max);
    }
  }
  return summary;
}

template <typename Record>
absl::StatusOr<v1::Summary> Summarize(Catalog& catalog, const SummaryQuery& query) {
  if (absl::Status invalid = ValidateSummaryQuery<Record>(query); !invalid.ok()) return invalid;
  std::vector<Record> records;
  int64_t revision = 0;
  ListQuery list{Catalog::kMaxPageSize, "", query.filter, ""};
  while (true) {
    absl::StatusOr<Page<Record>> page = catalog.List<Record>(list);
    if (!page.ok()) return page.status();
    revision = std::max(revision, page->revision);
    for (Record& record : page->records) records.push_back(std::move(record));
    if (page->next_page_token.empty()) break;
    list.page_token = page->next_page_token;
  }
  return SummarizeRecords(records, query, revision);
}

template absl::Status ValidateSummaryQuery<Model>(const SummaryQuery&);
template absl::Status ValidateSummaryQuery<Hardware>(const SummaryQuery&);
template absl::StatusOr<v1::Summary> SummarizeRecords<Model>(const std::vector<Model>&,
                                                             const SummaryQuery&, int64_t);
template absl::StatusOr<v1::Summary> SummarizeRecords<Hardware>(const std::vector<Hardware>&,
                                                                const SummaryQuery&, int64_t);
template absl::StatusOr<v1::Summary> Summarize<Model>(Catalog&, const SummaryQuery&);
template absl::StatusOr<v1::Summary> Summarize<Hardware>(Catalog&, const SummaryQuery&);

}  // namespace modelatlas::catalog
