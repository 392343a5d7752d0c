// Plan inputs the plan tests share (prepared records, the hand-written
// cards): sizings of known models, written once.
#pragma once

#include "estimator-service/core/plan.h"

namespace modelatlas::estimator {

// Llama 3.1 8B in bf16 at 8,192 tokens with a 1,000-token prompt: one card
// on most records.
inline PlanInput Llama31_8BInBf16() {
  PlanInput input;
  input.sizing.weight_bytes = 16060522496;
  input.sizing.kv_cache_bytes = 1073741824;
  input.sizing.activation_bytes = 44553216;
  input.sizing.overhead_bytes = 1073741824;
  input.sizing.parameters = 8030261248;
  input.sizing.num_attention_heads = 32;
  input.sizing.num_key_value_heads = 8;
  input.sizing.num_layers = 32;
  input.sizing.num_largest_layers = 32;
  input.workload.prompt_tokens = 1000;
  return input;
}

// About 405B parameters in bf16 (Llama 3.1 405B's shape): many cards,
// pipeline stages.
inline PlanInput About405BInBf16() {
  PlanInput input = Llama31_8BInBf16();
  input.sizing.weight_bytes = 2 * 405.85e9;
  input.sizing.parameters = 405.85e9;
  input.sizing.num_attention_heads = 128;
  input.sizing.num_layers = 126;
  input.sizing.num_largest_layers = 126;
  input.sizing.embedding_parameters = 2.0 * 128256 * 16384;
  input.sizing.kv_cache_bytes = 516096.0 * 8192;
  input.sizing.model_kv_cache_bytes = input.sizing.kv_cache_bytes;
  input.sizing.kv_cache_bytes_largest_layer = input.sizing.kv_cache_bytes / 126;
  return input;
}

}  // namespace modelatlas::estimator
