// Hugging Face config.json files in ../shared/data/hf_configs, read in place:
// the parameter count from each must equal the model's published exact
// count (the total of its safetensors checkpoint, as listed on its model card).
#include "common/formats/hf_config.h"

#include <gtest/gtest.h>

#include <ctime>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "catalog-service/validation.h"
#include "common/status/errors.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/core/inference_memory.h"
#include "estimator-service/core/parameters.h"
#include "tests/estimator/published_configs.h"
#include "tests/testing/shared_data.h"

namespace modelatlas::estimator {
namespace {

struct Case {
  const char* file;
  double parameters;
};

// Exact counts: Llama and Qwen checkpoints as published (safetensors totals),
// GPT-2 and BERT as reported by transformers' num_parameters().
constexpr Case kCases[] = {
    {"pytorchKQI/meta-llama_Llama-2-7b-hf.json", 6738415616},
    {"pytorchKQI/meta-llama_Llama-2-13b-hf.json", 13015864320},
    {"pytorchKQI/meta-llama_Llama-2-70b-hf.json", 68976648192},
    {"pytorchKQI/meta-llama_Meta-Llama-3-8B.json", 8030261248},
    {"pytorchKQI/meta-llama_Llama-3.2-1B-Instruct.json", 1235814400},
    {"pytorchKQI/Qwen_Qwen2-7B.json", 7615616512},
    {"pytorchKQI/Qwen_Qwen2-72B.json", 72706203648},
    {"pytorchKQI/Qwen_Qwen2.5-7B.json", 7615616512},
    {"pytorchKQI/bert-base-uncased.json", 109482240},
    {"pytorchKQI/bert-large-uncased.json", 335141888},
    {"pytorchKQI/gpt2.json", 124439808},
    {"pytorchKQI/google_gemma-2-9b.json", 9241705984},
    {"pytorchKQI/deepseek-ai_deepseek-llm-7b-base.json", 6910365696},
    {"LLM-Prof/meta-llama_Llama-3.1-8B.json", 8030261248},
    {"LLM-Prof/meta-llama_Llama-3.2-3B.json", 3212749824},
    {"LLM-Prof/Qwen_Qwen2.5-3B.json", 3085938688},
    {"LLM-Prof/Qwen_Qwen2.5-7B.json", 7615616512},
    {"LLM-Prof/Qwen_Qwen2.5-14B.json", 14770033664},
    {"LLM-Prof/Qwen_Qwen2.5-32B.json", 32763876352},
    {"LLM-Prof/Qwen_Qwen3-4B.json", 4022468096},
    {"LLM-Prof/Qwen_Qwen3-8B.json", 8190735360},
    {"LLM-Prof/Qwen_Qwen3-14B.json", 14768307200},
    {"LLM-Prof/Qwen_Qwen3-32B.json", 32762123264},
    {"LLM-Prof/Qwen_Qwen3-30B-A3B.json", 30532122624},
    {"Qwen2-Audio/meta-llama_Meta-Llama-3-8B.config.json", 8030261248},
    // keras-team/keras-hub t5 presets "t5_large": "params": 737668096
    // (transformers' T5ForConditionalGeneration: the same).
    {"pytorchKQI/t5-large.json", 737668096},
};

class HfConfigFileTest : public ::testing::TestWithParam<Case> {};

TEST_P(HfConfigFileTest, CountIsExact) {
  REQUIRE_SHARED_DATA(path, std::string("hf_configs/") + GetParam().file);
  auto arch = ArchitectureFromHfConfig(modelatlas::testing::ReadFile(path));
  ASSERT_TRUE(arch.ok()) << arch.status();
  auto count = CountParameters(ToCoreArchitecture(*arch));
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(count->total, GetParam().parameters) << path;
}

INSTANTIATE_TEST_SUITE_P(SharedData, HfConfigFileTest, ::testing::ValuesIn(kCases));

double CountOf(const std::string& json) {
  auto arch = ArchitectureFromHfConfig(json);
  EXPECT_TRUE(arch.ok()) << arch.status();
  if (!arch.ok()) return -1;
  auto count = CountParameters(ToCoreArchitecture(*arch));
  EXPECT_TRUE(count.ok()) << count.status();
  return count.ok() ? count->total : -1;
}

// XLM-R and RoBERTa are BERT's layout: counted as the bare model with its
// pooler (XLMRobertaModel, RobertaModel as AutoModel builds them), a
// position table of max_position_embeddings rows (514) and one token type.
// Published:
// - intfloat/multilingual-e5-large-instruct (XLMRobertaModel on
//   xlm-roberta-large's config, keys as FacebookAI/xlm-roberta-large's
//   config.json gives them): 559,890,432, its safetensors total in llmfit's
//   later list (AlexsJones/llmfit); danielheinz/e5-base-sts-en-de, the base
//   size: 278,043,648. multilingual-e5-large's own total is 514 more: a
//   position_ids buffer (int64, [1, 514]) transformers wrote into files
//   before 4.31, which is no parameter.
// - FacebookAI/roberta-base: 124,697,433 F32 parameters (and 514 I64, the
//   same buffer), as Hugging Face's safetensors metadata documentation
//   lists them; that file is RobertaForMaskedLM without a pooler, so the
//   bare model with a pooler is 124,697,433 - the LM head (768 x 768 + 768
//   dense, 2 x 768 LayerNorm, 50,265 decoder bias; its weight is the tied
//   embedding) + the pooler (768 x 768 + 768).
TEST(HfConfigTest, XlmRobertaAndRobertaAreBertsLayout) {
  const auto config = [](const char* type, int hidden, int layers, int heads, int vocab) {
    return absl::StrCat(R"({"model_type": ")", type, R"(", "hidden_size": )", hidden,
                        R"(, "intermediate_size": )", 4 * hidden, R"(, "num_hidden_layers": )",
                        layers, R"(, "num_attention_heads": )", heads,
                        R"(, "max_position_embeddings": 514, "type_vocab_size": 1,
                            "vocab_size": )",
                        vocab, R"(, "hidden_act": "gelu", "layer_norm_eps": 1e-05})");
  };
  EXPECT_EQ(CountOf(config("xlm-roberta", 1024, 24, 16, 250002)), 559890432);
  EXPECT_EQ(CountOf(config("xlm-roberta", 768, 12, 12, 250002)), 278043648);
  const double lm_head = 768.0 * 768 + 768 + 2 * 768 + 50265;
  const double pooler = 768.0 * 768 + 768;
  EXPECT_EQ(CountOf(config("roberta", 768, 12, 12, 50265)), 124697433 - lm_head + pooler);
}

// DistilBERT: BERT's blocks under its own keys, no token types, no pooler.
// distilbert-base-uncased's config.json (its keys as the checkpoint gives
// them). Published: sentence-transformers/distilbert-base-nli-mean-tokens
// (DistilBertModel on that config) 66,362,880 and distilbert-base-uncased
// (DistilBertForMaskedLM: + vocab_transform 768 x 768 + 768, vocab_layer_norm
// 2 x 768, vocab_projector's bias 30,522; its weight is the tied embedding)
// 66,985,530, their safetensors totals in llmfit's later list.
TEST(HfConfigTest, DistilBertIsBertsBlocksUnderItsOwnKeys) {
  const std::string config =
      R"({"activation": "gelu", "architectures": ["DistilBertForMaskedLM"], "dim": 768,
          "hidden_dim": 3072, "max_position_embeddings": 512, "model_type": "distilbert",
          "n_heads": 12, "n_layers": 6, "sinusoidal_pos_embds": false, "vocab_size": 30522})";
  EXPECT_EQ(CountOf(config), 66362880);
  EXPECT_EQ(CountOf(config) + 768.0 * 768 + 768 + 2 * 768 + 30522, 66985530);
}

