#include "catalog-service/service.h"

#include <malloc.h>

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "catalog-service/summary.h"
#include "common/status/errors.h"
#include "common/status/grpc_status.h"
#include "google/protobuf/util/json_util.h"

namespace modelatlas::catalog {
namespace {

using Unary = grpc::ServerUnaryReactor;

// Finishes a unary call with `result` moved into `response`, or its error.
template <typename Result, typename Response>
Unary* Reply(grpc::CallbackServerContext* context, absl::StatusOr<Result> result,
             Response* response) {
  Unary* reactor = context->DefaultReactor();
  if (result.ok()) *response = *std::move(result);
  reactor->Finish(ToGrpcStatus(result.status()));
  return reactor;
}

// Finishes a unary call that authorization refused.
Unary* Refuse(grpc::CallbackServerContext* context, const absl::Status& status) {
  Unary* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

// A stream that ends at once with `status` (refused before it starts).
template <typename Base>
class RefusedStream : public Base {
 public:
  explicit RefusedStream(const absl::Status& status) { this->Finish(ToGrpcStatus(status)); }
  void OnDone() override { delete this; }
};

template <typename Record, typename Response, typename Add>
absl::StatusOr<Response> ToPageResponse(absl::StatusOr<Page<Record>> page, Add add) {
  if (!page.ok()) return page.status();
  Response response;
  for (Record& record : page->records) *add(response) = std::move(record);
  response.set_catalog_revision(page->revision);
  return response;
}

template <typename Record, typename Response, typename Add>
absl::StatusOr<Response> ToListResponse(absl::StatusOr<Page<Record>> page, Add add) {
  std::string token = page.ok() ? page->next_page_token : "";
  absl::StatusOr<Response> response = ToPageResponse<Record, Response>(std::move(page), add);
  if (response.ok()) response->set_next_page_token(token);
  return response;
}

template <typename Request>
ListQuery QueryOf(const Request& request, grpc::CallbackServerContext* context) {
  return ListQuery{request.page_size(), request.page_token(), request.filter(), request.order_by(),
                   [context] { return context->IsCancelled(); }};
}

std::vector<std::string> Paths(const google::protobuf::FieldMask& mask) {
  return {mask.paths().begin(), mask.paths().end()};
}

absl::StatusOr<google::protobuf::Empty> Deleted(absl::StatusOr<int64_t> revision) {
  if (!revision.ok()) return revision.status();
  return google::protobuf::Empty();
}

// Streams changes to one watcher. A worker thread waits on the catalog's
// change feed and writes one message at a time; it calls Finish last and
// never touches the reactor after that (OnDone deletes it).
class WatchReactor : public grpc::ServerWriteReactor<v1::WatchResponse> {
 public:
  WatchReactor(Catalog* catalog, int64_t start_revision, absl::Duration poll_interval,
               absl::Duration progress_interval, const std::atomic<bool>* stopping)
      : catalog_(catalog),
        position_{start_revision},
        poll_interval_(poll_interval),
        progress_interval_(progress_interval),
        stopping_(stopping) {
    std::thread([this] { Run(); }).detach();
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mutex_);
    writing_ = false;
    write_failed_ = !ok;
  }
  void OnCancel() override {
    absl::MutexLock lock(&mutex_);
    cancelled_ = true;
  }
  void OnDone() override { delete this; }

 private:
  void Run() {
    bool first = true;
    absl::Time last_sent = absl::Now();
    while (true) {
      {
        absl::MutexLock lock(&mutex_);
        if (cancelled_ || write_failed_) break;
      }
      // The server is shutting down: a clean end, which a watcher follows
      // by reconnecting (to another replica), not an UNAVAILABLE.
      if (stopping_->load()) break;
      // The first message goes out at once, so the watcher learns the revision.
      // Asked at every poll, so that a shutdown or a cancelled call ends the
      // stream within a poll interval: waiting out the second held a
      // shutdown past a --shutdown_deadline under a second (session 18).
      const auto stop = [this] {
        absl::MutexLock lock(&mutex_);
        return cancelled_ || stopping_->load();
      };
      absl::StatusOr<v1::WatchResponse> next = catalog_->WaitForChangesAfter(
          &position_, kMaxChangesPerMessage, first ? absl::ZeroDuration() : absl::Seconds(1),
          poll_interval_, stop);
      if (!next.ok()) {
        Finish(ToGrpcStatus(next.status()));
        return;
      }
      const bool progress_due = absl::Now() - last_sent >= progress_interval_;
      if (!first && next->changes_size() == 0 && !progress_due) continue;
      first = false;
      last_sent = absl::Now();
      message_ = *std::move(next);
      absl::MutexLock lock(&mutex_);
      writing_ = true;
      StartWrite(&message_);
      auto done = [this]() ABSL_SHARED_LOCKS_REQUIRED(mutex_) { return !writing_ || cancelled_; };
      mutex_.Await(absl::Condition(&done));
      if (cancelled_) break;
    }
    Finish(grpc::Status::OK);
  }

  static constexpr int kMaxChangesPerMessage = 500;
  Catalog* catalog_;
  // Where the feed is: inside a revision when a message ended within one.
  ChangePosition position_;
  absl::Duration poll_interval_;
  absl::Duration progress_interval_;
  const std::atomic<bool>* stopping_;
  v1::WatchResponse message_;
  absl::Mutex mutex_;
  bool writing_ ABSL_GUARDED_BY(mutex_) = false;
  bool write_failed_ ABSL_GUARDED_BY(mutex_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mutex_) = false;
};

// Receives a file in chunks, then imports it on a worker thread (parsing
// and writing thousands of rows must not hold a gRPC callback thread).
// Each message's bytes go to a temporary file (SpoolFile, unnamed: nothing
// is left behind by a crash) as they arrive, and the import reads the file
// back a block at a time, so the catalog's memory during an import does not
// grow with the file (issue 22 point 4: a million rows, a 73 MB upload, held
// whole, peaked at 866 MiB). The spool is closed, its blocks freed, when the
// call ends however it ends.
//
// A read that fails means either that the client half-closed the stream
// (the whole file is here) or that the call was cancelled (the client
// cancelled, died or its deadline passed: the file may be cut anywhere).
// Only the first may be imported, so the call's cancellation is checked when
// the reads end, before parsing, and once more just before the first write.
// The messages are read as bytes and parsed here: with typed reads, a message
// that does not parse would end the reads like a half-close, and the file
// received so far would be imported.
class ImportReactor : public grpc::ServerReadReactor<grpc::ByteBuffer> {
 public:
  ImportReactor(grpc::CallbackServerContext* context, Catalog* catalog, grpc::ByteBuffer* response,
                CatalogServiceImpl::ImportObserver on_import, ByteBudget* budget,
                std::string spool_directory)
      : context_(context),
        catalog_(catalog),
        response_(response),
        on_import_(std::move(on_import)),
        budget_(budget),
        spool_directory_(std::move(spool_directory)) {
    StartRead(&raw_);
  }
  ~ImportReactor() override {
    if (budget_ != nullptr) budget_->Release(reserved_);
  }

