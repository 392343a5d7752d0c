#include "cli/output.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "google/protobuf/util/json_util.h"
#include "google/type/date.pb.h"

namespace modelatlas::cli {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

std::string ScalarText(const Message& message, const FieldDescriptor* field, int index) {
  const auto* r = message.GetReflection();
  const bool repeated = field->is_repeated();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING:
      return repeated ? r->GetRepeatedString(message, field, index) : r->GetString(message, field);
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return absl::StrFormat("%.17g", repeated ? r->GetRepeatedDouble(message, field, index)
                                               : r->GetDouble(message, field));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return absl::StrCat(repeated ? r->GetRepeatedFloat(message, field, index)
                                   : r->GetFloat(message, field));
    case FieldDescriptor::CPPTYPE_INT32:
      return absl::StrCat(repeated ? r->GetRepeatedInt32(message, field, index)
                                   : r->GetInt32(message, field));
    case FieldDescriptor::CPPTYPE_INT64:
      return absl::StrCat(repeated ? r->GetRepeatedInt64(message, field, index)
                                   : r->GetInt64(message, field));
    case FieldDescriptor::CPPTYPE_UINT32:
      return absl::StrCat(repeated ? r->GetRepeatedUInt32(message, field, index)
                                   : r->GetUInt32(message, field));
    case FieldDescriptor::CPPTYPE_UINT64:
      return absl::StrCat(repeated ? r->GetRepeatedUInt64(message, field, index)
                                   : r->GetUInt64(message, field));
    case FieldDescriptor::CPPTYPE_BOOL:
      return (repeated ? r->GetRepeatedBool(message, field, index) : r->GetBool(message, field))
                 ? "true"
                 : "false";
    case FieldDescriptor::CPPTYPE_ENUM:
      return (repeated ? r->GetRepeatedEnum(message, field, index) : r->GetEnum(message, field))
          ->name();
    default:
      return "";
  }
}

std::string DateDigits(const google::type::Date& date) {
  return absl::StrFormat("%04d-%02d-%02d", date.year(), date.month(), date.day());
}

void PrintLine(const std::string& path, const std::string& value) {
  if (value.find('\n') == std::string::npos) {
    std::cout << path << ": " << value << "\n";
    return;
  }
  std::cout << path << ":\n    " << absl::StrReplaceAll(value, {{"\n", "\n    "}}) << "\n";
}

void PrintFieldsWithPrefix(const Message& message, const std::string& prefix) {
  const auto* r = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    const std::string path =
        prefix.empty() ? field->name() : absl::StrCat(prefix, ".", field->name());
    const std::string type_name =
        field->message_type() != nullptr ? field->message_type()->full_name() : "";
    if (type_name == "google.type.Date") {
      const auto& date = static_cast<const google::type::Date&>(r->GetMessage(message, field));
      PrintLine(path, DateDigits(date));
    } else if (type_name == "google.protobuf.Timestamp") {
      std::string json = ToJson(r->GetMessage(message, field));
      PrintLine(path, std::string(absl::StripPrefix(absl::StripSuffix(json, "\""), "\"")));
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (field->is_repeated()) {
        for (int i = 0; i < r->FieldSize(message, field); ++i) {
          PrintFieldsWithPrefix(r->GetRepeatedMessage(message, field, i),
                                absl::StrCat(path, "[", i, "]"));
        }
      } else {
        PrintFieldsWithPrefix(r->GetMessage(message, field), path);
      }
    } else if (field->is_repeated()) {
      std::vector<std::string> values;
      for (int i = 0; i < r->FieldSize(message, field); ++i) {
        values.push_back(ScalarText(message, field, i));
      }
      PrintLine(path, absl::StrJoin(values, "; "));
    } else {
      PrintLine(path, ScalarText(message, field, 0));
    }
  }
}

}  // namespace

