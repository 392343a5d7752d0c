// The one table of bounds on record figures, shared by the catalog's
// validation (a write beyond a bound is INVALID_ARGUMENT naming the field and
// the bound) and the estimator (a request or a stored record beyond one is
// refused before any arithmetic). Plain C++: no protobuf, no gRPC, so the
// estimator's core formulas can include it.
//
// Each bound is far beyond any real model or device (the largest figures in
// the shipped dataset and Epoch AI's files are 1e3 to 1e5 times smaller; see
// docs/RELIABILITY.md), and small enough that products of bounded figures
// stay exact in double and within int64 where the estimator keeps bytes.
// Units are in the names: bytes, bytes per second, FLOP per second; 1 GB =
// 1e9 bytes, 1 PB = 1e15 bytes, 1 EB = 1e18 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace modelatlas::records {

// Parameters of one model (1e15: 1,000 T; the largest on record is 1.74e14).
inline constexpr double kMaxParameters = 1e15;

// Hardware figures beyond any real device (the largest wafer-scale systems
// are 1e3 to 1e4 times smaller).
inline constexpr double kMaxDeviceMemoryBytes = 1e16;              // 10 PB
inline constexpr double kMaxDeviceBandwidthBytesPerSecond = 1e18;  // 1 EB/s
inline constexpr double kMaxDeviceFlops = 1e20;                    // FLOP/s (or OP/s)

// A published parameter count is kept exactly: at most 2^53.
inline constexpr double kMaxPublishedParameterCount = 9007199254740992.0;  // 2^53

// Which record a bound is about.
enum class RecordKind { kModel, kHardware };

struct Bound {
  RecordKind record;
  // The field's path in the record, as validation names it
  // ("architecture.num_layers"); a path ending in ".*" covers every field of
  // that message ("peak.*": every peak figure).
  std::string_view path;
  // The largest value accepted (the smallest is 0 for every bounded field).
  double max;
  // What the figure counts, for messages ("bytes", "FLOP/s", "layers").
  const char* unit;
};

