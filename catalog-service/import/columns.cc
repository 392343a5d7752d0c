#include "catalog-service/import/columns.h"

#include <charconv>
#include <cmath>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "catalog-service/validation.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/timestamp.pb.h"
#include "google/type/date.pb.h"

namespace modelatlas::catalog {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Labels as Epoch AI's files write them, by enum and value. The first label
// of a value is the one export writes; later ones are older or variant
// spellings read on import.
const std::map<std::string, std::vector<std::pair<int, std::vector<absl::string_view>>>>&
EnumLabels() {
  static const auto* labels =
      new std::map<std::string, std::vector<std::pair<int, std::vector<absl::string_view>>>>{
          {"modelatlas.common.v1.Accessibility",
           {{1, {"Open weights (unrestricted)"}},
            {2, {"Open weights (restricted use)"}},
            {3, {"Open weights (non-commercial)"}},
            {4, {"API access"}},
            {5, {"Hosted access (no API)"}},
            {6, {"Unreleased"}}}},
          {"modelatlas.common.v1.Confidence",
           {{1, {"Confident"}},
            {2, {"Likely"}},
            {3, {"Speculative"}},
            {4, {"Unknown"}},
            {5, {"Unverified"}}}},
          {"modelatlas.common.v1.EstimationMethod",
           {{1, {"Operation counting"}},
            {2, {"Hardware"}},
            {3, {"Reported"}},
            {4, {"Third-party estimation"}},
            {5, {"Comparison with other models"}},
            {6, {"Benchmarks"}},
            {7, {"Cost"}},
            {8, {"Other"}}}},
          {"modelatlas.common.v1.CodeAccessibility",
           {{1, {"Open source"}},
            {2, {"Open (restricted use)"}},
            {3, {"Open (non-commercial)"}},
            {4, {"Unreleased"}}}},
          // Epoch's chip types are finer than the record's; the exact label
          // is kept beside the record when it is not the first one here.
          {"modelatlas.common.v1.HardwareType",
           {{1, {"GPU", "GPGPU", "DCU (GPGPU)"}},
            {2, {"TPU"}},
            {3, {"Other", "NPU", "XPU", "XPU-R", "ASIC", "LPU"}},
            {4, {"CPU", "Hybrid CPU"}},
            {5, {"SoC"}}}},
      };
  return *labels;
}

absl::Status BadCell(absl::string_view cell, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("\"", QuoteInput(cell, 80), "\" is not ", what));
}

absl::StatusOr<double> ParseNumber(absl::string_view cell) {
  double value = 0;
  absl::string_view trimmed = absl::StripAsciiWhitespace(cell);
  if (!absl::SimpleAtod(trimmed, &value) || !std::isfinite(value)) {
    return BadCell(cell, "a finite number");
  }
  return value;
}

// Prices in the older chip export are written "$5,412.00": the dollar sign
// and thousands separators go (only in single-number cells, where a comma
// cannot separate items).
std::string WithoutCurrency(absl::string_view cell) {
  absl::string_view text = absl::StripAsciiWhitespace(cell);
  if (!absl::ConsumePrefix(&text, "$")) return std::string(cell);
  std::string digits;
  for (char c : text) {
    if (c != ',') digits.push_back(c);
  }
  return digits;
}

// Epoch joins list items with a bare comma; a comma followed by a space
// belongs to the item ("Co., Ltd.", "Mamba 2, 2.7B").
std::vector<std::string> SplitList(absl::string_view cell) {
  std::vector<std::string> items;
  size_t start = 0;
  for (size_t i = 0; i < cell.size(); ++i) {
    if (cell[i] == ',' && (i + 1 == cell.size() || cell[i + 1] != ' ')) {
      items.emplace_back(cell.substr(start, i - start));
      start = i + 1;
    }
  }
  items.emplace_back(cell.substr(start));
  return items;
}

absl::StatusOr<int> EnumValue(const EnumDescriptor& type, absl::string_view label) {
  auto it = EnumLabels().find(type.full_name());
  std::vector<std::string> known;
  if (it != EnumLabels().end()) {
    for (const auto& [value, labels] : it->second) {
      for (absl::string_view candidate : labels) {
        if (absl::EqualsIgnoreCase(candidate, absl::StripAsciiWhitespace(label))) return value;
      }
      known.push_back(absl::StrCat("\"", labels.front(), "\""));
    }
  }
  return BadCell(label, absl::StrCat("one of ", absl::StrJoin(known, ", ")));
}

