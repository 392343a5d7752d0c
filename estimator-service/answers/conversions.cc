// Proto <-> core conversions and the record checks every answer shares.
// About 625 lines of one-to-one field mappings, kept together so that a new
// field or format is one place to edit (docs/ARCHITECTURE.md's lists).

#include "estimator-service/answers/conversions.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/records/bounds.h"
#include "common/status/errors.h"
#include "estimator-service/core/encoders.h"
#include "estimator-service/core/parameters.h"
#include "estimator-service/core/units.h"

namespace modelatlas::estimator {

Architecture ToCoreArchitecture(const common::v1::Architecture& arch) {
  Architecture out;
  out.num_layers = arch.num_layers();
  out.hidden_size = arch.hidden_size();
  out.num_attention_heads = arch.num_attention_heads();
  out.num_key_value_heads = arch.num_key_value_heads();
  out.head_dim = arch.head_dim();
  out.intermediate_size = arch.intermediate_size();
  out.gated_mlp = arch.gated_mlp();
  out.vocab_size = arch.vocab_size();
  out.tie_word_embeddings = arch.tie_word_embeddings();
  out.max_context_length = arch.max_context_length();
  if (const std::string& checkpoint = arch.checkpoint_weight_format(); !checkpoint.empty()) {
    NumberFormat format;
    if (records::IsCheckpointWeightFormat(checkpoint) && ParseNumberFormat(checkpoint, &format)) {
      out.checkpoint_weight_format = format;
    } else {
      out.checkpoint_weight_format_unknown = true;  // CheckArchitectureShape names it
    }
  }
  out.checkpoint_quantization_group_size = arch.checkpoint_quantization_group_size();
  out.checkpoint_quantization_not_sized = !arch.checkpoint_quantization_not_sized().empty();
  out.checkpoint_attention_output_16bit = arch.checkpoint_attention_output_16bit();
  out.sliding_window = arch.sliding_window();
  out.num_sliding_window_layers = arch.num_sliding_window_layers();
  out.attention_qkv_bias = arch.attention_qkv_bias();
  out.attention_output_bias = arch.attention_output_bias();
  out.mlp_bias = arch.mlp_bias();
  out.output_head_bias = arch.output_head_bias();
  switch (arch.norm_type()) {
    case common::v1::NORM_TYPE_LAYER_NORM:
      out.layer_norm = true;
      out.norm_parameter_vectors = 2;
      break;
    case common::v1::NORM_TYPE_LAYER_NORM_WITHOUT_BIAS:
      out.layer_norm = true;
      out.norm_parameter_vectors = 1;
      break;
    case common::v1::NORM_TYPE_LAYER_NORM_WITHOUT_PARAMETERS:
      out.layer_norm = true;
      out.norm_parameter_vectors = 0;
      break;
    default:
      out.layer_norm = false;
      out.norm_parameter_vectors = 1;
      break;
  }
  out.qk_norm = arch.qk_norm();
  out.learned_positions = arch.position_embedding() == common::v1::POSITION_EMBEDDING_LEARNED;
  out.learned_position_offset = arch.learned_position_offset();
  out.embedding_norm = arch.embedding_norm();
  out.norms_per_layer = arch.norms_per_layer();
  out.type_vocab_size = arch.type_vocab_size();
  out.pooler = arch.pooler();
  out.num_experts = arch.num_experts();
  out.num_experts_per_token = arch.num_experts_per_token();
  out.num_shared_experts = arch.num_shared_experts();
  out.moe_intermediate_size = arch.moe_intermediate_size();
  out.num_dense_layers = arch.num_dense_layers();
  out.kv_lora_rank = arch.kv_lora_rank();
  out.latent_cache_per_head = arch.latent_attention_cache_per_head();
  out.index_heads = arch.index_n_heads();
  out.index_head_dim = arch.index_head_dim();
  out.num_cross_attention_layers = arch.num_cross_attention_layers();
  out.cross_attention_positions = arch.cross_attention_positions();
  out.extra_embedding_rows = arch.extra_embedding_rows();
  out.qk_rope_head_dim = arch.qk_rope_head_dim();
  out.q_lora_rank = arch.q_lora_rank();
  out.qk_nope_head_dim = arch.qk_nope_head_dim();
  out.v_head_dim = arch.v_head_dim();
  out.shared_expert_intermediate_size = arch.shared_expert_intermediate_size();
  out.shared_expert_gate = arch.shared_expert_gate();
  out.router_bias = arch.router_bias();
  out.num_mtp_layers = arch.num_mtp_layers();
  out.qk_norm_full_width = arch.qk_norm_full_width();
  out.attention_sinks = arch.attention_sinks();
  out.attention_sinks_sliding_only = arch.attention_sinks_sliding_only();
  out.num_decoder_layers = arch.num_decoder_layers();
  out.relative_attention_buckets = arch.relative_attention_buckets();
  out.separate_encoder_embedding = arch.separate_encoder_embedding();
  out.global_head_dim = arch.global_head_dim();
  out.num_global_key_value_heads = arch.num_global_key_value_heads();
  out.num_global_attention_heads = arch.num_global_attention_heads();
  out.attention_head_gate = arch.attention_head_gate();
  out.mtp_own_output_head = arch.mtp_own_output_head();
  out.mtp_dense_mlp = arch.mtp_dense_mlp();
  out.global_values_from_keys = arch.global_values_from_keys();
  out.router_scales = arch.router_scales();
  out.per_layer_input_size = arch.per_layer_input_size();
  out.per_layer_input_vocab_size = arch.per_layer_input_vocab_size();
  out.num_kv_shared_layers = arch.num_kv_shared_layers();
  out.kv_shared_layers_double_mlp = arch.kv_shared_layers_double_mlp();
  out.mtp_shares_embeddings = arch.mtp_shares_embeddings();
  const std::string& mixer = arch.recurrent_mixer();
  out.recurrent_mixer = mixer.empty()               ? RecurrentMixer::kNone
                        : mixer == "mamba"          ? RecurrentMixer::kMamba
                        : mixer == "mamba2"         ? RecurrentMixer::kMamba2
                        : mixer == "gated_deltanet" ? RecurrentMixer::kGatedDeltaNet
                        : mixer == "short_conv"     ? RecurrentMixer::kShortConv
                        : mixer == "kda"            ? RecurrentMixer::kKimiDelta
                                                    : RecurrentMixer::kUnknown;
  out.num_recurrent_layers = arch.num_recurrent_layers();
  out.num_attention_layers = arch.num_attention_layers();
  out.num_mlp_layers = arch.num_mlp_layers();
  out.layer_mlp_widths.assign(arch.layer_intermediate_sizes().begin(),
                              arch.layer_intermediate_sizes().end());
  out.ssm_inner_size = arch.ssm_inner_size();
  out.ssm_state_size = arch.ssm_state_size();
  out.ssm_num_heads = arch.ssm_num_heads();
  out.ssm_num_groups = arch.ssm_num_groups();
  out.ssm_conv_kernel = arch.ssm_conv_kernel();
  out.ssm_dt_rank = arch.ssm_dt_rank();
  out.ssm_conv_bias = arch.ssm_conv_bias();
  out.ssm_proj_bias = arch.ssm_proj_bias();
  out.ssm_gated_norm = arch.ssm_gated_norm();
  out.ssm_state_fp32 = arch.ssm_state_fp32();
  out.attention_output_gate = arch.attention_output_gate();
  // What the record says (the GGUF reader reads it from the tensor names),
  // else the families whose checkpoints (and GGUF files) hold one fused QKV
  // tensor: how a quantized file sizes them (core/weight_files.cc).
  const std::string& type = arch.model_type();
  out.fused_qkv = arch.has_fused_qkv()
                      ? arch.fused_qkv()
                      : type == "phi3" || type == "gpt2" || type == "gpt_neox" ||
                            type == "falcon" || type == "bloom" || type == "gpt_bigcode";
  return out;
}

absl::StatusOr<NumberFormat> ToCoreNumberFormat(v1::NumberFormat format, NumberFormat fallback,
                                                const char* field) {
  switch (format) {
    case v1::NUMBER_FORMAT_UNSPECIFIED:
      return fallback;
    case v1::NUMBER_FORMAT_FP32:
      return NumberFormat::kFp32;
    case v1::NUMBER_FORMAT_FP16:
      return NumberFormat::kFp16;
    case v1::NUMBER_FORMAT_BF16:
      return NumberFormat::kBf16;
    case v1::NUMBER_FORMAT_FP8:
      return NumberFormat::kFp8;
    case v1::NUMBER_FORMAT_INT8:
      return NumberFormat::kInt8;
    case v1::NUMBER_FORMAT_INT4:
      return NumberFormat::kInt4;
    case v1::NUMBER_FORMAT_GPTQ_INT4:
      return NumberFormat::kGptqInt4;
    case v1::NUMBER_FORMAT_AWQ_INT4:
      return NumberFormat::kAwqInt4;
    case v1::NUMBER_FORMAT_GPTQ_INT8:
      return NumberFormat::kGptqInt8;
    case v1::NUMBER_FORMAT_NF4:
      return NumberFormat::kNf4;
    case v1::NUMBER_FORMAT_NF4_DOUBLE_QUANT:
      return NumberFormat::kNf4DoubleQuant;
    case v1::NUMBER_FORMAT_GGUF_Q2_K:
      return NumberFormat::kGgufQ2K;
    case v1::NUMBER_FORMAT_GGUF_Q3_K:
      return NumberFormat::kGgufQ3K;
    case v1::NUMBER_FORMAT_GGUF_Q4_0:
      return NumberFormat::kGgufQ4_0;
    case v1::NUMBER_FORMAT_GGUF_Q4_K:
      return NumberFormat::kGgufQ4K;
    case v1::NUMBER_FORMAT_GGUF_Q5_K:
      return NumberFormat::kGgufQ5K;
    case v1::NUMBER_FORMAT_GGUF_Q6_K:
      return NumberFormat::kGgufQ6K;
    case v1::NUMBER_FORMAT_GGUF_Q8_0:
      return NumberFormat::kGgufQ8_0;
    case v1::NUMBER_FORMAT_GGUF_Q3_K_M:
      return NumberFormat::kGgufQ3KM;
    case v1::NUMBER_FORMAT_GGUF_Q4_K_M:
      return NumberFormat::kGgufQ4KM;
    case v1::NUMBER_FORMAT_GGUF_Q5_K_M:
      return NumberFormat::kGgufQ5KM;
    case v1::NUMBER_FORMAT_GGUF_IQ2_XXS:
      return NumberFormat::kGgufIq2Xxs;
    case v1::NUMBER_FORMAT_GGUF_IQ2_XS:
      return NumberFormat::kGgufIq2Xs;
    case v1::NUMBER_FORMAT_GGUF_IQ3_XXS:
      return NumberFormat::kGgufIq3Xxs;
    case v1::NUMBER_FORMAT_GGUF_IQ4_XS:
      return NumberFormat::kGgufIq4Xs;
    case v1::NUMBER_FORMAT_GGUF_IQ4_NL:
      return NumberFormat::kGgufIq4Nl;
    case v1::NUMBER_FORMAT_MXFP4:
      return NumberFormat::kMxfp4;
    case v1::NUMBER_FORMAT_NVFP4:
      return NumberFormat::kNvfp4;
    case v1::NUMBER_FORMAT_FP8_BLOCK128:
      return NumberFormat::kFp8Block;
    default:
      return InvalidFieldError(field,
                               absl::StrCat("unknown number format ", static_cast<int>(format)));
  }
}

std::optional<bool> WeightsPublished(const common::v1::Model& model) {
  switch (model.accessibility()) {
    case common::v1::ACCESSIBILITY_OPEN_WEIGHTS_UNRESTRICTED:
    case common::v1::ACCESSIBILITY_OPEN_WEIGHTS_RESTRICTED_USE:
    case common::v1::ACCESSIBILITY_OPEN_WEIGHTS_NON_COMMERCIAL:
      return true;
    case common::v1::ACCESSIBILITY_API_ACCESS:
    case common::v1::ACCESSIBILITY_HOSTED_ACCESS_NO_API:
    case common::v1::ACCESSIBILITY_UNRELEASED:
      return false;
    default:
      break;
  }
  if (model.has_open_model_weights()) return model.open_model_weights();
  return std::nullopt;
}

// The parameter count to size weights with: the record's figure, else the
// published count of its architecture, else a count from the architecture.
absl::StatusOr<std::vector<CountedEncoderPart>> CountEncoderParts(
    const common::v1::Architecture& arch, absl::string_view prefix) {
  std::vector<CountedEncoderPart> out;
  FieldViolations violations;
  for (int i = 0; i < arch.encoder_parts_size(); ++i) {
    const common::v1::EncoderPart& p = arch.encoder_parts(i);
    const std::string field = absl::StrCat(prefix, ".encoder_parts[", i, "]");
    // Widths are bounded as the architecture's are (products stay exact).
    const std::pair<const char*, int64_t> figures[] = {
        {"num_layers", p.num_layers()},
        {"hidden_size", p.hidden_size()},
        {"intermediate_size", p.intermediate_size()},
        {"patch_size", p.patch_size()},
        {"image_size", p.image_size()},
        {"num_channels", p.num_channels()},
        {"temporal_patch_size", p.temporal_patch_size()},
        {"spatial_merge_size", p.spatial_merge_size()},
        {"output_size", p.output_size()},
        {"num_mel_bins", p.num_mel_bins()},
        {"max_positions", p.max_positions()},
        {"num_global_layers", p.num_global_layers()},
        {"max_tiles", p.max_tiles()},
        {"aspect_ratio_ids", p.aspect_ratio_ids()},
        {"num_queries", p.num_queries()}};
    bool bad = false;
    for (const auto& [name, value] : figures) {
      if (value < 0 || value > (int64_t{1} << 20)) {
        violations.Add(absl::StrCat(field, ".", name),
                       absl::StrCat("must be between 0 and ", int64_t{1} << 20, ", got ", value));
        bad = true;
      }
    }
    if (p.has_parameters() && (p.parameters() <= 0 || p.parameters() > (int64_t{1} << 50))) {
      violations.Add(absl::StrCat(field, ".parameters"), "must be between 1 and 2^50");
      bad = true;
    }
    if (bad) continue;
    EncoderShape shape;
    shape.kind = p.kind();
    shape.layout = p.layout();
    shape.num_layers = p.num_layers();
    shape.hidden_size = p.hidden_size();
    shape.intermediate_size = p.intermediate_size();
    shape.patch_size = p.patch_size();
    shape.image_size = p.image_size();
    shape.num_channels = p.num_channels() > 0 ? p.num_channels() : 3;
    shape.temporal_patch_size = p.temporal_patch_size();
    shape.spatial_merge_size = p.spatial_merge_size();
    shape.output_size = p.output_size();
    shape.num_mel_bins = p.num_mel_bins();
    shape.max_positions = p.max_positions();
    shape.pooling_head = p.pooling_head();
    shape.head_dim = p.head_dim();
    shape.conv_kernel_size = p.conv_kernel_size();
    shape.num_global_layers = p.num_global_layers();
    shape.max_tiles = p.max_tiles();
    shape.aspect_ratio_ids = p.aspect_ratio_ids();
    shape.num_queries = p.num_queries();
    if (p.subsampling_channels_size() == 2) {
      shape.subsampling_channels = {p.subsampling_channels(0), p.subsampling_channels(1)};
    }
    shape.parameters = static_cast<double>(p.parameters());
    absl::StatusOr<EncoderCount> count = CountEncoder(shape, field);
    if (!count.ok()) {
      for (const FieldViolation& v : GetFieldViolations(count.status()))
        violations.Add(v.field, v.description);
      continue;
    }
    out.push_back({p.kind(), count->parameters, std::move(count->arithmetic)});
  }
  if (absl::Status invalid = violations.ToStatus(); !invalid.ok()) return invalid;
  return out;
}

double EncoderPartsParameters(const common::v1::Architecture& arch) {
  if (arch.encoder_parts_size() == 0) return 0;
  absl::StatusOr<std::vector<CountedEncoderPart>> parts = CountEncoderParts(arch);
  double sum = 0;
  if (parts.ok()) {
    for (const CountedEncoderPart& p : *parts) sum += p.parameters;
  }
  return sum;
}

absl::StatusOr<double> ParametersOfModel(const common::v1::Model& model,
                                         const Architecture* architecture) {
  if (model.has_parameters()) return model.parameters();
  if (model.architecture().has_published_parameter_count()) {
    return static_cast<double>(model.architecture().published_parameter_count());
  }
  if (model.has_architecture()) {
    absl::StatusOr<ParameterCount> count = CountParameterTotals(
        architecture != nullptr ? *architecture : ToCoreArchitecture(model.architecture()));
    if (!count.ok()) return count.status();
    return count->total + EncoderPartsParameters(model.architecture());
  }
  return WithReason(absl::FailedPreconditionError(absl::StrCat(
                        "model \"", model.display_name(),
                        "\" has neither a parameter count nor an architecture on record")),
                    "PARAMETERS_UNKNOWN");
}

absl::StatusOr<double> ActiveParametersOfModel(const common::v1::Model& model,
                                               const Architecture* architecture) {
  if (model.has_active_parameters()) return model.active_parameters();
  absl::StatusOr<double> total = ParametersOfModel(model, architecture);
  if (!total.ok() || !model.has_architecture()) return total;
  const Architecture arch =
      architecture != nullptr ? *architecture : ToCoreArchitecture(model.architecture());
  if (!arch.IsMoe()) return total;
  absl::StatusOr<ParameterCount> count = CountParameterTotals(arch);
  if (!count.ok() || count->total <= 0) return total;
  return *total * (count->active / count->total);
}

// The peak a device computes the weights' format at, FLOP/s: quantized
// formats dequantize to 16-bit and run on the FP16/BF16 tensor cores.
std::optional<double> PeakForFormat(const common::v1::PeakThroughput& peak, NumberFormat format) {
  auto first =
      [](std::initializer_list<std::pair<bool, double>> candidates) -> std::optional<double> {
    for (const auto& [has, value] : candidates) {
      if (has && value > 0) return value;
    }
    return std::nullopt;
  };
  const std::pair<bool, double> bf16{peak.has_tensor_fp16_bf16_flops(),
                                     peak.tensor_fp16_bf16_flops()};
  const std::pair<bool, double> fp16{peak.has_fp16_flops(), peak.fp16_flops()};
  const std::pair<bool, double> fp32{peak.has_fp32_flops(), peak.fp32_flops()};
  switch (format) {
    case NumberFormat::kFp32:
      return first({{peak.has_tf32_flops(), peak.tf32_flops()}, fp32});
    case NumberFormat::kFp8:
      return first({{peak.has_fp8_flops(), peak.fp8_flops()}, bf16, fp16, fp32});
    case NumberFormat::kInt8:
      return first({{peak.has_int8_ops(), peak.int8_ops()}, bf16, fp16, fp32});
    case NumberFormat::kInt4:
      return first({{peak.has_int4_ops(), peak.int4_ops()},
                    {peak.has_int8_ops(), peak.int8_ops()},
                    bf16,
                    fp16,
                    fp32});
    default:
      return first({bf16, fp16, fp32});
  }
}

absl::Status ValidateArchitecture(const common::v1::Architecture& arch, absl::string_view prefix) {
  // The bounds are the catalog's (common/records/bounds.h): far above any
  // published model, low enough that products of them stay exact in int64
  // and double. Every whole-number field is checked, so a field added to the
  // contract and to the table needs no line here. The table of fields and
  // their bounds is built once: every estimate validates its architecture.
  struct FieldBound {
    const google::protobuf::FieldDescriptor* field;
    int64_t most;
  };
  static const auto* const kFieldBounds = [] {
    auto* bounds = new std::vector<FieldBound>();
    const google::protobuf::Descriptor* descriptor = common::v1::Architecture::descriptor();
    for (int i = 0; i < descriptor->field_count(); ++i) {
      const google::protobuf::FieldDescriptor* field = descriptor->field(i);
      if (field->is_repeated() ||
          (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_INT32 &&
           field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_INT64)) {
        continue;
      }
      const records::Bound* bound = records::FindBound(
          records::RecordKind::kModel, absl::StrCat("architecture.", field->name()));
      bounds->push_back({field, bound == nullptr ? std::numeric_limits<int32_t>::max()
                                                 : static_cast<int64_t>(bound->max)});
    }
    return bounds;
  }();
  FieldViolations violations;
  const google::protobuf::Reflection* reflection = arch.GetReflection();
  for (const auto& [field, most] : *kFieldBounds) {
    if (!reflection->HasField(arch, field)) continue;
    const int64_t value = field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_INT32
                              ? reflection->GetInt32(arch, field)
                              : reflection->GetInt64(arch, field);
    if (value < 0 || value > most) {
      violations.Add(absl::StrCat(prefix, ".", field->name()),
                     absl::StrCat("must be between 0 and ", most, ", got ", value));
    }
  }
  // Each layer's MLP width, under its bound; at most as many as a model may
  // have layers (the count checks that there are num_layers of them).
  const int64_t most_width = static_cast<int64_t>(
      records::MaxOf(records::RecordKind::kModel, "architecture.layer_intermediate_sizes"));
  if (arch.layer_intermediate_sizes_size() >
      records::MaxOf(records::RecordKind::kModel, "architecture.num_layers")) {
    violations.Add(absl::StrCat(prefix, ".layer_intermediate_sizes"),
                   "lists more widths than a model may have layers");
  } else {
    for (int i = 0; i < arch.layer_intermediate_sizes_size(); ++i) {
      const int64_t width = arch.layer_intermediate_sizes(i);
      if (width < 0 || width > most_width) {
        violations.Add(absl::StrCat(prefix, ".layer_intermediate_sizes[", i, "]"),
                       absl::StrCat("must be between 0 and ", most_width, ", got ", width));
        break;
      }
    }
  }
  if (arch.encoder_parts_size() > 0) {
    if (arch.encoder_parts_size() > 16) {
      violations.Add(absl::StrCat(prefix, ".encoder_parts"), "at most 16 parts");
    } else if (absl::StatusOr<std::vector<CountedEncoderPart>> parts =
                   CountEncoderParts(arch, prefix);
               !parts.ok()) {
      for (const FieldViolation& v : GetFieldViolations(parts.status()))
        violations.Add(v.field, v.description);
    }
  }
  return violations.ToStatus();
}

WorkloadRequest WorkloadFiguresOf(const v1::InferenceWorkload& workload) {
  WorkloadRequest request;
  request.context_length_tokens = workload.context_length_tokens();
  request.batch_size = workload.batch_size();
  request.prefill_chunk_tokens = workload.prefill_chunk_tokens();
  request.prompt_tokens = workload.prompt_tokens();
  request.quantization_group_size = workload.quantization_group_size();
  if (workload.has_overhead_bytes()) request.overhead_bytes = workload.overhead_bytes();
  request.memory_utilization = workload.memory_utilization();
  request.prefill_efficiency = workload.prefill_efficiency();
  if (workload.has_images_per_sequence()) {
    request.images_per_sequence = workload.images_per_sequence();
  }
  return request;
}

absl::StatusOr<ResolvedWorkload> ResolveWorkload(const v1::InferenceWorkload& workload) {
  WorkloadRequest request = WorkloadFiguresOf(workload);
  FieldViolations violations;
  for (const auto& [field, format, out] :
       {std::tuple<const char*, v1::NumberFormat, std::optional<NumberFormat>*>{
            "weight_format", workload.weight_format(), &request.weight_format},
        {"kv_cache_format", workload.kv_cache_format(), &request.kv_cache_format}}) {
    if (format == v1::NUMBER_FORMAT_UNSPECIFIED) continue;
    absl::StatusOr<NumberFormat> core = ToCoreNumberFormat(format, NumberFormat::kBf16, field);
    if (core.ok()) {
      *out = *core;
    } else {
      violations.Add(field, absl::StrCat("has no value ", static_cast<int>(format)));
    }
  }
  if (absl::Status invalid = violations.ToStatus(); !invalid.ok()) return invalid;
  return ResolveWorkload(request);
}

absl::StatusOr<PlanObjective> ToCorePlanObjective(v1::PlanObjective objective, const char* field) {
  switch (objective) {
    case v1::PLAN_OBJECTIVE_UNSPECIFIED:
    case v1::PLAN_OBJECTIVE_FEWEST_CARDS:
      return PlanObjective::kFewestCards;
    case v1::PLAN_OBJECTIVE_CHEAPEST:
      return PlanObjective::kCheapest;
    case v1::PLAN_OBJECTIVE_FASTEST:
      return PlanObjective::kFastest;
    default:
      return InvalidFieldError(field, absl::StrCat("has no value ", static_cast<int>(objective)));
  }
}

absl::StatusOr<Optimizer> ToCoreOptimizer(v1::Optimizer optimizer, const char* field) {
  switch (optimizer) {
    case v1::OPTIMIZER_UNSPECIFIED:
    case v1::OPTIMIZER_ADAMW:
      return Optimizer::kAdamW;
    case v1::OPTIMIZER_SGD_MOMENTUM:
      return Optimizer::kSgdMomentum;
    case v1::OPTIMIZER_ADAFACTOR:
      return Optimizer::kAdafactor;
    case v1::OPTIMIZER_ADAMW_8BIT:
      return Optimizer::kAdamW8Bit;
    default:
      return InvalidFieldError(field,
                               absl::StrCat("unknown optimizer ", static_cast<int>(optimizer)));
  }
}

absl::StatusOr<Recompute> ToCoreRecompute(v1::Recompute recompute, const char* field) {
  switch (recompute) {
    case v1::RECOMPUTE_UNSPECIFIED:
    case v1::RECOMPUTE_NONE:
      return Recompute::kNone;
    case v1::RECOMPUTE_SELECTIVE:
      return Recompute::kSelective;
    case v1::RECOMPUTE_FULL:
      return Recompute::kFull;
    default:
      return InvalidFieldError(
          field, absl::StrCat("unknown recompute mode ", static_cast<int>(recompute)));
  }
}

absl::StatusOr<Framework> ToCoreFramework(v1::TrainingFramework framework, const char* field) {
  switch (framework) {
    case v1::TRAINING_FRAMEWORK_UNSPECIFIED:
      return Framework::kDefault;
    case v1::TRAINING_FRAMEWORK_IDEALIZED:
      return Framework::kIdealized;
    case v1::TRAINING_FRAMEWORK_DEEPSPEED:
      return Framework::kDeepSpeed;
    case v1::TRAINING_FRAMEWORK_FSDP:
      return Framework::kFsdp;
    case v1::TRAINING_FRAMEWORK_MEGATRON:
      return Framework::kMegatron;
    default:
      return InvalidFieldError(
          field, absl::StrCat("unknown training framework ", static_cast<int>(framework)));
  }
}

v1::TrainingFramework ToProtoFramework(Framework framework) {
  switch (framework) {
    case Framework::kIdealized:
      return v1::TRAINING_FRAMEWORK_IDEALIZED;
    case Framework::kDeepSpeed:
      return v1::TRAINING_FRAMEWORK_DEEPSPEED;
    case Framework::kFsdp:
      return v1::TRAINING_FRAMEWORK_FSDP;
    case Framework::kMegatron:
      return v1::TRAINING_FRAMEWORK_MEGATRON;
    case Framework::kDefault:
      break;
  }
  return v1::TRAINING_FRAMEWORK_UNSPECIFIED;
}

absl::StatusOr<LossImplementation> ToCoreLoss(v1::TrainingLoss loss, const char* field) {
  switch (loss) {
    case v1::TRAINING_LOSS_UNSPECIFIED:
    case v1::TRAINING_LOSS_TRANSFORMERS:
      return LossImplementation::kTransformers;
    case v1::TRAINING_LOSS_CHUNKED:
      return LossImplementation::kChunked;
    case v1::TRAINING_LOSS_LIGER:
      return LossImplementation::kLigerFusedLinear;
    default:
      break;
  }
  return InvalidFieldError(field, absl::StrCat("unknown training loss ", static_cast<int>(loss)));
}

v1::TrainingLoss ToProtoLoss(LossImplementation loss) {
  switch (loss) {
    case LossImplementation::kTransformers:
      return v1::TRAINING_LOSS_TRANSFORMERS;
    case LossImplementation::kChunked:
      return v1::TRAINING_LOSS_CHUNKED;
    case LossImplementation::kLigerFusedLinear:
      return v1::TRAINING_LOSS_LIGER;
  }
  return v1::TRAINING_LOSS_UNSPECIFIED;
}

absl::StatusOr<FineTuning> ToCoreFineTuning(v1::FineTuning fine_tuning, const char* field) {
  switch (fine_tuning) {
    case v1::FINE_TUNING_UNSPECIFIED:
    case v1::FINE_TUNING_FULL:
      return FineTuning::kFull;
    case v1::FINE_TUNING_LORA:
      return FineTuning::kLora;
    case v1::FINE_TUNING_QLORA:
      return FineTuning::kQlora;
    default:
      return InvalidFieldError(
          field, absl::StrCat("unknown fine-tuning mode ", static_cast<int>(fine_tuning)));
  }
}

v1::NumberFormat ToProtoNumberFormat(NumberFormat format) {
  // The inverse of ToCoreNumberFormat, built from it once, indexed by the
  // core enum's value: every memory answer states its two formats, and a
  // hash map's lookup was ~70 instructions each (docs/BENCHMARKS.md,
  // session 17, branch s17-estimate).
  constexpr size_t kFormats = static_cast<size_t>(NumberFormat::kFp8Block) + 1;
  static const auto* const kByCore = [] {
    auto* by_core = new std::array<v1::NumberFormat, kFormats>();
    by_core->fill(v1::NUMBER_FORMAT_UNSPECIFIED);
    for (int value = 1; v1::NumberFormat_IsValid(value); ++value) {
      const auto proto = static_cast<v1::NumberFormat>(value);
      absl::StatusOr<NumberFormat> core = ToCoreNumberFormat(proto, NumberFormat::kBf16, "");
      const auto index = core.ok() ? static_cast<size_t>(*core) : kFormats;
      // The first spelling of a format wins.
      if (index < kFormats && (*by_core)[index] == v1::NUMBER_FORMAT_UNSPECIFIED) {
        (*by_core)[index] = proto;
      }
    }
    return by_core;
  }();
  const auto index = static_cast<size_t>(format);
  return index < kFormats ? (*kByCore)[index] : v1::NUMBER_FORMAT_UNSPECIFIED;
}

v1::ResolvedWorkload ToProto(const ResolvedWorkload& w) {
  v1::ResolvedWorkload out;
  ToProto(w, &out);
  return out;
}

void ToProto(const ResolvedWorkload& w, v1::ResolvedWorkload* out) {
  v1::InferenceWorkload* workload = out->mutable_workload();
  workload->set_context_length_tokens(w.context_length_tokens);
  workload->set_batch_size(w.batch_size);
  workload->set_prefill_chunk_tokens(w.prefill_chunk_tokens);
  workload->set_prompt_tokens(w.prompt_tokens);
  workload->set_weight_format(ToProtoNumberFormat(w.weight_format));
  workload->set_kv_cache_format(ToProtoNumberFormat(w.kv_cache_format));
  workload->set_quantization_group_size(w.quantization_group_size);
  workload->set_overhead_bytes(w.overhead_bytes);
  workload->set_memory_utilization(w.memory_utilization);
  workload->set_prefill_efficiency(w.prefill_efficiency);
  if (ImagesPerSequenceStated(w)) workload->set_images_per_sequence(w.images_per_sequence);
  out->set_statement(WorkloadStatement(w));
  out->set_context_capped_at_model_maximum(w.context_capped);
  out->set_weight_format_from_checkpoint(w.weight_format_from_checkpoint);
  out->set_checkpoint_quantization_not_sized(w.checkpoint_quantization_not_sized);
  out->set_context_defaulted(w.context_defaulted);
  out->set_weight_format_defaulted(w.weight_format_defaulted);
  out->set_model_max_context_tokens(w.model_max_context_tokens);
  out->set_weights_from_file(w.weights_from_file);
  out->set_images_per_sequence_defaulted(ImagesPerSequenceDefaultedForModel(w));
}

absl::Status CheckDeviceFigures(const common::v1::Hardware& hw) {
  // The catalog refuses these figures on write (the same table,
  // common/records/bounds.h); a record stored before it did, or by an older
  // replica, is not planned.
  auto beyond = [&hw](const std::string& field, double value, const records::Bound& bound) {
    return absl::FailedPreconditionError(
        absl::StrCat("hardware record ", hw.name(), " (", hw.display_name(), "): ", field, " ",
                     value, " is beyond any real device (at most ", bound.max, " ", bound.unit,
                     "); correct the record to plan on it"));
  };
  // Every number of the record and of its peaks that the table bounds, in
  // field-number order, the record's before its peaks'. The table is built
  // once: a plan checks every accelerator on every call.
  struct BoundedField {
    bool in_peak;
    const google::protobuf::FieldDescriptor* field;
    std::string path;
    const records::Bound* bound;
  };
  static const auto* const kBoundedFields = [] {
    auto* fields = new std::vector<BoundedField>();
    for (const bool in_peak : {false, true}) {
      const google::protobuf::Descriptor* descriptor =
          in_peak ? common::v1::PeakThroughput::descriptor() : common::v1::Hardware::descriptor();
      std::vector<const google::protobuf::FieldDescriptor*> by_number;
      for (int i = 0; i < descriptor->field_count(); ++i) by_number.push_back(descriptor->field(i));
      std::sort(by_number.begin(), by_number.end(),
                [](const auto* a, const auto* b) { return a->number() < b->number(); });
      for (const google::protobuf::FieldDescriptor* field : by_number) {
        if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE ||
            field->is_repeated()) {
          continue;
        }
        std::string path = in_peak ? absl::StrCat("peak.", field->name()) : field->name();
        const records::Bound* bound = records::FindBound(records::RecordKind::kHardware, path);
        if (bound != nullptr) fields->push_back({in_peak, field, std::move(path), bound});
      }
    }
    return fields;
  }();
  for (const BoundedField& bounded : *kBoundedFields) {
    const google::protobuf::Message& message =
        bounded.in_peak ? static_cast<const google::protobuf::Message&>(hw.peak()) : hw;
    const google::protobuf::Reflection* reflection = message.GetReflection();
    if (!reflection->HasField(message, bounded.field)) continue;
    const double value = reflection->GetDouble(message, bounded.field);
    if (!(value >= 0 && value <= bounded.bound->max)) {
      return beyond(bounded.path, value, *bounded.bound);
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateModelArchitecture(const common::v1::Model& model, absl::string_view prefix) {
  absl::Status invalid = ValidateArchitecture(model.architecture(), prefix);
  if (invalid.ok() || model.name().empty()) return invalid;
  return absl::FailedPreconditionError(
      absl::StrCat("the catalog record ", model.name(), " (", model.display_name(),
                   ") has an architecture the estimator cannot use: ", invalid.message(),
                   "; correct the record"));
}

AllocatableMemory AllocatableMemoryOfRecord(const common::v1::Hardware& hw) {
  DeviceMemoryRecord record;
  record.memory_bytes = hw.memory_bytes();
  if (hw.has_allocatable_memory_bytes()) record.allocatable_bytes = hw.allocatable_memory_bytes();
  record.allocatable_source = hw.allocatable_memory_source();
  record.memory_type = hw.memory_type();
  record.unified_memory = hw.unified_memory();
  record.tpu = hw.type() == common::v1::HARDWARE_TYPE_TPU;
  return AllocatableMemoryOf(record);
}

void ToProto(const AllocatableMemory& memory, v1::DeviceMemory* out) {
  out->set_marketed_bytes(static_cast<int64_t>(std::floor(memory.marketed_bytes)));
  out->set_allocatable_bytes(static_cast<int64_t>(std::floor(memory.allocatable_bytes)));
  out->set_allocatable_assumed(memory.assumed);
  out->set_allocatable_source(memory.source);
}

namespace {

// DeviceOf but the peak, which depends on the format.
DeviceSpec DeviceWithoutPeak(const common::v1::Hardware& hw) {
  DeviceSpec device;
  device.name = hw.name();
  device.display_name = hw.display_name();
  device.memory_bytes = hw.memory_bytes();
  if (device.memory_bytes > 0) {
    AllocatableMemory allocatable = AllocatableMemoryOfRecord(hw);
    device.allocatable_memory_bytes = allocatable.allocatable_bytes;
    device.allocatable_memory_source = std::move(allocatable.source);
    device.allocatable_memory_assumed = allocatable.assumed;
  }
  if (hw.has_memory_bandwidth_bytes_per_second()) {
    device.bandwidth_bytes_per_second = hw.memory_bandwidth_bytes_per_second();
  }
  if (hw.has_cloud_price_usd_per_chip_hour()) {
    device.price_usd_per_hour = hw.cloud_price_usd_per_chip_hour();
  }
  device.unified_memory = hw.unified_memory();
  if (hw.has_scale_up_domain_size()) device.scale_up_domain_size = hw.scale_up_domain_size();
  // The record states scale-up bandwidth with both directions summed.
  device.links.scale_up_bytes_per_second = hw.scale_up_bandwidth_bytes_per_second() / 2;
  device.links.scale_up_domain_size = hw.scale_up_domain_size();
  device.links.pcie_generation = hw.pcie_generation();
  device.links.intra_node_bytes_per_second = hw.intra_node_bandwidth_bytes_per_second();
  device.links.inter_node_bytes_per_second = hw.inter_node_bandwidth_bytes_per_second();
  device.roofline_does_not_apply = RooflineDoesNotApply(hw.memory_type(), hw.memory_bytes(),
                                                        hw.memory_bandwidth_bytes_per_second());
  device.bandwidth_doubtful = BandwidthDoubtful(hw.memory_type(), hw.memory_bytes(),
                                                hw.memory_bandwidth_bytes_per_second());
  return device;
}

}  // namespace

DeviceSpec DeviceOf(const common::v1::Hardware& hw, NumberFormat format) {
  DeviceSpec device = DeviceWithoutPeak(hw);
  device.peak_flops = PeakForFormat(hw.peak(), format);
  return device;
}

std::shared_ptr<const std::vector<PreparedDevice>> PreparedDevicesOf(
    const SharedRecords<common::v1::Hardware>& hardware) {
  return hardware.Derive<std::vector<PreparedDevice>>(
      [](const std::vector<common::v1::Hardware>& records) {
        std::vector<PreparedDevice> prepared(records.size());
        const std::vector<int> name_ranks =
            RanksByName(records.size(),
                        [&records](size_t i) -> const std::string& { return records[i].name(); });
        for (size_t i = 0; i < records.size(); ++i) {
          prepared[i].name_rank = name_ranks[i];
          prepared[i].figures = CheckDeviceFigures(records[i]);
          // A record that cannot be planned on is listed, not converted.
          if (!prepared[i].figures.ok()) continue;
          prepared[i].device = DeviceWithoutPeak(records[i]);
          prepared[i].usable =
              UsableCardOf(prepared[i].device, ResolvedWorkload::kDefaultMemoryUtilization);
          for (size_t f = 0; f < prepared[i].peak_flops.size(); ++f) {
            prepared[i].peak_flops[f] =
                PeakForFormat(records[i].peak(), static_cast<NumberFormat>(f));
          }
          prepared[i].device.peak_flops =
              prepared[i].peak_flops[static_cast<size_t>(PreparedDevice::kPreparedFormat)];
        }
        return prepared;
      });
}

namespace {

// The record's peak for `format`, prepared when the format has a slot.
std::optional<double> PreparedPeak(const PreparedDevice& prepared, const common::v1::Hardware& hw,
                                   NumberFormat format) {
  const auto slot = static_cast<size_t>(format);
  return slot < prepared.peak_flops.size() ? prepared.peak_flops[slot]
                                           : PeakForFormat(hw.peak(), format);
}

}  // namespace

DeviceSpec DeviceFor(const PreparedDevice& prepared, const common::v1::Hardware& hw,
                     NumberFormat format) {
  DeviceSpec device = prepared.device;
  device.peak_flops = PreparedPeak(prepared, hw, format);
  return device;
}

void DeviceFor(const PreparedDevice& prepared, const common::v1::Hardware& hw, NumberFormat format,
               DeviceSpec* device) {
  *device = prepared.device;
  device->peak_flops = PreparedPeak(prepared, hw, format);
}

const DeviceSpec& DeviceForPlan(const PreparedDevice& prepared, const common::v1::Hardware& hw,
                                NumberFormat format,
                                const std::optional<double>& price_usd_per_hour,
                                DeviceSpec* scratch) {
  const bool record_price =
      !price_usd_per_hour.has_value() || price_usd_per_hour == prepared.device.price_usd_per_hour;
  if (format == PreparedDevice::kPreparedFormat && record_price) return prepared.device;
  DeviceFor(prepared, hw, format, scratch);
  if (price_usd_per_hour.has_value()) scratch->price_usd_per_hour = price_usd_per_hour;
  return *scratch;
}

void DeviceMemoryToProto(const DeviceSpec& device, v1::DeviceMemory* out) {
  // As ToProto(AllocatableMemory) of {memory_bytes, *allocatable_memory_bytes,
  // allocatable_memory_assumed, allocatable_memory_source}.
  out->set_marketed_bytes(static_cast<int64_t>(std::floor(device.memory_bytes)));
  out->set_allocatable_bytes(
      static_cast<int64_t>(std::floor(device.allocatable_memory_bytes.value_or(0))));
  out->set_allocatable_assumed(device.allocatable_memory_assumed);
  out->set_allocatable_source(device.allocatable_memory_source);
}

}  // namespace modelatlas::estimator
