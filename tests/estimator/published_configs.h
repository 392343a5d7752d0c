// config.json texts of published checkpoints that several accuracy tests
// read (the counts and the file sizes of the same models).
#pragma once

#include <string>
#include <vector>

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

// LFM2 (Liquid AI): the config.json keys that decide the count, from the
// copies the note in docs/ACCURACY.md lists (the 350M, 1.2B and 2.6B shapes
// from same-architecture copies and the GGUF files' metadata); the
// checkpoints' totals (llmfit's parameters_raw) are 354,483,968,
// 1,170,340,608 and 2,569,272,320. LFM2-VL and LFM2.5-VL take them as
// their text_config.
inline constexpr char kLfm2_350MConfigJson[] = R"({
  "model_type": "lfm2", "hidden_size": 1024, "block_ff_dim": 6656, "intermediate_size": 6656,
  "block_auto_adjust_ff_dim": true, "block_multiple_of": 256, "block_ffn_dim_multiplier": 1.0,
  "conv_L_cache": 3, "num_attention_heads": 16, "num_key_value_heads": 8,
  "num_hidden_layers": 16, "vocab_size": 65536,
  "layer_types": ["conv", "conv", "full_attention", "conv", "conv", "full_attention", "conv",
    "conv", "full_attention", "conv", "full_attention", "conv", "full_attention", "conv",
    "full_attention", "conv"]})";
inline constexpr char kLfm2_1_2BConfigJson[] = R"({
  "model_type": "lfm2", "hidden_size": 2048, "block_dim": 2048, "block_ff_dim": 12288,
  "block_auto_adjust_ff_dim": true, "block_ffn_dim_multiplier": 1.0, "block_multiple_of": 256,
  "conv_L_cache": 3, "conv_bias": false, "full_attn_idxs": [2, 5, 8, 10, 12, 14],
  "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 16,
  "vocab_size": 65536, "max_position_embeddings": 128000})";
// block_auto_adjust_ff_dim false: 10752 as written.
inline constexpr char kLfm2_2_6BConfigJson[] = R"({
  "model_type": "lfm2", "hidden_size": 2048, "block_ff_dim": 10752, "intermediate_size": 10752,
  "block_auto_adjust_ff_dim": false, "conv_L_cache": 3, "num_attention_heads": 32,
  "num_key_value_heads": 8, "num_hidden_layers": 30, "vocab_size": 65536,
  "layer_types": ["conv", "conv", "full_attention", "conv", "conv", "full_attention", "conv",
    "conv", "conv", "full_attention", "conv", "conv", "conv", "full_attention", "conv", "conv",
    "conv", "full_attention", "conv", "conv", "conv", "full_attention", "conv", "conv",
    "full_attention", "conv", "conv", "full_attention", "conv", "conv"]})";

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

// stepfun-ai/Step-3.5-Flash (step3p5): the keys that decide the count, as
// vLLM's step3p5.py and the remote modeling_step3p5.py read them (the
// config.json itself was not reachable here; its values are those quoted
// by public ports of the model, and the count below reproduces the
// checkpoint's total with them). layer_types lists 48 layers: the 45 of
// the model and the 3 multi-token-prediction layers, which slide.
inline constexpr char kStep35FlashConfigJson[] = R"({
    "model_type": "step3p5", "architectures": ["Step3p5ForCausalLM"], "vocab_size": 128896,
    "hidden_size": 4096, "intermediate_size": 11264, "num_hidden_layers": 45,
    "num_attention_heads": 64, "num_attention_groups": 8, "head_dim": 128,
    "att_impl_type": "GQA", "max_position_embeddings": 262144, "sliding_window": 512,
    "attention_other_setting": {"attention_type": "sliding_attention",
                                "num_attention_heads": 96, "num_attention_groups": 8,
                                "head_dim": 128},
    "layer_types": ["full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
                    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
                    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
                    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
                    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
                    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
                    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
                    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
                    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
                    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
                    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
                    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention"],
    "use_head_wise_attn_gate": true, "use_qk_norm": true, "moe_num_experts": 288,
    "moe_top_k": 8, "moe_intermediate_size": 1280, "share_expert_dim": 1280,
    "use_moe_router_bias": true, "moe_layers_enum":
        "3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44",
    "num_nextn_predict_layers": 3, "tie_word_embeddings": false})";