absl::string_view EnumLabel(const EnumDescriptor& type, int value) {
  auto it = EnumLabels().find(type.full_name());
  if (it == EnumLabels().end()) return "";
  for (const auto& [candidate, labels] : it->second) {
    if (candidate == value) return labels.front();
  }
  return "";
}

absl::StatusOr<google::type::Date> ParseDate(absl::string_view cell) {
  absl::string_view text = absl::StripAsciiWhitespace(cell);
  // Only the date part of "2024-09-24 00:00:00+00:00" or "2024-09-24T00:00:00Z".
  text = text.substr(0, std::min(text.find_first_of(" T"), text.size()));
  std::vector<absl::string_view> parts = absl::StrSplit(text, '-');
  int values[3] = {0, 0, 0};
  if (parts.empty() || parts.size() > 3) return BadCell(cell, "a date (YYYY-MM-DD)");
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty() || !absl::SimpleAtoi(parts[i], &values[i])) {
      return BadCell(cell, "a date (YYYY-MM-DD)");
    }
  }
  google::type::Date date;
  date.set_year(values[0]);
  date.set_month(values[1]);
  date.set_day(values[2]);
  if (!IsValidDate(date)) return BadCell(cell, "a date of the calendar");
  return date;
}

std::string FormatDate(const google::type::Date& date) {
  if (date.month() == 0) return absl::StrCat(date.year());
  if (date.day() == 0) return absl::StrFormat("%04d-%02d", date.year(), date.month());
  return absl::StrFormat("%04d-%02d-%02d", date.year(), date.month(), date.day());
}

// Two digits at text[at], at most `max`.
bool TwoDigits(absl::string_view text, size_t at, int max) {
  if (at + 2 > text.size() || !absl::ascii_isdigit(text[at]) ||
      !absl::ascii_isdigit(text[at + 1])) {
    return false;
  }
  return (text[at] - '0') * 10 + (text[at + 1] - '0') <= max;
}

// The time of day and zone after "YYYY-MM-DD" and a separator, checked
// field by field (ParseTime would carry 25:61:61 into the next day, and
// take any offset): HH:MM:SS[.fraction][Z|+HH:MM|-HH:MM], or nothing.
bool IsValidTimeOfDay(absl::string_view text) {
  if (text.empty()) return true;
  if (!TwoDigits(text, 0, 23) || text.size() < 8 || text[2] != ':' || !TwoDigits(text, 3, 59) ||
      text[5] != ':' || !TwoDigits(text, 6, 59)) {
    return false;
  }
  size_t at = 8;
  if (at < text.size() && text[at] == '.') {
    ++at;
    const size_t digits = at;
    while (at < text.size() && absl::ascii_isdigit(text[at])) ++at;
    if (at == digits) return false;
  }
  absl::string_view zone = text.substr(at);
  if (zone.empty() || zone == "Z") return true;
  return zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && TwoDigits(zone, 1, 23) &&
         zone[3] == ':' && TwoDigits(zone, 4, 59);
}

absl::StatusOr<google::protobuf::Timestamp> ParseTimestamp(absl::string_view cell) {
  const std::string text(absl::StripAsciiWhitespace(cell));
  constexpr absl::string_view kExpected = "a time (YYYY-MM-DD HH:MM:SS, with or without a zone)";
  // The date part must be a date of the calendar, the rest a time of day.
  const size_t separator = std::min(text.find_first_of(" T"), text.size());
  absl::StatusOr<google::type::Date> date = ParseDate(text.substr(0, separator));
  if (!date.ok() || date->day() == 0) return BadCell(cell, kExpected);
  if (!IsValidTimeOfDay(absl::string_view(text).substr(std::min(separator + 1, text.size())))) {
    return BadCell(cell, kExpected);
  }
  for (const char* format : {"%Y-%m-%d %H:%M:%E*S%Ez", "%Y-%m-%dT%H:%M:%E*S%Ez",
                             "%Y-%m-%d %H:%M:%E*S", "%Y-%m-%dT%H:%M:%E*S", "%Y-%m-%d"}) {
    absl::Time time;
    std::string error;
    // Without a zone in the text, ParseTime reads it as UTC.
    if (absl::ParseTime(format, text, absl::UTCTimeZone(), &time, &error)) {
      google::protobuf::Timestamp timestamp;
      const absl::Duration since_epoch = time - absl::UnixEpoch();
      timestamp.set_seconds(absl::ToInt64Seconds(since_epoch));
      timestamp.set_nanos(static_cast<int32_t>(
          absl::ToInt64Nanoseconds(since_epoch - absl::Seconds(timestamp.seconds()))));
      // An offset can move a time at the ends of the range out of it.
      if (!IsValidTimestamp(timestamp)) return BadCell(cell, kExpected);
      return timestamp;
    }
  }
  return BadCell(cell, kExpected);
}

