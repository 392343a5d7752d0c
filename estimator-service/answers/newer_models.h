// "A newer model of the same size" (issue 21, point 6): the open-weight
// catalog models published later, in the same domain, with 0.5 to 1.5 times
// the parameters, that run on the plan's reference card at the same workload
// in no more memory per card, best first. The one selection the CLI's card,
// the plan RPC and the web's model page all show.
#pragma once

#include "absl/status/status.h"
#include "estimator-service/catalog/record_source.h"
#include "estimator-service/catalog/shared_records.h"
#include "estimator-service/core/workload.h"
#include "modelatlas/common/v1/hardware.pb.h"
#include "modelatlas/common/v1/model.pb.h"
#include "modelatlas/estimator/v1/estimator_service.pb.h"

namespace modelatlas::estimator {

// Most models listed.
constexpr int kMaxNewerModels = 10;

// The card the selection is made on: the one with the least usable memory
// that holds the model alone, else the first fitting plan (the plans are
// ranked); null when none fits.
const v1::HardwarePlan* ReferenceCard(const v1::PlanInferenceResponse& plan);

// The AIP-160 filter of the selection: later publication, 0.5-1.5x the
// parameters, the model's first domain. Empty when the model has no
// parameter count or publication date on record.
std::string NewerModelsFilter(const common::v1::Model& model);

// Fills response->newer_models from the models `source` holds, on the
// reference card among `hardware`, at `workload` (the request's, resolved:
// each model caps its own default context as the plan does).
absl::Status AddNewerModels(const RecordSource& source, const common::v1::Model& model,
                            const SharedRecords<common::v1::Hardware>& hardware,
                            const ResolvedWorkload& workload, v1::PlanInferenceResponse* response);

}  // namespace modelatlas::estimator
