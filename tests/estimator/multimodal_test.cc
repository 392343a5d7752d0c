// Vision and audio parts of multimodal models (issue 19 point 5): counted
// from config.json (vision_config / audio_config) with the formulas of
// core/encoders.cc and compared with published parameter counts (each
// source cited here and in docs/ACCURACY.md); sized exactly from a
// safetensors header's tensors or a llama.cpp mmproj file; itemized in the
// memory answer; families not counted refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "common/formats/hf_config.h"
#include "common/status/errors.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/answers/model_sources.h"
#include "estimator-service/answers/runtime.h"
#include "estimator-service/answers/training.h"
#include "estimator-service/core/encoders.h"
#include "estimator-service/core/inference_memory.h"
#include "estimator-service/core/parameters.h"
#include "estimator-service/core/runtime_fit.h"
#include "tests/estimator/fake_records.h"
#include "tests/estimator/model_files.h"
#include "tests/estimator/published_configs.h"

namespace modelatlas::estimator {
namespace {

// The config.json files as published (keys that do not change a count left
// out): llava-hf/llava-1.5-7b-hf, Qwen/Qwen2-VL-7B-Instruct,
// Qwen/Qwen2.5-VL-7B-Instruct, google/gemma-3-4b-it, Qwen/Qwen2-Audio-7B.
constexpr char kLlava15_7b[] = R"({
  "architectures": ["LlavaForConditionalGeneration"], "model_type": "llava",
  "image_token_index": 32000, "projector_hidden_act": "gelu", "tie_word_embeddings": false,
  "text_config": {"_name_or_path": "lmsys/vicuna-7b-v1.5", "architectures": ["LlamaForCausalLM"],
    "max_position_embeddings": 4096, "model_type": "llama", "rms_norm_eps": 1e-05,
    "torch_dtype": "float16", "vocab_size": 32064},
  "vision_config": {"hidden_size": 1024, "image_size": 336, "intermediate_size": 4096,
    "model_type": "clip_vision_model", "num_attention_heads": 16, "num_hidden_layers": 24,
    "patch_size": 14, "projection_dim": 768, "vocab_size": 32000},
  "vision_feature_layer": -2, "vision_feature_select_strategy": "default", "vocab_size": 32064})";

constexpr char kQwen2Vl7b[] = R"({
  "architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl",
  "hidden_act": "silu", "hidden_size": 3584, "intermediate_size": 18944,
  "max_position_embeddings": 32768, "max_window_layers": 28, "num_attention_heads": 28,
  "num_hidden_layers": 28, "num_key_value_heads": 4, "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0, "sliding_window": 32768, "tie_word_embeddings": false,
  "use_sliding_window": false, "vocab_size": 152064,
  "vision_config": {"depth": 32, "embed_dim": 1280, "mlp_ratio": 4, "num_heads": 16,
    "in_chans": 3, "hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2,
    "spatial_patch_size": 14, "temporal_patch_size": 2},
  "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}})";

constexpr char kQwen25Vl7b[] = R"({
  "architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
  "hidden_act": "silu", "hidden_size": 3584, "intermediate_size": 18944,
  "max_position_embeddings": 128000, "num_attention_heads": 28, "num_hidden_layers": 28,
  "num_key_value_heads": 4, "rms_norm_eps": 1e-06, "sliding_window": 32768,
  "tie_word_embeddings": false, "use_sliding_window": false, "vocab_size": 152064,
  "vision_config": {"depth": 32, "hidden_act": "silu", "hidden_size": 1280,
    "intermediate_size": 3420, "num_heads": 16, "in_chans": 3, "out_hidden_size": 3584,
    "patch_size": 14, "spatial_merge_size": 2, "spatial_patch_size": 14, "window_size": 112,
    "fullatt_block_indexes": [7, 15, 23, 31], "tokens_per_second": 2,
    "temporal_patch_size": 2}})";

constexpr char kGemma3_4b[] = R"({
  "architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
  "mm_tokens_per_image": 256,
  "text_config": {"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text",
    "num_hidden_layers": 34, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
    "sliding_window": 1024},
  "vision_config": {"hidden_size": 1152, "image_size": 896, "intermediate_size": 4304,
    "model_type": "siglip_vision_model", "num_attention_heads": 16, "num_hidden_layers": 27,
    "patch_size": 14, "vision_use_head": false}})";

constexpr char kQwen2Audio7b[] = R"({
  "architectures": ["Qwen2AudioForConditionalGeneration"], "model_type": "qwen2_audio",
  "audio_token_index": 151646, "vocab_size": 156032,
  "audio_config": {"model_type": "qwen2_audio_encoder", "num_mel_bins": 128,
    "encoder_layers": 32, "encoder_attention_heads": 20, "encoder_ffn_dim": 5120,
    "d_model": 1280, "activation_function": "gelu", "scale_embedding": false,
    "max_source_positions": 1500},
  "text_config": {"bos_token_id": 151643, "eos_token_id": 151645, "intermediate_size": 11008,
    "max_position_embeddings": 8192, "model_type": "qwen2", "rope_theta": 10000,
    "rms_norm_eps": 1e-05, "sliding_window": 32768, "torch_dtype": "bfloat16",
    "use_mrope": false, "vocab_size": 156032}})";

// meta-llama/Llama-4-Scout-17B-16E-Instruct and
// meta-llama/Llama-4-Maverick-17B-128E-Instruct config.json (keys that do not
// change a count or a cache left out). Scout leaves moe_layers and
// no_rope_layers to Llama4TextConfig's defaults.
constexpr char kLlama4Scout[] = R"({
  "architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
  "tie_word_embeddings": false,
  "text_config": {"attention_bias": false, "attention_chunk_size": 8192, "head_dim": 128,
    "hidden_size": 5120, "interleave_moe_layer_step": 1, "intermediate_size": 8192,
    "intermediate_size_mlp": 16384, "max_position_embeddings": 10485760,
    "model_type": "llama4_text", "num_attention_heads": 40, "num_experts_per_tok": 1,
    "num_hidden_layers": 48, "num_key_value_heads": 8, "num_local_experts": 16,
    "use_qk_norm": true, "vocab_size": 202048},
  "vision_config": {"hidden_size": 1408, "image_size": 336, "intermediate_size": 5632,
    "model_type": "llama4_vision_model", "multi_modal_projector_bias": false,
    "num_attention_heads": 16, "num_channels": 3, "num_hidden_layers": 34, "patch_size": 14,
    "pixel_shuffle_ratio": 0.5, "projector_input_dim": 4096, "projector_output_dim": 4096,
    "vision_output_dim": 4096}})";

constexpr char kLlama4Maverick[] = R"({
  "architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
  "tie_word_embeddings": false,
  "text_config": {"attention_bias": false, "attention_chunk_size": 8192, "head_dim": 128,
    "hidden_size": 5120, "interleave_moe_layer_step": 2, "intermediate_size": 8192,
    "intermediate_size_mlp": 16384, "max_position_embeddings": 1048576,
    "model_type": "llama4_text", "num_attention_heads": 40, "num_experts_per_tok": 1,
    "num_hidden_layers": 48, "num_key_value_heads": 8, "num_local_experts": 128,
    "no_rope_layers": [1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0,
      1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0],
    "use_qk_norm": false, "vocab_size": 202048},
  "vision_config": {"hidden_size": 1408, "image_size": 336, "intermediate_size": 5632,
    "model_type": "llama4_vision_model", "multi_modal_projector_bias": false,
    "num_attention_heads": 16, "num_channels": 3, "num_hidden_layers": 34, "patch_size": 14,
    "pixel_shuffle_ratio": 0.5, "projector_input_dim": 4096, "projector_output_dim": 4096,
    "vision_output_dim": 4096}})";

template <typename Response>
class Waiter {
 public:
  AnswerDone<Response> done() {
    return [this](absl::StatusOr<Response> r) {
      result_ = std::move(r);
      ready_.Notify();
    };
  }
  absl::StatusOr<Response>& get() {
    EXPECT_TRUE(ready_.WaitForNotificationWithTimeout(absl::Seconds(30)));
    return *result_;
  }

 private:
  absl::Notification ready_;
  std::optional<absl::StatusOr<Response>> result_;
};

v1::CountParametersResponse Count(const std::string& config) {
  v1::CountParametersRequest request;
  request.set_hf_config_json(config);
  Waiter<v1::CountParametersResponse> waiter;
  AnswerCountParameters(testing::Catalog(), request, waiter.done());
  EXPECT_TRUE(waiter.get().ok()) << waiter.get().status();
  return waiter.get().ok() ? *waiter.get() : v1::CountParametersResponse();
}

double Component(const v1::CountParametersResponse& r, const std::string& name) {
  double sum = 0;
  for (const auto& c : r.components()) {
    if (c.name() == name) sum += c.parameters();
  }
  return sum;
}

absl::StatusOr<v1::EstimateInferenceMemoryResponse> Memory(const v1::ModelSource& source) {
  v1::EstimateInferenceMemoryRequest request;
  *request.mutable_source() = source;
  Waiter<v1::EstimateInferenceMemoryResponse> waiter;
  AnswerInferenceMemory(testing::Catalog(), request, waiter.done());
  return std::move(waiter.get());
}

const v1::EstimateLine* Line(const v1::EstimateInferenceMemoryResponse& r, const char* name) {
  for (const auto& line : r.lines()) {
    if (line.component() == name) return &line;
  }
  return nullptr;
}

double RelativeError(double ours, double published) {
  return std::abs(ours - published) / published;
}

TEST(EncodersTest, ClipVitL14At336MatchesItsPublishedCount) {
  // openai/clip-vit-large-patch14-336: the vision tower of CLIP ViT-L/14 at
  // 336 px has 303.5M parameters (CLIPVisionModel as LLaVA-1.5 loads it;
  // Radford et al. 2021 Table 20 ViT-L/14 vision width 1024, 24 layers;
  // the 303.5M figure as LLaVA's model card and transformers report it).
  EncoderShape clip{.kind = "vision_encoder",
                    .layout = "clip_vision",
                    .num_layers = 24,
                    .hidden_size = 1024,
                    .intermediate_size = 4096,
                    .patch_size = 14,
                    .image_size = 336};
  absl::StatusOr<EncoderCount> count = CountEncoder(clip, "vision");
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_LT(RelativeError(count->parameters, 303.5e6), 0.0005) << count->parameters;
  EXPECT_TRUE(absl::StrContains(count->arithmetic, "577 positions")) << count->arithmetic;
}

TEST(EncodersTest, SiglipSo400mMatchesItsPublishedCountWithAndWithoutItsHead) {
  // google/siglip-so400m-patch14-384: 428M parameters with the attention
  // pooling head (Alabdulmohsin et al. 2023, "Getting ViT in Shape", the
  // So400m/14 shape: width 1152, depth 27, MLP 4304); Gemma 3 drops the head
  // (Gemma 3 Technical Report, Table 1: vision encoder 417M at 896 px).
  EncoderShape so400m{.kind = "vision_encoder",
                      .layout = "siglip_vision",
                      .num_layers = 27,
                      .hidden_size = 1152,
                      .intermediate_size = 4304,
                      .patch_size = 14,
                      .image_size = 384,
                      .pooling_head = true};
  absl::StatusOr<EncoderCount> with_head = CountEncoder(so400m, "vision");
  ASSERT_TRUE(with_head.ok()) << with_head.status();
  EXPECT_LT(RelativeError(with_head->parameters, 428e6), 0.002) << with_head->parameters;
  so400m.pooling_head = false;
  so400m.image_size = 896;
  absl::StatusOr<EncoderCount> gemma = CountEncoder(so400m, "vision");
  ASSERT_TRUE(gemma.ok());
  EXPECT_LT(RelativeError(gemma->parameters, 417e6), 0.002) << gemma->parameters;
}

TEST(EncodersTest, MissingFiguresAndUnknownLayoutsNameTheField) {
  EncoderShape bad{.kind = "vision_encoder", .layout = "clip_vision", .num_layers = 24};
  absl::Status missing = CountEncoder(bad, "architecture.encoder_parts[0]").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(missing.ToString(), "encoder_parts[0].hidden_size")) << missing;
  bad.layout = "perceiver";
  absl::Status unknown = CountEncoder(bad, "p").status();
  EXPECT_TRUE(absl::StrContains(unknown.ToString(), "clip_vision")) << unknown;
  bad.kind = "tokenizer";
  EXPECT_TRUE(absl::StrContains(CountEncoder(bad, "p").status().ToString(), "p.kind"));
}

// Every layout the refusal lists is counted when its figures are there
// (the list of layouts and their counts are kept in one table).
TEST(EncodersTest, EveryListedLayoutIsCounted) {
  const absl::Status unknown =
      CountEncoder(EncoderShape{.kind = "projector", .layout = "perceiver"}, "p").status();
  const std::string message(unknown.message());
  const size_t listed = message.find("supported: ");
  ASSERT_NE(listed, std::string::npos) << unknown;
  const std::vector<std::string> layouts =
      absl::StrSplit(message.substr(listed + 11), ", ", absl::SkipEmpty());
  EXPECT_GE(layouts.size(), 14u);
  for (const std::string& layout : layouts) {
    const EncoderShape full{.kind = "vision_encoder",
                            .layout = layout,
                            .num_layers = 2,
                            .hidden_size = 64,
                            .intermediate_size = 128,
                            .patch_size = 14,
                            .image_size = 224,
                            .num_channels = 3,
                            .temporal_patch_size = 2,
                            .spatial_merge_size = 2,
                            .output_size = 96,
                            .num_mel_bins = 80,
                            .max_positions = 100,
                            .head_dim = 16,
                            .conv_kernel_size = 5,
                            .subsampling_channels = {8, 4},
                            .num_global_layers = 1,
                            .max_tiles = 2,
                            .aspect_ratio_ids = 3,
                            .num_queries = 4,
                            .parameters = 1000};
    const absl::StatusOr<EncoderCount> count = CountEncoder(full, "p");
    ASSERT_TRUE(count.ok()) << layout << ": " << count.status();
    EXPECT_GT(count->parameters, 0) << layout;
    EXPECT_FALSE(count->arithmetic.empty()) << layout;
  }
}

