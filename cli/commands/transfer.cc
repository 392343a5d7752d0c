// Moving records in bulk: import and export.
#include "cli/transfer.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/flags/flag.h"
#include "absl/strings/str_split.h"
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
ABSL_FLAG(absl::Duration, fetch_timeout, absl::Minutes(5),
          "import from a URL: the whole download, redirects included (proxies from http_proxy, "
          "https_proxy, no_proxy)");
ABSL_FLAG(std::string, epoch_data_url, "https://epoch.ai/data",
          "import epoch:NAME: where Epoch AI publishes its CSV files");
ABSL_FLAG(std::string, overwrite, "",
          "import: fields whose values from another source the file replaces (FIELD,... or all)");
ABSL_FLAG(std::string, report, "",
          "import: write the full report (every row's outcome) as JSON to this file");

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
  const std::optional<v1::FileFormat> format = FormatFlag();
  if (!format) return kExitUsage;
  absl::StatusOr<ImportSource> source =
      ResolveImportSource(args[0], absl::GetFlag(FLAGS_epoch_data_url));
  if (!source.ok()) {
    UsageError(source.status().message());
    return kExitUsage;
  }
  if (!source->path.empty() && source->path != "-" && !std::ifstream(source->path)) {
    std::cerr << "modelatlas: cannot read " << source->path << "\n";
    return kExitFailure;
  }
  const std::string report_path = absl::GetFlag(FLAGS_report);
  v1::ImportOptions options;
  options.set_format(*format);
  options.set_source_name(source->source_name);
  options.set_dry_run(absl::GetFlag(FLAGS_dry_run));
  options.set_atomic(absl::GetFlag(FLAGS_atomic));
  options.set_model(absl::GetFlag(FLAGS_model));
  for (absl::string_view field :
       absl::StrSplit(absl::GetFlag(FLAGS_overwrite), ',', absl::SkipWhitespace())) {
    options.add_overwrite(std::string(absl::StripAsciiWhitespace(field)));
  }
  options.set_full_report(!report_path.empty());
  v1::ImportRecordsResponse response;
  const bool progress = !session.json() && isatty(STDERR_FILENO);
  grpc::Status status;
  if (!source->url.empty()) {
    // The CLI fetches, not the catalog: see docs/IMPORT.md ("Importing from a URL").
    if (progress) std::cerr << "import: fetching " << source->url << "\n";
    absl::StatusOr<std::string> data =
        FetchImportData(source->url, absl::GetFlag(FLAGS_fetch_timeout));
    if (!data.ok()) {
      std::cerr << "modelatlas: " << absl::StatusCodeToString(data.status().code()) << ": "
                << data.status().message() << "\n";
      return kExitFailure;
    }
    std::istringstream in(*data);
    status = ImportStream(session.catalog(), in, data->size(), options, TransferTimeout(), progress,
                          &response);
  } else {
    status = ImportFile(session.catalog(), source->path, options, TransferTimeout(), progress,
                        &response);
  }
  if (!status.ok()) return session.CatalogFailed(status);
  if (!report_path.empty()) {
    std::ofstream file(report_path, std::ios::binary | std::ios::trunc);
    file << ToJson(response.report()) << "\n";
    if (!file.flush()) {
      std::cerr << "modelatlas: cannot write " << report_path << "\n";
      return kExitFailure;
    }
  }
  if (session.json()) {
    PrintJson(response.report());
  } else {
    PrintImportReport(response.report(), std::cout);
    if (!report_path.empty()) std::cout << "full report (every row): " << report_path << "\n";
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
  CommandGroup group{
      "Transfer (files in and out)",
      {
          {{"import"},
           "FILE|-|URL|epoch:NAME",
           "import Epoch AI CSVs (a file, - for standard input, an http(s) URL, or "
           "epoch:models, epoch:notable, "
           "epoch:frontier, epoch:large-scale, epoch:hardware), a config.json, GPU specs or "
           "an export",
           {"format", "dry_run", "atomic", "model", "overwrite", "report", "fetch_timeout",
            "epoch_data_url"},
           "import epoch:hardware --dry_run --report=report.json",
           Import},
          {{"export"},
           "",
           "write the catalog as JSON or Epoch's CSV layout",
           {"format", "filter", "output"},
           "export --format=epoch-models-csv --output=m.csv",
           Export},
      }};
  for (Command& matrix : MatrixCommands()) group.commands.push_back(std::move(matrix));
  return group;
}

}  // namespace modelatlas::cli
