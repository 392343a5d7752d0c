// The gRPC adapter of the estimator: each method admits the call, hands
// the request to one answer builder (answers/) with the records it may read
// (the snapshot, then the catalog), and replies.
#pragma once

#include <functional>
#include <memory>

#include "absl/strings/string_view.h"
#include "common/server/load_shedding.h"
#include "estimator-service/answers/memory_answer.h"
#include "estimator-service/cache/answer_cache.h"
#include "estimator-service/catalog/catalog_client.h"
#include "estimator-service/catalog/record_source.h"
#include "estimator-service/catalog/snapshot.h"
#include "modelatlas/estimator/v1/estimator_service.grpc.pb.h"

namespace modelatlas::estimator {

// EstimateInferenceMemory and PlanInference are raw methods: their answers
// are kept serialized (AnswerCache) and replied from memory to the same
// request bytes until the catalog changes.
class EstimatorServiceImpl final
    : public v1::EstimatorService::WithRawCallbackMethod_EstimateInferenceMemory<
          v1::EstimatorService::WithRawCallbackMethod_PlanInference<
              v1::EstimatorService::CallbackService>> {
 public:
  // Called with the kind of every answered request ("inference_memory",
  // "training_compute", ...), for metrics.
  using EstimateObserver = std::function<void(const char* kind)>;

  // `snapshot` may be null: every catalog read is then a call to the catalog.
  // `limiter` (optional) refuses calls when the server is overloaded.
  // `answers` (optional, not owned) keeps answers to repeated requests.
  explicit EstimatorServiceImpl(CatalogClient* catalog, CatalogSnapshot* snapshot = nullptr,
                                EstimateObserver on_estimate = nullptr,
                                const CallLimiter* limiter = nullptr,
                                AnswerCache* answers = nullptr)
      : catalog_(catalog),
        snapshot_(snapshot),
        on_estimate_(std::move(on_estimate)),
        limiter_(limiter),
        answers_(answers) {}

  grpc::ServerUnaryReactor* EstimateInferenceMemory(grpc::CallbackServerContext* context,
                                                    const grpc::ByteBuffer* request,
                                                    grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* PlanInference(grpc::CallbackServerContext* context,
                                          const grpc::ByteBuffer* request,
                                          grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* CountParameters(grpc::CallbackServerContext* context,
                                            const v1::CountParametersRequest* request,
                                            v1::CountParametersResponse* response) override;
  grpc::ServerUnaryReactor* FindMaxContext(grpc::CallbackServerContext* context,
                                           const v1::FindMaxContextRequest* request,
                                           v1::InverseAnswer* response) override;
  grpc::ServerUnaryReactor* FindMaxBatch(grpc::CallbackServerContext* context,
                                         const v1::FindMaxBatchRequest* request,
                                         v1::InverseAnswer* response) override;
  grpc::ServerUnaryReactor* FindBestWeightFormat(grpc::CallbackServerContext* context,
                                                 const v1::FindBestWeightFormatRequest* request,
                                                 v1::InverseAnswer* response) override;
  grpc::ServerWriteReactor<v1::ListRunnableModelsResponse>* ListRunnableModels(
      grpc::CallbackServerContext* context, const v1::ListRunnableModelsRequest* request) override;
  grpc::ServerWriteReactor<v1::StreamFitMatrixResponse>* StreamFitMatrix(
      grpc::CallbackServerContext* context, const v1::StreamFitMatrixRequest* request) override;

  grpc::ServerUnaryReactor* EstimateTrainingCompute(
      grpc::CallbackServerContext* context, const v1::EstimateTrainingComputeRequest* request,
      v1::EstimateTrainingComputeResponse* response) override;
  grpc::ServerUnaryReactor* EstimateTrainingMemory(
      grpc::CallbackServerContext* context, const v1::EstimateTrainingMemoryRequest* request,
      v1::EstimateTrainingMemoryResponse* response) override;
  grpc::ServerUnaryReactor* PlanTraining(grpc::CallbackServerContext* context,
                                         const v1::PlanTrainingRequest* request,
                                         v1::PlanTrainingResponse* response) override;
  grpc::ServerUnaryReactor* AuditModel(grpc::CallbackServerContext* context,
                                       const v1::AuditModelRequest* request,
                                       v1::AuditModelResponse* response) override;
  grpc::ServerWriteReactor<v1::AuditCatalogResponse>* AuditCatalog(
      grpc::CallbackServerContext* context, const v1::AuditCatalogRequest* request) override;

 private:
  // The records a call reads: the snapshot when it has them, else the catalog.
  std::shared_ptr<RecordSource> Records(grpc::CallbackServerContext* context) const;

  // Admits a unary call and runs `answer` with its records and a finisher
  // (which counts the answer by `kind` when OK).
  template <typename Request, typename Response, typename Answer>
  grpc::ServerUnaryReactor* Unary(grpc::CallbackServerContext* context, const Request* request,
                                  Response* response, const char* kind, Answer answer);

  // Unary, for a raw method: parses the request (INVALID_ARGUMENT naming its
  // type when the bytes are not one), replies a kept answer to the same
  // bytes at the snapshot's revision, else answers, keeps and replies.
  // `answer(records, request, finish)` ends with finish(status, const
  // Response* answer): the answer (null unless OK) is serialized in finish,
  // so it may live on an arena the caller frees afterwards.
  template <typename Request, typename Response, typename Answer>
  grpc::ServerUnaryReactor* CachedUnary(grpc::CallbackServerContext* context,
                                        const grpc::ByteBuffer* request, grpc::ByteBuffer* response,
                                        const char* kind, Answer answer);

  // The snapshot's state for the answer cache's lookup, read once per call;
  // not loaded (nothing looked up or kept) when the cache is off.
  CatalogSnapshot::Sync CacheSync() const;

  // Replies the answer kept for `request_bytes` at `sync`'s revision, if
  // any (then true: the caller finishes the call OK).
  template <typename Response>
  bool ReplyKept(const char* kind, absl::string_view request_bytes,
                 const CatalogSnapshot::Sync& sync, grpc::ByteBuffer* out);

  // CachedUnary after the parse: answers `request`, keeps the answer when it
  // read nothing but the request and the snapshot at `sync`'s revision,
  // replies and finishes `reactor`.
  template <typename Request, typename Response, typename Answer>
  void AnswerParsed(grpc::CallbackServerContext* context, grpc::ServerUnaryReactor* reactor,
                    absl::string_view request_bytes, const CatalogSnapshot::Sync& sync,
                    std::shared_ptr<const Request> request, grpc::ByteBuffer* out, const char* kind,
                    Answer answer);

  // The synchronous memory answer's reply (EstimateInferenceMemory): counted,
  // its CatalogView from `read` (the snapshot's state the record was read
  // at), kept as AnswerParsed keeps.
  void ReplyMemoryAnswer(const MemoryAnswer& answer, const CatalogSnapshot::Sync& read,
                         absl::string_view request_bytes, const CatalogSnapshot::Sync& sync,
                         grpc::ByteBuffer* out);

  CatalogClient* catalog_;
  CatalogSnapshot* snapshot_;
  EstimateObserver on_estimate_;
  const CallLimiter* limiter_;
  AnswerCache* answers_;

  absl::Status Admit() const { return limiter_ == nullptr ? absl::OkStatus() : limiter_->Check(); }
  // A long stream (the whole matrix) also takes a place among the streams:
  // at most half the call slots, a quarter of those per caller
  // (CallLimiter::CheckStream).
  absl::Status AdmitStream(grpc::CallbackServerContext* context) const {
    if (absl::Status busy = Admit(); !busy.ok() || limiter_ == nullptr) return busy;
    return limiter_->CheckStream(context->peer());
  }
};

}  // namespace modelatlas::estimator
