#include "catalog-service/import/import_file.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "catalog-service/import/columns.h"
#include "catalog-service/import/csv.h"
#include "catalog-service/import/epoch_conventions.h"
#include "common/formats/hf_config.h"
#include "common/status/errors.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "modelatlas/catalog/v1/dataset.pb.h"

namespace modelatlas::catalog {
namespace {

using common::v1::Hardware;
using common::v1::Model;
using google::protobuf::Struct;
using google::protobuf::Value;

constexpr absl::string_view kFormatField = "options.format";

absl::string_view StripBom(absl::string_view text) {
  absl::ConsumePrefix(&text, "\xEF\xBB\xBF");
  return text;
}

// JSON nested deeper than this is refused before any parser sees it:
// protobuf's JSON parser takes time and stack growing with the depth (20,000
// nested arrays took 12.5 CPU-seconds), and no file of ours nests past 10.
constexpr int kMaxJsonDepth = 100;

// The deepest nesting of arrays and objects in `json` (text in strings not
// counted), or kMaxJsonDepth + 1 as soon as it is deeper than that.
int JsonDepth(absl::string_view json) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > kMaxJsonDepth) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

absl::StatusOr<Struct> ParseJsonObject(absl::string_view content) {
  Struct object;
  auto status = google::protobuf::util::JsonStringToMessage(std::string(content), &object);
  if (!status.ok()) {
    return InvalidFieldError("data",
                             absl::StrCat("is not a JSON object: ", std::string(status.message())));
  }
  return object;
}

bool AllValuesHaveKeys(const Struct& object, std::initializer_list<const char*> keys) {
  if (object.fields().empty()) return false;
  for (const auto& [name, value] : object.fields()) {
    if (value.kind_case() != Value::kStructValue) return false;
    for (const char* key : keys) {
      if (!value.struct_value().fields().contains(key)) return false;
    }
  }
  return true;
}

// ---- CSV ----

// The typed column a header stands for, by its current or an older name.
const Column* FindColumn(const std::vector<Column>& columns, absl::string_view header) {
  for (const Column& column : columns) {
    if (column.header == header) return &column;
  }
  for (const Column& column : columns) {
    for (absl::string_view older : column.older_headers) {
      if (older == header) return &column;
    }
  }
  return nullptr;
}

bool IsNumeric(CellKind kind) {
  return kind == CellKind::kNumber || kind == CellKind::kNumberList ||
         kind == CellKind::kWholeNumber || kind == CellKind::kBitsPerSecond;
}

// The cell as export should write it: the file's own text when the record
// kept it (a label or date spelled other than the canonical way) and it
// still reads back to the record's value, else the canonical text.
template <typename Record>
std::string ExportCell(const Column& column, const Record& record) {
  std::string canonical = GetCell(column, record);
  auto verbatim = record.other_source_columns().find(std::string(column.header));
  if (verbatim == record.other_source_columns().end() || canonical.empty()) return canonical;
  Record scratch;
  if (SetCell(column, verbatim->second, &scratch).ok() && GetCell(column, scratch) == canonical) {
    return verbatim->second;
  }
  return canonical;
}

// Whether the file as a whole can be read past its header: every quoted
// cell closes and it has at most kMaxImportRows rows. Checked before the
// first chunk is handed on, so that a file refused as a whole has nothing of
// it written (a chunk is written as soon as it is planned).
absl::Status CheckWholeCsv(CsvReader reader) {
  CsvRow row;
  int64_t rows = -1;  // the header is not a data row
  while (reader.Next(&row)) {
    bool blank = true;
    for (const std::string& cell : row.cells) blank = blank && cell.empty();
    if (blank && rows >= 0) continue;
    if (++rows > kMaxImportRows) {
      return InvalidFieldError("data", absl::StrCat("more than ", kMaxImportRows, " rows"));
    }
  }
  if (!reader.status().ok()) return InvalidFieldError("data", reader.status().message());
  return absl::OkStatus();
}

// Reads the rows into `records`; every `chunk_rows` records (and at the
// end) calls `on_chunk`, which takes them (and the rows' rejections).
template <typename Record>
absl::Status ParseCsv(CsvReader reader, const std::vector<Column>& columns,
                      absl::string_view name_column, const common::v1::Provenance& provenance,
                      size_t chunk_rows, const std::function<absl::Status()>& on_chunk,
                      std::vector<ParsedRecord<Record>>* records, ParsedFile* file) {
  CsvRow header_row;
  if (!reader.Next(&header_row)) {
    return reader.status().ok() ? InvalidFieldError("data", "the file is empty")
                                : InvalidFieldError("data", reader.status().message());
  }
  // Current column names first; an older name only for a field no current
  // name in this file holds (frontier_ai_models.csv has both "Training
  // dataset size (total)" and an unrelated "Training dataset size").
  std::vector<std::string> headers;
  std::vector<const Column*> mapped(header_row.cells.size(), nullptr);
  for (const std::string& raw : header_row.cells) {
    headers.emplace_back(absl::StripAsciiWhitespace(raw));
  }
  auto taken = [&](const Column* column) {
    return std::find(mapped.begin(), mapped.end(), column) != mapped.end();
  };
  for (size_t i = 0; i < headers.size(); ++i) {
    for (const Column& column : columns) {
      if (column.header == headers[i] && !taken(&column)) mapped[i] = &column;
    }
  }
  for (size_t i = 0; i < headers.size(); ++i) {
    const Column* column = mapped[i] == nullptr ? FindColumn(columns, headers[i]) : nullptr;
    if (column != nullptr && !taken(column)) mapped[i] = column;
  }
  int name_index = -1;
  for (size_t i = 0; i < headers.size(); ++i) {
    if (mapped[i] != nullptr && mapped[i]->header == name_column) name_index = static_cast<int>(i);
    if (mapped[i] == nullptr && !headers[i].empty()) file->unmapped_columns.push_back(headers[i]);
  }
  if (name_index < 0) {
    return InvalidFieldError("data",
                             absl::StrCat("the header has no \"", name_column, "\" column"));
  }

  CsvRow row;
  int64_t row_number = 0;
  while (reader.Next(&row)) {
    bool blank = true;
    for (const std::string& cell : row.cells) blank = blank && cell.empty();
    if (blank) continue;
    ++row_number;
    if (row_number > kMaxImportRows) {
      return InvalidFieldError("data", absl::StrCat("more than ", kMaxImportRows, " rows"));
    }
    const std::string display_name = CleanDisplayName(
        name_index < static_cast<int>(row.cells.size()) ? row.cells[name_index] : "");
    auto reject = [&](absl::string_view column, absl::string_view reason) {
      v1::ImportRejection* rejection = &file->rejections.emplace_back();
      rejection->set_row(row_number);
      rejection->set_line(row.line);
      rejection->set_column(std::string(column));
      rejection->set_reason(std::string(reason));
      rejection->set_record(display_name);
    };
    if (row.cells.size() > headers.size()) {
      bool extra = false;
      for (size_t i = headers.size(); i < row.cells.size(); ++i)
        extra = extra || !row.cells[i].empty();
      if (extra) {
        reject("", absl::StrCat("the row has ", row.cells.size(), " cells but the header has ",
                                headers.size()));
        continue;
      }
    }
    if (absl::StripAsciiWhitespace(display_name).empty()) {
      reject(name_column, "the name is empty");
      continue;
    }
    Record record;
    bool rejected = false;
    for (size_t i = 0; i < headers.size() && i < row.cells.size(); ++i) {
      const std::string& cell = row.cells[i];
      if (cell.empty()) continue;
      if (mapped[i] == nullptr) {
        if (!headers[i].empty()) (*record.mutable_other_source_columns())[headers[i]] = cell;
        continue;
      }
      if (absl::Status set = SetCell(*mapped[i], cell, &record); !set.ok()) {
        reject(headers[i], set.message());
        rejected = true;
        continue;
      }
      if (!IsNumeric(mapped[i]->kind) && GetCell(*mapped[i], record) != cell) {
        (*record.mutable_other_source_columns())[std::string(mapped[i]->header)] = cell;
      }
    }
    if (rejected) continue;
    *record.mutable_provenance() = provenance;
    records->push_back({row_number, row.line, std::move(record)});
    if (records->size() >= chunk_rows) {
      file->rows_read = row_number;
      if (absl::Status s = on_chunk(); !s.ok()) return s;
    }
  }
  if (!reader.status().ok()) return InvalidFieldError("data", reader.status().message());
  file->rows_read = row_number;
  return on_chunk();
}

common::v1::Provenance EpochProvenance(absl::string_view source_name, absl::string_view what,
                                       absl::string_view url) {
  common::v1::Provenance provenance;
  provenance.set_source(absl::StrCat("Epoch AI, ", source_name.empty() ? what : source_name));
  provenance.add_urls(std::string(url));
  provenance.set_notes("Imported from Epoch AI's data (CC BY 4.0).");
  return provenance;
}

// ---- JSON ----

double Number(const Struct& object, const char* key, double scale, bool* present) {
  auto it = object.fields().find(key);
  *present = it != object.fields().end() && it->second.kind_case() == Value::kNumberValue;
  return *present ? it->second.number_value() * scale : 0;
}

// Sets `setter(value * scale)` when the key holds a non-negative number;
// rejects the record otherwise (a present key that is not a number).
template <typename Setter>
bool ReadNumber(const Struct& object, const char* key, double scale, Setter setter,
                const std::function<void(absl::string_view, absl::string_view)>& reject) {
  auto it = object.fields().find(key);
  if (it == object.fields().end() || it->second.kind_case() == Value::kNullValue) return true;
  if (it->second.kind_case() != Value::kNumberValue || it->second.number_value() < 0) {
    reject(key, "must be a non-negative number");
    return false;
  }
  setter(it->second.number_value() * scale);
  return true;
}

absl::Status ParseLlmAnalysisGpu(const Struct& object, absl::string_view source_name,
                                 ParsedFile* file) {
  file->rows_read = 1;
  Hardware hardware;
  auto name = object.fields().find("name");
  bool ok = true;
  auto reject = [&](absl::string_view column, absl::string_view reason) {
    v1::ImportRejection* rejection = &file->rejections.emplace_back();
    rejection->set_row(1);
    rejection->set_line(1);
    rejection->set_column(std::string(column));
    rejection->set_reason(std::string(reason));
    ok = false;
  };
  if (name == object.fields().end() || name->second.string_value().empty()) {
    reject("name", "the name is empty");
    return absl::OkStatus();
  }
  hardware.set_display_name(name->second.string_value());
  // llm-analysis writes decimal GB and TFLOPS (its A100 80 GB is 80, its
  // H100 SXM fp16 peak the dense 989).
  constexpr double kGB = 1e9, kTera = 1e12;
  ok = ReadNumber(
           object, "mem_per_GPU_in_GB", kGB, [&](double v) { hardware.set_memory_bytes(v); },
           reject) &&
       ok;
  ok = ReadNumber(
           object, "hbm_bandwidth_in_GB_per_sec", kGB,
           [&](double v) { hardware.set_memory_bandwidth_bytes_per_second(v); }, reject) &&
       ok;
  ok = ReadNumber(
           object, "intra_node_bandwidth_in_GB_per_sec", kGB,
           [&](double v) { hardware.set_intra_node_bandwidth_bytes_per_second(v); }, reject) &&
       ok;
  ok = ReadNumber(
           object, "inter_node_bandwidth_in_GB_per_sec", kGB,
           [&](double v) { hardware.set_inter_node_bandwidth_bytes_per_second(v); }, reject) &&
       ok;
  ok = ReadNumber(
           object, "peak_fp16_TFLOPS", kTera,
           [&](double v) { hardware.mutable_peak()->set_tensor_fp16_bf16_flops(v); }, reject) &&
       ok;
  ok = ReadNumber(
           object, "peak_i8_TFLOPS", kTera,
           [&](double v) { hardware.mutable_peak()->set_int8_ops(v); }, reject) &&
       ok;
  ok = ReadNumber(
           object, "peak_i4_TFLOPS", kTera,
           [&](double v) { hardware.mutable_peak()->set_int4_ops(v); }, reject) &&
       ok;
  if (!ok) return absl::OkStatus();
  bool present = false;
  const double latency = Number(object, "intra_node_min_message_latency", 1, &present);
  if (present) {
    (*hardware.mutable_other_source_columns())["intra_node_min_message_latency"] =
        FormatNumber(latency);
  }
  hardware.set_type(common::v1::HARDWARE_TYPE_GPU);
  common::v1::Provenance* provenance = hardware.mutable_provenance();
  provenance->set_source(absl::StrCat("llm-analysis GPU config ", source_name));
  provenance->add_urls("https://github.com/cli99/llm-analysis");
  file->hardware.push_back({1, 1, std::move(hardware)});
  return absl::OkStatus();
}

absl::Status ParseGpuPoor(const Struct& object, absl::string_view source_name, ParsedFile* file) {
  // gpu_poor's table: decimal GB, GB/s, and the FP32 non-tensor TFLOPS.
  std::map<std::string, const Struct*> sorted;
  for (const auto& [name, value] : object.fields()) sorted[name] = &value.struct_value();
  int64_t row = 0;
  for (const auto& [key, entry] : sorted) {
    const std::string name = key;  // lambdas cannot capture structured bindings in clang 14
    ++row;
    bool ok = true;
    auto reject = [&](absl::string_view column, absl::string_view reason) {
      v1::ImportRejection* rejection = &file->rejections.emplace_back();
      rejection->set_row(row);
      rejection->set_column(std::string(column));
      rejection->set_reason(std::string(reason));
      rejection->set_record(name);
      ok = false;
    };
    Hardware hardware;
    hardware.set_display_name(name);
    ReadNumber(
        *entry, "memory", 1e9, [&](double v) { hardware.set_memory_bytes(v); }, reject);
    ReadNumber(
        *entry, "bandwidth", 1e9,
        [&](double v) { hardware.set_memory_bandwidth_bytes_per_second(v); }, reject);
    ReadNumber(
        *entry, "compute", 1e12, [&](double v) { hardware.mutable_peak()->set_fp32_flops(v); },
        reject);
    if (!ok) continue;
    hardware.set_type(common::v1::HARDWARE_TYPE_GPU);
    common::v1::Provenance* provenance = hardware.mutable_provenance();
    provenance->set_source(absl::StrCat("gpu_poor GPU table ", source_name));
    provenance->add_urls("https://github.com/RahulSChand/gpu_poor");
    file->hardware.push_back({row, 0, std::move(hardware)});
  }
  file->rows_read = row;
  return absl::OkStatus();
}

absl::Status ParseCatalogJson(absl::string_view content, absl::string_view source_name,
                              ParsedFile* file) {
  v1::Dataset dataset;
  auto status = google::protobuf::util::JsonStringToMessage(std::string(content), &dataset);
  if (!status.ok()) {
    return InvalidFieldError(
        "data", absl::StrCat("is not a catalog export: ", std::string(status.message())));
  }
  int64_t row = 0;
  auto keep = [&](auto* record) {
    record->clear_etag();
    record->clear_revision();
    if (record->provenance().source().empty()) {
      record->mutable_provenance()->set_source(absl::StrCat("ModelAtlas export ", source_name));
    }
  };
  for (Model& model : *dataset.mutable_models()) {
    keep(&model);
    file->models.push_back({++row, 0, std::move(model)});
  }
  for (Hardware& hardware : *dataset.mutable_hardware()) {
    keep(&hardware);
    file->hardware.push_back({++row, 0, std::move(hardware)});
  }
  file->rows_read = row;
  return absl::OkStatus();
}

absl::Status ParseHfConfig(absl::string_view content, absl::string_view source_name,
                           ParsedFile* file) {
  file->rows_read = 1;
  file->architecture_only = true;
  absl::StatusOr<common::v1::Architecture> architecture = ArchitectureFromHfConfig(content);
  if (!architecture.ok()) {
    v1::ImportRejection* rejection = &file->rejections.emplace_back();
    rejection->set_row(1);
    rejection->set_reason(std::string(architecture.status().message()));
    return absl::OkStatus();
  }
  Model model;
  *model.mutable_architecture() = *std::move(architecture);
  if (model.architecture().source().empty()) {
    model.mutable_architecture()->set_source(
        absl::StrCat("Hugging Face config.json", source_name.empty() ? "" : ": ", source_name));
  }
  file->models.push_back({1, 1, std::move(model)});
  return absl::OkStatus();
}

// An Epoch AI CSV (models or hardware) read from `open()`, a reader at the
// file's start: checked whole first (a second reader) unless `whole`, then
// its rows handed on in chunks through `hand_on`.
absl::Status ParseEpochCsv(const std::function<CsvReader()>& open, v1::FileFormat format,
                           absl::string_view source_name, size_t chunk_rows, bool whole,
                           ParsedFile* file, const std::function<absl::Status()>& hand_on) {
  if (!whole) {
    if (absl::Status status = CheckWholeCsv(open()); !status.ok()) return status;
  }
  if (format == v1::FILE_FORMAT_EPOCH_MODELS_CSV) {
    return ParseCsv(
        open(), EpochModelColumns(), "Model",
        EpochProvenance(source_name, "models CSV", "https://epoch.ai/data/ai-models"), chunk_rows,
        [&]() -> absl::Status {
          // Figures the notes state that no column holds (epoch_conventions.h).
          for (ParsedRecord<Model>& row : file->models) {
            ConvertEpochModelRow(row.row, &row.record, &file->conversions);
          }
          return hand_on();
        },
        &file->models, file);
  }
  return ParseCsv(
      open(), EpochHardwareColumns(), "Hardware name",
      EpochProvenance(source_name, "hardware CSV",
                      "https://epoch.ai/data/machine-learning-hardware"),
      chunk_rows,
      [&]() -> absl::Status {
        // Epoch's decimal GB and GeForce FP16-accumulate peaks, into the
        // record's conventions before any matching (epoch_conventions.h).
        for (ParsedRecord<Hardware>& row : file->hardware) {
          ConvertEpochHardwareRow(row.row, &row.record, &file->conversions);
        }
        return hand_on();
      },
      &file->hardware, file);
}

// The Epoch CSV format a header row names; INVALID_ARGUMENT saying what was
// seen when it names none.
absl::StatusOr<v1::FileFormat> DetectCsvFormat(CsvReader reader) {
  CsvRow header;
  if (!reader.Next(&header)) {
    if (!reader.status().ok() && !absl::IsInvalidArgument(reader.status())) return reader.status();
    return InvalidFieldError("data", "the file has no header row");
  }
  std::vector<std::string> seen;
  for (const std::string& cell : header.cells) {
    const std::string name(absl::StripAsciiWhitespace(cell));
    if (FindColumn(EpochModelColumns(), name) == &EpochModelColumns().front()) {
      return v1::FILE_FORMAT_EPOCH_MODELS_CSV;
    }
    if (name == "Hardware name") return v1::FILE_FORMAT_EPOCH_HARDWARE_CSV;
    if (seen.size() < 5) seen.push_back(absl::StrCat("\"", name, "\""));
  }
  return InvalidFieldError(
      kFormatField, absl::StrCat("cannot tell the format of a file whose first columns are ",
                                 absl::StrJoin(seen, ", "),
                                 ": Epoch AI model files have a \"Model\" column, hardware files a "
                                 "\"Hardware name\" column"));
}

// A chunk hands its rows on and starts the next one empty; what the file
// says about itself (format, unmapped columns, rows read so far) stays.
std::function<absl::Status()> HandOn(ParsedFile* file,
                                     const std::function<absl::Status(ParsedFile*)>& on_chunk) {
  return [file, &on_chunk]() -> absl::Status {
    absl::Status s = on_chunk(file);
    file->models.clear();
    file->hardware.clear();
    file->rejections.clear();
    file->conversions.clear();
    return s;
  };
}

}  // namespace

