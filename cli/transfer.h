// `modelatlas import` and `modelatlas export`: streaming a file to and from
// the catalog, with a progress bar on a terminal and the import's report.
#pragma once

#include <grpcpp/grpcpp.h>

#include <istream>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"

namespace modelatlas::cli {

// Where `modelatlas import` reads from: a local file, an http(s) URL, or a
// named source ("epoch:models") standing for the URL of a published file.
struct ImportSource {
  std::string path;         // a local file, pipe or FIFO, "-" for standard input, or empty
  std::string url;          // the address to fetch, or empty
  std::string source_name;  // the file's name, e.g. "all_ai_models.csv"
};

// The named sources: `epoch:NAME` -> the file Epoch AI publishes under its
// data address ("models" -> "all_ai_models.csv").
const std::vector<std::pair<std::string, std::string>>& EpochSources();

// Reads the argument of `import`: "http://..." or "https://..." is a URL,
// "epoch:NAME" the named file under `epoch_data_url`, "-" standard input
// (source name "stdin"), anything else a path.
// INVALID_ARGUMENT for an unknown name or another scheme ("ftp://", "file://").
absl::StatusOr<ImportSource> ResolveImportSource(absl::string_view argument,
                                                 absl::string_view epoch_data_url);

// The most an import fetches: the catalog's limit on an imported file (256 MiB).
inline constexpr uint64_t kMaxFetchedImportBytes = 256ull << 20;

// GETs `url` with libcurl (redirects followed, http and https only; proxies
// from http_proxy / https_proxy / no_proxy, as curl's users expect), within
// `timeout` for the whole transfer and at most kMaxFetchedImportBytes.
// A non-2xx answer is an error naming the URL and the HTTP status.
absl::StatusOr<std::string> FetchImportData(const std::string& url, absl::Duration timeout);

// Streams `in` (`total_bytes` long) in 1 MiB chunks; `progress` draws a bar on stderr.
grpc::Status ImportStream(catalog::v1::CatalogService::Stub& catalog, std::istream& in,
                          size_t total_bytes, const catalog::v1::ImportOptions& options,
                          absl::Duration timeout, bool progress,
                          catalog::v1::ImportRecordsResponse* response);

// Streams the file at `path` ("-": standard input; a pipe or FIFO is read as
// its bytes come) in chunks of at most 1 MiB; `progress` draws a bar on stderr.
// A read error cancels the call (nothing is imported) instead of ending it.
// `error` says why the file could not be read when the status is not OK
// and no call was made.
grpc::Status ImportFile(catalog::v1::CatalogService::Stub& catalog, const std::string& path,
                        const catalog::v1::ImportOptions& options, absl::Duration timeout,
                        bool progress, catalog::v1::ImportRecordsResponse* response);

// The report for people: counts, linking, duplicates, every rejection and
// every conflict listed in the report, and
// the changes (all of them in a dry run, else the first few).
void PrintImportReport(const catalog::v1::ImportReport& report, std::ostream& out);

// Writes the export to `out` as it arrives; sets *record_count. `progress`
// shows the bytes received so far on stderr.
grpc::Status ExportFile(catalog::v1::CatalogService::Stub& catalog,
                        const catalog::v1::ExportRecordsRequest& request, absl::Duration timeout,
                        bool progress, std::ostream& out, int64_t* record_count);

}  // namespace modelatlas::cli