// Nomic BERT: nomic-ai/nomic-embed-text-v1.5's config.json (the keys that
// decide the count, as its repository gives them): rotary positions, a
// fused Wqkv and a SwiGLU MLP without biases, two token types, the
// vocabulary padded to a multiple of 64, no pooler in the file. Published:
// 136,731,648, its safetensors total in llmfit's later list.
// Each edit of `config` (the key it names, the text replaced and its
// replacement) is refused, naming hf_config_json.<key>.
struct ConfigEdit {
  std::string key, from, to;
};
void ExpectEachEditRefusedByField(const std::string& config, const std::vector<ConfigEdit>& edits) {
  for (const ConfigEdit& edit : edits) {
    std::string json = config;
    ASSERT_NE(json.find(edit.from), std::string::npos) << edit.from;
    json.replace(json.find(edit.from), edit.from.size(), edit.to);
    auto refused = ArchitectureFromHfConfig(json);
    ASSERT_FALSE(refused.ok()) << edit.key;
    EXPECT_TRUE(absl::StrContains(refused.status().message(),
                                  absl::StrCat("hf_config_json.", edit.key, ":")))
        << refused.status();
  }
}

TEST(HfConfigTest, NomicBertIsCountedAsItsFilesHoldIt) {
  const std::string v1_5 =
      R"({"activation_function": "swiglu", "architectures": ["NomicBertModel"],
          "mlp_fc1_bias": false, "mlp_fc2_bias": false, "model_type": "nomic_bert",
          "n_embd": 768, "n_head": 12, "n_inner": 3072, "n_layer": 12, "n_positions": 8192,
          "pad_vocab_size_multiple": 64, "parallel_block": false, "prenorm": false,
          "qkv_proj_bias": false, "rotary_emb_base": 1000, "rotary_emb_fraction": 1.0,
          "type_vocab_size": 2, "use_rms_norm": false, "vocab_size": 30528})";
  EXPECT_EQ(CountOf(v1_5), 136731648);
  // What it does not count is refused by field, never counted short.
  ExpectEachEditRefusedByField(
      v1_5,
      {{"moe_every_n_layers", R"("n_layer": 12)", R"("n_layer": 12, "moe_every_n_layers": 2)"},
       {"rotary_emb_fraction", R"("rotary_emb_fraction": 1.0)", R"("rotary_emb_fraction": 0.0)"},
       {"mlp_fc2_bias", R"("mlp_fc2_bias": false)", R"("mlp_fc2_bias": true)"}});
}

// BART: post-norm encoder and decoder blocks with biased attention and a
// plain GELU MLP (fc1, fc2), a LayerNorm after each stack's embedding and
// none at the end, each stack's own learned position table of 1,024 + 2
// offset rows, one shared token embedding and the output head tied to it
// (BartModel, BartForConditionalGeneration). The keys as facebook/bart-base
// and facebook/bart-large's config.json name them. Published:
// transformers' AutoModel.from_pretrained(...).num_parameters() for
// facebook/bart-base 139,420,416 and facebook/bart-large 406,291,456, as a
// public script's docstring lists them beside roberta-base's 124,645,632
// (counted below too, the same) and a public write-up measures BART-large
// ("BART-large = 406,291,456"). keras-hub's BART presets (139,417,344 and
// 406,287,360) are two LayerNorms fewer.
TEST(HfConfigTest, BartIsAnEncoderAndADecoderWithTheirOwnPositionTables) {
  const auto config = [](int hidden, int layers, int heads, int ffn) {
    return absl::StrCat(
        R"({"model_type": "bart", "architectures": ["BartModel"], "activation_function": "gelu",
            "d_model": )",
        hidden, R"(, "encoder_layers": )", layers, R"(, "decoder_layers": )", layers,
        R"(, "encoder_attention_heads": )", heads, R"(, "decoder_attention_heads": )", heads,
        R"(, "encoder_ffn_dim": )", ffn, R"(, "decoder_ffn_dim": )", ffn,
        R"(, "max_position_embeddings": 1024, "num_hidden_layers": )", layers,
        R"(, "scale_embedding": false, "vocab_size": 50265})");
  };
  const std::string base = config(768, 6, 12, 3072);
  EXPECT_EQ(CountOf(base), 139420416) << "facebook/bart-base";
  EXPECT_EQ(CountOf(config(1024, 12, 16, 4096)), 406291456) << "facebook/bart-large";
  // The same list's roberta-base (RobertaModel with its pooler).
  EXPECT_EQ(CountOf(R"({"model_type": "roberta", "hidden_size": 768, "num_hidden_layers": 12,
                        "num_attention_heads": 12, "intermediate_size": 3072,
                        "max_position_embeddings": 514, "type_vocab_size": 1,
                        "vocab_size": 50265})"),
            124645632);
  absl::StatusOr<common::v1::Architecture> arch = ArchitectureFromHfConfig(base);
  ASSERT_TRUE(arch.ok()) << arch.status();
  EXPECT_EQ(arch->num_decoder_layers(), 6);
  auto count = CountParameters(ToCoreArchitecture(*arch));
  ASSERT_TRUE(count.ok()) << count.status();
  bool two_tables = false;
  for (const ParameterComponent& c : count->components) {
    two_tables =
        two_tables || (c.name == "position_embedding" && c.parameters == 2.0 * 1026 * 768 &&
                       absl::StrContains(c.arithmetic, "x 2 stacks"));
  }
  EXPECT_TRUE(two_tables);
  // The decoder's self and cross attention caches: 2 x 2 x 6 layers x 12
  // heads x 64 x 2 bytes a token; the encoder caches nothing.
  EXPECT_EQ(KvCacheBytesPerToken(ToCoreArchitecture(*arch), NumberFormat::kBf16, nullptr),
            2.0 * 2 * 6 * 12 * 64 * 2);
  // Shapes this reader does not count: refused by field.
  ExpectEachEditRefusedByField(
      base, {{"decoder_ffn_dim", R"("decoder_ffn_dim": 3072)", R"("decoder_ffn_dim": 4096)"},
             {"decoder_attention_heads", R"("decoder_attention_heads": 12)",
              R"("decoder_attention_heads": 16)"},
             {"normalize_before", R"("scale_embedding": false)",
              R"("scale_embedding": false, "normalize_before": true)"}});
}

