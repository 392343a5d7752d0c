// The training answers (training.cc: memory and plan; training_compute.cc:
// compute), from records to responses: which inputs a record
// and its hardware give, with the request's overrides; the memory and plan
// for given settings; the answers that read their records first.
// Protobuf in and out, no gRPC: tested without a server.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/catalog/record_source.h"
#include "estimator-service/core/training_run.h"
#include "modelatlas/common/v1/hardware.pb.h"
#include "modelatlas/common/v1/model.pb.h"
#include "modelatlas/estimator/v1/estimator_service.pb.h"

namespace modelatlas::estimator {

// The training utilization a record's notes state ("assuming 30%
// utilization", "MFU of 0.38"), a fraction, when they state exactly one;
// nothing when they state none or several different ones. Linear in the
// text.
std::optional<double> UtilizationStatedIn(absl::string_view notes);

// The run's inputs: the record's (when `model` is given), its training
// hardware's peak and TDP, then every field the request sets.
// INVALID_ARGUMENT for a precision this build does not know.
absl::StatusOr<TrainingRunInputs> TrainingInputsFor(const common::v1::Model* model,
                                                    const common::v1::Hardware* hardware,
                                                    const v1::TrainingRunInputs& request);

absl::StatusOr<v1::EstimateTrainingComputeResponse> EstimateTrainingComputeFor(
    const common::v1::Model* model, const common::v1::Hardware* hardware,
    const v1::EstimateTrainingComputeRequest& request);

// `model` is a record, or one built from an inline architecture.
absl::StatusOr<v1::EstimateTrainingMemoryResponse> EstimateTrainingMemoryFor(
    const common::v1::Model& model, const v1::TrainingSettings& settings);

absl::StatusOr<v1::PlanTrainingResponse> PlanTrainingFor(const common::v1::Model& model,
                                                         const common::v1::Hardware& hardware,
                                                         const v1::PlanTrainingRequest& request);

// EstimateTrainingCompute: the catalog model (when named), the hardware the
// request names (required) or the record's own (when found), then the run.
// `request` must outlive `done`.
void AnswerTrainingCompute(std::shared_ptr<RecordSource> source,
                           const v1::EstimateTrainingComputeRequest& request,
                           AnswerDone<v1::EstimateTrainingComputeResponse> done);

// EstimateTrainingMemory: a catalog model, or one from an inline
// architecture or config.json.
void AnswerTrainingMemory(std::shared_ptr<RecordSource> source,
                          const v1::EstimateTrainingMemoryRequest& request,
                          AnswerDone<v1::EstimateTrainingMemoryResponse> done);

// PlanTraining: the model as for the memory, on the named hardware.
void AnswerPlanTraining(std::shared_ptr<RecordSource> source,
                        const v1::PlanTrainingRequest& request,
                        AnswerDone<v1::PlanTrainingResponse> done);

}  // namespace modelatlas::estimator
