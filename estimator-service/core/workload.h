// What is being run: the inference workload shared by the memory estimate,
// the plan and the runnable-models list, and the one place its defaults are
// resolved (docs/FORMULAS.md, "Workload"). Plain C++: no gRPC, no protobuf.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "estimator-service/core/architecture.h"
#include "estimator-service/core/number_format.h"

namespace modelatlas::estimator {

// A workload as asked: zeros (and nullopt) are unset.
struct WorkloadRequest {
  int64_t context_length_tokens = 0;  // tokens per sequence
  int batch_size = 0;                 // sequences
  int prefill_chunk_tokens = 0;       // tokens per prefill step
  int64_t prompt_tokens = 0;          // tokens, for the time to first token
  std::optional<NumberFormat> weight_format;
  std::optional<NumberFormat> kv_cache_format;
  int quantization_group_size = 0;        // weights per GPTQ/AWQ group
  std::optional<int64_t> overhead_bytes;  // bytes per card
  double memory_utilization = 0;          // fraction of device memory
  double prefill_efficiency = 0;          // fraction of peak compute
  // Images per sequence in a cross-attention cache, images; nullopt = 1.
  std::optional<int> images_per_sequence;
};

// A workload with every default applied. Default-constructed, it is the
// workload of an empty request for a model whose maximum context is at
// least kDefaultContextTokens.
struct ResolvedWorkload {
  static constexpr int64_t kDefaultContextTokens = 4096;
  static constexpr int kDefaultBatchSize = 1;
  static constexpr int kDefaultPrefillChunkTokens = 512;
  static constexpr int64_t kDefaultPromptTokens = 1000;
  static constexpr NumberFormat kDefaultFormat = NumberFormat::kBf16;
  static constexpr int kDefaultQuantizationGroupSize = 128;
  static constexpr int64_t kDefaultOverheadBytes = int64_t{1} << 30;  // 1 GiB
  static constexpr double kDefaultMemoryUtilization = 0.9;            // vLLM's default
  static constexpr double kDefaultPrefillEfficiency = 0.5;
  static constexpr int kDefaultImagesPerSequence = 1;
  // Fraction of a unified-memory device's memory the GPU may use (macOS
  // lets the GPU wire about three quarters of system memory); not settable.
  static constexpr double kUnifiedMemoryFraction = 0.75;

  int64_t context_length_tokens = kDefaultContextTokens;
  int batch_size = kDefaultBatchSize;
  int prefill_chunk_tokens = kDefaultPrefillChunkTokens;
  int64_t prompt_tokens = kDefaultPromptTokens;
  NumberFormat weight_format = kDefaultFormat;
  NumberFormat kv_cache_format = kDefaultFormat;
  int quantization_group_size = kDefaultQuantizationGroupSize;
  int64_t overhead_bytes = kDefaultOverheadBytes;
  double memory_utilization = kDefaultMemoryUtilization;
  double prefill_efficiency = kDefaultPrefillEfficiency;
  // Images each sequence's cross-attention cache holds (Llama 3.2 Vision);
  // other models do not use it.
  int images_per_sequence = kDefaultImagesPerSequence;

  // The context was not given (so it may be capped per model).
  bool context_defaulted = true;
  // The default context was capped at the model's maximum.
  bool context_capped = false;
  // The weight format was not given (so a model's quantized checkpoint
  // format may replace the default, WorkloadForModel).
  bool weight_format_defaulted = true;
  // The weight format is the model's published checkpoint's, not the
  // default.
  bool weight_format_from_checkpoint = false;
  // The weight format is the default although the model's published
  // checkpoint is quantized in a way no format here sizes.
  bool checkpoint_quantization_not_sized = false;
  // The model's maximum context as its record gives it (tokens); 0: not on
  // record (WorkloadForModel). The statement names it beside a defaulted
  // context, so that "4096 tokens" is not read as what the model allows.
  int64_t model_max_context_tokens = 0;
  // The weights are sized from a file's own tensors (a GGUF or safetensors
  // source, their exact bytes): the weight format sizes none of them.
  bool weights_from_file = false;
  // images_per_sequence was not given.
  bool images_per_sequence_defaulted = true;
  // The model has cross-attention layers, so images_per_sequence sizes its
  // cache (WorkloadForModel): the answer states the images it assumed.
  bool model_has_cross_attention = false;

