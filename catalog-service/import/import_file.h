// Reads a file of records in any format the catalog imports (Epoch AI's
// model and hardware CSVs, a Hugging Face config.json, GPU spec JSON, the
// catalog's own JSON export) into typed records, each with the row it came
// from, and every row it could not read with the reason. Writes the Epoch
// CSV layouts back. Plain C++ over protobuf messages: no store, no gRPC.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "catalog-service/import/import_source.h"
#include "modelatlas/catalog/v1/import_export.pb.h"
#include "modelatlas/common/v1/hardware.pb.h"
#include "modelatlas/common/v1/model.pb.h"

namespace modelatlas::catalog {

template <typename Record>
struct ParsedRecord {
  // Data row, 1-based, and the line it starts on.
  int64_t row = 0;
  int64_t line = 0;
  // The fields the row sets; `name` is set only when the file names the
  // resource itself (the catalog's JSON).
  Record record;
};

struct ParsedFile {
  v1::FileFormat format = v1::FILE_FORMAT_UNSPECIFIED;
  int64_t rows_read = 0;
  std::vector<ParsedRecord<common::v1::Model>> models;
  std::vector<ParsedRecord<common::v1::Hardware>> hardware;
  // Rows (or cells) that could not be read.
  std::vector<v1::ImportRejection> rejections;
  // CSV columns no typed field holds (kept in other_source_columns).
  std::vector<std::string> unmapped_columns;
  // Figures stored in the record's convention instead of the file's
  // (Epoch AI's hardware CSV: epoch_conventions.h).
  std::vector<v1::ImportConversion> conversions;
  // For a Hugging Face config: one model holding only the architecture,
  // for the model named in the import options.
  bool architecture_only = false;
};

// Largest file accepted, bytes.
inline constexpr size_t kMaxImportBytes = 256u << 20;
// Most rows accepted in one file.
inline constexpr int64_t kMaxImportRows = 1'000'000;

// The format of `content`, from the CSV header or the JSON keys;
// INVALID_ARGUMENT (field "options.format") saying what was seen when it
// matches none.
absl::StatusOr<v1::FileFormat> DetectFileFormat(absl::string_view content);

// Reads the whole file. A row that cannot be read is a rejection, never an
// error; an error means the file as a whole cannot be read (unknown format,
// malformed JSON, a CSV quote that never closes, no name column).
absl::StatusOr<ParsedFile> ParseImportFile(absl::string_view content, v1::FileFormat format,
                                           absl::string_view source_name);

// Reads the file as ParseImportFile does, handing its records on in chunks
// of up to `chunk_rows` (each chunk's ParsedFile holds those records and the
// rejections and conversions of the rows read since the previous chunk;
// format, unmapped columns and rows read so far are set on every chunk), so
// that a caller can plan and write a million-row file without holding all of
// it at once. Epoch CSV files are scanned whole first: an error of the file
// as a whole (a quote that never closes, too many rows) is returned before
// the first chunk is handed on. Other formats are read whole and handed on
// as one chunk. An error `on_chunk` returns stops the reading and is returned.
absl::Status ParseImportFileInChunks(absl::string_view content, v1::FileFormat format,
                                     absl::string_view source_name, size_t chunk_rows,
                                     const std::function<absl::Status(ParsedFile*)>& on_chunk);

// Bytes of a file ParseImportFileInChunks reads from an ImportSource at a time.
inline constexpr size_t kImportReadBlockBytes = 1 << 20;

// ParseImportFileInChunks of a file read from `source` `block_bytes` at a
// time: an Epoch CSV is read twice a block at a time (the check of the whole
// file, then the chunks), so the memory it takes is a block and a chunk's
// rows whatever the file's size; JSON and empty files are read whole into
// memory first (at most kMaxImportBytes), as their parsers need. The
// outcomes are those of the same text in memory.
absl::Status ParseImportFileInChunks(const ImportSource& source, v1::FileFormat format,
                                     absl::string_view source_name, size_t chunk_rows,
                                     const std::function<absl::Status(ParsedFile*)>& on_chunk,
                                     size_t block_bytes = kImportReadBlockBytes);

// all_ai_models.csv's 57 columns, one row per model, in the order given.
std::string ExportModelsCsv(const std::vector<common::v1::Model>& models);
// ml_hardware.csv's 39 columns, one row per record, in the order given.
std::string ExportHardwareCsv(const std::vector<common::v1::Hardware>& hardware);

}  // namespace modelatlas::catalog
