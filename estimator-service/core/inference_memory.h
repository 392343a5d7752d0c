// Memory to run a model: weights + KV cache + runtime overhead, each part
// with the arithmetic that produced it (docs/FORMULAS.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "estimator-service/core/architecture.h"
#include "estimator-service/core/number_format.h"

namespace modelatlas::estimator {

// One line of an estimate.
struct EstimateLine {
  std::string component;
  // Bytes, rounded up to a whole byte.
  int64_t bytes = 0;
  std::string arithmetic;
};

struct InferenceMemoryInput {
  // Parameters of the model.
  double parameters = 0;
  // Shape, when known; without it the KV cache cannot be sized.
  std::optional<Architecture> architecture;
  NumberFormat weight_format = NumberFormat::kBf16;
  NumberFormat kv_cache_format = NumberFormat::kBf16;
  // Tokens in the cache per sequence; 0 = the architecture's maximum context.
  int64_t context_length_tokens = 0;
  // Sequences held at once.
  int batch_size = 1;
  // CUDA context, allocator and framework reserve, bytes.
  int64_t overhead_bytes = kDefaultOverheadBytes;
  // GPTQ/AWQ weights per quantization group; 0 = 128.
  int quantization_group_size = 0;
  // Tokens per prefill step, for the activation workspace; 0 = 512.
  int prefill_chunk_tokens = 0;

  static constexpr int64_t kDefaultOverheadBytes = int64_t{1} << 30;  // 1 GiB
};

struct InferenceMemoryEstimate {
  std::vector<EstimateLine> lines;
  int64_t total_bytes = 0;
  std::vector<std::string> warnings;
};

// KV-cache bytes per token of one sequence, with the arithmetic:
//   standard/GQA: 2 (K and V) x layers x kv_heads x head_dim x bytes per element
//   MLA:          layers x (kv_lora_rank + qk_rope_head_dim) x bytes per element
// `arithmetic` may be null when only the number is wanted.
double KvCacheBytesPerToken(const Architecture& arch, NumberFormat format, std::string* arithmetic);

// Layers that use the sliding window (all of them unless said otherwise).
int SlidingLayers(const Architecture& arch);

// The whole KV cache for `context_tokens` per sequence and `batch`
// sequences, bytes; sliding-window layers hold at most the window.
double KvCacheBytes(const Architecture& arch, NumberFormat format, int64_t context_tokens,
                    int batch);

// Activation workspace of one prefill step, bytes, with the arithmetic:
//   chunk x (2h + (a + 2g) x d + MLP inner width x (2 if gated else 1)) x 2 bytes
//   + batch x vocab x 4 bytes of fp32 logits for the last token of each sequence.
// An allowance for the largest live tensors, not a measurement. `arithmetic`
// may be null.
double PrefillWorkspaceBytes(const Architecture& arch, int chunk_tokens, int batch,
                             std::string* arithmetic);

// INVALID_ARGUMENT (naming the field) for negative, non-finite or absurd input.
absl::StatusOr<InferenceMemoryEstimate> EstimateInferenceMemory(const InferenceMemoryInput& input);

}  // namespace modelatlas::estimator