// mBART: BART's stacks with pre-norm blocks, each stack with a LayerNorm
// after its embedding (layernorm_embedding) and a final one (layer_norm),
// both built whatever normalize_before and add_final_layer_norm say
// (MBartEncoder, MBartDecoder); the keys as facebook/mbart-large-50's
// config.json names them. Published: "mbart-large-50 (#param:
// 610,879,488)" (Ou et al., "Songs Across Borders", ACL 2023, appendix B),
// the figure a public model comparison also gives for
// mbart-large-50-many-to-many-mmt (the same shape).
TEST(HfConfigTest, MbartIsBartWithAFinalNormInEachStack) {
  const std::string large_50 =
      R"({"model_type": "mbart", "architectures": ["MBartForConditionalGeneration"],
          "activation_function": "gelu", "d_model": 1024, "encoder_layers": 12,
          "decoder_layers": 12, "encoder_attention_heads": 16, "decoder_attention_heads": 16,
          "encoder_ffn_dim": 4096, "decoder_ffn_dim": 4096, "max_position_embeddings": 1024,
          "normalize_before": true, "add_final_layer_norm": true, "scale_embedding": true,
          "num_hidden_layers": 12, "vocab_size": 250054})";
  EXPECT_EQ(CountOf(large_50), 610879488) << "facebook/mbart-large-50";
  absl::StatusOr<common::v1::Architecture> arch = ArchitectureFromHfConfig(large_50);
  ASSERT_TRUE(arch.ok()) << arch.status();
  auto count = CountParameters(ToCoreArchitecture(*arch));
  ASSERT_TRUE(count.ok()) << count.status();
  bool said = false;
  for (const ParameterComponent& c : count->components) {
    // 2 x 1024 per LayerNorm x (2 x 12 + 2 encoder; 3 x 12 + 2 decoder).
    said =
        said || (c.name == "norms" && c.parameters == 2048.0 * (26 + 38) &&
                 absl::StrContains(c.arithmetic, "decoder 3x12 + 1 final + 1 after the embedding"));
  }
  EXPECT_TRUE(said);
  // A decoder of another shape is refused as BART's is.
  ExpectEachEditRefusedByField(
      large_50, {{"decoder_ffn_dim", R"("decoder_ffn_dim": 4096)", R"("decoder_ffn_dim": 3072)"}});
}

// mT5 (mt5, MT5ForConditionalGeneration): T5 v1.1's stacks, a 250,112-row
// embedding shared by both and an untied output head. google/mt5-small's
// keys give 300,176,768, the count asahi417/lm-vocab-trimmer's experiments
// record for the full mt5-small; mt5-base's keys without feed_forward_proj
// or tie_word_embeddings (MT5Config's defaults: gated GELU, untied) give
// 582,401,280, the reference a public parameter-count script prints for
// models/mt5-base.
TEST(HfConfigTest, Mt5IsT5V11UnderMt5ConfigsDefaults) {
  EXPECT_EQ(CountOf(R"({"model_type": "mt5", "d_model": 512, "d_ff": 1024, "d_kv": 64,
      "num_heads": 6, "num_layers": 8, "num_decoder_layers": 8, "vocab_size": 250112,
      "feed_forward_proj": "gated-gelu", "tie_word_embeddings": false,
      "relative_attention_num_buckets": 32})"),
            300176768);
  EXPECT_EQ(CountOf(R"({"model_type": "mt5", "d_model": 768, "d_ff": 2048, "d_kv": 64,
      "num_heads": 12, "num_layers": 12, "vocab_size": 250112})"),
            582401280);
  // T5Config's own defaults stay T5's: plain ReLU, tied.
  absl::StatusOr<common::v1::Architecture> t5 = ArchitectureFromHfConfig(
      R"({"model_type": "t5", "d_model": 512, "d_ff": 2048, "d_kv": 64, "num_heads": 8,
          "num_layers": 6, "vocab_size": 32128})");
  ASSERT_TRUE(t5.ok()) << t5.status();
  EXPECT_FALSE(t5->gated_mlp());
  EXPECT_TRUE(t5->tie_word_embeddings());
}