// LiquidAI's LFM2-VL and LFM2.5-VL (lfm2_vl): an LFM2 language model, a
// SigLIP2 NaFlex tower and Lfm2VlMultiModalProjector. Configs: LFM2-VL-450M's
// config.json as a public copy of the original repo holds it
// (varun00391/local-finetuned-model, "LiquidAI:LFM2-VL-450M/lfm2-450m");
// LFM2.5-VL's key fields as Shoozes/candle tools/lfm2_vl/reference-lock.json
// records them from the pinned official revisions; LFM2-VL-1.6B's tower (27
// layers, vision_feature_layer -2) as a test mirroring
// mlx-community/LFM2-VL-1.6B-4bit quotes it; LFM2-VL-3B's tower and
// projector the 1.6B's with all 27 layers (not seen in a config: the only
// shape that fits its total). Published: the checkpoints' safetensors totals
// in llmfit's later list (AlexsJones/llmfit llmfit-core/data/hf_models.json).
TEST(MultimodalConfigTest, Lfm2VlAndLfm25VlAreCountedExactly) {
  const std::string lfm2_350m = testing::kLfm2_350MConfigJson;
  const std::string lfm2_12b = testing::kLfm2_1_2BConfigJson;
  const std::string lfm2_26b = testing::kLfm2_2_6BConfigJson;
  const std::string siglip2_base =
      R"({"model_type": "siglip2_vision_model", "hidden_size": 768, "intermediate_size": 3072,
          "num_hidden_layers": 12, "num_attention_heads": 12, "num_channels": 3,
          "num_patches": 256, "patch_size": 16, "vision_use_head": false})";
  const std::string siglip2_so400m =
      R"({"model_type": "siglip2_vision_model", "hidden_size": 1152, "intermediate_size": 4304,
          "num_hidden_layers": 27, "num_attention_heads": 16, "num_channels": 3,
          "num_patches": 256, "patch_size": 16, "vision_use_head": false})";
  const auto config = [](const std::string& text, const std::string& vision,
                         const std::string& projector) {
    return absl::StrCat(R"({"model_type": "lfm2_vl", "downsample_factor": 2, )",
                        R"("projector_bias": true, "projector_hidden_act": "gelu", )", projector,
                        R"(, "text_config": )", text, R"(, "vision_config": )", vision, "}");
  };
  struct Case {
    const char* model;
    std::string json;
    double tower;
    double projector;
    double total;
  };
  const Case cases[] = {
      // SigLIP2 base: 12 x 7,087,872 + patch 768x768 + 768 + 256 x 768
      // positions + post LayerNorm; LayerNorm 2 x 3072 + 3072x2560 + 2560 +
      // 2560x1024 + 1024.
      {"LiquidAI/LFM2-VL-450M",
       config(lfm2_350m, siglip2_base,
              R"("projector_hidden_size": 2560, "vision_feature_layer": -1)"),
       85843200, 10495488, 450822656},
      {"LiquidAI/LFM2-VL-1.6B",
       config(lfm2_12b, siglip2_so400m,
              R"("projector_hidden_size": 2560, "vision_feature_layer": -2)"),
       397410208, 17053184, 1584804000},
      {"LiquidAI/LFM2-VL-3B", config(lfm2_26b, siglip2_so400m, R"("projector_hidden_size": 2560)"),
       412649712, 17053184, 2998975216},
      {"LiquidAI/LFM2.5-VL-450M",
       config(lfm2_350m, siglip2_base,
              R"("projector_hidden_size": 2048, "projector_use_layernorm": false)"),
       85843200, 8391680, 448718848},
      {"LiquidAI/LFM2.5-VL-1.6B",
       config(lfm2_12b, siglip2_so400m,
              R"("projector_hidden_size": 2048, "projector_use_layernorm": false)"),
       412649712, 13635584, 1596625904},
  };
  for (const Case& c : cases) {
    v1::CountParametersResponse r = Count(c.json);
    EXPECT_EQ(Component(r, "vision_encoder"), c.tower) << c.model;
    EXPECT_EQ(Component(r, "projector"), c.projector) << c.model;
    EXPECT_EQ(r.total_parameters(), c.total) << c.model;
  }
  // A layer outside the tower and a projector without biases are refused
  // by field.
  std::string unbiased = config(lfm2_350m, siglip2_base, R"("projector_hidden_size": 2560)");
  const std::string biased = R"("projector_bias": true)";
  unbiased.replace(unbiased.find(biased), biased.size(), R"("projector_bias": false)");
  for (const auto& [bad, field] : std::vector<std::pair<std::string, std::string>>{
           {config(lfm2_350m, siglip2_base, R"("vision_feature_layer": -13)"),
            "vision_feature_layer"},
           {unbiased, "projector_bias"},
           {config(lfm2_350m, R"({"model_type": "clip_vision_model"})", R"("x": 1)"),
            "vision_config.model_type"}}) {
    auto refused = ArchitectureFromHfConfig(bad);
    ASSERT_FALSE(refused.ok()) << field;
    EXPECT_TRUE(absl::StrContains(refused.status().message(), field)) << refused.status();
  }
}

// LLaVA-NeXT (llava_next, LLaVA-1.6): LLaVA's CLIP ViT-L/14-336 and
// projector, plus image_newline (one vector of the text width). The keys
// that decide the count of llava-hf/llava-v1.6-vicuna-13b-hf and
// llava-hf/llava-v1.6-34b-hf (Nous-Hermes-2-Yi-34B's blocks). Published:
// the checkpoints' safetensors totals in llmfit's later list
// (AlexsJones/llmfit), which these shapes reproduce to the unit.
TEST(MultimodalConfigTest, LlavaNextIsLlavaWithItsImageNewline) {
  const std::string clip336 =
      R"("vision_config": {"hidden_size": 1024, "image_size": 336, "intermediate_size": 4096,
          "model_type": "clip_vision_model", "num_attention_heads": 16,
          "num_hidden_layers": 24, "patch_size": 14, "projection_dim": 768},
          "vision_feature_layer": -2, "projector_hidden_act": "gelu")";
  const std::string vicuna13b = absl::StrCat(
      R"({"model_type": "llava_next", "use_image_newline_parameter": true,
          "text_config": {"model_type": "llama", "hidden_size": 5120, "intermediate_size": 13824,
          "num_attention_heads": 40, "num_hidden_layers": 40, "vocab_size": 32064,
          "max_position_embeddings": 4096}, )",
      clip336, "}");
  const std::string yi34b = absl::StrCat(
      R"({"model_type": "llava_next", "use_image_newline_parameter": true,
          "text_config": {"model_type": "llama", "hidden_size": 7168, "intermediate_size": 20480,
          "num_attention_heads": 56, "num_key_value_heads": 8, "num_hidden_layers": 60,
          "vocab_size": 64064, "max_position_embeddings": 4096}, )",
      clip336, "}");
  const v1::CountParametersResponse r13 = Count(vicuna13b);
  EXPECT_EQ(Component(r13, "projector"), 1024.0 * 5120 + 5120 + 5120.0 * 5120 + 5120 + 5120);
  EXPECT_EQ(Component(r13, "vision_encoder"), 303507456);
  EXPECT_EQ(r13.total_parameters(), 13351499776);
  EXPECT_EQ(Count(yi34b).total_parameters(), 34752083968);
  // The same model as llava: one image_newline of the text width less.
  std::string as_llava = vicuna13b;
  as_llava.replace(as_llava.find("llava_next"), std::strlen("llava_next"), "llava");
  EXPECT_EQ(Count(as_llava).total_parameters(), 13351499776 - 5120);
}

// LLaVA-OneVision (llava_onevision): LLaVA-NeXT's projector and
// image_newline on SigLIP so400m-384 (26 layers, no pooling head, as
// transformers' conversion script writes it) and Qwen2, whose vocabulary
// the conversion pads for the image and video tokens to a multiple of 64
// (151,936 -> 152,000; 152,064 -> 152,128). The keys that decide the
// count of llava-hf/llava-onevision-qwen2-0.5b-ov-hf and -7b-ov-hf;
// published: their safetensors totals in llmfit's later list
// (AlexsJones/llmfit), which these shapes reproduce to the unit.
TEST(MultimodalConfigTest, LlavaOnevisionIsLlavaNextOnSiglipAndQwen2) {
  const std::string siglip384 =
      R"("vision_config": {"model_type": "siglip_vision_model", "hidden_size": 1152,
          "intermediate_size": 4304, "num_hidden_layers": 26, "num_attention_heads": 16,
          "image_size": 384, "patch_size": 14, "vision_use_head": false},
          "vision_feature_layer": -1, "projector_hidden_act": "gelu")";
  const std::string small = absl::StrCat(
      R"({"model_type": "llava_onevision", "text_config": {"model_type": "qwen2",
          "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
          "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 152000,
          "tie_word_embeddings": true}, )",
      siglip384, "}");
  const std::string large = absl::StrCat(
      R"({"model_type": "llava_onevision", "text_config": {"model_type": "qwen2",
          "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
          "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152128,
          "tie_word_embeddings": false}, )",
      siglip384, "}");
  const v1::CountParametersResponse r = Count(small);
  EXPECT_EQ(Component(r, "vision_encoder"), 397747744);
  EXPECT_EQ(Component(r, "projector"), 1152.0 * 896 + 896 + 896.0 * 896 + 896 + 896);
  EXPECT_EQ(r.total_parameters(), 893675552);
  EXPECT_EQ(Count(large).total_parameters(), 8030807584);
}

// InternVL 2 to 3.5: InternViT-300M-448px (24 layers with layer scales, a
// class token, 1,025 positions, no final norm), mlp1 (a LayerNorm over 2 x
// 2 patches, two biased linears) and an untied language model whose
// vocabulary holds InternVL's image tokens. The keys that decide the count:
// InternVL2-8B's llm_config and InternVL3-1B's configuration as public
// dumps quote them (the others' shapes fit only these totals); the native
// configs' renames (attention_bias, [448, 448]) as transformers'
// convert_internvl_weights_to_hf.py writes them. Published: the
// checkpoints' safetensors totals in llmfit's later list (AlexsJones/llmfit).
TEST(MultimodalConfigTest, InternVlIsCountedExactlyInBothFormats) {
  const std::string vit_remote =
      R"("vision_config": {"model_type": "intern_vit_6b", "hidden_size": 1024,
          "intermediate_size": 4096, "num_hidden_layers": 24, "num_attention_heads": 16,
          "image_size": 448, "patch_size": 14, "qkv_bias": true, "qk_normalization": false,
          "norm_type": "layer_norm"}, "downsample_ratio": 0.5, "select_layer": -1)";
  const std::string vit_native =
      R"("vision_config": {"model_type": "internvl_vision", "hidden_size": 1024,
          "intermediate_size": 4096, "num_hidden_layers": 24, "num_attention_heads": 16,
          "image_size": [448, 448], "patch_size": [14, 14], "attention_bias": true,
          "use_qk_norm": false, "norm_type": "layer_norm"}, "downsample_ratio": 0.5,
          "vision_feature_layer": -1, "tie_word_embeddings": true)";
  const auto remote = [&](const std::string& llm) {
    return absl::StrCat(R"({"model_type": "internvl_chat", "llm_config": )", llm, ", ", vit_remote,
                        "}");
  };
  const auto native = [&](const std::string& text) {
    return absl::StrCat(R"({"model_type": "internvl", "text_config": )", text, ", ", vit_native,
                        "}");
  };
  struct Case {
    const char* model;
    std::string json;
    double projector;
    double total;
  };
  const Case cases[] = {
      {"OpenGVLab/InternVL2-1B",
       remote(R"({"model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864,
           "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2,
           "vocab_size": 151655, "tie_word_embeddings": true})"),
       4482816, 938158976},
      {"OpenGVLab/InternVL2-2B",
       remote(R"({"model_type": "internlm2", "hidden_size": 2048, "intermediate_size": 8192,
           "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 8,
           "vocab_size": 92553, "bias": false})"),
       12595200, 2205754368},
      {"OpenGVLab/InternVL2-8B and InternVL2_5-8B",
       remote(R"({"model_type": "internlm2", "hidden_size": 4096, "intermediate_size": 14336,
           "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
           "vocab_size": 92553, "bias": false, "tie_word_embeddings": false})"),
       33570816, 8075365376},
      {"OpenGVLab/InternVL3-1B-hf",
       native(R"({"model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864,
           "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2,
           "vocab_size": 151674, "tie_word_embeddings": false})"),
       4482816, 938193024},
      {"OpenGVLab/InternVL3-8B-hf",
       native(R"({"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
           "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
           "vocab_size": 151674, "tie_word_embeddings": false})"),
       27540480, 7944373760},
      {"OpenGVLab/InternVL3_5-8B-HF",
       native(R"({"model_type": "qwen3", "hidden_size": 4096, "intermediate_size": 12288,
           "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8,
           "head_dim": 128, "vocab_size": 151936, "tie_word_embeddings": false})"),
       33570816, 8528318464},
  };
  for (const Case& c : cases) {
    v1::CountParametersResponse r = Count(c.json);
    EXPECT_EQ(Component(r, "vision_encoder"), 304012288) << c.model;
    EXPECT_EQ(Component(r, "projector"), c.projector) << c.model;
    EXPECT_EQ(r.total_parameters(), c.total) << c.model;
  }
  // InternViT-6B's variant (no qkv bias, RMSNorms, q/k norms) is refused,
  // never counted as the 300M's.
  std::string six_b = cases[2].json;
  six_b.replace(six_b.find(R"("qkv_bias": true)"), std::strlen(R"("qkv_bias": true)"),
                R"("qkv_bias": false)");
  auto refused = ArchitectureFromHfConfig(six_b);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "InternViT-6B")) << refused.status();
}

// H2OVL-Mississippi: InternVL's model (vLLM's H2OVLChatModel subclasses
// InternVLChatModel) over H2O-Danube: InternViT-300M-448px, mlp1 and an
// untied language model whose vocabulary is 32,000 + 10 added tokens
// (llm_config's vocab_size, 32010, as h2ovl-mississippi-2b's config.json
// gives it). The Danube widths are their base models' configs
// (h2oai/h2o-danube3-500m-chat, h2oai/h2o-danube2-1.8b-chat). Published:
// the checkpoints' safetensors totals in llmfit's later list
// (AlexsJones/llmfit), 826,295,808 and 2,152,317,440.
TEST(MultimodalConfigTest, H2ovlIsInternVlOverDanube) {
  const auto config = [](const std::string& llm) {
    return absl::StrCat(
        R"({"model_type": "h2ovl_chat", "downsample_ratio": 0.5, "select_layer": -1,
            "force_image_size": 448, "llm_config": )",
        llm,
        R"(, "vision_config": {"model_type": "intern_vit_6b", "hidden_size": 1024,
            "intermediate_size": 4096, "num_hidden_layers": 24, "num_attention_heads": 16,
            "image_size": 448, "patch_size": 14, "qkv_bias": true, "qk_normalization": false,
            "norm_type": "layer_norm"}})");
  };
  const v1::CountParametersResponse small = Count(config(
      R"({"model_type": "llama", "hidden_size": 1536, "intermediate_size": 4096,
          "num_hidden_layers": 16, "num_attention_heads": 16, "num_key_value_heads": 8,
          "vocab_size": 32010, "tie_word_embeddings": false})"));
  EXPECT_EQ(Component(small, "vision_encoder"), 304012288);
  // mlp1: LayerNorm(4096), 4096 x 1536 + 1536, 1536 x 1536 + 1536.
  EXPECT_EQ(Component(small, "projector"),
            2.0 * 4096 + 4096.0 * 1536 + 1536 + 1536.0 * 1536 + 1536);
  EXPECT_EQ(small.total_parameters(), 826295808);
  const v1::CountParametersResponse large = Count(config(
      R"({"model_type": "mistral", "hidden_size": 2560, "intermediate_size": 6912,
          "num_hidden_layers": 24, "num_attention_heads": 32, "num_key_value_heads": 8,
          "vocab_size": 32010, "sliding_window": null})"));
  EXPECT_EQ(Component(large, "projector"), 17052672);
  EXPECT_EQ(large.total_parameters(), 2152317440);
}

