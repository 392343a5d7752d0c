// How the CLI prints: aligned tables and field listings for people, JSON for
// scripts.
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/text/human_units.h"
#include "google/protobuf/message.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "google/type/date.pb.h"

namespace modelatlas::cli {

// Prints rows under a header, each column as wide as its widest cell (line
// breaks inside a cell become spaces). `bounded` (record lists) cuts cells
// at kMaxCellColumns characters, ending them in "...", so one long name
// cannot widen the table; answers with arithmetic print it whole.
void PrintTable(const std::vector<std::string>& header,
                const std::vector<std::vector<std::string>>& rows, bool bounded = false);
inline constexpr size_t kMaxCellColumns = 48;

// The value at a dotted field path of a record ("architecture.num_layers"),
// as a table shows it: whole numbers with thousands separators, large or
// fractional ones in 4 significant digits, dates as YYYY-MM-DD, lists
// joined by ","; "-" when unset. The path must exist (see query::QueryFields).
std::string FieldPathText(const google::protobuf::Message& record, absl::string_view path);

// Prints every set field of a record as "path: value", nested messages
// flattened ("architecture.num_layers: 32"), multi-line text indented.
void PrintFields(const google::protobuf::Message& message);

// With `lines` (--jsonl), ToJson writes one compact line instead of
// indented JSON.
void SetJsonLines(bool lines);

// The message in protobuf's JSON mapping, with proto field names.
std::string ToJson(const google::protobuf::Message& message);

// Reports a failed call on stderr (what was called, where, and why) and
// returns exit code 1.
int CallFailed(const grpc::Status& status, const std::string& service, const std::string& address);

// Prints the message as JSON (ToJson) and a newline on stdout.
void PrintJson(const google::protobuf::Message& message);

// Prints a stream of messages as ONE JSON document: a JSON array (an
// element per Add, "[]" when none), or with `lines` JSON Lines (one compact
// object per line). Finish (or the destructor) closes the array.
class JsonListPrinter {
 public:
  explicit JsonListPrinter(bool lines, std::ostream& out);
  ~JsonListPrinter();
  JsonListPrinter(const JsonListPrinter&) = delete;
  JsonListPrinter& operator=(const JsonListPrinter&) = delete;
  void Add(const google::protobuf::Message& message);
  void Finish();

 private:
  bool lines_;
  std::ostream& out_;
  int64_t count_ = 0;
  bool finished_ = false;
};

// One part of a memory bar: its letter, its name and its bytes.
struct BarPart {
  char letter;
  std::string name;
  double bytes;
};

// A bar `width` columns wide standing for `capacity_bytes`: each part as
// its letter repeated in proportion to its bytes (at least one column for a
// part above zero), the rest as '.'. A total above the capacity fills the
// bar and ends in '>'. E.g. "[WWWWWWKKAO..........]".
std::string MemoryBar(const std::vector<BarPart>& parts, double capacity_bytes, int width);

// The legend of MemoryBar: "W weights, K KV cache, ..., . free".
std::string MemoryBarLegend(const std::vector<BarPart>& parts);

// PrintJson when `json`, else PrintFields.
void PrintRecord(const google::protobuf::Message& message, bool json);

// Fixed(3.14159, 2) -> "3.14".
std::string Fixed(double value, int decimals);

inline constexpr double kBytesPerGib = 1073741824.0;  // 2^30

// Bytes as GiB (2^30 bytes): Gib(1610612736, 1) -> "1.5".
std::string Gib(double bytes, int decimals);

// "= 18.25 GB (1 GB = 1e9 bytes)", the decimal reading of a total.
std::string DecimalGbNote(double gb);

// A row of a memory table (COMPONENT, BYTES, GiB, ARITHMETIC).
std::vector<std::string> BytesRow(const std::string& component, int64_t bytes,
                                  const std::string& arithmetic);
inline const std::vector<std::string> kBytesHeader = {"COMPONENT", "BYTES", "GiB", "ARITHMETIC"};

// Fixed(value / scale, decimals) when `has`, else "-".
std::string OptionalFixed(bool has, double value, int decimals, double scale = 1);

// 4 significant digits: 1.25e+14.
std::string Scientific(double value);

// "2024-07-23"; "" for an unset date (year 0).
std::string DateText(const google::type::Date& date);

// "20 April 2019" (HumanDate); "" for an unset date.
std::string HumanDateText(const google::type::Date& date);

// The values joined by `separator`.
std::string Joined(const google::protobuf::RepeatedPtrField<std::string>& values,
                   absl::string_view separator);

// An enum spelling read as words: "open_weights_unrestricted" -> "open weights unrestricted".
std::string SpellingAsWords(absl::string_view spelling);

}  // namespace modelatlas::cli