  void OnCancel() override { cancelled_.store(true); }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the client half-closed the stream, or the call was cancelled
      if (Abandoned()) {
        Finish(CancelledStatus());
        return;
      }
      std::thread([this] { Finish(Run()); }).detach();
      return;
    }
    if (absl::Status s = Accept(); !s.ok()) {
      spool_.reset();
      Finish(ToGrpcStatus(s));
      return;
    }
    StartRead(&raw_);
  }
  void OnDone() override { delete this; }

 private:
  bool Abandoned() const { return cancelled_.load() || context_->IsCancelled(); }
  static grpc::Status CancelledStatus() {
    return grpc::Status(grpc::StatusCode::CANCELLED,
                        "the import was cancelled before the client finished sending the file; "
                        "nothing was written");
  }

  absl::Status Accept() {
    request_.Clear();
    if (!grpc::SerializationTraits<v1::ImportRecordsRequest>::Deserialize(&raw_, &request_).ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request: message ", messages_ + 1, " is not a valid ",
          v1::ImportRecordsRequest::descriptor()->full_name(), "; nothing was written"));
    }
    if (messages_++ == 0) {
      if (!request_.has_options()) {
        return InvalidFieldError("options", "required in the first message of the stream");
      }
      options_ = request_.options();
    } else if (request_.has_options()) {
      return InvalidFieldError("options", "only the first message of the stream may carry options");
    }
    if (spool_ == nullptr) {
      absl::StatusOr<std::unique_ptr<SpoolFile>> spool = SpoolFile::Create(spool_directory_);
      if (!spool.ok()) return spool.status();
      spool_ = *std::move(spool);
    }
    if (spool_->size_bytes() + request_.data().size() > kMaxImportBytes) {
      return InvalidFieldError(
          "data", absl::StrCat("the file is larger than the limit of ", kMaxImportBytes, " bytes"));
    }
    // Every upload counts against one budget, so that many open uploads
    // cannot take the catalog's disk and page cache (each may reach 256 MiB)
    // together with the exports' memory.
    if (budget_ != nullptr) {
      const auto bytes = static_cast<int64_t>(request_.data().size());
      if (absl::Status s = budget_->Reserve(bytes, "import"); !s.ok()) return s;
      reserved_ += bytes;
    }
    return spool_->Append(request_.data());
  }

  grpc::Status Run() {
    v1::ImportRecordsResponse response;
    absl::Status status = Import(&response);
    // The parsed rows and the records written can take tens of MiB; glibc
    // keeps freed memory for reuse unless asked to give it back (100,000
    // rows left the catalog at 184 MiB resident instead of 30).
    spool_.reset();
    malloc_trim(0);
    if (!status.ok()) return ToGrpcStatus(status);
    bool own_buffer = false;
    return grpc::SerializationTraits<v1::ImportRecordsResponse>::Serialize(response, response_,
                                                                           &own_buffer);
  }

  absl::Status Import(v1::ImportRecordsResponse* response) {
    if (messages_ == 0) return InvalidFieldError("options", "the stream carried no message");
    if (Abandoned()) return absl::CancelledError(CancelledStatus().error_message());
    absl::StatusOr<v1::ImportReport> report =
        catalog_->ImportFile(*spool_, options_, [this] { return Abandoned(); });
    if (!report.ok()) return report.status();
    if (on_import_) on_import_(*report);
    *response->mutable_report() = *std::move(report);
    return absl::OkStatus();
  }

  grpc::CallbackServerContext* context_;
  Catalog* catalog_;
  grpc::ByteBuffer* response_;
  CatalogServiceImpl::ImportObserver on_import_;
  ByteBudget* budget_;
  int64_t reserved_ = 0;  // bytes of budget_ this upload holds
  std::atomic<bool> cancelled_{false};
  grpc::ByteBuffer raw_;
  v1::ImportRecordsRequest request_;
  v1::ImportOptions options_;
  std::string spool_directory_;
  // The file received so far (created with the first message).
  std::unique_ptr<SpoolFile> spool_;
  int64_t messages_ = 0;
};

