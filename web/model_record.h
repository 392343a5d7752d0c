// A model's full record as page sections (origin, what it does, size,
// training compute, availability, classification, sources) and the common
// questions answered from it.
#pragma once

#include <string>

#include "modelatlas/common/v1/model.pb.h"
#include "modelatlas/estimator/v1/estimator_service.pb.h"

namespace modelatlas::web {

// True when the record says its weights can be downloaded.
bool OpenWeights(const common::v1::Model& m);

// "Open weights, unrestricted use" for the accessibility enum; "" when unset.
std::string AccessibilityText(common::v1::Accessibility a);

std::string RecordSections(const common::v1::Model& m);

// "What the numbers mean": the record told in sentences.
std::string Narrative(const common::v1::Model& m, const estimator::v1::PlanInferenceResponse* plan,
                      const std::string& workload_text);

// The questions; `plan` is the plan shown on the page (null when none).
std::string Answers(const common::v1::Model& m, const estimator::v1::PlanInferenceResponse* plan,
                    const std::string& workload_text);

}  // namespace modelatlas::web
