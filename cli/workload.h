// The workload flags (--weights, --kv_cache, --context, --batch,
// --group_size, --overhead_bytes, --prompt, --images) as the estimator's
// InferenceWorkload, shared by `estimate memory`, `plan`, `runnable` and
// `card`. Unset flags stay unset: the estimator resolves the defaults and
// echoes them.
#pragma once

#include "absl/status/status.h"
#include "modelatlas/estimator/v1/estimator_service.pb.h"

namespace modelatlas::cli {

// Fills `workload` from the flags; InvalidArgument naming the flag and the
// accepted values on a bad flag.
absl::Status FillWorkload(estimator::v1::InferenceWorkload* workload);

}  // namespace modelatlas::cli