// Idefics3 and SmolVLM: SigLIP's tower without its pooling head, a
// pixel-shuffle connector (one linear h x scale_factor^2 -> text width,
// no bias) and an untied Llama (SmolLM2, whose own checkpoints tie). The
// configs as the checkpoints' config.json files give them (SmolVLM2's
// vision_config leaves the widths and depth to Idefics3VisionConfig's
// defaults, SmolVLM-500M's text_config the depth to LlamaConfig's); the
// vocabularies 49,280 and 49,155 (49,152 + 3 added tokens). The 256M's
// text_config here also says tie_word_embeddings true, as SmolLM2's own
// config does: the top-level flag governs lm_head. Published: the
// checkpoints' safetensors totals in llmfit's later list (AlexsJones/llmfit).
TEST(MultimodalConfigTest, Idefics3AndSmolVlmAreCountedExactly) {
  const std::string small_vision =
      R"("vision_config": {"hidden_size": 768, "image_size": 512, "model_type": "smolvlm_vision",
          "num_attention_heads": 12, "patch_size": 16}, "scale_factor": 4,
          "tie_word_embeddings": false)";
  const std::string smolvlm_256m = absl::StrCat(
      R"({"model_type": "idefics3", "text_config": {"model_type": "llama", "head_dim": 64,
          "hidden_size": 576, "intermediate_size": 1536, "num_attention_heads": 9,
          "num_hidden_layers": 30, "num_key_value_heads": 3, "vocab_size": 49280,
          "tie_word_embeddings": true}, )",
      small_vision, "}");
  const v1::CountParametersResponse r = Count(smolvlm_256m);
  EXPECT_EQ(Component(r, "vision_encoder"), 86433024);
  EXPECT_EQ(Component(r, "projector"), 768.0 * 16 * 576);
  EXPECT_EQ(r.total_parameters(), 256484928) << "HuggingFaceTB/SmolVLM-256M-Instruct";
  const std::string smolvlm_500m = absl::StrCat(
      R"({"model_type": "smolvlm", "text_config": {"model_type": "llama", "head_dim": 64,
          "hidden_size": 960, "intermediate_size": 2560, "num_attention_heads": 15,
          "num_key_value_heads": 5, "vocab_size": 49280}, )",
      small_vision, "}");
  EXPECT_EQ(Count(smolvlm_500m).total_parameters(), 507482304)
      << "HuggingFaceTB/SmolVLM-500M-Instruct";
  const std::string smolvlm_2b =
      R"({"model_type": "idefics3", "scale_factor": 3, "tie_word_embeddings": false,
          "text_config": {"model_type": "llama", "head_dim": 64, "hidden_size": 2048,
          "intermediate_size": 8192, "num_attention_heads": 32, "num_hidden_layers": 24,
          "num_key_value_heads": 32, "vocab_size": 49155},
          "vision_config": {"hidden_size": 1152, "image_size": 384, "intermediate_size": 4304,
          "model_type": "idefics3_vision", "num_attention_heads": 16, "num_hidden_layers": 27,
          "patch_size": 14}})";
  const v1::CountParametersResponse large = Count(smolvlm_2b);
  EXPECT_EQ(Component(large, "vision_encoder"), 412987248);
  EXPECT_EQ(Component(large, "projector"), 21233664);
  EXPECT_EQ(large.total_parameters(), 2246272880) << "HuggingFaceTB/SmolVLM-Instruct";
}

// PaliGemma and PaliGemma 2 (paligemma): SigLIP So400m/14 without its
// pooling head (27 blocks of 1,152, (image_size / 14)^2 positions), one
// biased linear 1,152 x text width, Gemma 2B or Gemma 2 (2B, 9B, 27B) with
// the output head tied; the keys as google/paligemma-3b-pt-224's and
// google/paligemma2-3b-pt-224's config.json give them (head_dim left to
// GemmaConfig's and Gemma2Config's 256, the 28B's 128 given). Published:
// transformers' count of PaliGemmaForConditionalGeneration 2,923,466,480
// (a public dump of paligemma-3b's module tree) and of
// google/paligemma2-3b-mix-224 3,032,242,416 (a public hf-arch run's
// "params(total)"); keras-hub's presets are 64 embedding rows fewer
// (its vocabulary of 257,152, not the checkpoints' 257,216): 2,923,335,408,
// 2,924,220,144 at 448, 2,927,759,088 at 896; PaliGemma 2 3,032,094,960,
// 9,662,409,456 and 27,650,192,112 at 224.
TEST(MultimodalConfigTest, PaliGemmaIsSiglipALinearAndGemma) {
  const auto config = [](const std::string& text, int image_tokens, bool image_size) {
    return absl::StrCat(
        R"({"architectures": ["PaliGemmaForConditionalGeneration"], "model_type": "paligemma",
            "projection_dim": )",
        text.find("gemma2") == std::string::npos ? 2048 : -1, R"(, "text_config": )", text,
        R"(, "vision_config": {"hidden_size": 1152, "intermediate_size": 4304,
            "model_type": "siglip_vision_model", "num_attention_heads": 16,
            "num_hidden_layers": 27, "num_image_tokens": )",
        image_tokens,
        image_size ? absl::StrCat(R"(, "image_size": )",
                                  14 * static_cast<int>(std::lround(std::sqrt(image_tokens))))
                   : "",
        R"(, "patch_size": 14, "vision_use_head": false}, "vocab_size": 257216})");
  };
  const std::string gemma_2b =
      R"({"hidden_size": 2048, "intermediate_size": 16384, "model_type": "gemma",
          "num_attention_heads": 8, "num_hidden_layers": 18, "num_image_tokens": 256,
          "num_key_value_heads": 1, "vocab_size": 257216})";
  const std::string v1_224 = config(gemma_2b, 256, false);
  const v1::CountParametersResponse r = Count(v1_224);
  EXPECT_EQ(r.total_parameters(), 2923466480) << "google/paligemma-3b-pt-224";
  EXPECT_EQ(Component(r, "projector"), 1152.0 * 2048 + 2048);
  constexpr double kKerasVocabRows = 64;  // 257,216 - 257,152
  EXPECT_EQ(r.total_parameters() - kKerasVocabRows * 2048, 2923335408.0);
  // 448 and 896: the side from num_image_tokens alone, or from image_size.
  EXPECT_EQ(Count(config(gemma_2b, 1024, false)).total_parameters() - kKerasVocabRows * 2048,
            2924220144.0);
  EXPECT_EQ(Count(config(gemma_2b, 4096, true)).total_parameters() - kKerasVocabRows * 2048,
            2927759088.0);

  const auto gemma2 = [](int hidden, int ffn, int layers, int heads, int kv, int head_dim) {
    return absl::StrCat(R"({"hidden_size": )", hidden, R"(, "intermediate_size": )", ffn,
                        R"(, "model_type": "gemma2", "num_attention_heads": )", heads,
                        R"(, "num_hidden_layers": )", layers, R"(, "num_key_value_heads": )", kv,
                        head_dim > 0 ? absl::StrCat(R"(, "head_dim": )", head_dim) : "",
                        R"(, "vocab_size": 257216})");
  };
  const auto v2 = [&](const std::string& text) {
    std::string c = config(text, 256, false);
    return c.replace(c.find(R"("projection_dim": -1, )"), 22, "");
  };
  EXPECT_EQ(Count(v2(gemma2(2304, 9216, 26, 8, 4, 0))).total_parameters(), 3032242416)
      << "google/paligemma2-3b-mix-224";
  EXPECT_EQ(
      Count(v2(gemma2(3584, 14336, 42, 16, 8, 0))).total_parameters() - kKerasVocabRows * 3584,
      9662409456.0);
  EXPECT_EQ(
      Count(v2(gemma2(4608, 36864, 46, 32, 16, 128))).total_parameters() - kKerasVocabRows * 4608,
      27650192112.0);

  // What does not describe a model that runs is refused by field.
  std::string wide = v1_224;
  wide.replace(wide.find(R"("projection_dim": 2048)"), 22, R"("projection_dim": 1024)");
  absl::StatusOr<common::v1::Architecture> refused = ArchitectureFromHfConfig(wide);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "hf_config_json.projection_dim"))
      << refused.status();
  refused = ArchitectureFromHfConfig(config(gemma_2b, 1000, false));
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(),
                                "hf_config_json.vision_config.num_image_tokens"))
      << refused.status();
  refused = ArchitectureFromHfConfig(R"({"model_type": "paligemma", "vision_config": {}})");
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "hf_config_json.text_config"))
      << refused.status();
}

// Kimi K2.5 and K2.6 (kimi_k25): Kimi K2's DeepSeek-V3 model (text_config,
// the keys that decide the count), MoonViT (27 blocks of width 1152 with a
// 64 x 64 position table) and the patch merger (a LayerNorm over each 1152
// patch, 2 x 2 merged into 4608, linears 4608 x 4608 and 4608 x 7168), as a
// public dump of the checkpoint's configuration and its tensor table give
// them. The model card: "1T" total, a "400M" vision encoder; NVIDIA's card
// 32.86B active (the text model's, exact). The Hub's safetensors total
// (1,058,589,420,528) is of the INT4 files: the routed experts' group-32
// scales (31,708,938,240) and 8 x 138,240 weight_shape elements over the
// count.
TEST(MultimodalConfigTest, KimiK25IsKimiK2WithMoonVit) {
  const std::string config = R"({"model_type": "kimi_k25", "tie_word_embeddings": false,
      "text_config": {"model_type": "deepseek_v3", "vocab_size": 163840, "hidden_size": 7168,
        "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61,
        "num_nextn_predict_layers": 0, "num_attention_heads": 64, "num_key_value_heads": 64,
        "n_shared_experts": 1, "n_routed_experts": 384, "num_experts_per_tok": 8,
        "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "v_head_dim": 128,
        "qk_nope_head_dim": 128, "topk_method": "noaux_tc", "first_k_dense_replace": 1,
        "max_position_embeddings": 262144, "tie_word_embeddings": false},
      "vision_config": {"init_pos_emb_height": 64, "init_pos_emb_time": 4,
        "init_pos_emb_width": 64, "merge_kernel_size": [2, 2], "mm_hidden_size": 1152,
        "mm_projector_type": "patchmerger", "patch_size": 14, "text_hidden_size": 7168,
        "vt_hidden_size": 1152, "vt_intermediate_size": 4304, "vt_num_attention_heads": 16,
        "vt_num_hidden_layers": 27}})";
  const v1::CountParametersResponse r = Count(config);
  EXPECT_EQ(Component(r, "vision_encoder"), 416866032);
  EXPECT_EQ(Component(r, "projector"), 54277888);
  EXPECT_EQ(r.total_parameters(), 1026408232448 + 416866032 + 54277888);
  EXPECT_EQ(r.total_parameters() + 31708938240 + 8 * 138240, 1058589420528);
  // The checkpoint is INT4 (compressed-tensors, the routed experts only):
  // its tower and projector are bf16 (the tensor table), so the memory
  // answer sizes them at 16 bits, not at the checkpoint's format.
  std::string published = config;
  published.insert(1, R"("quantization_config": {"quant_method": "compressed-tensors",
      "format": "pack-quantized", "config_groups": {"group_0": {"targets": ["Linear"],
      "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 32,
      "symmetric": true}}}, "ignore": ["lm_head", "re:.*self_attn.*",
      "re:.*shared_experts.*", "re:.*mlp\\.(gate|up|gate_up|down)_proj.*"]}, )");
  v1::ModelSource source;
  source.mutable_inline_model()->set_hf_config_json(published);
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> memory = Memory(source);
  ASSERT_TRUE(memory.ok()) << memory.status();
  const v1::EstimateLine* tower = Line(*memory, "vision_encoder");
  ASSERT_NE(tower, nullptr);
  EXPECT_EQ(tower->bytes(), 2 * 416866032);
  EXPECT_TRUE(absl::StrContains(tower->arithmetic(), "published checkpoint's quantization"))
      << tower->arithmetic();
  EXPECT_TRUE(memory->workload().weight_format_from_checkpoint());
  // Kimi K3's merger (patchmergerv2: no pre-norm, no biases) is refused.
  std::string v2 = config;
  v2.replace(v2.find(R"("patchmerger")"), std::strlen(R"("patchmerger")"), R"("patchmergerv2")");
  auto refused = ArchitectureFromHfConfig(v2);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "mm_projector_type"))
      << refused.status();
}

// One edit of a config.json: the text replaced, its replacement, and the
// field its refusal must name.
struct ConfigEdit {
  const char* from;
  const char* to;
  const char* field;
};

// Each edit of `config`, alone, is INVALID_ARGUMENT naming its field.
void ExpectEditsRefusedByField(const std::string& config, std::initializer_list<ConfigEdit> edits) {
  for (const ConfigEdit& edit : edits) {
    std::string edited = config;
    edited.replace(edited.find(edit.from), std::strlen(edit.from), edit.to);
    absl::StatusOr<common::v1::Architecture> refused = ArchitectureFromHfConfig(edited);
    ASSERT_FALSE(refused.ok()) << edit.field;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << edit.field;
    EXPECT_TRUE(absl::StrContains(refused.status().message(), edit.field)) << refused.status();
  }
}

// GLM-4.1V and GLM-4.6V-Flash (glm4v): GLM-4's blocks with q/k/v biases
// (40 layers of 4,096, 2 KV heads, untied), Glm4vVisionModel (24 blocks of
// 1,536 with RMSNorms, unbiased attention and a GLU MLP of out_hidden_size
// 4,096; a biased Conv3d patch embedding, 576 positions, a 2 x 2
// downsampling conv into 4,096) and its patch merger (4,096 x 4,096, a
// LayerNorm, a GLU of 13,696); the keys as zai-org/GLM-4.6V-Flash's
// config.json gives them. Published: 10,292,777,472, the checkpoint's
// safetensors total (a public model survey and a public write-up of an
// abliterated copy quote it; a public fine-tuning log's "all params
// 10,327,562,752" is it plus its 34,785,280 LoRA parameters).
TEST(MultimodalConfigTest, Glm4vIsGlm4WithItsVitAndMerger) {
  const std::string config = R"({"architectures": ["Glm4vForConditionalGeneration"],
      "model_type": "glm4v",
      "text_config": {"model_type": "glm4v_text", "hidden_size": 4096,
        "intermediate_size": 13696, "num_hidden_layers": 40, "num_attention_heads": 32,
        "num_key_value_heads": 2, "vocab_size": 151552, "max_position_embeddings": 131072,
        "partial_rotary_factor": 0.5, "attention_bias": true, "tie_word_embeddings": false},
      "vision_config": {"model_type": "glm4v", "depth": 24, "hidden_size": 1536,
        "intermediate_size": 13696, "num_heads": 12, "out_hidden_size": 4096, "patch_size": 14,
        "spatial_merge_size": 2, "temporal_patch_size": 2, "image_size": 336, "in_channels": 3,
        "attention_bias": false, "hidden_act": "silu"}})";
  const v1::CountParametersResponse r = Count(config);
  // 576 x 1536 + (3 x 2 x 14^2 x 1536 + 1536) + 24 x (3072 + 4 x 1536^2 +
  // 3 x 1536 x 4096) + 2 x 1536 + (1536 x 4096 x 4 + 4096).
  EXPECT_EQ(Component(r, "vision_encoder"), 884736.0 + 1807872 + 24 * 28314624.0 + 3072 + 25169920);
  EXPECT_EQ(Component(r, "projector"), 4096.0 * 4096 + 2 * 4096 + 3 * 4096.0 * 13696);
  EXPECT_EQ(r.total_parameters(), 10292777472) << "zai-org/GLM-4.6V-Flash";
  // A merger whose output is not the text width, and a biased tower qkv,
  // are refused by field.
  ExpectEditsRefusedByField(config, {{R"("out_hidden_size": 4096)", R"("out_hidden_size": 2048)",
                                      "hf_config_json.vision_config.out_hidden_size"},
                                     {R"("attention_bias": false)", R"("attention_bias": true)",
                                      "hf_config_json.vision_config.attention_bias"}});
}