absl::StatusOr<v1::FileFormat> DetectFileFormat(absl::string_view content) {
  absl::string_view text = absl::StripLeadingAsciiWhitespace(StripBom(content));
  if (text.empty()) return InvalidFieldError("data", "the file is empty");
  if (text.front() == '{') {
    absl::StatusOr<Struct> object = ParseJsonObject(text);
    if (!object.ok()) return object.status();
    const auto& fields = object->fields();
    if (fields.contains("models") || fields.contains("hardware")) {
      return v1::FILE_FORMAT_CATALOG_JSON;
    }
    if (fields.contains("mem_per_GPU_in_GB")) return v1::FILE_FORMAT_LLM_ANALYSIS_GPU_JSON;
    if (fields.contains("model_type") || fields.contains("architectures")) {
      return v1::FILE_FORMAT_HF_CONFIG_JSON;
    }
    if (AllValuesHaveKeys(*object, {"memory", "bandwidth", "compute"})) {
      return v1::FILE_FORMAT_GPU_POOR_JSON;
    }
    std::vector<std::string> keys;
    for (const auto& [key, value] : fields) {
      if (keys.size() < 5) keys.push_back(key);
    }
    return InvalidFieldError(
        kFormatField,
        absl::StrCat("cannot tell the format of a JSON object with keys ",
                     absl::StrJoin(keys, ", "),
                     ": expected a catalog export (\"models\"/\"hardware\"), a Hugging Face "
                     "config.json (\"model_type\"), an llm-analysis GPU config "
                     "(\"mem_per_GPU_in_GB\") or gpu_poor's GPU table"));
  }
  return DetectCsvFormat(CsvReader(content));
}