absl::StatusOr<std::string> ExportFile(Catalog* catalog, const v1::ExportRecordsRequest& request,
                                       int64_t* record_count) {
  switch (request.format()) {
    case v1::FILE_FORMAT_EPOCH_MODELS_CSV: {
      absl::StatusOr<std::vector<Model>> models = catalog->ListAll<Model>(request.filter());
      if (!models.ok()) return models.status();
      *record_count = static_cast<int64_t>(models->size());
      return ExportModelsCsv(*models);
    }
    case v1::FILE_FORMAT_EPOCH_HARDWARE_CSV: {
      absl::StatusOr<std::vector<Hardware>> hardware = catalog->ListAll<Hardware>(request.filter());
      if (!hardware.ok()) return hardware.status();
      *record_count = static_cast<int64_t>(hardware->size());
      return ExportHardwareCsv(*hardware);
    }
    case v1::FILE_FORMAT_UNSPECIFIED:
    case v1::FILE_FORMAT_CATALOG_JSON: {
      if (!request.filter().empty()) {
        return InvalidFieldError("filter",
                                 "not supported with the catalog JSON export (it holds both kinds "
                                 "of record); export a CSV to filter");
      }
      v1::Dataset dataset;
      absl::StatusOr<std::vector<Model>> models = catalog->ListAll<Model>("");
      if (!models.ok()) return models.status();
      absl::StatusOr<std::vector<Hardware>> hardware = catalog->ListAll<Hardware>("");
      if (!hardware.ok()) return hardware.status();
      for (Model& model : *models) {
        model.clear_etag();
        model.clear_revision();
        *dataset.add_models() = std::move(model);
      }
      for (Hardware& record : *hardware) {
        record.clear_etag();
        record.clear_revision();
        *dataset.add_hardware() = std::move(record);
      }
      *record_count = dataset.models_size() + dataset.hardware_size();
      std::string json;
      google::protobuf::util::JsonPrintOptions options;
      options.preserve_proto_field_names = true;
      auto status = google::protobuf::util::MessageToJsonString(dataset, &json, options);
      if (!status.ok()) return absl::InternalError(std::string(status.message()));
      return json;
    }
    default:
      return InvalidFieldError(
          "format", absl::StrCat("cannot export as ", v1::FileFormat_Name(request.format()),
                                 ": export writes EPOCH_MODELS_CSV, EPOCH_HARDWARE_CSV or "
                                 "CATALOG_JSON"));
  }
}

