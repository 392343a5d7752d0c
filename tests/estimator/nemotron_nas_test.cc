// Nemotron-NAS (DeciLMForCausalLM): Llama-3.3-Nemotron-Super-49B and
// Llama-3.1-Nemotron-Ultra-253B, whose layers each have their own MLP width
// or none and attention or none (block_configs), counted from their
// config.json against the checkpoints' published counts, with the KV cache
// of the layers that have attention, LoRA adapters and training activations
// block by block (docs/ACCURACY.md and docs/FORMULAS.md list each figure).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "common/formats/hf_config.h"
#include "common/status/errors.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/core/inference_memory.h"
#include "estimator-service/core/parameters.h"
#include "estimator-service/core/training_memory.h"
#include "estimator-service/core/weight_files.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "tests/estimator/llmfit_counts.h"
#include "tests/estimator/published_configs.h"
#include "tests/testing/shared_data.h"

namespace modelatlas::estimator {
namespace {

using testing::LlmfitCount;
using testing::NemotronSuper49BConfigJson;
using testing::NemotronUltra253BConfigJson;

Architecture Read(const std::string& json) {
  auto arch = ArchitectureFromHfConfig(json);
  EXPECT_TRUE(arch.ok()) << arch.status();
  return arch.ok() ? ToCoreArchitecture(*arch) : Architecture{};
}

double Count(const Architecture& arch) {
  absl::StatusOr<ParameterCount> count = CountParameters(arch);
  EXPECT_TRUE(count.ok()) << count.status();
  return count.ok() ? count->total : 0;
}

// Super-49B: 49,867,145,216, llmfit's parameters_raw (the safetensors'
// count) for -v1 and -v1_5 (AlexsJones/llmfit llmfit-core/data/
// hf_models.json, ../shared/data/model_catalogs/llmfit_hf_models.json).
TEST(NemotronNasTest, Super49BIsCountedAsItsCheckpoint) {
  const Architecture arch = Read(NemotronSuper49BConfigJson());
  ASSERT_EQ(arch.layer_mlp_widths.size(), 80u);
  EXPECT_EQ(arch.AttentionLayers(), 49);
  EXPECT_EQ(arch.MlpLayers(), 80);
  EXPECT_EQ(arch.EffectiveKvHeads(), 8);  // 64 heads / n_heads_in_group 8
  EXPECT_EQ(arch.intermediate_size, 28672);
  // _ffn_mult_to_intermediate_size: int(2 x ffn_mult x 8192 / 3) up to a
  // multiple of 256.
  EXPECT_EQ(arch.layer_mlp_widths[0], 14336);   // 2.625
  EXPECT_EQ(arch.layer_mlp_widths[11], 17920);  // 3.28125
  EXPECT_EQ(arch.layer_mlp_widths[54], 5632);   // 1.0: 5461 rounded up
  EXPECT_EQ(arch.layer_mlp_widths[62], 2816);   // 0.5
  EXPECT_EQ(Count(arch), 49867145216.0);

  absl::StatusOr<ParameterCount> count = CountParameters(arch);
  ASSERT_TRUE(count.ok());
  std::string mlp, norms, attention;
  for (const ParameterComponent& c : count->components) {
    if (c.name == "mlp") mlp = c.arithmetic;
    if (c.name == "norms") norms = c.arithmetic;
    if (c.name == "attention") attention = c.arithmetic;
  }
  EXPECT_TRUE(absl::StrContains(mlp, "3x8192x28672 = 704643072 per layer x 49 layers")) << mlp;
  EXPECT_TRUE(absl::StrContains(mlp, "3x8192x2816 = 69206016 per layer x 6 layers")) << mlp;
  EXPECT_TRUE(absl::StrContains(attention, "per layer x 49 layers")) << attention;
  EXPECT_TRUE(absl::StrContains(norms, "49 before an attention + 80 before an MLP + 1 final"))
      << norms;

  const double published = LlmfitCount("nvidia/Llama-3_3-Nemotron-Super-49B-v1");
  if (published > 0) {
    EXPECT_EQ(published, 49867145216.0);
    EXPECT_EQ(LlmfitCount("nvidia/Llama-3_3-Nemotron-Super-49B-v1_5"), 49867145216.0);
  }
}

TEST(NemotronNasTest, PublishedCountIsLlmfitsParametersRaw) {
  REQUIRE_SHARED_DATA(path, "model_catalogs/llmfit_hf_models.json");
  EXPECT_EQ(LlmfitCount("nvidia/Llama-3_3-Nemotron-Super-49B-v1"), 49867145216.0);
}

// Ultra-253B: 253,401,268,224; a GGUF load log of the same checkpoint
// prints "model params = 253.401 B" (ikawrakow/ik_llama.cpp pull request
// #377), its per-layer head counts and widths those of the config.
TEST(NemotronNasTest, Ultra253BIsCountedAsItsCheckpoint) {
  const Architecture arch = Read(NemotronUltra253BConfigJson());
  ASSERT_EQ(arch.layer_mlp_widths.size(), 162u);
  EXPECT_EQ(arch.AttentionLayers(), 64);
  EXPECT_EQ(arch.MlpLayers(), 81);
  EXPECT_EQ(arch.EffectiveKvHeads(), 8);      // 128 heads / 16
  EXPECT_EQ(arch.intermediate_size, 425984);  // ffn_mult 39.0
  EXPECT_EQ(arch.layer_mlp_widths[0], 5376);  // 0.4875
  EXPECT_EQ(arch.layer_mlp_widths[9], 0);     // a no-op FFN
  EXPECT_EQ(Count(arch), 253401268224.0);
  EXPECT_NEAR(Count(arch) / 1e9, 253.401, 0.0005);
}

// The KV cache: the layers with attention only, 8 KV heads of 128 each.
TEST(NemotronNasTest, OnlyTheLayersWithAttentionCacheKeysAndValues) {
  const Architecture super = Read(NemotronSuper49BConfigJson());
  // 49 layers x 2 (K, V) x 8 heads x 128 x 2 bytes = 200,704 bytes a token.
  EXPECT_EQ(KvCacheBytes(super, NumberFormat::kBf16, 1, 1), 200704.0);
  EXPECT_EQ(KvCacheBytes(super, NumberFormat::kBf16, 131072, 1), 200704.0 * 131072);
  const Architecture ultra = Read(NemotronUltra253BConfigJson());
  EXPECT_EQ(KvCacheBytes(ultra, NumberFormat::kBf16, 1, 1), 64.0 * 2 * 8 * 128 * 2);
}

// LoRA: q and v in the 49 layers with attention, up and down at each
// layer's own width (the widths add up to 1,642,496: the MLPs'
// 40,365,981,696 parameters / (3 x 8192)).
TEST(NemotronNasTest, LoraAdaptsEachBlockWhereALayerHasOne) {
  const Architecture super = Read(NemotronSuper49BConfigJson());
  EXPECT_EQ(super.MlpWidthTotal(), 1642496.0);
  absl::StatusOr<Figure> qv = LoraParameters(super, 16, {"q", "v"});
  ASSERT_TRUE(qv.ok()) << qv.status();
  EXPECT_EQ(qv->value, 49.0 * 16 * ((8192 + 8192) + (8192 + 1024)));
  absl::StatusOr<Figure> mlp = LoraParameters(super, 16, {"up", "down"});
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  EXPECT_EQ(mlp->value, 2.0 * 16 * (80.0 * 8192 + 1642496));
  EXPECT_TRUE(absl::StrContains(mlp->arithmetic, "every layer with an MLP")) << mlp->arithmetic;
}

// Training activations block by block: the 31 layers without attention
// keep none of its tensors, each MLP its own width's.
TEST(NemotronNasTest, TrainingActivationsFollowTheBlocks) {
  const Architecture super = Read(NemotronSuper49BConfigJson());
  Architecture uniform = super;  // every layer attention and the widest MLP
  uniform.layer_mlp_widths.clear();
  uniform.num_attention_layers = 0;
  TrainingMemoryInput in;
  in.parameters = 49867145216.0;
  in.architecture = super;
  in.sequence_length = 4096;
  in.micro_batch = 1;
  in.framework = Framework::kFsdp;
  absl::StatusOr<TrainingMemory> blocks = EstimateTrainingMemory(in);
  ASSERT_TRUE(blocks.ok()) << blocks.status();
  in.architecture = uniform;
  absl::StatusOr<TrainingMemory> every_layer = EstimateTrainingMemory(in);
  ASSERT_TRUE(every_layer.ok()) << every_layer.status();
  double activations = 0, upper = 0;
  std::string text;
  for (const auto& line : blocks->device_lines) {
    if (line.component == "activations") activations = line.bytes, text = line.arithmetic;
  }
  for (const auto& line : every_layer->device_lines) {
    if (line.component == "activations") upper = line.bytes;
  }
  EXPECT_GT(activations, 0);
  EXPECT_LT(activations, 0.75 * upper) << text;
  EXPECT_TRUE(absl::StrContains(text, "80 MLP layers of 1642496 widths in all")) << text;
  EXPECT_TRUE(absl::StrContains(text, "49 attention layers")) << text;
}

// llama.cpp files of the Super, type by type as llama-quantize gives each
// tensor (the widths' own ffn_down counter, llama.cpp's LLM_TYPE_70B rule
// for its 80 layers): bartowski/nvidia_Llama-3_3-Nemotron-Super-49B-v1_5-GGUF
// at 98fc9722ebffe74e41685c477cf2982012d3f0ad. Q4_K_M: 30,215,579,136 bytes,
// of which llama-bench counts 30,207,721,728 as the tensors (49,867,145,280
// parameters: the count and rope_freqs' 64 F32 elements); Q3_K_S
// 21,955,339,776 (a local stat) and IQ3_XXS 19,519,022,592 (the Hub's API),
// as Alberto-Codes/vramfit publication/model-card/card-ledger.md at
// 00d45a13f6c6 lists them. Each file less ours is the same 7,857,664 bytes:
// its header and rope_freqs (256 bytes).
TEST(NemotronNasTest, Super49BGgufFilesMatchToTheByte) {
  const Architecture super = Read(NemotronSuper49BConfigJson());
  struct Published {
    NumberFormat format;
    double bytes;
    const char* file;
  };
  for (const Published& p : {Published{NumberFormat::kGgufQ4KM, 30215579136.0, "Q4_K_M"},
                             Published{NumberFormat::kGgufQ3K, 21955339776.0, "Q3_K_S"},
                             Published{NumberFormat::kGgufIq3Xxs, 19519022592.0, "IQ3_XXS"}}) {
    absl::StatusOr<WeightFile> file = WeightFileOf(super, p.format, 0, /*imatrix=*/true);
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_EQ(p.bytes - file->bytes, 7857664.0) << p.file << ": " << file->derivation;
  }
  absl::StatusOr<WeightFile> q4 = WeightFileOf(super, NumberFormat::kGgufQ4KM, 0, true);
  ASSERT_TRUE(q4.ok());
  EXPECT_EQ(q4->bytes + 64 * 4, 30207721728.0);  // llama-bench's model size
}

// The Ultra's Q4_K_M, made with llama-quantize in ggml-org/llama.cpp pull
// request #12843 (its load log: "file size = 140.56 GiB (4.76 BPW)", the
// tensors' bytes, llama-model-loader.cpp's n_bytes): ours is within the
// log's rounding (150,929,014,784 bytes, 140.5638 GiB, 4.765 bits). Its 81
// MLPs are numbered by the ffn_down counter, and the quantizer's bound is
// the 162 layers (n_layer), not the 81 ffn_down tensors: with the latter
// ours was 0.5% above.
TEST(NemotronNasTest, Ultra253BGgufFileMatchesItsLoadLog) {
  const Architecture ultra = Read(NemotronUltra253BConfigJson());
  absl::StatusOr<WeightFile> file = WeightFileOf(ultra, NumberFormat::kGgufQ4KM, 0, false);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_NEAR(file->bytes / 1073741824.0, 140.56, 0.005) << file->derivation;
  EXPECT_NEAR(file->bytes * 8 / (file->parameters + 64), 4.76, 0.005);
}

// Each layer's parameters as block_configs builds it: attention (and its
// norm) where it has one, its MLP (and its norm) at its width.
std::vector<double> LayerParameters(const std::string& config_json) {
  google::protobuf::Struct config;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(config_json, &config).ok());
  const auto& f = config.fields();
  const double h = f.at("hidden_size").number_value();
  const double heads = f.at("num_attention_heads").number_value(), d = h / heads;
  const Architecture arch = Read(config_json);
  std::vector<double> out;
  for (int i = 0; i < f.at("block_configs").list_value().values_size(); ++i) {
    const auto& block = f.at("block_configs").list_value().values(i).struct_value().fields();
    const auto& attention = block.at("attention").struct_value().fields();
    double p = 0;
    if (!attention.at("no_op").bool_value()) {
      const double kv = heads / attention.at("n_heads_in_group").number_value();
      p += 2 * h * heads * d + 2 * h * kv * d + h;
    }
    const double width = static_cast<double>(arch.layer_mlp_widths[i]);
    if (width > 0) p += 3 * h * width + h;
    out.push_back(p);
  }
  return out;
}

// A pipeline stage or a card of a layer split is sized as its layers x the
// largest a layer could be: for every run of consecutive layers, whichever,
// that is never below what the run holds (the Ultra's four "FFN fusion"
// layers hold 14.8 to 20.9 billion parameters each; most of its others none).
TEST(NemotronNasTest, NoRunOfLayersIsSizedBelowWhatItHolds) {
  for (const std::string& json : {NemotronSuper49BConfigJson(), NemotronUltra253BConfigJson()}) {
    const Architecture arch = Read(json);
    const std::vector<double> layers = LayerParameters(json);
    absl::StatusOr<ParameterCount> count = CountParameters(arch);
    ASSERT_TRUE(count.ok());
    double body = 0;
    for (double p : layers) body += p;
    EXPECT_EQ(body + arch.hidden_size, count->non_embedding);  // and the final norm
    const int largest = LayersAsLargeAsTheLargest(arch);
    const double per_layer = count->non_embedding / largest;
    for (size_t first = 0; first < layers.size(); ++first) {
      double run = 0;
      for (size_t last = first; last < layers.size(); ++last) {
        run += layers[last];
        ASSERT_LE(run, static_cast<double>(last - first + 1) * per_layer)
            << "layers " << first << "-" << last;
      }
    }
  }
  EXPECT_EQ(LayersAsLargeAsTheLargest(Read(NemotronSuper49BConfigJson())), 55);
  EXPECT_EQ(LayersAsLargeAsTheLargest(Read(NemotronUltra253BConfigJson())), 11);
}

// The largest a layer could be is the count's own attention and widest MLP:
// the Super's is one of its layers (attention and a 28,672-wide MLP); an
// architecture with attention biases (none published) gets them in its bound.
TEST(NemotronNasTest, TheLargestLayerIsTheCountsAttentionAndWidestMlp) {
  const std::string json = NemotronSuper49BConfigJson();
  Architecture arch = Read(json);
  const std::vector<double> layers = LayerParameters(json);
  absl::StatusOr<ParameterCount> count = CountParameterTotals(arch);
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count->largest_layer, *std::max_element(layers.begin(), layers.end()));
  // 8192x8192 + 2x8192x1024 + 8192x8192 + 3x8192x28672 + 2x8192
  EXPECT_EQ(count->largest_layer, 855654400.0);
  arch.attention_qkv_bias = true;
  arch.attention_output_bias = true;
  absl::StatusOr<ParameterCount> biased = CountParameterTotals(arch);
  ASSERT_TRUE(biased.ok());
  // q, k and v biases (8192 + 2 x 1024) and o's (8192).
  EXPECT_EQ(biased->largest_layer - count->largest_layer, 8192.0 + 2 * 1024 + 8192);
  Architecture alike = arch;
  alike.layer_mlp_widths.clear();
  EXPECT_EQ(CountParameterTotals(alike)->largest_layer, 0);
}

