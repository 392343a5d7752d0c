#include "estimator-service/core/parameters.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/errors.h"
#include "estimator-service/core/arithmetic_text.h"

namespace modelatlas::estimator {
namespace {

std::string Int(double value) { return WholeNumber(value); }

// One MLP (or one expert) of inner width f.
double MlpParameters(const Architecture& arch, double f, bool biases) {
  const double h = static_cast<double>(arch.hidden_size);
  const double matrices = (arch.gated_mlp ? 3 : 2) * h * f;
  if (!biases || !arch.mlp_bias) return matrices;
  return matrices + (arch.gated_mlp ? 2 * f : f) + h;
}

absl::Status CheckShape(const Architecture& arch) {
  FieldViolations violations;
  if (arch.num_layers <= 0) violations.Add("architecture.num_layers", "must be positive");
  if (arch.hidden_size <= 0) violations.Add("architecture.hidden_size", "must be positive");
  if (arch.num_attention_heads <= 0) {
    violations.Add("architecture.num_attention_heads", "must be positive");
  } else if (arch.EffectiveKvHeads() <= 0 ||
             arch.num_attention_heads % arch.EffectiveKvHeads() != 0) {
    violations.Add("architecture.num_key_value_heads", "must divide num_attention_heads");
  }
  if (arch.intermediate_size <= 0 && arch.moe_intermediate_size <= 0) {
    violations.Add("architecture.intermediate_size", "must be positive");
  }
  if (arch.vocab_size <= 0) violations.Add("architecture.vocab_size", "must be positive");
  if (arch.IsMoe() &&
      (arch.num_experts_per_token <= 0 || arch.num_experts_per_token > arch.num_experts)) {
    violations.Add("architecture.num_experts_per_token", "must be between 1 and num_experts");
  }
  if (arch.learned_positions && arch.max_context_length <= 0) {
    violations.Add("architecture.max_context_length",
                   "must be positive for learned position embeddings");
  }
  return violations.ToStatus();
}

}  // namespace

absl::StatusOr<ParameterCount> CountParameters(const Architecture& arch,
                                               const ParameterCountOptions& options) {
  if (absl::Status s = CheckShape(arch); !s.ok()) return s;
  if (arch.UsesMla()) {
    return absl::UnimplementedError(
        "parameter counting for multi-head latent attention is not implemented; use the "
        "published parameter count");
  }
  const double h = static_cast<double>(arch.hidden_size);
  const double a = arch.num_attention_heads;
  const double g = arch.EffectiveKvHeads();
  const double d = arch.EffectiveHeadDim();
  const double L = arch.num_layers;
  const double V = static_cast<double>(arch.vocab_size);
  ParameterCount count;

  // Attention per layer.
  double attention = h * a * d + 2 * h * g * d + a * d * h;
  std::string attention_arithmetic =
      absl::StrCat(Int(h), "x", Int(a), "x", Int(d), " (Q) + 2x", Int(h), "x", Int(g), "x", Int(d),
                   " (K,V) + ", Int(a), "x", Int(d), "x", Int(h), " (O)");
  if (options.include_biases && arch.attention_qkv_bias) {
    attention += a * d + 2 * g * d;
    absl::StrAppend(&attention_arithmetic, " + ", Int(a * d + 2 * g * d), " (QKV biases)");
  }
  if (options.include_biases && arch.attention_output_bias) {
    attention += h;
    absl::StrAppend(&attention_arithmetic, " + ", Int(h), " (O bias)");
  }
  if (options.include_norms && arch.qk_norm) {
    attention += 2 * d;
    absl::StrAppend(&attention_arithmetic, " + 2x", Int(d), " (QK norms)");
  }
  count.components.push_back({"attention", attention * L,
                              absl::StrCat("(", attention_arithmetic, ") = ", Int(attention),
                                           " per layer x ", Int(L), " layers")});

  // MLP per layer: dense layers, then MoE layers.
  const double dense_f = static_cast<double>(arch.intermediate_size);
  const double moe_f = static_cast<double>(
      arch.moe_intermediate_size > 0 ? arch.moe_intermediate_size : arch.intermediate_size);
  const double dense_layers = arch.IsMoe() ? std::min<double>(arch.num_dense_layers, L) : L;
  const double moe_layers = L - dense_layers;
  const double dense_mlp = MlpParameters(arch, dense_f, options.include_biases);
  double mlp_total = dense_mlp * dense_layers;
  double mlp_active = mlp_total;
  std::string mlp_arithmetic =
      dense_layers > 0
          ? absl::StrCat(arch.gated_mlp ? "3" : "2", "x", Int(h), "x", Int(dense_f), " = ",
                         Int(dense_mlp), " per layer x ", Int(dense_layers), " layers")
          : std::string();
  if (moe_layers > 0) {
    const double expert = MlpParameters(arch, moe_f, options.include_biases);
    const double router = h * arch.num_experts;
    const double shared = expert * arch.num_shared_experts;
    const double per_layer = expert * arch.num_experts + router + shared;
    const double active_per_layer = expert * arch.num_experts_per_token + router + shared;
    mlp_total += per_layer * moe_layers;
    mlp_active += active_per_layer * moe_layers;
    absl::StrAppend(&mlp_arithmetic, dense_layers > 0 ? "; " : "", arch.num_experts, " experts x ",
                    Int(expert), " + router ", Int(h), "x", arch.num_experts,
                    arch.num_shared_experts > 0
                        ? absl::StrCat(" + ", arch.num_shared_experts, " shared x ", Int(expert))
                        : std::string(),
                    " = ", Int(per_layer), " per MoE layer x ", Int(moe_layers), " layers (",
                    arch.num_experts_per_token, " experts active per token)");
  }
  count.components.push_back({"mlp", mlp_total, mlp_arithmetic});

  // Norms: two per layer (or as many as the block has) and a final one
  // (for post-norm encoders such as BERT, the embedding norm takes its place).
  double norms = 0;
  if (options.include_norms) {
    const double per_norm = arch.layer_norm ? 2 * h : h;
    const int per_layer = arch.norms_per_layer > 0 ? arch.norms_per_layer : 2;
    norms = per_norm * (per_layer * L + 1);
    count.components.push_back(
        {"norms", norms,
         absl::StrCat(Int(per_norm), " (", arch.layer_norm ? "LayerNorm" : "RMSNorm", ") x (",
                      per_layer, "x", Int(L), " + 1 final)")});
  }

  // Embeddings.
  const double token_embedding = V * h;
  count.components.push_back(
      {"token_embedding", token_embedding, absl::StrCat(Int(V), " vocab x ", Int(h))});
  double embedding = token_embedding;
  if (!arch.tie_word_embeddings) {
    count.components.push_back(
        {"output_head", token_embedding, absl::StrCat(Int(V), " vocab x ", Int(h), " (not tied)")});
    embedding += token_embedding;
  }
  if (arch.learned_positions) {
    const double positions = static_cast<double>(arch.max_context_length) * h;
    count.components.push_back({"position_embedding", positions,
                                absl::StrCat(arch.max_context_length, " positions x ", Int(h))});
    embedding += positions;
  }

  if (arch.type_vocab_size > 0) {
    const double types = static_cast<double>(arch.type_vocab_size) * h;
    count.components.push_back({"token_type_embedding", types,
                                absl::StrCat(arch.type_vocab_size, " token types x ", Int(h))});
    embedding += types;
  }
  double pooler = 0;
  if (arch.pooler) {
    pooler = h * h + h;
    count.components.push_back(
        {"pooler", pooler, absl::StrCat(Int(h), "x", Int(h), " + ", Int(h), " (bias)")});
  }

  count.embedding = embedding;
  count.non_embedding = attention * L + mlp_total + norms + pooler;
  count.total = count.embedding + count.non_embedding;
  count.active = count.total - mlp_total + mlp_active;
  return count;
}

}  // namespace modelatlas::estimator