// GLM-4.5V (glm4v_moe, Glm4vMoeForConditionalGeneration): GLM-4.5-Air's
// MoE blocks (46 layers, the first dense; 128 experts of 1,408 and a shared
// one; q/k/v biases) without a multi-token-prediction layer (the config has
// no num_nextn_predict_layers, the checkpoint no layer 46), under GLM-4.1V's
// ViT and a merger of 10,944. Keys as zai-org/GLM-4.5V's config.json gives
// them. Published: 107,710,933,120, the checkpoint's safetensors total in
// llmfit's list (AlexsJones/llmfit data/hf_models.json) and a public weight
// report of its 46 files.
TEST(MultimodalConfigTest, Glm45vIsGlm45AirUnderGlm4vsVit) {
  const std::string config = R"({"architectures": ["Glm4vMoeForConditionalGeneration"],
      "model_type": "glm4v_moe", "tie_word_embeddings": false,
      "text_config": {"model_type": "glm4v_moe_text", "hidden_size": 4096,
        "intermediate_size": 10944, "moe_intermediate_size": 1408, "num_hidden_layers": 46,
        "num_attention_heads": 96, "num_key_value_heads": 8, "head_dim": 128,
        "n_routed_experts": 128, "n_shared_experts": 1, "num_experts_per_tok": 8,
        "first_k_dense_replace": 1, "attention_bias": true, "use_qk_norm": false,
        "partial_rotary_factor": 0.5, "vocab_size": 151552, "max_position_embeddings": 65536},
      "vision_config": {"model_type": "glm4v_moe", "depth": 24, "hidden_size": 1536,
        "intermediate_size": 10944, "out_hidden_size": 4096, "patch_size": 14, "image_size": 336,
        "spatial_merge_size": 2, "temporal_patch_size": 2, "in_channels": 3,
        "attention_bias": false, "num_heads": 12}})";
  const v1::CountParametersResponse r = Count(config);
  EXPECT_EQ(Component(r, "projector"), 4096.0 * 4096 + 2 * 4096 + 3 * 4096.0 * 10944);
  // The language model is GLM-4.5-Air's model that generates.
  EXPECT_EQ(r.total_parameters() - Component(r, "vision_encoder") - Component(r, "projector"),
            106852251264);
  EXPECT_EQ(r.total_parameters(), 107710933120) << "zai-org/GLM-4.5V";
  ExpectEditsRefusedByField(config, {{R"("out_hidden_size": 4096)", R"("out_hidden_size": 2048)",
                                      "hf_config_json.vision_config.out_hidden_size"}});
}

// MiniCPM-V (minicpmv, MiniCPMV remote code): the language model at the
// top level by version (2.5 Llama 3 8B's, 2.6 Qwen2's, 4.5 Qwen3's), a
// 27-block SigLIP-400M at 980 px without its head (417,792,240), and the
// Resampler: query_num queries of the text width t, a kv projection from
// 1,152, one multi-head attention, three LayerNorms and a t x t matrix. Keys
// as openbmb/MiniCPM-V-4_5's and MiniCPM-Llama3-V-2_5's config.json give
// them; 2.6's from its class and the language model's config. Published:
// the safetensors totals in llmfit's list (AlexsJones/llmfit
// data/hf_models.json), 2.6's also in floschne/gimmick's.
TEST(MultimodalConfigTest, MiniCpmvIsSiglipAResamplerAndItsVersionsLanguageModel) {
  const std::string vision =
      R"("vision_config": {"hidden_size": 1152, "image_size": 980, "intermediate_size": 4304,
         "model_type": "siglip", "num_attention_heads": 16, "num_hidden_layers": 27,
         "patch_size": 14})";
  const std::string v26 = absl::StrCat(
      R"({"architectures": ["MiniCPMV"], "model_type": "minicpmv", "version": 2.6,
          "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
          "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 151666,
          "tie_word_embeddings": false, "max_position_embeddings": 32768,
          "use_sliding_window": false, "drop_vision_last_layer": false, "query_num": 64, )",
      vision, "}");
  const std::string v25 = absl::StrCat(
      R"({"architectures": ["MiniCPMV"], "model_type": "minicpmv", "version": "2.5",
          "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
          "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
          "tie_word_embeddings": false, "max_position_embeddings": 8192,
          "drop_vision_last_layer": false, "query_num": 96, )",
      vision, "}");
  const std::string v45 = absl::StrCat(
      R"({"architectures": ["MiniCPMV"], "model_type": "minicpmv", "version": 4.5,
          "head_dim": 128, "hidden_size": 4096, "intermediate_size": 12288,
          "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8,
          "vocab_size": 151748, "tie_word_embeddings": false, "max_position_embeddings": 40960,
          "use_sliding_window": false, "drop_vision_last_layer": false, "query_num": 64, )",
      vision, "}");
  const auto resampler = [](double queries, double t) {
    return queries * t + 1152 * t + 4 * t * t + 4 * t + 6 * t + t * t;
  };
  struct Case {
    const std::string& config;
    double resampler;
    int64_t published;
    const char* repo;
  };
  for (const Case& c : {Case{v26, resampler(64, 3584), 8099175152, "openbmb/MiniCPM-V-2_6"},
                        Case{v25, resampler(96, 4096), 8537092336, "MiniCPM-Llama3-V-2_5"},
                        Case{v45, resampler(64, 4096), 8695895280, "openbmb/MiniCPM-V-4_5"}}) {
    SCOPED_TRACE(c.repo);
    const v1::CountParametersResponse r = Count(c.config);
    EXPECT_EQ(Component(r, "vision_encoder"), 417792240);
    EXPECT_EQ(Component(r, "projector"), c.resampler);
    EXPECT_EQ(r.total_parameters(), c.published);
  }
  // The language models are the published text models' shapes: Llama 3 8B,
  // Qwen2's blocks (q/k/v biases) and Qwen3's (QK norms).
  absl::StatusOr<common::v1::Architecture> qwen2 = ArchitectureFromHfConfig(v26);
  ASSERT_TRUE(qwen2.ok()) << qwen2.status();
  EXPECT_TRUE(qwen2->attention_qkv_bias());
  absl::StatusOr<common::v1::Architecture> qwen3 = ArchitectureFromHfConfig(v45);
  ASSERT_TRUE(qwen3.ok()) << qwen3.status();
  EXPECT_TRUE(qwen3->qk_norm());
  // drop_vision_last_layer (MiniCPMVConfig's default) drops one block.
  std::string dropped = v26;
  dropped.replace(dropped.find(R"("drop_vision_last_layer": false, )"), 33, "");
  EXPECT_EQ(Component(Count(dropped), "vision_encoder"), 417792240 - 15239504);
  // MiniCPM-V 2.0 and 4.0 (MiniCPM's own language models) are refused, and
  // a one-block tower the resampler would drop its only block from.
  ExpectEditsRefusedByField(v26,
                            {{R"("version": 2.6)", R"("version": 4.0)", "hf_config_json.version"}});
  ExpectEditsRefusedByField(dropped, {{R"("num_hidden_layers": 27)", R"("num_hidden_layers": 1)",
                                       "hf_config_json.vision_config.num_hidden_layers"}});
}

// Llama 3.2 Vision (mllama, MllamaForConditionalGeneration): Llama's
// blocks, 8 of the 11B's 40 layers cross-attention layers with QK norms of
// 128 and two gates, an embedding of 128,256 + 8 rows; the Mllama ViT (32
// local and 8 gated global layers of 1,280, tile tables of 9 aspect ratios x
// 4 tiles) and one biased linear from its 7,680-wide output. Keys as
// config.json of meta-llama/Llama-3.2-11B-Vision-Instruct gives them.
// Published: 10,670,220,835, NVIDIA's model page (build.nvidia.com,
// "Parameters: 10,670,220,835") and the safetensors total floschne/gimmick
// lists. No exact total of the 90B was found (Epoch AI 88.6B; Meta's card
// 88.8B).
constexpr char kLlama32VisionConfig[] =
    R"({"architectures": ["MllamaForConditionalGeneration"], "model_type": "mllama",
      "text_config": {"model_type": "mllama_text_model",
        "cross_attention_layers": [3, 8, 13, 18, 23, 28, 33, 38], "hidden_size": 4096,
        "intermediate_size": 14336, "num_hidden_layers": 40, "num_attention_heads": 32,
        "num_key_value_heads": 8, "max_position_embeddings": 131072, "vocab_size": 128256,
        "tie_word_embeddings": false},
      "vision_config": {"model_type": "mllama_vision_model", "hidden_size": 1280,
        "image_size": 560, "intermediate_size": 5120,
        "intermediate_layers_indices": [3, 7, 15, 23, 30], "max_num_tiles": 4,
        "num_global_layers": 8, "num_hidden_layers": 32, "patch_size": 14,
        "supported_aspect_ratios": [[1,1],[1,2],[1,3],[1,4],[2,1],[2,2],[3,1],[4,1]],
        "vision_output_dim": 7680}})";

TEST(MultimodalConfigTest, MllamaIsLlamaWithCrossAttentionLayersAndATiledVit) {
  const std::string config = kLlama32VisionConfig;
  const v1::CountParametersResponse r = Count(config);
  EXPECT_EQ(Component(r, "cross_attention"), 8 * (2 * 128 + 2));
  EXPECT_EQ(Component(r, "token_embedding"), (128256.0 + 8) * 4096);
  EXPECT_EQ(Component(r, "output_head"), 128256.0 * 4096);
  // Patch conv, class token, 1,601 positions and a gate, the tile table, the
  // two gated tile tables, two LayerNorms, 40 layers (2 x 8 gates).
  const double layer = 4 * 1280.0 * 1280 + 4 * 1280 + 2 * 1280.0 * 5120 + 5120 + 1280;
  EXPECT_EQ(Component(r, "vision_encoder"), 3 * 14 * 14 * 1280.0 + 1280 + 1601 * 1280.0 + 1 +
                                                9 * 4 * 1601 * 1280.0 + 2 * (9 * 4 * 1280.0 + 1) +
                                                4 * 1280 + 40 * layer + 16);
  EXPECT_EQ(Component(r, "projector"), 7680.0 * 4096 + 4096);
  EXPECT_EQ(r.total_parameters(), 10670220835) << "meta-llama/Llama-3.2-11B-Vision-Instruct";
  // The cache: 32 self-attention layers per text token, and the 8
  // cross-attention layers' one image, 6,404 positions.
  absl::StatusOr<common::v1::Architecture> arch = ArchitectureFromHfConfig(config);
  ASSERT_TRUE(arch.ok()) << arch.status();
  EXPECT_EQ(arch->cross_attention_positions(), 4 * (40 * 40 + 1));
  const Architecture core = ToCoreArchitecture(*arch);
  EXPECT_EQ(KvCacheBytesPerToken(core, NumberFormat::kBf16, nullptr), 2.0 * 32 * 8 * 128 * 2);
  EXPECT_EQ(KvCacheBytes(core, NumberFormat::kBf16, 8192, 2),
            (2.0 * 32 * 8 * 128 * 2 * 8192 + 2.0 * 8 * 8 * 128 * 6404 * 2) * 2);
  // Each image of a sequence adds its 6,404 positions; a text-only request
  // has no cross-attention cache.
  EXPECT_EQ(KvCacheBytes(core, NumberFormat::kBf16, 8192, 2, 3),
            (2.0 * 32 * 8 * 128 * 2 * 8192 + 3 * 2.0 * 8 * 8 * 128 * 6404 * 2) * 2);
  EXPECT_EQ(KvCacheBytes(core, NumberFormat::kBf16, 8192, 2, 0), 2.0 * 32 * 8 * 128 * 2 * 8192 * 2);
  // Refused by field: another language model, a layer index out of range,
  // an output width that is not the tower's states side by side.
  ExpectEditsRefusedByField(config,
                            {{R"("model_type": "mllama_text_model")", R"("model_type": "llama")",
                              "hf_config_json.text_config.model_type"},
                             {R"([3, 8, 13, 18, 23, 28, 33, 38])", R"([3, 8, 40])",
                              "hf_config_json.text_config.cross_attention_layers"},
                             {R"("vision_output_dim": 7680)", R"("vision_output_dim": 6400)",
                              "hf_config_json.vision_config"}});
}

// The memory answer sizes the cross-attention cache for the images asked
// (images_per_sequence), states the default of one when none was asked, and
// says the field is not used for a model without cross-attention layers.
TEST(MultimodalMemoryTest, CrossAttentionCacheHoldsTheImagesAsked) {
  constexpr int64_t kText = 2LL * 32 * 8 * 128 * 2 * 8192;  // 32 layers x 8,192 tokens
  constexpr int64_t kImage = 2LL * 8 * 8 * 128 * 6404 * 2;  // 8 layers x 6,404 positions
  const auto answer = [](std::optional<int> images, bool vision) {
    v1::EstimateInferenceMemoryRequest request;
    if (vision) {
      request.mutable_source()->mutable_inline_model()->set_hf_config_json(kLlama32VisionConfig);
    } else {
      request.set_model("Llama 3.1 8B");
    }
    request.mutable_workload()->set_context_length_tokens(8192);
    if (images.has_value()) request.mutable_workload()->set_images_per_sequence(*images);
    Waiter<v1::EstimateInferenceMemoryResponse> waiter;
    AnswerInferenceMemory(testing::Catalog(), request, waiter.done());
    EXPECT_TRUE(waiter.get().ok()) << waiter.get().status();
    return waiter.get().ok() ? *waiter.get() : v1::EstimateInferenceMemoryResponse();
  };
  const auto said = [](const v1::EstimateInferenceMemoryResponse& r, const char* text) {
    for (const std::string& warning : r.warnings()) {
      if (absl::StrContains(warning, text)) return true;
    }
    return false;
  };
  for (const auto& [images, kv_bytes, statement] :
       {std::tuple<std::optional<int>, int64_t, const char*>{
            std::nullopt, kText + kImage, ", 1 image per sequence (the default), batch 1"},
        {3, kText + 3 * kImage, ", 3 images per sequence, batch 1"},
        {0, kText, ", 0 images per sequence, batch 1"}}) {
    SCOPED_TRACE(images.value_or(-1));
    const v1::EstimateInferenceMemoryResponse r = answer(images, true);
    const v1::EstimateLine* kv = Line(r, "kv_cache");
    ASSERT_NE(kv, nullptr);
    EXPECT_EQ(kv->bytes(), kv_bytes);
    EXPECT_TRUE(absl::StrContains(r.workload().statement(), statement)) << r.workload().statement();
    EXPECT_EQ(r.workload().workload().images_per_sequence(), images.value_or(1));
    EXPECT_EQ(r.workload().images_per_sequence_defaulted(), !images.has_value());
    // The default is a warning that names the field; an asked number is not.
    EXPECT_EQ(said(r, "sized for one image per sequence (the default)"), !images.has_value());
  }
  EXPECT_TRUE(absl::StrContains(Line(answer(3, true), "kv_cache")->arithmetic(),
                                "cross-attention cache of 3 images: 8 layers x 2 (K and V) x 8 KV "
                                "heads x 128 head dim x 6404 positions per image x 3 x 2 bytes = " +
                                    std::to_string(3 * kImage) + " bytes"))
      << Line(answer(3, true), "kv_cache")->arithmetic();

  // A text model: the figure is not used, and the answer says so; without
  // the field, nothing is said of images.
  const v1::EstimateInferenceMemoryResponse text_model = answer(2, false);
  EXPECT_EQ(Line(text_model, "kv_cache")->bytes(),
            Line(answer(std::nullopt, false), "kv_cache")->bytes());
  EXPECT_TRUE(said(text_model, "images_per_sequence (2) is not used"));
  EXPECT_TRUE(text_model.workload().workload().has_images_per_sequence());
  EXPECT_FALSE(text_model.workload().images_per_sequence_defaulted());
  const v1::EstimateInferenceMemoryResponse plain = answer(std::nullopt, false);
  EXPECT_FALSE(plain.workload().workload().has_images_per_sequence());
  EXPECT_EQ(plain.workload().statement().find("image"), std::string::npos);
  EXPECT_FALSE(said(plain, "image"));
}