absl::Status ParseImportFileInChunks(absl::string_view content, v1::FileFormat format,
                                     absl::string_view source_name, size_t chunk_rows,
                                     const std::function<absl::Status(ParsedFile*)>& on_chunk) {
  if (content.size() > kMaxImportBytes) {
    return InvalidFieldError(
        "data", absl::StrCat("is ", content.size(), " bytes; the limit is ", kMaxImportBytes));
  }
  content = StripBom(content);
  if (absl::string_view start = absl::StripLeadingAsciiWhitespace(content);
      !start.empty() && (start.front() == '{' || start.front() == '[') &&
      JsonDepth(start) > kMaxJsonDepth) {
    return InvalidFieldError("data", absl::StrCat("nests JSON arrays and objects more than ",
                                                  kMaxJsonDepth, " levels deep"));
  }
  if (format == v1::FILE_FORMAT_UNSPECIFIED) {
    absl::StatusOr<v1::FileFormat> detected = DetectFileFormat(content);
    if (!detected.ok()) return detected.status();
    format = *detected;
  }
  chunk_rows = std::max<size_t>(chunk_rows, 1);
  const bool whole = chunk_rows == std::numeric_limits<size_t>::max();
  ParsedFile file;
  file.format = format;
  const std::function<absl::Status()> hand_on = HandOn(&file, on_chunk);
  absl::Status status;
  switch (format) {
    case v1::FILE_FORMAT_EPOCH_MODELS_CSV:
    case v1::FILE_FORMAT_EPOCH_HARDWARE_CSV:
      return ParseEpochCsv([&] { return CsvReader(content); }, format, source_name, chunk_rows,
                           whole, &file, hand_on);
    case v1::FILE_FORMAT_HF_CONFIG_JSON:
      status = ParseHfConfig(content, source_name, &file);
      break;
    case v1::FILE_FORMAT_LLM_ANALYSIS_GPU_JSON:
    case v1::FILE_FORMAT_GPU_POOR_JSON: {
      absl::StatusOr<Struct> object = ParseJsonObject(content);
      if (!object.ok()) return object.status();
      status = format == v1::FILE_FORMAT_GPU_POOR_JSON
                   ? ParseGpuPoor(*object, source_name, &file)
                   : ParseLlmAnalysisGpu(*object, source_name, &file);
      break;
    }
    case v1::FILE_FORMAT_CATALOG_JSON:
      status = ParseCatalogJson(content, source_name, &file);
      break;
    default:
      return InvalidFieldError(kFormatField, absl::StrCat("unknown format ", format));
  }
  if (!status.ok()) return status;
  // JSON files are read whole (they are small: a GPU table, a config, the
  // catalog's own export) and handed on as one chunk.
  return hand_on();
}

