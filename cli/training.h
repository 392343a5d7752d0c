// `modelatlas estimate compute`, `estimate training-memory`, `plan training`
// and `audit`: requests built from flags, answers printed as tables with
// their arithmetic (or JSON).
#pragma once

#include <string>

#include "modelatlas/estimator/v1/estimator_service.grpc.pb.h"

namespace modelatlas::cli {

// Each returns the process exit code: 0, 1 when the call fails, 2 for bad flags.
int EstimateCompute(estimator::v1::EstimatorService::Stub& estimator, const std::string& address,
                    const std::string& model, bool json);
int EstimateTrainingMemory(estimator::v1::EstimatorService::Stub& estimator,
                           const std::string& address, const std::string& model, bool json);
int PlanTraining(estimator::v1::EstimatorService::Stub& estimator, const std::string& address,
                 const std::string& model, bool json);
// `model` empty audits the whole catalog (--filter selects).
int Audit(estimator::v1::EstimatorService::Stub& estimator, const std::string& address,
          const std::string& model, bool json);

}  // namespace modelatlas::cli