// A training estimate's activations are the language model's over the
// text: a multimodal model's answer says its encoders' are not counted, and
// Llama 3.2 Vision's that its cross-attention layers' over the image are
// not; a text-only model's says nothing of the kind.
TEST(MultimodalConfigTest, TrainingSaysWhichActivationsOfAVisionModelAreNotCounted) {
  for (const bool vision : {true, false}) {
    SCOPED_TRACE(vision);
    absl::StatusOr<common::v1::Architecture> arch = ArchitectureFromHfConfig(
        vision ? kLlama32VisionConfig
               : R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
                     "num_hidden_layers": 32, "num_attention_heads": 32,
                     "num_key_value_heads": 8, "vocab_size": 128256})");
    ASSERT_TRUE(arch.ok()) << arch.status();
    common::v1::Model model;
    model.set_name("models/inline");
    *model.mutable_architecture() = *arch;
    absl::StatusOr<v1::EstimateTrainingMemoryResponse> answer =
        EstimateTrainingMemoryFor(model, v1::TrainingSettings());
    ASSERT_TRUE(answer.ok()) << answer.status();
    bool said = false;
    for (const std::string& note : answer->notes()) {
      said = said || (absl::StrContains(note, "895028755 parameters are in the weights") &&
                      absl::StrContains(note, "over the image's 6404 positions"));
    }
    EXPECT_EQ(said, vision) << absl::StrJoin(answer->notes(), "\n");
  }
}

// The 90B: 100 layers of 8,192 (20 cross-attention layers), the 11B's tower,
// a 7,680 x 8,192 projector: 88,593,355,323, against Epoch AI's 88.6B (no
// exact published total found).
TEST(MultimodalConfigTest, Mllama90bIsTheSameTowerOverLlama31_70bsShape) {
  std::string config = kLlama32VisionConfig;
  for (const auto& [from, to] :
       {std::pair<const char*, const char*>{
            R"([3, 8, 13, 18, 23, 28, 33, 38])",
            "[3, 8, 13, 18, 23, 28, 33, 38, 43, 48, 53, 58, 63, 68, 73, "
            "78, 83, 88, 93, 98]"},
        {R"("hidden_size": 4096)", R"("hidden_size": 8192)"},
        {R"("intermediate_size": 14336)", R"("intermediate_size": 28672)"},
        {R"("num_hidden_layers": 40)", R"("num_hidden_layers": 100)"},
        {R"("num_attention_heads": 32)", R"("num_attention_heads": 64)"}}) {
    config.replace(config.find(from), std::strlen(from), to);
  }
  const v1::CountParametersResponse r = Count(config);
  EXPECT_EQ(r.total_parameters(), 88593355323);
  EXPECT_NEAR(r.total_parameters() / 88.6e9, 1, 0.001) << "Epoch AI: 88.6B";
}

// Phi-3-vision and Phi-3.5-vision (phi3_v, Phi3VForCausalLM): Phi-3 mini
// at the top level (untied, 32,064 entries), CLIP ViT-L/14-336 with both
// LayerNorms (303,507,456) and the HD transform's separators and
// projection: 2 x 4,096 + 4,096 x 3,072 + 3,072 + 3,072 x 3,072 + 3,072 =
// 22,034,432; the keys as microsoft/Phi-3-vision-128k-instruct's
// config.json gives them. Published: TIGER-Lab/VLM2Vec-Full (a fine-tune of
// Phi-3.5-vision-instruct, the same shape) 4,146,621,440, its safetensors
// total in llmfit's list (../shared/data/model_catalogs).
TEST(MultimodalConfigTest, Phi3VisionIsPhi3MiniClipAndItsHdProjection) {
  const std::string config = R"({"architectures": ["Phi3VForCausalLM"], "model_type": "phi3_v",
      "embd_layer": {"embedding_cls": "image", "hd_transform_order": "sub_glb",
        "projection_cls": "mlp", "use_hd_transform": true, "with_learnable_separator": true},
      "hidden_act": "silu", "hidden_size": 3072,
      "img_processor": {"image_dim_out": 1024, "model_name": "openai/clip-vit-large-patch14-336",
        "name": "clip_vision_model", "num_img_tokens": 144},
      "intermediate_size": 8192, "max_position_embeddings": 131072, "num_attention_heads": 32,
      "num_hidden_layers": 32, "num_key_value_heads": 32, "original_max_position_embeddings": 4096,
      "rms_norm_eps": 1e-05, "sliding_window": 131072, "tie_word_embeddings": false,
      "vocab_size": 32064})";
  const v1::CountParametersResponse r = Count(config);
  EXPECT_EQ(Component(r, "vision_encoder"), 303507456);
  EXPECT_EQ(Component(r, "projector"), 2 * 4096 + 4096.0 * 3072 + 3072 + 3072.0 * 3072 + 3072);
  EXPECT_EQ(r.total_parameters(), 4146621440) << "TIGER-Lab/VLM2Vec-Full (Phi-3.5-vision)";
  // The language model alone is Phi-3 mini's own count.
  EXPECT_EQ(r.total_parameters() - Component(r, "vision_encoder") - Component(r, "projector"),
            3821079552);
  // Other towers and projections are refused by field.
  struct Edit {
    const char* field;
    const char* from;
    const char* to;
  };
  for (const Edit& edit :
       {Edit{"img_processor.model_name", R"("openai/clip-vit-large-patch14-336")",
             R"("openai/clip-vit-base-patch32")"},
        Edit{"embd_layer.projection_cls", R"("projection_cls": "mlp")",
             R"("projection_cls": "linear")"},
        Edit{"embd_layer.use_hd_transform", R"("use_hd_transform": true)",
             R"("use_hd_transform": false)"}}) {
    std::string edited = config;
    edited.replace(edited.find(edit.from), std::strlen(edit.from), edit.to);
    absl::StatusOr<common::v1::Architecture> refused = ArchitectureFromHfConfig(edited);
    ASSERT_FALSE(refused.ok()) << edit.field;
    EXPECT_TRUE(
        absl::StrContains(refused.status().message(), absl::StrCat("hf_config_json.", edit.field)))
        << refused.status();
  }
}

// Kimi-VL (kimi_vl): Kimi K2.5's MoonViT and patch merger
// (KimiVLMultiModalProjector: a LayerNorm over each 1,152 patch, 2 x 2
// merged into 4,608, linears 4,608 x 4,608 and 4,608 x 2,048 with biases)
// over Moonlight-16B-A3B's DeepSeek-V3-style language model, the keys as
// moonshotai/Kimi-VL-A3B-Instruct's config.json gives them. No published
// total of Kimi-VL was found; the language model's count against
// Moonlight-16B-A3B's safetensors total in llmfit's list (15,960,111,936)
// is 1,728 short (64 per layer: a buffer or bias the checkpoint stores,
// not identified), the tower's the K2.5 tower's exact figure.
TEST(MultimodalConfigTest, KimiVlIsMoonVitOverMoonlight) {
  const std::string config = R"({"architectures": ["KimiVLForConditionalGeneration"],
      "model_type": "kimi_vl",
      "vision_config": {"model_type": "moonvit", "patch_size": 14, "init_pos_emb_height": 64,
        "init_pos_emb_width": 64, "num_attention_heads": 16, "num_hidden_layers": 27,
        "hidden_size": 1152, "intermediate_size": 4304, "merge_kernel_size": [2, 2]},
      "text_config": {"model_type": "deepseek_v3", "vocab_size": 163840, "hidden_size": 2048,
        "intermediate_size": 11264, "moe_intermediate_size": 1408, "num_hidden_layers": 27,
        "num_attention_heads": 16, "num_key_value_heads": 16, "n_shared_experts": 2,
        "n_routed_experts": 64, "num_experts_per_tok": 6, "kv_lora_rank": 512,
        "q_lora_rank": null, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
        "v_head_dim": 128, "first_k_dense_replace": 1, "topk_method": "noaux_tc",
        "tie_word_embeddings": false, "max_position_embeddings": 131072}})";
  const v1::CountParametersResponse r = Count(config);
  EXPECT_EQ(Component(r, "vision_encoder"), 416866032);
  EXPECT_EQ(Component(r, "projector"), 2 * 1152 + 4608.0 * 4608 + 4608 + 4608.0 * 2048 + 2048);
  const double language_model =
      r.total_parameters() - Component(r, "vision_encoder") - Component(r, "projector");
  EXPECT_EQ(language_model, 15960111936 - 1728) << "moonshotai/Moonlight-16B-A3B";
  EXPECT_EQ(r.total_parameters(), 16407656048);
}

// DeepSeek-OCR (deepseek_vl_v2, DeepseekOCRForCausalLM): DeepSeek-V2's MoE
// model without latent attention (use_mla false: q/k/v/o of 1280 x 1280),
// the DeepEncoder its code builds at fixed shapes (SAM ViT-B 95,569,152 and
// CLIP-L without a post-LayerNorm 303,177,728) and a linear projector from
// 2048 with image_newline and view_seperator. The config.json as a public
// report of the checkpoint quotes it (with its tensor table, 2,710 tensors).
// Published: 3,336,106,240, its safetensors total in llmfit's later list.
TEST(MultimodalConfigTest, DeepSeekOcrAndVl2TinyAreCountedExactly) {
  const std::string config =
      R"({"architectures": ["DeepseekOCRForCausalLM"], "model_type": "deepseek_vl_v2",
          "language_config": {"architectures": ["DeepseekV2ForCausalLM"],
            "first_k_dense_replace": 1, "hidden_size": 1280, "intermediate_size": 6848,
            "kv_lora_rank": null, "lm_head": true, "max_position_embeddings": 8192,
            "moe_intermediate_size": 896, "n_group": 1, "n_routed_experts": 64,
            "n_shared_experts": 2, "num_attention_heads": 10, "num_experts_per_tok": 6,
            "num_hidden_layers": 12, "num_key_value_heads": 10, "q_lora_rank": null,
            "qk_nope_head_dim": 0, "qk_rope_head_dim": 0, "rm_head": false, "topk_group": 1,
            "topk_method": "greedy", "use_mla": false, "v_head_dim": 0, "vocab_size": 129280},
          "projector_config": {"input_dim": 2048, "model_type": "mlp_projector", "n_embed": 1280,
            "projector_type": "linear"},
          "vision_config": {"image_size": 1024, "mlp_ratio": 3.7362, "model_name": "deeplip_b_l",
            "model_type": "vision", "width": {"clip-l-14-224": {"heads": 16, "image_size": 224,
            "layers": 24, "patch_size": 14, "width": 1024}, "sam_vit_b": {"downsample_channels":
            [512, 1024], "global_attn_indexes": [2, 5, 8, 11], "heads": 12, "layers": 12,
            "width": 768}}}})";
  const v1::CountParametersResponse r = Count(config);
  EXPECT_EQ(Component(r, "vision_encoder"), 95569152 + 303177728);
  EXPECT_EQ(Component(r, "projector"), 2048.0 * 1280 + 1280 + 2 * 1280);
  EXPECT_EQ(r.total_parameters(), 3336106240);
  EXPECT_TRUE(absl::StrContains(r.architecture().source(), "language_config"))
      << r.architecture().source();
  // DeepSeek-OCR-2 shares the model_type, not the encoder: refused.
  std::string ocr2 = config;
  ocr2.replace(ocr2.find("DeepseekOCRForCausalLM"), std::strlen("DeepseekOCRForCausalLM"),
               "DeepseekOCR2ForCausalLM");
  auto refused = ArchitectureFromHfConfig(ocr2);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "architectures")) << refused.status();

  // DeepSeek-VL2-Tiny: the same language model, SigLIP-so400m/14@384 with
  // the attention-pooling head its code builds (unused, stored: 15,238,352;
  // without it the total is 3,355,263,088) and the downsample_mlp_gelu
  // projector. Its configuration as public copies quote it
  // (Isotr0py/deepseek-vl2-tiny); published: 3,370,501,440, that copy's
  // safetensors total in llmfit's later list.
  std::string tiny = config;
  tiny.replace(tiny.find("DeepseekOCRForCausalLM"), std::strlen("DeepseekOCRForCausalLM"),
               "DeepseekVLV2ForCausalLM");
  tiny.replace(tiny.find(R"("projector_config")"), std::string::npos,
               R"("projector_config": {"projector_type": "downsample_mlp_gelu", "input_dim": 1152,
                   "n_embed": 1280, "depth": 2, "mlp_ratio": 1, "downsample_ratio": 2},
                 "vision_config": {"model_name": "siglip_so400m_patch14_384",
                   "image_size": 384, "patch_size": 14, "width": 1152, "layers": 27,
                   "heads": 16, "mlp_ratio": 3.7362}})");
  const v1::CountParametersResponse vl2 = Count(tiny);
  EXPECT_EQ(Component(vl2, "vision_encoder"), 412987248 + 15238352);
  EXPECT_EQ(Component(vl2, "projector"), 7539200 + 2 * 1280);
  EXPECT_EQ(vl2.total_parameters(), 3370501440);
}

TEST(MultimodalConfigTest, Llava15CountsTheLanguageModelTowerAndProjector) {
  // llava-hf/llava-1.5-7b-hf: 7.06B parameters (the Hub's safetensors
  // summary on the model page). Vicuna-7B's text_config leaves the widths to
  // LlamaConfig's defaults.
  v1::CountParametersResponse r = Count(kLlava15_7b);
  EXPECT_LT(RelativeError(r.total_parameters(), 7.06e9), 0.001) << r.total_parameters();
  EXPECT_LT(RelativeError(Component(r, "vision_encoder"), 303.5e6), 0.0005);
  // LlavaMultiModalProjector: 1024x4096 + 4096 + 4096x4096 + 4096.
  EXPECT_DOUBLE_EQ(Component(r, "projector"), 1024.0 * 4096 + 4096 + 4096.0 * 4096 + 4096);
  EXPECT_EQ(r.architecture().model_type(), "llama");
  EXPECT_EQ(r.architecture().hidden_size(), 4096);
  EXPECT_TRUE(absl::StrContains(r.architecture().source(), "llava")) << r.architecture().source();
}

TEST(MultimodalConfigTest, Qwen2VlAndQwen25VlMatchTheirPublishedCounts) {
  // Qwen/Qwen2-VL-7B-Instruct: 8.29B (Hub model page); its ViT is 675M
  // (Wang et al. 2024, "Qwen2-VL", section 2.1: "a Vision Transformer with
  // approximately 675 million parameters"), the merger counted apart here.
  v1::CountParametersResponse vl = Count(kQwen2Vl7b);
  EXPECT_LT(RelativeError(vl.total_parameters(), 8.29e9), 0.001) << vl.total_parameters();
  EXPECT_LT(RelativeError(Component(vl, "vision_encoder") + Component(vl, "projector"), 675e6),
            0.002);
  // Qwen/Qwen2.5-VL-7B-Instruct: 8.29B (Hub model page).
  v1::CountParametersResponse vl25 = Count(kQwen25Vl7b);
  EXPECT_LT(RelativeError(vl25.total_parameters(), 8.29e9), 0.001) << vl25.total_parameters();
  EXPECT_NE(Component(vl25, "vision_encoder"), Component(vl, "vision_encoder"));
}

TEST(MultimodalConfigTest, Gemma3AndQwen2AudioMatchTheirPublishedCounts) {
  // google/gemma-3-4b-it: 4.3B (Hub model page; Gemma 3 Technical Report
  // Table 1: 417M vision encoder + 675M embedding + 3,209M non-embedding).
  v1::CountParametersResponse gemma = Count(kGemma3_4b);
  EXPECT_LT(RelativeError(gemma.total_parameters(), 4.3e9), 0.001) << gemma.total_parameters();
  EXPECT_LT(RelativeError(Component(gemma, "vision_encoder"), 417e6), 0.002);
  EXPECT_DOUBLE_EQ(Component(gemma, "projector"), 1152.0 * 2560 + 1152);
  // Qwen/Qwen2-Audio-7B: 8.4B (Hub model page); its audio encoder is
  // Whisper-large-v3's (Chu et al. 2024, "Qwen2-Audio Technical Report").
  v1::CountParametersResponse audio = Count(kQwen2Audio7b);
  EXPECT_LT(RelativeError(audio.total_parameters(), 8.4e9), 0.001) << audio.total_parameters();
  EXPECT_GT(Component(audio, "audio_encoder"), 0);
  EXPECT_DOUBLE_EQ(Component(audio, "projector"), 1280.0 * 4096 + 4096);
}

