// Every open-weight model the catalog ships: its recorded parameter count is
// the checkpoint's published count (architecture.published_parameter_count,
// whose source the record's parameters_notes names) and is reproduced exactly
// from its architecture; it agrees with the exact counts in
// ../shared/data/model_catalogs/llmfit_hf_models.json wherever both have it.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>

#include "catalog-service/dataset.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/core/parameters.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "tests/testing/shared_data.h"

namespace modelatlas::estimator {
namespace {

std::vector<common::v1::Model> OpenWeightModels() {
  std::vector<common::v1::Model> out;
  const auto dataset = catalog::ShippedDataset();
  EXPECT_TRUE(dataset.ok()) << dataset.status();
  if (!dataset.ok()) return out;
  for (const auto& model : dataset->models()) {
    if (model.has_architecture()) out.push_back(model);
  }
  return out;
}

// Issue 18, point 5: at least 150 open-weight models with their architecture.
TEST(ShippedModelsTest, AtLeastOneHundredFiftyOpenWeightModelsWithArchitecture) {
  EXPECT_GE(OpenWeightModels().size(), 150u);
}

// Records without a published exact count, each with the reason in its
// parameters_notes: DeepSeek-V3 carries the reported "671B" because its
// checkpoint's total (685B) includes the multi-token-prediction module and
// FP8 scales; the count from config.json is 671,026,419,200 (accuracy_test).
// DeepSeek-R1, R1-0528, R1-Zero, V3-0324, V3.1, V3.1-Terminus and
// Prover-V2-671B share its architecture and carry the same figure.
// Kimi K2 and K2 Thinking carry Moonshot AI's "1T": their config.json gives
// 1,026,408,232,448 (accuracy_test), 2.6% above. MAI-DS-R1 (DeepSeek-R1
// post-trained by Microsoft) carries the reported 671B, as DeepSeek-R1.
// Jamba (v0.1) carries Epoch AI's 51.6B (the paper, arXiv:2403.19887
// section 3.1: "52B total available"): its config.json gives 51,570,323,328
// (hybrid_models_test), 0.06% below.
// OPT (1.3B to 175B) carries Epoch AI's rounded figures (the OPT paper's
// model names, arXiv:2205.01068 Table 1): OPT-125m's blocks, which
// accuracy_test reproduces exactly, give 1,315,758,080 to 174,604,468,224,
// within 1.8% of them. BLOOM-7.1B carries Epoch AI's 7.07B: the blocks of
// the four BLOOM sizes accuracy_test reproduces exactly give 7,069,016,064.
// DeepSeek-V3.2-Exp carries Epoch AI's 671B, V3's: its lightning indexer
// adds 13,959,424 parameters a layer, 671,877,944,064 in all (+0.13%).
// GPT-J-6B carries the model card's 6,053,381,344 (the JAX model's); the
// transformers model has 6,050,882,784 (-0.04%). StarCoder carries the
// paper's 15.5B; SantaCoder's blocks at its size give 15,517,456,384.
// Each with the tolerance of its reported figure and the count its
// config.json gives (accuracy_test, hybrid_models_test), which the record's
// architecture must reproduce exactly.
struct Reported {
  double tolerance;
  double config_count;
};
constexpr double kDeepSeekV3Count = 671026419200;
const std::map<std::string, Reported> kReportedNotExact = {
    {"models/deepseek-v3", {1e-4, kDeepSeekV3Count}},
    {"models/deepseek-r1", {1e-4, kDeepSeekV3Count}},
    {"models/deepseek-r1-may-2025", {1e-4, kDeepSeekV3Count}},
    {"models/deepseek-r1-zero", {1e-4, kDeepSeekV3Count}},
    {"models/deepseek-v3-mar-2025", {1e-4, kDeepSeekV3Count}},
    {"models/deepseek-v3-1", {1e-4, kDeepSeekV3Count}},
    {"models/deepseek-v3-1-terminus", {1e-4, kDeepSeekV3Count}},
    {"models/deepseek-prover-v2-671b", {1e-4, kDeepSeekV3Count}},
    {"models/kimi-k2", {0.03, 1026408232448}},
    {"models/kimi-k2-thinking", {0.03, 1026408232448}},
    {"models/mai-ds-r1", {1e-4, kDeepSeekV3Count}},
    {"models/ernie-4-5-300b-a47b", {0.01, 299484163264}},
    {"models/jamba", {1e-3, 51570323328}},
    {"models/opt-1-3b", {0.02, 1315758080}},
    {"models/opt-2-7b", {0.02, 2651596800}},
    {"models/opt-6-7b", {0.02, 6658473984}},
    {"models/opt-13b", {0.02, 12853473280}},
    {"models/opt-30b", {0.02, 29974540288}},
    {"models/opt-66b", {0.02, 65719701504}},
    {"models/opt-175b", {0.02, 174604468224}},
    {"models/bloom-7-1b", {1e-3, 7069016064}},
    {"models/deepseek-v3-2-exp", {2e-3, 671877944064}},
    {"models/gpt-j-6b", {1e-3, 6050882784}},
    {"models/starcoder", {2e-3, 15517456384}},
    // Llama 3.2 90B Vision: no exact total published (Epoch AI 88.6B, Meta's
    // card 88.8B); its config.json gives 88,593,355,323 with the vision
    // encoder and projector (multimodal_test, Mllama90b...), and the same
    // counter reproduces the 11B's published total exactly.
    {"models/llama-3-2-90b", {1e-3, 88593355323}},
    // Llama-3.1-Nemotron-Ultra-253B: no exact total published; a llama.cpp
    // load log of its GGUF prints "model params = 253.401 B" (ik_llama.cpp
    // pull request #377), this count rounded (nemotron_nas_test).
    {"models/llama-nemotron-ultra-253b", {1e-3, 253401268224}}};

TEST(ShippedModelsTest, EveryArchitectureReproducesItsPublishedCount) {
  int checked = 0;
  for (const auto& model : OpenWeightModels()) {
    const Architecture arch = ToCoreArchitecture(model.architecture());
    auto count = CountParameters(arch);
    ASSERT_TRUE(count.ok()) << model.name() << ": " << count.status();
    EXPECT_LE(count->active, count->total) << model.name();
    if (arch.IsMoe()) {
      EXPECT_LT(count->active, count->total) << model.name();
    } else {
      EXPECT_EQ(count->active, count->total) << model.name();
    }
    auto reported = kReportedNotExact.find(model.name());
    if (reported != kReportedNotExact.end()) {
      EXPECT_FALSE(model.architecture().has_published_parameter_count()) << model.name();
      // A multimodal model's figure holds its encoders and projector.
      const double whole = count->total + EncoderPartsParameters(model.architecture());
      EXPECT_NEAR(whole / model.parameters(), 1.0, reported->second.tolerance) << model.name();
      EXPECT_EQ(whole, reported->second.config_count) << model.name();
      continue;
    }
    ASSERT_TRUE(model.architecture().has_published_parameter_count())
        << model.name() << ": an architecture without its published count";
    const double published = static_cast<double>(model.architecture().published_parameter_count());
    // A record's architecture has a multi-token-prediction module where its
    // checkpoint stores one beside the model (Qwen3-Next and GLM-4.6 using
    // the model's embedding and head, GLM-4.5 with its own copies): the
    // published count holds it. DeepSeek-V3's records carry no module.
    const double mtp = arch.num_mtp_layers > 0 ? count->multi_token_prediction : 0;
    // A multimodal checkpoint (Gemma 3) holds its vision encoder and
    // projector beside the language model, counted on their own.
    const double encoders = EncoderPartsParameters(model.architecture());
    EXPECT_EQ(count->total + encoders + mtp, published) << model.name();
    EXPECT_EQ(count->total + encoders, model.parameters()) << model.name();
    // Each record names where its published count comes from.
    EXPECT_NE(model.parameters_notes().find("reproduced exactly from the architecture"),
              std::string::npos)
        << model.name();
    ++checked;
  }
  EXPECT_GE(checked, 150);
}

// Active (per-token) counts of the shipped mixture-of-experts records
// against the figures their makers publish, which are rounded (the error
// of each is in docs/ACCURACY.md). OpenAI's figures leave the input
// embedding out (it is a lookup, not a matrix product); Zhipu's the
// embedding and the output head; the others count every parameter a token
// touches. All count the language model's: a vision encoder and projector
// (Llama 4's) run once per image, not per token, and are left out.
enum Leaves { kNothingOut, kInputEmbeddingOut, kEmbeddingAndHeadOut };
struct PublishedActive {
  const char* name;
  double active;
  Leaves excluded;
  const char* source;
};
const PublishedActive kPublishedActive[] = {
    {"models/mixtral-8x7b-v0-1", 12.9e9, kNothingOut,
     "mistral.ai/news/mixtral-of-experts: 12.9B parameters per token"},
    {"models/mixtral-8x22b-v0-1", 39e9, kNothingOut,
     "mistral.ai/news/mixtral-8x22b: 39B active parameters out of 141B"},
    {"models/qwen1-5-moe-a2-7b", 2.7e9, kNothingOut,
     "Qwen/Qwen1.5-MoE-A2.7B model card: 2.7B activated"},
    {"models/qwen3-30b-a3b", 3.3e9, kNothingOut, "Qwen/Qwen3-30B-A3B model card: 3.3B activated"},
    {"models/qwen3-235b-a22b", 22e9, kNothingOut, "Qwen/Qwen3-235B-A22B model card: 22B activated"},
    {"models/qwen3-coder-480b-a35b-instruct", 35e9, kNothingOut,
     "Qwen/Qwen3-Coder-480B-A35B-Instruct model card: 35B activated"},
    {"models/deepseek-moe-16b-base", 2.8e9, kNothingOut,
     "arXiv:2401.06066 (DeepSeekMoE): 16.4B total, 2.8B activated"},
    {"models/deepseek-v2-5", 21e9, kNothingOut,
     "arXiv:2405.04434 (DeepSeek-V2): 236B total, 21B activated"},
    {"models/deepseek-v3", 37e9, kNothingOut, "arXiv:2412.19437: 671B total, 37B activated"},
    {"models/deepseek-r1", 37e9, kNothingOut,
     "deepseek-ai/DeepSeek-R1 model card: 671B total, 37B activated"},
    {"models/olmoe-1b-7b-0125", 1.3e9, kNothingOut,
     "arXiv:2409.02060 (OLMoE): 1.3B active, 6.9B total"},
    {"models/phi-3-5-moe", 6.6e9, kNothingOut,
     "microsoft/Phi-3.5-MoE-instruct model card: 6.6B active parameters when using 2 experts"},
    {"models/gpt-oss-20b", 3.61e9, kInputEmbeddingOut,
     "OpenAI gpt-oss model card, Table 1: 3.61B active"},
    {"models/gpt-oss-120b", 5.13e9, kInputEmbeddingOut,
     "OpenAI gpt-oss model card, Table 1: 5.13B active"},
    {"models/glm-4-5", 32e9, kEmbeddingAndHeadOut,
     "zai-org/GLM-4.5 model card: 355B total, 32B active (without embedding and head)"},
    {"models/glm-4-5-air", 12e9, kEmbeddingAndHeadOut,
     "zai-org/GLM-4.5 model card: GLM-4.5-Air 106B total, 12B active"},
    {"models/llama-4-scout", 17e9, kNothingOut,
     "meta-llama/Llama-4-Scout-17B-16E-Instruct model card: 17B activated, 109B total"},
    {"models/llama-4-maverick", 17e9, kNothingOut,
     "meta-llama/Llama-4-Maverick-17B-128E-Instruct model card: 17B activated, 400B total"},
};

TEST(ShippedModelsTest, ActiveCountsAgreeWithThePublishedFigures) {
  std::map<std::string, common::v1::Model> by_name;
  for (const auto& model : OpenWeightModels()) by_name[model.name()] = model;
  for (const PublishedActive& row : kPublishedActive) {
    SCOPED_TRACE(row.source);
    auto it = by_name.find(row.name);
    ASSERT_NE(it, by_name.end()) << row.name;
    const Architecture arch = ToCoreArchitecture(it->second.architecture());
    auto count = CountParameters(arch);
    ASSERT_TRUE(count.ok()) << row.name << ": " << count.status();
    const double input_embedding =
        static_cast<double>(arch.vocab_size) * static_cast<double>(arch.hidden_size);
    const double left_out = row.excluded == kInputEmbeddingOut ? input_embedding
                            : row.excluded == kEmbeddingAndHeadOut
                                ? input_embedding * (arch.tie_word_embeddings ? 1 : 2)
                                : 0;
    double encoders = 0;
    for (const auto& part : count->components) {
      if (part.name == "vision_encoder" || part.name == "audio_encoder" ||
          part.name == "projector") {
        encoders += part.parameters;
      }
    }
    const double ours = count->active - left_out - encoders;
    // The published figures carry two or three significant digits; 2% is
    // wider than any rounding here and far narrower than counting every
    // expert (several times the active count) or none.
    EXPECT_NEAR(ours / row.active, 1.0, 0.02) << row.name << ": ours " << ours;
  }
}

// llmfit counts the tensors of each checkpoint, so it also counts what a
// checkpoint stores beside the parameters: a copy of a tied output head
// (Qwen3-0.6B saves lm_head.weight although tie_word_embeddings is true),
// rotary inv_freq buffers (the Llama-2-7b-hf checkpoint: 64 per layer x 32)
// and causal masks (Pythia's GPT-NeoX layers).
// Some of its entries are rounded (14770000000); only exact ones are compared.
TEST(ShippedModelsTest, AgreeWithLlmfitsExactCounts) {
  REQUIRE_SHARED_DATA(path, "model_catalogs/llmfit_hf_models.json");
  const std::string text = "{\"values\":" + testing::ReadFile(path) + "}";
  google::protobuf::Struct wrapper;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(text, &wrapper).ok());
  std::map<std::string, double> exact;
  for (const auto& entry : wrapper.fields().at("values").list_value().values()) {
    const auto& fields = entry.struct_value().fields();
    if (fields.count("name") && fields.count("parameters_raw")) {
      exact[fields.at("name").string_value()] = fields.at("parameters_raw").number_value();
    }
  }
  // gpt-oss-120b's experts are stored in MXFP4: llmfit also counts the
  // block scales, one per 32 expert weights (128 experts x 36 layers x
  // (2880 x 5760 + 2880 x 2880) weights / 32).
  // GPT-NeoX checkpoints (Pythia) store each layer's 2048 x 2048 causal
  // mask and the inv_freq of their rotary quarter of each head.
  const auto neox_buffers = [](int layers, int head_dim) {
    return layers * (2048.0 * 2048 + head_dim / 4 / 2);
  };
  constexpr double kMiniMaxM2BlockScales = 62.0 * (2 * 1152 + 2 * 192 + 256 * (2 * 288 + 288));
  const std::map<std::string, double> stored_beside_parameters = {
      {"Qwen/Qwen3-0.6B", 151936.0 * 1024},
      {"meta-llama/Llama-2-7b-hf", 64.0 * 32},
      {"huggyllama/llama-7b", 64.0 * 32},
      {"EleutherAI/pythia-410m", neox_buffers(24, 64)},
      {"EleutherAI/pythia-1b", neox_buffers(16, 256)},
      {"EleutherAI/pythia-1.4b", neox_buffers(24, 128)},
      {"EleutherAI/pythia-2.8b", neox_buffers(32, 80)},
      {"EleutherAI/pythia-6.9b", neox_buffers(32, 128)},
      {"openai/gpt-oss-120b", 128.0 * 36 * (2880.0 * 5760 + 2880.0 * 2880) / 32},
      // MiniMax-M2's FP8 matrices: one F32 scale per 128 x 128 block
      // (AccuracyParametersTest.MiniMaxM2IsCountedExactlyBesideItsFp8BlockScales).
      // GPT-Neo checkpoints store the 2048 x 2048 causal mask of each
      // local-attention layer (every other layer).
      {"EleutherAI/gpt-neo-125m", 6 * 2048.0 * 2048},
      {"EleutherAI/gpt-neo-1.3B", 12 * 2048.0 * 2048},
      {"EleutherAI/gpt-neo-2.7B", 16 * 2048.0 * 2048},
      {"MiniMaxAI/MiniMax-M2", kMiniMaxM2BlockScales},
      // MiMo-V2-Flash's FP8 q/k/v, dense MLPs and experts, main and MTP
      // layers (AccuracyParametersTest.MiMoV2FlashIsCountedExactlyWithItsMtpLayersAndBlockScales).
      {"XiaomiMiMo/MiMo-V2-Flash", 18717312},
      {"MiniMaxAI/MiniMax-M2.1", kMiniMaxM2BlockScales}};
  // llmfit entries that are not the checkpoint's count: Ministral-8B-Instruct-2410
  // is listed with 8,030,261,248 (Llama 3 8B's count); the Hub API gives
  // 8,019,808,256, which its config.json reproduces.
  // Llama-3.2-11B-Vision-Instruct is listed with 10,665,463,808, 4,757,027
  // under the 10,670,220,835 of NVIDIA's model page and of the safetensors
  // total floschne/gimmick lists (an entry with no download figures, not
  // from the Hub's metadata; the difference is not explained).
  const std::set<std::string> llmfit_wrong = {"mistralai/Ministral-8B-Instruct-2410",
                                              "meta-llama/Llama-3.2-11B-Vision-Instruct"};
  int compared = 0;
  for (const auto& model : OpenWeightModels()) {
    // The architecture's source is https://huggingface.co/{repo}/blob/{revision}/config.json.
    const std::string& source = model.architecture().source();
    const std::string prefix = "https://huggingface.co/";
    const size_t end = source.find("/blob/");
    if (source.rfind(prefix, 0) != 0 || end == std::string::npos) continue;
    const std::string repo = source.substr(prefix.size(), end - prefix.size());
    if (llmfit_wrong.count(repo)) continue;
    // A reported figure is not the checkpoint's count (DeepSeek-R1-0528's
    // 684,531,386,000 holds the MTP module and FP8 scales beside the 671B;
    // accuracy_test reproduces that total from the architecture).
    if (kReportedNotExact.count(model.name())) continue;
    auto it = exact.find(repo);
    if (it == exact.end() || std::fmod(it->second, 1e6) == 0) continue;  // absent or rounded
    double extra = stored_beside_parameters.count(repo) ? stored_beside_parameters.at(repo) : 0;
    // The multi-token-prediction module a checkpoint stores beside the model.
    if (model.architecture().num_mtp_layers() > 0) {
      auto count = CountParameterTotals(ToCoreArchitecture(model.architecture()));
      ASSERT_TRUE(count.ok()) << repo;
      extra += count->multi_token_prediction;
    }
    EXPECT_EQ(model.parameters() + extra, it->second) << repo;
    ++compared;
  }
  EXPECT_GE(compared, 80) << "too few shipped models found in llmfit's list";
}

}  // namespace
}  // namespace modelatlas::estimator