// Variants no published Super or Ultra uses, refused naming the key.
TEST(NemotronNasTest, BlocksThisReaderDoesNotCountAreRefusedByKey) {
  const std::string super = NemotronSuper49BConfigJson();
  auto refusal = [](const std::string& json) {
    absl::StatusOr<common::v1::Architecture> arch = ArchitectureFromHfConfig(json);
    return arch.ok() ? absl::OkStatus() : arch.status();
  };
  // Nemotron-51B's linear replacement of an attention.
  std::string linear = super;
  const std::string first_linear = R"("replace_with_linear": false)";
  linear.replace(linear.find(first_linear), first_linear.size(), R"("replace_with_linear": true)");
  absl::Status refused = refusal(linear);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      absl::StrContains(refused.ToString(), "block_configs[0].attention.replace_with_linear"))
      << refused;
  // Two layers' attention with other KV-head counts.
  std::string groups = super;
  const std::string second = R"("n_heads_in_group": 8)";
  const size_t at = groups.find(second, groups.find(second) + 1);
  groups.replace(at, second.size(), R"("n_heads_in_group": 4)");
  refused = refusal(groups);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(refused.ToString(), "block_configs[1].attention.n_heads_in_group"))
      << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "16 KV heads where earlier layers have 8"))
      << refused;
  // Fewer blocks than layers.
  refused = refusal(
      absl::StrReplaceAll(super, {{R"("num_hidden_layers": 80)", R"("num_hidden_layers": 81)"}}));
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(refused.message(), "num_hidden_layers (81)")) << refused;
}

