// `modelatlas card MODEL`: a model's page, the way the seed pages read:
// every recorded field with its notes, then the hardware requirements from
// the estimator (or the reason there are none).
#pragma once

#include <ostream>

#include "modelatlas/common/v1/model.pb.h"
#include "modelatlas/estimator/v1/estimator_service.pb.h"

namespace modelatlas::cli {

// `plan` is null when the weights are closed or no estimate could be made.
void PrintCard(const common::v1::Model& model, const estimator::v1::PlanInferenceResponse* plan,
               std::ostream& out);

}  // namespace modelatlas::cli
