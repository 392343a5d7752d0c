// The gRPC adapter of the estimator: validates and translates requests,
// fetches catalog records, calls the formulas in core/, translates back.
#pragma once

#include "absl/status/statusor.h"
#include "common/server/load_shedding.h"
#include "estimator-service/catalog_client.h"
#include "estimator-service/snapshot.h"
#include "modelatlas/estimator/v1/estimator_service.grpc.pb.h"

namespace modelatlas::estimator {

// Builds the memory answer for `model` (a catalog record or an inline model
// turned into one). Plain logic, tested without a server.
absl::StatusOr<v1::EstimateInferenceMemoryResponse> EstimateMemoryForModel(
    const common::v1::Model& model, const v1::EstimateInferenceMemoryRequest& request);

// Counts the parameters of `architecture` (plain logic, tested without a server).
absl::StatusOr<v1::CountParametersResponse> CountParametersOf(
    const common::v1::Architecture& architecture, const v1::CountParametersRequest& request);

// The checks of a PlanInferenceRequest's own fields (the workload's are
// EstimateMemoryForModel's); INVALID_ARGUMENT naming each bad field.
absl::Status ValidatePlanRequest(const v1::PlanInferenceRequest& request);

// Plans `model` on every record of `hardware` (plain logic, tested without a server).
absl::StatusOr<v1::PlanInferenceResponse> PlanInferenceFor(
    const common::v1::Model& model, const std::vector<common::v1::Hardware>& hardware,
    const v1::PlanInferenceRequest& request);

class EstimatorServiceImpl final : public v1::EstimatorService::CallbackService {
 public:
  // `snapshot` may be null: every catalog read is then a call to the catalog.
  // Called with the kind of every answered request ("inference_memory",
  // "training_compute", ...), for metrics.
  using EstimateObserver = std::function<void(const char* kind)>;

  // `limiter` (optional) refuses calls when the server is overloaded.
  explicit EstimatorServiceImpl(CatalogClient* catalog, CatalogSnapshot* snapshot = nullptr,
                                EstimateObserver on_estimate = nullptr,
                                const CallLimiter* limiter = nullptr)
      : catalog_(catalog),
        snapshot_(snapshot),
        on_estimate_(std::move(on_estimate)),
        limiter_(limiter) {}

  grpc::ServerUnaryReactor* EstimateInferenceMemory(
      grpc::CallbackServerContext* context, const v1::EstimateInferenceMemoryRequest* request,
      v1::EstimateInferenceMemoryResponse* response) override;
  grpc::ServerUnaryReactor* PlanInference(grpc::CallbackServerContext* context,
                                          const v1::PlanInferenceRequest* request,
                                          v1::PlanInferenceResponse* response) override;
  grpc::ServerUnaryReactor* CountParameters(grpc::CallbackServerContext* context,
                                            const v1::CountParametersRequest* request,
                                            v1::CountParametersResponse* response) override;
  grpc::ServerWriteReactor<v1::ListRunnableModelsResponse>* ListRunnableModels(
      grpc::CallbackServerContext* context, const v1::ListRunnableModelsRequest* request) override;

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
  // A model from the snapshot when it has it, else from the catalog (whose
  // answer is authoritative for unknown or ambiguous names).
  void ResolveModel(grpc::CallbackServerContext* context, const std::string& name,
                    std::function<void(absl::StatusOr<common::v1::Model>)> done);
  void ResolveHardware(grpc::CallbackServerContext* context, const std::vector<std::string>& names,
                       std::function<void(absl::StatusOr<std::vector<common::v1::Hardware>>)> done);

  // The model a training request names: a catalog record, or one built
  // from an inline architecture or config.json.
  void ResolveTrainingModel(grpc::CallbackServerContext* context, const v1::TrainingModel& model,
                            std::function<void(absl::StatusOr<common::v1::Model>)> done);
  // The hardware `name` names, or nullopt when `optional` and it is not found.
  void ResolveOneHardware(
      grpc::CallbackServerContext* context, const std::string& name, bool optional,
      std::function<void(absl::StatusOr<std::optional<common::v1::Hardware>>)> done);

  // Finishes a unary call with `result` (counting it by `kind` when OK).
  template <typename Response>
  std::function<void(absl::StatusOr<Response>)> Finisher(grpc::ServerUnaryReactor* reactor,
                                                         Response* response, const char* kind);

  CatalogClient* catalog_;
  CatalogSnapshot* snapshot_;
  EstimateObserver on_estimate_;
  const CallLimiter* limiter_;

  absl::Status Admit() const { return limiter_ == nullptr ? absl::OkStatus() : limiter_->Check(); }
};

}  // namespace modelatlas::estimator
