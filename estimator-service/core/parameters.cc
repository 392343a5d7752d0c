#include "estimator-service/core/parameters.h"

#include <algorithm>
#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/records/bounds.h"
#include "common/status/errors.h"
#include "estimator-service/core/arithmetic_text.h"

namespace modelatlas::estimator {
namespace {

// Vectors of hidden_size parameters in one norm.
double NormParameterVectors(const Architecture& arch) {
  if (arch.norm_parameter_vectors >= 0) return arch.norm_parameter_vectors;
  return arch.layer_norm ? 2 : 1;
}

const char* NormName(const Architecture& arch) {
  if (!arch.layer_norm) return "RMSNorm";
  switch (static_cast<int>(NormParameterVectors(arch))) {
    case 0:
      return "LayerNorm without weight or bias";
    case 1:
      return "LayerNorm without bias";
    default:
      return "LayerNorm";
  }
}

std::string Int(double value) { return WholeNumber(value); }

// One MLP (or one expert) of inner width f.
double MlpParameters(const Architecture& arch, double f, bool biases) {
  const double h = static_cast<double>(arch.hidden_size);
  const double matrices = (arch.gated_mlp ? 3 : 2) * h * f;
  if (!biases || !arch.mlp_bias) return matrices;
  return matrices + (arch.gated_mlp ? 2 * f : f) + h;
}

// The untied output head's bias (Phi-2's lm_head: nn.Linear(h, V, bias=True)).
double OutputHeadBias(const Architecture& arch, const ParameterCountOptions& options) {
  return options.include_biases && arch.output_head_bias && !arch.tie_word_embeddings
             ? static_cast<double>(arch.vocab_size)
             : 0;
}

// One recurrent mixer's parameters, every tensor of the transformers module
// (docs/FORMULAS.md), with its arithmetic when `text` is not null.
//   Mamba (MambaMixer): in_proj h x 2I, conv1d I x K (+ I bias), x_proj
//     I x (R + 2N), dt_proj R x I + I, A_log I x N, D I, out_proj I x h;
//     JambaMambaMixer adds RMSNorms on dt, B and C (R + 2N).
//   Mamba-2 (Mamba2Mixer, FalconH1Mixer, NemotronHMamba2Mixer), C = I + 2GN
//     conv channels: in_proj h x (I + C + H), conv1d C x K (+ C bias),
//     dt_bias, A_log and D H each, gated RMSNorm I, out_proj I x h.
//   Gated DeltaNet (Qwen3NextGatedDeltaNet), G key heads of N, H value
//     heads of I/H, C = 2GN + I: in_proj_qkvz h x (C + I), in_proj_ba
//     h x 2H, conv1d C x K, dt_bias and A_log H each, gated RMSNorm I/H,
//     out_proj I x h.
//   Short convolution (LFM2's Lfm2ShortConv), I = conv_dim: in_proj h x 3I
//     (B, C and x), a depthwise conv1d I x K, out_proj I x h; biases on all
//     three with conv_bias.
//   Kimi Delta Attention (Kimi Linear's KimiDeltaAttention, modeling_kimi.py;
//     vLLM kda.py), G key heads of N, H value heads, C = 2GN + I: q/k/v_proj
//     h x C, q/k/v_conv1d C x K (depthwise, no bias), the decay gate's
//     low-rank f_a_proj h x N and f_b_proj N x GN, dt_bias GN and A_log H,
//     b_proj h x H (beta), the output gate's g_a_proj h x N and g_b_proj
//     N x I, o_norm I/H (one gated RMSNorm shared by the heads), o_proj
//     I x h; no biases. The gates' rank is the head dim (N), as the module
//     builds them.
double RecurrentParameters(const Architecture& arch, const ParameterCountOptions& options,
                           std::string* text) {
  const double h = static_cast<double>(arch.hidden_size);
  const double I = static_cast<double>(arch.ssm_inner_size);
  const double N = arch.ssm_state_size, K = arch.ssm_conv_kernel, H = arch.ssm_num_heads,
               G = arch.ssm_num_groups, R = arch.ssm_dt_rank;
  const bool proj_bias = options.include_biases && arch.ssm_proj_bias;
  const bool conv_bias = options.include_biases && arch.ssm_conv_bias;
  const bool norm = options.include_norms && arch.ssm_gated_norm;
  switch (arch.recurrent_mixer) {
    case RecurrentMixer::kMamba: {
      const double in = h * 2 * I + (proj_bias ? 2 * I : 0);
      const double conv = I * K + (conv_bias ? I : 0);
      const double x_proj = I * (R + 2 * N);
      const double dt = R * I + I;
      const double out = I * h + (proj_bias ? h : 0);
      // Jamba's mixer normalizes dt, B and C (dt_layernorm, b_layernorm,
      // c_layernorm: RMSNorms of R, N and N).
      const double inner_norms = norm ? R + 2 * N : 0;
      const double total = in + conv + x_proj + dt + I * N + I + out + inner_norms;
      if (text != nullptr) {
        *text = absl::StrCat(
            "Mamba: in_proj ", Int(h), "x2x", Int(I), " + conv1d ", Int(I), "x", Int(K),
            conv_bias ? absl::StrCat(" + ", Int(I), " (bias)") : "", " + x_proj ", Int(I), "x(",
            Int(R), "+2x", Int(N), ") + dt_proj ", Int(R), "x", Int(I), " + ", Int(I),
            " (bias) + A_log ", Int(I), "x", Int(N), " + D ", Int(I), " + out_proj ", Int(I), "x",
            Int(h), proj_bias ? " (+ biases)" : "",
            norm ? absl::StrCat(" + dt/B/C norms ", Int(inner_norms)) : "", " = ", Int(total));
      }
      return total;
    }
    case RecurrentMixer::kMamba2: {
      const double C = I + 2 * G * N;
      const double in = h * (I + C + H) + (proj_bias ? I + C + H : 0);
      const double conv = C * K + (conv_bias ? C : 0);
      const double out = I * h + (proj_bias ? h : 0);
      const double total = in + conv + 3 * H + (norm ? I : 0) + out;
      if (text != nullptr) {
        *text = absl::StrCat(
            "Mamba-2: in_proj ", Int(h), "x(", Int(I), "+", Int(C), "+", Int(H), ") + conv1d ",
            Int(C), "x", Int(K), conv_bias ? absl::StrCat(" + ", Int(C), " (bias)") : "", " (",
            Int(C), " = ", Int(I), " + 2x", Int(G), " groups x ", Int(N),
            " state) + dt_bias, A_log, D 3x", Int(H), " heads",
            norm ? absl::StrCat(" + gated norm ", Int(I)) : "", " + out_proj ", Int(I), "x", Int(h),
            proj_bias ? " (+ biases)" : "", " = ", Int(total));
      }
      return total;
    }
    case RecurrentMixer::kGatedDeltaNet: {
      const double C = 2 * G * N + I;
      const double in = h * (C + I) + h * 2 * H;
      const double conv = C * K + (conv_bias ? C : 0);
      const double out = I * h;
      const double total = in + conv + 2 * H + (norm ? I / H : 0) + out;
      if (text != nullptr) {
        *text = absl::StrCat("Gated DeltaNet: in_proj_qkvz ", Int(h), "x(", Int(C), "+", Int(I),
                             ") + in_proj_ba ", Int(h), "x2x", Int(H), " + conv1d ", Int(C), "x",
                             Int(K), " (", Int(C), " = 2x", Int(G), " key heads x ", Int(N), " + ",
                             Int(I), ") + dt_bias, A_log 2x", Int(H),
                             norm ? absl::StrCat(" + gated norm ", Int(I / H)) : "", " + out_proj ",
                             Int(I), "x", Int(h), " = ", Int(total));
      }
      return total;
    }
    case RecurrentMixer::kKimiDelta: {
      const double C = 2 * G * N + I;
      const double gates = h * N + N * G * N + h * N + N * I;
      const double total = h * C + C * K + gates + G * N + H + h * H + (norm ? I / H : 0) + I * h;
      if (text != nullptr) {
        *text = absl::StrCat("Kimi Delta Attention: q/k/v_proj ", Int(h), "x", Int(C), " + convs ",
                             Int(C), "x", Int(K), " (", Int(C), " = 2x", Int(G), " key heads x ",
                             Int(N), " + ", Int(I), ") + decay gate ", Int(h), "x", Int(N), " + ",
                             Int(N), "x", Int(G * N), " + output gate ", Int(h), "x", Int(N), " + ",
                             Int(N), "x", Int(I), " + dt_bias ", Int(G * N), " + A_log ", Int(H),
                             " + b_proj ", Int(h), "x", Int(H),
                             norm ? absl::StrCat(" + o_norm ", Int(I / H)) : "", " + o_proj ",
                             Int(I), "x", Int(h), " = ", Int(total));
      }
      return total;
    }
    case RecurrentMixer::kShortConv: {
      const double in = h * 3 * I + (conv_bias ? 3 * I : 0);
      const double conv = I * K + (conv_bias ? I : 0);
      const double out = I * h + (conv_bias ? h : 0);
      const double total = in + conv + out;
      if (text != nullptr) {
        *text = absl::StrCat("short conv: in_proj ", Int(h), "x3x", Int(I), " (B, C, x) + conv1d ",
                             Int(I), "x", Int(K), " (depthwise) + out_proj ", Int(I), "x", Int(h),
                             conv_bias ? " (+ biases)" : "", " = ", Int(total));
      }
      return total;
    }
    default:
      return 0;
  }
}

// A hybrid's layer counts and its recurrent mixer's shape.
void CheckRecurrentShape(const Architecture& arch, FieldViolations* violations) {
  if (arch.recurrent_mixer == RecurrentMixer::kUnknown) {
    violations->Add("architecture.recurrent_mixer",
                    "must be mamba, mamba2, gated_deltanet, short_conv or kda");
    return;
  }
  auto layers = [&](const char* field, int value, bool positive) {
    if (value > arch.num_layers || (positive ? value <= 0 : value < 0)) {
      violations->Add(field, absl::StrCat("must be between ", positive ? 1 : 0, " and num_layers (",
                                          arch.num_layers, "), got ", value));
    }
  };
  layers("architecture.num_recurrent_layers", arch.num_recurrent_layers, true);
  layers("architecture.num_attention_layers", arch.num_attention_layers, false);
  layers("architecture.num_mlp_layers", arch.num_mlp_layers, false);
  if (arch.ssm_inner_size <= 0) violations->Add("architecture.ssm_inner_size", "must be positive");
  if (arch.ssm_conv_kernel <= 0) {
    violations->Add("architecture.ssm_conv_kernel", "must be positive");
  }
  // A short convolution keeps no state beside its window.
  if (arch.recurrent_mixer == RecurrentMixer::kShortConv) return;
  if (arch.ssm_state_size <= 0) violations->Add("architecture.ssm_state_size", "must be positive");
  if (arch.recurrent_mixer == RecurrentMixer::kMamba) {
    if (arch.ssm_dt_rank <= 0) violations->Add("architecture.ssm_dt_rank", "must be positive");
    return;
  }
  if (arch.ssm_num_heads <= 0 || arch.ssm_inner_size % arch.ssm_num_heads != 0) {
    violations->Add("architecture.ssm_num_heads", "must be positive and divide ssm_inner_size");
  }
  if (arch.ssm_num_groups <= 0) violations->Add("architecture.ssm_num_groups", "must be positive");
}

// As the catalog checks a record's (catalog-service/validation.cc): a group
// size with a grouped format only, a quantization not sized with no format.
void CheckCheckpointQuantization(const Architecture& arch, FieldViolations* violations) {
  const absl::string_view format = arch.checkpoint_weight_format.has_value()
                                       ? NumberFormatNameView(*arch.checkpoint_weight_format)
                                       : absl::string_view();
  if (const std::string problem = records::CheckpointGroupSizeProblem(
          std::string_view(format.data(), format.size()), arch.checkpoint_quantization_group_size);
      !problem.empty()) {
    violations->Add("architecture.checkpoint_quantization_group_size", problem);
  }
  if (arch.checkpoint_quantization_not_sized &&
      (arch.checkpoint_weight_format.has_value() || arch.checkpoint_weight_format_unknown)) {
    violations->Add("architecture.checkpoint_quantization_not_sized",
                    "must be empty when checkpoint_weight_format is set");
  }
}

// Llama 3.2 Vision's cross-attention layers: some of a plain decoder-only
// transformer's layers (the only kind counted against checkpoints), each
// caching a positive number of image positions.
void CheckCrossAttention(const Architecture& arch, FieldViolations* violations) {
  if (arch.extra_embedding_rows < 0) {
    violations->Add("architecture.extra_embedding_rows", "must not be negative");
  }
  if (arch.num_cross_attention_layers == 0 && arch.cross_attention_positions == 0) return;
  if (arch.num_cross_attention_layers < 1 || arch.num_cross_attention_layers >= arch.num_layers ||
      arch.IsHybrid() || arch.num_decoder_layers > 0 || arch.UsesMla() ||
      arch.num_kv_shared_layers > 0 || arch.sliding_window > 0) {
    violations->Add("architecture.num_cross_attention_layers",
                    absl::StrCat("must be between 1 and num_layers - 1 (", arch.num_layers - 1,
                                 "), in a decoder-only transformer without latent attention, "
                                 "KV-shared layers or a sliding window"));
  }
  if (arch.cross_attention_positions <= 0) {
    violations->Add("architecture.cross_attention_positions",
                    "must be positive with num_cross_attention_layers");
  }
}

// Gemma 4's full-attention geometry: only where some layers slide and the
// others attend fully, in a decoder-only transformer without latent
// attention (the geometries this estimator has counted against checkpoints).
void CheckGlobalGeometry(const Architecture& arch, FieldViolations* violations) {
  if (arch.global_head_dim < 0) {
    violations->Add("architecture.global_head_dim", "must not be negative");
  }
  if (arch.num_global_key_value_heads < 0) {
    violations->Add("architecture.num_global_key_value_heads", "must not be negative");
  }
  if (arch.num_kv_shared_layers < 0 || arch.num_kv_shared_layers >= std::max(1, arch.num_layers) ||
      (arch.num_kv_shared_layers > 0 && (arch.IsHybrid() || arch.num_decoder_layers > 0))) {
    violations->Add("architecture.num_kv_shared_layers",
                    absl::StrCat("must be between 0 and num_layers - 1 (", arch.num_layers - 1,
                                 "), in a decoder-only transformer"));
  }
  if (arch.kv_shared_layers_double_mlp && (arch.num_kv_shared_layers <= 0 || arch.IsMoe())) {
    violations->Add("architecture.kv_shared_layers_double_mlp",
                    "needs num_kv_shared_layers, in a dense model");
  }
  if (arch.per_layer_input_size < 0 ||
      (arch.per_layer_input_size > 0) != (arch.per_layer_input_vocab_size > 0)) {
    violations->Add("architecture.per_layer_input_vocab_size",
                    "must be positive exactly when per_layer_input_size is");
  }
  if (arch.attention_sinks_sliding_only && !arch.attention_sinks) {
    violations->Add("architecture.attention_sinks_sliding_only", "needs attention_sinks");
  }
  // Standard attention's own value width: counted and cached in decoder-only
  // models' self attention, the same in every layer (MiMo-V2-Flash).
  const bool own_values =
      !arch.UsesMla() && arch.v_head_dim > 0 && arch.v_head_dim != arch.EffectiveHeadDim();
  if (arch.v_head_dim < 0 ||
      (own_values &&
       ((arch.global_head_dim > 0 && arch.global_head_dim != arch.EffectiveHeadDim()) ||
        arch.num_decoder_layers > 0 || arch.num_cross_attention_layers > 0 ||
        arch.global_values_from_keys))) {
    violations->Add("architecture.v_head_dim",
                    "must not be negative; a value width other than head_dim is counted only in "
                    "a decoder-only model's self attention, with one head_dim in every layer (no "
                    "global_head_dim of its own, no values from the keys)");
  }
  if (!arch.HasGlobalGeometry()) return;
  if (arch.UsesMla() || arch.IsHybrid() || arch.num_decoder_layers > 0) {
    violations->Add("architecture.global_head_dim",
                    "full-attention layers of their own geometry are counted only in a "
                    "decoder-only transformer without latent attention");
  }
  if (arch.sliding_window <= 0 || arch.num_sliding_window_layers <= 0 ||
      arch.num_sliding_window_layers >= arch.num_layers) {
    violations->Add("architecture.num_sliding_window_layers",
                    absl::StrCat("must be between 1 and num_layers - 1 (", arch.num_layers - 1,
                                 ") with a sliding_window when the full-attention layers have a "
                                 "geometry of their own (global_head_dim, "
                                 "num_global_key_value_heads, global_values_from_keys, "
                                 "attention_sinks_sliding_only)"));
  }
  if (arch.GlobalAttentionHeads() > 0 && arch.GlobalAttentionHeads() % arch.GlobalKvHeads() != 0) {
    violations->Add("architecture.num_global_key_value_heads",
                    arch.num_global_attention_heads > 0 ? "must divide num_global_attention_heads"
                                                        : "must divide num_attention_heads");
  }
}

// Layers that differ (Nemotron-NAS): one width per layer, the widest as
// intermediate_size (what the activation peaks are sized by), attention in
// at most every layer; a plain transformer otherwise.
void CheckLayerWidths(const Architecture& arch, FieldViolations* violations) {
  if (!arch.HasLayerWidths()) return;
  const std::string field = "architecture.layer_intermediate_sizes";
  if (static_cast<int64_t>(arch.layer_mlp_widths.size()) != arch.num_layers) {
    violations->Add(field, absl::StrCat("lists ", arch.layer_mlp_widths.size(),
                                        " widths; it must list one per layer, num_layers (",
                                        arch.num_layers, ")"));
  }
  const int64_t widest =
      *std::max_element(arch.layer_mlp_widths.begin(), arch.layer_mlp_widths.end());
  if (arch.intermediate_size < widest) {
    violations->Add(
        "architecture.intermediate_size",
        absl::StrCat("must be at least the widest of layer_intermediate_sizes (", widest, ")"));
  }
  if (arch.num_attention_layers > arch.num_layers) {
    violations->Add("architecture.num_attention_layers",
                    absl::StrCat("must be at most num_layers (", arch.num_layers, ")"));
  }
  if (arch.IsMoe() || arch.IsHybrid() || arch.num_decoder_layers > 0 ||
      arch.num_kv_shared_layers > 0 || arch.num_mtp_layers > 0 ||
      arch.num_cross_attention_layers > 0) {
    violations->Add(field,
                    "only for a decoder-only transformer without experts, a recurrent mixer, "
                    "KV-shared, multi-token-prediction or cross-attention layers");
  }
}

}  // namespace

absl::Status CheckArchitectureShape(const Architecture& arch) {
  FieldViolations violations;
  if (arch.num_layers <= 0) violations.Add("architecture.num_layers", "must be positive");
  if (arch.hidden_size <= 0) violations.Add("architecture.hidden_size", "must be positive");
  if (arch.IsHybrid()) CheckRecurrentShape(arch, &violations);
  if (arch.checkpoint_weight_format_unknown) {
    violations.Add(
        "architecture.checkpoint_weight_format",
        absl::StrCat("must be one of ", absl::StrJoin(records::kCheckpointWeightFormats, ", "),
                     " (or empty)"));
  }
  CheckCheckpointQuantization(arch, &violations);
  // A pure state-space model (Mamba) has neither attention nor an MLP.
  if (arch.AttentionLayers() > 0 || !arch.IsHybrid()) {
    if (arch.num_attention_heads <= 0) {
      violations.Add("architecture.num_attention_heads", "must be positive");
    } else if (arch.EffectiveKvHeads() <= 0 ||
               arch.num_attention_heads % arch.EffectiveKvHeads() != 0) {
      violations.Add("architecture.num_key_value_heads", "must divide num_attention_heads");
    }
  }
  if ((arch.MlpLayers() > 0 || !arch.IsHybrid()) && arch.intermediate_size <= 0 &&
      arch.moe_intermediate_size <= 0) {
    violations.Add("architecture.intermediate_size", "must be positive");
  }
  if (arch.vocab_size <= 0) violations.Add("architecture.vocab_size", "must be positive");
  if (arch.IsMoe() &&
      (arch.num_experts_per_token <= 0 || arch.num_experts_per_token > arch.num_experts)) {
    violations.Add("architecture.num_experts_per_token", "must be between 1 and num_experts");
  }
  if (arch.mtp_own_output_head && (arch.mtp_shares_embeddings || arch.num_mtp_layers <= 0)) {
    violations.Add("architecture.mtp_own_output_head",
                   "needs num_mtp_layers, and contradicts mtp_shares_embeddings (which shares the "
                   "output head too)");
  }
  if (arch.checkpoint_attention_output_16bit &&
      arch.checkpoint_weight_format != NumberFormat::kFp8Block) {
    violations.Add("architecture.checkpoint_attention_output_16bit",
                   "needs checkpoint_weight_format \"fp8-block128\"");
  }
  if (arch.mtp_dense_mlp && arch.num_mtp_layers <= 0) {
    violations.Add("architecture.mtp_dense_mlp", "needs num_mtp_layers");
  }
  if (arch.learned_positions && arch.max_context_length <= 0) {
    violations.Add("architecture.max_context_length",
                   "must be positive for learned position embeddings");
  }
  if ((arch.index_heads > 0) != (arch.index_head_dim > 0) ||
      ((arch.index_heads > 0) && !arch.UsesMla())) {
    violations.Add("architecture.index_n_heads",
                   "must be set with index_head_dim, and only with multi-head latent attention "
                   "(kv_lora_rank)");
  }
  if (arch.learned_position_offset < 0 ||
      (arch.learned_position_offset > 0 && !arch.learned_positions)) {
    violations.Add("architecture.learned_position_offset",
                   "must be 0, or positive with learned position embeddings");
  }
  CheckGlobalGeometry(arch, &violations);
  CheckCrossAttention(arch, &violations);
  CheckLayerWidths(arch, &violations);
  return violations.ToStatus();
}

namespace {

// DeepSeek-V3.2's lightning indexer per layer (DeepSeek-V3.2-Exp
// inference/model.py, Indexer): wq_b from the query LoRA (q_lora_rank x
// heads x head_dim), wk (hidden x head_dim), k_norm (a LayerNorm: 2 x
// head_dim) and weights_proj (hidden x heads); no biases.
double IndexerParameters(const Architecture& arch, const ParameterCountOptions& options) {
  if (arch.index_heads <= 0 || arch.index_head_dim <= 0) return 0;
  const double h = static_cast<double>(arch.hidden_size);
  const double heads = arch.index_heads, d = arch.index_head_dim;
  const double query_in = arch.q_lora_rank > 0 ? arch.q_lora_rank : h;
  return query_in * heads * d + h * d + (options.include_norms ? 2 * d : 0) + h * heads;
}

// The rows of a learned position table: one per position, and OPT's offset.
double PositionRows(const Architecture& arch) {
  return static_cast<double>(arch.max_context_length) + arch.learned_position_offset;
}

// Learned position tables: one, or one per stack of an encoder-decoder
// (BART's encoder and decoder each have theirs).
int PositionTables(const Architecture& arch) { return arch.num_decoder_layers > 0 ? 2 : 1; }

struct Figures;

double AttentionExtras(const Architecture& arch, const Figures& f, const AttentionGeometry& s);

// Every figure of a count, before any text: CountParameters describes
// them, CountParameterTotals only adds them up.
struct Figures {
  double h = 0, a = 0, g = 0, d = 0, L = 0, V = 0;
  double attention = 0;  // per layer (Gemma 4: per sliding-window layer)
  // Gemma 4's full-attention layers at their own geometry, and how many.
  double global_attention = 0, global_layers = 0;
  bool qkv_bias = false, output_bias = false, qk_norm = false;
  double dense_f = 0, dense_layers = 0, moe_layers = 0, dense_mlp = 0;
  double expert = 0, per_moe_layer = 0, num_experts = 0;  // MoE only
  double router = 0, shared = 0;
  // Attention blocks (encoder-decoder: L + 2 x decoder layers); T5's
  // relative position bias tables.
  double attention_blocks = 0, relative_bias = 0;
  // Multi-head latent attention, per layer.
  double mla_query = 0, mla_key_value = 0, mla_output = 0, mla_norms = 0;
  // DeepSeek-V3.2's lightning indexer, per layer.
  double indexer = 0;
  // Multi-token-prediction modules, counted apart.
  double mtp = 0;
  // A hybrid's recurrent mixer, per layer, and its layers.
  double recurrent = 0, recurrent_layers = 0;
  double mlp_total = 0, mlp_active = 0;
  double per_norm = 0, norms = 0;
  int norms_per_layer = 0;
  // Layers that differ: the largest a layer could be (ParameterCount).
  double largest_layer = 0;
  double token_embedding = 0, embedding = 0, pooler = 0;
  // Gemma 4 E2B/E4B: the KV-shared layers' wider MLP and how many have it;
  // the per-layer inputs' embedding and the rest of their weights.
  double wide_mlp = 0, wide_mlp_layers = 0;
  double per_layer_embedding = 0, per_layer_inputs = 0;
  // Llama 3.2 Vision: the cross-attention layers' QK norms and gates (their
  // projections and MLPs are every layer's); the embedding's extra rows.
  double cross_attention_extras = 0, extra_embedding = 0;
};

// One attention block, not latent: q/k/v/o (no v_proj when its values
// come from k_proj; v_proj and o_proj at the value width, MiMo-V2-Flash's
// 128 beside 192), Qwen3-Next's output gate (q_proj yields a per-element
// gate, h x a x d more), biases, QK norms and sinks.
double StandardAttention(const Architecture& arch, const Figures& f, const AttentionGeometry& s) {
  const double h = f.h, a = s.query_heads, d = s.head_dim, dv = s.value_dim, g = s.kv_heads;
  const double values = s.has_values ? g * dv : 0;
  double p = h * a * d + h * g * d + h * values + a * dv * h;
  if (arch.attention_output_gate) p += h * a * d;
  if (f.qkv_bias) p += a * d + g * d + values;
  return p + AttentionExtras(arch, f, s);
}

// The output bias, QK norms, sinks and head-wise gate of an attention block
// (latent attention's too).
double AttentionExtras(const Architecture& arch, const Figures& f, const AttentionGeometry& s) {
  const double a = s.query_heads, d = s.head_dim, g = s.kv_heads;
  double p = 0;
  if (f.output_bias) p += f.h;
  if (f.qk_norm) p += arch.qk_norm_full_width ? (a + g) * d : 2 * d;
  if (s.sinks) p += a;
  // Step-3.5-Flash's g_proj: a sigmoid per head from the block's input.
  if (arch.attention_head_gate) p += f.h * a;
  return p;
}

// Every attention block's parameters.
double AttentionTotal(const Figures& f) {
  return f.attention * (f.attention_blocks - f.global_layers) +
         f.global_attention * f.global_layers;
}

// Norms per decoder layer of an encoder-decoder whose encoder layers have
// `encoder_norms` (two sub-blocks each): three sub-blocks of the same.
int DecoderNormsPerLayer(int encoder_norms) { return 3 * encoder_norms / 2; }

absl::StatusOr<Figures> Compute(const Architecture& arch, const ParameterCountOptions& options) {
  if (absl::Status s = CheckArchitectureShape(arch); !s.ok()) return s;
  if (arch.UsesMla() && (arch.qk_nope_head_dim <= 0 || arch.v_head_dim <= 0)) {
    return InvalidFieldError("architecture.qk_nope_head_dim",
                             "multi-head latent attention needs qk_nope_head_dim and v_head_dim");
  }
  Figures f;
  f.h = static_cast<double>(arch.hidden_size);
  f.a = arch.num_attention_heads;
  f.g = arch.EffectiveKvHeads();
  f.d = arch.EffectiveHeadDim();
  f.L = arch.num_layers;
  f.V = static_cast<double>(arch.vocab_size);
  const double h = f.h, a = f.a, d = f.d, L = f.L;

  f.qkv_bias = options.include_biases && arch.attention_qkv_bias;
  f.output_bias = options.include_biases && arch.attention_output_bias;
  f.qk_norm = options.include_norms && arch.qk_norm;
  // Attention per layer; Gemma 4's full-attention layers at their own
  // geometry (StandardAttention).
  f.attention = StandardAttention(arch, f, arch.AttentionOf(/*full=*/false));
  if (arch.HasGlobalGeometry()) {
    f.global_layers = arch.FullAttentionLayers();
    f.global_attention = StandardAttention(arch, f, arch.AttentionOf(/*full=*/true));
  }
  if (arch.UsesMla()) {
    // DeepSeek-V2/V3 (transformers DeepseekV3Attention): queries through a
    // LoRA (q_a_proj, its RMSNorm, q_b_proj) or one q_proj; keys and values
    // through kv_a_proj_with_mqa (compressed rank + the shared rotary key),
    // its RMSNorm and kv_b_proj; o_proj from the value heads.
    const double qk = arch.qk_nope_head_dim + arch.qk_rope_head_dim;
    const double ql = arch.q_lora_rank;
    const double kl = arch.kv_lora_rank;
    f.mla_query = ql > 0 ? h * ql + a * qk * ql : h * a * qk;
    f.mla_key_value =
        h * (kl + arch.qk_rope_head_dim) + kl * a * (arch.qk_nope_head_dim + arch.v_head_dim);
    f.mla_output = a * arch.v_head_dim * h;
    f.mla_norms = options.include_norms ? ql + kl : 0;
    f.attention = f.mla_query + f.mla_key_value + f.mla_output + f.mla_norms;
    f.indexer = IndexerParameters(arch, options);
    f.attention += f.indexer;
  }
  if (arch.UsesMla()) f.attention += AttentionExtras(arch, f, arch.AttentionOf(/*full=*/false));

  // MLP per layer: dense layers, then MoE layers.
  f.dense_f = static_cast<double>(arch.intermediate_size);
  const double moe_f = static_cast<double>(
      arch.moe_intermediate_size > 0 ? arch.moe_intermediate_size : arch.intermediate_size);
  // Encoder-decoder (T5): the decoder's blocks add an MLP each, and two
  // attentions (self and cross) each.
  const double Ld = arch.num_decoder_layers;
  // A hybrid counts attention, MLPs and its recurrent mixer by the layers
  // that have each.
  const double Lm = arch.MlpLayers();
  f.attention_blocks =
      arch.IsHybrid() || arch.HasLayerWidths() ? arch.AttentionLayers() : L + 2 * Ld;
  f.dense_layers = arch.IsMoe() ? std::min<double>(arch.num_dense_layers, Lm)
                                : (arch.IsHybrid() || arch.HasLayerWidths() ? Lm : L + Ld);
  f.moe_layers = arch.IsMoe() ? Lm - f.dense_layers : 0;
  if (arch.IsHybrid()) {
    f.recurrent = RecurrentParameters(arch, options, nullptr);
    f.recurrent_layers = arch.num_recurrent_layers;
  }
  f.dense_mlp = MlpParameters(arch, f.dense_f, options.include_biases);
  if (arch.kv_shared_layers_double_mlp) {
    // Gemma 4 E2B: the KV-shared layers' MLPs are 2 x intermediate_size
    // (Gemma4TextMLP with use_double_wide_mlp).
    f.wide_mlp_layers = arch.num_kv_shared_layers;
    f.wide_mlp = MlpParameters(arch, 2 * f.dense_f, options.include_biases);
  }
  f.mlp_total = f.dense_mlp * (f.dense_layers - f.wide_mlp_layers) + f.wide_mlp * f.wide_mlp_layers;
  if (arch.HasLayerWidths()) {
    // Nemotron-NAS (DeciLMDecoderLayer): each layer's MLP at its own width,
    // none where its ffn is a no-op.
    f.mlp_total = 0;
    for (int64_t width : arch.layer_mlp_widths) {
      if (width > 0) {
        f.mlp_total += MlpParameters(arch, static_cast<double>(width), options.include_biases);
      }
    }
  }
  f.mlp_active = f.mlp_total;
  if (f.moe_layers > 0) {
    f.expert = MlpParameters(arch, moe_f, options.include_biases);
    f.num_experts = arch.num_experts;
    f.router = h * arch.num_experts + (arch.router_bias ? arch.num_experts : 0) +
               (arch.router_scales ? h + arch.num_experts : 0);
    const double router = f.router;
    // Shared experts: DeepSeek's n_shared_experts as wide as a routed one;
    // Qwen2-MoE's one shared expert of its own width, behind a sigmoid gate.
    f.shared = arch.shared_expert_intermediate_size > 0
                   ? MlpParameters(arch, static_cast<double>(arch.shared_expert_intermediate_size),
                                   options.include_biases) *
                         std::max(1, arch.num_shared_experts)
                   : f.expert * arch.num_shared_experts;
    if (arch.shared_expert_gate) f.shared += h;
    const double shared = f.shared;
    f.per_moe_layer = f.expert * arch.num_experts + router + shared;
    const double active_per_layer = f.expert * arch.num_experts_per_token + router + shared;
    f.mlp_total += f.per_moe_layer * f.moe_layers;
    f.mlp_active += active_per_layer * f.moe_layers;
  }

  // Norms: two per layer (or as many as the block has) and a final one
  // (for post-norm encoders such as BERT, the embedding norm takes its place).
  if (options.include_norms) {
    f.per_norm = NormParameterVectors(arch) * h;
    f.norms_per_layer = arch.norms_per_layer > 0 ? arch.norms_per_layer : 2;
    // Nemotron-NAS: input_layernorm only before an attention,
    // post_attention_layernorm only before an MLP.
    const double layer_norms =
        arch.HasLayerWidths() ? arch.AttentionLayers() + arch.MlpLayers() : f.norms_per_layer * L;
    f.norms = f.per_norm * (layer_norms + 1 + (arch.embedding_norm ? 1 : 0));
    // A decoder block's self attention, cross attention and MLP each have
    // the norms an encoder sub-block has (T5: 1, 3 a layer; T5Gemma: 2,
    // pre and post, 6 a layer); and a final one, and one after its
    // embedding where the encoder has one (mBART).
    if (Ld > 0) {
      f.norms += f.per_norm *
                 (DecoderNormsPerLayer(f.norms_per_layer) * Ld + 1 + (arch.embedding_norm ? 1 : 0));
    }
  }

  if (arch.HasLayerWidths()) {
    // No layer holds more than an attention, the widest MLP and the norm
    // before each (what sizes a pipeline stage or a card of a layer split).
    const int64_t widest =
        *std::max_element(arch.layer_mlp_widths.begin(), arch.layer_mlp_widths.end());
    f.largest_layer = f.attention +
                      MlpParameters(arch, static_cast<double>(widest), options.include_biases) +
                      2 * f.per_norm;
  }

  // MllamaCrossAttentionDecoderLayer: q_norm and k_norm (RMSNorms of the
  // head width) and the tanh gates cross_attn_attn_gate and
  // cross_attn_mlp_gate (one parameter each).
  f.cross_attention_extras =
      arch.num_cross_attention_layers * ((options.include_norms ? 2 * d : 0) + 2);

  // Embeddings: tokens, an untied output head, learned positions, token types.
  f.token_embedding = f.V * h;
  f.extra_embedding = static_cast<double>(arch.extra_embedding_rows) * h;
  f.embedding = f.token_embedding + f.extra_embedding;
  if (!arch.tie_word_embeddings) f.embedding += f.token_embedding + OutputHeadBias(arch, options);
  if (arch.separate_encoder_embedding && Ld > 0) f.embedding += f.token_embedding;
  if (arch.learned_positions) f.embedding += PositionRows(arch) * h * PositionTables(arch);
  if (arch.type_vocab_size > 0) f.embedding += static_cast<double>(arch.type_vocab_size) * h;
  if (arch.pooler) f.pooler = h * h + h;
  if (arch.per_layer_input_size > 0) {
    // Gemma 4 E2B/E4B (Gemma4TextModel): embed_tokens_per_layer, rows x
    // (layers x P), an embedding; per_layer_model_projection (layers x P) x
    // h and its norm of P; in every layer per_layer_input_gate h x P,
    // per_layer_projection P x h and post_per_layer_input_norm h.
    const double P = arch.per_layer_input_size;
    f.per_layer_embedding = static_cast<double>(arch.per_layer_input_vocab_size) * L * P;
    f.embedding += f.per_layer_embedding;
    const double norms = options.include_norms ? 1 : 0;
    f.per_layer_inputs = L * P * h + norms * P + L * (2 * h * P + norms * h);
  }
  if (arch.relative_attention_buckets > 0) {
    f.relative_bias = static_cast<double>(arch.relative_attention_buckets) * a *
                      (arch.num_decoder_layers > 0 ? 2 : 1);
  }

  // DeepSeek-V3's multi-token-prediction module (its checkpoint's layer
  // num_layers): one more block, two RMSNorms (enorm, hnorm), the 2h x h
  // projection eh_proj, and its own copies of the embedding, final norm and
  // output head (shared_head); not part of the model that generates.
  if (arch.num_mtp_layers > 0) {
    // Step-3.5-Flash's layers: a sliding-window attention block and a dense
    // MLP of intermediate_size (its README: "a sliding-window attention
    // mechanism and a dense Feed-Forward Network").
    const bool moe_block = f.moe_layers > 0 && !arch.mtp_dense_mlp;
    const double block = f.attention + (moe_block ? f.per_moe_layer : f.dense_mlp) +
                         (options.include_norms ? 2 * f.per_norm : 0);
    const double extra_norms = options.include_norms ? 3 * h : 0;
    // Qwen3-Next's module (mtp.fc, pre_fc_norm_embedding, pre_fc_norm_hidden,
    // mtp.norm, one full-attention MoE layer) uses the model's embedding and
    // output head; Step-3.5-Flash's the embedding only (shared_head.output
    // is each layer's own).
    const double own_embeddings = arch.mtp_shares_embeddings ? 0
                                  : arch.mtp_own_output_head ? f.V * h
                                                             : 2 * f.V * h;
    f.mtp = arch.num_mtp_layers * (block + extra_norms + 2 * h * h + own_embeddings);
  }
  return f;
}

ParameterCount Totals(const Figures& f) {
  ParameterCount count;
  count.embedding = f.embedding;
  count.non_embedding = AttentionTotal(f) + f.recurrent * f.recurrent_layers + f.mlp_total +
                        f.norms + f.pooler + f.relative_bias + f.per_layer_inputs +
                        f.cross_attention_extras;
  count.total = count.embedding + count.non_embedding;
  count.active = count.total - f.mlp_total + f.mlp_active;
  count.multi_token_prediction = f.mtp;
  count.moe_layers = static_cast<int>(f.moe_layers);
  count.routed_expert_parameters = f.moe_layers > 0 ? f.expert * f.num_experts * f.moe_layers : 0;
  count.largest_layer = f.largest_layer;
  return count;
}

// " + 2x256 (QK norms)" for a heads of width d over g KV heads.
std::string QkNormsText(const Architecture& arch, double a, double d, double g) {
  return arch.qk_norm_full_width
             ? absl::StrCat(" + (", Int(a), "+", Int(g), ")x", Int(d), " (QK norms)")
             : absl::StrCat(" + 2x", Int(d), " (QK norms)");
}

// StandardAttention's arithmetic, term by term.
std::string StandardAttentionText(const Architecture& arch, const Figures& f,
                                  const AttentionGeometry& s) {
  const double h = f.h, a = s.query_heads, d = s.head_dim, dv = s.value_dim, g = s.kv_heads;
  std::string text;
  if (!s.has_values) {
    text = absl::StrCat(Int(h), "x", Int(a), "x", Int(d), " (Q) + ", Int(h), "x", Int(g), "x",
                        Int(d), " (K; values from the keys: no V) + ");
  } else if (dv == d) {
    text = absl::StrCat(Int(h), "x", Int(a), "x", Int(d), " (Q) + 2x", Int(h), "x", Int(g), "x",
                        Int(d), " (K,V) + ");
  } else {
    text = absl::StrCat(Int(h), "x", Int(a), "x", Int(d), " (Q) + ", Int(h), "x", Int(g), "x",
                        Int(d), " (K) + ", Int(h), "x", Int(g), "x", Int(dv), " (V) + ");
  }
  absl::StrAppend(&text, Int(a), "x", Int(dv), "x", Int(h), " (O)");
  if (f.qkv_bias) {
    absl::StrAppend(&text, " + ", Int(a * d + g * d + (s.has_values ? g * dv : 0)),
                    " (QKV biases)");
  }
  if (f.output_bias) absl::StrAppend(&text, " + ", Int(h), " (O bias)");
  if (f.qk_norm) absl::StrAppend(&text, QkNormsText(arch, a, d, g));
  if (s.sinks) absl::StrAppend(&text, " + ", Int(a), " (sinks)");
  if (arch.attention_output_gate) {
    absl::StrAppend(&text, " + ", Int(h), "x", Int(a), "x", Int(d), " (output gate)");
  }
  if (arch.attention_head_gate) {
    absl::StrAppend(&text, " + ", Int(h), "x", Int(a), " (head-wise gate)");
  }
  return text;
}

// Nemotron-NAS's MLPs by width, widest first: "3x8192x28672 = ... per
// layer x 42 layers + ...", and the layers without one.
std::string LayerWidthsText(const Architecture& arch, const Figures& f, bool biases) {
  std::map<int64_t, int, std::greater<int64_t>> layers_of_width;
  for (int64_t width : arch.layer_mlp_widths) ++layers_of_width[width];
  std::string text;
  const int matrices = arch.gated_mlp ? 3 : 2;
  for (const auto& [width, layers] : layers_of_width) {
    if (width == 0) continue;
    const double one = MlpParameters(arch, static_cast<double>(width), biases);
    const double bias = one - matrices * f.h * static_cast<double>(width);
    absl::StrAppend(&text, text.empty() ? "" : " + ", matrices, "x", Int(f.h), "x", width,
                    bias > 0 ? absl::StrCat(" + ", Int(bias), " (biases)") : std::string(), " = ",
                    Int(one), " per layer x ", layers, layers == 1 ? " layer" : " layers");
  }
  if (auto none = layers_of_width.find(0); none != layers_of_width.end()) {
    absl::StrAppend(&text, "; ", none->second, " layers without an MLP (a no-op)");
  }
  return text;
}

// The components of a count, each with the arithmetic that produced it.
std::vector<ParameterComponent> Components(const Architecture& arch, const Figures& f,
                                           const ParameterCountOptions& options) {
  const double h = f.h, a = f.a, g = f.g, d = f.d, L = f.L, V = f.V;
  std::vector<ParameterComponent> components;
  components.reserve(8);

  std::string attention = StandardAttentionText(arch, f, arch.AttentionOf(/*full=*/false));
  const std::string qk_norms = QkNormsText(arch, a, d, g);
  if (arch.UsesMla()) {
    const int qk = arch.qk_nope_head_dim + arch.qk_rope_head_dim;
    attention = absl::StrCat(
        "MLA: ",
        arch.q_lora_rank > 0 ? absl::StrCat(Int(h), "x", arch.q_lora_rank, " + ", arch.q_lora_rank,
                                            "x", Int(a), "x", qk, " (Q LoRA)")
                             : absl::StrCat(Int(h), "x", Int(a), "x", qk, " (Q)"),
        " + ", Int(h), "x(", arch.kv_lora_rank, "+", arch.qk_rope_head_dim, ") + ",
        arch.kv_lora_rank, "x", Int(a), "x(", arch.qk_nope_head_dim, "+", arch.v_head_dim,
        ") (KV LoRA) + ", Int(a), "x", arch.v_head_dim, "x", Int(h), " (O)",
        f.mla_norms > 0 ? absl::StrCat(" + ", Int(f.mla_norms), " (LoRA norms)") : "",
        f.indexer > 0
            ? absl::StrCat(
                  " + indexer ", Int(arch.q_lora_rank > 0 ? arch.q_lora_rank : h), "x",
                  arch.index_heads, "x", arch.index_head_dim, " (Q) + ", Int(h), "x",
                  arch.index_head_dim, " (K)",
                  options.include_norms ? absl::StrCat(" + ", 2 * arch.index_head_dim, " (K norm)")
                                        : "",
                  " + ", Int(h), "x", arch.index_heads, " (head weights) = ", Int(f.indexer))
            : "");
    if (f.qk_norm) absl::StrAppend(&attention, qk_norms);
  }
  if (arch.IsHybrid()) {
    std::string mixer;
    RecurrentParameters(arch, options, &mixer);
    components.push_back(
        {"recurrent_mixer", f.recurrent * f.recurrent_layers,
         absl::StrCat("(", mixer, ") per layer x ", Int(f.recurrent_layers), " layers")});
  }
  if (f.attention_blocks > 0) {
    components.push_back(
        {"attention", AttentionTotal(f),
         absl::StrCat(
             "(", attention, ") = ", Int(f.attention), " per layer x ",
             Int(f.attention_blocks - 2 * arch.num_decoder_layers - f.global_layers),
             f.global_layers > 0 ? " sliding-window layers" : " layers",
             f.global_layers > 0
                 ? absl::StrCat(" + (",
                                StandardAttentionText(arch, f, arch.AttentionOf(/*full=*/true)),
                                ") = ", Int(f.global_attention), " per layer x ",
                                Int(f.global_layers), " full-attention layers")
                 : std::string(),
             arch.num_decoder_layers > 0 ? absl::StrCat(" + 2 x ", arch.num_decoder_layers,
                                                        " decoder layers (self and cross)")
                                         : std::string())});
  }
  if (f.relative_bias > 0) {
    components.push_back(
        {"relative_position_bias", f.relative_bias,
         absl::StrCat(arch.relative_attention_buckets, " buckets x ", Int(a), " heads x ",
                      arch.num_decoder_layers > 0 ? 2 : 1, " stacks")});
  }

  // The biases a dense MLP adds to its matrices (GPT-2, Pythia, Phi).
  const double dense_mlp_biases = f.dense_mlp - (arch.gated_mlp ? 3 : 2) * h * f.dense_f;
  std::string mlp =
      f.dense_layers > 0
          ? absl::StrCat(
                arch.gated_mlp ? "3" : "2", "x", Int(h), "x", Int(f.dense_f),
                dense_mlp_biases > 0 ? absl::StrCat(" + ", Int(dense_mlp_biases), " (biases)")
                                     : std::string(),
                " = ", Int(f.dense_mlp), " per layer x ", Int(f.dense_layers - f.wide_mlp_layers),
                " layers",
                f.wide_mlp_layers > 0
                    ? absl::StrCat(" + ", arch.gated_mlp ? "3" : "2", "x", Int(h), "x",
                                   Int(2 * f.dense_f), " = ", Int(f.wide_mlp), " per layer x ",
                                   Int(f.wide_mlp_layers), " KV-shared layers (twice as wide)")
                    : std::string())
          : std::string();
  if (arch.HasLayerWidths()) mlp = LayerWidthsText(arch, f, options.include_biases);
  if (f.moe_layers > 0) {
    absl::StrAppend(
        &mlp, f.dense_layers > 0 ? "; " : "", arch.num_experts, " experts x ", Int(f.expert),
        " + router ", Int(h), "x", arch.num_experts,
        arch.router_bias ? absl::StrCat(" + ", arch.num_experts, " (router bias)") : std::string(),
        arch.router_scales
            ? absl::StrCat(" + ", Int(h), " + ", arch.num_experts, " (router scales)")
            : std::string(),
        f.shared > 0 ? absl::StrCat(" + shared experts ", Int(f.shared),
                                    arch.shared_expert_gate ? " (with their gate)" : "")
                     : std::string(),
        " = ", Int(f.per_moe_layer), " per MoE layer x ", Int(f.moe_layers), " layers (",
        arch.num_experts_per_token, " experts active per token)");
  }
  if (f.mlp_total > 0 || !arch.IsHybrid()) components.push_back({"mlp", f.mlp_total, mlp});

  if (f.norms_per_layer > 0 && arch.HasLayerWidths()) {
    components.push_back(
        {"norms", f.norms,
         absl::StrCat(Int(f.per_norm), " (", NormName(arch), ") x (", arch.AttentionLayers(),
                      " before an attention + ", arch.MlpLayers(), " before an MLP + 1 final",
                      arch.embedding_norm ? " + 1 after the embedding" : "", ")")});
  } else if (f.norms_per_layer > 0) {
    components.push_back(
        {"norms", f.norms,
         absl::StrCat(Int(f.per_norm), " (", NormName(arch), ") x (", f.norms_per_layer, "x",
                      Int(L), " + 1 final", arch.embedding_norm ? " + 1 after the embedding" : "",
                      arch.num_decoder_layers > 0
                          ? absl::StrCat("; decoder ", DecoderNormsPerLayer(f.norms_per_layer), "x",
                                         arch.num_decoder_layers, " + 1 final",
                                         arch.embedding_norm ? " + 1 after the embedding" : "")
                          : std::string(),
                      ")")});
  }

  if (f.cross_attention_extras > 0) {
    components.push_back(
        {"cross_attention", f.cross_attention_extras,
         absl::StrCat(arch.num_cross_attention_layers, " cross-attention layers x (",
                      options.include_norms ? absl::StrCat("2x", Int(d), " (QK norms) + ") : "",
                      "2 (attention and MLP gates)); their projections and MLPs are counted "
                      "with every layer's")});
  }
  components.push_back({"token_embedding", f.token_embedding + f.extra_embedding,
                        f.extra_embedding > 0
                            ? absl::StrCat("(", Int(V), " vocab + ", arch.extra_embedding_rows,
                                           " rows the output head lacks) x ", Int(h))
                            : absl::StrCat(Int(V), " vocab x ", Int(h))});
  if (arch.separate_encoder_embedding && arch.num_decoder_layers > 0) {
    components.push_back({"encoder_token_embedding", f.token_embedding,
                          absl::StrCat(Int(V), " vocab x ", Int(h),
                                       " (the encoder's own; the decoder's is the line above)")});
  }
  if (!arch.tie_word_embeddings) {
    const double head_bias = OutputHeadBias(arch, options);
    components.push_back(
        {"output_head", f.token_embedding + head_bias,
         absl::StrCat(Int(V), " vocab x ", Int(h),
                      head_bias > 0 ? absl::StrCat(" + ", Int(V), " (bias)") : "", " (not tied)")});
  }
  if (arch.learned_positions) {
    const int tables = PositionTables(arch);
    components.push_back(
        {"position_embedding", PositionRows(arch) * h * tables,
         absl::StrCat(arch.learned_position_offset > 0
                          ? absl::StrCat("(", arch.max_context_length, " positions + ",
                                         arch.learned_position_offset, " offset rows) x ", Int(h))
                          : absl::StrCat(arch.max_context_length, " positions x ", Int(h)),
                      tables > 1 ? " x 2 stacks (encoder and decoder)" : "")});
  }
  if (arch.type_vocab_size > 0) {
    components.push_back({"token_type_embedding", static_cast<double>(arch.type_vocab_size) * h,
                          absl::StrCat(arch.type_vocab_size, " token types x ", Int(h))});
  }
  if (f.per_layer_embedding > 0) {
    const double P = arch.per_layer_input_size;
    components.push_back({"per_layer_embedding", f.per_layer_embedding,
                          absl::StrCat(arch.per_layer_input_vocab_size, " vocab x (", Int(L),
                                       " layers x ", Int(P), ")")});
    components.push_back(
        {"per_layer_inputs", f.per_layer_inputs,
         absl::StrCat("projection ", Int(L * P), "x", Int(h),
                      options.include_norms ? absl::StrCat(" + norm ", Int(P)) : "", " + ", Int(L),
                      " layers x (gate ", Int(h), "x", Int(P), " + projection ", Int(P), "x",
                      Int(h), options.include_norms ? absl::StrCat(" + norm ", Int(h)) : "", ")")});
  }
  if (arch.pooler) {
    components.push_back(
        {"pooler", f.pooler, absl::StrCat(Int(h), "x", Int(h), " + ", Int(h), " (bias)")});
  }
  return components;
}

}  // namespace

absl::StatusOr<ParameterCount> CountParameters(const Architecture& arch,
                                               const ParameterCountOptions& options) {
  absl::StatusOr<Figures> figures = Compute(arch, options);
  if (!figures.ok()) return figures.status();
  ParameterCount count = Totals(*figures);
  count.components = Components(arch, *figures, options);
  return count;
}

absl::StatusOr<ParameterCount> CountParameterTotals(const Architecture& arch,
                                                    const ParameterCountOptions& options) {
  absl::StatusOr<Figures> figures = Compute(arch, options);
  if (!figures.ok()) return figures.status();
  return Totals(*figures);
}

}  // namespace modelatlas::estimator