namespace {

// Characters (UTF-8 code points) in `text`: what a terminal shows, near enough.
size_t DisplayColumns(absl::string_view text) {
  size_t columns = 0;
  for (unsigned char c : text) columns += (c & 0xC0) != 0x80;
  return columns;
}

// `text` on one line and, when `bounded`, at most kMaxCellColumns characters.
std::string Cell(absl::string_view text, bool bounded) {
  std::string cell = absl::StrReplaceAll(text, {{"\r\n", " "}, {"\n", " "}, {"\r", " "}});
  if (!bounded || DisplayColumns(cell) <= kMaxCellColumns) return cell;
  size_t columns = 0, end = 0;
  for (; end < cell.size(); ++end) {
    const bool lead = (static_cast<unsigned char>(cell[end]) & 0xC0) != 0x80;
    if (lead && ++columns > kMaxCellColumns - 3) break;
  }
  return absl::StrCat(cell.substr(0, end), "...");
}

}  // namespace

void PrintTable(const std::vector<std::string>& header,
                const std::vector<std::vector<std::string>>& rows, bool bounded) {
  std::vector<std::vector<std::string>> cells;
  cells.reserve(rows.size() + 1);
  cells.push_back(header);
  for (const auto& row : rows) {
    std::vector<std::string> line;
    for (const std::string& value : row) line.push_back(Cell(value, bounded));
    cells.push_back(std::move(line));
  }
  std::vector<size_t> widths(header.size());
  for (const auto& row : cells) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], DisplayColumns(row[i]));
    }
  }
  for (const auto& row : cells) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      absl::StrAppend(&line, row[i]);
      if (i + 1 < row.size()) line.append(widths[i] - DisplayColumns(row[i]) + 2, ' ');
    }
    std::cout << line << "\n";
  }
}

std::string FieldPathText(const Message& record, absl::string_view path) {
  const Message* message = &record;
  const std::vector<std::string> parts = absl::StrSplit(path, '.');
  for (size_t i = 0; i < parts.size(); ++i) {
    const FieldDescriptor* field = message->GetDescriptor()->FindFieldByName(parts[i]);
    if (field == nullptr) return "?";
    const auto* r = message->GetReflection();
    const bool last = i + 1 == parts.size();
    if (field->is_repeated()) {
      std::vector<std::string> values;
      for (int k = 0; k < r->FieldSize(*message, field); ++k) {
        values.push_back(ScalarText(*message, field, k));
      }
      return values.empty() ? "-" : absl::StrJoin(values, ",");
    }
    if (field->message_type() != nullptr &&
        field->message_type()->full_name() == "google.type.Date") {
      if (!r->HasField(*message, field)) return "-";
      return DateDigits(static_cast<const google::type::Date&>(r->GetMessage(*message, field)));
    }
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (last || !r->HasField(*message, field)) return "-";
      message = &r->GetMessage(*message, field);
      continue;
    }
    if (field->has_presence() && !r->HasField(*message, field)) return "-";
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE ||
        field->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT) {
      const double value = field->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE
                               ? r->GetDouble(*message, field)
                               : r->GetFloat(*message, field);
      return value == static_cast<double>(static_cast<int64_t>(value)) && value < 1e15 &&
                     value > -1e15
                 ? WithThousands(value)
                 : absl::StrFormat("%.4g", value);
    }
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_INT64 ||
        field->cpp_type() == FieldDescriptor::CPPTYPE_INT32) {
      return WithThousands(static_cast<double>(field->cpp_type() == FieldDescriptor::CPPTYPE_INT64
                                                   ? r->GetInt64(*message, field)
                                                   : r->GetInt32(*message, field)));
    }
    const std::string text = ScalarText(*message, field, 0);
    return text.empty() ? "-" : text;
  }
  return "-";
}

void PrintFields(const Message& message) { PrintFieldsWithPrefix(message, ""); }

namespace {
bool json_lines = false;  // --jsonl
}  // namespace

void SetJsonLines(bool lines) { json_lines = lines; }

std::string ToJson(const Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.add_whitespace = !json_lines;
  if (!google::protobuf::util::MessageToJsonString(message, &json, options).ok()) return "{}";
  while (!json.empty() && json.back() == '\n') json.pop_back();
  return json;
}

void PrintJson(const Message& message) { std::cout << ToJson(message) << "\n"; }