// T5Gemma: an encoder and a decoder of Gemma 2's blocks, each with its own
// embedding (the output head tied to the decoder's), 4 norms per encoder
// layer and 6 per decoder layer (cross attention's pre and post norms).
// The sizes: google-deepmind/gemma gemma/research/t5gemma/config.py
// (GemmaPreset); ML-ML's config.json keys as a public copy of
// google/t5gemma-ml-ml-prefixlm's gives them. Published: keras-hub's
// T5Gemma presets ("params"), which equal the Hub's safetensors totals
// where both exist (s-s, b-b, 9b-9b in llmfit's later list).
TEST(HfConfigTest, T5GemmaIsGemma2sBlocksInAnEncoderAndADecoder) {
  const auto config = [](int layers, int hidden, int intermediate, int heads, int head_dim,
                         int kv_heads) {
    const std::string stack = absl::StrCat(
        R"({"model_type": "t5_gemma_module", "attention_bias": false, "head_dim": )", head_dim,
        R"(, "hidden_activation": "gelu_pytorch_tanh", "hidden_size": )", hidden,
        R"(, "intermediate_size": )", intermediate, R"(, "max_position_embeddings": 8192,
            "num_attention_heads": )",
        heads, R"(, "num_hidden_layers": )", layers, R"(, "num_key_value_heads": )", kv_heads,
        R"(, "query_pre_attn_scalar": )", head_dim,
        R"(, "sliding_window": 4096, "vocab_size": 256000})");
    return absl::StrCat(R"({"model_type": "t5gemma", "architectures":
        ["T5GemmaForConditionalGeneration"], "encoder": )",
                        stack, R"(, "decoder": )", stack, "}");
  };
  EXPECT_EQ(CountOf(config(8, 512, 1024, 8, 64, 8)), 312517632) << "t5gemma-s-s";
  EXPECT_EQ(CountOf(config(12, 768, 2048, 12, 64, 12)), 591490560) << "t5gemma-b-b";
  EXPECT_EQ(CountOf(config(24, 1024, 2816, 16, 64, 16)), 1241761792) << "t5gemma-l-l";
  EXPECT_EQ(CountOf(config(26, 1152, 6912, 4, 256, 4)), 2200345344) << "t5gemma-ml-ml";
  EXPECT_EQ(CountOf(config(24, 2048, 5120, 32, 64, 32)), 3766980608) << "t5gemma-xl-xl";
  EXPECT_EQ(CountOf(config(26, 2304, 9216, 8, 256, 4)), 5596853760) << "t5gemma-2b-2b";
  EXPECT_EQ(CountOf(config(42, 3584, 14336, 16, 256, 8)), 20333401088) << "t5gemma-9b-9b";
  // 9b-2b: the decoder's cross attention reads the encoder's width, which
  // this reader does not count: refused by field, not counted as 9b-9b.
  std::string nine_two = config(42, 3584, 14336, 16, 256, 8);
  const std::string two_b = config(26, 2304, 9216, 8, 256, 4);
  nine_two.replace(nine_two.find(R"("decoder": )"), std::string::npos,
                   two_b.substr(two_b.find(R"("decoder": )")));
  auto refused = ArchitectureFromHfConfig(nine_two);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "hf_config_json.decoder.hidden_size"))
      << refused.status();
}

TEST(HfConfigTest, MoeActiveParametersAndKvCacheFromConfig) {
  REQUIRE_SHARED_DATA(path, "hf_configs/LLM-Prof/Qwen_Qwen3-30B-A3B.json");
  auto arch = ArchitectureFromHfConfig(modelatlas::testing::ReadFile(path));
  ASSERT_TRUE(arch.ok());
  EXPECT_EQ(arch->num_experts(), 128);
  EXPECT_EQ(arch->num_experts_per_token(), 8);
  auto count = CountParameters(ToCoreArchitecture(*arch));
  EXPECT_NEAR(count->active, 3.3e9, 0.1e9);  // "A3B": 3.3B activated (model card)
  std::string arithmetic;
  // 48 layers x 4 KV heads x 128 x 2 (K, V) x 2 bytes.
  EXPECT_EQ(KvCacheBytesPerToken(ToCoreArchitecture(*arch), NumberFormat::kBf16, &arithmetic),
            98304);
}