// Writes an export in chunks, one at a time. The file is held until the
// client has read it: its bytes count against the transfer budget, so that
// exports a client never reads cannot take the catalog's memory.
class ExportReactor : public grpc::ServerWriteReactor<v1::ExportRecordsResponse> {
 public:
  ExportReactor(Catalog* catalog, const v1::ExportRecordsRequest& request, ByteBudget* budget)
      : budget_(budget) {
    std::thread([this, catalog, request] {
      absl::StatusOr<std::string> file = ExportFile(catalog, request, &record_count_);
      if (file.ok() && budget_ != nullptr) {
        const auto bytes = static_cast<int64_t>(file->size());
        if (absl::Status s = budget_->Reserve(bytes, "export"); !s.ok()) {
          file = s;
        } else {
          reserved_ = bytes;
        }
      }
      if (!file.ok()) {
        Finish(ToGrpcStatus(file.status()));
        return;
      }
      file_ = *std::move(file);
      WriteNext();
    }).detach();
  }
  ~ExportReactor() override {
    if (budget_ != nullptr) budget_->Release(reserved_);
  }

  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the client stopped reading the export"));
      return;
    }
    WriteNext();
  }
  void OnDone() override { delete this; }

 private:
  static constexpr size_t kChunkBytes = 1 << 20;

  void WriteNext() {
    if (offset_ >= file_.size() && offset_ > 0) {
      Finish(grpc::Status::OK);
      return;
    }
    message_.Clear();
    message_.set_data(file_.substr(offset_, kChunkBytes));
    offset_ += kChunkBytes;
    if (offset_ >= file_.size()) message_.set_record_count(record_count_);
    StartWrite(&message_);
  }

  ByteBudget* budget_;
  int64_t reserved_ = 0;
  std::string file_;
  size_t offset_ = 0;
  int64_t record_count_ = 0;
  v1::ExportRecordsResponse message_;
};