std::string FormatTimestamp(const google::protobuf::Timestamp& timestamp) {
  const absl::Time time =
      absl::FromUnixSeconds(timestamp.seconds()) + absl::Nanoseconds(timestamp.nanos());
  return absl::FormatTime("%Y-%m-%d %H:%M:%E*S+00:00", time, absl::UTCTimeZone());
}

// The message holding the last component of `path` and that component's
// descriptor; creates the intermediate messages when `create`.
std::pair<const Message*, const FieldDescriptor*> Resolve(const Message& record,
                                                          absl::string_view path) {
  const Message* message = &record;
  std::vector<absl::string_view> parts = absl::StrSplit(path, '.');
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const FieldDescriptor* field = message->GetDescriptor()->FindFieldByName(std::string(parts[i]));
    message = &message->GetReflection()->GetMessage(*message, field);
  }
  return {message, message->GetDescriptor()->FindFieldByName(std::string(parts.back()))};
}

std::pair<Message*, const FieldDescriptor*> ResolveMutable(Message* record,
                                                           absl::string_view path) {
  Message* message = record;
  std::vector<absl::string_view> parts = absl::StrSplit(path, '.');
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const FieldDescriptor* field = message->GetDescriptor()->FindFieldByName(std::string(parts[i]));
    message = message->GetReflection()->MutableMessage(message, field);
  }
  return {message, message->GetDescriptor()->FindFieldByName(std::string(parts.back()))};
}

// Parses the cell completely before touching the record, so a bad cell
// leaves it as it was.
absl::Status SetParsed(const Column& column, absl::string_view cell, Message* message,
                       const FieldDescriptor* field) {
  const Reflection* reflection = message->GetReflection();
  switch (column.kind) {
    case CellKind::kText:
      reflection->SetString(
          message, field,
          field->name() == "display_name" ? CleanDisplayName(cell) : std::string(cell));
      return absl::OkStatus();
    case CellKind::kTextList:
      reflection->ClearField(message, field);
      for (std::string& item : SplitList(cell)) {
        reflection->AddString(message, field, std::move(item));
      }
      return absl::OkStatus();
    case CellKind::kNumber:
    case CellKind::kBitsPerSecond: {
      absl::StatusOr<double> value = ParseNumber(WithoutCurrency(cell));
      if (!value.ok()) return value.status();
      if (*value < 0) return BadCell(cell, "a non-negative number");
      reflection->SetDouble(message, field,
                            column.kind == CellKind::kBitsPerSecond ? *value / 8 : *value);
      return absl::OkStatus();
    }
    case CellKind::kNumberList: {
      std::vector<double> values;
      for (absl::string_view item : absl::StrSplit(cell, ',')) {
        absl::StatusOr<double> value = ParseNumber(item);
        if (!value.ok()) return value.status();
        if (*value < 0) return BadCell(item, "a non-negative number");
        values.push_back(*value);
      }
      reflection->ClearField(message, field);
      for (double value : values) reflection->AddDouble(message, field, value);
      return absl::OkStatus();
    }
    case CellKind::kWholeNumber: {
      absl::StatusOr<double> value = ParseNumber(cell);
      if (!value.ok()) return value.status();
      if (*value < 0 || *value != std::floor(*value) || *value > 9e15) {
        return BadCell(cell, "a whole number");
      }
      reflection->SetInt64(message, field, static_cast<int64_t>(*value));
      return absl::OkStatus();
    }
    case CellKind::kFlag:
    case CellKind::kYesNo: {
      const absl::string_view text = absl::StripAsciiWhitespace(cell);
      bool value = false;
      if (absl::EqualsIgnoreCase(text, "true") || absl::EqualsIgnoreCase(text, "yes")) {
        value = true;
      } else if (!absl::EqualsIgnoreCase(text, "false") && !absl::EqualsIgnoreCase(text, "no")) {
        return BadCell(cell, column.kind == CellKind::kFlag ? "True or False" : "Yes or No");
      }
      reflection->SetBool(message, field, value);
      return absl::OkStatus();
    }
    case CellKind::kDate: {
      absl::StatusOr<google::type::Date> date = ParseDate(cell);
      if (!date.ok()) return date.status();
      reflection->MutableMessage(message, field)->CopyFrom(*date);
      return absl::OkStatus();
    }
    case CellKind::kTimestamp: {
      absl::StatusOr<google::protobuf::Timestamp> timestamp = ParseTimestamp(cell);
      if (!timestamp.ok()) return timestamp.status();
      reflection->MutableMessage(message, field)->CopyFrom(*timestamp);
      return absl::OkStatus();
    }
    case CellKind::kEnum: {
      absl::StatusOr<int> value = EnumValue(*field->enum_type(), cell);
      if (!value.ok()) return value.status();
      reflection->SetEnumValue(message, field, *value);
      return absl::OkStatus();
    }
    case CellKind::kEnumList: {
      std::vector<int> values;
      for (absl::string_view item : absl::StrSplit(cell, ',')) {
        absl::StatusOr<int> value = EnumValue(*field->enum_type(), item);
        if (!value.ok()) return value.status();
        values.push_back(*value);
      }
      reflection->ClearField(message, field);
      for (int value : values) reflection->AddEnumValue(message, field, value);
      return absl::OkStatus();
    }
  }
  return absl::InternalError("unknown cell kind");
}

}  // namespace

