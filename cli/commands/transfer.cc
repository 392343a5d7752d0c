// Moving records in bulk: import and export.
#include "cli/transfer.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>

#include "absl/flags/flag.h"
#include "cli/command.h"
#include "cli/enum_spellings.h"
#include "cli/output.h"

ABSL_FLAG(std::string, format, "",
          modelatlas::cli::EnumFlagHelp(
              "import/export file format (import: empty = detect; export: empty = json)",
              modelatlas::cli::FileFormats()));
ABSL_FLAG(bool, dry_run, false, "import: report what would change and write nothing");
ABSL_FLAG(bool, atomic, false, "import: the whole file in one transaction, or nothing");
ABSL_FLAG(std::string, model, "", "import of a config.json: the model whose architecture it sets");
ABSL_FLAG(std::string, output, "", "export: write to this file instead of stdout");

namespace modelatlas::cli {
namespace {

namespace v1 = catalog::v1;

// Imports and exports take longer than one lookup: at least five minutes.
absl::Duration TransferTimeout() {
  return std::max(absl::GetFlag(FLAGS_timeout), absl::Minutes(5));
}

// --format through its table; prints the error when it names no format.
std::optional<v1::FileFormat> FormatFlag() {
  absl::StatusOr<v1::FileFormat> format =
      FileFormats().ParseFlag("format", absl::GetFlag(FLAGS_format));
  if (!format.ok()) {
    UsageError(format.status().message());
    return std::nullopt;
  }
  return *format;
}

int Import(Session& session, const Arguments& args) {
  const std::string& path = args[0];
  const std::optional<v1::FileFormat> format = FormatFlag();
  if (!format) return kExitUsage;
  if (!std::ifstream(path)) {
    std::cerr << "modelatlas: cannot read " << path << "\n";
    return kExitFailure;
  }
  v1::ImportOptions options;
  options.set_format(*format);
  options.set_source_name(path.substr(path.find_last_of('/') + 1));
  options.set_dry_run(absl::GetFlag(FLAGS_dry_run));
  options.set_atomic(absl::GetFlag(FLAGS_atomic));
  options.set_model(absl::GetFlag(FLAGS_model));
  v1::ImportRecordsResponse response;
  const bool progress = !session.json() && isatty(STDERR_FILENO);
  grpc::Status status =
      ImportFile(session.catalog(), path, options, TransferTimeout(), progress, &response);
  if (!status.ok()) return session.CatalogFailed(status);
  if (session.json()) {
    PrintJson(response.report());
  } else {
    PrintImportReport(response.report(), std::cout);
  }
  return EXIT_SUCCESS;
}

int Export(Session& session, const Arguments&) {
  const std::optional<v1::FileFormat> format = FormatFlag();
  if (!format) return kExitUsage;
  v1::ExportRecordsRequest request;
  request.set_format(*format);
  request.set_filter(absl::GetFlag(FLAGS_filter));
  const std::string path = absl::GetFlag(FLAGS_output);
  std::ofstream file;
  if (!path.empty()) {
    file.open(path, std::ios::binary | std::ios::trunc);
    if (!file) {
      std::cerr << "modelatlas: cannot write " << path << "\n";
      return kExitFailure;
    }
  }
  int64_t records = 0;
  // Only when the file goes elsewhere and stderr is a terminal: nothing extra when piped.
  const bool progress = !path.empty() && isatty(STDERR_FILENO);
  grpc::Status status = ExportFile(session.catalog(), request, TransferTimeout(), progress,
                                   path.empty() ? std::cout : file, &records);
  if (!status.ok()) return session.CatalogFailed(status);
  if (!path.empty()) std::cerr << "export: " << records << " records written to " << path << "\n";
  return EXIT_SUCCESS;
}

}  // namespace

CommandGroup TransferCommands() {
  return {"Transfer (files in and out)",
          {
              {{"import"},
               "FILE",
               "import Epoch AI CSVs, a config.json, GPU specs or an export",
               {"format", "dry_run", "atomic", "model"},
               "import models.csv --dry_run",
               Import},
              {{"export"},
               "",
               "write the catalog as JSON or Epoch's CSV layout",
               {"format", "filter", "output"},
               "export --format=epoch-models-csv --output=m.csv",
               Export},
          }};
}

}  // namespace modelatlas::cli
