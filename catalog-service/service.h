// The gRPC adapter of the catalog: translates requests to Catalog calls and
// statuses to gRPC statuses, nothing more.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "catalog-service/catalog.h"
#include "catalog-service/import/import_source.h"
#include "common/server/byte_budget.h"
#include "common/server/load_shedding.h"
#include "common/server/security.h"
#include "modelatlas/catalog/v1/catalog_service.grpc.pb.h"

namespace modelatlas::catalog {

// GetModel and GetHardware are registered as raw methods (bytes in, bytes
// out): they reply with the stored record's bytes (Catalog::GetSerialized)
// instead of parsing and re-serializing the record. ImportRecords is raw too:
// it parses each message itself, because a message that does not parse ends
// a typed stream's reads exactly as a half-close does, and a cut file would
// be imported (common/server/request_parsing.h). The wire contract is the
// same as the typed methods'.
class CatalogServiceImpl final : public v1::CatalogService::WithRawCallbackMethod_GetModel<
                                     v1::CatalogService::WithRawCallbackMethod_GetHardware<
                                         v1::CatalogService::WithRawCallbackMethod_ImportRecords<
                                             v1::CatalogService::CallbackService>>> {
 public:
  // `watch_poll_interval`: how often Watch streams look for writes made by
  // other replicas sharing the store.
  // Called with the report of every completed import (for metrics).
  using ImportObserver = std::function<void(const v1::ImportReport&)>;

  // `authorizer` (optional) decides who may read and write.
  explicit CatalogServiceImpl(Catalog* catalog,
                              absl::Duration watch_poll_interval = absl::Milliseconds(200),
                              ImportObserver on_import = nullptr,
                              const Authorizer* authorizer = nullptr,
                              const CallLimiter* limiter = nullptr)
      : catalog_(catalog),
        watch_poll_interval_(watch_poll_interval),
        on_import_(std::move(on_import)),
        authorizer_(authorizer),
        limiter_(limiter) {}

  // How long a Watch stream may stay silent: with no change for this long
  // it sends a progress message (no changes, the current revision), so a
  // watcher can tell a quiet catalog from one it lost (etcd's progress
  // notifications).
  void SetWatchProgressInterval(absl::Duration interval) { watch_progress_interval_ = interval; }

  // The bytes import uploads buffer and unread exports hold, together
  // (--transfer_memory_limit_bytes); none when not set.
  void SetTransferBudget(ByteBudget* budget) { transfer_budget_ = budget; }

  // Where imports spool their uploads (unnamed temporary files;
  // --import_spool_dir); $TMPDIR, else /tmp, when not set.
  void SetImportSpoolDirectory(std::string directory) {
    import_spool_directory_ = std::move(directory);
  }

  // Ends every open Watch stream cleanly (OK) within about a second, and
  // refuses new ones: called when the server shuts down.
  void StopStreams() { stopping_.store(true); }

  using Context = grpc::CallbackServerContext;
  using Unary = grpc::ServerUnaryReactor;

  Unary* GetModel(Context* c, const grpc::ByteBuffer* request, grpc::ByteBuffer* out) override;
  Unary* BatchGetModels(Context* c, const v1::BatchGetModelsRequest* r,
                        v1::BatchGetModelsResponse* out) override;
  Unary* ListModels(Context* c, const v1::ListModelsRequest* r,
                    v1::ListModelsResponse* out) override;
  Unary* CreateModel(Context* c, const v1::CreateModelRequest* r, Model* out) override;
  Unary* UpdateModel(Context* c, const v1::UpdateModelRequest* r, Model* out) override;
  Unary* DeleteModel(Context* c, const v1::DeleteModelRequest* r,
                     google::protobuf::Empty* out) override;

  Unary* GetHardware(Context* c, const grpc::ByteBuffer* request, grpc::ByteBuffer* out) override;
  Unary* BatchGetHardware(Context* c, const v1::BatchGetHardwareRequest* r,
                          v1::BatchGetHardwareResponse* out) override;
  Unary* ListHardware(Context* c, const v1::ListHardwareRequest* r,
                      v1::ListHardwareResponse* out) override;
  Unary* CreateHardware(Context* c, const v1::CreateHardwareRequest* r, Hardware* out) override;
  Unary* UpdateHardware(Context* c, const v1::UpdateHardwareRequest* r, Hardware* out) override;
  Unary* DeleteHardware(Context* c, const v1::DeleteHardwareRequest* r,
                        google::protobuf::Empty* out) override;

  Unary* SummarizeModels(Context* c, const v1::SummarizeModelsRequest* r,
                         v1::Summary* out) override;
  Unary* SummarizeHardware(Context* c, const v1::SummarizeHardwareRequest* r,
                           v1::Summary* out) override;
  Unary* GetCatalogInfo(Context* c, const v1::GetCatalogInfoRequest* r,
                        v1::CatalogInfo* out) override;
  grpc::ServerWriteReactor<v1::WatchResponse>* Watch(Context* c,
                                                     const v1::WatchRequest* r) override;

  // Reads ImportRecordsRequest messages, replies an ImportRecordsResponse.
  grpc::ServerReadReactor<grpc::ByteBuffer>* ImportRecords(Context* c,
                                                           grpc::ByteBuffer* out) override;
  grpc::ServerWriteReactor<v1::ExportRecordsResponse>* ExportRecords(
      Context* c, const v1::ExportRecordsRequest* r) override;

 private:
  // GetModel and GetHardware: `Request` parsed from `request`, the record
  // named in it replied as bytes.
  template <typename Record, typename Request>
  Unary* GetSerialized(Context* c, const grpc::ByteBuffer* request, grpc::ByteBuffer* out);

  Catalog* catalog_;
  absl::Duration watch_poll_interval_;
  ImportObserver on_import_;
  absl::Duration watch_progress_interval_ = absl::Seconds(10);
  std::atomic<bool> stopping_{false};
  const Authorizer* authorizer_;
  const CallLimiter* limiter_;
  ByteBudget* transfer_budget_ = nullptr;
  std::string import_spool_directory_ = DefaultSpoolDirectory();

  // Every call starts here: refused when the server is overloaded (`limiter`,
  // optional) or the caller lacks `access` (`authorizer`, optional). A
  // stream also takes a place among the streams (CallLimiter::CheckStream).
  absl::Status Admit(const grpc::CallbackServerContext& context, Access access,
                     bool stream = false) const {
    if (limiter_ != nullptr) {
      if (absl::Status busy = stream ? limiter_->CheckStream(context.peer()) : limiter_->Check();
          !busy.ok()) {
        return busy;
      }
    }
    return authorizer_ == nullptr ? absl::OkStatus() : authorizer_->Check(context, access);
  }
};

}  // namespace modelatlas::catalog