// The reply as two slices: the payload, a view of the record's shared block
// that holds a reference to it until gRPC has sent it (no copy of the
// record), and the etag and revision fields after it (copied: a few bytes,
// inlined in the slice itself). Measured against one slice holding a copy
// of both in docs/BENCHMARKS.md (branch s11-getmodel).
//
// Built in place and swapped into `out`: grpc::ByteBuffer (gRPC 1.51) has
// no move assignment, so `*out = ByteBuffer(...)` copies the temporary
// (grpc_byte_buffer_copy: an allocation and a reference per slice) and then
// destroys it (grpc_byte_buffer_destroy, with an ExecCtx); about 500 of the
// handler's 4,700 instructions per call under callgrind (docs/BENCHMARKS.md,
// branch s13-shell).
void SetReplyBytes(RecordReply reply, grpc::ByteBuffer* out) {
  grpc::Slice slices[2];
  size_t count = 0;
  const absl::string_view payload = reply.payload();
  if (!payload.empty()) {
    // grpc::Slice takes a mutable pointer; gRPC never writes through it.
    slices[count++] =
        grpc::Slice(const_cast<char*>(payload.data()), payload.size(), &SharedRecord::ReleaseRaw,
                    std::move(reply.record).ReleaseToRaw());
  }
  slices[count++] = grpc::Slice(reply.tail.data(), reply.tail_size);
  grpc::ByteBuffer built(slices, count);
  out->Swap(&built);
}

// Parses `request` from its bytes in place when they are one flat slice
// (what a unary request of a few dozen bytes is), without the ByteBuffer
// copy and ProtoBufferReader that grpc::SerializationTraits needs;
// otherwise through them.
template <typename Request>
bool ParseRequest(const grpc::ByteBuffer& request, Request* parsed) {
  grpc::Slice slice;
  if (request.TrySingleSlice(&slice).ok()) {
    return parsed->ParseFromArray(slice.begin(), static_cast<int>(slice.size()));
  }
  grpc::ByteBuffer copy(request);  // shares the slices; Deserialize consumes its argument
  return grpc::SerializationTraits<Request>::Deserialize(&copy, parsed).ok();
}

}  // namespace

template <typename Record, typename Request>
Unary* CatalogServiceImpl::GetSerialized(Context* c, const grpc::ByteBuffer* request,
                                         grpc::ByteBuffer* out) {
  if (absl::Status denied = Admit(*c, Access::kRead); !denied.ok()) {
    return Refuse(c, denied);
  }
  // One request per serving thread, reused: parsing into it keeps the
  // name's buffer from call to call, where a request per call allocated and
  // freed it (a name is longer than std::string's inline 15 bytes). Used
  // only before this function returns; a long name's buffer is not kept.
  static thread_local Request parsed;
  constexpr size_t kKeptNameBytes = 256;
  const bool parses = ParseRequest(*request, &parsed);
  absl::StatusOr<RecordReply> reply =
      parses ? catalog_->GetReply<Record>(parsed.name())
             : absl::InvalidArgumentError(
                   absl::StrCat("request: not a valid ", Request::descriptor()->full_name()));
  if (parsed.name().capacity() > kKeptNameBytes) std::string().swap(*parsed.mutable_name());
  if (reply.ok()) SetReplyBytes(*std::move(reply), out);
  Unary* reactor = c->DefaultReactor();
  reactor->Finish(ToGrpcStatus(reply.status()));
  return reactor;
}

Unary* CatalogServiceImpl::GetModel(Context* c, const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* out) {
  return GetSerialized<Model, v1::GetModelRequest>(c, request, out);
}

Unary* CatalogServiceImpl::BatchGetModels(Context* c, const v1::BatchGetModelsRequest* r,
                                          v1::BatchGetModelsResponse* out) {
  if (absl::Status denied = Admit(*c, Access::kRead); !denied.ok()) {
    return Refuse(c, denied);
  }
  return Reply(c,
               ToPageResponse<Model, v1::BatchGetModelsResponse>(
                   catalog_->BatchGet<Model>({r->names().begin(), r->names().end()}),
                   [](v1::BatchGetModelsResponse& p) { return p.add_models(); }),
               out);
}