// XiaomiMiMo/MiMo-V2-Flash's config.json, with the keys that decide the
// count as transformers' convert_mimo_v2_flash_weights_to_hf.py, vLLM's
// mimo_v2_flash.py and Megatron-Bridge's mimo_v2_flash_bridge.py read them
// (the file itself was not reachable from here): full attention in layer 0
// and every sixth, a 128-token window in the other 39.
inline constexpr char kMimoV2FlashConfigJson[] = R"({
    "model_type": "mimo_v2_flash", "architectures": ["MiMoV2FlashForCausalLM"],
    "vocab_size": 152576, "hidden_size": 4096, "intermediate_size": 16384,
    "moe_intermediate_size": 2048, "num_hidden_layers": 48, "num_attention_heads": 64,
    "num_key_value_heads": 4, "head_dim": 192, "v_head_dim": 128,
    "swa_num_attention_heads": 64, "swa_num_key_value_heads": 8, "swa_head_dim": 192,
    "swa_v_head_dim": 128, "sliding_window": 128, "max_position_embeddings": 262144,
    "hybrid_layer_pattern": [0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0],
    "moe_layer_freq": [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
    "n_routed_experts": 256, "num_experts_per_tok": 8, "n_shared_experts": null,
    "topk_method": "noaux_tc", "scoring_func": "sigmoid", "attention_bias": false,
    "add_swa_attention_sink_bias": true, "add_full_attention_sink_bias": false,
    "partial_rotary_factor": 0.334, "tie_word_embeddings": false,
    "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                            "weight_block_size": [128, 128]}})";

// Nemotron-NAS (DeciLMForCausalLM) config.json: block_configs one block per
// layer, written here run by run from the published configs, which NVIDIA's
// NeMo copies verbatim (nemo/collections/llm/gpt/model/llama_nemotron_config.py,
// LLAMA_33_NEMOTRON_SUPER_49B_HETEROGENEOUS_CONFIG and
// LLAMA_31_NEMOTRON_ULTRA_253B_HETEROGENEOUS_CONFIG, "Config copy from
// https://huggingface.co/nvidia/.../blob/main/config.json"). A run: layers,
// the attention's n_heads_in_group (0: a no-op) and the FFN's ffn_mult as
// written ("": a no-op). Every block carries the published keys, the unused
// ones null or false as there.
struct NasRun {
  int layers;
  int heads_in_group;
  const char* ffn_mult;
};

inline std::string NemotronNasConfigJson(int layers, int hidden, int heads,
                                         const std::vector<NasRun>& runs) {
  std::string blocks;
  for (const NasRun& run : runs) {
    for (int i = 0; i < run.layers; ++i) {
      const bool attention = run.heads_in_group > 0, ffn = run.ffn_mult[0] != '\0';
      absl::StrAppend(
          &blocks, blocks.empty() ? "" : ", ", R"({"attention": {"n_heads_in_group": )",
          attention ? absl::StrCat(run.heads_in_group) : "null", R"(, "no_op": )",
          attention ? "false" : "true",
          R"(, "num_sink_tokens": null, "replace_with_linear": false, "sparsify": null,)",
          R"( "unshifted_sink": false, "use_prefill_window_in_sink_attention": false,)",
          R"( "window_length": null}, "ffn": {"ffn_mult": )", ffn ? run.ffn_mult : "null",
          R"(, "no_op": )", ffn ? "false" : "true",
          R"(, "replace_with_linear": false, "sparsify": null}})");
    }
  }
  return absl::StrCat(
      R"({"architectures": ["DeciLMForCausalLM"], "attention_bias": false,)",
      R"( "block_configs": [)", blocks, R"(], "hidden_act": "silu", "hidden_size": )", hidden,
      R"(, "intermediate_size": null, "max_position_embeddings": 131072, "mlp_bias": false,)",
      R"( "model_type": "nemotron-nas", "num_attention_heads": )", heads,
      R"(, "num_hidden_layers": )", layers,
      R"(, "num_key_value_heads": null, "rms_norm_eps": 1e-05, "tie_word_embeddings": false,)",
      R"( "torch_dtype": "bfloat16", "vocab_size": 128256})");
}

// nvidia/Llama-3_3-Nemotron-Super-49B-v1: 80 layers, 49 with attention.
inline std::string NemotronSuper49BConfigJson() {
  return NemotronNasConfigJson(
      80, 8192, 64,
      {{1, 8, "2.625"},  {5, 8, "5.25"},   {2, 0, "2.625"},  {3, 8, "5.25"},   {1, 0, "3.28125"},
       {30, 8, "5.25"},  {1, 0, "1.3125"}, {2, 0, "2.625"},  {1, 0, "1.3125"}, {1, 0, "5.25"},
       {1, 0, "1.3125"}, {1, 0, "2.625"},  {3, 0, "1.3125"}, {1, 8, "5.25"},   {1, 0, "1.3125"},
       {2, 0, "1.0"},    {1, 0, "1.3125"}, {3, 0, "1.0"},    {2, 0, "1.3125"}, {2, 0, "0.5"},
       {2, 0, "1.0"},    {2, 0, "0.5"},    {1, 0, "1.0"},    {2, 0, "0.5"},    {9, 8, "5.25"}});
}

// nvidia/Llama-3_1-Nemotron-Ultra-253B-v1: 162 layers, 64 with attention,
// 81 with neither attention nor an FFN, four "FFN fusion" layers.
inline std::string NemotronUltra253BConfigJson() {
  return NemotronNasConfigJson(
      162, 16384, 128, {{1, 16, "0.4875"}, {1, 16, "0.975"},  {6, 16, "1.4625"},  {1, 16, "1.95"},
                        {4, 0, ""},        {3, 16, "1.95"},   {2, 16, "4.875"},   {6, 0, ""},
                        {3, 16, "4.875"},  {5, 0, ""},        {3, 16, "4.875"},   {1, 16, "2.4375"},
                        {3, 0, ""},        {3, 16, "1.95"},   {1, 0, "1.95"},     {1, 16, "4.875"},
                        {1, 0, "4.875"},   {5, 0, ""},        {4, 16, "4.875"},   {5, 0, ""},
                        {4, 16, "4.875"},  {5, 0, ""},        {4, 16, "4.875"},   {5, 0, ""},
                        {4, 16, "4.875"},  {5, 0, ""},        {1, 16, "4.875"},   {3, 16, "3.4125"},
                        {2, 0, ""},        {1, 16, "2.925"},  {3, 16, "2.4375"},  {2, 0, "2.4375"},
                        {1, 16, "2.4375"}, {1, 0, ""},        {7, 0, "2.4375"},   {1, 16, "2.4375"},
                        {5, 0, ""},        {1, 16, "2.925"},  {1, 16, "4.875"},   {1, 0, "4.875"},
                        {1, 16, "4.875"},  {8, 0, ""},        {1, 0, "36.5625"},  {8, 0, ""},
                        {1, 0, "39.0"},    {8, 0, ""},        {1, 0, "31.40625"}, {5, 0, ""},
                        {1, 0, "27.5625"}, {1, 0, "1.95"},    {1, 16, "1.95"},    {1, 16, "2.4375"},
                        {1, 0, ""},        {2, 16, "2.4375"}, {1, 16, "3.4125"},  {4, 16, "4.875"},
                        {1, 16, "2.4375"}});
}

// Arcee's Trinity (afmoe, AfmoeForCausalLM) config.json: Trinity-Nano-Preview's
// keys as an AWS Neuron test copies them ("matches
// arcee-ai/Trinity-Nano-Preview/config.json"; no layer_types, so
// AfmoeConfig's default, every fourth layer full), and Trinity-Mini's and
// Trinity-Large's shape keys as their config.json pages open (the files
// themselves were not reachable from here); the other keys Nano's.
struct TrinityShape {
  int hidden, intermediate, moe_intermediate, layers, dense_layers, heads, kv_heads, experts,
      experts_per_token, sliding_window;
};
inline constexpr TrinityShape kTrinityNano{1024, 3072, 256, 56, 2, 8, 2, 128, 8, 2048};
inline constexpr TrinityShape kTrinityMini{2048, 6144, 1024, 32, 2, 32, 4, 128, 8, 2048};
inline constexpr TrinityShape kTrinityLarge{3072, 12288, 3072, 60, 6, 48, 8, 256, 4, 4096};

inline std::string TrinityConfigJson(const TrinityShape& t) {
  return absl::StrCat(R"({
    "architectures": ["AfmoeForCausalLM"], "attention_dropout": 0.0, "dtype": "bfloat16",
    "global_attn_every_n_layers": 4, "head_dim": 128, "hidden_act": "silu",
    "hidden_size": )",
                      t.hidden, R"(, "initializer_range": 0.02,
    "intermediate_size": )",
                      t.intermediate, R"(, "max_position_embeddings": 131072,
    "model_type": "afmoe", "moe_intermediate_size": )",
                      t.moe_intermediate, R"(,
    "mup_enabled": true, "n_group": 1, "num_attention_heads": )",
                      t.heads, R"(,
    "num_dense_layers": )",
                      t.dense_layers, R"(, "num_expert_groups": 1,
    "num_experts": )",
                      t.experts, R"(, "num_experts_per_tok": )", t.experts_per_token, R"(,
    "num_hidden_layers": )",
                      t.layers, R"(, "num_key_value_heads": )", t.kv_heads, R"(,
    "num_limited_groups": 1, "num_shared_experts": 1, "rms_norm_eps": 1e-05,
    "rope_scaling": null, "rope_theta": 10000, "route_norm": true, "route_scale": 2.826,
    "score_func": "sigmoid", "sliding_window": )",
                      t.sliding_window, R"(,
    "tie_word_embeddings": false, "topk_group": 1, "transformers_version": "4.57.3",
    "use_cache": true, "use_grouped_mm": true, "vocab_size": 200192})");
}