TEST(MultimodalConfigTest, Llama4ScoutAndMaverickAreCountedExactly) {
  // The checkpoints' safetensors totals: Maverick 401,583,781,376
  // (../shared/data/model_catalogs/llmfit_hf_models.json, parameters_raw of
  // meta-llama/Llama-4-Maverick-17B-128E-Instruct), Scout 108,641,793,536
  // (the Hub's total for meta-llama/Llama-4-Scout-17B-16E-Instruct, "109B").
  v1::CountParametersResponse scout = Count(kLlama4Scout);
  EXPECT_EQ(scout.total_parameters(), 108641793536) << scout.total_parameters();
  v1::CountParametersResponse maverick = Count(kLlama4Maverick);
  EXPECT_EQ(maverick.total_parameters(), 401583781376) << maverick.total_parameters();
  // Llama4VisionModel with its pixel-shuffle adapter, and the projector's
  // one unbiased linear (vision_output_dim x the text width): the same in
  // both checkpoints.
  for (const auto* r : {&scout, &maverick}) {
    EXPECT_DOUBLE_EQ(Component(*r, "projector"), 4096.0 * 5120);
    EXPECT_DOUBLE_EQ(Component(*r, "vision_encoder") + Component(*r, "projector"), 871932416);
  }
  // Meta's model cards: 17B active parameters each, the language model's
  // (ours 17.17B and 17.18B: both embeddings, attention, the routed and the
  // shared expert); the active figure adds the vision parts.
  for (const auto* r : {&scout, &maverick}) {
    const double language_active =
        r->active_parameters() - Component(*r, "vision_encoder") - Component(*r, "projector");
    EXPECT_LT(RelativeError(language_active, 17e9), 0.011) << language_active;
  }
  // Every layer routed in Scout; every second in Maverick, the others dense
  // at intermediate_size_mlp. Three layers in four use RoPE and attend
  // within 8,192-token chunks, so a cache holds a chunk of them.
  EXPECT_EQ(scout.architecture().num_dense_layers(), 0);
  EXPECT_EQ(maverick.architecture().num_dense_layers(), 24);
  EXPECT_EQ(maverick.architecture().intermediate_size(), 16384);
  EXPECT_EQ(maverick.architecture().moe_intermediate_size(), 8192);
  for (const auto* r : {&scout, &maverick}) {
    EXPECT_EQ(r->architecture().sliding_window(), 8192);
    EXPECT_EQ(r->architecture().num_sliding_window_layers(), 36);
  }
  // Widths that describe no runnable adapter are refused by name.
  std::string uneven = kLlama4Scout;
  uneven.replace(uneven.find("\"projector_output_dim\": 4096"),
                 std::string("\"projector_output_dim\": 4096").size(),
                 "\"projector_output_dim\": 2048");
  absl::Status refused = ArchitectureFromHfConfig(uneven).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(refused.ToString(), "projector_output_dim")) << refused;
}

// Qwen3.5 (qwen3_5, qwen3_5_moe; Qwen3.6 shares them): Qwen3-Next's hybrid
// language model in text_config, one multi-token-prediction layer sharing
// its embedding and head, and a Qwen3-VL vision tower without deepstack
// (vision_config). The keys that decide each count, as the checkpoints'
// config.json files give them (vocabulary 248,320, head_dim 256, 16 linear
// key heads, key and value heads of 128, conv kernel 4, full attention every
// 4th layer; the tower: depth 27, width 1152, MLP 4304, 2,304 positions,
// patches of 16 x 16 x 2); the totals are the checkpoints' safetensors
// counts, llmfit data/hf_models.json (rauletorresc/llmfit@6797f30):
// language model + MTP layer + vision tower.
std::string Qwen35Config(const char* type, const std::string& text_keys, int64_t hidden) {
  return absl::StrCat(
      R"({"model_type": ")", type, R"(", "tie_word_embeddings": false, "text_config": {)",
      R"("vocab_size": 248320, "head_dim": 256, "linear_num_key_heads": 16,)",
      R"( "linear_key_head_dim": 128, "linear_value_head_dim": 128,)",
      R"( "linear_conv_kernel_dim": 4, "full_attention_interval": 4,)",
      R"( "mtp_num_hidden_layers": 1, "mamba_ssm_dtype": "float32",)",
      R"( "max_position_embeddings": 262144, "hidden_size": )", hidden, ", ", text_keys, "},",
      R"( "vision_config": {"depth": 27, "hidden_size": 1152, "intermediate_size": 4304,)",
      R"( "num_heads": 16, "in_channels": 3, "patch_size": 16, "temporal_patch_size": 2,)",
      R"( "spatial_merge_size": 2, "num_position_embeddings": 2304, "deepstack_visual_indexes": [],)",
      R"( "out_hidden_size": )", hidden, "}}");
}

TEST(MultimodalConfigTest, Qwen35IsCountedExactlyWithItsMtpLayerAndVisionTower) {
  struct Case {
    const char* checkpoint;
    std::string config;
    double language_model, mtp, vision, published;
  };
  const Case cases[] = {
      {"Qwen/Qwen3.5-27B",
       Qwen35Config("qwen3_5",
                    R"("num_hidden_layers": 64, "intermediate_size": 17408,
                       "num_attention_heads": 24, "num_key_value_heads": 4,
                       "linear_num_value_heads": 48)",
                    5120),
       26895998464, 424699392, 460730096, 27781427952},
      {"Qwen/Qwen3.5-35B-A3B",
       Qwen35Config("qwen3_5_moe",
                    R"("num_hidden_layers": 40, "num_experts": 256, "num_experts_per_tok": 8,
                       "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512,
                       "num_attention_heads": 16, "num_key_value_heads": 2,
                       "linear_num_value_heads": 32)",
                    2048),
       34660610688, 844640768, 446571248, 35951822704},
      {"Qwen/Qwen3.5-122B-A10B",
       Qwen35Config("qwen3_5_moe",
                    R"("num_hidden_layers": 48, "num_experts": 256, "num_experts_per_tok": 8,
                       "moe_intermediate_size": 1024, "shared_expert_intermediate_size": 1024,
                       "num_attention_heads": 32, "num_key_value_heads": 2,
                       "linear_num_value_heads": 64)",
                    3072),
       122111526912, 2523679232, 451290864, 125086497008},
      {"Qwen/Qwen3.5-397B-A17B",
       Qwen35Config("qwen3_5_moe",
                    R"("num_hidden_layers": 60, "num_experts": 512, "num_experts_per_tok": 10,
                       "moe_intermediate_size": 1024, "shared_expert_intermediate_size": 1024,
                       "num_attention_heads": 32, "num_key_value_heads": 2,
                       "linear_num_value_heads": 64)",
                    4096),
       396346350336, 6595568128, 456010480, 403397928944},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.checkpoint);
    absl::StatusOr<common::v1::Architecture> arch = ArchitectureFromHfConfig(c.config);
    ASSERT_TRUE(arch.ok()) << arch.status();
    EXPECT_EQ(arch->recurrent_mixer(), "gated_deltanet");
    EXPECT_TRUE(arch->ssm_state_fp32());
    absl::StatusOr<ParameterCount> count = CountParameters(ToCoreArchitecture(*arch));
    ASSERT_TRUE(count.ok()) << count.status();
    EXPECT_EQ(count->total, c.language_model);
    EXPECT_EQ(count->multi_token_prediction, c.mtp);
    EXPECT_EQ(EncoderPartsParameters(*arch), c.vision);
    EXPECT_EQ(count->total + count->multi_token_prediction + EncoderPartsParameters(*arch),
              c.published);
  }
  // Deepstack mergers (Qwen3-VL's) are not counted: refused by name.
  absl::Status deepstack =
      ArchitectureFromHfConfig(
          R"({"model_type": "qwen3_5", "text_config": {"hidden_size": 64, "num_hidden_layers": 4,)"
          R"( "num_attention_heads": 4, "vocab_size": 100},)"
          R"( "vision_config": {"depth": 2, "hidden_size": 32, "intermediate_size": 64,)"
          R"( "out_hidden_size": 64, "deepstack_visual_indexes": [1]}})")
          .status();
  EXPECT_EQ(deepstack.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(deepstack.ToString(), "deepstack_visual_indexes")) << deepstack;
}

// Qwen3-VL's config.json (qwen3_vl, qwen3_vl_moe; the keys that decide the
// count): text_config is Qwen3's or Qwen3-MoE's blocks, vision_config
// Qwen3-VL's tower with three deepstack mergers beside its merger.
std::string Qwen3VlConfig(const char* type, const char* text, int vision_depth, int vision_hidden,
                          int vision_mlp, int hidden, const char* deepstack, bool tied) {
  return absl::StrCat(R"({"model_type": ")", type, R"(", "tie_word_embeddings": )",
                      tied ? "true" : "false", R"(, "text_config": {"hidden_size": )", hidden,
                      R"(, "head_dim": 128, "vocab_size": 151936, )", text,
                      R"(}, "vision_config": {"depth": )", vision_depth, R"(, "hidden_size": )",
                      vision_hidden, R"(, "intermediate_size": )", vision_mlp,
                      R"(, "num_heads": 16, "in_channels": 3, "patch_size": 16,)",
                      R"( "temporal_patch_size": 2, "spatial_merge_size": 2,)",
                      R"( "num_position_embeddings": 2304, "out_hidden_size": )", hidden,
                      R"(, "deepstack_visual_indexes": )", deepstack, "}}");
}

// Published: each checkpoint's safetensors total, as llmfit's later
// hf_models.json lists them (AlexsJones/llmfit llmfit-core/data/
// hf_models.json at a3e0eb2, read from a public copy; Qwen3-VL-30B-A3B's is
// also in ../shared/data's older list): 2B 2,127,532,032; 4B 4,437,815,808;
// 8B 8,767,123,696; 32B 33,357,390,064; 30B-A3B 31,070,754,032;
// 235B-A22B 235,670,022,896.
TEST(MultimodalConfigTest, Qwen3VlIsCountedExactlyWithItsDeepstackMergers) {
  struct Case {
    const char* checkpoint;
    std::string config;
    double language_model, vision, published;
  };
  constexpr char kSmallTower[] = "[5, 11, 17]";
  constexpr char kLargeTower[] = "[8, 16, 24]";
  const Case cases[] = {
      {"Qwen/Qwen3-VL-2B-Instruct",
       Qwen3VlConfig("qwen3_vl",
                     R"("intermediate_size": 6144, "num_hidden_layers": 28,
                        "num_attention_heads": 16, "num_key_value_heads": 8)",
                     24, 1024, 4096, 2048, kSmallTower, true),
       1720574976, 406957056, 2127532032},
      {"Qwen/Qwen3-VL-4B-Instruct",
       Qwen3VlConfig("qwen3_vl",
                     R"("intermediate_size": 9728, "num_hidden_layers": 36,
                        "num_attention_heads": 32, "num_key_value_heads": 8)",
                     24, 1024, 4096, 2560, kSmallTower, true),
       4022468096, 415347712, 4437815808},
      {"Qwen/Qwen3-VL-8B-Instruct",
       Qwen3VlConfig("qwen3_vl",
                     R"("intermediate_size": 12288, "num_hidden_layers": 36,
                        "num_attention_heads": 32, "num_key_value_heads": 8)",
                     27, 1152, 4304, 4096, kLargeTower, false),
       8190735360, 576388336, 8767123696},
      {"Qwen/Qwen3-VL-32B-Instruct",
       Qwen3VlConfig("qwen3_vl",
                     R"("intermediate_size": 25600, "num_hidden_layers": 64,
                        "num_attention_heads": 64, "num_key_value_heads": 8)",
                     27, 1152, 4304, 5120, kLargeTower, false),
       32762123264, 595266800, 33357390064},
      {"Qwen/Qwen3-VL-30B-A3B-Instruct",
       Qwen3VlConfig("qwen3_vl_moe",
                     R"("intermediate_size": 6144, "num_hidden_layers": 48,
                        "num_attention_heads": 32, "num_key_value_heads": 4, "num_experts": 128,
                        "num_experts_per_tok": 8, "moe_intermediate_size": 768,
                        "decoder_sparse_step": 1, "mlp_only_layers": [])",
                     27, 1152, 4304, 2048, kLargeTower, false),
       30532122624, 538631408, 31070754032},
      {"Qwen/Qwen3-VL-235B-A22B-Instruct",
       Qwen3VlConfig("qwen3_vl_moe",
                     R"("intermediate_size": 12288, "num_hidden_layers": 94,
                        "num_attention_heads": 64, "num_key_value_heads": 4, "num_experts": 128,
                        "num_experts_per_tok": 8, "moe_intermediate_size": 1536,
                        "decoder_sparse_step": 1, "mlp_only_layers": [])",
                     27, 1152, 4304, 4096, kLargeTower, false),
       235093634560, 576388336, 235670022896},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.checkpoint);
    absl::StatusOr<common::v1::Architecture> arch = ArchitectureFromHfConfig(c.config);
    ASSERT_TRUE(arch.ok()) << arch.status();
    ASSERT_EQ(arch->encoder_parts_size(), 2);
    EXPECT_EQ(arch->encoder_parts(1).layout(), "qwen3_vl_merger");
    EXPECT_EQ(arch->encoder_parts(1).num_layers(), 3);
    absl::StatusOr<ParameterCount> count = CountParameters(ToCoreArchitecture(*arch));
    ASSERT_TRUE(count.ok()) << count.status();
    EXPECT_EQ(count->total, c.language_model);
    EXPECT_EQ(EncoderPartsParameters(*arch), c.vision);
    EXPECT_EQ(count->total + EncoderPartsParameters(*arch), c.published);
  }
}

// mistralai/Mistral-Small-3.1-24B-Instruct-2503 config.json (mistral3; the
// keys that decide the count): Mistral Small 3's language model, a Pixtral
// tower and Mistral3MultiModalProjector without biases. Published:
// 24,011,361,280, the checkpoint's safetensors total; the language model
// alone is Mistral-Small-24B-Base-2501's 23,572,403,200 (llmfit's
// data/hf_models.json).
constexpr char kMistralSmall31[] = R"({
  "model_type": "mistral3", "multimodal_projector_bias": false, "spatial_merge_size": 2,
  "vision_feature_layer": -1, "projector_hidden_act": "gelu",
  "text_config": {"model_type": "mistral", "hidden_size": 5120, "intermediate_size": 32768,
    "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8,
    "head_dim": 128, "vocab_size": 131072, "max_position_embeddings": 131072,
    "sliding_window": null},
  "vision_config": {"model_type": "pixtral", "hidden_size": 1024, "intermediate_size": 4096,
    "num_hidden_layers": 24, "num_attention_heads": 16, "head_dim": 64, "num_channels": 3,
    "image_size": 1540, "patch_size": 14}})";

