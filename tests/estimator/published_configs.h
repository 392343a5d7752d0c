// config.json texts of published checkpoints that several accuracy tests
// read (the counts and the file sizes of the same models).
#pragma once

#include <string>

#include "absl/strings/str_cat.h"

namespace modelatlas::estimator::testing {

// https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json: 24
// layers, 32 experts (-120b: 36 layers, 128 experts), sliding and full
// attention alternating.
inline std::string GptOssConfigJson(int layers, int experts) {
  std::string types;
  for (int i = 0; i < layers; ++i) {
    absl::StrAppend(&types, i ? ", " : "",
                    i % 2 == 0 ? "\"sliding_attention\"" : "\"full_attention\"");
  }
  return absl::StrCat(
      R"({"model_type": "gpt_oss", "hidden_size": 2880, "intermediate_size": 2880,)",
      R"( "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64,)",
      R"( "num_experts_per_tok": 4, "vocab_size": 201088, "sliding_window": 128,)",
      R"( "attention_bias": true, "tie_word_embeddings": false,)",
      R"( "max_position_embeddings": 131072, "num_hidden_layers": )", layers,
      R"(, "num_local_experts": )", experts, R"(, "layer_types": [)", types, "]}");
}

// Qwen/Qwen3-Next-80B-A3B-Instruct config.json (the keys that decide the
// count; transformers Qwen3NextConfig).
inline constexpr char kQwen3Next80BConfigJson[] = R"({
  "model_type": "qwen3_next", "hidden_size": 2048, "num_hidden_layers": 48,
  "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
  "intermediate_size": 5120, "vocab_size": 151936, "tie_word_embeddings": false,
  "num_experts": 512, "num_experts_per_tok": 10, "moe_intermediate_size": 512,
  "shared_expert_intermediate_size": 512, "decoder_sparse_step": 1, "mlp_only_layers": [],
  "full_attention_interval": 4, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128,
  "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_value_head_dim": 128,
  "max_position_embeddings": 262144})";

}  // namespace modelatlas::estimator::testing
