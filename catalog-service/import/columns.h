// The columns of Epoch AI's CSV files and the record fields they hold, in
// both directions: a cell is parsed into a field by the column's kind, and
// a field is written back as a cell the same files would hold.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace modelatlas::catalog {

// How a cell is read and written.
enum class CellKind {
  kText,          // verbatim
  kTextList,      // "a,b": split on commas not followed by a space ("Co., Ltd." stays whole)
  kNumber,        // "512.0", "1.5405e+20"
  kNumberList,    // "2590000000000,2592000000000"
  kWholeNumber,   // an int64 written as "4.0"
  kFlag,          // "True" / "False"
  kYesNo,         // "Yes" / "No"
  kDate,          // "2024-09-24", "2024-09", "2024", with or without a time
  kTimestamp,     // "2025-11-28 11:53:44+00:00", with or without a zone (then UTC)
  kEnum,          // a label of the field's enum (see EnumLabels)
  kEnumList,      // comma-joined labels
  kBitsPerSecond  // bit/s in the file, bytes per second in the record
};

struct Column {
  // The header in the newest files.
  absl::string_view header;
  // Dotted path of the record field, e.g. "peak.fp8_flops".
  absl::string_view field;
  CellKind kind;
  // Headers older releases used for the same column.
  std::vector<absl::string_view> older_headers = {};
};

// The 57 columns of all_ai_models.csv in its order, plus the older names
// of its columns found in earlier releases and the other model files.
const std::vector<Column>& EpochModelColumns();
// The columns of ml_hardware.csv that hardware records hold, in its order.
const std::vector<Column>& EpochHardwareColumns();
// The full header of ml_hardware.csv (export writes every column; those no
// field holds come from other_source_columns).
const std::vector<absl::string_view>& EpochHardwareHeader();

// A display name as records keep it: each run of white space (line breaks
// included) becomes one space, and the space around the name goes. The
// file's own text is kept in other_source_columns when it differs.
std::string CleanDisplayName(absl::string_view name);

// Parses `cell` (not empty) into the field of `record` named by
// column.field. INVALID_ARGUMENT with the reason, e.g. "\"abc\" is not a
// number"; the record is unchanged then.
absl::Status SetCell(const Column& column, absl::string_view cell,
                     google::protobuf::Message* record);

// The cell for the field of `record` named by column.field; empty when the
// field is not set.
std::string GetCell(const Column& column, const google::protobuf::Message& record);

// Text that parses back to exactly `value`: whole numbers below 1e16 as
// digits ("7000000000"), others in the shortest form ("0.52", "1.2e+22").
std::string FormatNumber(double value);

}  // namespace modelatlas::catalog