std::string FormatNumber(double value) {
  // Whole numbers as digits ("7000000000", as people and spreadsheets
  // expect) while every digit is exact; the rest in the shortest form.
  if (value == std::floor(value) && std::fabs(value) < 1e16) return absl::StrFormat("%.0f", value);
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return error == std::errc() ? std::string(buffer, end) : absl::StrCat(value);
}

std::string CleanDisplayName(absl::string_view name) {
  std::string clean;
  bool space = false;
  for (const char c : name) {
    if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
      space = !clean.empty();
      continue;
    }
    if (space) clean.push_back(' ');
    space = false;
    clean.push_back(c);
  }
  return clean;
}

absl::Status SetCell(const Column& column, absl::string_view cell, Message* record) {
  auto [message, field] = ResolveMutable(record, column.field);
  return SetParsed(column, cell, message, field);
}

std::string GetCell(const Column& column, const Message& record) {
  auto [message, field] = Resolve(record, column.field);
  const Reflection* reflection = message->GetReflection();
  if (field->is_repeated() ? reflection->FieldSize(*message, field) == 0
                           : !reflection->HasField(*message, field)) {
    return "";
  }
  switch (column.kind) {
    case CellKind::kText:
      return reflection->GetString(*message, field);
    case CellKind::kTextList: {
      std::vector<std::string> items;
      for (int i = 0; i < reflection->FieldSize(*message, field); ++i) {
        items.push_back(reflection->GetRepeatedString(*message, field, i));
      }
      return absl::StrJoin(items, ",");
    }
    case CellKind::kNumber:
      return FormatNumber(reflection->GetDouble(*message, field));
    case CellKind::kBitsPerSecond:
      return FormatNumber(reflection->GetDouble(*message, field) * 8);
    case CellKind::kNumberList: {
      std::vector<std::string> items;
      for (int i = 0; i < reflection->FieldSize(*message, field); ++i) {
        items.push_back(FormatNumber(reflection->GetRepeatedDouble(*message, field, i)));
      }
      return absl::StrJoin(items, ",");
    }
    case CellKind::kWholeNumber:
      return absl::StrCat(reflection->GetInt64(*message, field));
    case CellKind::kFlag:
      return reflection->GetBool(*message, field) ? "True" : "False";
    case CellKind::kYesNo:
      return reflection->GetBool(*message, field) ? "Yes" : "No";
    case CellKind::kDate:
      return FormatDate(
          static_cast<const google::type::Date&>(reflection->GetMessage(*message, field)));
    case CellKind::kTimestamp:
      return FormatTimestamp(
          static_cast<const google::protobuf::Timestamp&>(reflection->GetMessage(*message, field)));
    case CellKind::kEnum:
      return std::string(EnumLabel(*field->enum_type(), reflection->GetEnumValue(*message, field)));
    case CellKind::kEnumList: {
      std::vector<std::string> items;
      for (int i = 0; i < reflection->FieldSize(*message, field); ++i) {
        items.emplace_back(
            EnumLabel(*field->enum_type(), reflection->GetRepeatedEnumValue(*message, field, i)));
      }
      return absl::StrJoin(items, ",");
    }
  }
  return "";
}

