#include "cli/transfer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "cli/enum_spellings.h"
#include "common/fetch/http.h"

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
  if (total == 0) {  // a pipe: the size is not known
    std::cerr << absl::StrFormat("\r%s %.1f MB", label, done / 1e6) << std::flush;
    return;
  }
  const double fraction = static_cast<double>(done) / total;
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

const std::vector<std::pair<std::string, std::string>>& EpochSources() {
  static const auto* const kSources = new std::vector<std::pair<std::string, std::string>>{
      {"models", "all_ai_models.csv"},        {"notable", "notable_ai_models.csv"},
      {"frontier", "frontier_ai_models.csv"}, {"large-scale", "large_scale_ai_models.csv"},
      {"hardware", "ml_hardware.csv"},
  };
  return *kSources;
}

absl::StatusOr<ImportSource> ResolveImportSource(absl::string_view argument,
                                                 absl::string_view epoch_data_url) {
  ImportSource source;
  if (absl::ConsumePrefix(&argument, "epoch:")) {
    std::vector<std::string> names;
    for (const auto& [name, file] : EpochSources()) {
      if (name == argument) {
        source.url = absl::StrCat(absl::StripSuffix(epoch_data_url, "/"), "/", file);
        source.source_name = file;
        return source;
      }
      names.push_back(absl::StrCat("epoch:", name));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "no source \"epoch:", argument, "\"; the named sources are ", absl::StrJoin(names, ", ")));
  }
  if (absl::StartsWithIgnoreCase(argument, "http://") ||
      absl::StartsWithIgnoreCase(argument, "https://")) {
    source.url = std::string(argument);
    absl::string_view path = argument.substr(argument.find("://") + 3);
    path = path.substr(0, path.find_first_of("?#"));
    const size_t slash = path.find_last_of('/');
    source.source_name = std::string(slash == absl::string_view::npos || slash + 1 == path.size()
                                         ? path
                                         : path.substr(slash + 1));
    return source;
  }
  if (const size_t scheme = argument.find("://"); scheme != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", argument,
                     "\": only http:// and https:// addresses (or a file path) can be imported"));
  }
  source.path = std::string(argument);
  source.source_name = argument == "-" ? std::string("stdin")
                                       : source.path.substr(source.path.find_last_of('/') + 1);
  return source;
}

absl::StatusOr<std::string> FetchImportData(const std::string& url, absl::Duration timeout) {
  HttpOptions options;
  options.timeout = timeout;
  options.connect_timeout = std::min(timeout, absl::Seconds(15));
  options.max_body_bytes = kMaxFetchedImportBytes;
  HttpClient client(options);
  absl::StatusOr<HttpResponse> response = client.Get(url);
  if (!response.ok()) return response.status();
  return std::move(response->body);
}

namespace {

// Reads the next piece of the file into *chunk; false at its end.
using NextChunk = std::function<absl::StatusOr<bool>(std::string* chunk)>;

// Sends the pieces `next` reads, then half-closes: the catalog imports only a
// stream that was half-closed, so a read error cancels the call instead
// (a half-close after it would import a cut file).
grpc::Status SendChunks(v1::CatalogService::Stub& catalog, const NextChunk& next, size_t total,
                        const v1::ImportOptions& options, absl::Duration timeout, bool progress,
                        v1::ImportRecordsResponse* response) {
  auto context = ContextWithDeadline(timeout);
  std::unique_ptr<grpc::ClientWriter<v1::ImportRecordsRequest>> writer =
      catalog.ImportRecords(context.get(), response);
  v1::ImportRecordsRequest request;
  *request.mutable_options() = options;
  size_t sent = 0;
  const std::string label = absl::StrCat("import: sending ", options.source_name());
  while (true) {
    absl::StatusOr<bool> more = next(request.mutable_data());
    if (!more.ok()) {
      context->TryCancel();
      writer->Finish();
      return grpc::Status(grpc::StatusCode::ABORTED,
                          absl::StrCat("reading ", options.source_name(), " failed after ", sent,
                                       " bytes (", more.status().message(),
                                       "); the import was cancelled and nothing was written"));
    }
    // An empty file still sends its options; an empty piece at the end does not.
    if (!request.data().empty() || sent == 0) {
      if (!writer->Write(request)) break;  // the server ended the call; Finish says why
      sent += request.data().size();
      request.clear_options();
      if (progress) DrawProgress(label, sent, total);
    }
    if (!*more) break;
  }
  writer->WritesDone();
  if (progress) std::cerr << "\nimport: the catalog is importing the rows...\n";
  return writer->Finish();
}

}  // namespace

