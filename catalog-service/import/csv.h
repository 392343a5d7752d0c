// RFC 4180 CSV: a reader that yields one row at a time with the line it
// starts on, and a writer that quotes only where a cell needs it.
//
// Hand-written because none of the libraries this project may use (Debian
// 12's gRPC, protobuf, abseil, ...) reads CSV; the grammar is small.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "catalog-service/import/import_source.h"

namespace modelatlas::catalog {

struct CsvRow {
  // 1-based line of the file the row starts on (a quoted cell may span lines).
  int64_t line = 0;
  std::vector<std::string> cells;
};

// Reads `text` row by row. Quoted cells may hold commas, doubled quotes and
// line breaks; CRLF and LF both end a row; a UTF-8 byte-order mark before
// the first cell is dropped. A quote inside an unquoted cell is taken
// literally, as most writers produce it.
class CsvReader {
 public:
  explicit CsvReader(absl::string_view text);
  // Reads `source` `block_bytes` at a time (at least 4): the reader holds
  // one block and the row being read, never the whole file, and a row or a
  // quoted cell may span any number of blocks. A read error of the source
  // ends the rows with that error as status().
  CsvReader(const ImportSource& source, size_t block_bytes);

  // The next row, or false at the end of the text or on an error.
  bool Next(CsvRow* row);
  // INVALID_ARGUMENT naming the line for a quoted cell that never closes or
  // text after a closing quote; OK otherwise.
  const absl::Status& status() const { return status_; }
  // Longest cell accepted, bytes.
  static constexpr size_t kMaxCellBytes = 1 << 20;

 private:
  // Whether a byte is left at pos_, reading the next block when the window
  // is used up (false at the end of the text or on a read error).
  bool More() { return pos_ < window_.size() || NextBlock(); }
  bool NextBlock();

  // The bytes being read: the whole text, or the source's current block.
  absl::string_view window_;
  size_t pos_ = 0;
  const ImportSource* source_ = nullptr;
  size_t block_bytes_ = 0;
  int64_t next_offset_ = 0;  // where the source's next block starts
  std::string block_;
  int64_t line_ = 1;
  absl::Status status_;
};

// Appends one row to `out`, ending it with "\r\n" as RFC 4180 says. Cells
// holding a comma, a quote, a CR or an LF, or starting or ending with a
// space, or starting with a UTF-8 byte-order mark, are quoted.
void AppendCsvRow(const std::vector<std::string>& cells, std::string* out);

}  // namespace modelatlas::catalog
