#include "estimator-service/core/workload.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status/errors.h"
#include "common/text/text_memo.h"

namespace modelatlas::estimator {
namespace {

// Largest figures accepted; anything above is a typo, not a workload.
constexpr int64_t kMaxContextTokens = 100'000'000;
constexpr int kMaxBatch = 1'000'000;
constexpr int kMaxPrefillChunkTokens = 1'000'000;
constexpr int64_t kMaxPromptTokens = 100'000'000;
constexpr int64_t kMaxOverheadBytes = int64_t{1} << 40;
constexpr int kMaxImagesPerSequence = 1'000;

std::string Bytes(int64_t bytes) {
  if (bytes % (int64_t{1} << 30) == 0) return absl::StrCat(bytes >> 30, " GiB");
  if (bytes % (int64_t{1} << 20) == 0) return absl::StrCat(bytes >> 20, " MiB");
  return absl::StrCat(bytes, " bytes");
}

// Each bound of a workload, once: ResolveWorkload names the fields that
// fail them, WorkloadInBounds only asks whether any does.
bool InRange(int64_t value, int64_t max) { return value >= 0 && value <= max; }
// In [0, 1]; NaN is not.
bool IsFraction(double value) { return value >= 0 && value <= 1; }
bool KvCacheFormatValid(const std::optional<NumberFormat>& format) {
  return !format.has_value() || IsPlainFormat(*format);
}
// 0 (the default) or a group size GPTQ/AWQ can have.
bool GroupSizeValid(int group_size) {
  return group_size == 0 || EncodingOf(NumberFormat::kGptqInt4, group_size).ok();
}
bool OverheadValid(const std::optional<int64_t>& overhead_bytes) {
  return !overhead_bytes.has_value() || InRange(*overhead_bytes, kMaxOverheadBytes);
}
bool ImagesValid(const std::optional<int>& images) {
  return !images.has_value() || InRange(*images, kMaxImagesPerSequence);
}

}  // namespace

absl::StatusOr<ResolvedWorkload> ResolveWorkload(const WorkloadRequest& request) {
  FieldViolations violations;
  if (!InRange(request.context_length_tokens, kMaxContextTokens)) {
    violations.Add("context_length_tokens",
                   absl::StrCat("must be between 0 and ", kMaxContextTokens, " tokens, got ",
                                request.context_length_tokens));
  }
  if (!InRange(request.batch_size, kMaxBatch)) {
    violations.Add("batch_size", absl::StrCat("must be between 0 and ", kMaxBatch,
                                              " sequences, got ", request.batch_size));
  }
  if (!InRange(request.prefill_chunk_tokens, kMaxPrefillChunkTokens)) {
    violations.Add("prefill_chunk_tokens",
                   absl::StrCat("must be between 0 and ", kMaxPrefillChunkTokens, ", got ",
                                request.prefill_chunk_tokens));
  }
  if (!InRange(request.prompt_tokens, kMaxPromptTokens)) {
    violations.Add("prompt_tokens", absl::StrCat("must be between 0 and ", kMaxPromptTokens,
                                                 ", got ", request.prompt_tokens));
  }
  if (!KvCacheFormatValid(request.kv_cache_format)) {
    violations.Add("kv_cache_format",
                   absl::StrCat("must be a plain format (fp32, fp16, bf16, fp8, int8, int4), got ",
                                NumberFormatName(*request.kv_cache_format)));
  }
  if (!GroupSizeValid(request.quantization_group_size)) {
    violations.Add("quantization_group_size",
                   absl::StrCat("must be a power of two from 1 to 4096, or 0 for 128; got ",
                                request.quantization_group_size));
  }
  if (!OverheadValid(request.overhead_bytes)) {
    violations.Add("overhead_bytes",
                   absl::StrCat("must be between 0 and 2^40 bytes, got ", *request.overhead_bytes));
  }
  if (!ImagesValid(request.images_per_sequence)) {
    violations.Add("images_per_sequence",
                   absl::StrCat("must be between 0 and ", kMaxImagesPerSequence, " images, got ",
                                *request.images_per_sequence));
  }
  for (const auto& [field, value] :
       {std::pair<const char*, double>{"memory_utilization", request.memory_utilization},
        {"prefill_efficiency", request.prefill_efficiency}}) {
    if (!IsFraction(value)) {
      violations.Add(
          field, absl::StrCat("must be a fraction in (0, 1], or 0 for the default; got ", value));
    }
  }
  if (absl::Status invalid = violations.ToStatus(); !invalid.ok()) return invalid;
  return WorkloadWithDefaults(request);
}

bool WorkloadInBounds(const WorkloadRequest& request) {
  // ResolveWorkload's checks, the same predicates, in its order.
  return InRange(request.context_length_tokens, kMaxContextTokens) &&
         InRange(request.batch_size, kMaxBatch) &&
         InRange(request.prefill_chunk_tokens, kMaxPrefillChunkTokens) &&
         InRange(request.prompt_tokens, kMaxPromptTokens) &&
         KvCacheFormatValid(request.kv_cache_format) &&
         GroupSizeValid(request.quantization_group_size) && OverheadValid(request.overhead_bytes) &&
         ImagesValid(request.images_per_sequence) && IsFraction(request.memory_utilization) &&
         IsFraction(request.prefill_efficiency);
}

ResolvedWorkload WorkloadWithDefaults(const WorkloadRequest& request) {
  ResolvedWorkload w;
  if (request.context_length_tokens > 0) {
    w.context_length_tokens = request.context_length_tokens;
    w.context_defaulted = false;
  }
  if (request.batch_size > 0) w.batch_size = request.batch_size;
  if (request.prefill_chunk_tokens > 0) w.prefill_chunk_tokens = request.prefill_chunk_tokens;
  if (request.prompt_tokens > 0) w.prompt_tokens = request.prompt_tokens;
  if (request.weight_format.has_value()) {
    w.weight_format = *request.weight_format;
    w.weight_format_defaulted = false;
  }
  if (request.kv_cache_format.has_value()) w.kv_cache_format = *request.kv_cache_format;
  if (request.quantization_group_size > 0) {
    w.quantization_group_size = request.quantization_group_size;
  }
  if (request.overhead_bytes.has_value()) w.overhead_bytes = *request.overhead_bytes;
  if (request.memory_utilization > 0) w.memory_utilization = request.memory_utilization;
  if (request.prefill_efficiency > 0) w.prefill_efficiency = request.prefill_efficiency;
  if (request.images_per_sequence.has_value()) {
    w.images_per_sequence = *request.images_per_sequence;
    w.images_per_sequence_defaulted = false;
  }
  return w;
}

ResolvedWorkload WorkloadForModel(const ResolvedWorkload& workload, int64_t max_context_tokens,
                                  const CheckpointWeights& checkpoint) {
  const bool cap = workload.context_defaulted && max_context_tokens > 0 &&
                   max_context_tokens < workload.context_length_tokens;
  const bool from_checkpoint = workload.weight_format_defaulted && checkpoint.format.has_value() &&
                               *checkpoint.format != workload.weight_format;
  const bool not_sized = workload.weight_format_defaulted && !checkpoint.format.has_value() &&
                         checkpoint.quantized_not_sized;
  const int64_t model_max = std::max<int64_t>(max_context_tokens, 0);
  if (!cap && !from_checkpoint && !not_sized && model_max == workload.model_max_context_tokens) {
    return workload;
  }
  ResolvedWorkload fitted = workload;
  fitted.model_max_context_tokens = model_max;
  if (cap) {
    fitted.context_length_tokens = max_context_tokens;
    fitted.context_capped = true;
  }
  if (from_checkpoint) {
    fitted.weight_format = *checkpoint.format;
    fitted.weight_format_from_checkpoint = true;
    // The groups are the checkpoint's too: its format's scales are laid out
    // over them (an AWQ file with groups of 64 has twice the scales of 128).
    if (checkpoint.group_size > 0) fitted.quantization_group_size = checkpoint.group_size;
  }
  fitted.checkpoint_quantization_not_sized = not_sized;
  return fitted;
}

ResolvedWorkload WorkloadForModel(const ResolvedWorkload& workload,
                                  const std::optional<Architecture>& architecture) {
  if (!architecture.has_value()) return WorkloadForModel(workload, 0);
  ResolvedWorkload fitted =
      WorkloadForModel(workload, architecture->max_context_length,
                       {.format = architecture->checkpoint_weight_format,
                        .group_size = architecture->checkpoint_quantization_group_size,
                        .quantized_not_sized = architecture->checkpoint_quantization_not_sized});
  fitted.model_has_cross_attention = architecture->num_cross_attention_layers > 0;
  return fitted;
}

namespace {

// The context and what the request left to the defaults (or the model).
void AppendContext(const ResolvedWorkload& w, std::string* text) {
  absl::StrAppend(text, "context ", w.context_length_tokens, " tokens");
  if (w.context_capped) {
    absl::StrAppend(text, " (the model's maximum; the default is ",
                    ResolvedWorkload::kDefaultContextTokens, ")");
  } else if (w.context_defaulted && w.model_max_context_tokens > 0) {
    absl::StrAppend(text, " (the default; the model's maximum is ", w.model_max_context_tokens,
                    ")");
  } else if (w.context_defaulted) {
    absl::StrAppend(text, " (the default)");
  }
}

// The weights' format, and where it came from when the request named none.
void AppendWeights(const ResolvedWorkload& w, std::string* text) {
  if (w.weights_from_file) {
    // A file's tensors are what they are: no format sizes them.
    absl::StrAppend(text, "weights as stored in the file (their exact bytes)");
    return;
  }
  absl::StrAppend(text, "weights ", NumberFormatName(w.weight_format));
  if (w.weight_format_from_checkpoint) {
    absl::StrAppend(text, " (the published checkpoint's format; the default is ",
                    NumberFormatName(ResolvedWorkload::kDefaultFormat), ")");
  } else if (w.checkpoint_quantization_not_sized) {
    absl::StrAppend(text,
                    " (the default: the published checkpoint is quantized in a way not sized "
                    "here, so its weights are likely smaller; name a weight format to size them)");
  } else if (w.weight_format_defaulted) {
    absl::StrAppend(text, " (the default)");
  }
  if (w.weight_format == NumberFormat::kGptqInt4 || w.weight_format == NumberFormat::kAwqInt4 ||
      w.weight_format == NumberFormat::kGptqInt8) {
    absl::StrAppend(text, " (groups of ", w.quantization_group_size, ")");
  }
}

// The images a cross-attention cache holds, when the model has one or the
// request named them.
void AppendImages(const ResolvedWorkload& w, std::string* text) {
  if (!w.model_has_cross_attention && w.images_per_sequence_defaulted) return;
  absl::StrAppend(text, ", ", w.images_per_sequence,
                  w.images_per_sequence == 1 ? " image" : " images", " per sequence");
  if (!w.model_has_cross_attention) {
    absl::StrAppend(text, " (not used: no cross-attention layers on record)");
  } else if (w.images_per_sequence_defaulted) {
    absl::StrAppend(text, " (the default)");
  }
}

std::string ComposeWorkloadStatement(const ResolvedWorkload& w) {
  std::string text;
  AppendContext(w, &text);
  AppendImages(w, &text);
  absl::StrAppend(&text, ", batch ", w.batch_size, ", ");
  AppendWeights(w, &text);
  absl::StrAppend(&text, ", KV cache ", NumberFormatName(w.kv_cache_format), ", overhead ",
                  Bytes(w.overhead_bytes), ", prefill chunk ", w.prefill_chunk_tokens,
                  " tokens, prompt ", w.prompt_tokens, " tokens, memory utilization ",
                  absl::StrFormat("%g", w.memory_utilization), ", prefill efficiency ",
                  absl::StrFormat("%g", w.prefill_efficiency));
  return text;
}

// Two 32-bit figures as one key word.
uint64_t Pair(int64_t high, int64_t low) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(high)) << 32) | static_cast<uint32_t>(low);
}

