// Training memory against published figures, each with its source.
#include "estimator-service/core/training_memory.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/match.h"
#include "common/formats/hf_config.h"
#include "common/status/errors.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/training.h"
#include "estimator-service/core/parameters.h"

namespace modelatlas::estimator {
namespace {

constexpr double kGiB = 1073741824.0;

double Line(const TrainingMemory& memory, const std::string& component) {
  for (const auto& line : memory.device_lines) {
    if (line.component == component) return line.bytes;
  }
  for (const auto& line : memory.host_lines) {
    if (line.component == component) return line.bytes;
  }
  return -1;
}

// Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training
// Trillion Parameter Models", figure 1: a 7.5B-parameter model, Adam in mixed
// precision (K = 12), data-parallel degree 64: 120 GB per device without
// ZeRO, 31.4 GB with optimizer states partitioned, 16.6 GB with gradients as
// well, 1.9 GB with parameters as well (GB = 1e9 bytes).
TEST(TrainingMemoryTest, ZeroPaperFigureOne) {
  TrainingMemoryInput input;
  input.parameters = 7.5e9;
  input.data_parallel = 64;
  const double published[] = {120e9, 31.4e9, 16.6e9, 1.9e9};
  for (int stage = 0; stage <= 3; ++stage) {
    input.zero_stage = stage;
    auto memory = EstimateTrainingMemory(input);
    ASSERT_TRUE(memory.ok()) << memory.status();
    // The paper prints one decimal.
    EXPECT_NEAR(memory->device_bytes, published[stage], 0.05e9) << "stage " << stage;
  }
}

// DeepSpeed's memory-requirements documentation
// (https://deepspeed.readthedocs.io/en/latest/memory.html), output of
// estimate_zero3_model_states_mem_needs_all_live for bigscience/T0_3B on
// 1 node x 1 GPU, "Model with 2783M total params, 65M largest layer params",
// per CPU / per GPU in GiB (DeepSpeed divides by 2^30 and prints "GB"):
//   70.00 / 0.25 offload param and optimizer; 62.23 / 5.43 offload optimizer;
//   0.37 / 46.91 no offload, zero_init=1; 15.56 / 46.91 no offload, zero_init=0.
// The inputs are printed rounded to 1M, so the figures agree to 1%.
TEST(TrainingMemoryTest, DeepSpeedZero3DocumentationTable) {
  const double total = 2783e6, largest = 65e6;
  struct Row {
    bool offload_optimizer, offload_parameters, zero_init;
    double cpu_gib, gpu_gib;
  } rows[] = {{true, true, true, 70.00, 0.25},
              {true, false, true, 62.23, 5.43},
              {false, false, true, 0.37, 46.91},
              {false, false, false, 15.56, 46.91}};
  for (const Row& row : rows) {
    DeepSpeedEstimate e = DeepSpeedZero3ModelStates(total, largest, 1, 1, row.offload_optimizer,
                                                    row.offload_parameters, row.zero_init);
    EXPECT_NEAR(e.cpu_bytes / kGiB, row.cpu_gib, row.cpu_gib * 0.01 + 0.005);
    EXPECT_NEAR(e.gpu_bytes / kGiB, row.gpu_gib, row.gpu_gib * 0.01 + 0.01);
  }
}

// The same estimator's output for t5-small (60,506,624 parameters, largest
// layer the 32,128 x 512 shared embedding), as printed in
// https://blog.csdn.net/u012327567/article/details/132278598 :
//   1.52 / 0.06, 1.35 / 0.17, 0.09 / 1.08 (zero_init=1), 0.34 / 1.08 (zero_init=0).
// Exact inputs: the printed two decimals must match.
TEST(TrainingMemoryTest, DeepSpeedZero3T5Small) {
  const double total = 60506624, largest = 32128.0 * 512;
  auto check = [&](bool opt, bool params, bool init, double cpu, double gpu) {
    DeepSpeedEstimate e = DeepSpeedZero3ModelStates(total, largest, 1, 1, opt, params, init);
    EXPECT_NEAR(e.cpu_bytes / kGiB, cpu, 0.005 + 1e-9);
    EXPECT_NEAR(e.gpu_bytes / kGiB, gpu, 0.005 + 1e-9);
  };
  check(true, true, true, 1.52, 0.06);
  check(true, false, true, 1.35, 0.17);
  check(false, false, true, 0.09, 1.08);
  check(false, false, false, 0.34, 1.08);
}

// Megatron-LM, megatron/training/theoretical_memory_usage.py: weights and
// optimizer take 18 bytes per parameter (bf16 weight 2 + fp32 gradient 4 +
// fp32 weight and Adam moments 12), or 6 + 12 / DP with the distributed
// optimizer (optimizer states sharded over the data-parallel group: ZeRO-1).
TEST(TrainingMemoryTest, MegatronBytesPerParameter) {
  TrainingMemoryInput input;
  input.parameters = 1e9;
  input.fp32_gradients = true;
  input.data_parallel = 8;
  EXPECT_DOUBLE_EQ(EstimateTrainingMemory(input)->device_bytes, 18e9);
  input.zero_stage = 1;
  EXPECT_DOUBLE_EQ(EstimateTrainingMemory(input)->device_bytes, (6 + 12.0 / 8) * 1e9);
  // Tensor and pipeline parallelism divide the parameters each device holds.
  input.tensor_parallel = 4;
  input.pipeline_parallel = 2;
  EXPECT_DOUBLE_EQ(EstimateTrainingMemory(input)->device_bytes, (6 + 12.0 / 8) * 1e9 / 8);
}

// EleutherAI, "Transformer Math 101" (2023): optimizer bytes per parameter:
// AdamW 12 (fp32 copy, momentum, variance), 8-bit optimizers 6 (fp32 copy and
// two 1-byte states), SGD with momentum 8; gradients 2 in half precision;
// model weights 2 in mixed precision.
TEST(TrainingMemoryTest, TransformerMathOptimizerBytes) {
  EXPECT_EQ(OptimizerBytesPerParameter(Optimizer::kAdamW), 12);
  EXPECT_EQ(OptimizerBytesPerParameter(Optimizer::kAdamW8Bit), 6);
  EXPECT_EQ(OptimizerBytesPerParameter(Optimizer::kSgdMomentum), 8);
  TrainingMemoryInput input;
  input.parameters = 7e9;
  input.optimizer = Optimizer::kAdamW8Bit;
  auto memory = EstimateTrainingMemory(input);
  ASSERT_TRUE(memory.ok());
  EXPECT_DOUBLE_EQ(Line(*memory, "weights"), 14e9);
  EXPECT_DOUBLE_EQ(Line(*memory, "gradients"), 14e9);
  EXPECT_DOUBLE_EQ(Line(*memory, "optimizer_states"), 42e9);
}

// Korthikanti et al. 2022, table 2, for GPT-3 175B (s = 2048, b = 1,
// h = 12288, a = 96, t = 8): per layer sbh(10 + 24/t + 5as/(ht)) = 23 sbh
// with tensor parallelism; 34/t sbh with sequence parallelism and selective
// recomputation, "a 5x reduction" (section 5: 23 / 4.25 = 5.4).
TEST(TrainingMemoryTest, KorthikantiActivationsPerLayer) {
  const double sbh = 2048.0 * 12288;
  EXPECT_DOUBLE_EQ(ActivationBytesPerLayer(2048, 1, 12288, 96, 8, false, Recompute::kNone).value,
                   23 * sbh);
  EXPECT_DOUBLE_EQ(ActivationBytesPerLayer(2048, 1, 12288, 96, 8, true, Recompute::kNone).value,
                   (34.0 / 8 + 10) * sbh);
  const double selective =
      ActivationBytesPerLayer(2048, 1, 12288, 96, 8, true, Recompute::kSelective).value;
  EXPECT_DOUBLE_EQ(selective, 34.0 / 8 * sbh);
  EXPECT_GT(23 * sbh / selective, 5);
  // Without parallelism: sbh(34 + 5as/h); full recomputation keeps 2sbh.
  EXPECT_DOUBLE_EQ(ActivationBytesPerLayer(2048, 1, 12288, 96, 1, false, Recompute::kNone).value,
                   sbh * (34 + 5.0 * 96 * 2048 / 12288));
  EXPECT_DOUBLE_EQ(ActivationBytesPerLayer(2048, 1, 12288, 96, 1, false, Recompute::kFull).value,
                   2 * sbh);
}

// Issue 17, point 5: measured Llama-3.1-8B at 32k tokens (micro-batch 1,
// one GPU): 15.7 GiB of fp32 logits, 31 GiB with activation checkpointing.
// Full recomputation counted only the layer inputs (32 x 2sbh = 8 GiB:
// 23.7 GiB with the logits, -24%); the layer being recomputed holds its own
// activations too (34 sbh = 4.25 GiB): 27.9 GiB, -10%.
TEST(TrainingMemoryTest, FullRecomputationHoldsTheLayerBeingRecomputed) {
  TrainingMemoryInput input;
  input.parameters = 8030261248;
  input.architecture = Architecture{.num_layers = 32,
                                    .hidden_size = 4096,
                                    .num_attention_heads = 32,
                                    .num_key_value_heads = 8,
                                    .head_dim = 128,
                                    .intermediate_size = 14336,
                                    .gated_mlp = true,
                                    .vocab_size = 128256};
  input.sequence_length = 32768;
  input.recompute = Recompute::kFull;
  auto memory = EstimateTrainingMemory(input);
  ASSERT_TRUE(memory.ok()) << memory.status();
  const double sbh = 32768.0 * 4096;
  EXPECT_DOUBLE_EQ(Line(*memory, "activations"), 32 * 2 * sbh);
  EXPECT_DOUBLE_EQ(Line(*memory, "recomputed_layer"), 34 * sbh);
  EXPECT_DOUBLE_EQ(Line(*memory, "logits"), 4.0 * 32768 * 128256);
  const double total =
      Line(*memory, "activations") + Line(*memory, "recomputed_layer") + Line(*memory, "logits");
  EXPECT_NEAR(total / kGiB, 27.9, 0.05);
  EXPECT_LT(std::abs(total / kGiB - 31) / 31, 0.11);  // measured 31 GiB
  // Without recomputation there is no such line.
  input.recompute = Recompute::kSelective;
  auto selective = EstimateTrainingMemory(input);
  ASSERT_TRUE(selective.ok());
  EXPECT_EQ(Line(*selective, "recomputed_layer"), -1);
}

TEST(TrainingMemoryTest, ActivationsAndLogitsForAWholeModel) {
  TrainingMemoryInput input;
  input.parameters = 8030261248;  // Llama 3 8B
  input.architecture = Architecture{.num_layers = 32,
                                    .hidden_size = 4096,
                                    .num_attention_heads = 32,
                                    .num_key_value_heads = 8,
                                    .head_dim = 128,
                                    .intermediate_size = 14336,
                                    .gated_mlp = true,
                                    .vocab_size = 128256};
  input.sequence_length = 8192;
  input.recompute = Recompute::kSelective;
  auto memory = EstimateTrainingMemory(input);
  ASSERT_TRUE(memory.ok()) << memory.status();
  EXPECT_DOUBLE_EQ(Line(*memory, "activations"), 32 * 34.0 * 8192 * 4096);
  EXPECT_DOUBLE_EQ(Line(*memory, "logits"), 4.0 * 8192 * 128256);
}

// Gemma 4 31B: PEFT adapts each layer's own projections, q 5376 -> 32 x 256
// in the 50 sliding layers and 32 x 512 in the 10 full-attention ones,
// whose values come from k_proj (no v_proj there to adapt).
TEST(TrainingMemoryTest, LoraAdaptsEachLayerKindsOwnProjections) {
  Architecture gemma4{.num_layers = 60,
                      .hidden_size = 5376,
                      .num_attention_heads = 32,
                      .num_key_value_heads = 16,
                      .head_dim = 256,
                      .intermediate_size = 21504,
                      .gated_mlp = true,
                      .vocab_size = 262144,
                      .sliding_window = 1024,
                      .num_sliding_window_layers = 50};
  gemma4.global_head_dim = 512;
  gemma4.num_global_key_value_heads = 4;
  gemma4.global_values_from_keys = true;
  auto adapters = LoraParameters(gemma4, 16, {"q", "v"});
  ASSERT_TRUE(adapters.ok()) << adapters.status();
  EXPECT_DOUBLE_EQ(adapters->value,
                   50 * 16.0 * ((5376 + 8192) + (5376 + 4096)) + 10 * 16.0 * (5376 + 16384));
  EXPECT_TRUE(absl::StrContains(adapters->arithmetic,
                                "10 full-attention layers x (q 16 x (5376 + "
                                "16384) + no v (values from the keys))"))
      << adapters->arithmetic;
}

// Hu et al. 2021 (LoRA) as PEFT prints it for Llama-2-7B with r = 8 on q and
// v: "trainable params: 4,194,304".
TEST(TrainingMemoryTest, LoraAdapterParametersAndQloraBaseWeights) {
  Architecture llama2_7b{.num_layers = 32,
                         .hidden_size = 4096,
                         .num_attention_heads = 32,
                         .num_key_value_heads = 32,
                         .head_dim = 128,
                         .intermediate_size = 11008,
                         .gated_mlp = true,
                         .vocab_size = 32000};
  auto adapters = LoraParameters(llama2_7b, 8, {"q", "v"});
  ASSERT_TRUE(adapters.ok()) << adapters.status();
  EXPECT_DOUBLE_EQ(adapters->value, 4194304);
  EXPECT_EQ(LoraParameters(llama2_7b, 8, {"attn"}).status().code(),
            absl::StatusCode::kInvalidArgument);

  TrainingMemoryInput input;
  input.parameters = 6738415616;
  input.fine_tuning = FineTuning::kQlora;
  input.lora_rank = 8;
  input.lora_parameters = adapters->value;
  auto memory = EstimateTrainingMemory(input);
  ASSERT_TRUE(memory.ok()) << memory.status();
  // NF4 with double quantization: 4.127 bits per frozen weight (QLoRA, section 3).
  EXPECT_DOUBLE_EQ(Line(*memory, "frozen_weights"), 6738415616 * 4.127 / 8);
  EXPECT_DOUBLE_EQ(Line(*memory, "optimizer_states"), 12 * 4194304.0);
  EXPECT_DOUBLE_EQ(Line(*memory, "gradients"), 2 * 4194304.0);
}

TEST(TrainingMemoryTest, OffloadMovesStatesToTheHost) {
  TrainingMemoryInput input;
  input.parameters = 1e9;
  input.zero_stage = 3;
  input.data_parallel = 4;
  input.offload_optimizer = true;
  input.offload_parameters = true;
  input.largest_layer_parameters = 1e8;
  auto memory = EstimateTrainingMemory(input);
  ASSERT_TRUE(memory.ok()) << memory.status();
  EXPECT_DOUBLE_EQ(memory->device_bytes, 4e8);  // the gathered largest layer only
  EXPECT_DOUBLE_EQ(memory->host_bytes, (2 + 2 + 12) * 1e9 / 4);
}

TEST(TrainingMemoryTest, ImpossibleSettingsNameTheField) {
  TrainingMemoryInput input;
  input.parameters = 1e9;
  input.zero_stage = 4;
  input.offload_parameters = true;
  input.architecture.num_attention_heads = 12;
  input.tensor_parallel = 8;
  auto memory = EstimateTrainingMemory(input);
  ASSERT_EQ(memory.status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<std::string> fields;
  for (const auto& v : GetFieldViolations(memory.status())) fields.push_back(v.field);
  EXPECT_EQ(fields,
            (std::vector<std::string>{"zero_stage", "offload_parameters", "tensor_parallel"}));
  input = {};
  input.parameters = std::nan("");
  EXPECT_FALSE(EstimateTrainingMemory(input).ok());
}

}  // namespace
}  // namespace modelatlas::estimator

namespace modelatlas::estimator {
namespace {

// DeepSpeed's own estimators, as its documentation prints them
// (deepspeedai/DeepSpeed docs/code-docs/source/memory.rst, "Memory
// Requirements"): t5-3b, 2851M parameters, 32M largest layer, 1 node of 8
// GPUs, per GPU in GiB (DeepSpeed divides by 2^30 and prints "GB"):
//   ZeRO-3, nothing offloaded 6.09; optimizer offloaded 0.78; parameters
//   and optimizer offloaded 0.12 (estimate_zero3_model_states_mem_needs_all_cold);
//   ZeRO-2, nothing offloaded 15.93; optimizer offloaded 5.31
//   (estimate_zero2_model_states_mem_needs_all_cold).
double ModelStates(const TrainingMemory& memory) {
  double bytes = 0;
  for (const auto& line : memory.device_lines) {
    if (line.component != "activations" && line.component != "logits" &&
        line.component != "loss_buffers" && line.component != "overhead") {
      bytes += line.bytes;
    }
  }
  return bytes;
}

TrainingMemoryInput DeepSpeedExample(int stage, bool offload_optimizer, bool offload_parameters) {
  TrainingMemoryInput input;
  input.parameters = 2851e6;
  input.largest_layer_parameters = 32e6;
  input.zero_stage = stage;
  input.data_parallel = 8;
  input.offload_optimizer = offload_optimizer;
  input.offload_parameters = offload_parameters;
  input.deepspeed_model_states = true;
  return input;
}

double Rounded(double bytes) { return std::round(bytes / kGiB * 100) / 100; }

TEST(DeepSpeedModelStatesTest, ReproducesDeepSpeedsPrintedEstimates) {
  struct Case {
    int stage;
    bool offload_optimizer, offload_parameters;
    double published_gib;
    double idealized_gib;  // the default count's figure, for docs/ACCURACY.md
  };
  for (const Case& c : {Case{3, false, false, 6.09, 5.43}, Case{3, true, false, 0.78, 1.45},
                        Case{3, true, true, 0.12, 0.12}, Case{2, false, false, 15.93, 9.96},
                        Case{2, true, false, 5.31, 5.97}}) {
    SCOPED_TRACE(::testing::Message()
                 << "ZeRO-" << c.stage << " offload optimizer " << c.offload_optimizer
                 << " parameters " << c.offload_parameters);
    auto memory = EstimateTrainingMemory(
        DeepSpeedExample(c.stage, c.offload_optimizer, c.offload_parameters));
    ASSERT_TRUE(memory.ok()) << memory.status();
    EXPECT_DOUBLE_EQ(Rounded(ModelStates(*memory)), c.published_gib);
    // The idealized count (the default) and its error against DeepSpeed
    // (issue 17: 5.43 and 1.45 GiB for the first two).
    TrainingMemoryInput idealized =
        DeepSpeedExample(c.stage, c.offload_optimizer, c.offload_parameters);
    idealized.deepspeed_model_states = false;
    auto ideal = EstimateTrainingMemory(idealized);
    ASSERT_TRUE(ideal.ok());
    EXPECT_DOUBLE_EQ(Rounded(ModelStates(*ideal)), c.idealized_gib);
    bool named = false;
    for (const auto& line : memory->device_lines) {
      named = named || line.arithmetic.find("DeepSpeed") != std::string::npos;
    }
    EXPECT_TRUE(named);
  }
  // Exact ZeRO-3 figure: 4 x 32e6 + 18 x 2851e6 / 8 bytes.
  auto zero3 = EstimateTrainingMemory(DeepSpeedExample(3, false, false));
  ASSERT_TRUE(zero3.ok());
  EXPECT_NEAR(ModelStates(*zero3), 4 * 32e6 + 18 * 2851e6 / 8, 1);
  // Offloaded states are on the host: DeepSpeed's CPU figure for the node
  // (63.72 "GB" with the optimizer offloaded) per GPU.
  auto offloaded = EstimateTrainingMemory(DeepSpeedExample(3, true, false));
  ASSERT_TRUE(offloaded.ok());
  EXPECT_NEAR(offloaded->host_bytes * 8 / kGiB, 63.72, 0.005);
}

// The same documentation's live-model run: AutoModel t5-3b (2851M, 32M
// largest layer), per GPU 6.10 / 0.79 / 0.12 "GB" (ZeRO-3), 15.93 / 5.31
// (ZeRO-2). The architecture from google-t5/t5-3b's config.json counts
// 2,851,598,336 parameters; its largest layer is the shared embedding,
// 32,128 x 1,024.
TEST(DeepSpeedModelStatesTest, ReproducesDeepSpeedsLiveT53bEstimates) {
  auto arch = ArchitectureFromHfConfig(R"({
    "model_type": "t5", "d_model": 1024, "d_kv": 128, "d_ff": 16384, "num_heads": 32,
    "num_layers": 24, "vocab_size": 32128, "feed_forward_proj": "relu",
    "relative_attention_num_buckets": 32, "n_positions": 512})");
  ASSERT_TRUE(arch.ok()) << arch.status();
  const Architecture shape = ToCoreArchitecture(*arch);
  auto count = CountParameters(shape);
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count->total, 2851598336);
  struct Case {
    int stage;
    bool offload_optimizer, offload_parameters;
    double published_gib;
  };
  for (const Case& c :
       {Case{3, false, false, 6.10}, Case{3, true, false, 0.79}, Case{3, true, true, 0.12},
        Case{2, false, false, 15.93}, Case{2, true, false, 5.31}}) {
    TrainingMemoryInput input =
        DeepSpeedExample(c.stage, c.offload_optimizer, c.offload_parameters);
    input.parameters = count->total;
    input.largest_layer_parameters = 0;  // vocab x hidden
    input.architecture = shape;
    auto memory = EstimateTrainingMemory(input);
    ASSERT_TRUE(memory.ok()) << memory.status();
    EXPECT_DOUBLE_EQ(Rounded(ModelStates(*memory)), c.published_gib) << "ZeRO-" << c.stage;
  }
}

// Through the answer: the setting reaches the core, the answer names
// DeepSpeed, and a setup it does not cover is refused naming the field.
TEST(DeepSpeedModelStatesTest, TheAnswerNamesDeepSpeedAndRefusesByField) {
  common::v1::Model model;
  model.set_display_name("inline t5-3b");
  model.set_parameters(2851598336);
  auto arch = ArchitectureFromHfConfig(R"({
    "model_type": "t5", "d_model": 1024, "d_kv": 128, "d_ff": 16384, "num_heads": 32,
    "num_layers": 24, "vocab_size": 32128, "feed_forward_proj": "relu"})");
  ASSERT_TRUE(arch.ok());
  *model.mutable_architecture() = *arch;
  v1::TrainingSettings settings;
  settings.set_zero_stage(3);
  settings.set_data_parallel(8);
  settings.set_deepspeed_model_states(true);
  auto answer = EstimateTrainingMemoryFor(model, settings);
  ASSERT_TRUE(answer.ok()) << answer.status();
  int64_t states = 0;
  for (const auto& line : answer->device_lines()) {
    if (line.component() == "weights" || line.component() == "gradients_and_optimizer_states" ||
        line.component() == "zero3_gathered_layer") {
      states += line.bytes();
      EXPECT_NE(line.arithmetic().find("DeepSpeed"), std::string::npos) << line.arithmetic();
    }
  }
  EXPECT_DOUBLE_EQ(Rounded(static_cast<double>(states)), 6.10);
  bool noted = false;
  for (const std::string& note : answer->notes())
    noted = noted || note.find("DeepSpeed") == 0 ||
            note.find("as DeepSpeed allocates") != std::string::npos;
  EXPECT_TRUE(noted);

