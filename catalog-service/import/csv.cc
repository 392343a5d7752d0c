#include "catalog-service/import/csv.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace modelatlas::catalog {

CsvReader::CsvReader(absl::string_view text) : text_(text) {
  absl::ConsumePrefix(&text_, "\xEF\xBB\xBF");
}

bool CsvReader::Next(CsvRow* row) {
  if (!status_.ok() || pos_ >= text_.size()) return false;
  row->line = line_;
  row->cells.clear();
  std::string cell;
  while (true) {
    const size_t cell_start_line = static_cast<size_t>(line_);
    cell.clear();
    bool at_row_end = false;
    if (pos_ < text_.size() && text_[pos_] == '"') {
      ++pos_;
      bool closed = false;
      while (pos_ < text_.size()) {
        const char c = text_[pos_++];
        if (c == '"') {
          if (pos_ < text_.size() && text_[pos_] == '"') {
            cell.push_back('"');
            ++pos_;
            continue;
          }
          closed = true;
          break;
        }
        if (c == '\n') ++line_;
        cell.push_back(c);
      }
      if (!closed) {
        status_ = absl::InvalidArgumentError(absl::StrCat(
            "line ", cell_start_line, ": a quoted cell is never closed (missing '\"')"));
        return false;
      }
      if (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '\n' && text_[pos_] != '\r') {
        status_ = absl::InvalidArgumentError(
            absl::StrCat("line ", line_, ": text after the closing quote of a cell"));
        return false;
      }
    } else {
      while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '\n' &&
             text_[pos_] != '\r') {
        cell.push_back(text_[pos_++]);
      }
    }
    if (cell.size() > kMaxCellBytes) {
      status_ = absl::InvalidArgumentError(absl::StrCat(
          "line ", cell_start_line, ": a cell is longer than ", kMaxCellBytes, " bytes"));
      return false;
    }
    row->cells.push_back(std::move(cell));
    if (pos_ >= text_.size()) {
      at_row_end = true;
    } else if (text_[pos_] == ',') {
      ++pos_;
    } else {
      if (text_[pos_] == '\r') ++pos_;
      if (pos_ < text_.size() && text_[pos_] == '\n') ++pos_;
      ++line_;
      at_row_end = true;
    }
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