TEST(HfConfigTest, AnUnsupportedFamilyIsAnInvalidArgumentNamingTheSupportedOnes) {
  auto arch = ArchitectureFromHfConfig(
      R"({"model_type": "rwkv", "hidden_size": 768, "num_hidden_layers": 24, "vocab_size": 50277})");
  EXPECT_EQ(arch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(arch.status().message().find("\"rwkv\""), std::string::npos);
  EXPECT_NE(
      arch.status().message().find(
          "supported model_type values: afmoe, bamba, bart, bert, bloom, chatglm, cohere, cohere2"),
      std::string::npos)
      << arch.status().message();
  auto made_up = ArchitectureFromHfConfig(R"({"model_type": "no_such_family"})");
  EXPECT_EQ(made_up.status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_EQ(GetFieldViolations(made_up.status()).size(), 1u);
  EXPECT_EQ(GetFieldViolations(made_up.status())[0].field, "hf_config_json.model_type");
}

// Which layers of a family slide decides the KV cache: a global layer taken
// for a sliding one shrinks it, and a plan could then say "fits".
TEST(HfConfigTest, SlidingLayersAreReadAsEachFamilyStatesThem) {
  const std::string exaone =
      R"({"model_type": "exaone4", "hidden_size": 5120, "intermediate_size": 27392,
          "num_hidden_layers": 64, "num_attention_heads": 40, "num_key_value_heads": 8,
          "head_dim": 128, "vocab_size": 102400, "sliding_window": 4096)";
  // EXAONE-4.0-32B's spelled pattern: three local layers, then a global one.
  auto spelled = ArchitectureFromHfConfig(exaone + R"(, "sliding_window_pattern": "LLLG"})");
  ASSERT_TRUE(spelled.ok()) << spelled.status();
  EXPECT_EQ(spelled->sliding_window(), 4096);
  EXPECT_EQ(spelled->num_sliding_window_layers(), 48);
  // Without a pattern or a list: Exaone4Config's every fourth layer global,
  // not every layer sliding as Mistral's window would be.
  auto unstated = ArchitectureFromHfConfig(exaone + "}");
  ASSERT_TRUE(unstated.ok()) << unstated.status();
  EXPECT_EQ(unstated->num_sliding_window_layers(), 48);
  // All global: no window at all.
  auto global = ArchitectureFromHfConfig(exaone + R"(, "sliding_window_pattern": "G"})");
  ASSERT_TRUE(global.ok()) << global.status();
  EXPECT_EQ(global->sliding_window(), 0);
  auto bad = ArchitectureFromHfConfig(exaone + R"(, "sliding_window_pattern": "LLXG"})");
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GetFieldViolations(bad.status())[0].field, "hf_config_json.sliding_window_pattern");
  // Command R7B (cohere2) states no list: Cohere2Config's period of 4, the
  // fourth layer of each full.
  auto cohere2 = ArchitectureFromHfConfig(
      R"({"model_type": "cohere2", "hidden_size": 4096, "intermediate_size": 14336,
          "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
          "vocab_size": 256000, "sliding_window": 4096})");
  ASSERT_TRUE(cohere2.ok()) << cohere2.status();
  EXPECT_EQ(cohere2->sliding_window(), 4096);
  EXPECT_EQ(cohere2->num_sliding_window_layers(), 24);
  EXPECT_EQ(cohere2->norm_type(), common::v1::NORM_TYPE_LAYER_NORM_WITHOUT_BIAS);
  EXPECT_EQ(cohere2->norms_per_layer(), 1);
  EXPECT_TRUE(cohere2->tie_word_embeddings());
  // OLMo 3 lists its layers: three sliding in four.
  std::string types;
  for (int i = 0; i < 32; ++i) {
    absl::StrAppend(&types, i ? ", " : "",
                    i % 4 == 3 ? "\"full_attention\"" : "\"sliding_attention\"");
  }
  auto olmo3 = ArchitectureFromHfConfig(absl::StrCat(
      R"({"model_type": "olmo3", "hidden_size": 4096, "intermediate_size": 11008,
          "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 100278,
          "sliding_window": 4096, "layer_types": [)",
      types, "]}"));
  ASSERT_TRUE(olmo3.ok()) << olmo3.status();
  EXPECT_EQ(olmo3->num_sliding_window_layers(), 24);
  EXPECT_TRUE(olmo3->qk_norm_full_width());
  // StarCoder2's declared window is one llama.cpp does not keep: none.
  auto starcoder2 = ArchitectureFromHfConfig(
      R"({"model_type": "starcoder2", "hidden_size": 3072, "intermediate_size": 12288,
          "num_hidden_layers": 30, "num_attention_heads": 24, "num_key_value_heads": 2,
          "vocab_size": 49152, "sliding_window": 4096})");
  ASSERT_TRUE(starcoder2.ok()) << starcoder2.status();
  EXPECT_EQ(starcoder2->sliding_window(), 0);
}

// What a family's reader does not count is refused naming the key, not
// counted short.
TEST(HfConfigTest, MixtureOfExpertsFamiliesRefuseWhatTheyDoNotCount) {
  auto shared = ArchitectureFromHfConfig(
      R"({"model_type": "minimax_m2", "hidden_size": 3072, "intermediate_size": 1536,
          "num_hidden_layers": 62, "num_attention_heads": 48, "vocab_size": 200064,
          "num_local_experts": 256, "shared_intermediate_size": 1536})");
  ASSERT_EQ(shared.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GetFieldViolations(shared.status())[0].field,
            "hf_config_json.shared_intermediate_size");
  // ERNIE-4.5-VL's per-modality expert lists: the message names the key
  // the config has, not the first one this reader looks for.
  auto listed = ArchitectureFromHfConfig(
      R"({"model_type": "ernie4_5_moe", "hidden_size": 2560, "num_hidden_layers": 28,
          "num_attention_heads": 20, "vocab_size": 103424, "moe_num_experts": [64, 64]})");
  ASSERT_EQ(listed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(listed.status().message().find("\"moe_num_experts\""), std::string::npos)
      << listed.status().message();
}

TEST(HfConfigTest, MalformedConfigsNameTheProblem) {
  EXPECT_EQ(ArchitectureFromHfConfig("{not json").status().code(),
            absl::StatusCode::kInvalidArgument);
  auto missing = ArchitectureFromHfConfig(R"({"model_type": "llama", "hidden_size": 4096})");
  ASSERT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("num_hidden_layers"), std::string::npos);
  auto negative = ArchitectureFromHfConfig(
      R"({"model_type": "llama", "num_hidden_layers": -3, "hidden_size": 8,
          "num_attention_heads": 1, "vocab_size": 5})");
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GetFieldViolations(negative.status())[0].field, "hf_config_json");
  EXPECT_EQ(ArchitectureFromHfConfig(std::string(2 << 20, ' ')).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// A quantized checkpoint's format from its quantization_config, as the
// published configs state it: openai/gpt-oss-120b's ("quant_method":
// "mxfp4", attention, router, embeddings and head left unconverted) and
// deepseek-ai/DeepSeek-V3's ("quant_method": "fp8", "fmt": "e4m3",
// "weight_block_size": [128, 128]); a 16-bit checkpoint (no
// quantization_config) and quantizers whose layout the field cannot carry
// (GPTQ's group size, other FP8 blocks) leave it empty.
TEST(HfConfigTest, AQuantizedCheckpointNamesItsWeightFormat) {
  const std::string start =
      R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "vocab_size": 100)";
  const auto format_of = [&](const std::string& rest) {
    absl::StatusOr<common::v1::Architecture> arch = ArchitectureFromHfConfig(start + rest + "}");
    EXPECT_TRUE(arch.ok()) << arch.status();
    return arch.ok() ? arch->checkpoint_weight_format() : std::string("(error)");
  };
  EXPECT_EQ(format_of(R"(, "quantization_config": {"modules_to_not_convert":
      ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"],
      "quant_method": "mxfp4"})"),
            "mxfp4");
  EXPECT_EQ(format_of(R"(, "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3",
      "quant_method": "fp8", "weight_block_size": [128, 128]})"),
            "fp8-block128");
  EXPECT_EQ(format_of(R"(, "quantization_config": {"quant_method": "fp8",
      "activation_scheme": "static"})"),
            "fp8");
  EXPECT_EQ(format_of(R"(, "quantization_config": {"quant_method": "modelopt",
      "quant_algo": "NVFP4"})"),
            "nvfp4");
  EXPECT_EQ(format_of(R"(, "torch_dtype": "bfloat16")"), "");
}

