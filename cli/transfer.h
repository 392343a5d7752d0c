// `modelatlas import` and `modelatlas export`: streaming a file to and from
// the catalog, with a progress bar on a terminal and the import's report.
#pragma once

#include <grpcpp/grpcpp.h>

#include <ostream>
#include <string>

#include "absl/time/time.h"
#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"

namespace modelatlas::cli {

// Streams the file at `path` in 1 MiB chunks; `progress` draws a bar on stderr.
// `error` says why the file could not be read when the status is not OK
// and no call was made.
grpc::Status ImportFile(catalog::v1::CatalogService::Stub& catalog, const std::string& path,
                        const catalog::v1::ImportOptions& options, absl::Duration timeout,
                        bool progress, catalog::v1::ImportRecordsResponse* response);

// The report for people: counts, linking, duplicates, every rejection, and
// the changes (all of them in a dry run, else the first few).
void PrintImportReport(const catalog::v1::ImportReport& report, std::ostream& out);

// Writes the export to `out` as it arrives; sets *record_count. `progress`
// shows the bytes received so far on stderr.
grpc::Status ExportFile(catalog::v1::CatalogService::Stub& catalog,
                        const catalog::v1::ExportRecordsRequest& request, absl::Duration timeout,
                        bool progress, std::ostream& out, int64_t* record_count);

}  // namespace modelatlas::cli