JsonListPrinter::JsonListPrinter(bool lines, std::ostream& out) : lines_(lines), out_(out) {}

JsonListPrinter::~JsonListPrinter() { Finish(); }

void JsonListPrinter::Add(const Message& message) {
  if (lines_) {
    out_ << ToJson(message) << "\n";
  } else {
    out_ << (count_ == 0 ? "[\n" : ",\n") << ToJson(message);
  }
  ++count_;
}

void JsonListPrinter::Finish() {
  if (finished_) return;
  finished_ = true;
  if (lines_) return;
  out_ << (count_ == 0 ? "[]\n" : "\n]\n");
  out_.flush();
}

std::string MemoryBar(const std::vector<BarPart>& parts, double capacity_bytes, int width) {
  double total = 0;
  for (const BarPart& part : parts) total += std::max(0.0, part.bytes);
  const bool over = total > capacity_bytes;
  // Over capacity the bar stands for the total (and ends in '>').
  const double scale = over ? total : capacity_bytes;
  std::string bar;
  if (scale <= 0 || width <= 0) return "[]";
  double cumulative = 0;
  for (const BarPart& part : parts) {
    if (part.bytes <= 0) continue;
    const int start = static_cast<int>(bar.size());
    cumulative += part.bytes;
    int end = static_cast<int>(std::lround(cumulative / scale * width));
    end = std::min(width, std::max(end, start + 1));
    bar.append(static_cast<size_t>(std::max(0, end - start)), part.letter);
  }
  if (static_cast<int>(bar.size()) > width) bar.resize(static_cast<size_t>(width));
  bar.append(static_cast<size_t>(width - static_cast<int>(bar.size())), '.');
  return absl::StrCat("[", bar, over ? ">" : "]");
}

std::string MemoryBarLegend(const std::vector<BarPart>& parts) {
  std::vector<std::string> names;
  for (const BarPart& part : parts)
    names.push_back(absl::StrCat(std::string(1, part.letter), " ", part.name));
  names.push_back(". free");
  return absl::StrJoin(names, ", ");
}

void PrintRecord(const Message& message, bool json) {
  if (json) {
    PrintJson(message);
  } else {
    PrintFields(message);
  }
}

std::string Fixed(double value, int decimals) { return absl::StrFormat("%.*f", decimals, value); }

std::string Gib(double bytes, int decimals) { return Fixed(bytes / kBytesPerGib, decimals); }

std::string DecimalGbNote(double gb) { return absl::StrFormat("= %.2f GB (1 GB = 1e9 bytes)", gb); }

std::vector<std::string> BytesRow(const std::string& component, int64_t bytes,
                                  const std::string& arithmetic) {
  return {component, absl::StrCat(bytes), Gib(static_cast<double>(bytes), 2), arithmetic};
}

std::string OptionalFixed(bool has, double value, int decimals, double scale) {
  return has ? Fixed(value / scale, decimals) : std::string("-");
}

std::string Scientific(double value) { return absl::StrFormat("%.4g", value); }

std::string DateText(const google::type::Date& date) {
  return date.year() == 0 ? "" : DateDigits(date);
}

std::string HumanDateText(const google::type::Date& date) {
  return HumanDate(date.year(), date.month(), date.day());
}

std::string Joined(const google::protobuf::RepeatedPtrField<std::string>& values,
                   absl::string_view separator) {
  return absl::StrJoin(values, separator);
}

std::string SpellingAsWords(absl::string_view spelling) {
  return absl::StrReplaceAll(spelling, {{"_", " "}});
}

// Reports a failed call: what was called, where, and why.
int CallFailed(const grpc::Status& status, const std::string& service, const std::string& address) {
  std::string code = absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code()));
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
      status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    std::cerr << "modelatlas: cannot reach " << service << " at " << address << " (" << code << ": "
              << status.error_message() << ")\n";
  } else {
    std::cerr << "modelatlas: " << service << " at " << address << " answered " << code << ": "
              << status.error_message() << "\n";
  }
  return 1;  // the call failed
}

}  // namespace modelatlas::cli