const std::vector<Column>& EpochModelColumns() {
  using K = CellKind;
  static const auto* columns = new std::vector<Column>{
      {"Model", "display_name", K::kText, {"System"}},
      {"Domain", "domains", K::kTextList},
      {"Task", "tasks", K::kTextList},
      {"Organization", "organizations", K::kTextList},
      {"Authors", "authors", K::kText},
      {"Publication date", "publication_date", K::kDate},
      {"Reference", "reference", K::kText},
      {"Link", "link", K::kText},
      {"Citations", "citations", K::kWholeNumber},
      {"Notability criteria", "notability_criteria", K::kTextList},
      {"Notability criteria notes", "notability_criteria_notes", K::kText},
      {"Parameters", "parameters", K::kNumber},
      {"Parameters notes", "parameters_notes", K::kText},
      {"Training compute (FLOP)", "training_compute_flop", K::kNumber},
      {"Training compute notes", "training_compute_notes", K::kText},
      {"Training dataset size (total)",
       "training_dataset_size_datapoints",
       K::kNumberList,
       {"Training dataset size (datapoints)", "Training dataset size",
        "(DEPRECATED) Training dataset size (datapoints)"}},
      {"Dataset size notes", "dataset_size_notes", K::kText},
      {"Training time (hours)", "training_time_hours", K::kNumber},
      {"Training time notes", "training_time_notes", K::kText},
      {"Training hardware", "training_hardware", K::kTextList},
      {"Approach", "approaches", K::kTextList},
      {"Confidence", "confidence", K::kEnum},
      {"Abstract", "abstract", K::kText},
      {"Epochs", "epochs", K::kNumber},
      {"WikiText and Penn Treebank data", "benchmark_data", K::kText},
      {"Model accessibility", "accessibility", K::kEnum},
      {"Country (of organization)", "countries", K::kTextList, {"Country (from Organization)"}},
      {"Base model", "base_models", K::kTextList},
      {"Finetune compute (FLOP)", "finetune_compute_flop", K::kNumber},
      {"Finetune compute notes", "finetune_compute_notes", K::kText},
      {"Hardware quantity", "hardware_quantity", K::kNumber},
      {"Hardware utilization (MFU)",
       "hardware_utilization_mfu",
       K::kNumber,
       {"Hardware utilization"}},
      {"Last modified", "last_modified_time", K::kTimestamp},
      {"Training cloud compute vendor", "training_cloud_compute_vendor", K::kText},
      {"Training data center", "training_data_center", K::kText},
      {"Archived links", "archived_links", K::kText},
      {"Batch size", "batch_size", K::kNumber},
      {"Batch size notes", "batch_size_notes", K::kText},
      {"Organization categorization",
       "organization_categories",
       K::kTextList,
       {"Organization categorization (from Organization)"}},
      {"Foundation model", "foundation_model", K::kFlag},
      {"Training compute lower bound", "training_compute_lower_bound_flop", K::kNumber},
      {"Training compute upper bound", "training_compute_upper_bound_flop", K::kNumber},
      {"Training chip-hours", "training_chip_hours", K::kNumber},
      {"Training code accessibility", "training_code_accessibility", K::kEnum},
      {"Accessibility notes", "accessibility_notes", K::kText},
      {"Possibly over 1e23 FLOP", "possibly_over_1e23_flop", K::kFlag},
      {"Training compute cost (2023 USD)", "training_compute_cost_2023_usd", K::kNumber},
      {"Utilization notes", "utilization_notes", K::kText},
      {"Numerical format", "numerical_formats", K::kTextList},
      {"Frontier model", "frontier_model", K::kFlag},
      {"Training power draw (W)", "training_power_draw_watts", K::kNumber},
      {"Training compute estimation method", "training_compute_estimation_methods", K::kEnumList},
      {"Hugging Face developer id", "hugging_face_developer_id", K::kText},
      {"Post-training compute (FLOP)", "post_training_compute_flop", K::kNumber},
      {"Post-training compute notes", "post_training_compute_notes", K::kText},
      {"Hardware utilization (HFU)", "hardware_utilization_hfu", K::kNumber},
      {"Open model weights?", "open_model_weights", K::kYesNo},
  };
  return *columns;
}