grpc::Status ImportStream(v1::CatalogService::Stub& catalog, std::istream& in, size_t total,
                          const v1::ImportOptions& options, absl::Duration timeout, bool progress,
                          v1::ImportRecordsResponse* response) {
  const NextChunk next = [&in](std::string* chunk) -> absl::StatusOr<bool> {
    chunk->resize(kChunkBytes);
    in.read(chunk->data(), static_cast<std::streamsize>(chunk->size()));
    chunk->resize(static_cast<size_t>(in.gcount()));
    if (in.bad()) return absl::DataLossError("the stream failed");
    return !in.eof();
  };
  return SendChunks(catalog, next, total, options, timeout, progress, response);
}

grpc::Status ImportFile(v1::CatalogService::Stub& catalog, const std::string& path,
                        const v1::ImportOptions& options, absl::Duration timeout, bool progress,
                        v1::ImportRecordsResponse* response) {
  // "-" is standard input; a path may name a pipe or FIFO as well as a file
  // (`curl ... | modelatlas import -`): the bytes are read as they come, each
  // read sent as it is, and the size is known only for a regular file.
  const bool standard_input = path == "-";
  const int fd = standard_input ? STDIN_FILENO : open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return grpc::Status(grpc::StatusCode::NOT_FOUND, absl::StrCat("cannot read ", path));
  absl::Cleanup close_file = [fd, standard_input] {
    if (!standard_input) close(fd);
  };
  struct stat info;
  const size_t total =
      fstat(fd, &info) == 0 && S_ISREG(info.st_mode) ? static_cast<size_t>(info.st_size) : 0;
  const NextChunk next = [fd](std::string* chunk) -> absl::StatusOr<bool> {
    chunk->resize(kChunkBytes);
    ssize_t got;
    do {
      got = read(fd, chunk->data(), chunk->size());
    } while (got < 0 && errno == EINTR);
    if (got < 0) return absl::DataLossError(std::strerror(errno));
    chunk->resize(static_cast<size_t>(got));
    return got > 0;
  };
  return SendChunks(catalog, next, total, options, timeout, progress, response);
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
  if (report.conflicts_size() > 0 || report.conflicts_omitted() > 0) {
    int64_t kept = 0;
    for (const auto& conflict : report.conflicts()) kept += conflict.overwritten() ? 0 : 1;
    out << report.conflicts_size() + report.conflicts_omitted()
        << " conflicts (the file disagrees with a value from another source)";
    if (kept > 0) out << "; kept the record's value where not --overwrite=FIELD,... or all";
    out << ":\n";
  }
  for (const auto& conflict : report.conflicts()) {
    out << "  conflict row " << conflict.row() << " " << conflict.name() << " " << conflict.field()
        << ": " << (conflict.overwritten() ? "replaced " : "kept ") << conflict.existing_value()
        << " (" << conflict.existing_source() << "), file " << conflict.imported_value() << " ("
        << conflict.imported_source() << ")\n";
  }
  if (report.conflicts_omitted() > 0) {
    out << "  ... and " << report.conflicts_omitted() << " more conflicts\n";
  }
  // Created and updated records (a full report lists unchanged ones too).
  constexpr int kShownChanges = 20;
  int listed = 0;
  int shown = 0;
  for (const auto& change : report.changes()) {
    if (change.outcome() == v1::IMPORT_OUTCOME_UNCHANGED) continue;
    ++listed;
    if (!report.dry_run() && shown >= kShownChanges) continue;
    ++shown;
    out << "  row " << change.row() << " " << change.name() << " " << OutcomeText(change.outcome());
    if (change.changed_fields_size() > 0) {
      out << ": " << absl::StrJoin(change.changed_fields(), ", ");
    }
    out << "\n";
  }
  const int64_t more = listed - shown + report.changes_omitted();
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
