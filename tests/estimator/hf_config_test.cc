// Hugging Face config.json files in ../shared/data/hf_configs, read in place:
// the parameter count from each must equal the model's published exact
// count (the total of its safetensors checkpoint, as listed on its model card).
#include "common/formats/hf_config.h"

#include <gtest/gtest.h>

#include <ctime>
#include <string>
#include <vector>

#include "catalog-service/validation.h"
#include "common/status/errors.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/core/inference_memory.h"
#include "estimator-service/core/parameters.h"
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
  auto arch = ArchitectureFromHfConfig(testing::ReadFile(path));
  ASSERT_TRUE(arch.ok()) << arch.status();
  auto count = CountParameters(ToCoreArchitecture(*arch));
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(count->total, GetParam().parameters) << path;
}

INSTANTIATE_TEST_SUITE_P(SharedData, HfConfigFileTest, ::testing::ValuesIn(kCases));

TEST(HfConfigTest, MoeActiveParametersAndKvCacheFromConfig) {
  REQUIRE_SHARED_DATA(path, "hf_configs/LLM-Prof/Qwen_Qwen3-30B-A3B.json");
  auto arch = ArchitectureFromHfConfig(testing::ReadFile(path));
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
  EXPECT_NE(arch.status().message().find("supported model_type values: bert, deepseek_v2"),
            std::string::npos)
      << arch.status().message();
  auto made_up = ArchitectureFromHfConfig(R"({"model_type": "no_such_family"})");
  EXPECT_EQ(made_up.status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_EQ(GetFieldViolations(made_up.status()).size(), 1u);
  EXPECT_EQ(GetFieldViolations(made_up.status())[0].field, "hf_config_json.model_type");
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
  EXPECT_EQ(format_of(R"(, "quantization_config": {"quant_method": "gptq", "bits": 4,
      "group_size": 128})"),
            "");
  EXPECT_EQ(format_of(R"(, "quantization_config": {"quant_method": "fp8",
      "weight_block_size": [64, 64]})"),
            "");
  EXPECT_EQ(format_of(R"(, "quantization_config": "fp8")"), "");
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
  for (const char* bad : {"fp9", "gptq-int4", "MXFP4 "}) {
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
  for (const char* good : {"mxfp4", "fp8-block128", "bf16", ""}) {
    model.mutable_architecture()->set_checkpoint_weight_format(good);
    FieldViolations violations;
    catalog::ValidateModel(model, "model", &violations);
    EXPECT_TRUE(violations.ToStatus().ok()) << good << ": " << violations.ToStatus();
    EXPECT_TRUE(CountParameters(ToCoreArchitecture(model.architecture())).ok()) << good;
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