const std::vector<Column>& EpochHardwareColumns() {
  using K = CellKind;
  static const auto* columns = new std::vector<Column>{
      {"Hardware name", "display_name", K::kText},
      {"Manufacturer", "manufacturer", K::kText},
      {"Type", "type", K::kEnum},
      {"Release date", "release_date", K::kDate},
      {"Release price (USD)", "release_price_usd", K::kNumber},
      {"Tensor-FP16/BF16 performance (FLOP/s)", "peak.tensor_fp16_bf16_flops", K::kNumber},
      {"FP8 performance (FLOP/s)", "peak.fp8_flops", K::kNumber},
      {"FP4 performance (FLOP/s)", "peak.fp4_flops", K::kNumber},
      {"Memory (bytes)", "memory_bytes", K::kNumber, {"Memory size per board (Byte)"}},
      {"Memory bandwidth (byte/s)", "memory_bandwidth_bytes_per_second", K::kNumber},
      {"Intranode bandwidth (byte/s)", "intra_node_bandwidth_bytes_per_second", K::kNumber},
      {"Internode bandwidth (bit/s)", "inter_node_bandwidth_bytes_per_second", K::kBitsPerSecond},
      {"TDP (W)", "tdp_watts", K::kNumber},
      {"FP64 (double precision) performance (FLOP/s)", "peak.fp64_flops", K::kNumber},
      {"FP32 (single precision) performance (FLOP/s)", "peak.fp32_flops", K::kNumber},
      {"TF32 (TensorFloat-32) performance (FLOP/s)", "peak.tf32_flops", K::kNumber},
      {"FP16 (half precision) performance (FLOP/s)", "peak.fp16_flops", K::kNumber},
      {"INT8 performance (OP/s)", "peak.int8_ops", K::kNumber},
      {"INT4 performance (OP/s)", "peak.int4_ops", K::kNumber},
  };
  return *columns;
}

const std::vector<absl::string_view>& EpochHardwareHeader() {
  static const auto* header = new std::vector<absl::string_view>{
      "Hardware name",
      "Manufacturer",
      "Type",
      "Notes",
      "Release date",
      "Release price (USD)",
      "Tensor-FP16/BF16 performance (FLOP/s)",
      "FP8 performance (FLOP/s)",
      "FP4 performance (FLOP/s)",
      "Memory (bytes)",
      "Memory bandwidth (byte/s)",
      "Intranode bandwidth (byte/s)",
      "Internode bandwidth (bit/s)",
      "TDP (W)",
      "FP64 (double precision) performance (FLOP/s)",
      "FP32 (single precision) performance (FLOP/s)",
      "TF32 (TensorFloat-32) performance (FLOP/s)",
      "FP16 (half precision) performance (FLOP/s)",
      "INT16 performance (OP/s)",
      "INT8 performance (OP/s)",
      "INT4 performance (OP/s)",
      "Foundry",
      "Die Size (mm^2)",
      "Base clock (MHz)",
      "Boost clock (MHz)",
      "Memory clock (MHz)",
      "Memory bus (bit)",
      "Tensor cores",
      "Process size (nm)",
      "Transistors (millions)",
      "Link to datasheet",
      "Source for the price",
      "ML models",
      "Last modified",
      "Max performance",
      "Energy efficiency",
      "Total processing performance (bit-OP/s)",
      "Price-performance",
      "ML OP/s",
  };
  return *header;
}

}  // namespace modelatlas::catalog