Unary* CatalogServiceImpl::ListModels(Context* c, const v1::ListModelsRequest* r,
                                      v1::ListModelsResponse* out) {
  if (absl::Status denied = Admit(*c, Access::kRead); !denied.ok()) {
    return Refuse(c, denied);
  }
  return Reply(c,
               ToListResponse<Model, v1::ListModelsResponse>(
                   catalog_->List<Model>(QueryOf(*r, c)),
                   [](v1::ListModelsResponse& p) { return p.add_models(); }),
               out);
}

Unary* CatalogServiceImpl::SummarizeModels(Context* c, const v1::SummarizeModelsRequest* r,
                                           v1::Summary* out) {
  if (absl::Status denied = Admit(*c, Access::kRead); !denied.ok()) {
    return Refuse(c, denied);
  }
  return Reply(c, Summarize<Model>(*catalog_, {r->filter(), r->group_by(), r->value_field()}), out);
}

Unary* CatalogServiceImpl::SummarizeHardware(Context* c, const v1::SummarizeHardwareRequest* r,
                                             v1::Summary* out) {
  if (absl::Status denied = Admit(*c, Access::kRead); !denied.ok()) {
    return Refuse(c, denied);
  }
  return Reply(c, Summarize<Hardware>(*catalog_, {r->filter(), r->group_by(), r->value_field()}),
               out);
}

Unary* CatalogServiceImpl::CreateModel(Context* c, const v1::CreateModelRequest* r, Model* out) {
  if (absl::Status denied = Admit(*c, Access::kWrite); !denied.ok()) {
    return Refuse(c, denied);
  }
  return Reply(c, catalog_->Create<Model>(r->model_id(), r->model()), out);
}

Unary* CatalogServiceImpl::UpdateModel(Context* c, const v1::UpdateModelRequest* r, Model* out) {
  if (absl::Status denied = Admit(*c, Access::kWrite); !denied.ok()) {
    return Refuse(c, denied);
  }
  return Reply(c, catalog_->Update<Model>(r->model(), Paths(r->update_mask())), out);
}

Unary* CatalogServiceImpl::DeleteModel(Context* c, const v1::DeleteModelRequest* r,
                                       google::protobuf::Empty* out) {
  if (absl::Status denied = Admit(*c, Access::kWrite); !denied.ok()) {
    return Refuse(c, denied);
  }
  return Reply(c, Deleted(catalog_->Delete<Model>(r->name(), r->etag())), out);
}

Unary* CatalogServiceImpl::GetHardware(Context* c, const grpc::ByteBuffer* request,
                                       grpc::ByteBuffer* out) {
  return GetSerialized<Hardware, v1::GetHardwareRequest>(c, request, out);
}

Unary* CatalogServiceImpl::BatchGetHardware(Context* c, const v1::BatchGetHardwareRequest* r,
                                            v1::BatchGetHardwareResponse* out) {
  if (absl::Status denied = Admit(*c, Access::kRead); !denied.ok()) {
    return Refuse(c, denied);
  }
  return Reply(c,
               ToPageResponse<Hardware, v1::BatchGetHardwareResponse>(
                   catalog_->BatchGet<Hardware>({r->names().begin(), r->names().end()}),
                   [](v1::BatchGetHardwareResponse& p) { return p.add_hardware(); }),
               out);
}

Unary* CatalogServiceImpl::ListHardware(Context* c, const v1::ListHardwareRequest* r,
                                        v1::ListHardwareResponse* out) {
  if (absl::Status denied = Admit(*c, Access::kRead); !denied.ok()) {
    return Refuse(c, denied);
  }
  return Reply(c,
               ToListResponse<Hardware, v1::ListHardwareResponse>(
                   catalog_->List<Hardware>(QueryOf(*r, c)),
                   [](v1::ListHardwareResponse& p) { return p.add_hardware(); }),
               out);
}

Unary* CatalogServiceImpl::CreateHardware(Context* c, const v1::CreateHardwareRequest* r,
                                          Hardware* out) {
  if (absl::Status denied = Admit(*c, Access::kWrite); !denied.ok()) {
    return Refuse(c, denied);
  }
  return Reply(c, catalog_->Create<Hardware>(r->hardware_id(), r->hardware()), out);
}

