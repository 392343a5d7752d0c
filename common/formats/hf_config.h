// Reads a Hugging Face config.json into the catalog's Architecture record.
//
// Key names differ between families (num_hidden_layers / n_layer,
// hidden_size / n_embd, num_local_experts / num_experts / n_routed_experts,
// ...) and so do defaults that decide the parameter count (tied embeddings,
// gated MLP, biases, norm type, norms per block); both are mapped here per
// `model_type`, after the transformers configuration classes.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "modelatlas/common/v1/model.pb.h"

namespace modelatlas {

// Longest config.json accepted, bytes.
inline constexpr size_t kMaxHfConfigBytes = 1 << 20;

// INVALID_ARGUMENT (field "hf_config_json") for malformed JSON, JSON nested
// deeper than kMaxJsonDepth (32) levels, or a missing required key; UNIMPLEMENTED for
// encoder-decoder and other families whose layers this reader does not know (it names the
// model_type).
absl::StatusOr<common::v1::Architecture> ArchitectureFromHfConfig(absl::string_view json);

// Every config.json model_type the reader counts (language models, state-space
// models and multimodal wrappers), sorted.
std::vector<std::string> HfConfigModelTypes();

}  // namespace modelatlas