// LGAI-EXAONE/K-EXAONE-236B-A23B's config.json keys as NVIDIA's TensorRT-LLM
// test copies them (tests/unittest/_torch/modeling/test_modeling_exaone_moe.py,
// EXAONE_MOE_CONFIG, its first revision's first_last_k_dense_replace), with
// the 48 layers, the 128-token window and the multi-token-prediction layer
// the checkpoint has (its official BF16 GGUF: 49 blocks, blk.48 the MTP
// layer; the test cuts both to 4); the file itself was not reachable.
inline std::string KExaoneConfigJson() {
  std::string moe = "false", kinds;
  for (int i = 1; i < 48; ++i) moe += ", true";
  for (int i = 0; i < 48; ++i) {
    kinds += absl::StrCat(i > 0 ? ", " : "",
                          i % 4 == 3 ? "\"full_attention\"" : "\"sliding_attention\"");
  }
  return absl::StrCat(R"({
    "architectures": ["ExaoneMoEForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 1,
    "dtype": "bfloat16", "eos_token_id": 53, "first_last_k_dense_replace": 1, "head_dim": 128,
    "hidden_act": "silu", "hidden_size": 6144, "initializer_range": 0.02,
    "intermediate_size": 18432, "is_moe_layer": [)",
                      moe, R"(], "layer_types": [)", kinds, R"(],
    "max_position_embeddings": 262144, "model_type": "exaone_moe", "moe_intermediate_size": 2048,
    "n_group": 1, "norm_topk_prob": true, "num_attention_heads": 64, "num_experts": 128,
    "num_experts_per_tok": 8, "num_hidden_layers": 48, "num_key_value_heads": 8,
    "num_nextn_predict_layers": 1, "num_shared_experts": 1, "pad_token_id": 0,
    "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 1000000,
    "routed_scaling_factor": 2.5, "scoring_func": "sigmoid", "sliding_window": 128,
    "tie_word_embeddings": false, "topk_group": 1, "topk_method": "noaux_tc",
    "vocab_size": 153600})");
}

}  // namespace modelatlas::estimator::testing