namespace {

// The first byte of `source` after a byte-order mark and white space
// (nullopt: none), read a block at a time.
absl::StatusOr<std::optional<char>> FirstSignificantByte(const ImportSource& source,
                                                         size_t block_bytes) {
  std::string buffer;
  for (int64_t offset = 0; offset < source.size_bytes();) {
    absl::StatusOr<absl::string_view> block = source.Read(offset, block_bytes, &buffer);
    if (!block.ok()) return block.status();
    if (block->empty()) break;
    absl::string_view text = *block;
    if (offset == 0) text = StripBom(text);
    offset += static_cast<int64_t>(block->size());
    text = absl::StripLeadingAsciiWhitespace(text);
    if (!text.empty()) return std::optional<char>(text.front());
  }
  return std::optional<char>();
}

// The whole of `source` in memory.
absl::StatusOr<std::string> ReadWhole(const ImportSource& source, size_t block_bytes) {
  std::string content;
  content.reserve(static_cast<size_t>(source.size_bytes()));
  std::string buffer;
  while (static_cast<int64_t>(content.size()) < source.size_bytes()) {
    absl::StatusOr<absl::string_view> block =
        source.Read(static_cast<int64_t>(content.size()), block_bytes, &buffer);
    if (!block.ok()) return block.status();
    if (block->empty()) break;
    content.append(block->data(), block->size());
  }
  return content;
}

}  // namespace

