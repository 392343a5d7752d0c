#include "estimator-service/service.h"

#include <utility>

#include "common/status/grpc_status.h"
#include "estimator-service/answers/audit.h"
#include "estimator-service/answers/catalog_view.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/answers/inverse.h"
#include "estimator-service/answers/model_sources.h"
#include "estimator-service/answers/runnable.h"
#include "estimator-service/answers/training.h"
#include "estimator-service/catalog/sources.h"
#include "estimator-service/list_writer.h"

namespace modelatlas::estimator {
namespace {

// A message source whose first message also carries `first`'s fields (the
// stream's CatalogView).
template <typename Message, typename Source>
struct ViewOnFirst {
  Source source;
  Message first;
  bool sent = false;
  bool Fill(Message* message) {
    if (!source.Fill(message)) return false;
    if (!sent) message->MergeFrom(first);
    sent = true;
    return true;
  }
};

}  // namespace

std::shared_ptr<RecordSource> EstimatorServiceImpl::Records(
    grpc::CallbackServerContext* context) const {
  return std::make_shared<SnapshotThenCatalog>(snapshot_, catalog_, context);
}

template <typename Request, typename Response, typename Answer>
grpc::ServerUnaryReactor* EstimatorServiceImpl::Unary(grpc::CallbackServerContext* context,
                                                      const Request* request, Response* response,
                                                      const char* kind, Answer answer) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (absl::Status busy = Admit(); !busy.ok()) {
    reactor->Finish(ToGrpcStatus(busy));
    return reactor;
  }
  // A Hugging Face fetch started by the answer stops at the caller's deadline.
  CallDeadlineScope deadline(absl::FromChrono(context->deadline()),
                             [context] { return context->IsCancelled(); });
  std::shared_ptr<RecordSource> records = Records(context);
  answer(records, *request,
         [this, reactor, response, kind, records](absl::StatusOr<Response> result) {
           if (result.ok()) {
             if (on_estimate_) on_estimate_(kind);
             *response = *std::move(result);
             // How current the records it read were (the answer's provenance).
             SetCatalogView(*records, response);
           }
           reactor->Finish(ToGrpcStatus(result.status()));
         });
  return reactor;
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::EstimateInferenceMemory(
    grpc::CallbackServerContext* context, const v1::EstimateInferenceMemoryRequest* request,
    v1::EstimateInferenceMemoryResponse* response) {
  return Unary(context, request, response, "inference_memory", AnswerInferenceMemory);
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::PlanInference(
    grpc::CallbackServerContext* context, const v1::PlanInferenceRequest* request,
    v1::PlanInferenceResponse* response) {
  return Unary(context, request, response, "plan_inference", AnswerPlanInference);
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::CountParameters(
    grpc::CallbackServerContext* context, const v1::CountParametersRequest* request,
    v1::CountParametersResponse* response) {
  return Unary(context, request, response, "count_parameters", AnswerCountParameters);
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::FindMaxContext(
    grpc::CallbackServerContext* context, const v1::FindMaxContextRequest* request,
    v1::InverseAnswer* response) {
  return Unary(context, request, response, "max_context", AnswerFindMaxContext);
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::FindMaxBatch(grpc::CallbackServerContext* context,
                                                             const v1::FindMaxBatchRequest* request,
                                                             v1::InverseAnswer* response) {
  return Unary(context, request, response, "max_batch", AnswerFindMaxBatch);
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::FindBestWeightFormat(
    grpc::CallbackServerContext* context, const v1::FindBestWeightFormatRequest* request,
    v1::InverseAnswer* response) {
  return Unary(context, request, response, "best_weight_format", AnswerFindBestWeightFormat);
}

grpc::ServerWriteReactor<v1::ListRunnableModelsResponse>* EstimatorServiceImpl::ListRunnableModels(
    grpc::CallbackServerContext* context, const v1::ListRunnableModelsRequest* request) {
  using Writer = SourceWriter<v1::ListRunnableModelsResponse,
                              ViewOnFirst<v1::ListRunnableModelsResponse, RunnableRows>>;
  if (absl::Status busy = Admit(); !busy.ok()) return new Writer(busy);
  // The walk over every model stops once the caller has gone or its
  // deadline has passed (CallAbandoned).
  CallDeadlineScope deadline(absl::FromChrono(context->deadline()),
                             [context] { return context->IsCancelled(); });
  // Whole-catalog answers need the snapshot: the builder reads it
  // synchronously (hardware included), so the writer starts with the rows.
  absl::StatusOr<RunnableRows> runnable = absl::UnavailableError("no answer");
  auto records = std::make_shared<SnapshotRecords>(snapshot_, catalog_->address());
  AnswerRunnableModels(records, *request, [&runnable](absl::StatusOr<RunnableRows> rows) {
    runnable = std::move(rows);
  });
  if (!runnable.ok()) return new Writer(runnable.status());
  if (on_estimate_) on_estimate_("runnable_models");
  ViewOnFirst<v1::ListRunnableModelsResponse, RunnableRows> rows{*std::move(runnable)};
  SetCatalogView(*records, &rows.first);
  return new Writer(std::move(rows));
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::EstimateTrainingCompute(
    grpc::CallbackServerContext* context, const v1::EstimateTrainingComputeRequest* request,
    v1::EstimateTrainingComputeResponse* response) {
  return Unary(context, request, response, "training_compute", AnswerTrainingComputeFromAnySource);
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::EstimateTrainingMemory(
    grpc::CallbackServerContext* context, const v1::EstimateTrainingMemoryRequest* request,
    v1::EstimateTrainingMemoryResponse* response) {
  return Unary(context, request, response, "training_memory", AnswerTrainingMemoryFromAnySource);
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::PlanTraining(grpc::CallbackServerContext* context,
                                                             const v1::PlanTrainingRequest* request,
                                                             v1::PlanTrainingResponse* response) {
  return Unary(context, request, response, "plan_training", AnswerPlanTrainingFromAnySource);
}

grpc::ServerUnaryReactor* EstimatorServiceImpl::AuditModel(grpc::CallbackServerContext* context,
                                                           const v1::AuditModelRequest* request,
                                                           v1::AuditModelResponse* response) {
  return Unary(context, request, response, "audit_model", AnswerAuditModel);
}

grpc::ServerWriteReactor<v1::AuditCatalogResponse>* EstimatorServiceImpl::AuditCatalog(
    grpc::CallbackServerContext* context, const v1::AuditCatalogRequest* request) {
  using Writer = ListWriter<v1::AuditCatalogResponse>;
  if (absl::Status busy = Admit(); !busy.ok()) return new Writer(busy);
  CallDeadlineScope deadline(absl::FromChrono(context->deadline()),
                             [context] { return context->IsCancelled(); });
  absl::StatusOr<std::vector<v1::AuditCatalogResponse>> audit = absl::UnavailableError("no answer");
  auto records = std::make_shared<SnapshotRecords>(snapshot_, catalog_->address());
  AnswerAuditCatalog(records, *request,
                     [&audit](absl::StatusOr<std::vector<v1::AuditCatalogResponse>> out) {
                       audit = std::move(out);
                     });
  if (audit.ok() && on_estimate_) on_estimate_("audit_catalog");
  if (audit.ok() && !audit->empty()) SetCatalogView(*records, &audit->front());
  return new Writer(std::move(audit));
}

}  // namespace modelatlas::estimator
