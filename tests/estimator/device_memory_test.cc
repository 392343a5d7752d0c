// Memory a runtime can actually use (issue 17, point 4): every fit decision
// rests on what one process can allocate (the driver's figure, or the
// documented rule for the memory type), never on the marketed capacity.
// Published figures (docs/ACCURACY.md, "Allocatable memory"):
//   H100 SXM5 80 GB: nvidia-smi memory.total 81,559 MiB;
//   H200 SXM 141 GB: 143,771 MiB (issue 17);
//   L4: 23,034 MiB, A10: 23,028 MiB, T4: 15,360 MiB (ECC on by default);
//   Apple 16 GiB Mac: llama.cpp logs recommendedMaxWorkingSetSize
//   = 11453.25 MB, 2/3 of 2^34 bytes.
#include "estimator-service/core/device_memory.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "catalog-service/dataset.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/answers/inverse.h"
#include "estimator-service/answers/runnable.h"
#include "estimator-service/answers/training.h"
#include "estimator-service/core/plan.h"
#include "tests/estimator/fake_records.h"
#include "tests/estimator/shipped_records.h"

namespace modelatlas::estimator {
namespace {

using testing::Shipped;
using testing::ShippedHardware;
using testing::ShippedModel;

constexpr double kMiB = 1048576.0;
constexpr double kGiB = 1073741824.0;

// ---- the rules ------------------------------------------------------------

TEST(AllocatableMemoryTest, TheRecordsDriverFigureComesFirst) {
  DeviceMemoryRecord h100{.memory_bytes = 80 * kGiB,
                          .allocatable_bytes = 81559 * kMiB,
                          .allocatable_source = "nvidia-smi memory.total 81559 MiB",
                          .memory_type = "HBM3"};
  const AllocatableMemory memory = AllocatableMemoryOf(h100);
  EXPECT_EQ(memory.allocatable_bytes, 81559 * kMiB);
  EXPECT_EQ(memory.marketed_bytes, 80 * kGiB);
  EXPECT_FALSE(memory.assumed);
  EXPECT_EQ(memory.source, "nvidia-smi memory.total 81559 MiB");
}

TEST(AllocatableMemoryTest, EachMemoryTypeHasOneRuleThatErrsLow) {
  // Without a driver figure: the lowest ratio seen on that kind of memory,
  // so every published figure of that kind is at or above the rule.
  struct Case {
    std::string type;
    double marketed_mib;
    double published_mib;  // CUDA's total (the shipped records' sources)
  };
  // H100 SXM, H200 (139.715 GiB), B200, A100 80 GB (79.135 GiB), GH200 96 GB,
  // V100 16 GB and 32 GB.
  const std::vector<Case> hbm = {{"HBM3", 81920, 81079},    {"HBM3e", 144384, 143068.16},
                                 {"HBM3e", 184320, 182631}, {"HBM2e", 81920, 81034.24},
                                 {"HBM3", 98304, 97280},    {"HBM2", 16384, 16128},
                                 {"HBM2", 32768, 32480}};
  // L4 (22.025 GiB), A10, L40S, T4 (14.555 GiB).
  const std::vector<Case> gddr_ecc = {{"GDDR6 (ECC)", 24576, 22553.6},
                                      {"GDDR6 (ECC)", 24576, 22516},
                                      {"GDDR6 (ECC)", 49152, 45373},
                                      {"GDDR6 (ECC)", 16384, 14904.32}};
  // RTX 5090, 4090, 3090 on Linux.
  const std::vector<Case> gddr = {
      {"GDDR7", 32768, 32101}, {"GDDR6X", 24576, 24081}, {"GDDR6X", 24576, 24238}};
  for (const std::vector<Case>* cases : {&hbm, &gddr_ecc}) {
    for (const Case& c : *cases) {
      const AllocatableMemory rule =
          AllocatableMemoryOf({.memory_bytes = c.marketed_mib * kMiB, .memory_type = c.type});
      EXPECT_TRUE(rule.assumed);
      EXPECT_LE(rule.allocatable_bytes, c.published_mib * kMiB) << c.type << " " << c.marketed_mib;
      // ... and not far below it: within 1.5% of the published figure.
      EXPECT_GT(rule.allocatable_bytes, 0.985 * c.published_mib * kMiB) << c.type;
      EXPECT_TRUE(absl::StrContains(rule.source, "assumed")) << rule.source;
    }
  }
  for (const Case& c : gddr) {
    const AllocatableMemory rule =
        AllocatableMemoryOf({.memory_bytes = c.marketed_mib * kMiB, .memory_type = c.type});
    EXPECT_LE(rule.allocatable_bytes, c.published_mib * kMiB) << c.type;
    EXPECT_GT(rule.allocatable_bytes, 0.99 * c.published_mib * kMiB) << c.type;
  }
  // The ECC reserve is about 1/16 and the driver's share: the T4's 14.555 GiB
  // exactly.
  EXPECT_DOUBLE_EQ(AllocatableMemoryOf({.memory_bytes = 16 * kGiB, .memory_type = "GDDR6 (ECC)"})
                       .allocatable_bytes,
                   14.555 * kGiB);
  // Unknown memory: the lowest rule (ECC cannot be ruled out).
  const AllocatableMemory unknown = AllocatableMemoryOf({.memory_bytes = 48 * kGiB});
  EXPECT_DOUBLE_EQ(unknown.allocatable_bytes, 48 * kGiB * kGddrEccShare);
  EXPECT_TRUE(absl::StrContains(unknown.source, "memory type not on record")) << unknown.source;
}

TEST(AllocatableMemoryTest, ATpuWithoutARuntimeFigureIsPlannedOnTheLowestXlaLimit) {
  // XLA:TPU's out-of-memory reports, per chip (GiB): v4 "of 30.75G hbm" of
  // 32 (EasyDeL issue 166), v5e "of 15.75G hbm" of 16 (kubernetes-engine-
  // samples PR 1467), v5p 95 of 96 (Google Cloud's TPU v5p page). The HBM
  // rule, from NVIDIA drivers, is above the v4's limit: a TPU has its own.
  struct Case {
    double marketed_gib;
    double published_gib;
  };
  for (const Case& c : std::vector<Case>{{32, 30.75}, {16, 15.75}, {96, 95}}) {
    const AllocatableMemory rule = AllocatableMemoryOf(
        {.memory_bytes = c.marketed_gib * kGiB, .memory_type = "HBM2e", .tpu = true});
    EXPECT_TRUE(rule.assumed);
    EXPECT_LE(rule.allocatable_bytes, c.published_gib * kGiB) << c.marketed_gib;
    EXPECT_GT(rule.allocatable_bytes, 0.97 * c.published_gib * kGiB) << c.marketed_gib;
    EXPECT_TRUE(absl::StrContains(rule.source, "TPU: 30.75/32")) << rule.source;
    // The GPU rule for the same memory would have planned the v4 on more
    // than XLA lets a program use.
    if (c.marketed_gib == 32) {
      EXPECT_GT(
          AllocatableMemoryOf({.memory_bytes = 32 * kGiB, .memory_type = "HBM2"}).allocatable_bytes,
          c.published_gib * kGiB);
    }
  }
}

TEST(AllocatableMemoryTest, UnifiedMemoryIsTheGpusShareMacOsAllows) {
  // llama.cpp on a 16 GiB Mac: "recommendedMaxWorkingSetSize = 11453.25 MB".
  const AllocatableMemory mac16 =
      AllocatableMemoryOf({.memory_bytes = 16 * kGiB, .unified_memory = true});
  EXPECT_NEAR(mac16.allocatable_bytes / 1e6, 11453.25, 0.005);
  // Above 36 GiB, 3/4: a 64 GiB Mac wires 48 GiB.
  EXPECT_DOUBLE_EQ(
      AllocatableMemoryOf({.memory_bytes = 64 * kGiB, .unified_memory = true}).allocatable_bytes,
      48 * kGiB);
}

TEST(AllocatableMemoryTest, AFigureAboveTheCapacityIsNotUsedAndTheAnswerSaysWhy) {
  // H200 recorded as 141e9 bytes (decimal GB) with nvidia-smi's 143,771 MiB:
  // units mixed; the figure is not clamped, the rule applies and says so.
  const AllocatableMemory memory = AllocatableMemoryOf(
      {.memory_bytes = 141e9, .allocatable_bytes = 143771 * kMiB, .memory_type = "HBM3e"});
  EXPECT_TRUE(memory.assumed);
  EXPECT_DOUBLE_EQ(memory.allocatable_bytes, 141e9 * kHbmShare);
  EXPECT_TRUE(absl::StrContains(memory.source, "exceeds its capacity")) << memory.source;
  EXPECT_EQ(AllocatableMemoryOf({.memory_bytes = 0}).allocatable_bytes, 0);
}

// ---- every shipped record -------------------------------------------------

TEST(AllocatableMemoryTest, EveryShippedTpuWithoutAFigureIsPlannedOnTheTpuRule) {
  int tpus_on_the_rule = 0;
  for (const common::v1::Hardware& hw : Shipped().hardware()) {
    if (hw.type() != common::v1::HARDWARE_TYPE_TPU || hw.has_allocatable_memory_bytes() ||
        hw.memory_bytes() <= 0) {
      continue;
    }
    SCOPED_TRACE(hw.name());
    const AllocatableMemory memory = AllocatableMemoryOfRecord(hw);
    EXPECT_DOUBLE_EQ(memory.allocatable_bytes, hw.memory_bytes() * kTpuShare);
    EXPECT_TRUE(absl::StrContains(memory.source, "TPU: 30.75/32")) << memory.source;
    ++tpus_on_the_rule;
  }
  // TPU v2, v3, v6e and v7 had no cited runtime figure when this was written.
  EXPECT_GE(tpus_on_the_rule, 1);
}

TEST(AllocatableMemoryTest, EveryShippedRecordPlansOnAtMostItsMarketedCapacity) {
  int with_memory = 0, from_record = 0;
  for (const common::v1::Hardware& hw : Shipped().hardware()) {
    if (!hw.has_memory_bytes() || hw.memory_bytes() <= 0) continue;
    ++with_memory;
    SCOPED_TRACE(hw.name());
    const AllocatableMemory memory = AllocatableMemoryOfRecord(hw);
    // Units consistent: a recorded allocatable figure is a share of the
    // marketed capacity in the same unit (bytes), never above it, and not
    // below half (a GiB figure against a GB capacity, or MiB against bytes,
    // would fall outside).
    if (hw.has_allocatable_memory_bytes()) {
      EXPECT_LE(hw.allocatable_memory_bytes(), hw.memory_bytes());
      EXPECT_GE(hw.allocatable_memory_bytes(), 0.5 * hw.memory_bytes());
      EXPECT_FALSE(hw.allocatable_memory_source().empty());
      EXPECT_FALSE(memory.assumed);
      EXPECT_EQ(memory.allocatable_bytes, hw.allocatable_memory_bytes());
      ++from_record;
    } else {
      EXPECT_TRUE(memory.assumed);
      EXPECT_TRUE(absl::StrContains(memory.source, "assumed")) << memory.source;
    }
    EXPECT_GT(memory.allocatable_bytes, 0);
    EXPECT_LE(memory.allocatable_bytes, hw.memory_bytes());
    EXPECT_EQ(memory.marketed_bytes, hw.memory_bytes());
    if (!hw.unified_memory()) {
      // A discrete card's driver never hides more than the ECC reserve
      // and the driver's own share (the lowest rule).
      EXPECT_GE(memory.allocatable_bytes, kGddrEccShare * hw.memory_bytes() * (1 - 1e-12));
    }

    // The plan decides its fit on the allocatable figure.
    const DeviceSpec device = DeviceOf(hw, NumberFormat::kBf16);
    ASSERT_TRUE(device.allocatable_memory_bytes.has_value());
    EXPECT_EQ(*device.allocatable_memory_bytes, memory.allocatable_bytes);
    std::string arithmetic;
    const double usable = UsableBytesPerCard(device, 0.9, &arithmetic);
    EXPECT_DOUBLE_EQ(usable, memory.allocatable_bytes * (hw.unified_memory() ? 1.0 : 0.9));
    EXPECT_TRUE(absl::StrContains(arithmetic, "allocatable")) << arithmetic;
    if (memory.assumed) {
      EXPECT_TRUE(absl::StrContains(arithmetic, "assumed")) << arithmetic;
    }
  }
  EXPECT_GE(with_memory, 200);
  EXPECT_GE(from_record, 60);
}

// The least a figure printed to 0.01 GiB can be, bytes.
double LeastOfPrintedGiB(double printed_gib) { return std::ceil((printed_gib - 0.005) * kGiB); }

// CUDA's total, what one process can allocate, not nvidia-smi's
// memory.total (81,559, 143,771 and 23,034 MiB): vLLM's "Free memory on
// device (.../79.18 GiB)" on an H100 (vllm-project/vllm-omni issue #1144;
// deviceQuery 81,079 MiB with CUDA 13.0), "(7.34/139.72 GiB)" on an H200
// (vllm-project/vllm issue #23192), PyTorch's 22.03 GiB on an L4
// (ArcInstitute/evo2 issue #190).
TEST(AllocatableMemoryTest, ShippedDriverFiguresMatchPublishedOnes) {
  EXPECT_EQ(AllocatableMemoryOfRecord(ShippedHardware("hardware/nvidia-h100-sxm5-80gb"))
                .allocatable_bytes,
            85017755648.0);  // deviceQuery's 81079 MBytes (85017755648 bytes)
  EXPECT_EQ(AllocatableMemoryOfRecord(ShippedHardware("hardware/nvidia-h200-sxm-141gb"))
                .allocatable_bytes,
            LeastOfPrintedGiB(139.72));
  EXPECT_EQ(AllocatableMemoryOfRecord(ShippedHardware("hardware/nvidia-l4")).allocatable_bytes,
            LeastOfPrintedGiB(22.03));
}

// ---- the answers ----------------------------------------------------------

v1::PlanInferenceResponse PlanOn(const common::v1::Model& model, const common::v1::Hardware& hw,
                                 const v1::InferenceWorkload& workload) {
  v1::PlanInferenceRequest request;
  *request.mutable_workload() = workload;
  request.set_max_cards(1);
  auto plan = PlanInferenceFor(model, SharedRecords<common::v1::Hardware>({hw}), request);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : v1::PlanInferenceResponse();
}

TEST(AllocatableMemoryAnswersTest, ThePlanSaysWhatItPlannedOnAndUsesIt) {
  const common::v1::Hardware& l4 = ShippedHardware("hardware/nvidia-l4");
  const v1::PlanInferenceResponse plan =
      PlanOn(ShippedModel("models/llama-3-1-8b"), l4, v1::InferenceWorkload());
  ASSERT_EQ(plan.plans_size(), 1);
  const v1::HardwarePlan& on_l4 = plan.plans(0);
  const double l4_bytes = LeastOfPrintedGiB(22.03);
  EXPECT_EQ(on_l4.usable_bytes_per_card(), static_cast<int64_t>(std::floor(l4_bytes * 0.9)));
  EXPECT_EQ(on_l4.device_memory().allocatable_bytes(), static_cast<int64_t>(l4_bytes));
  EXPECT_EQ(on_l4.device_memory().marketed_bytes(), static_cast<int64_t>(24 * kGiB));
  EXPECT_FALSE(on_l4.device_memory().allocatable_assumed());
  EXPECT_TRUE(absl::StrContains(on_l4.device_memory().allocatable_source(), "22.03 GiB"));
  ASSERT_GT(on_l4.arithmetic_size(), 0);
  EXPECT_TRUE(absl::StrContains(on_l4.arithmetic(0), "allocatable 22.03 GiB of 24.00 GiB"))
      << on_l4.arithmetic(0);
}

TEST(AllocatableMemoryAnswersTest, AModelBetweenAllocatableAndMarketedDoesNotFit) {
  // The context at which Llama 3.1 8B (bf16) needs more than the L4's
  // allocatable x 0.9 but less than its marketed 24 GiB x 0.9: before,
  // "fits"; a process gets CUDA's 22.03 GiB, so it does not.
  const common::v1::Hardware& l4 = ShippedHardware("hardware/nvidia-l4");
  auto records = std::make_shared<testing::FakeRecords>();
  records->Add(ShippedModel("models/llama-3-1-8b"));
  records->Add(l4);
  v1::FindMaxContextRequest request;
  request.mutable_source()->set_catalog_name("models/llama-3-1-8b");
  request.mutable_target()->set_hardware("hardware/nvidia-l4");
  request.mutable_target()->set_cards(1);
  absl::StatusOr<v1::InverseAnswer> answer = absl::UnknownError("not called");
  AnswerFindMaxContext(records, request, [&](absl::StatusOr<v1::InverseAnswer> a) { answer = a; });
  ASSERT_TRUE(answer.ok()) << answer.status();
  ASSERT_TRUE(answer->fits());
  const double l4_bytes = LeastOfPrintedGiB(22.03);
  const int64_t usable = static_cast<int64_t>(std::floor(l4_bytes * 0.9));
  EXPECT_EQ(answer->available_bytes(), usable);
  EXPECT_LE(answer->required_bytes(), usable);
  ASSERT_TRUE(answer->has_required_bytes_one_step_beyond());
  EXPECT_GT(answer->required_bytes_one_step_beyond(), usable);
  EXPECT_EQ(answer->plan().device_memory().allocatable_bytes(), static_cast<int64_t>(l4_bytes));

  // Twice the context is still below the marketed capacity x 0.9 and
  // does not fit the allocatable one.
  v1::InferenceWorkload longer;
  longer.set_context_length_tokens(answer->max_context_length_tokens() + 4096);
  const v1::PlanInferenceResponse plan = PlanOn(ShippedModel("models/llama-3-1-8b"), l4, longer);
  ASSERT_EQ(plan.plans_size(), 1);
  EXPECT_LT(plan.plans(0).required_bytes_per_card(), 24 * kGiB * 0.9);
  EXPECT_FALSE(plan.plans(0).fits());
}

TEST(AllocatableMemoryAnswersTest, TheRunnableListFitsInTheAllocatableCapacity) {
  auto records = std::make_shared<testing::FakeRecords>();
  records->Add(ShippedModel("models/llama-3-1-8b"));
  records->Add(ShippedHardware("hardware/nvidia-t4"));
  v1::ListRunnableModelsRequest request;
  request.set_hardware("hardware/nvidia-t4");
  request.mutable_workload()->set_weight_format(v1::NUMBER_FORMAT_INT8);
  testing::Answer<RunnableRows> runnable;
  AnswerRunnableModels(records, request, runnable.done());
  ASSERT_TRUE(runnable.result->ok()) << runnable.result->status();
  v1::ListRunnableModelsResponse first;
  ASSERT_TRUE((*runnable.result)->Fill(&first));
  const double t4 = LeastOfPrintedGiB(14.56);  // PyTorch's, Zheng-Chong/CatVTON issue #133
  const int64_t usable = static_cast<int64_t>(std::floor(t4 * 0.9));
  EXPECT_EQ(first.usable_bytes_per_card(), usable);
  EXPECT_EQ(first.device_memory().allocatable_bytes(), static_cast<int64_t>(t4));
  EXPECT_EQ(first.device_memory().marketed_bytes(), static_cast<int64_t>(16 * kGiB));
  for (const v1::RunnableModel& row : first.models()) {
    EXPECT_EQ(row.headroom_bytes_per_card(), usable - row.required_bytes_per_card()) << row.model();
  }
}

TEST(AllocatableMemoryAnswersTest, TrainingPlansFitInTheAllocatableCapacity) {
  const common::v1::Hardware& a10 = ShippedHardware("hardware/nvidia-a10");
  v1::PlanTrainingRequest request;
  request.set_max_devices(64);
  auto plan = PlanTrainingFor(ShippedModel("models/llama-3-1-8b"), a10, request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // deviceQuery's 22516 MBytes (23609475072 bytes) with ECC on (nvidia-smi:
  // 23,028 MiB).
  EXPECT_EQ(plan->device_memory_bytes(), int64_t{23609475072});
  EXPECT_EQ(plan->device_memory().allocatable_bytes(), int64_t{23609475072});
  EXPECT_EQ(plan->device_memory().marketed_bytes(), static_cast<int64_t>(24 * kGiB));
  if (plan->fits()) {
    EXPECT_LE(plan->memory().device_total_bytes(), plan->device_memory_bytes());
  }

  // A record without a driver figure (MI250X: the driver shows each die as
  // its own device, so the per-package record has none): derived, and the
  // answer says so.
  common::v1::Hardware bare = ShippedHardware("hardware/amd-instinct-mi250x");
  ASSERT_FALSE(bare.has_allocatable_memory_bytes());
  auto derived = PlanTrainingFor(ShippedModel("models/llama-3-1-8b"), bare, request);
  ASSERT_TRUE(derived.ok()) << derived.status();
  EXPECT_TRUE(derived->device_memory().allocatable_assumed());
  EXPECT_DOUBLE_EQ(static_cast<double>(derived->device_memory_bytes()),
                   std::floor(bare.memory_bytes() * kHbmShare));
  EXPECT_TRUE(absl::StrContains(derived->device_memory().allocatable_source(), "HBM"));
}

}  // namespace
}  // namespace modelatlas::estimator