absl::Status ParseImportFileInChunks(const ImportSource& source, v1::FileFormat format,
                                     absl::string_view source_name, size_t chunk_rows,
                                     const std::function<absl::Status(ParsedFile*)>& on_chunk,
                                     size_t block_bytes) {
  if (source.size_bytes() > static_cast<int64_t>(kMaxImportBytes)) {
    return InvalidFieldError(
        "data", absl::StrCat("is ", source.size_bytes(), " bytes; the limit is ", kMaxImportBytes));
  }
  block_bytes = std::max<size_t>(block_bytes, 4);  // a byte-order mark fits the first block
  absl::StatusOr<std::optional<char>> first = FirstSignificantByte(source, block_bytes);
  if (!first.ok()) return first.status();
  const bool csv_format = format == v1::FILE_FORMAT_UNSPECIFIED ||
                          format == v1::FILE_FORMAT_EPOCH_MODELS_CSV ||
                          format == v1::FILE_FORMAT_EPOCH_HARDWARE_CSV;
  if (!first->has_value() || **first == '{' || **first == '[' || !csv_format) {
    // JSON (a GPU table, a config, the catalog's export) and empty files are
    // read whole, as from memory: their parsers take the whole text.
    absl::StatusOr<std::string> content = ReadWhole(source, block_bytes);
    if (!content.ok()) return content.status();
    return ParseImportFileInChunks(*content, format, source_name, chunk_rows, on_chunk);
  }
  // A CSV is read a block at a time, twice (checked whole, then parsed),
  // never held whole.
  auto open = [&] { return CsvReader(source, block_bytes); };
  if (format == v1::FILE_FORMAT_UNSPECIFIED) {
    absl::StatusOr<v1::FileFormat> detected = DetectCsvFormat(open());
    if (!detected.ok()) return detected.status();
    format = *detected;
  }
  chunk_rows = std::max<size_t>(chunk_rows, 1);
  ParsedFile file;
  file.format = format;
  return ParseEpochCsv(open, format, source_name, chunk_rows,
                       chunk_rows == std::numeric_limits<size_t>::max(), &file,
                       HandOn(&file, on_chunk));
}

