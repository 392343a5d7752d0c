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

}  // namespace modelatlas::estimator::testing