// An inline architecture whose widths do not match its layers, or whose
// intermediate_size is below its widest layer's, is refused by field.
TEST(NemotronNasTest, LayerWidthsMustMatchTheLayers) {
  common::v1::Architecture arch;
  auto read = ArchitectureFromHfConfig(NemotronSuper49BConfigJson());
  ASSERT_TRUE(read.ok());
  arch = *read;
  arch.add_layer_intermediate_sizes(1024);  // 81 widths, 80 layers
  absl::StatusOr<ParameterCount> count = CountParameters(ToCoreArchitecture(arch));
  EXPECT_EQ(count.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(count.status().ToString(), "architecture.layer_intermediate_sizes"))
      << count.status();
  arch = *read;
  arch.set_intermediate_size(14336);
  count = CountParameters(ToCoreArchitecture(arch));
  EXPECT_EQ(count.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(count.status().ToString(), "architecture.intermediate_size"))
      << count.status();
  arch = *read;
  arch.set_layer_intermediate_sizes(3, -1);
  const absl::Status invalid = ValidateArchitecture(arch, "model.architecture");
  EXPECT_EQ(invalid.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      absl::StrContains(invalid.ToString(), "model.architecture.layer_intermediate_sizes[3]"))
      << invalid;
}

}  // namespace
}  // namespace modelatlas::estimator