// The bounds, in one place. The architecture's limits keep products of them
// (layers x hidden x hidden, experts x intermediate x hidden) exact in
// int64 and double.
inline constexpr Bound kBounds[] = {
    {RecordKind::kModel, "parameters", kMaxParameters, "parameters"},
    {RecordKind::kModel, "active_parameters", kMaxParameters, "parameters"},
    {RecordKind::kModel, "architecture.num_layers", 100'000, "layers"},
    {RecordKind::kModel, "architecture.hidden_size", 10'000'000, "dimensions"},
    {RecordKind::kModel, "architecture.num_attention_heads", 100'000, "heads"},
    {RecordKind::kModel, "architecture.num_key_value_heads", 100'000, "heads"},
    {RecordKind::kModel, "architecture.head_dim", 1'000'000, "dimensions"},
    {RecordKind::kModel, "architecture.global_head_dim", 1'000'000, "dimensions"},
    {RecordKind::kModel, "architecture.num_global_key_value_heads", 100'000, "heads"},
    {RecordKind::kModel, "architecture.num_global_attention_heads", 100'000, "heads"},
    {RecordKind::kModel, "architecture.per_layer_input_size", 1'000'000, "dimensions"},
    {RecordKind::kModel, "architecture.per_layer_input_vocab_size", 100'000'000, "tokens"},
    {RecordKind::kModel, "architecture.num_kv_shared_layers", 100'000, "layers"},
    {RecordKind::kModel, "architecture.intermediate_size", 100'000'000, "dimensions"},
    {RecordKind::kModel, "architecture.layer_intermediate_sizes", 100'000'000, "dimensions"},
    {RecordKind::kModel, "architecture.vocab_size", 100'000'000, "tokens"},
    {RecordKind::kModel, "architecture.max_context_length", 1'000'000'000, "tokens"},
    {RecordKind::kModel, "architecture.sliding_window", 1'000'000'000, "tokens"},
    {RecordKind::kModel, "architecture.num_sliding_window_layers", 100'000, "layers"},
    {RecordKind::kModel, "architecture.num_experts", 100'000, "experts"},
    {RecordKind::kModel, "architecture.num_experts_per_token", 100'000, "experts"},
    {RecordKind::kModel, "architecture.num_shared_experts", 100'000, "experts"},
    {RecordKind::kModel, "architecture.moe_intermediate_size", 100'000'000, "dimensions"},
    {RecordKind::kModel, "architecture.num_dense_layers", 100'000, "layers"},
    {RecordKind::kModel, "architecture.q_lora_rank", 10'000'000, "dimensions"},
    {RecordKind::kModel, "architecture.kv_lora_rank", 10'000'000, "dimensions"},
    {RecordKind::kModel, "architecture.qk_rope_head_dim", 1'000'000, "dimensions"},
    {RecordKind::kModel, "architecture.qk_nope_head_dim", 1'000'000, "dimensions"},
    {RecordKind::kModel, "architecture.v_head_dim", 1'000'000, "dimensions"},
    {RecordKind::kModel, "architecture.norms_per_layer", 1'000, "norms"},
    {RecordKind::kModel, "architecture.type_vocab_size", 100'000'000, "tokens"},
    {RecordKind::kModel, "architecture.shared_expert_intermediate_size", 100'000'000, "dimensions"},
    {RecordKind::kModel, "architecture.num_mtp_layers", 1'000, "layers"},
    {RecordKind::kModel, "architecture.num_decoder_layers", 100'000, "layers"},
    {RecordKind::kModel, "architecture.relative_attention_buckets", 1'000'000, "buckets"},
    {RecordKind::kModel, "architecture.num_recurrent_layers", 100'000, "layers"},
    {RecordKind::kModel, "architecture.num_attention_layers", 100'000, "layers"},
    {RecordKind::kModel, "architecture.num_mlp_layers", 100'000, "layers"},
    {RecordKind::kModel, "architecture.ssm_inner_size", 100'000'000, "dimensions"},
    {RecordKind::kModel, "architecture.ssm_state_size", 1'000'000, "dimensions"},
    {RecordKind::kModel, "architecture.ssm_num_heads", 100'000, "heads"},
    {RecordKind::kModel, "architecture.ssm_num_groups", 100'000, "groups"},
    {RecordKind::kModel, "architecture.ssm_conv_kernel", 1'000, "tokens"},
    {RecordKind::kModel, "architecture.ssm_dt_rank", 1'000'000, "dimensions"},
    {RecordKind::kModel, "architecture.learned_position_offset", 1'000, "positions"},
    {RecordKind::kModel, "architecture.index_n_heads", 1'000'000, "heads"},
    {RecordKind::kModel, "architecture.index_head_dim", 1'000'000, "dimensions"},
    {RecordKind::kModel, "architecture.num_cross_attention_layers", 100'000, "layers"},
    {RecordKind::kModel, "architecture.cross_attention_positions", 1'000'000, "positions"},
    {RecordKind::kModel, "architecture.extra_embedding_rows", 1'000, "rows"},
    {RecordKind::kModel, "architecture.published_parameter_count", kMaxPublishedParameterCount,
     "parameters"},
    {RecordKind::kHardware, "memory_bytes", kMaxDeviceMemoryBytes, "bytes"},
    {RecordKind::kHardware, "allocatable_memory_bytes", kMaxDeviceMemoryBytes, "bytes"},
    {RecordKind::kHardware, "memory_bandwidth_bytes_per_second", kMaxDeviceBandwidthBytesPerSecond,
     "bytes/s"},
    {RecordKind::kHardware, "peak.*", kMaxDeviceFlops, "FLOP/s"},
};

// The bound on `path` of a `record`, or nullptr when the field has none
// beyond being finite and non-negative.
constexpr const Bound* FindBound(RecordKind record, std::string_view path) {
  for (const Bound& bound : kBounds) {
    if (bound.record != record) continue;
    if (bound.path == path) return &bound;
    if (bound.path.size() >= 2 && bound.path.substr(bound.path.size() - 2) == ".*") {
      const std::string_view message = bound.path.substr(0, bound.path.size() - 1);  // "peak."
      if (path.size() > message.size() && path.substr(0, message.size()) == message &&
          path.find('.', message.size()) == std::string_view::npos) {
        return &bound;
      }
    }
  }
  return nullptr;
}

// The bound FindBound must find, for callers that name a field of the table
// (a missing entry fails to compile where used in a constant expression).
constexpr double MaxOf(RecordKind record, std::string_view path) {
  const Bound* bound = FindBound(record, path);
  return bound == nullptr ? -1 : bound->max;
}

static_assert(MaxOf(RecordKind::kHardware, "peak.fp8_flops") == kMaxDeviceFlops);
static_assert(MaxOf(RecordKind::kHardware, "peak") == -1);
static_assert(MaxOf(RecordKind::kModel, "architecture.num_layers") == 100'000);
static_assert(kMaxParameters * 1e3 < 9.2e18, "a bounded count times 1,000 stays in int64");

// The values Architecture.checkpoint_weight_format may take: the formats the
// estimator sizes a whole checkpoint in, in its names
// (estimator-service/core/number_format.cc;
// NumberFormatTest.EveryCheckpointFormatTheCatalogAcceptsIsOneTheEstimatorSizes
// keeps the two in step). The grouped ones (kGroupedCheckpointWeightFormats)
// take their group size from checkpoint_quantization_group_size.
inline constexpr const char* kCheckpointWeightFormats[] = {
    "bf16",      "fp16",      "fp32",     "fp8",  "fp8-block128", "mxfp4", "nvfp4",
    "gptq-int4", "gptq-int8", "awq-int4", "int4", "int8",         "nf4",   "nf4-double-quant"};
inline constexpr const char* kGroupedCheckpointWeightFormats[] = {"gptq-int4", "gptq-int8",
                                                                  "awq-int4", "int4"};
// The values Architecture.recurrent_mixer may take (empty: none): the
// recurrent mixers the estimator counts (docs/FORMULAS.md, "State-space and
// linear-attention layers"), in its names. The catalog refuses a record
// naming another; estimator-service/answers/conversions.cc maps each to its
// formulas (EnumCoverageTest.EveryRecurrentMixerTheCatalogAcceptsHasFormulas
// keeps the two in step).
inline constexpr const char* kRecurrentMixers[] = {"mamba", "mamba2", "gated_deltanet",
                                                   "short_conv", "kda"};
inline bool IsRecurrentMixer(std::string_view name) {
  for (std::string_view known : kRecurrentMixers) {
    if (name == known) return true;
  }
  return false;
}

// Architecture.checkpoint_quantization_not_sized: at most this many
// characters, printable ASCII (it is shown on pages and in answers).
inline constexpr size_t kMaxCheckpointNotSizedChars = 120;

// Whether `name` is one of them (exactly: no other case or spacing).
inline bool IsCheckpointWeightFormat(std::string_view name) {
  for (std::string_view known : kCheckpointWeightFormats) {
    if (name == known) return true;
  }
  return false;
}
inline bool IsGroupedCheckpointWeightFormat(std::string_view name) {
  for (std::string_view known : kGroupedCheckpointWeightFormats) {
    if (name == known) return true;
  }
  return false;
}
// A GPTQ/AWQ/int4 group size the estimator sizes: a power of two, 1-4096
// (estimator-service/core/number_format.cc, EncodingOf).
inline bool IsQuantizationGroupSize(int64_t weights) {
  return weights >= 1 && weights <= 4096 && (weights & (weights - 1)) == 0;
}

// What is wrong with Architecture.checkpoint_quantization_group_size beside
// checkpoint_weight_format `format`, as the field's description, or empty: a
// group size goes with a grouped format only and is one the estimator sizes.
// The catalog's validation and the estimator's shape check both say it.
inline std::string CheckpointGroupSizeProblem(std::string_view format, int64_t group) {
  if (group == 0) return {};
  const std::string is = "is " + std::to_string(group) + "; ";
  if (!IsGroupedCheckpointWeightFormat(format)) {
    std::string text = is + "only a checkpoint_weight_format of ";
    for (std::string_view grouped : kGroupedCheckpointWeightFormats) {
      if (grouped != kGroupedCheckpointWeightFormats[0]) text += ", ";
      text += grouped;
    }
    return text + " has groups";
  }
  if (!IsQuantizationGroupSize(group)) return is + "must be a power of two from 1 to 4096";
  return {};
}

}  // namespace modelatlas::records