Unary* CatalogServiceImpl::UpdateHardware(Context* c, const v1::UpdateHardwareRequest* r,
                                          Hardware* out) {
  if (absl::Status denied = Admit(*c, Access::kWrite); !denied.ok()) {
    return Refuse(c, denied);
  }
  return Reply(c, catalog_->Update<Hardware>(r->hardware(), Paths(r->update_mask())), out);
}

Unary* CatalogServiceImpl::DeleteHardware(Context* c, const v1::DeleteHardwareRequest* r,
                                          google::protobuf::Empty* out) {
  if (absl::Status denied = Admit(*c, Access::kWrite); !denied.ok()) {
    return Refuse(c, denied);
  }
  return Reply(c, Deleted(catalog_->Delete<Hardware>(r->name(), r->etag())), out);
}

Unary* CatalogServiceImpl::GetCatalogInfo(Context* c, const v1::GetCatalogInfoRequest* /*r*/,
                                          v1::CatalogInfo* out) {
  if (absl::Status denied = Admit(*c, Access::kRead); !denied.ok()) {
    return Refuse(c, denied);
  }
  return Reply(c, catalog_->Info(), out);
}

grpc::ServerWriteReactor<v1::WatchResponse>* CatalogServiceImpl::Watch(Context* c,
                                                                       const v1::WatchRequest* r) {
  if (absl::Status denied = Admit(*c, Access::kRead, /*stream=*/true); !denied.ok()) {
    return new RefusedStream<grpc::ServerWriteReactor<v1::WatchResponse>>(denied);
  }
  if (r->start_revision() < 0) {
    return new RefusedStream<grpc::ServerWriteReactor<v1::WatchResponse>>(InvalidFieldError(
        "start_revision", absl::StrCat("must not be negative, got ", r->start_revision())));
  }
  // A revision the catalog has not reached would be waited for silently (and
  // changes up to it skipped): the caller holds a revision of another catalog.
  absl::StatusOr<v1::CatalogInfo> info = catalog_->Info();
  if (!info.ok()) {
    return new RefusedStream<grpc::ServerWriteReactor<v1::WatchResponse>>(info.status());
  }
  if (r->start_revision() > info->revision()) {
    return new RefusedStream<grpc::ServerWriteReactor<v1::WatchResponse>>(
        WithReason(absl::OutOfRangeError(absl::StrCat(
                       "start_revision ", r->start_revision(), " is past the catalog's revision ",
                       info->revision(),
                       " (a revision of another catalog?); watch from at most the current one")),
                   "REVISION_IN_THE_FUTURE"));
  }
  if (stopping_.load()) {
    return new RefusedStream<grpc::ServerWriteReactor<v1::WatchResponse>>(absl::UnavailableError(
        "the catalog is shutting down; watch another replica or retry after it restarts"));
  }
  return new WatchReactor(catalog_, r->start_revision(), watch_poll_interval_,
                          watch_progress_interval_, &stopping_);
}

grpc::ServerReadReactor<grpc::ByteBuffer>* CatalogServiceImpl::ImportRecords(
    Context* c, grpc::ByteBuffer* out) {
  if (absl::Status denied = Admit(*c, Access::kWrite, /*stream=*/true); !denied.ok()) {
    return new RefusedStream<grpc::ServerReadReactor<grpc::ByteBuffer>>(denied);
  }
  return new ImportReactor(c, catalog_, out, on_import_, transfer_budget_, import_spool_directory_);
}

grpc::ServerWriteReactor<v1::ExportRecordsResponse>* CatalogServiceImpl::ExportRecords(
    Context* c, const v1::ExportRecordsRequest* r) {
  if (absl::Status denied = Admit(*c, Access::kRead, /*stream=*/true); !denied.ok()) {
    return new RefusedStream<grpc::ServerWriteReactor<v1::ExportRecordsResponse>>(denied);
  }
  return new ExportReactor(catalog_, *r, transfer_budget_);
}

}  // namespace modelatlas::catalog