  settings.set_zero_stage(1);
  auto refused = EstimateTrainingMemoryFor(model, settings);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  const std::vector<FieldViolation> violations = GetFieldViolations(refused.status());
  ASSERT_FALSE(violations.empty()) << refused.status();
  EXPECT_EQ(violations[0].field, "settings.deepspeed_model_states");
}

TEST(DeepSpeedModelStatesTest, SetupsDeepSpeedDoesNotEstimateAreRefusedByName) {
  for (int stage : {0, 1}) {
    auto memory = EstimateTrainingMemory(DeepSpeedExample(stage, false, false));
    EXPECT_EQ(memory.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(memory.status().message().find("deepspeed_model_states"), std::string::npos)
        << memory.status();
  }
  TrainingMemoryInput sgd = DeepSpeedExample(3, false, false);
  sgd.optimizer = Optimizer::kSgdMomentum;
  EXPECT_EQ(EstimateTrainingMemory(sgd).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace modelatlas::estimator

namespace modelatlas::estimator {
namespace {

constexpr double kGiBytes = 1073741824.0;

double LineOf(const TrainingMemory& memory, const std::string& component) {
  for (const auto& line : memory.device_lines) {
    if (line.component == component) return line.bytes;
  }
  return -1;
}

double StatesOf(const TrainingMemory& memory) {
  double bytes = 0;
  for (const auto& line : memory.device_lines) {
    if (line.component != "activations" && line.component != "logits" &&
        line.component != "loss_buffers" && line.component != "overhead" &&
        line.component != "recomputed_layer") {
      bytes += line.bytes;
    }
  }
  return bytes;
}

Architecture Llama31_8B() {
  // meta-llama/Llama-3.1-8B config.json.
  return Architecture{.num_layers = 32,
                      .hidden_size = 4096,
                      .num_attention_heads = 32,
                      .num_key_value_heads = 8,
                      .head_dim = 128,
                      .intermediate_size = 14336,
                      .gated_mlp = true,
                      .vocab_size = 128256};
}

// Megatron-LM's bytes per parameter, as its docs state them
// (NVIDIA/Megatron-LM docs/source/api-guide/dist_optimizer.md, the "bf16
// param, fp32 grads" row: 18 without the distributed optimizer, 6 + 12/d
// with it; the same in megatron/training/theoretical_memory_usage.py
// compute_weight_and_optimizer_memory).
TEST(FrameworkAllocationTest, MegatronBytesPerParameterAsItsDocsState) {
  TrainingMemoryInput input;
  input.parameters = 1e9;
  input.data_parallel = 8;
  input.framework = Framework::kMegatron;
  auto plain = EstimateTrainingMemory(input);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_DOUBLE_EQ(StatesOf(*plain) / input.parameters, 18);
  EXPECT_EQ(plain->framework, Framework::kMegatron);
  EXPECT_NE(plain->allocation.find("Megatron-LM"), std::string::npos) << plain->allocation;
  input.zero_stage = 1;
  auto distributed = EstimateTrainingMemory(input);
  ASSERT_TRUE(distributed.ok()) << distributed.status();
  EXPECT_DOUBLE_EQ(StatesOf(*distributed) / input.parameters, 6 + 12.0 / 8);
  EXPECT_NE(distributed->allocation.find("distributed optimizer"), std::string::npos);
  // Megatron shards no more than the optimizer states.
  input.zero_stage = 3;
  auto refused = EstimateTrainingMemory(input);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GetFieldViolations(refused.status())[0].field, "zero_stage");
}

// PyTorch FSDP with bf16 mixed precision over fp32 parameters: 16 bytes
// per parameter sharded (fp32 parameter 4, fp32 gradient 4, Adam 8) under
// FULL_SHARD, plus the gathered unit (bf16 parameters and gradients) and the
// prefetched one; SHARD_GRAD_OP keeps the bf16 parameters whole; NO_SHARD
// keeps all 16 whole. No published per-GPU figure to compare with: the
// mechanism is torch.distributed.fsdp's (MixedPrecision, ShardingStrategy).
TEST(FrameworkAllocationTest, FsdpShardingStrategies) {
  TrainingMemoryInput input;
  input.parameters = 1e9;
  input.largest_layer_parameters = 1e8;
  input.data_parallel = 8;
  input.framework = Framework::kFsdp;
  input.zero_stage = 3;
  auto full = EstimateTrainingMemory(input);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_DOUBLE_EQ(StatesOf(*full), 16e9 / 8 + 6 * 1e8);
  EXPECT_NE(full->allocation.find("FULL_SHARD"), std::string::npos) << full->allocation;
  input.zero_stage = 2;
  auto grad_op = EstimateTrainingMemory(input);
  ASSERT_TRUE(grad_op.ok()) << grad_op.status();
  EXPECT_DOUBLE_EQ(StatesOf(*grad_op), 16e9 / 8 + 2e9 + 2 * 1e8);
  input.zero_stage = 0;
  auto none = EstimateTrainingMemory(input);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_DOUBLE_EQ(StatesOf(*none), 16e9 + 4 * 1e8);
  EXPECT_NE(none->allocation.find("NO_SHARD"), std::string::npos);
  input.zero_stage = 1;
  EXPECT_EQ(GetFieldViolations(EstimateTrainingMemory(input).status())[0].field, "zero_stage");
  input.zero_stage = 3;
  input.offload_optimizer = true;
  EXPECT_EQ(GetFieldViolations(EstimateTrainingMemory(input).status())[0].field,
            "offload_optimizer");
}

// The default: the framework whose default the settings match, named.
TEST(FrameworkAllocationTest, TheDefaultIsANamedFramework) {
  TrainingMemoryInput input;
  input.parameters = 2851e6;
  input.largest_layer_parameters = 32e6;
  input.data_parallel = 8;
  input.framework = Framework::kDefault;
  for (int stage : {0, 1, 2, 3}) {
    input.zero_stage = stage;
    auto memory = EstimateTrainingMemory(input);
    ASSERT_TRUE(memory.ok()) << memory.status();
    EXPECT_EQ(memory->framework, stage < 2 ? Framework::kMegatron : Framework::kDeepSpeed);
  }
  // DeepSpeed's printed ZeRO-3 figure (memory.rst: 6.09 GiB) is the default's.
  input.zero_stage = 3;
  auto zero3 = EstimateTrainingMemory(input);
  ASSERT_TRUE(zero3.ok());
  EXPECT_NEAR(StatesOf(*zero3) / kGiBytes, 6.09, 0.005);
  // No framework states a figure for LoRA: the idealized count, named.
  input.fine_tuning = FineTuning::kLora;
  input.lora_rank = 8;
  input.lora_parameters = 4194304;
  auto lora = EstimateTrainingMemory(input);
  ASSERT_TRUE(lora.ok()) << lora.status();
  EXPECT_EQ(lora->framework, Framework::kIdealized);
  EXPECT_NE(lora->allocation.find("idealized"), std::string::npos);
}

// Issue 17, point 5: measured Llama-3.1-8B at 32k tokens (micro-batch 1,
// one GPU): 15.7 GiB of fp32 logits, 31 GiB with activation checkpointing,
// 240 GiB without (activations and logits; the issue's figures, their
// original publication not found: docs/ACCURACY.md). Korthikanti's fixed
// 34·s·b·h per layer gave 151.7 GiB without checkpointing (-37%). Counting
// the tensors autograd keeps in a transformers Llama layer with
// FlashAttention-2 (RMSNorm's fp32 input, the gated MLP's four 14336-wide
// tensors, k and v at 8 KV heads): 16h + 4ad + 4gd + 4a + 8f = 200,832
// bytes per token per layer: 196.1 GiB. The loss as transformers computes
// it (loss/loss_utils.py ForCausalLMLoss: logits.float(), cross_entropy)
// holds 12 bytes per token and vocabulary entry at the start of the
// backward pass (log_softmax's saved fp32 output, the gradient nll_loss
// hands it, the gradient it returns): 46.97 GiB. Without checkpointing
// 243.1 GiB against 240 (+1.3%; -11.8% with the fp32 logits alone). With
// full recomputation 8 GiB of layer inputs + the loss's 46.97 (the layer
// being recomputed, 6.13, comes after the loss's buffers are freed) =
// 55.0 GiB against the measured 31 (+77%): the stock loss alone holds 39.1
// GiB in the forward pass (bf16 logits 2 + fp32 copy 4 + log_softmax 4
// bytes per element), more than the whole measured figure, so that
// measurement cannot have used it (a fused cross entropy keeps far less).
TEST(FrameworkAllocationTest, TransformersActivationsOfLlama31At32k) {
  const Figure layer = DerivedActivationBytesPerLayer(Llama31_8B(), 32768, 1, 1, false);
  EXPECT_DOUBLE_EQ(layer.value,
                   32768.0 * (16 * 4096 + 4 * 32 * 128 + 4 * 8 * 128 + 4 * 32 + 8 * 14336));
  EXPECT_DOUBLE_EQ(layer.value, 32768.0 * 200832);

  TrainingMemoryInput input;
  input.parameters = 8030261248;
  input.architecture = Llama31_8B();
  input.sequence_length = 32768;
  input.framework = Framework::kDeepSpeed;
  input.zero_stage = 3;
  input.data_parallel = 8;
  auto none = EstimateTrainingMemory(input);
  ASSERT_TRUE(none.ok()) << none.status();
  const double elements = 32768.0 * 128256;
  EXPECT_DOUBLE_EQ(LineOf(*none, "logits"), 4 * elements);
  EXPECT_DOUBLE_EQ(LineOf(*none, "loss_buffers"), 8 * elements);
  EXPECT_NEAR(LineOf(*none, "logits") / kGiBytes, 15.7, 0.05);  // measured 15.7 GiB
  const double without =
      LineOf(*none, "activations") + LineOf(*none, "logits") + LineOf(*none, "loss_buffers");
  EXPECT_NEAR(without / kGiBytes, 243.1, 0.05);
  EXPECT_LT(std::abs(without / kGiBytes - 240) / 240, 0.015);  // measured 240 GiB: +1.3%

  input.recompute = Recompute::kFull;
  auto full = EstimateTrainingMemory(input);
  ASSERT_TRUE(full.ok()) << full.status();
  // The loss's 12 bytes per element outweigh the recomputed layer's 200,832
  // bytes per token: the layer adds nothing to the peak.
  EXPECT_DOUBLE_EQ(LineOf(*full, "recomputed_layer"), 0);
  const double with = LineOf(*full, "activations") + LineOf(*full, "recomputed_layer") +
                      LineOf(*full, "logits") + LineOf(*full, "loss_buffers");
  EXPECT_DOUBLE_EQ(with, 32 * 2 * 32768.0 * 4096 + 12 * elements);
  EXPECT_NEAR(with / kGiBytes, 55.0, 0.05);
  EXPECT_GT(with / kGiBytes, 31);  // measured 31 GiB: +77% (see above)

  // A small vocabulary: the recomputed layer outweighs the loss and adds
  // what it holds beyond the loss's buffers. On the first of two pipeline
  // stages (the loss is on the last) it adds its whole activations.
  input.architecture.vocab_size = 1000;
  auto small = EstimateTrainingMemory(input);
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_DOUBLE_EQ(LineOf(*small, "recomputed_layer"), 32768.0 * (200832 - 12 * 1000));
  input.pipeline_parallel = 2;
  auto staged = EstimateTrainingMemory(input);
  ASSERT_TRUE(staged.ok()) << staged.status();
  EXPECT_DOUBLE_EQ(LineOf(*staged, "recomputed_layer"), layer.value);
  EXPECT_EQ(LineOf(*staged, "loss_buffers"), -1);  // a note: the last stage holds it
  input.pipeline_parallel = 1;
  input.architecture.vocab_size = 128256;

  // Without the transformers loss (the idealized count, Megatron's fused
  // cross entropy) one fp32 tensor of logits and no loss buffers.
  input.framework = Framework::kIdealized;
  input.zero_stage = 0;
  auto idealized = EstimateTrainingMemory(input);
  ASSERT_TRUE(idealized.ok()) << idealized.status();
  EXPECT_DOUBLE_EQ(LineOf(*idealized, "logits"), 4 * elements);
  EXPECT_EQ(LineOf(*idealized, "loss_buffers"), -1);

  // GQA: keys and values at the KV heads; with as many KV heads as query
  // heads the layer keeps 4 x (32 - 8) x 128 bytes more per token.
  Architecture mha = Llama31_8B();
  mha.num_key_value_heads = 32;
  EXPECT_DOUBLE_EQ(DerivedActivationBytesPerLayer(mha, 32768, 1, 1, false).value - layer.value,
                   32768.0 * 4 * 24 * 128);
  // A plain 4h MLP keeps 2 tensors of 4h, not 4 of f.
  Architecture plain = Llama31_8B();
  plain.gated_mlp = false;
  plain.intermediate_size = 4 * 4096;
  EXPECT_DOUBLE_EQ(layer.value - DerivedActivationBytesPerLayer(plain, 32768, 1, 1, false).value,
                   32768.0 * (8 * 14336 - 4 * 16384));
}

// The loss's implementation, counted from each one's code, for the same
// Llama-3.1-8B at 32k tokens with full checkpointing that issue 17 measured
// at 31 GiB (the measurement's loss is not stated; docs/ACCURACY.md).
//  - torchtune's CEWithChunkedOutputLoss (pytorch/torchtune
//    torchtune/modules/loss/ce_chunked_output_loss.py at bd2a0fc7c314, 8
//    output chunks, eager): bf16 logits of every chunk 2 + log_softmax's
//    saved fp32 output of every chunk 4 + one chunk's fp32 copy 4/8 = 6.5
//    bytes per token and vocabulary entry: 8.0 GiB of layer inputs + 25.44
//    = 33.44 GiB against 31 (+7.9%).
//  - Liger's fused linear cross entropy (linkedin/Liger-Kernel
//    src/liger_kernel/ops/fused_linear_cross_entropy.py at ead96b618e5c):
//    chunks of next_power_of_2(32768 / ceil(128256 / 4096)) = 1024 tokens,
//    one chunk's bf16 logits, the input gradient 2·BT·H, the fp32 loss
//    4·BT and the weight gradient with its bf16 product and fp32 copy
//    8·V·H: 4.41 GiB; the recomputed layer (6.13 GiB) then outweighs it:
//    8.0 + 6.13 = 14.13 GiB against 31 (-54%).
TEST(FrameworkAllocationTest, LossImplementationsOfLlama31At32k) {
  const double elements = 32768.0 * 128256;
  const double inputs = 32 * 2 * 32768.0 * 4096;
  const double layer = 32768.0 * 200832;
  TrainingMemoryInput input;
  input.parameters = 8030261248;
  input.architecture = Llama31_8B();
  input.sequence_length = 32768;
  input.framework = Framework::kFsdp;
  input.zero_stage = 3;
  input.data_parallel = 8;
  input.recompute = Recompute::kFull;
  auto total = [](const TrainingMemory& m) {
    double bytes = 0;  // LineOf is -1 for an absent line
    for (const char* line : {"activations", "recomputed_layer", "logits", "loss_buffers"}) {
      bytes += std::max(0.0, LineOf(m, line));
    }
    return bytes;
  };

  input.loss = LossImplementation::kChunked;
  auto chunked = EstimateTrainingMemory(input);
  ASSERT_TRUE(chunked.ok()) << chunked.status();
  EXPECT_DOUBLE_EQ(LineOf(*chunked, "logits"), 2 * elements);
  EXPECT_DOUBLE_EQ(LineOf(*chunked, "loss_buffers"), 4 * elements + 4 * elements / 8);
  EXPECT_DOUBLE_EQ(LineOf(*chunked, "recomputed_layer"), 0);  // 25.4 GiB > 6.13
  EXPECT_DOUBLE_EQ(total(*chunked), inputs + 6.5 * elements);
  EXPECT_NEAR(total(*chunked) / kGiBytes, 33.44, 0.005);
  EXPECT_LT(std::abs(total(*chunked) / kGiBytes - 31) / 31, 0.08);  // measured 31: +7.9%
  EXPECT_NE(chunked->allocation.find("CEWithChunkedOutputLoss"), std::string::npos)
      << chunked->allocation;

  input.loss = LossImplementation::kLigerFusedLinear;
  auto liger = EstimateTrainingMemory(input);
  ASSERT_TRUE(liger.ok()) << liger.status();
  const double liger_peak =
      2 * 1024.0 * 128256 + 2 * 32768.0 * 4096 + 4 * 32768.0 + 8 * 128256.0 * 4096;
  EXPECT_DOUBLE_EQ(LineOf(*liger, "logits"), 2 * 1024.0 * 128256);
  EXPECT_DOUBLE_EQ(LineOf(*liger, "logits") + LineOf(*liger, "loss_buffers"), liger_peak);
  EXPECT_NEAR(liger_peak / kGiBytes, 4.41, 0.005);
  EXPECT_DOUBLE_EQ(LineOf(*liger, "recomputed_layer"), layer - liger_peak);
  EXPECT_DOUBLE_EQ(total(*liger), inputs + layer);
  EXPECT_NEAR(total(*liger) / kGiBytes, 14.13, 0.005);  // measured 31: -54%
  EXPECT_NE(liger->allocation.find("Liger"), std::string::npos) << liger->allocation;

  // Without checkpointing (measured 240 GiB): 196.1 GiB of activations +
  // the loss: 221.6 with the chunked loss (-7.7%), 200.5 with Liger's (-16%).
  input.recompute = Recompute::kNone;
  input.loss = LossImplementation::kChunked;
  auto chunked_all = EstimateTrainingMemory(input);
  ASSERT_TRUE(chunked_all.ok()) << chunked_all.status();
  EXPECT_NEAR(total(*chunked_all) / kGiBytes, 221.57, 0.005);
  input.loss = LossImplementation::kLigerFusedLinear;
  auto liger_all = EstimateTrainingMemory(input);
  ASSERT_TRUE(liger_all.ok()) << liger_all.status();
  EXPECT_NEAR(total(*liger_all) / kGiBytes, 200.53, 0.005);
  input.recompute = Recompute::kFull;

  // The default stays the stock loss (55.0 GiB): the largest of the three.
  input.loss = LossImplementation::kTransformers;
  auto stock = EstimateTrainingMemory(input);
  ASSERT_TRUE(stock.ok()) << stock.status();
  EXPECT_GT(total(*stock), total(*chunked));
  EXPECT_GT(total(*chunked), total(*liger));
  EXPECT_NE(stock->allocation.find("ForCausalLMLoss"), std::string::npos);

  // Only DeepSpeed and FSDP run a transformers loss; none of the
  // alternatives splits the vocabulary across tensor-parallel ranks.
  input.loss = LossImplementation::kChunked;
  input.framework = Framework::kMegatron;
  input.zero_stage = 1;
  EXPECT_EQ(GetFieldViolations(EstimateTrainingMemory(input).status())[0].field, "loss");
  input.framework = Framework::kDeepSpeed;
  input.zero_stage = 3;
  input.tensor_parallel = 2;
  auto split = EstimateTrainingMemory(input);
  ASSERT_EQ(split.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GetFieldViolations(split.status())[0].field, "loss");
}

// PyTorch FSDP2 against torchtitan's published peak memory
// (pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md, added
// in 820504e20d11; torchtitan 9dec370, torch 1963fc8, December 2024),
// tables 1 and 3: Llama 3.1 8B, FSDP (bf16 parameters, fp32 reduce),
// local batch 2, seq_len 8192 (train_configs/llama3_8b.toml at 9dec370),
// torchtitan's per-op selective checkpointing: 82.4 GiB per GPU on 8 GPUs,
// 67.0 on 128. The figures are torch.cuda's max_reserved (train.py logs
// max_reserved_gib), allocator cache included, and the per-op selective
// checkpointing (save every other matmul's output) is not modelled, so the
// absolute figures are not compared; the difference is: same activations,
// same loss, same gathered units, only the shards differ. Ours: 16 bytes
// per parameter (fp32 parameter, fp32 gradient, two fp32 Adam moments)
// x 8,030,261,248 x (1/8 - 1/128) = 14.02 GiB against 82.4 - 67.0 = 15.4
// (-8.9%; the torch.compile rows give 77.0 - 62.0 = 15.0, -6.5%).
TEST(FrameworkAllocationTest, FsdpShardsAgainstTorchtitansEightAndOneHundredTwentyEightGpus) {
  TrainingMemoryInput input;
  input.parameters = 8030261248;
  input.architecture = Llama31_8B();
  input.largest_layer_parameters = 2 * 128256.0 * 4096;  // the root unit: embeddings + output
  input.sequence_length = 8192;
  input.micro_batch = 2;
  input.framework = Framework::kFsdp;
  input.zero_stage = 3;
  input.recompute = Recompute::kSelective;
  input.data_parallel = 8;
  auto eight = EstimateTrainingMemory(input);
  ASSERT_TRUE(eight.ok()) << eight.status();
  input.data_parallel = 128;
  auto many = EstimateTrainingMemory(input);
  ASSERT_TRUE(many.ok()) << many.status();
  const double difference = eight->device_bytes - many->device_bytes;
  EXPECT_DOUBLE_EQ(difference, 16 * 8030261248.0 * (1.0 / 8 - 1.0 / 128));
  EXPECT_NEAR(difference / kGiBytes, 14.02, 0.005);
  const double measured = 82.4 - 67.0;
  EXPECT_LT(std::abs(difference / kGiBytes - measured) / measured, 0.10);  // -8.9%
  EXPECT_NE(eight->allocation.find("PyTorch FSDP"), std::string::npos);

  // Table 2, FSDP 8, CP 1: 32,768 tokens, local batch 1, full
  // checkpointing, 83.9 GiB peak reserved (torch.compile and Float8 linears,
  // not modelled; reserved includes the allocator's cache, not the CUDA
  // context). torchtitan's loss at 9dec370 is the stock pattern
  // (train.py: cross_entropy(pred.flatten(0, 1).float(), ...), `del pred`
  // before backward): 12 bytes per token and vocabulary entry. Ours: shards
  // 14.96 + gathered root unit 5.87 + layer inputs 8.0 + loss 46.97 (the
  // recomputed layer, 6.13, comes after it) = 75.8 GiB (-9.7%), below the
  // reserved figure as an allocated one should be.
  input.data_parallel = 8;
  input.sequence_length = 32768;
  input.micro_batch = 1;
  input.recompute = Recompute::kFull;
  auto long_context = EstimateTrainingMemory(input);
  ASSERT_TRUE(long_context.ok()) << long_context.status();
  EXPECT_NEAR(long_context->device_bytes / kGiBytes, 75.8, 0.05);
  EXPECT_LT(long_context->device_bytes / kGiBytes, 83.9);
  EXPECT_LT(std::abs(long_context->device_bytes / kGiBytes - 83.9) / 83.9, 0.10);  // -9.7%
}

// Megatron-LM's own activation formula (theoretical_memory_usage.py
// compute_activation_memory): s·b·h·(18 + 4·f/h) per layer, 34 at f = 4h
// (Korthikanti et al.'s table 2 with selective recomputation); Llama's
// 3.5h gated MLP gives 32: 128 GiB + 15.66 GiB of logits at 32k against the
// measured 240 (-40%): Megatron's formula ignores the gate (its own TODO).
TEST(FrameworkAllocationTest, MegatronActivationFormula) {
  EXPECT_DOUBLE_EQ(MegatronActivationBytesPerLayer(2048, 1, 12288, 4 * 12288, 1, false).value,
                   34.0 * 2048 * 12288);
  EXPECT_DOUBLE_EQ(MegatronActivationBytesPerLayer(2048, 1, 12288, 4 * 12288, 8, true).value,
                   34.0 / 8 * 2048 * 12288);
  TrainingMemoryInput input;
  input.parameters = 8030261248;
  input.architecture = Llama31_8B();
  input.sequence_length = 32768;
  input.framework = Framework::kMegatron;
  auto memory = EstimateTrainingMemory(input);
  ASSERT_TRUE(memory.ok()) << memory.status();
  EXPECT_DOUBLE_EQ(LineOf(*memory, "activations"), 32 * 32.0 * 32768 * 4096);
}

// Through the answer: an unspecified framework is resolved and echoed, the
// idealized count is there when asked for.
TEST(FrameworkAllocationTest, TheAnswerEchoesTheFrameworkItFollowed) {
  common::v1::Model model;
  model.set_display_name("inline 1B");
  model.set_parameters(1e9);
  v1::TrainingSettings settings;
  settings.set_data_parallel(8);
  auto megatron = EstimateTrainingMemoryFor(model, settings);
  ASSERT_TRUE(megatron.ok()) << megatron.status();
  EXPECT_EQ(megatron->settings().framework(), v1::TRAINING_FRAMEWORK_MEGATRON);
  EXPECT_NE(megatron->allocation().find("Megatron-LM"), std::string::npos);
  settings.set_framework(v1::TRAINING_FRAMEWORK_IDEALIZED);
  auto idealized = EstimateTrainingMemoryFor(model, settings);
  ASSERT_TRUE(idealized.ok()) << idealized.status();
  EXPECT_EQ(idealized->settings().framework(), v1::TRAINING_FRAMEWORK_IDEALIZED);
  EXPECT_EQ(idealized->device_lines(1).bytes(), 2e9);  // bf16 gradients: 2 bytes
  // deepspeed_model_states means DeepSpeed: another framework beside it is
  // refused, not silently overridden.
  settings.set_deepspeed_model_states(true);
  settings.set_framework(v1::TRAINING_FRAMEWORK_FSDP);
  auto conflict = EstimateTrainingMemoryFor(model, settings);
  ASSERT_EQ(conflict.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(conflict.status().ToString().find("settings.framework"), std::string::npos);
  settings.set_deepspeed_model_states(false);
  settings.set_framework(static_cast<v1::TrainingFramework>(42));
  auto unknown = EstimateTrainingMemoryFor(model, settings);
  ASSERT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().ToString().find("settings.framework"), std::string::npos);
}

// The answer names the loss it counted and echoes it; a loss for a
// framework that keeps its own, or an unknown one, is refused by field.
TEST(FrameworkAllocationTest, TheAnswerNamesAndEchoesTheLoss) {
  common::v1::Model model;
  model.set_display_name("inline Llama-3.1-8B shape");
  model.set_parameters(8030261248);
  const Architecture shape = Llama31_8B();
  auto* arch = model.mutable_architecture();
  arch->set_num_layers(shape.num_layers);
  arch->set_hidden_size(shape.hidden_size);
  arch->set_num_attention_heads(shape.num_attention_heads);
  arch->set_num_key_value_heads(shape.num_key_value_heads);
  arch->set_intermediate_size(shape.intermediate_size);
  arch->set_gated_mlp(true);
  arch->set_head_dim(shape.head_dim);
  arch->set_vocab_size(shape.vocab_size);
  v1::TrainingSettings settings;
  settings.set_data_parallel(8);
  settings.set_zero_stage(3);
  settings.set_sequence_length(32768);
  settings.set_framework(v1::TRAINING_FRAMEWORK_FSDP);
  auto stock = EstimateTrainingMemoryFor(model, settings);
  ASSERT_TRUE(stock.ok()) << stock.status();
  EXPECT_EQ(stock->settings().loss(), v1::TRAINING_LOSS_TRANSFORMERS);
  EXPECT_NE(stock->allocation().find("ForCausalLMLoss"), std::string::npos) << stock->allocation();
  settings.set_loss(v1::TRAINING_LOSS_CHUNKED);
  auto chunked = EstimateTrainingMemoryFor(model, settings);
  ASSERT_TRUE(chunked.ok()) << chunked.status();
  EXPECT_EQ(chunked->settings().loss(), v1::TRAINING_LOSS_CHUNKED);
  EXPECT_NE(chunked->allocation().find("CEWithChunkedOutputLoss"), std::string::npos);
  EXPECT_LT(chunked->device_total_bytes(), stock->device_total_bytes());
  settings.set_framework(v1::TRAINING_FRAMEWORK_MEGATRON);
  settings.set_zero_stage(1);
  auto megatron = EstimateTrainingMemoryFor(model, settings);
  ASSERT_EQ(megatron.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(megatron.status().ToString().find("settings.loss"), std::string::npos)
      << megatron.status();
  settings.set_framework(v1::TRAINING_FRAMEWORK_FSDP);
  settings.set_zero_stage(3);
  settings.set_loss(static_cast<v1::TrainingLoss>(42));
  auto unknown = EstimateTrainingMemoryFor(model, settings);
  ASSERT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().ToString().find("settings.loss"), std::string::npos);

  // A plan keeps the loss it was given: only layouts whose framework runs a
  // transformers loss (DeepSpeed at ZeRO-2/3 by default) and no tensor
  // parallelism (the alternatives do not split the vocabulary).
  common::v1::Hardware card;
  card.set_name("hardware/test-80gib");
  card.set_display_name("an 80 GiB test card");
  card.set_memory_bytes(static_cast<int64_t>(80 * kGiBytes));
  card.set_allocatable_memory_bytes(static_cast<int64_t>(79 * kGiBytes));
  v1::PlanTrainingRequest request;
  *request.mutable_settings() = v1::TrainingSettings();
  request.mutable_settings()->set_sequence_length(32768);
  request.mutable_settings()->set_recompute(v1::RECOMPUTE_FULL);
  request.mutable_settings()->set_loss(v1::TRAINING_LOSS_CHUNKED);
  request.set_max_devices(64);
  auto plan = PlanTrainingFor(model, card, request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(plan->fits()) << plan->reason();
  EXPECT_EQ(plan->settings().loss(), v1::TRAINING_LOSS_CHUNKED);
  EXPECT_EQ(plan->settings().tensor_parallel(), 1);
  EXPECT_EQ(plan->memory().settings().framework(), v1::TRAINING_FRAMEWORK_DEEPSPEED);
  EXPECT_NE(plan->memory().allocation().find("CEWithChunkedOutputLoss"), std::string::npos)
      << plan->memory().allocation();
}

}  // namespace
}  // namespace modelatlas::estimator
