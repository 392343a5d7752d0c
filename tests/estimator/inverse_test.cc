// The inverse questions (issue 21, point 1): each answer is checked against
// the forward answer itself, called here directly (PlanInferenceFor on the
// cards, EstimateMemoryForModel against a budget): at the answer it fits,
// one step beyond (one KV block, one sequence, the next better format) it
// does not. Models from the shipped dataset: grouped-query attention (Llama
// 3.1 8B), MLA and MoE (DeepSeek-V3), MoE (Mixtral 8x7B), sliding windows
// in some layers (Gemma 2 9B) and in every layer (Mistral 7B).
#include "estimator-service/answers/inverse.h"

#include <gtest/gtest.h>

#include <set>

#include "absl/strings/match.h"
#include "catalog-service/dataset.h"
#include "common/status/errors.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/core/inverse.h"
#include "estimator-service/core/number_format.h"
#include "tests/estimator/fake_records.h"
#include "tests/estimator/shipped_records.h"

namespace modelatlas::estimator {
namespace {

using testing::ShippedHardware;
using testing::ShippedModel;

using common::v1::Hardware;
using common::v1::Model;

v1::ModelSource Source(const std::string& name) {
  v1::ModelSource source;
  source.set_catalog_name(name);
  return source;
}

v1::MemoryTarget OnCards(const std::string& hardware, int cards) {
  v1::MemoryTarget target;
  target.set_hardware(hardware);
  target.set_cards(cards);
  return target;
}

v1::MemoryTarget InBudget(int64_t bytes) {
  v1::MemoryTarget target;
  target.set_memory_budget_bytes(bytes);
  return target;
}

// The forward answer, called directly: does `workload` fit the target?
struct ForwardResult {
  bool fits = false;
  int64_t required_bytes = 0;
};

ForwardResult Forward(const Model& model, const v1::MemoryTarget& target,
                      const v1::InferenceWorkload& workload) {
  if (target.has_memory_budget_bytes()) {
    v1::EstimateInferenceMemoryRequest request;
    *request.mutable_workload() = workload;
    auto memory = EstimateMemoryForModel(model, request);
    EXPECT_TRUE(memory.ok()) << memory.status();
    if (!memory.ok()) return {};
    return {memory->total_bytes() <= target.memory_budget_bytes(), memory->total_bytes()};
  }
  v1::PlanInferenceRequest request;
  *request.mutable_workload() = workload;
  request.set_max_cards(target.cards());
  auto plan = PlanInferenceFor(
      model, SharedRecords<common::v1::Hardware>({ShippedHardware(target.hardware())}), request);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok() || plan->plans_size() != 1) return {};
  return {plan->plans(0).fits(), plan->plans(0).required_bytes_per_card()};
}

int64_t TotalBytesAt(const Model& model, int64_t context, int batch) {
  v1::EstimateInferenceMemoryRequest request;
  request.mutable_workload()->set_context_length_tokens(context);
  request.mutable_workload()->set_batch_size(batch);
  auto memory = EstimateMemoryForModel(model, request);
  EXPECT_TRUE(memory.ok()) << memory.status();
  return memory.ok() ? memory->total_bytes() : 0;
}

// ---- core -------------------------------------------------------------

TEST(LargestFittingTest, FindsTheLastFittingValueOfAMonotoneFunction) {
  for (int64_t limit : {1, 2, 3, 17, 1000, 100'000'000}) {
    for (int64_t edge : {int64_t{0}, int64_t{1}, int64_t{2}, limit / 3, limit - 1, limit}) {
      if (edge < 0 || edge > limit) continue;
      auto found =
          LargestFitting(limit, [edge](int64_t x) -> absl::StatusOr<bool> { return x <= edge; });
      ASSERT_TRUE(found.ok());
      EXPECT_EQ(found->largest, edge) << "limit " << limit;
      // Galloping then bisecting: about 2 log2 evaluations, never a scan.
      EXPECT_LE(found->evaluations, 2 * 64 - __builtin_clzll(limit) * 2 + 3) << limit;
    }
  }
}

TEST(LargestFittingTest, ErrorsEndTheSearchAndTheLimitIsChecked) {
  auto failing = LargestFitting(100, [](int64_t x) -> absl::StatusOr<bool> {
    if (x > 4) return absl::InvalidArgumentError("too far");
    return true;
  });
  EXPECT_EQ(failing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LargestFitting(0, [](int64_t) -> absl::StatusOr<bool> { return true; }).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RoundUpToBlocksTest, WholeBlocks) {
  EXPECT_EQ(RoundUpToBlocks(1000, 16), 1008);
  EXPECT_EQ(RoundUpToBlocks(1008, 16), 1008);
  EXPECT_EQ(RoundUpToBlocks(1, 16), 16);
  EXPECT_EQ(RoundUpToBlocks(1001, 1), 1001);
}

TEST(WeightFormatsByPrecisionTest, EveryFormatOnceHighestBitsFirst) {
  const std::vector<NumberFormat> formats = WeightFormatsByPrecision();
  std::set<NumberFormat> seen(formats.begin(), formats.end());
  EXPECT_EQ(seen.size(), formats.size());
  EXPECT_EQ(static_cast<int>(formats.size()), static_cast<int>(NumberFormat::kFp8Block) + 1);
  for (size_t i = 1; i < formats.size(); ++i) {
    EXPECT_GE(EncodingOf(formats[i - 1])->bits_per_element,
              EncodingOf(formats[i])->bits_per_element)
        << NumberFormatName(formats[i - 1]) << " before " << NumberFormatName(formats[i]);
  }
  EXPECT_EQ(formats.front(), NumberFormat::kFp32);
  EXPECT_EQ(formats[1], NumberFormat::kBf16);
}

// ---- the largest context ----------------------------------------------

struct Case {
  std::string model;
  v1::MemoryTarget target;
  v1::NumberFormat weights = v1::NUMBER_FORMAT_UNSPECIFIED;
};

std::vector<Case> ContextCases() {
  return {
      {"models/llama-3-1-8b", OnCards("hardware/nvidia-l4", 1)},
      {"models/llama-3-1-8b", OnCards("hardware/nvidia-t4", 2)},
      {"models/llama-3-1-70b", OnCards("hardware/nvidia-h100-sxm5-80gb", 2)},
      {"models/gemma-2-9b", OnCards("hardware/nvidia-l4", 1)},
      {"models/mistral-7b-v0-1", OnCards("hardware/nvidia-l4", 1)},
      {"models/mistral-7b-v0-1", OnCards("hardware/nvidia-t4", 1), v1::NUMBER_FORMAT_GGUF_Q4_K_M},
      {"models/mixtral-8x7b-v0-1", OnCards("hardware/nvidia-h100-sxm5-80gb", 2)},
      {"models/deepseek-v3", OnCards("hardware/nvidia-h200-sxm-141gb", 8),
       v1::NUMBER_FORMAT_FP8_BLOCK128},
      {"models/deepseek-v3", InBudget(int64_t{1'400'000'000'000})},
      {"models/gemma-2-9b", InBudget(int64_t{22'000'000'000})},
  };
}

TEST(MaxContextTest, TheForwardAnswerFitsAtItAndNotOneBlockBeyond) {
  for (const Case& c : ContextCases()) {
    for (int block : {0, 1, 256}) {
      SCOPED_TRACE(c.model + " " + c.target.ShortDebugString() + " block " + std::to_string(block));
      const Model model = ShippedModel(c.model);
      v1::FindMaxContextRequest request;
      *request.mutable_source() = Source(c.model);
      *request.mutable_target() = c.target;
      request.set_kv_block_size_tokens(block);
      request.mutable_workload()->set_weight_format(c.weights);
      std::vector<Hardware> hardware;
      if (c.target.has_hardware()) hardware.push_back(ShippedHardware(c.target.hardware()));
      auto answer = MaxContextFor(model, hardware, request);
      ASSERT_TRUE(answer.ok()) << answer.status();
      const int64_t step = block == 0 ? kDefaultKvBlockSizeTokens : block;
      EXPECT_EQ(answer->kv_block_size_tokens(), step);
      ASSERT_TRUE(answer->fits()) << answer->binding_constraint();
      const int64_t tokens = answer->max_context_length_tokens();
      EXPECT_EQ(tokens % step, 0);
      v1::InferenceWorkload at = request.workload();
      at.set_context_length_tokens(tokens);
      const ForwardResult fit = Forward(model, c.target, at);
      EXPECT_TRUE(fit.fits);
      EXPECT_EQ(fit.required_bytes, answer->required_bytes());
      EXPECT_EQ(answer->memory().workload().workload().context_length_tokens(), tokens);
      const int64_t model_max = model.architecture().max_context_length();
      if (tokens + step <= model_max) {
        // Memory binds: one block more does not fit.
        v1::InferenceWorkload beyond = request.workload();
        beyond.set_context_length_tokens(tokens + step);
        const ForwardResult over = Forward(model, c.target, beyond);
        EXPECT_FALSE(over.fits);
        EXPECT_EQ(over.required_bytes, answer->required_bytes_one_step_beyond());
        EXPECT_TRUE(absl::StartsWith(answer->binding_constraint(), "memory") ||
                    absl::StartsWith(answer->binding_constraint(), "the memory budget"))
            << answer->binding_constraint();
      } else {
        EXPECT_TRUE(absl::StartsWith(answer->binding_constraint(), "the model's maximum context"))
            << answer->binding_constraint();
        EXPECT_FALSE(answer->has_required_bytes_one_step_beyond());
      }
    }
  }
}

TEST(MaxContextTest, ABudgetOfExactlyTheEstimateAtAContextGivesThatContext) {
  // Independent of the search: the estimate's total at c tokens, as a
  // budget, holds c tokens and not c + 1 (the KV cache grows every token
  // below the sliding window).
  for (const auto& [name, context] :
       std::vector<std::pair<std::string, int64_t>>{{"models/llama-3-1-8b", 12345},
                                                    {"models/deepseek-v3", 50001},
                                                    {"models/gemma-2-9b", 7000},
                                                    {"models/mistral-7b-v0-1", 3001},
                                                    {"models/mixtral-8x7b-v0-1", 20000}}) {
    SCOPED_TRACE(name);
    const Model model = ShippedModel(name);
    v1::FindMaxContextRequest request;
    *request.mutable_source() = Source(name);
    *request.mutable_target() = InBudget(TotalBytesAt(model, context, 1));
    request.set_kv_block_size_tokens(1);
    auto answer = MaxContextFor(model, {}, request);
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_EQ(answer->max_context_length_tokens(), context);
    EXPECT_EQ(answer->required_bytes(), TotalBytesAt(model, context, 1));
    EXPECT_EQ(answer->required_bytes_one_step_beyond(), TotalBytesAt(model, context + 1, 1));
  }
}

TEST(MaxContextTest, SlidingWindowInEveryLayerStopsAtTheModelsMaximum) {
  // Mistral 7B's KV cache stops growing at its 4096-token window: a card
  // that holds the window holds the model's whole 32768 tokens.
  const Model model = ShippedModel("models/mistral-7b-v0-1");
  v1::FindMaxContextRequest request;
  *request.mutable_source() = Source(model.name());
  *request.mutable_target() = InBudget(TotalBytesAt(model, 4096, 1));
  auto answer = MaxContextFor(model, {}, request);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->max_context_length_tokens(), model.architecture().max_context_length());
  EXPECT_EQ(TotalBytesAt(model, 4096, 1), TotalBytesAt(model, 32768, 1));
}

TEST(MaxContextTest, NothingFitsSaysSoWithTheNeed) {
  const Model model = ShippedModel("models/llama-3-1-70b");
  v1::FindMaxContextRequest request;
  *request.mutable_source() = Source(model.name());
  *request.mutable_target() = OnCards("hardware/nvidia-t4", 1);
  auto answer = MaxContextFor(model, {ShippedHardware("hardware/nvidia-t4")}, request);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_FALSE(answer->fits());
  EXPECT_EQ(answer->max_context_length_tokens(), 0);
  EXPECT_GT(answer->required_bytes_one_step_beyond(), answer->available_bytes());
  EXPECT_TRUE(absl::StrContains(answer->binding_constraint(), "not even one KV block"));
}

// ---- the largest batch ------------------------------------------------

TEST(MaxBatchTest, TheForwardAnswerFitsAtItAndNotOneSequenceMore) {
  const std::vector<std::pair<Case, int64_t>> cases = {
      {{"models/llama-3-1-8b", OnCards("hardware/nvidia-l4", 1)}, 4096},
      {{"models/llama-3-1-8b", OnCards("hardware/nvidia-h100-sxm5-80gb", 1)}, 1000},
      {{"models/gemma-2-9b", OnCards("hardware/nvidia-l40s", 1)}, 8192},
      {{"models/mixtral-8x7b-v0-1", OnCards("hardware/nvidia-h100-sxm5-80gb", 4)}, 32768},
      {{"models/deepseek-v3", OnCards("hardware/nvidia-h200-sxm-141gb", 8),
        v1::NUMBER_FORMAT_FP8_BLOCK128},
       32000},
      {{"models/mistral-7b-v0-1", InBudget(int64_t{40'000'000'000})}, 0},
  };
  for (const auto& [c, context] : cases) {
    SCOPED_TRACE(c.model + " " + c.target.ShortDebugString());
    const Model model = ShippedModel(c.model);
    v1::FindMaxBatchRequest request;
    *request.mutable_source() = Source(c.model);
    *request.mutable_target() = c.target;
    request.mutable_workload()->set_context_length_tokens(context);
    request.mutable_workload()->set_weight_format(c.weights);
    std::vector<Hardware> hardware;
    if (c.target.has_hardware()) hardware.push_back(ShippedHardware(c.target.hardware()));
    auto answer = MaxBatchFor(model, hardware, request);
    ASSERT_TRUE(answer.ok()) << answer.status();
    ASSERT_TRUE(answer->fits()) << answer->binding_constraint();
    const int batch = answer->max_batch_size();
    EXPECT_GE(batch, 1);
    // Each sequence holds whole blocks of 16 tokens.
    const int64_t asked = context > 0 ? context : 4096;
    const int64_t held = (asked + 15) / 16 * 16;
    EXPECT_EQ(answer->memory().workload().workload().context_length_tokens(), held);
    v1::InferenceWorkload at = request.workload();
    at.set_context_length_tokens(held);
    at.set_batch_size(batch);
    EXPECT_TRUE(Forward(model, c.target, at).fits);
    at.set_batch_size(batch + 1);
    const ForwardResult over = Forward(model, c.target, at);
    EXPECT_FALSE(over.fits);
    EXPECT_EQ(over.required_bytes, answer->required_bytes_one_step_beyond());
  }
}

TEST(MaxBatchTest, ABudgetOfExactlyTheEstimateAtABatchGivesThatBatch) {
  const Model model = ShippedModel("models/llama-3-1-8b");
  for (int batch : {1, 7, 64}) {
    v1::FindMaxBatchRequest request;
    *request.mutable_source() = Source(model.name());
    *request.mutable_target() = InBudget(TotalBytesAt(model, 1008, batch));
    request.mutable_workload()->set_context_length_tokens(1000);  // 63 blocks of 16
    auto answer = MaxBatchFor(model, {}, request);
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_EQ(answer->max_batch_size(), batch);
    EXPECT_TRUE(absl::StrContains(answer->arithmetic(0), "63 KV blocks of 16 tokens = 1008"))
        << answer->arithmetic(0);
  }
}

// ---- the best weight format -------------------------------------------

TEST(BestWeightFormatTest, TheFirstFormatThatFitsAndEveryBetterOneDoesNot) {
  const std::vector<Case> cases = {
      {"models/llama-3-1-8b", OnCards("hardware/nvidia-l4", 1)},
      {"models/llama-3-1-8b", OnCards("hardware/nvidia-t4", 1)},
      {"models/llama-3-1-70b", OnCards("hardware/nvidia-h100-sxm5-80gb", 1)},
      {"models/deepseek-v3", OnCards("hardware/nvidia-h200-sxm-141gb", 8)},
      {"models/gemma-2-9b", InBudget(int64_t{8'000'000'000})},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.model + " " + c.target.ShortDebugString());
    const Model model = ShippedModel(c.model);
    v1::FindBestWeightFormatRequest request;
    *request.mutable_source() = Source(c.model);
    *request.mutable_target() = c.target;
    std::vector<Hardware> hardware;
    if (c.target.has_hardware()) hardware.push_back(ShippedHardware(c.target.hardware()));
    auto answer = BestWeightFormatFor(model, hardware, request);
    ASSERT_TRUE(answer.ok()) << answer.status();
    ASSERT_TRUE(answer->fits()) << answer->binding_constraint();
    bool reached = false;
    int64_t better_need = 0;
    for (NumberFormat format : WeightFormatsByPrecision()) {
      v1::InferenceWorkload at;
      at.set_weight_format(ToProtoNumberFormat(format));
      const ForwardResult forward = Forward(model, c.target, at);
      if (ToProtoNumberFormat(format) == answer->weight_format()) {
        EXPECT_TRUE(forward.fits);
        EXPECT_EQ(forward.required_bytes, answer->required_bytes());
        reached = true;
        break;
      }
      EXPECT_FALSE(forward.fits) << NumberFormatName(format) << " fits and is better";
      better_need = forward.required_bytes;
    }
    EXPECT_TRUE(reached);
    if (better_need > 0) {
      EXPECT_EQ(answer->required_bytes_one_step_beyond(), better_need);
    }
  }
}

TEST(BestWeightFormatTest, AStatedPreferenceIsFollowed) {
  // Llama 3.1 8B in bf16 needs more than a T4's usable 14.4 GiB; AWQ fits.
  const Model model = ShippedModel("models/llama-3-1-8b");
  v1::FindBestWeightFormatRequest request;
  *request.mutable_source() = Source(model.name());
  *request.mutable_target() = OnCards("hardware/nvidia-t4", 1);
  request.add_preferred_formats(v1::NUMBER_FORMAT_BF16);
  request.add_preferred_formats(v1::NUMBER_FORMAT_AWQ_INT4);
  request.add_preferred_formats(v1::NUMBER_FORMAT_GGUF_Q2_K);
  auto answer = BestWeightFormatFor(model, {ShippedHardware("hardware/nvidia-t4")}, request);
  ASSERT_TRUE(answer.ok()) << answer.status();
  v1::InferenceWorkload bf16;
  bf16.set_weight_format(v1::NUMBER_FORMAT_BF16);
  ASSERT_FALSE(Forward(model, request.target(), bf16).fits);
  EXPECT_EQ(answer->weight_format(), v1::NUMBER_FORMAT_AWQ_INT4);
  EXPECT_TRUE(absl::StrContains(answer->binding_constraint(), "bf16"))
      << answer->binding_constraint();
}

// ---- bad input --------------------------------------------------------

// ---- with offload to host memory ----------------------------------------

constexpr char kRtx4090[] = "hardware/nvidia-geforce-rtx-4090";
constexpr char kDesktop[] = "hardware/host-desktop-ddr5-6000-dual-channel";  // 64 GiB
constexpr char kEpyc[] = "hardware/host-2x-amd-epyc-9004-ddr5-4800";

v1::MemoryTarget WithOffload(v1::MemoryTarget target, v1::OffloadMode mode,
                             const std::string& host) {
  target.set_offload(mode);
  target.set_offload_host(host);
  return target;
}

// The forward plan with the target's offload, called directly.
struct OffloadForward {
  bool fits = false;
  int64_t required_bytes = 0;
  bool host_short = false;
  int64_t host_required_bytes = 0;
  v1::HardwarePlan plan;
};

OffloadForward PlanWithOffloadAt(const Model& model, const v1::MemoryTarget& target,
                                 const v1::InferenceWorkload& workload) {
  v1::PlanInferenceRequest request;
  *request.mutable_workload() = workload;
  request.set_max_cards(target.cards());
  request.set_offload(target.offload());
  request.set_offload_host(target.offload_host());
  const Hardware host = ShippedHardware(target.offload_host());
  auto plan = PlanInferenceFor(
      model, SharedRecords<common::v1::Hardware>({ShippedHardware(target.hardware())}), request,
      nullptr, nullptr, &host);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok() || plan->plans_size() != 1) return {};
  const v1::HardwarePlan& p = plan->plans(0);
  OffloadForward out{.fits = p.fits(), .required_bytes = p.required_bytes_per_card(), .plan = p};
  if (p.has_offload()) {
    out.host_required_bytes = p.offload().host_required_bytes();
    out.host_short = p.offload().host_required_bytes() > p.offload().host_usable_bytes();
  }
  return out;
}

// "The largest context on my one 4090 with 64 GB of host RAM": the answer
// comes with the layout (llama.cpp -ngl N), the forward plan with the same
// offload fits at it and not one block beyond, and the binding constraint
// names what is short there (here the host's memory). At Q6_K (about 54 GiB
// of weights) memory binds before the model's 131,072 tokens; at Q4_K_M
// card and host hold the whole context.
TEST(MaxContextWithOffloadTest, SeventyBillionOnOne4090AndA64GiBHost) {
  const Model model = ShippedModel("models/llama-3-1-70b");
  const Hardware host = ShippedHardware(kDesktop);
  const std::vector<Hardware> card = {ShippedHardware(kRtx4090)};
  for (int block : {1, 16, 256}) {
    SCOPED_TRACE(block);
    v1::FindMaxContextRequest request;
    *request.mutable_source() = Source(model.name());
    *request.mutable_target() = OnCards(kRtx4090, 1);
    request.mutable_workload()->set_weight_format(v1::NUMBER_FORMAT_GGUF_Q6_K);
    request.set_kv_block_size_tokens(block);
    // Without offload nothing fits: 70B at Q6_K is about 54 GiB.
    auto alone = MaxContextFor(model, card, request);
    ASSERT_TRUE(alone.ok()) << alone.status();
    EXPECT_FALSE(alone->fits());

    *request.mutable_target() = WithOffload(OnCards(kRtx4090, 1), v1::OFFLOAD_MODE_AUTO, kDesktop);
    auto answer = MaxContextFor(model, card, request, nullptr, &host);
    ASSERT_TRUE(answer.ok()) << answer.status();
    ASSERT_TRUE(answer->fits()) << answer->binding_constraint();
    const int64_t tokens = answer->max_context_length_tokens();
    EXPECT_EQ(tokens % block, 0);
    EXPECT_GT(tokens, 4096);
    ASSERT_TRUE(answer->plan().has_offload());
    EXPECT_EQ(answer->plan().offload().mode(), v1::OFFLOAD_MODE_LAYERS);
    EXPECT_TRUE(absl::StrContains(answer->plan().layout(), "-ngl ")) << answer->plan().layout();
    EXPECT_EQ(
        answer->plan().offload().layers_on_cards() + answer->plan().offload().layers_in_host(), 80);
    EXPECT_GT(answer->host_required_bytes(), 0);
    EXPECT_LE(answer->host_required_bytes(), answer->host_available_bytes());
    EXPECT_LT(answer->host_available_bytes(), int64_t{64} << 30);

    v1::InferenceWorkload at = request.workload();
    at.set_context_length_tokens(tokens);
    const OffloadForward fit = PlanWithOffloadAt(model, request.target(), at);
    EXPECT_TRUE(fit.fits) << fit.plan.reason();
    EXPECT_EQ(fit.required_bytes, answer->required_bytes());
    EXPECT_EQ(fit.host_required_bytes, answer->host_required_bytes());
    EXPECT_EQ(fit.plan.layout(), answer->plan().layout());
    ASSERT_LT(tokens + block, model.architecture().max_context_length());
    at.set_context_length_tokens(tokens + block);
    const OffloadForward over = PlanWithOffloadAt(model, request.target(), at);
    EXPECT_FALSE(over.fits);
    EXPECT_EQ(over.required_bytes, answer->required_bytes_one_step_beyond());
    EXPECT_EQ(over.host_required_bytes, answer->host_required_bytes_one_step_beyond());
    // The binding constraint is what is short one block beyond.
    ASSERT_TRUE(over.host_short) << over.plan.reason();
    EXPECT_TRUE(absl::StartsWith(answer->binding_constraint(), "host memory (Desktop"))
        << answer->binding_constraint();
    bool layout_said = false;
    for (const std::string& line : answer->arithmetic()) {
      layout_said |= absl::StartsWith(line, "layout at the answer: ");
    }
    EXPECT_TRUE(layout_said);
  }
}

// The largest batch and the best format with offload: the same exactness,
// and with a host that holds everything the card binds (not even one layer
// with its batch's KV cache fits on it), named as card memory.
TEST(MaxBatchWithOffloadTest, TheForwardPlanWithOffloadFitsAtItAndNotOneSequenceMore) {
  struct OffloadCase {
    std::string model;
    v1::OffloadMode mode;
    std::string host;
    int64_t context;
  };
  const std::vector<OffloadCase> cases = {
      {"models/llama-3-1-70b", v1::OFFLOAD_MODE_LAYERS, kDesktop, 4096},
      {"models/mixtral-8x7b-v0-1", v1::OFFLOAD_MODE_EXPERTS, kDesktop, 8192},
      {"models/llama-3-1-70b", v1::OFFLOAD_MODE_LAYERS, kEpyc, 32768},
  };
  const std::vector<Hardware> card = {ShippedHardware(kRtx4090)};
  for (const OffloadCase& c : cases) {
    SCOPED_TRACE(c.model + " " + c.host);
    const Model model = ShippedModel(c.model);
    const Hardware host = ShippedHardware(c.host);
    v1::FindMaxBatchRequest request;
    *request.mutable_source() = Source(c.model);
    *request.mutable_target() = WithOffload(OnCards(kRtx4090, 1), c.mode, c.host);
    request.mutable_workload()->set_context_length_tokens(c.context);
    request.mutable_workload()->set_weight_format(v1::NUMBER_FORMAT_GGUF_Q4_K_M);
    auto answer = MaxBatchFor(model, card, request, nullptr, &host);
    ASSERT_TRUE(answer.ok()) << answer.status();
    ASSERT_TRUE(answer->fits()) << answer->binding_constraint();
    ASSERT_TRUE(answer->plan().has_offload());
    EXPECT_EQ(answer->plan().offload().mode(), c.mode);
    const int batch = answer->max_batch_size();
    v1::InferenceWorkload at = request.workload();
    at.set_batch_size(batch);
    const OffloadForward fit = PlanWithOffloadAt(model, request.target(), at);
    EXPECT_TRUE(fit.fits) << fit.plan.reason();
    EXPECT_EQ(fit.host_required_bytes, answer->host_required_bytes());
    at.set_batch_size(batch + 1);
    const OffloadForward over = PlanWithOffloadAt(model, request.target(), at);
    EXPECT_FALSE(over.fits);
    EXPECT_EQ(over.required_bytes, answer->required_bytes_one_step_beyond());
    EXPECT_EQ(over.host_required_bytes, answer->host_required_bytes_one_step_beyond());
    if (over.host_short) {
      EXPECT_TRUE(absl::StartsWith(answer->binding_constraint(), "host memory ("))
          << answer->binding_constraint();
    } else {
      EXPECT_TRUE(absl::StartsWith(answer->binding_constraint(), "memory per card ("))
          << answer->binding_constraint();
      EXPECT_TRUE(absl::StrContains(answer->binding_constraint(), "with offload"));
    }
  }

  // The best format with offload: the first that fits with the host's help.
  const Model model = ShippedModel("models/llama-3-1-70b");
  const Hardware host = ShippedHardware(kDesktop);
  v1::FindBestWeightFormatRequest request;
  *request.mutable_source() = Source(model.name());
  *request.mutable_target() = WithOffload(OnCards(kRtx4090, 1), v1::OFFLOAD_MODE_LAYERS, kDesktop);
  request.mutable_workload()->set_context_length_tokens(8192);
  auto answer = BestWeightFormatFor(model, card, request, nullptr, &host);
  ASSERT_TRUE(answer.ok()) << answer.status();
  ASSERT_TRUE(answer->fits()) << answer->binding_constraint();
  v1::InferenceWorkload at = request.workload();
  at.set_weight_format(answer->weight_format());
  EXPECT_TRUE(PlanWithOffloadAt(model, request.target(), at).fits);
  // 16-bit 70B (140 GB) does not fit card and host (about 22 + 60 GiB usable);
  // the first 8-bit format of the list (gguf-q8_0, 8.5 bits) does, and the
  // host's memory is what stops the 16-bit one.
  const absl::StatusOr<NumberFormat> chosen =
      ToCoreNumberFormat(answer->weight_format(), NumberFormat::kBf16, "");
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(*chosen, NumberFormat::kGgufQ8_0) << NumberFormatName(*chosen);
  at.set_weight_format(v1::NUMBER_FORMAT_FP16);
  const OffloadForward better = PlanWithOffloadAt(model, request.target(), at);
  EXPECT_FALSE(better.fits);
  EXPECT_TRUE(better.host_short);
  EXPECT_EQ(better.host_required_bytes, answer->host_required_bytes_one_step_beyond());
  EXPECT_TRUE(absl::StartsWith(answer->binding_constraint(), "host memory ("))
      << answer->binding_constraint();
}

TEST(InverseValidationTest, OffloadFieldsAreNamed) {
  auto fields = [](const absl::Status& status) {
    std::set<std::string> out;
    for (const FieldViolation& v : GetFieldViolations(status)) out.insert(v.field);
    return out;
  };
  v1::FindMaxContextRequest request;
  *request.mutable_source() = Source("models/llama-3-1-70b");
  *request.mutable_target() = OnCards(kRtx4090, 1);
  request.mutable_target()->set_offload(v1::OFFLOAD_MODE_LAYERS);
  EXPECT_EQ(fields(ValidateInverseRequest(request)),
            (std::set<std::string>{"target.offload_host"}));
  request.mutable_target()->set_offload(v1::OFFLOAD_MODE_UNSPECIFIED);
  request.mutable_target()->set_offload_host(kDesktop);
  EXPECT_EQ(fields(ValidateInverseRequest(request)), (std::set<std::string>{"target.offload"}));
  request.mutable_target()->set_offload(static_cast<v1::OffloadMode>(42));
  EXPECT_EQ(fields(ValidateInverseRequest(request)), (std::set<std::string>{"target.offload"}));
  v1::FindMaxBatchRequest budget;
  *budget.mutable_source() = Source("models/llama-3-1-70b");
  *budget.mutable_target() =
      WithOffload(InBudget(int64_t{1} << 34), v1::OFFLOAD_MODE_AUTO, kDesktop);
  EXPECT_EQ(fields(ValidateInverseRequest(budget)), (std::set<std::string>{"target.offload"}));

  // Read through the source: an unknown host is NOT_FOUND naming it, and
  // experts for a dense model name target.offload.
  auto records = std::make_shared<testing::FakeRecords>();
  records->Add(ShippedModel("models/llama-3-1-70b"));
  records->Add(ShippedHardware(kRtx4090));
  records->Add(ShippedHardware(kDesktop));
  *request.mutable_target() =
      WithOffload(OnCards(kRtx4090, 1), v1::OFFLOAD_MODE_LAYERS, "hardware/no-such-host");
  request.mutable_workload()->set_weight_format(v1::NUMBER_FORMAT_GGUF_Q4_K_M);
  absl::StatusOr<v1::InverseAnswer> answer = absl::UnknownError("not called");
  AnswerFindMaxContext(records, request, [&](absl::StatusOr<v1::InverseAnswer> a) { answer = a; });
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(answer.status().message(), "target.offload_host"));
  EXPECT_TRUE(absl::StrContains(answer.status().message(), "no-such-host"));
  request.mutable_target()->set_offload_host(kDesktop);
  request.mutable_target()->set_offload(v1::OFFLOAD_MODE_EXPERTS);
  AnswerFindMaxContext(records, request, [&](absl::StatusOr<v1::InverseAnswer> a) { answer = a; });
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(fields(answer.status()), (std::set<std::string>{"target.offload"}));
  request.mutable_target()->set_offload(v1::OFFLOAD_MODE_AUTO);
  AnswerFindMaxContext(records, request, [&](absl::StatusOr<v1::InverseAnswer> a) { answer = a; });
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_TRUE(answer->fits());
  EXPECT_TRUE(answer->plan().has_offload());
}

TEST(InverseValidationTest, BadFieldsAreNamed) {
  auto fields = [](const absl::Status& status) {
    std::set<std::string> out;
    for (const FieldViolation& v : GetFieldViolations(status)) out.insert(v.field);
    return out;
  };
  v1::FindMaxContextRequest context;
  EXPECT_EQ(fields(ValidateInverseRequest(context)), (std::set<std::string>{"source", "target"}));
  *context.mutable_source() = Source("models/llama-3-1-8b");
  *context.mutable_target() = OnCards("hardware/nvidia-l4", 1025);
  context.mutable_workload()->set_context_length_tokens(8192);
  context.set_kv_block_size_tokens(-1);
  EXPECT_EQ(fields(ValidateInverseRequest(context)),
            (std::set<std::string>{"target.cards", "workload.context_length_tokens",
                                   "kv_block_size_tokens"}));
  *context.mutable_target() = OnCards("hardware/nvidia-l4", -1);
  context.clear_workload();
  context.set_kv_block_size_tokens(0);
  EXPECT_EQ(fields(ValidateInverseRequest(context)), (std::set<std::string>{"target.cards"}));

  v1::FindMaxBatchRequest batch;
  *batch.mutable_source() = Source("models/llama-3-1-8b");
  *batch.mutable_target() = InBudget(0);
  batch.mutable_workload()->set_batch_size(4);
  batch.mutable_workload()->set_context_length_tokens(-5);
  EXPECT_EQ(fields(ValidateInverseRequest(batch)),
            (std::set<std::string>{"target.memory_budget_bytes", "workload.batch_size",
                                   "workload.context_length_tokens"}));

  v1::FindBestWeightFormatRequest format;
  *format.mutable_source() = Source("models/llama-3-1-8b");
  *format.mutable_target() = InBudget(1 << 30);
  format.mutable_target()->set_cards(2);
  format.mutable_workload()->set_weight_format(v1::NUMBER_FORMAT_FP8);
  format.add_preferred_formats(v1::NUMBER_FORMAT_UNSPECIFIED);
  EXPECT_EQ(
      fields(ValidateInverseRequest(format)),
      (std::set<std::string>{"target.cards", "workload.weight_format", "preferred_formats[0]"}));
}

TEST(InverseAnswersTest, RecordsAreReadThroughTheSourceAndMissingOnesAreNamed) {
  auto records = std::make_shared<testing::FakeRecords>();
  records->Add(ShippedModel("models/llama-3-1-8b"));
  records->Add(ShippedHardware("hardware/nvidia-l4"));
  v1::FindMaxContextRequest request;
  *request.mutable_source() = Source("Llama 3.1 8B");
  *request.mutable_target() = OnCards("hardware/nvidia-l4", 1);
  absl::StatusOr<v1::InverseAnswer> answer = absl::UnknownError("not called");
  AnswerFindMaxContext(records, request, [&](absl::StatusOr<v1::InverseAnswer> a) { answer = a; });
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->model(), "models/llama-3-1-8b");
  EXPECT_GT(answer->max_context_length_tokens(), 0);

  *request.mutable_target() = OnCards("hardware/no-such-card", 1);
  AnswerFindMaxContext(records, request, [&](absl::StatusOr<v1::InverseAnswer> a) { answer = a; });
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(answer.status().message(), "hardware/no-such-card"));

  v1::FindBestWeightFormatRequest format;
  *format.mutable_source() = Source("No Such Model");
  *format.mutable_target() = InBudget(int64_t{1} << 34);
  AnswerFindBestWeightFormat(records, format,
                             [&](absl::StatusOr<v1::InverseAnswer> a) { answer = a; });
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(answer.status().message(), "No Such Model"));
}

}  // namespace
}  // namespace modelatlas::estimator