absl::StatusOr<ParsedFile> ParseImportFile(absl::string_view content, v1::FileFormat format,
                                           absl::string_view source_name) {
  ParsedFile whole;
  absl::Status status =
      ParseImportFileInChunks(content, format, source_name, std::numeric_limits<size_t>::max(),
                              [&](ParsedFile* chunk) -> absl::Status {
                                whole = std::move(*chunk);
                                return absl::OkStatus();
                              });
  if (!status.ok()) return status;
  return whole;
}

std::string ExportModelsCsv(const std::vector<Model>& models) {
  std::string out;
  std::vector<std::string> cells;
  for (const Column& column : EpochModelColumns()) cells.emplace_back(column.header);
  AppendCsvRow(cells, &out);
  for (const Model& model : models) {
    cells.clear();
    for (const Column& column : EpochModelColumns()) cells.push_back(ExportCell(column, model));
    AppendCsvRow(cells, &out);
  }
  return out;
}

std::string ExportHardwareCsv(const std::vector<Hardware>& hardware) {
  std::string out;
  std::vector<std::string> cells(EpochHardwareHeader().begin(), EpochHardwareHeader().end());
  AppendCsvRow(cells, &out);
  for (const Hardware& stored : hardware) {
    // GeForce peaks go out in Epoch's convention (FP16-accumulate), so that
    // the file imports back to the same record (epoch_conventions.h).
    Hardware record = stored;
    if (QuotesFp16AccumulatePeaks(record)) {
      double quoted = 0;
      if (EpochTensorPeak(stored, /*fp8=*/false, &quoted)) {
        record.mutable_peak()->set_tensor_fp16_bf16_flops(quoted);
      }
      if (EpochTensorPeak(stored, /*fp8=*/true, &quoted))
        record.mutable_peak()->set_fp8_flops(quoted);
    }
    cells.clear();
    for (absl::string_view header : EpochHardwareHeader()) {
      const Column* column = FindColumn(EpochHardwareColumns(), header);
      if (column != nullptr) {
        cells.push_back(ExportCell(*column, record));
        continue;
      }
      auto other = record.other_source_columns().find(std::string(header));
      cells.push_back(other == record.other_source_columns().end() ? "" : other->second);
    }
    AppendCsvRow(cells, &out);
  }
  return out;
}

}  // namespace modelatlas::catalog