// The quantizers whose checkpoints people download most besides FP8 and
// MXFP4, as their published config.json files state them (keys and values
// as transformers writes them; the repositories in each comment): each is
// the format the estimator sizes its files in, with the group size; a
// quantization no format here sizes is named instead, never left unsaid.
struct Quantized {
  std::string format;
  int32_t group_size = 0;
  std::string not_sized;
  bool operator==(const Quantized&) const = default;
};
std::ostream& operator<<(std::ostream& out, const Quantized& q) {
  return out << "{" << q.format << ", " << q.group_size << ", \"" << q.not_sized << "\"}";
}
Quantized QuantizedOf(const std::string& quantization_config) {
  absl::StatusOr<common::v1::Architecture> arch = ArchitectureFromHfConfig(
      R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "vocab_size": 100, "quantization_config": )" +
      quantization_config + "}");
  EXPECT_TRUE(arch.ok()) << arch.status();
  if (!arch.ok()) return {.format = "(error)"};
  return {arch->checkpoint_weight_format(), arch->checkpoint_quantization_group_size(),
          arch->checkpoint_quantization_not_sized()};
}

TEST(HfConfigTest, GptqAwqBitsAndBytesAndCompressedTensorsCheckpointsNameTheirFormat) {
  // Qwen/Qwen2.5-7B-Instruct-AWQ (AutoAWQ, GEMM kernels).
  EXPECT_EQ(QuantizedOf(R"({"bits": 4, "group_size": 128, "modules_to_not_convert": null,
                            "quant_method": "awq", "version": "gemm", "zero_point": true})"),
            (Quantized{.format = "awq-int4", .group_size = 128}));
  // Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4 and -Int8 (AutoGPTQ).
  EXPECT_EQ(QuantizedOf(R"({"batch_size": 1, "bits": 4, "damp_percent": 0.01, "desc_act": false,
                            "group_size": 128, "quant_method": "gptq", "sym": true,
                            "true_sequential": true, "use_exllama": true})"),
            (Quantized{.format = "gptq-int4", .group_size = 128}));
  EXPECT_EQ(QuantizedOf(R"({"bits": 8, "group_size": 32, "quant_method": "gptq"})"),
            (Quantized{.format = "gptq-int8", .group_size = 32}));
  // unsloth/llama-3-8b-bnb-4bit (bitsandbytes NF4, double quantization).
  EXPECT_EQ(QuantizedOf(R"({"bnb_4bit_compute_dtype": "bfloat16", "bnb_4bit_quant_type": "nf4",
                            "bnb_4bit_use_double_quant": true, "llm_int8_threshold": 6.0,
                            "load_in_4bit": true, "load_in_8bit": false,
                            "quant_method": "bitsandbytes"})"),
            (Quantized{.format = "nf4-double-quant"}));
  EXPECT_EQ(QuantizedOf(R"({"load_in_4bit": true, "bnb_4bit_quant_type": "nf4"})"),
            (Quantized{.format = "nf4"}));  // an older config: no quant_method
  EXPECT_EQ(QuantizedOf(R"({"load_in_8bit": true, "quant_method": "bitsandbytes"})"),
            (Quantized{.format = "int8"}));
  // RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16 (llm-compressor W4A16).
  EXPECT_EQ(QuantizedOf(R"({"config_groups": {"group_0": {"input_activations": null,
                            "output_activations": null, "targets": ["Linear"],
                            "weights": {"actorder": null, "block_structure": null,
                            "dynamic": false, "group_size": 128, "num_bits": 4,
                            "observer": "minmax", "strategy": "group", "symmetric": true,
                            "type": "int"}}}, "format": "pack-quantized", "ignore": ["lm_head"],
                            "quant_method": "compressed-tensors",
                            "quantization_status": "compressed"})"),
            (Quantized{.format = "int4", .group_size = 128}));
  // RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic (per-channel FP8).
  EXPECT_EQ(QuantizedOf(R"({"config_groups": {"group_0": {"targets": ["Linear"],
                            "input_activations": {"dynamic": true, "num_bits": 8,
                            "strategy": "token", "symmetric": true, "type": "float"},
                            "weights": {"dynamic": false, "num_bits": 8, "strategy": "channel",
                            "symmetric": true, "type": "float"}}}, "format": "float-quantized",
                            "quant_method": "compressed-tensors"})"),
            (Quantized{.format = "fp8"}));
  // llm-compressor's NVFP4 scheme (E2M1 in groups of 16, FP8 scales).
  EXPECT_EQ(QuantizedOf(R"({"config_groups": {"group_0": {"targets": ["Linear"],
                            "weights": {"group_size": 16, "num_bits": 4,
                            "strategy": "tensor_group", "symmetric": true, "type": "float"}}},
                            "format": "nvfp4-pack-quantized",
                            "quant_method": "compressed-tensors"})"),
            (Quantized{.format = "nvfp4"}));
  EXPECT_EQ(QuantizedOf(R"({"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0})"),
            (Quantized{.format = "fp8"}));
}

