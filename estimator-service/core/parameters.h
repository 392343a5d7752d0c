// Parameter count of a decoder-only transformer from its shape
// (docs/FORMULAS.md; ../shared/docs/REFERENCE.md section 4):
//   attention  h*a*d (Q) + 2*h*g*d (K, V) + a*d*h (O), plus biases
//   MLP        2*h*f (plain) or 3*h*f (gated); MoE: E experts + router h*E
//   norms      h (RMSNorm) or 2h (LayerNorm) each, two per layer and a final one
//   embeddings V*h, once more when the output head is not tied; learned
//              positions add ctx*h
//   multi-head latent attention (DeepSeek-V2/V3) through its LoRA
//   projections; encoder-decoder (T5) decoder blocks with cross attention;
//   a multi-token-prediction module counted apart
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "estimator-service/core/architecture.h"

namespace modelatlas::estimator {

struct ParameterCountOptions {
  // Count normalization weights. Off reproduces simplified counts that
  // ignore them (the T2R seed page: 668,893,184).
  bool include_norms = true;
  // Count the biases the architecture declares.
  bool include_biases = true;
};

struct ParameterComponent {
  std::string name;
  double parameters = 0;
  std::string arithmetic;
};

struct ParameterCount {
  double total = 0;
  // Token embedding plus an untied output head plus learned positions.
  double embedding = 0;
  double non_embedding = 0;
  // Parameters used per token: differs from total for MoE.
  double active = 0;
  // Multi-token-prediction modules a checkpoint ships (DeepSeek-V3), not in
  // `total`: the model that generates does not use them. A checkpoint's file
  // holds total + multi_token_prediction.
  double multi_token_prediction = 0;
  // Mixture of experts: the routed experts' parameters of every MoE layer
  // (experts x one expert's MLP x MoE layers; the shared experts and the
  // router are not routed) and the layers with experts; 0 for a dense model.
  // Expert parallelism splits these over its cards (core/fit_matrix.h).
  double routed_expert_parameters = 0;
  int moe_layers = 0;
  // Layers that differ (Nemotron-NAS): the parameters of the largest a
  // layer could be (its attention, the widest MLP and their norms); 0 when
  // the layers are alike.
  double largest_layer = 0;
  std::vector<ParameterComponent> components;
};

// The shape checks every count makes, without counting: INVALID_ARGUMENT
// naming each field that is missing, out of range or inconsistent (layer
// kinds, heads, experts, positions, the checkpoint's format), OK otherwise.
absl::Status CheckArchitectureShape(const Architecture& arch);

// INVALID_ARGUMENT naming the field when the shape is incomplete (for
// multi-head latent attention: qk_nope_head_dim and v_head_dim too).
absl::StatusOr<ParameterCount> CountParameters(const Architecture& arch,
                                               const ParameterCountOptions& options = {});
// The same count without its components (their arithmetic text costs more
// than the count): for answers that need only the totals, such as a
// whole-catalog fit matrix.
absl::StatusOr<ParameterCount> CountParameterTotals(const Architecture& arch,
                                                    const ParameterCountOptions& options = {});

}  // namespace modelatlas::estimator
