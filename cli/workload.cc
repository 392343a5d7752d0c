#include "cli/workload.h"

#include <cstdint>
#include <optional>
#include <string>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "cli/enum_spellings.h"

// Defined with the inference commands (cli/commands/inference.cc).
ABSL_DECLARE_FLAG(std::string, weights);
ABSL_DECLARE_FLAG(std::string, kv_cache);
ABSL_DECLARE_FLAG(int64_t, context);
ABSL_DECLARE_FLAG(int32_t, batch);
ABSL_DECLARE_FLAG(int32_t, group_size);
ABSL_DECLARE_FLAG(std::optional<int64_t>, overhead_bytes);
ABSL_DECLARE_FLAG(int64_t, prompt);
ABSL_DECLARE_FLAG(std::optional<int32_t>, images);

namespace modelatlas::cli {

absl::Status FillWorkload(estimator::v1::InferenceWorkload* workload) {
  // No --weights: the service picks the model's published format and says so.
  if (const std::string asked = absl::GetFlag(FLAGS_weights); !asked.empty()) {
    const auto weights = NumberFormats().ParseFlag("weights", asked);
    if (!weights.ok()) return weights.status();
    workload->set_weight_format(*weights);
  }
  const auto kv_cache = NumberFormats().ParseFlag("kv_cache", absl::GetFlag(FLAGS_kv_cache));
  if (!kv_cache.ok()) return kv_cache.status();
  workload->set_kv_cache_format(*kv_cache);
  workload->set_context_length_tokens(absl::GetFlag(FLAGS_context));
  workload->set_batch_size(absl::GetFlag(FLAGS_batch));
  workload->set_quantization_group_size(absl::GetFlag(FLAGS_group_size));
  if (auto overhead = absl::GetFlag(FLAGS_overhead_bytes)) workload->set_overhead_bytes(*overhead);
  workload->set_prompt_tokens(absl::GetFlag(FLAGS_prompt));
  if (auto images = absl::GetFlag(FLAGS_images)) workload->set_images_per_sequence(*images);
  return absl::OkStatus();
}

}  // namespace modelatlas::cli