TEST(HfConfigTest, AQuantizationNoFormatSizesIsNamedNotLeftUnsaid) {
  const auto not_sized = [](const std::string& config) {
    const Quantized q = QuantizedOf(config);
    EXPECT_EQ(q.format, "") << config;
    EXPECT_EQ(q.group_size, 0) << config;
    EXPECT_FALSE(q.not_sized.empty()) << config;
    return q.not_sized;
  };
  EXPECT_EQ(not_sized(R"({"quant_method": "gptq", "bits": 3, "group_size": 128})"), "gptq, 3 bits");
  EXPECT_EQ(not_sized(R"({"quant_method": "gptq", "bits": 4, "group_size": -1})"),
            "gptq, 4 bits, per-column scales (group_size -1)");
  EXPECT_EQ(not_sized(R"({"quant_method": "awq", "bits": 4, "group_size": 100})"),
            "awq, 4 bits, no group size of 1-4096 (a power of two)");
  EXPECT_EQ(not_sized(R"({"quant_method": "hqq", "nbits": 4})"), "hqq");
  EXPECT_EQ(not_sized(R"({"load_in_4bit": true, "bnb_4bit_quant_type": "fp4"})"),
            "bitsandbytes, 4-bit fp4");
  EXPECT_EQ(not_sized(R"({"quant_method": "fp8", "weight_block_size": [64, 64]})"),
            "fp8 with a weight_block_size other than [128, 128]");
  EXPECT_EQ(not_sized(R"({"quant_method": "compressed-tensors", "format": "pack-quantized",
                          "config_groups": {"group_0": {"weights": {"num_bits": 4,
                          "type": "int", "strategy": "group", "group_size": 128,
                          "symmetric": false}}}})"),
            "compressed-tensors, int 4-bit group weights, asymmetric");
  // Four-bit values a byte each: not the packed W4A16 layout.
  EXPECT_EQ(not_sized(R"({"quant_method": "compressed-tensors", "format": "naive-quantized",
                          "config_groups": {"group_0": {"weights": {"num_bits": 4,
                          "type": "int", "strategy": "group", "group_size": 128}}}})"),
            "compressed-tensors, int 4-bit group weights");
  EXPECT_EQ(not_sized(R"({"quant_method": "compressed-tensors", "format": "float-quantized",
                          "config_groups": {"a": {"weights": {"num_bits": 8, "type": "float",
                          "strategy": "channel"}}, "b": {"weights": {"num_bits": 8,
                          "type": "float", "strategy": "block",
                          "block_structure": [128, 128]}}}})"),
            "compressed-tensors, groups with different weight schemes");
  // Figures no cast can hold are no width or group, not undefined behaviour.
  EXPECT_EQ(not_sized(R"({"quant_method": "gptq", "bits": 1e300, "group_size": 1e300})"),
            "gptq, 0 bits, no group size of 1-4096 (a power of two)");
  EXPECT_EQ(not_sized(R"({"quant_method": "compressed-tensors", "format": "pack-quantized",
                          "config_groups": {"g": {"weights": {"num_bits": -1e300,
                          "type": "int", "strategy": "group", "group_size": 128}}}})"),
            "compressed-tensors, int 0-bit group weights");
  EXPECT_EQ(not_sized(R"({"bits": 4})"), "a quantization_config without quant_method");
  EXPECT_EQ(not_sized(R"("fp8")"), "a quantization_config that is not an object");
  // A method name from the file is quoted short and printable.
  EXPECT_EQ(not_sized(R"({"quant_method": "my\nquantizer <b>with a name far too long to show"})"),
            "myquantizerbwithanamefartoolongtoshow");
  // null is no quantization at all.
  EXPECT_EQ(QuantizedOf("null"), Quantized{});
}

// A checkpoint format the estimator does not size as a whole checkpoint
// (a typo, or GPTQ's, which needs a group size) is refused by the catalog
// and, in an inline model, by the estimator, each naming the field; the
// formats it sizes pass both.
TEST(HfConfigTest, AnUnknownCheckpointFormatIsRefusedNamingTheField) {
  absl::StatusOr<common::v1::Architecture> arch = ArchitectureFromHfConfig(
      R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "vocab_size": 100})");
  ASSERT_TRUE(arch.ok()) << arch.status();
  common::v1::Model model;
  model.set_name("models/some-model");
  model.set_display_name("Some model");
  model.mutable_provenance()->set_source("a test");
  *model.mutable_architecture() = *arch;
  const auto fields_of = [](const absl::Status& status) {
    std::vector<std::string> fields;
    for (const auto& v : GetFieldViolations(status)) fields.push_back(v.field);
    return fields;
  };
  for (const char* bad : {"fp9", "gptq", "MXFP4 "}) {
    model.mutable_architecture()->set_checkpoint_weight_format(bad);
    FieldViolations violations;
    catalog::ValidateModel(model, "model", &violations);
    EXPECT_EQ(fields_of(violations.ToStatus()),
              std::vector<std::string>{"model.architecture.checkpoint_weight_format"})
        << bad;
    absl::StatusOr<ParameterCount> count =
        CountParameters(ToCoreArchitecture(model.architecture()));
    EXPECT_EQ(fields_of(count.status()),
              std::vector<std::string>{"architecture.checkpoint_weight_format"})
        << bad;
  }
  for (const char* good : {"mxfp4", "fp8-block128", "bf16", "gptq-int4", "nf4", ""}) {
    model.mutable_architecture()->set_checkpoint_weight_format(good);
    FieldViolations violations;
    catalog::ValidateModel(model, "model", &violations);
    EXPECT_TRUE(violations.ToStatus().ok()) << good << ": " << violations.ToStatus();
    EXPECT_TRUE(CountParameters(ToCoreArchitecture(model.architecture())).ok()) << good;
  }
}

// A 16-bit o_proj is a trait of an FP8 block-scaled checkpoint
// (MiMo-V2-Flash's): the reader keeps it only with that format, and the
// catalog and the estimator refuse it beside another, naming the field.
TEST(HfConfigTest, SixteenBitOutputProjectionsOnlyBesideAnFp8Checkpoint) {
  auto fp8 = ArchitectureFromHfConfig(testing::kMimoV2FlashConfigJson);
  ASSERT_TRUE(fp8.ok()) << fp8.status();
  EXPECT_TRUE(fp8->checkpoint_attention_output_16bit());
  std::string bf16 = testing::kMimoV2FlashConfigJson;
  bf16.erase(bf16.rfind(',', bf16.find(R"("quantization_config")")));
  bf16 += "}";
  auto plain = ArchitectureFromHfConfig(bf16);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->checkpoint_weight_format(), "");
  EXPECT_FALSE(plain->checkpoint_attention_output_16bit());

  common::v1::Model model;
  model.set_name("models/mimo-v2-flash");
  model.set_display_name("MiMo-V2-Flash");
  model.mutable_provenance()->set_source("a test");
  *model.mutable_architecture() = *fp8;
  FieldViolations accepted;
  catalog::ValidateModel(model, "model", &accepted);
  EXPECT_TRUE(accepted.ToStatus().ok()) << accepted.ToStatus();
  model.mutable_architecture()->set_checkpoint_weight_format("bf16");
  FieldViolations violations;
  catalog::ValidateModel(model, "model", &violations);
  ASSERT_EQ(GetFieldViolations(violations.ToStatus()).size(), 1u) << violations.ToStatus();
  EXPECT_EQ(GetFieldViolations(violations.ToStatus())[0].field,
            "model.architecture.checkpoint_attention_output_16bit");
  EXPECT_NE(CountParameters(ToCoreArchitecture(model.architecture()))
                .status()
                .message()
                .find("architecture.checkpoint_attention_output_16bit"),
            std::string::npos);
}

