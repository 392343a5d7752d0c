// The training answers, from records to responses: which inputs a record
// and its hardware give, with the request's overrides; the memory and plan
// for given settings; the audit of one record and of the whole snapshot.
// Protobuf in and out, no gRPC: tested without a server.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "estimator-service/core/training_run.h"
#include "estimator-service/snapshot.h"
#include "modelatlas/common/v1/hardware.pb.h"
#include "modelatlas/common/v1/model.pb.h"
#include "modelatlas/estimator/v1/estimator_service.pb.h"

namespace modelatlas::estimator {

// The hardware a record trained on, if the snapshot or catalog knows it.
using HardwareLookup = std::function<std::optional<common::v1::Hardware>(const std::string& name)>;

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

// Recomputes the record's chip-hours, compute and power from its own
// inputs (and its linked hardware records).
v1::AuditModelResponse AuditRecord(const common::v1::Model& model, const HardwareLookup& hardware,
                                   double tolerance);

// Every model of the snapshot matching `request.filter`, then the summary.
absl::StatusOr<std::vector<v1::AuditCatalogResponse>> AuditSnapshot(
    const CatalogSnapshot& snapshot, const v1::AuditCatalogRequest& request);

}  // namespace modelatlas::estimator