  bool operator==(const ResolvedWorkload&) const = default;
};

// The one resolution of a workload's defaults: every unset field gets its
// default (context 4096 tokens, batch 1, prefill chunk 512 tokens, prompt
// 1000 tokens, bf16 weights and KV cache, GPTQ/AWQ groups of 128, 1 GiB
// overhead, memory utilization 0.9, prefill efficiency 0.5, 1 image per
// sequence).
// INVALID_ARGUMENT naming every out-of-range field.
absl::StatusOr<ResolvedWorkload> ResolveWorkload(const WorkloadRequest& request);

// Whether ResolveWorkload(request) is OK, without building its error: a
// test of the same bounds, for the computed memory answer's path, which
// resolves nearly every request with WorkloadWithDefaults and leaves the
// rest to ResolveWorkload to name their violations (~360 instructions a
// call were the violations' bookkeeping; docs/BENCHMARKS.md, session 18).
bool WorkloadInBounds(const WorkloadRequest& request);
// ResolveWorkload's answer for a request in bounds (WorkloadInBounds).
ResolvedWorkload WorkloadWithDefaults(const WorkloadRequest& request);

// How a model's published checkpoint stores its weights, as far as its
// record says (Architecture's checkpoint fields).
struct CheckpointWeights {
  std::optional<NumberFormat> format;  // nullopt: not on record, or not sized
  int group_size = 0;                  // weights per scale group; 0: not on record
  bool quantized_not_sized = false;    // quantized in a way no format sizes
};

// `workload` for a model whose maximum context is `max_context_tokens`
// (0 = unknown; kept as model_max_context_tokens) and whose published
// checkpoint stores its weights as
// `checkpoint` says: a defaulted context larger than the maximum is capped
// at it, and a defaulted weight format becomes the checkpoint's, with its
// group size (gpt-oss-120b is published in MXFP4, 61 GiB of weights, not the
// 218 GiB bf16 would take; an AWQ repository in awq-int4). A checkpoint
// quantized in a way no format sizes keeps the default and the workload
// says so. What the caller gave is kept as given.
ResolvedWorkload WorkloadForModel(const ResolvedWorkload& workload, int64_t max_context_tokens,
                                  const CheckpointWeights& checkpoint = {});
// The same for a model with `architecture` (its maximum context and
// checkpoint format; none known without one), marking a model with
// cross-attention layers (model_has_cross_attention).
ResolvedWorkload WorkloadForModel(const ResolvedWorkload& workload,
                                  const std::optional<Architecture>& architecture);

// Whether an answer's workload holds images_per_sequence: for a model with
// cross-attention layers, or when the request named it.
inline bool ImagesPerSequenceStated(const ResolvedWorkload& w) {
  return w.model_has_cross_attention || !w.images_per_sequence_defaulted;
}
// Whether a model with cross-attention layers was sized at the default
// images per sequence (ResolvedWorkload.images_per_sequence_defaulted).
inline bool ImagesPerSequenceDefaultedForModel(const ResolvedWorkload& w) {
  return w.model_has_cross_attention && w.images_per_sequence_defaulted;
}

// One line for people, e.g. "context 4096 tokens (the default; the model's
// maximum is 131072), batch 1, weights bf16 (the default), KV cache bf16,
// overhead 1 GiB": a context or weight format the request did not name says
// so.
std::string WorkloadStatement(const ResolvedWorkload& workload);
// The same statement assigned to `out` (its buffer reused: the memory
// answer's hot path allocates nothing for it once warm).
void WorkloadStatementInto(const ResolvedWorkload& workload, std::string* out);
// The same statement in place, not copied: this thread's remembered copy,
// valid until this thread asks for another statement (the computed memory
// answer writes it straight into its reply).
const std::string& WorkloadStatementInPlace(const ResolvedWorkload& workload);

// Every figure a workload's statement shows or its answer field holds, as the key of
// a per-thread TextMemo (common/text/text_memo.h) of a text made from the
// workload alone: the
// statement here, the encoded workload field in answers/memory_answer.cc.
using WorkloadKey = std::array<uint64_t, 9>;
WorkloadKey WorkloadKeyOf(const ResolvedWorkload& workload);

}  // namespace modelatlas::estimator