TEST(MultimodalConfigTest, MistralSmall31IsCountedExactlyWithItsPixtralTower) {
  absl::StatusOr<common::v1::Architecture> arch = ArchitectureFromHfConfig(kMistralSmall31);
  ASSERT_TRUE(arch.ok()) << arch.status();
  ASSERT_EQ(arch->encoder_parts_size(), 2);
  EXPECT_EQ(arch->encoder_parts(0).layout(), "pixtral_vision");
  EXPECT_EQ(arch->encoder_parts(1).layout(), "mistral3_projector");
  absl::StatusOr<ParameterCount> count = CountParameters(ToCoreArchitecture(*arch));
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(count->total, 23572403200);
  // Pixtral: 24 x (4 x 1024^2 + 3 x 1024 x 4096 + 2 x 1024) + 3 x 14^2 x
  // 1024 + 1024; the projector: 1024 + 4096 x 1024 + 1024 x 5120 + 5120^2.
  EXPECT_EQ(EncoderPartsParameters(*arch), 403305472 + 35652608);
  EXPECT_EQ(count->total + EncoderPartsParameters(*arch), 24011361280);
  // Another tower under mistral3 is refused naming the field.
  std::string other = kMistralSmall31;
  other.replace(other.find(R"("pixtral")"), 9, R"("siglip_vision_model")");
  const absl::Status tower = ArchitectureFromHfConfig(other).status();
  EXPECT_EQ(tower.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(tower.ToString(), "hf_config_json.vision_config.model_type"))
      << tower;
  // A top-level tie_word_embeddings (Mistral3Config's own, true by default
  // in newer transformers) does not tie the language model's head.
  std::string saved = kMistralSmall31;
  saved.replace(saved.find('{') + 1, 0, R"("tie_word_embeddings": true, )");
  absl::StatusOr<common::v1::Architecture> resaved = ArchitectureFromHfConfig(saved);
  ASSERT_TRUE(resaved.ok()) << resaved.status();
  EXPECT_FALSE(resaved->tie_word_embeddings());
  // What the projector would hold with biases, or with several vision
  // layers' features, is not counted: refused by field.
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"multimodal_projector_bias", "true"}, {"vision_feature_layer", "[-1, -2]"}}) {
    std::string config = kMistralSmall31;
    const std::string from = absl::StrCat("\"", key, "\": ");
    const size_t at = config.find(from) + from.size();
    config.replace(at, config.find(',', at) - at, value);
    const absl::Status refused = ArchitectureFromHfConfig(config).status();
    EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << key;
    EXPECT_TRUE(absl::StrContains(refused.ToString(), absl::StrCat("hf_config_json.", key)))
        << refused;
  }
}

// mistral-community/pixtral-12b config.json (llava with a pixtral tower;
// the keys that decide the count): Mistral NeMo's language model, a Pixtral
// tower of 16-pixel patches and LLaVA's projector (two biased linears).
// Published: 12,682,739,712, the checkpoint's safetensors total in llmfit's
// later hf_models.json (AlexsJones/llmfit, mistral-experimental/pixtral-12b).
TEST(MultimodalConfigTest, Pixtral12bInLlavaFormatIsCountedExactly) {
  absl::StatusOr<common::v1::Architecture> arch = ArchitectureFromHfConfig(R"({
    "model_type": "llava", "projector_hidden_act": "gelu",
    "text_config": {"model_type": "mistral", "hidden_size": 5120, "intermediate_size": 14336,
      "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8,
      "head_dim": 128, "vocab_size": 131072, "max_position_embeddings": 1024000},
    "vision_config": {"model_type": "pixtral", "hidden_size": 1024, "intermediate_size": 4096,
      "num_hidden_layers": 24, "num_attention_heads": 16, "image_size": 1024,
      "patch_size": 16}})");
  ASSERT_TRUE(arch.ok()) << arch.status();
  ASSERT_EQ(arch->encoder_parts_size(), 2);
  EXPECT_EQ(arch->encoder_parts(0).layout(), "pixtral_vision");
  EXPECT_EQ(arch->encoder_parts(1).layout(), "llava_projector");
  absl::StatusOr<ParameterCount> count = CountParameters(ToCoreArchitecture(*arch));
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(count->total, 12247782400);
  EXPECT_EQ(EncoderPartsParameters(*arch), 403489792 + 31467520);
  EXPECT_EQ(count->total + EncoderPartsParameters(*arch), 12682739712);
}

TEST(MultimodalConfigTest, UnsupportedFamiliesAreRefusedNamingTheSupportedOnes) {
  for (const char* config :
       {R"({"model_type": "gemma3n", "vision_config": {}, "text_config": {}})",
        R"({"model_type": "llava", "vision_config": {"model_type": "intern_vit_6b"}})"}) {
    absl::StatusOr<common::v1::Architecture> a = ArchitectureFromHfConfig(config);
    ASSERT_FALSE(a.ok()) << config;
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(a.status().ToString(), "llava") ||
                absl::StrContains(a.status().ToString(), "clip_vision_model"))
        << a.status();
  }
  // Figures no encoder has are refused, not wrapped.
  absl::Status huge =
      ArchitectureFromHfConfig(
          R"({"model_type": "qwen2_vl", "hidden_size": 64, "num_hidden_layers": 2,)"
          R"( "num_attention_heads": 4, "vocab_size": 100,)"
          R"( "vision_config": {"embed_dim": 1000000000000, "mlp_ratio": 1000000000000}})")
          .status();
  EXPECT_EQ(huge.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(huge.ToString(), "vision_config")) << huge;
  absl::StatusOr<common::v1::Architecture> a =
      ArchitectureFromHfConfig(R"({"model_type": "gemma3n"})");
  EXPECT_TRUE(absl::StrContains(a.status().ToString(), "qwen2_audio")) << a.status();
}

// Gemma 4 31B and 26B-A4B (gemma4): five sliding-window layers in six of
// head_dim 256, the full-attention ones at global_head_dim 512 over
// num_global_key_value_heads with no v_proj (attention_k_eq_v); the 26B's
// dense MLP (intermediate_size 2112) beside 128 experts of 704, its router's
// scales and three more RMSNorms; Gemma 4's ViT (27 blocks of 1152, heads of
// 72 with QK norms, a gated MLP of 4304, a 2 x 10240 position table) and
// embed_vision (one linear). The configs' keys as google/gemma-4-31B-it's
// config.json gives them (its 26B-A4B twin: transformers'
// convert_gemma4_weights.py _VARIANTS). Published: the safetensors totals
// of transformers re-saves (unsloth/gemma-4-31B-it-unsloth-bnb-4bit
// 31,273,086,512; TrevorJS/gemma-4-26B-A4B-it-uncensored 25,805,933,872,
// llmfit's later list). Google's own repositories show 32,682,372,656 and
// 26,544,131,376: exactly vocab x hidden more, the tied lm_head counted a
// second time by the conversion (load_state_dict(assign=True) made it a
// Parameter of its own); the files hold no lm_head. The text model with the
// embedding once is Google's "30.7B" / "25.2B" (30,697,345,280 and
// 25,233,141,760); the 26B's "3.8B active" is 3,822,530,560.
std::string Gemma4Config(const std::string& text) {
  return absl::StrCat(
      R"({"model_type": "gemma4", "architectures": ["Gemma4ForConditionalGeneration"],
          "audio_config": null, "tie_word_embeddings": true, "text_config": )",
      text,
      R"(, "vision_config": {"model_type": "gemma4_vision", "hidden_size": 1152,
          "intermediate_size": 4304, "num_hidden_layers": 27, "num_attention_heads": 16,
          "num_key_value_heads": 16, "head_dim": 72, "global_head_dim": 72, "patch_size": 16,
          "pooling_kernel_size": 3, "position_embedding_size": 10240, "standardize": true,
          "use_clipped_linears": false}, "vision_soft_tokens_per_image": 280})");
}

// Gemma 4's layer_types: five sliding layers, then a full one, `periods` times.
std::string Gemma4LayerTypes(int periods) {
  std::vector<std::string> types;
  for (int i = 0; i < periods; ++i) {
    for (int j = 0; j < 5; ++j) types.push_back(R"("sliding_attention")");
    types.push_back(R"("full_attention")");
  }
  return absl::StrCat("[", absl::StrJoin(types, ", "), "]");
}

const std::string& Gemma4_31B() {
  static const std::string* const config = new std::string(Gemma4Config(absl::StrCat(
      R"({"model_type": "gemma4_text", "attention_bias": false, "attention_k_eq_v": true,
          "enable_moe_block": false, "expert_intermediate_size": null,
          "final_logit_softcapping": 30.0, "global_head_dim": 512, "head_dim": 256,
          "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 5376,
          "hidden_size_per_layer_input": 0, "intermediate_size": 21504, "layer_types": )",
      Gemma4LayerTypes(10),
      R"(, "max_position_embeddings": 262144, "moe_intermediate_size": null,
          "num_attention_heads": 32, "num_experts": null, "num_global_key_value_heads": 4,
          "num_hidden_layers": 60, "num_key_value_heads": 16, "num_kv_shared_layers": 0,
          "rms_norm_eps": 1e-06, "sliding_window": 1024, "tie_word_embeddings": true,
          "top_k_experts": null, "use_double_wide_mlp": false, "vocab_size": 262144,
          "vocab_size_per_layer_input": 262144})")));
  return *config;
}

const std::string& Gemma4_26B_A4B() {
  static const std::string* const config = new std::string(Gemma4Config(absl::StrCat(
      R"({"model_type": "gemma4_text", "attention_bias": false, "attention_k_eq_v": true,
          "enable_moe_block": true, "final_logit_softcapping": 30.0, "global_head_dim": 512,
          "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 2816,
          "hidden_size_per_layer_input": 0, "intermediate_size": 2112, "layer_types": )",
      Gemma4LayerTypes(5),
      R"(, "max_position_embeddings": 262144, "moe_intermediate_size": 704,
          "num_attention_heads": 16, "num_experts": 128, "num_global_key_value_heads": 2,
          "num_hidden_layers": 30, "num_key_value_heads": 8, "num_kv_shared_layers": 0,
          "rms_norm_eps": 1e-06, "sliding_window": 1024, "tie_word_embeddings": true,
          "top_k_experts": 8, "use_double_wide_mlp": false, "vocab_size": 262144,
          "vocab_size_per_layer_input": 262144})")));
  return *config;
}

TEST(MultimodalConfigTest, Gemma4IsCountedExactlyWithItsFullAttentionLayersOwnGeometry) {
  const v1::CountParametersResponse dense = Count(Gemma4_31B());
  EXPECT_EQ(Component(dense, "vision_encoder"), 569548080);
  EXPECT_EQ(Component(dense, "projector"), 5376.0 * 1152);
  EXPECT_EQ(dense.total_parameters(), 31273086512) << "google/gemma-4-31B-it";
  EXPECT_EQ(dense.total_parameters() + 262144.0 * 5376, 32682372656)
      << "the Hub's total for google/gemma-4-31B-it counts the tied lm_head twice";
  EXPECT_EQ(
      dense.total_parameters() - Component(dense, "vision_encoder") - Component(dense, "projector"),
      30697345280)
      << "Google's 30.7B";
  // A sliding layer: q 5376x32x256, k and v 5376x16x256, o, QK norms 2x256;
  // a full one: q 5376x32x512, k 5376x4x512 and no v, o, QK norms 2x512.
  EXPECT_EQ(Component(dense, "attention"), 50 * (2.0 * 5376 * 8192 + 2.0 * 5376 * 4096 + 512) +
                                               10 * (2.0 * 5376 * 16384 + 5376.0 * 2048 + 1024));
  std::string attention_text;
  for (const auto& c : dense.components()) {
    if (c.name() == "attention") attention_text = c.arithmetic();
  }
  EXPECT_TRUE(absl::StrContains(attention_text, "10 full-attention layers")) << attention_text;
  EXPECT_TRUE(absl::StrContains(attention_text, "values from the keys: no V")) << attention_text;

  const v1::CountParametersResponse moe = Count(Gemma4_26B_A4B());
  EXPECT_EQ(Component(moe, "projector"), 2816.0 * 1152);
  EXPECT_EQ(moe.total_parameters(), 25805933872) << "google/gemma-4-26B-A4B-it";
  EXPECT_EQ(moe.total_parameters() + 262144.0 * 2816, 26544131376);
  const double encoders = Component(moe, "vision_encoder") + Component(moe, "projector");
  EXPECT_EQ(moe.total_parameters() - encoders, 25233141760) << "Google's 25.2B";
  EXPECT_EQ(moe.active_parameters() - encoders, 3822530560) << "Google's 3.8B active";
}

// Gemma 4 E2B and E4B: per-layer inputs (a second embedding of 262,144 x
// (layers x 256), its projection and a gate and projection in each layer),
// the last 20 / 18 layers reusing earlier layers' KV caches (their k/v
// projections still in the checkpoint), E2B's twice-wide MLP in those
// layers, full-attention layers of head width 512 (with v_proj), a 768-wide
// ViT of 16 blocks and the audio conformer (12 blocks of 1024). The configs
// as transformers' convert_gemma4_weights.py _VARIANTS and Gemma4AudioConfig
// give them (copies of the checkpoints' text_config agree). Published: the
// Hub's safetensors totals of google/gemma-4-E2B-it 5,123,178,051 and
// google/gemma-4-E4B-it 7,996,156,490, which count each layer's
// layer_scalar buffer (one element; 35 and 42) and not the clipping bounds
// (rank-0); re-saved copies (unsloth) show exactly those totals less the
// layer count, our count.
std::string Gemma4EConfig(int hidden, int layers, int period, int kv_heads, int intermediate,
                          int shared, bool double_wide) {
  std::vector<std::string> types;
  for (int i = 0; i < layers; ++i) {
    types.push_back((i + 1) % period == 0 ? R"("full_attention")" : R"("sliding_attention")");
  }
  return absl::StrCat(
      R"({"model_type": "gemma4", "architectures": ["Gemma4ForConditionalGeneration"],
          "tie_word_embeddings": true, "text_config": {"model_type": "gemma4_text",
          "attention_bias": false, "attention_k_eq_v": false, "enable_moe_block": false,
          "final_logit_softcapping": 30.0, "global_head_dim": 512, "head_dim": 256,
          "hidden_size": )",
      hidden, R"(, "hidden_size_per_layer_input": 256, "intermediate_size": )", intermediate,
      R"(, "layer_types": [)", absl::StrJoin(types, ", "),
      R"(], "max_position_embeddings": 131072, "num_attention_heads": 8, "num_experts": null,
          "num_global_key_value_heads": null, "num_hidden_layers": )",
      layers, R"(, "num_key_value_heads": )", kv_heads, R"(, "num_kv_shared_layers": )", shared,
      R"(, "sliding_window": 512, "tie_word_embeddings": true, "use_double_wide_mlp": )",
      double_wide ? "true" : "false",
      R"(, "vocab_size": 262144, "vocab_size_per_layer_input": 262144},
          "vision_config": {"model_type": "gemma4_vision", "hidden_size": 768,
          "intermediate_size": 3072, "num_hidden_layers": 16, "num_attention_heads": 12,
          "num_key_value_heads": 12, "head_dim": 64, "global_head_dim": 64, "patch_size": 16,
          "position_embedding_size": 10240, "pooling_kernel_size": 3, "standardize": false,
          "use_clipped_linears": true},
          "audio_config": {"model_type": "gemma4_audio", "hidden_size": 1024,
          "num_attention_heads": 8, "num_hidden_layers": 12, "conv_kernel_size": 5,
          "subsampling_conv_channels": [128, 32], "output_proj_dims": 1536,
          "use_clipped_linears": true}})");
}

TEST(MultimodalConfigTest, Gemma4sOnDeviceModelsAreCountedWithTheirPerLayerInputsAndAudio) {
  const v1::CountParametersResponse e2b =
      Count(Gemma4EConfig(1536, 35, 5, 1, 6144, 20, /*double_wide=*/true));
  EXPECT_EQ(Component(e2b, "per_layer_embedding"), 262144.0 * 35 * 256);
  EXPECT_EQ(Component(e2b, "vision_encoder"), 167364608);
  EXPECT_EQ(Component(e2b, "audio_encoder"), 304824608);
  EXPECT_EQ(Component(e2b, "projector"), 1536.0 * 768 + 1536.0 * 1536);
  EXPECT_EQ(e2b.total_parameters(), 5123178051 - 35) << "google/gemma-4-E2B-it";
  const v1::CountParametersResponse e4b =
      Count(Gemma4EConfig(2560, 42, 6, 2, 10240, 18, /*double_wide=*/false));
  EXPECT_EQ(e4b.total_parameters(), 7996156490 - 42) << "google/gemma-4-E4B-it";
}