// The checkpoint's group size and its "not sized" note are refused where
// they would mislead, by the catalog and by the estimator alike, naming the
// field: a group size on a format without groups or off the powers of two
// the estimator sizes, a note beside a format, a note too long or with
// control characters.
TEST(HfConfigTest, CheckpointGroupSizesAndNotesOutOfPlaceAreRefusedNamingTheField) {
  common::v1::Model model;
  model.set_name("models/some-model");
  model.set_display_name("Some model");
  model.mutable_provenance()->set_source("a test");
  *model.mutable_architecture() = *ArchitectureFromHfConfig(
      R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "vocab_size": 100})");
  struct CheckpointCase {
    std::string format;
    int32_t group_size;
    std::string not_sized;
    std::string field;  // empty: accepted by both
    bool estimator_refuses;
  };
  const std::string group_field = "architecture.checkpoint_quantization_group_size";
  const std::string note_field = "architecture.checkpoint_quantization_not_sized";
  const std::vector<CheckpointCase> cases = {
      {"awq-int4", 64, "", "", false},
      {"int4", 32, "", "", false},
      {"", 0, "hqq", "", false},
      {"fp8", 128, "", group_field, true},
      {"", 128, "", group_field, true},
      {"gptq-int4", 100, "", group_field, true},
      {"gptq-int4", 8192, "", group_field, true},
      {"gptq-int4", -1, "", group_field, true},
      {"mxfp4", 0, "hqq", note_field, true},
      {"", 0, std::string(121, 'x'), note_field, false},
      {"", 0, "line\nbreak", note_field, false},
  };
  for (const CheckpointCase& c : cases) {
    common::v1::Architecture& arch = *model.mutable_architecture();
    arch.set_checkpoint_weight_format(c.format);
    arch.set_checkpoint_quantization_group_size(c.group_size);
    arch.set_checkpoint_quantization_not_sized(c.not_sized);
    const std::string label = absl::StrCat(c.format, "/", c.group_size, "/", c.not_sized);
    FieldViolations violations;
    catalog::ValidateModel(model, "model", &violations);
    const std::vector<FieldViolation> found = GetFieldViolations(violations.ToStatus());
    if (c.field.empty()) {
      EXPECT_TRUE(found.empty()) << label << ": " << violations.ToStatus();
    } else {
      ASSERT_EQ(found.size(), 1u) << label << ": " << violations.ToStatus();
      EXPECT_EQ(found[0].field, "model." + c.field) << label;
    }
    const absl::Status counted = CountParameters(ToCoreArchitecture(arch)).status();
    if (c.estimator_refuses) {
      ASSERT_EQ(GetFieldViolations(counted).size(), 1u) << label << ": " << counted;
      EXPECT_EQ(GetFieldViolations(counted)[0].field, c.field) << label;
    } else {
      EXPECT_TRUE(counted.ok()) << label << ": " << counted;
    }
  }
}

// Nested JSON is refused before protobuf's parser sees it (20,000 nested
// arrays took it 12.5 CPU-seconds): arrays, objects, mixed levels, inside a
// valid config; 32 levels of objects or arrays and brackets inside strings
// pass.
std::string Nested(int depth, const std::string& open, const std::string& close) {
  std::string json;
  for (int i = 0; i < depth; ++i) json += open;
  json += "1";
  for (int i = 0; i < depth; ++i) json += close;
  return json;
}

constexpr char kLlamaStart[] =
    R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
        "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 128,
        "vocab_size": 100, "max_position_embeddings": 256, "extra": )";

TEST(HfConfigTest, JsonNestedPastThirtyTwoLevelsIsAnInvalidArgumentBeforeParsing) {
  const std::vector<std::string> deep = {
      Nested(20000, "[", "]"),
      Nested(33, "{\"a\":", "}"),
      "  \n" + Nested(5000, "{\"x\": [", "]}"),
      kLlamaStart + Nested(32, "[", "]") + "}",  // 33 with the config's own object
      kLlamaStart + Nested(200000, "[", "]") + "}",
  };
  const std::clock_t start = std::clock();
  for (const std::string& json : deep) {
    auto arch = ArchitectureFromHfConfig(json);
    EXPECT_EQ(arch.status().code(), absl::StatusCode::kInvalidArgument) << json.substr(0, 60);
    EXPECT_NE(arch.status().message().find("deeper than 32 levels"), std::string::npos)
        << arch.status();
    ASSERT_EQ(GetFieldViolations(arch.status()).size(), 1u);
    EXPECT_EQ(GetFieldViolations(arch.status())[0].field, "hf_config_json");
  }
  // CPU time, not wall time: a linear scan of 1.3 MB takes milliseconds; the
  // parser took seconds for the first input alone.
  EXPECT_LT(static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC, 2.0);

  auto arrays = ArchitectureFromHfConfig(kLlamaStart + Nested(31, "[", "]") + "}");
  EXPECT_TRUE(arrays.ok()) << arrays.status();
  auto objects = ArchitectureFromHfConfig(kLlamaStart + Nested(31, "{\"a\":", "}") + "}");
  EXPECT_TRUE(objects.ok()) << objects.status();
  auto quoted = ArchitectureFromHfConfig(kLlamaStart + ("\"" + std::string(500, '[') + "\"}"));
  EXPECT_TRUE(quoted.ok()) << quoted.status();
}

}  // namespace
}  // namespace modelatlas::estimator
