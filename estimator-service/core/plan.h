// Fit and speed of a model on a device (docs/FORMULAS.md, "Fit and speed"):
// the fewest cards with tensor parallelism, memory headroom, roofline bounds
// for decode (memory bandwidth) and prefill (peak compute x efficiency),
// time to first token, and cost per million generated tokens.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "estimator-service/core/architecture.h"

namespace modelatlas::estimator {

// A device, as the plan needs it. Absent figures make the figures that need
// them absent, never zero.
struct DeviceSpec {
  std::string name;
  std::string display_name;
  double memory_bytes = 0;
  std::optional<double> bandwidth_bytes_per_second;
  // Peak for the format the weights compute in, FLOP/s; absent = unknown.
  std::optional<double> peak_flops;
  std::optional<double> price_usd_per_hour;
  bool unified_memory = false;
};

// The model and workload, sized by EstimateInferenceMemory.
struct Workload {
  double weight_bytes = 0;
  double kv_cache_bytes = 0;
  double activation_bytes = 0;
  double overhead_bytes = 0;
  double total_parameters = 0;
  // Parameters used per token (MoE: the active experts).
  double active_parameters = 0;
  int num_attention_heads = 0;  // 0 = unknown: tensor parallelism not checked
  int num_key_value_heads = 0;
  int batch_size = 1;
  int64_t prompt_tokens = 0;
  // Fraction of peak compute prefill reaches (0..1].
  double prefill_efficiency = 0.5;
  // Fraction of device memory a serving engine may use (vLLM's default 0.9).
  double memory_utilization = 0.9;
  // Fraction of a unified-memory device's memory the GPU may use (macOS
  // lets the GPU wire about three quarters of system memory).
  double unified_memory_fraction = 0.75;
  int max_cards = 64;
};

struct DevicePlan {
  std::string name;
  std::string display_name;
  // Fits on `cards` cards (cards <= max_cards).
  bool fits = false;
  bool fits_on_one_card = false;
  int cards = 0;
  // Per card: what the model needs, what the card offers, the difference.
  double required_bytes_per_card = 0;
  double usable_bytes_per_card = 0;
  double headroom_bytes_per_card = 0;
  std::optional<double> decode_tokens_per_second;      // per sequence
  std::optional<double> decode_tokens_per_second_all;  // the whole batch
  std::optional<double> prefill_tokens_per_second;
  std::optional<double> time_to_first_token_seconds;
  std::optional<double> cost_usd_per_million_tokens;
  // Why it does not fit, or what limits it.
  std::string reason;
  // The arithmetic behind each figure.
  std::vector<std::string> arithmetic;
};

DevicePlan PlanOnDevice(const Workload& workload, const DeviceSpec& device);

enum class PlanObjective { kFewestCards, kCheapest, kFastest };

// Orders plans: fitting ones first, then by the objective (ties: fewer
// cards, then faster, then name).
void RankPlans(PlanObjective objective, std::vector<DevicePlan>* plans);

}  // namespace modelatlas::estimator
