// Memory of a model's training states from its parameter count alone, as
// DeepSpeed's estimators take it (deepspeed/runtime/zero/stage_1_and_2.py
// estimate_zero2_model_states_mem_needs, stage3.py
// estimate_zero3_model_states_mem_needs): mixed-precision Adam, no
// activations (without an architecture they cannot be sized).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace modelatlas::estimator {

struct ModelStatesInput {
  double parameters = 0;
  // Parameters of the largest layer; ZeRO-3 gathers one layer whole.
  std::optional<double> largest_layer_parameters;
  int zero_stage = 0;     // 0..3
  int gpus = 1;           // the data-parallel degree ZeRO shards over
  int gpus_per_node = 1;  // host memory is per node
  bool offload_optimizer = false;
  bool offload_parameters = false;  // ZeRO-3 only
};

struct ModelStatesEstimate {
  double device_bytes = 0;
  double host_bytes = 0;
  std::string device_arithmetic;
  std::string host_arithmetic;
};

// INVALID_ARGUMENT naming the field ("largest_layer_parameters",
// "zero_stage", "offload_parameters") when the input cannot be estimated.
absl::StatusOr<ModelStatesEstimate> EstimateModelStates(const ModelStatesInput& input);

}  // namespace modelatlas::estimator