TEST(MultimodalConfigTest, Gemma4sOtherShapesAreRefusedByField) {
  // A full-attention layer moved from the first 15 (those with their own
  // cache) to the 16th: the cached layers' kinds are not Gemma 4's spread.
  std::string uneven = Gemma4EConfig(1536, 35, 5, 1, 6144, 20, true);
  const std::string full = R"("full_attention")", sliding = R"("sliding_attention")";
  uneven.replace(uneven.find(full), full.size(), sliding);
  size_t sixteenth = uneven.find(R"("layer_types": [)");
  for (int i = 0; i < 16; ++i) sixteenth = uneven.find(R"(_attention")", sixteenth + 1);
  const size_t quote = uneven.rfind('"', sixteenth - 1);
  ASSERT_EQ(uneven.substr(quote, sliding.size()), sliding);
  uneven.replace(quote, sliding.size(), full);
  EXPECT_TRUE(absl::StrContains(ArchitectureFromHfConfig(uneven).status().ToString(),
                                "hf_config_json.layer_types"))
      << ArchitectureFromHfConfig(uneven).status();
  std::string audio = Gemma4EConfig(1536, 35, 5, 1, 6144, 20, true);
  audio.replace(audio.find(R"("subsampling_conv_channels": [128, 32])"),
                std::strlen(R"("subsampling_conv_channels": [128, 32])"),
                R"("subsampling_conv_channels": [128])");
  EXPECT_TRUE(absl::StrContains(ArchitectureFromHfConfig(audio).status().ToString(),
                                "hf_config_json.audio_config"));
  std::string narrow = Gemma4_31B();
  narrow.replace(narrow.find(R"("head_dim": 72)"), std::strlen(R"("head_dim": 72)"),
                 R"("head_dim": 64)");
  EXPECT_TRUE(
      absl::StrContains(ArchitectureFromHfConfig(narrow).status().ToString(), "vision_config"));
}

// The runtimes see the same: E2B's 15 layers with a cache of their own, 12
// of them sliding (llama.cpp's n_layer_kv_from_start and its iSWA cache).
TEST(MultimodalMemoryTest, Gemma4E2bsRuntimesCacheOnlyItsOwnKvLayers) {
  absl::StatusOr<common::v1::Architecture> arch =
      ArchitectureFromHfConfig(Gemma4EConfig(1536, 35, 5, 1, 6144, 20, true));
  ASSERT_TRUE(arch.ok()) << arch.status();
  common::v1::Model model;
  *model.mutable_architecture() = *arch;
  const RuntimeModel runtime = RuntimeModelOf(model, "google/gemma-4-E2B-it");
  EXPECT_EQ(runtime.KvLayers(), 15);
  EXPECT_EQ(runtime.sliding_window_layers, 12);
  EXPECT_EQ(runtime.recurrent_layers, 0);
}

// llama.cpp's sliding cache for E2B: each of its 12 sliding layers keeps
// n_swa + n_ubatch = 1,024 cells, 512 more than the window, at a sliding
// layer's 1,024 bytes per token (1 KV head x 256 x 2 x 2 bytes), not a full
// layer's 2,048 (src/llama-kv-cache.cpp sizes each layer's K and V rows by
// its own n_embd_k_gqa(il) / n_embd_v_gqa(il)).
TEST(MultimodalMemoryTest, Gemma4E2bsExtraSlidingCellsAreAtTheSlidingLayersOwnBytes) {
  absl::StatusOr<common::v1::Architecture> arch =
      ArchitectureFromHfConfig(Gemma4EConfig(1536, 35, 5, 1, 6144, 20, true));
  ASSERT_TRUE(arch.ok()) << arch.status();
  common::v1::Model model;
  *model.mutable_architecture() = *arch;
  InferenceMemoryInput input;
  input.architecture = ToCoreArchitecture(*arch);
  input.parameters = 5e9;
  input.workload.context_length_tokens = 32768;
  absl::StatusOr<InferenceSizing> sizing = SizeInference(input);
  ASSERT_TRUE(sizing.ok()) << sizing.status();
  EXPECT_DOUBLE_EQ(sizing->kv_cache_sliding_layer_share, 0.5);
  const LlamaCppSwa swa =
      LlamaCppSwaOf(RuntimeModelOf(model, "google/gemma-4-E2B-it"), *sizing, 32768, 1);
  EXPECT_FALSE(swa.whole);
  EXPECT_EQ(swa.cells, 1024);
  EXPECT_EQ(swa.window_cells, 512);
  EXPECT_DOUBLE_EQ(swa.bytes, 12.0 * 512 * 1024);
}

// Gemma 4 E2B's KV cache: only its first 15 layers keep one (12 sliding of
// 1 KV head x 256, 3 full of 1 x 512); the last 20 reuse them.
TEST(MultimodalMemoryTest, Gemma4E2bCachesOnlyItsOwnKvLayers) {
  v1::EstimateInferenceMemoryRequest request;
  request.mutable_source()->mutable_inline_model()->set_hf_config_json(
      Gemma4EConfig(1536, 35, 5, 1, 6144, 20, true));
  request.mutable_workload()->set_context_length_tokens(32768);
  Waiter<v1::EstimateInferenceMemoryResponse> waiter;
  AnswerInferenceMemory(testing::Catalog(), request, waiter.done());
  ASSERT_TRUE(waiter.get().ok()) << waiter.get().status();
  const v1::EstimateLine* kv = Line(*waiter.get(), "kv_cache");
  ASSERT_NE(kv, nullptr);
  EXPECT_EQ(kv->bytes(), 12LL * 512 * 1024 + 3LL * 32768 * 2048);
  EXPECT_TRUE(absl::StrContains(kv->arithmetic(), "= 18432 bytes per token")) << kv->arithmetic();
  EXPECT_TRUE(absl::StrContains(kv->arithmetic(), "the last 20 of 35 layers cache nothing"))
      << kv->arithmetic();
}

// The KV cache of Gemma 4 31B per layer kind: a sliding layer 2 x 16 x 256,
// a full one 2 x 4 x 512 elements per token (the cache shapes a public
// ONNX export of Gemma 4 allocates per layer_types entry: min(window,
// context) tokens of num_key_value_heads x head_dim, or the context of
// num_global_key_value_heads x global_head_dim with attention_k_eq_v).
TEST(MultimodalMemoryTest, Gemma4sKvCacheHasEachLayerKindsOwnGeometry) {
  v1::ModelSource source;
  source.mutable_inline_model()->set_hf_config_json(Gemma4_31B());
  v1::EstimateInferenceMemoryRequest request;
  *request.mutable_source() = source;
  request.mutable_workload()->set_context_length_tokens(262144);
  Waiter<v1::EstimateInferenceMemoryResponse> waiter;
  AnswerInferenceMemory(testing::Catalog(), request, waiter.done());
  ASSERT_TRUE(waiter.get().ok()) << waiter.get().status();
  const v1::EstimateLine* kv = Line(*waiter.get(), "kv_cache");
  ASSERT_NE(kv, nullptr);
  // bf16: 50 x 1024 tokens x 16,384 bytes + 10 x 262,144 tokens x 8,192.
  EXPECT_EQ(kv->bytes(), 50LL * 1024 * 16384 + 10LL * 262144 * 8192);
  EXPECT_TRUE(absl::StrContains(kv->arithmetic(),
                                "50 sliding-window layers x 16 KV heads x 256 "
                                "head dim + 10 full-attention layers x 4 KV "
                                "heads x 512 head dim"))
      << kv->arithmetic();
  EXPECT_TRUE(absl::StrContains(kv->arithmetic(), "= 901120 bytes per token")) << kv->arithmetic();
}

TEST(MultimodalMemoryTest, TheAnswerItemizesTheEncoderAndProjector) {
  v1::ModelSource source;
  source.mutable_inline_model()->set_hf_config_json(kLlava15_7b);
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> r = Memory(source);
  ASSERT_TRUE(r.ok()) << r.status();
  const v1::CountParametersResponse count = Count(kLlava15_7b);
  const v1::EstimateLine* vision = Line(*r, "vision_encoder");
  const v1::EstimateLine* projector = Line(*r, "projector");
  const v1::EstimateLine* weights = Line(*r, "weights");
  ASSERT_NE(vision, nullptr);
  ASSERT_NE(projector, nullptr);
  ASSERT_NE(weights, nullptr);
  // BF16 (the default): 2 bytes per parameter, each part on its own line.
  EXPECT_EQ(vision->bytes(), static_cast<int64_t>(2 * Component(count, "vision_encoder")));
  EXPECT_EQ(projector->bytes(), static_cast<int64_t>(2 * Component(count, "projector")));
  EXPECT_EQ(weights->bytes() + vision->bytes() + projector->bytes(),
            static_cast<int64_t>(2 * count.total_parameters()));
  EXPECT_DOUBLE_EQ(r->parameters(), count.total_parameters());
  EXPECT_TRUE(absl::StrContains(r->source(), "llava: the language model from text_config"))
      << r->source();
  int64_t sum = 0;
  for (const auto& line : r->lines()) sum += line.bytes();
  EXPECT_EQ(sum, r->total_bytes());
  // Weight-only quantization leaves the tower in 16 bits.
  v1::EstimateInferenceMemoryRequest quantized;
  *quantized.mutable_source() = source;
  quantized.mutable_workload()->set_weight_format(v1::NUMBER_FORMAT_GPTQ_INT4);
  Waiter<v1::EstimateInferenceMemoryResponse> waiter;
  AnswerInferenceMemory(testing::Catalog(), quantized, waiter.done());
  ASSERT_TRUE(waiter.get().ok()) << waiter.get().status();
  const v1::EstimateLine* q_vision = Line(*waiter.get(), "vision_encoder");
  ASSERT_NE(q_vision, nullptr);
  EXPECT_EQ(q_vision->bytes(), vision->bytes());
  EXPECT_TRUE(absl::StrContains(q_vision->arithmetic(), "16 bits")) << q_vision->arithmetic();
}

TEST(MultimodalMemoryTest, SafetensorsTensorsSizeEachPartExactly) {
  v1::ModelSource source;
  auto* file = source.mutable_safetensors_header();
  file->set_header(testing::SafetensorsBytes(testing::TinyLlavaTensors(), /*with_data=*/false));
  file->set_file_name("model.safetensors");
  file->set_config_json(testing::kTinyLlavaConfig);
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> r = Memory(source);
  ASSERT_TRUE(r.ok()) << r.status();
  const uint64_t vision_bytes = 32 * 3 * 14 * 14 * 2 + 64 * 32 * 2;
  const uint64_t projector_bytes = 64 * 32 * 2 + 64 * 2;
  uint64_t lm_bytes = 0;
  for (const testing::Tensor& t : testing::TinyLlamaTensors()) {
    uint64_t n = static_cast<uint64_t>(t.element_bytes);
    for (int64_t d : t.shape) n *= static_cast<uint64_t>(d);
    lm_bytes += n;
  }
  ASSERT_NE(Line(*r, "vision_encoder"), nullptr);
  ASSERT_NE(Line(*r, "projector"), nullptr);
  EXPECT_EQ(Line(*r, "vision_encoder")->bytes(), static_cast<int64_t>(vision_bytes));
  EXPECT_EQ(Line(*r, "projector")->bytes(), static_cast<int64_t>(projector_bytes));
  EXPECT_EQ(Line(*r, "weights")->bytes(), static_cast<int64_t>(lm_bytes));
  EXPECT_TRUE(absl::StrContains(Line(*r, "vision_encoder")->arithmetic(), "exact bytes"));
}

TEST(MultimodalMemoryTest, AnMmprojFileAddsItsTowerAndProjectorExactly) {
  v1::ModelSource source;
  auto* file = source.mutable_gguf_header();
  file->set_header(testing::GgufBytes("llama", /*header_only=*/true));
  file->set_file_name("tiny.Q4_K_M.gguf");
  file->set_mmproj_header(testing::MmprojBytes());
  file->set_mmproj_file_name("mmproj-tiny-f16.gguf");
  absl::StatusOr<v1::EstimateInferenceMemoryResponse> r = Memory(source);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_NE(Line(*r, "vision_encoder"), nullptr);
  ASSERT_NE(Line(*r, "projector"), nullptr);
  EXPECT_EQ(Line(*r, "weights")->bytes(), static_cast<int64_t>(testing::kGgufTensorBytes));
  EXPECT_EQ(Line(*r, "vision_encoder")->bytes(), static_cast<int64_t>(testing::kMmprojVisionBytes));
  EXPECT_EQ(Line(*r, "projector")->bytes(), static_cast<int64_t>(testing::kMmprojProjectorBytes));
  EXPECT_DOUBLE_EQ(r->parameters(), static_cast<double>(testing::kGgufTensorElements +
                                                        testing::kMmprojVisionElements +
                                                        testing::kMmprojProjectorElements));
  EXPECT_TRUE(absl::StrContains(r->source(), "mmproj mmproj-tiny-f16.gguf: mlp projector"))
      << r->source();

  // A projector into another width, or a file that is not an mmproj.
  file->set_mmproj_header(testing::MmprojBytes(4096));
  absl::Status other = Memory(source).status();
  EXPECT_EQ(other.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(other.ToString(), "mmproj_header")) << other;
  EXPECT_TRUE(absl::StrContains(other.ToString(), "another model")) << other;
  file->set_mmproj_header(testing::MmprojBytes(256, "llama"));
  EXPECT_TRUE(absl::StrContains(Memory(source).status().ToString(), "not a llama.cpp mmproj"));
  file->set_mmproj_header("GGUF");
  EXPECT_EQ(Memory(source).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MultimodalMemoryTest, TensorNamesFindTheirPart) {
  EXPECT_EQ(EncoderKindOfTensor("vision_tower.vision_model.encoder.layers.0.mlp.fc1.weight"),
            "vision_encoder");
  EXPECT_EQ(EncoderKindOfTensor("model.visual.blocks.0.attn.qkv.weight"), "vision_encoder");
  EXPECT_EQ(EncoderKindOfTensor("visual.merger.mlp.0.weight"), "projector");
  EXPECT_EQ(EncoderKindOfTensor("model.multi_modal_projector.linear_1.weight"), "projector");
  EXPECT_EQ(EncoderKindOfTensor("audio_tower.layers.0.fc1.weight"), "audio_encoder");
  EXPECT_EQ(EncoderKindOfTensor("mlp1.1.weight"), "projector");  // InternVL, H2OVL
  EXPECT_EQ(EncoderKindOfTensor("model.connector.modality_projection.proj.weight"), "projector");
  EXPECT_EQ(EncoderKindOfTensor("mm_projector.proj.0.weight"), "projector");  // Kimi K2.5
  EXPECT_EQ(EncoderKindOfTensor("model.sam_model.blocks.0.attn.qkv.weight"), "vision_encoder");
  EXPECT_EQ(EncoderKindOfTensor("model.projector.layers.weight"), "projector");  // DeepSeek-OCR
  EXPECT_EQ(EncoderKindOfTensor("v.blk.0.attn_q.weight"), "vision_encoder");
  EXPECT_EQ(EncoderKindOfTensor("mm.0.weight"), "projector");
  EXPECT_EQ(EncoderKindOfTensor("model.layers.0.self_attn.q_proj.weight"), "");
  EXPECT_EQ(EncoderKindOfTensor("language_model.model.embed_tokens.weight"), "");
}

}  // namespace
}  // namespace modelatlas::estimator
