#include "catalog-service/import/csv.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace modelatlas::catalog {

constexpr absl::string_view kByteOrderMark = "\xEF\xBB\xBF";

CsvReader::CsvReader(absl::string_view text) : window_(text) {
  absl::ConsumePrefix(&window_, kByteOrderMark);
}

CsvReader::CsvReader(const ImportSource& source, size_t block_bytes)
    : source_(&source), block_bytes_(std::max<size_t>(block_bytes, 4)) {
  // The first block, with the byte-order mark dropped (it fits: 4 bytes at least).
  if (NextBlock() && absl::StartsWith(window_, kByteOrderMark)) pos_ = kByteOrderMark.size();
}

bool CsvReader::NextBlock() {
  if (source_ == nullptr || !status_.ok() || next_offset_ >= source_->size_bytes()) return false;
  absl::StatusOr<absl::string_view> block = source_->Read(next_offset_, block_bytes_, &block_);
  if (!block.ok()) {
    status_ = block.status();
    return false;
  }
  window_ = *block;
  pos_ = 0;
  next_offset_ += static_cast<int64_t>(window_.size());
  return !window_.empty();
}

bool CsvReader::Next(CsvRow* row) {
  if (!status_.ok() || !More()) return false;
  row->line = line_;
  row->cells.clear();
  std::string cell;
  while (true) {
    const size_t cell_start_line = static_cast<size_t>(line_);
    cell.clear();
    bool at_row_end = false;
    if (More() && window_[pos_] == '"') {
      ++pos_;
      bool closed = false;
      while (More()) {
        const char c = window_[pos_++];
        if (c == '"') {
          if (More() && window_[pos_] == '"') {
            cell.push_back('"');
            ++pos_;
            continue;
          }
          closed = true;
          break;
        }
        if (c == '\n') ++line_;
        cell.push_back(c);
        // A cell too long is refused below, before it takes more memory.
        if (cell.size() > kMaxCellBytes) break;
      }
      if (!status_.ok()) return false;  // the source failed mid-cell
      if (!closed && cell.size() <= kMaxCellBytes) {
        status_ = absl::InvalidArgumentError(absl::StrCat(
            "line ", cell_start_line, ": a quoted cell is never closed (missing '\"')"));
        return false;
      }
      if (closed && More() && window_[pos_] != ',' && window_[pos_] != '\n' &&
          window_[pos_] != '\r') {
        status_ = absl::InvalidArgumentError(
            absl::StrCat("line ", line_, ": text after the closing quote of a cell"));
        return false;
      }
    } else {
      while (More() && window_[pos_] != ',' && window_[pos_] != '\n' && window_[pos_] != '\r' &&
             cell.size() <= kMaxCellBytes) {
        cell.push_back(window_[pos_++]);
      }
    }
    if (cell.size() > kMaxCellBytes) {
      status_ = absl::InvalidArgumentError(absl::StrCat(
          "line ", cell_start_line, ": a cell is longer than ", kMaxCellBytes, " bytes"));
      return false;
    }
    row->cells.push_back(std::move(cell));
    if (!More()) {
      at_row_end = true;
    } else if (window_[pos_] == ',') {
      ++pos_;
    } else {
      if (window_[pos_] == '\r') ++pos_;
      if (More() && window_[pos_] == '\n') ++pos_;
      ++line_;
      at_row_end = true;
    }
    // A read error of the source ends the rows: the row may be cut short.
    if (!status_.ok()) return false;
    if (at_row_end) return true;
  }
}

void AppendCsvRow(const std::vector<std::string>& cells, std::string* out) {
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out->push_back(',');
    const std::string& cell = cells[i];
    // A leading byte-order mark is quoted too: unquoted at the start of a
    // file, a reader would take it for the file's own and drop it.
    const bool quote = cell.find_first_of(",\"\r\n") != std::string::npos ||
                       (!cell.empty() && (cell.front() == ' ' || cell.back() == ' ')) ||
                       absl::StartsWith(cell, "\xEF\xBB\xBF");
    if (!quote) {
      out->append(cell);
      continue;
    }
    out->push_back('"');
    for (char c : cell) {
      if (c == '"') out->push_back('"');
      out->push_back(c);
    }
    out->push_back('"');
  }
  out->append("\r\n");
}

}  // namespace modelatlas::catalog
