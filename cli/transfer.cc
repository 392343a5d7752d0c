#include "cli/transfer.h"

#include <unistd.h>

#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/enum_spellings.h"

namespace modelatlas::cli {
namespace {

namespace v1 = catalog::v1;

constexpr size_t kChunkBytes = 1 << 20;

std::unique_ptr<grpc::ClientContext> ContextWithDeadline(absl::Duration timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout));
  return context;
}

void DrawProgress(const std::string& label, size_t done, size_t total) {
  constexpr int kWidth = 30;
  const double fraction = total == 0 ? 1.0 : static_cast<double>(done) / total;
  const int filled = static_cast<int>(fraction * kWidth);
  std::cerr << absl::StrFormat("\r%s [%s%s] %3.0f%% %.1f of %.1f MB", label,
                               std::string(filled, '#'), std::string(kWidth - filled, ' '),
                               fraction * 100, done / 1e6, total / 1e6)
            << std::flush;
}

absl::string_view OutcomeText(v1::ImportOutcome outcome) {
  const absl::string_view spelling = ImportOutcomes().Spelling(outcome);
  return spelling.empty() ? "rejected" : spelling;
}

}  // namespace

grpc::Status ImportFile(v1::CatalogService::Stub& catalog, const std::string& path,
                        const v1::ImportOptions& options, absl::Duration timeout, bool progress,
                        v1::ImportRecordsResponse* response) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return grpc::Status(grpc::StatusCode::NOT_FOUND, absl::StrCat("cannot read ", path));
  in.seekg(0, std::ios::end);
  const size_t total = static_cast<size_t>(in.tellg());
  in.seekg(0);

  auto context = ContextWithDeadline(timeout);
  std::unique_ptr<grpc::ClientWriter<v1::ImportRecordsRequest>> writer =
      catalog.ImportRecords(context.get(), response);
  v1::ImportRecordsRequest request;
  *request.mutable_options() = options;
  std::string chunk(kChunkBytes, '\0');
  size_t sent = 0;
  const std::string label = absl::StrCat("import: sending ", options.source_name());
  do {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const size_t read = static_cast<size_t>(in.gcount());
    request.set_data(chunk.substr(0, read));
    if (!writer->Write(request)) break;  // the server ended the call; Finish says why
    sent += read;
    request.clear_options();
    if (progress) DrawProgress(label, sent, total);
  } while (in && sent < total);
  writer->WritesDone();
  if (progress) std::cerr << "\nimport: the catalog is importing the rows...\n";
  return writer->Finish();
}

void PrintImportReport(const v1::ImportReport& report, std::ostream& out) {
  out << absl::StrFormat("%s: %d rows read; %d created, %d updated, %d unchanged, %d rejected\n",
                         v1::FileFormat_Name(report.format()), report.rows_read(), report.created(),
                         report.updated(), report.unchanged(), report.rejected());
  if (report.dry_run()) {
    out << "dry run: nothing was written\n";
  } else if (!report.committed()) {
    out << "atomic: nothing was written because rows were rejected\n";
  } else {
    out << "catalog revision " << report.revision() << (report.atomic() ? " (one transaction)" : "")
        << "\n";
  }
  const v1::HardwareLinking& linking = report.hardware_linking();
  if (linking.mentions() > 0) {
    out << absl::StrFormat(
        "training hardware: %d of %d mentions linked to hardware records (%.1f%%)\n",
        linking.resolved(), linking.mentions(), 100.0 * linking.resolved() / linking.mentions());
    std::vector<std::string> names;
    for (const auto& unresolved : linking.unresolved()) {
      names.push_back(absl::StrCat(unresolved.name(), " (", unresolved.mentions(), ")"));
    }
    if (!names.empty()) out << "  not linked: " << absl::StrJoin(names, ", ") << "\n";
  }
  if (report.unmapped_columns_size() > 0) {
    out << "columns kept verbatim (no typed field): "
        << absl::StrJoin(report.unmapped_columns(), ", ") << "\n";
  }
  for (const auto& duplicate : report.duplicate_names()) {
    out << "duplicate name \"" << duplicate.display_name() << "\": rows "
        << absl::StrJoin(duplicate.rows(), ", ") << " kept as "
        << absl::StrJoin(duplicate.names(), ", ") << "\n";
  }
  for (const auto& rejection : report.rejections()) {
    out << "rejected row " << rejection.row();
    if (rejection.line() > 0) out << " (line " << rejection.line() << ")";
    if (!rejection.record().empty()) out << " \"" << rejection.record() << "\"";
    if (!rejection.column().empty()) out << ", column \"" << rejection.column() << "\"";
    out << ": " << rejection.reason() << "\n";
  }
  constexpr int kShownChanges = 20;
  const int shown =
      report.dry_run() ? report.changes_size() : std::min(report.changes_size(), kShownChanges);
  for (int i = 0; i < shown; ++i) {
    const auto& change = report.changes(i);
    out << "  row " << change.row() << " " << change.name() << " " << OutcomeText(change.outcome());
    if (change.changed_fields_size() > 0) {
      out << ": " << absl::StrJoin(change.changed_fields(), ", ");
    }
    out << "\n";
  }
  const int64_t more = report.changes_size() - shown + report.changes_omitted();
  if (more > 0) out << "  ... and " << more << " more changes\n";
  if (report.rejections_omitted() > 0) {
    out << "  ... and " << report.rejections_omitted() << " more rejections\n";
  }
}

grpc::Status ExportFile(v1::CatalogService::Stub& catalog, const v1::ExportRecordsRequest& request,
                        absl::Duration timeout, bool progress, std::ostream& out,
                        int64_t* record_count) {
  auto context = ContextWithDeadline(timeout);
  std::unique_ptr<grpc::ClientReader<v1::ExportRecordsResponse>> reader =
      catalog.ExportRecords(context.get(), request);
  v1::ExportRecordsResponse response;
  size_t received = 0;  // bytes
  while (reader->Read(&response)) {
    out << response.data();
    received += response.data().size();
    if (progress) {
      // The size is not known before the end: bytes so far, no percentage.
      std::cerr << absl::StrFormat("\rexport: %.1f MB received", received / 1e6) << std::flush;
    }
    if (response.record_count() > 0) *record_count = response.record_count();
  }
  if (progress) std::cerr << "\n";
  return reader->Finish();
}

}  // namespace modelatlas::cli
