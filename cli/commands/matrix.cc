// `export matrix`: the estimator's whole fit matrix (StreamFitMatrix) as CSV
// with a header or as JSON lines, one line per model x accelerator x weight
// format. Every figure's unit is in its column's name.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/command.h"
#include "cli/enum_spellings.h"
#include "cli/workload.h"

ABSL_FLAG(std::string, weight_formats, "",
          "export matrix: weight formats, comma-separated, one column group each (empty = bf16, "
          "int8, gptq-int4, gguf-q4_k_m)");
ABSL_FLAG(std::string, hardware_filter, "",
          "export matrix: AIP-160 filter on the hardware records, e.g. manufacturer = \"NVIDIA\"");
ABSL_DECLARE_FLAG(std::string, format);  // commands/transfer.cc
ABSL_DECLARE_FLAG(std::string, output);  // commands/transfer.cc
ABSL_DECLARE_FLAG(int32_t, max_cards);   // commands/inference.cc
ABSL_DECLARE_FLAG(bool, hypothetical);   // commands/inference.cc

namespace modelatlas::cli {
namespace {

namespace v1 = estimator::v1;

// The header, units in the names (bytes, tokens, tokens/s). Decode is empty
// when there is no bound (does not fit, or the accelerator's
// no_decode_bound_reason).
constexpr const char* kColumns[] = {"model",
                                    "display_name",
                                    "parameters",
                                    "context_length_tokens",
                                    "hardware",
                                    "hardware_display_name",
                                    "weight_format",
                                    "fits",
                                    "cards",
                                    "tensor_parallel",
                                    "pipeline_parallel",
                                    "required_bytes_per_card",
                                    "usable_bytes_per_card",
                                    "decode_tokens_per_second_per_sequence",
                                    "kv_cache_counted"};

// RFC 4180: quoted when it holds a comma, a quote or a line break.
std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// Shortest text that reads back as the same double (%.17g would show noise).
std::string Number(double value) {
  char text[32];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(text, sizeof(text), "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  return text;
}

int ExportMatrix(Session& session, const Arguments&) {
  std::string format = absl::AsciiStrToLower(absl::GetFlag(FLAGS_format));
  if (format.empty()) format = "csv";
  if (format != "csv" && format != "jsonl") {
    return UsageError(absl::StrCat("--format: export matrix writes csv or jsonl, got \"",
                                   absl::GetFlag(FLAGS_format), "\""));
  }
  v1::StreamFitMatrixRequest request;
  if (absl::Status bad = FillWorkload(request.mutable_workload()); !bad.ok()) {
    return UsageError(bad.message());
  }
  // The formats are the matrix's columns, not the workload's (--weights).
  request.mutable_workload()->clear_weight_format();
  for (absl::string_view text :
       absl::StrSplit(absl::GetFlag(FLAGS_weight_formats), ',', absl::SkipWhitespace())) {
    absl::StatusOr<v1::NumberFormat> parsed =
        NumberFormats().ParseFlag("weight_formats", absl::StripAsciiWhitespace(text));
    if (!parsed.ok()) return UsageError(parsed.status().message());
    request.add_weight_formats(*parsed);
  }
  request.set_max_cards(absl::GetFlag(FLAGS_max_cards));
  request.set_model_filter(absl::GetFlag(FLAGS_filter));
  request.set_hardware_filter(absl::GetFlag(FLAGS_hardware_filter));
  request.set_hypothetical(absl::GetFlag(FLAGS_hypothetical));

  const std::string path = absl::GetFlag(FLAGS_output);
  std::ofstream file;
  if (!path.empty()) {
    file.open(path, std::ios::binary | std::ios::trunc);
    if (!file) {
      std::cerr << "modelatlas: cannot write " << path << "\n";
      return kExitFailure;
    }
  }
  std::ostream& out = path.empty() ? std::cout : file;
  const bool csv = format == "csv";
  if (csv) {
    for (size_t i = 0; i < std::size(kColumns); ++i) out << (i ? "," : "") << kColumns[i];
    out << "\n";
  }

  // The whole matrix takes longer than one lookup: at least five minutes.
  auto context = Session::NewContext(std::max(absl::GetFlag(FLAGS_timeout), absl::Minutes(5)));
  auto reader = session.estimator().StreamFitMatrix(context.get(), request);
  v1::StreamFitMatrixResponse message;
  std::vector<v1::FitMatrixModel> models;
  std::vector<v1::FitMatrixHardware> hardware;
  std::vector<std::string> formats;
  int64_t rows = 0;
  int hardware_not_planned = 0;
  int models_not_sized = 0;
  std::string line;
  while (reader->Read(&message)) {
    if (message.hardware_size() > 0 || message.weight_formats_size() > 0) {
      hardware.assign(message.hardware().begin(), message.hardware().end());
      hardware_not_planned = message.hardware_not_planned();
      models_not_sized = message.models_not_sized();
      for (int f : message.weight_formats()) {
        formats.emplace_back(NumberFormats().Spelling(static_cast<v1::NumberFormat>(f)));
      }
    }
    models.insert(models.end(), message.models().begin(), message.models().end());
    const size_t per_model = hardware.size() * formats.size();
    for (int i = 0; i < message.cards_size(); ++i) {
      const size_t k = static_cast<size_t>(message.first_cell()) + static_cast<size_t>(i);
      const v1::FitMatrixModel& model = models[k / per_model];
      const v1::FitMatrixHardware& hw = hardware[(k / formats.size()) % hardware.size()];
      const std::string& weight_format = formats[k % formats.size()];
      const int cards = message.cards(i);
      const int tp = message.tensor_parallel(i);
      const double decode = message.decode_tokens_per_second(i);
      const std::string values[] = {model.model(),
                                    model.display_name(),
                                    Number(model.parameters()),
                                    absl::StrCat(model.context_length_tokens()),
                                    hw.hardware(),
                                    hw.display_name(),
                                    weight_format,
                                    cards > 0 ? "true" : "false",
                                    absl::StrCat(cards),
                                    absl::StrCat(tp),
                                    absl::StrCat(tp > 0 ? cards / tp : 0),
                                    absl::StrCat(message.required_bytes_per_card(i)),
                                    absl::StrCat(hw.usable_bytes_per_card()),
                                    decode > 0 ? Number(decode) : "",
                                    model.kv_cache_not_counted() ? "false" : "true"};
      line.clear();
      if (csv) {
        for (size_t c = 0; c < std::size(values); ++c) {
          absl::StrAppend(&line, c ? "," : "", CsvField(values[c]));
        }
      } else {
        line = "{";
        for (size_t c = 0; c < std::size(values); ++c) {
          // Strings quoted, numbers and booleans bare, no decode bound null.
          const bool text = c == 0 || c == 1 || c == 4 || c == 5 || c == 6;
          absl::StrAppend(&line, c ? "," : "", "\"", kColumns[c], "\":",
                          text                ? JsonString(values[c])
                          : values[c].empty() ? std::string("null")
                                              : values[c]);
        }
        line += "}";
      }
      out << line << "\n";
      ++rows;
    }
  }
  const grpc::Status status = reader->Finish();
  if (!status.ok()) return session.EstimatorFailed(status);
  if (!out.flush()) {
    std::cerr << "modelatlas: cannot write " << (path.empty() ? "standard output" : path) << "\n";
    return kExitFailure;
  }
  if (!path.empty()) {
    std::cerr << "export matrix: " << rows << " rows (" << models.size() << " models x "
              << hardware.size() << " accelerators x " << formats.size() << " weight formats) "
              << "written to " << path << "\n";
  }
  // Standard error: standard output may be the data.
  if (hardware_not_planned > 0 || models_not_sized > 0) {
    std::cerr << "export matrix: left out " << hardware_not_planned
              << " accelerators (no memory size on record, or figures beyond any real device) and "
              << models_not_sized << " models (no parameter count, or an architecture that cannot "
              << "be sized)\n";
  }
  for (const v1::FitMatrixHardware& hw : hardware) {
    if (!hw.decode_bound_doubtful().empty()) {
      std::cerr << "export matrix: " << hw.hardware() << ": " << hw.decode_bound_doubtful() << "\n";
    }
  }
  return EXIT_SUCCESS;
}

}  // namespace

std::vector<Command> MatrixCommands() {
  return {
      {{"export", "matrix"},
       "",
       "write every catalog model x every accelerator x weight formats (fit, cards, memory "
       "per card, decode bound) as CSV (--format=csv, the default) or JSON lines "
       "(--format=jsonl)",
       {"format", "weight_formats", "output", "filter", "hardware_filter", "max_cards",
        "hypothetical", "context", "batch", "kv_cache", "group_size", "overhead_bytes", "prompt"},
       "export matrix --weight_formats=bf16,gguf-q4_k_m --output=matrix.csv",
       ExportMatrix}};
}

}  // namespace modelatlas::cli
