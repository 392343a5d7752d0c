// The plan's runtime fit (core/runtime_fit.h) in and out of protos: the
// request's runtime, what the rules read of the model, the answer's field.
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "estimator-service/core/runtime_fit.h"
#include "modelatlas/common/v1/model.pb.h"
#include "modelatlas/estimator/v1/estimator_service.pb.h"

namespace modelatlas::estimator {

// Plans of an answer checked under the request's runtime: the best fitting
// ones, in rank order (a runtime's fit is several times a plan's text).
constexpr size_t kMaxRuntimeFits = 8;

// INVALID_ARGUMENT naming `field` for a value the enum does not have.
absl::StatusOr<Runtime> ToCoreRuntime(v1::Runtime runtime, const char* field);

// The model as the runtimes' rules read it; `repo_id` is the request's
// Hugging Face repository when it named one, else empty (then the record's
// config.json address gives it, when it is on the Hub).
RuntimeModel RuntimeModelOf(const common::v1::Model& model, const std::string& repo_id);

void ToProto(const RuntimeFit& fit, v1::RuntimeFit* out);

}  // namespace modelatlas::estimator
