// The inverse questions (issue 21, point 1; docs/FORMULAS.md, "The inverse
// questions"): for a model on cards of a hardware record, or in a memory
// budget, the largest context, the largest batch and the best weight format
// that fit. Each is the exact inverse of the forward answer: the search
// evaluates PlanInferenceFor (cards) or EstimateMemoryForModel (budget) and
// nothing else, so the forward answer at the result fits and one step beyond
// does not. No gRPC, no reactors.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/answers/model_sources.h"
#include "estimator-service/catalog/record_source.h"
#include "modelatlas/common/v1/hardware.pb.h"
#include "modelatlas/common/v1/model.pb.h"
#include "modelatlas/estimator/v1/estimator_service.pb.h"

namespace modelatlas::estimator {

// KV-cache block size when a request gives none: vLLM's default --block-size.
inline constexpr int kDefaultKvBlockSizeTokens = 16;

// The checks of each request; INVALID_ARGUMENT naming every bad field.
absl::Status ValidateInverseRequest(const v1::FindMaxContextRequest& request);
absl::Status ValidateInverseRequest(const v1::FindMaxBatchRequest& request);
absl::Status ValidateInverseRequest(const v1::FindBestWeightFormatRequest& request);

// The answers for a model already read (`hardware` holds the target's one
// record when the target names hardware). `sourced` may be null;
// `offload_host` is the record target.offload_host names (required when
// target.offload is set, ignored otherwise).
absl::StatusOr<v1::InverseAnswer> MaxContextFor(const common::v1::Model& model,
                                                const SharedRecords<common::v1::Hardware>& hardware,
                                                const v1::FindMaxContextRequest& request,
                                                const SourcedModel* sourced = nullptr,
                                                const common::v1::Hardware* offload_host = nullptr);
absl::StatusOr<v1::InverseAnswer> MaxBatchFor(const common::v1::Model& model,
                                              const SharedRecords<common::v1::Hardware>& hardware,
                                              const v1::FindMaxBatchRequest& request,
                                              const SourcedModel* sourced = nullptr,
                                              const common::v1::Hardware* offload_host = nullptr);
absl::StatusOr<v1::InverseAnswer> BestWeightFormatFor(
    const common::v1::Model& model, const SharedRecords<common::v1::Hardware>& hardware,
    const v1::FindBestWeightFormatRequest& request, const SourcedModel* sourced = nullptr,
    const common::v1::Hardware* offload_host = nullptr);

// The RPCs: validate, read the model and the hardware, answer. `request`
// must outlive `done`.
void AnswerFindMaxContext(std::shared_ptr<RecordSource> source,
                          const v1::FindMaxContextRequest& request,
                          AnswerDone<v1::InverseAnswer> done);
void AnswerFindMaxBatch(std::shared_ptr<RecordSource> source,
                        const v1::FindMaxBatchRequest& request, AnswerDone<v1::InverseAnswer> done);
void AnswerFindBestWeightFormat(std::shared_ptr<RecordSource> source,
                                const v1::FindBestWeightFormatRequest& request,
                                AnswerDone<v1::InverseAnswer> done);

}  // namespace modelatlas::estimator