// Every answer states its workload, and users ask with a few workloads over
// and over (all defaults; a few contexts and weight formats): statements
// are remembered per thread by every figure they show. It was the last
// statement alone, which an estimate of many different requests missed
// nearly every time (composing one is ~3,400 instructions: absl's StrCat
// and two StrFormat("%g"); docs/BENCHMARKS.md, session 16).
const std::string& RememberedStatement(const ResolvedWorkload& w) {
  thread_local TextMemo<std::tuple_size_v<WorkloadKey>> memo;
  const WorkloadKey key = WorkloadKeyOf(w);
  if (const std::string* known = memo.Find(key)) return *known;
  return memo.Remember(key, ComposeWorkloadStatement(w));
}

}  // namespace

std::string WorkloadStatement(const ResolvedWorkload& w) { return RememberedStatement(w); }

WorkloadKey WorkloadKeyOf(const ResolvedWorkload& w) {
  return {static_cast<uint64_t>(w.context_length_tokens),
          Pair(w.batch_size, w.prefill_chunk_tokens),
          static_cast<uint64_t>(w.prompt_tokens),
          Pair(static_cast<int>(w.weight_format), static_cast<int>(w.kv_cache_format)),
          Pair(w.quantization_group_size,
               (w.context_capped ? 1 : 0) | (w.weight_format_from_checkpoint ? 2 : 0) |
                   (w.checkpoint_quantization_not_sized ? 4 : 0) | (w.context_defaulted ? 8 : 0) |
                   (w.weight_format_defaulted ? 16 : 0) | (w.weights_from_file ? 32 : 0) |
                   (w.images_per_sequence_defaulted ? 64 : 0) |
                   (w.model_has_cross_attention ? 128 : 0) | (w.images_per_sequence << 8)),
          static_cast<uint64_t>(w.overhead_bytes),
          std::bit_cast<uint64_t>(w.memory_utilization),
          std::bit_cast<uint64_t>(w.prefill_efficiency),
          static_cast<uint64_t>(w.model_max_context_tokens)};
}

void WorkloadStatementInto(const ResolvedWorkload& w, std::string* out) {
  out->assign(RememberedStatement(w));
}

const std::string& WorkloadStatementInPlace(const ResolvedWorkload& w) {
  return RememberedStatement(w);
}

}  // namespace modelatlas::estimator
