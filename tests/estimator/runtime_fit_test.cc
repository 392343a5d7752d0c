// A plan under a runtime's own rules (docs/FORMULAS.md, "A runtime's own
// fit") and the newer models of the same size (issue 21, points 5 and 6).
#include "estimator-service/core/runtime_fit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/formats/hf_config.h"
#include "estimator-service/answers/newer_models.h"
#include "estimator-service/answers/runtime.h"
#include "estimator-service/core/fit_matrix.h"
#include "estimator-service/core/runtime_support.h"
#include "tests/estimator/fake_records.h"

namespace modelatlas::estimator {
namespace {

constexpr double kGiB = 1073741824.0;

// Llama-3.1-8B: 32 layers, 8 KV heads of 128, bf16 KV = 131,072 bytes per
// token (docs/FORMULAS.md).
constexpr double kKvBytesPerToken = 2.0 * 32 * 8 * 128 * 2;

RuntimeModel Llama8BModel() {
  return {.repo_id = "meta-llama/Llama-3.1-8B",
          .num_layers = 32,
          .num_attention_heads = 32,
          .hidden_size = 4096,
          .intermediate_size = 14336,
          .vocab_size = 128256,
          .max_context_length = 131072,
          .model_type = "llama",
          .family = "llama"};
}

// Gemma 3 27B's shape: 62 layers, 52 of them in a 1,024-token window.
RuntimeModel Gemma3_27BModel() {
  return {.repo_id = "google/gemma-3-27b-it",
          .num_layers = 62,
          .num_attention_heads = 32,
          .hidden_size = 5376,
          .intermediate_size = 21504,
          .vocab_size = 262208,
          .max_context_length = 131072,
          .sliding_window = 1024,
          .sliding_window_layers = 52,
          .model_type = "gemma3_text",
          .family = "gemma3"};
}

PlanInput Llama8B(int64_t context, int batch = 1) {
  PlanInput w;
  w.sizing.parameters = 8030261248;
  w.sizing.weight_bytes = 8030261248.0 * 2;
  w.sizing.kv_cache_bytes = kKvBytesPerToken * context * batch;
  w.sizing.activation_bytes = 44553216;
  w.sizing.overhead_bytes = kGiB;
  w.sizing.num_attention_heads = 32;
  w.sizing.num_key_value_heads = 8;
  w.sizing.num_layers = 32;
  w.sizing.hidden_size = 4096;
  w.sizing.context_length_tokens = context;
  w.workload.context_length_tokens = context;
  w.workload.batch_size = batch;
  return w;
}

// What one process can allocate, CUDA's total (the shipped records'
// allocatable_memory_bytes): H100 SXM5 81,079 MiB (deviceQuery, CUDA 13.0;
// vLLM logs 79.18 GiB), where nvidia-smi shows 81,559; the L4 below keeps
// nvidia-smi's 23,034 MiB, a card of its size.
constexpr double kH100CudaTotal = 85017755648.0;
DeviceSpec H100() {
  DeviceSpec d;
  d.name = "hardware/nvidia-h100-sxm5-80gb";
  d.display_name = "NVIDIA H100 SXM5 80 GB";
  d.memory_bytes = 80 * kGiB;
  d.allocatable_memory_bytes = kH100CudaTotal;
  return d;
}
DeviceSpec L4() {
  DeviceSpec d;
  d.name = "hardware/nvidia-l4";
  d.display_name = "NVIDIA L4";
  d.memory_bytes = 24 * kGiB;
  d.allocatable_memory_bytes = 23034.0 * 1048576;
  return d;
}

// The same card in an NVLink node: 900 GB/s both directions (450 per
// direction), 8 cards.
DeviceSpec LinkedH100() {
  DeviceSpec d = H100();
  d.links.scale_up_bytes_per_second = 450e9;
  d.links.scale_up_domain_size = 8;
  return d;
}

RuntimeFit Fit(Runtime runtime, const PlanInput& input, const DeviceSpec& device,
               DevicePlan* plan_out = nullptr) {
  const DevicePlan plan = PlanOnDevice(input, device);
  if (plan_out != nullptr) *plan_out = plan;
  return FitRuntime(runtime, Llama8BModel(), input.sizing, input.workload, device, plan, "NVIDIA");
}

double Reserved(const RuntimeFit& fit, const std::string& component) {
  for (const RuntimeReservation& r : fit.reserved) {
    if (r.component == component) return r.bytes;
  }
  ADD_FAILURE() << "no " << component;
  return 0;
}

// Published: vLLM issue #19996 (vllm-project/vllm, 2025-06-23, vLLM
// 0.9.1.dev, one H100 80GB, Llama 3.1 8B Instruct with an EAGLE draft
// head): "Available KV cache memory: 51.63 GiB", "GPU KV cache size:
// 410,128 tokens", "Maximum concurrency for 131,072 tokens per request:
// 3.13x". The EAGLE head adds one decoder layer's KV: 33 layers x 8 KV heads
// x 128 x 2 (K, V) x 2 bytes = 135,168 bytes per token. From the logged KV
// memory (rounded to 0.01 GiB, so +-2.5 blocks) the block arithmetic gives
// the logged tokens and concurrency.
TEST(RuntimeFitTest, VllmBlocksReproduceAPublishedLog) {
  const double per_token = 2.0 * 33 * 8 * 128 * 2;
  const VllmBlocks cache = VllmKvBlocks(51.63 * kGiB, per_token, 131072);
  EXPECT_NEAR(static_cast<double>(cache.tokens), 410128, 3 * 16);
  EXPECT_EQ(cache.tokens, cache.blocks * 16);
  EXPECT_EQ(cache.blocks_per_sequence, 131072 / 16);
  EXPECT_NEAR(cache.max_concurrency, 3.13, 0.005);
  // One block less memory, one block fewer.
  const VllmBlocks less = VllmKvBlocks(cache.blocks * 16 * per_token - 1, per_token, 131072);
  EXPECT_EQ(less.blocks, cache.blocks - 1);
}

// Published: llm-d/llm-d-benchmark config_explorer/empirical-vllm-memory-
// results.md (commit 4f4d4494), vLLM's own log of
// meta-llama/Llama-3.1-8B-Instruct on one H100 (79.18 GiB), max-model-len
// 16000, defaults otherwise: 14.99 GiB of weights, 4.76 GiB of peak
// activation, 0.13 GiB non-torch, 51.38 GiB for the KV cache. Predicted
// from the model alone: 0.9 x 79.18 GiB - 14.96 GiB weights - 4.71 GiB
// activation peak (1,024 sequences x 128,256 x 38.5 bytes) - 1 GiB = 50.59
// GiB, 1.5% under the log: the workload's 1 GiB of non-torch memory is
// conservative (docs/ACCURACY.md).
TEST(RuntimeFitTest, VllmKvMemoryOnH100IsNearThePublishedLog) {
  DevicePlan plan;
  const RuntimeFit fit = Fit(Runtime::kVllm, Llama8B(16000), H100(), &plan);
  ASSERT_TRUE(plan.fits);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.version, "vLLM 0.11.x");
  const double total = kH100CudaTotal;
  // The parts add up: the KV cache is the budget less the rest.
  EXPECT_NEAR(Reserved(fit, "budget"), total * 0.9, 1);
  EXPECT_NEAR(Reserved(fit, "kv_cache"),
              Reserved(fit, "budget") - Reserved(fit, "weights") -
                  Reserved(fit, "activation_peak") - Reserved(fit, "non_torch"),
              1);
  // vllm serve on a card of 70 GiB or more: 8192 batched tokens, 1024
  // sequences; the sampler's peak is the larger.
  EXPECT_NEAR(Reserved(fit, "activation_peak"), 1024.0 * 128256 * kVllmSamplerBytesPerLogit, 1);
  EXPECT_NEAR(Reserved(fit, "activation_peak") / kGiB, 4.76, 0.06);
  const double ratio = fit.kv_cache_bytes_per_card / (51.38 * kGiB);
  EXPECT_LE(ratio, 1.0);  // never more than vLLM keeps
  EXPECT_GT(ratio, 0.97);
  // Blocks and concurrency from the predicted memory.
  const VllmBlocks cache = VllmKvBlocks(fit.kv_cache_bytes_per_card, kKvBytesPerToken, 16000);
  EXPECT_EQ(*fit.kv_cache_blocks, cache.blocks);
  EXPECT_EQ(fit.kv_cache_tokens, cache.tokens);
  EXPECT_DOUBLE_EQ(*fit.max_concurrency, cache.max_concurrency);
  EXPECT_GT(*fit.max_concurrency, 20.0);
  EXPECT_EQ(fit.launch_command, "vllm serve meta-llama/Llama-3.1-8B --max-model-len 16000");
  EXPECT_FALSE(fit.model_id_placeholder);
}

TEST(RuntimeFitTest, VllmCommandSetsOnlyFlagsThatDifferOrAreNeeded) {
  PlanInput input = Llama8B(8192, 4);
  input.workload.kv_cache_format = NumberFormat::kFp8;
  input.sizing.kv_cache_bytes /= 2;
  const RuntimeFit fit = Fit(Runtime::kVllm, input, H100());
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.launch_command,
            "vllm serve meta-llama/Llama-3.1-8B --max-model-len 8192 --kv-cache-dtype fp8");
  // Four sequences of 8,192 tokens: 4 x 512 blocks needed.
  EXPECT_NEAR(fit.kv_cache_bytes_needed_per_card, 4 * 512 * 16 * kKvBytesPerToken / 2, 1);
}

// On an L4 (22.49 GiB here) the plan fits 26k tokens at 0.9, vLLM's profiled
// peak does not: the command raises --gpu-memory-utilization to what the
// workload needs, (14.96 + 1.18 + 1 + 1,664 blocks x 2 MiB) / 22.49 = 0.91,
// which still leaves the CUDA context (0.6 GiB) and graphs (0.35 GiB + 32
// layers x 25 MiB) outside the budget: at most 0.92. At 32k it would need
// 0.94: it does not fit.
TEST(RuntimeFitTest, VllmIsStricterThanThePlanAndRaisesTheUtilization) {
  DevicePlan plan;
  const RuntimeFit fit = Fit(Runtime::kVllm, Llama8B(26624), L4(), &plan);
  ASSERT_TRUE(plan.fits);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_TRUE(absl::StrContains(fit.launch_command, "--gpu-memory-utilization 0.91"))
      << fit.launch_command;
  EXPECT_TRUE(absl::StrContains(fit.reason, "at 0.9 it does not")) << fit.reason;
  // Below 70 GiB: 2048 batched tokens, 256 sequences; the sampler's peak is
  // the larger.
  EXPECT_NEAR(Reserved(fit, "activation_peak"), 256.0 * 128256 * kVllmSamplerBytesPerLogit, 1);
  EXPECT_GT(Reserved(fit, "activation_peak"), 2048.0 * (4096 + 3 * 14336) * 2);
  EXPECT_GE(*fit.kv_cache_blocks, 26624 / 16);

  DevicePlan longer_plan;
  const RuntimeFit longer = Fit(Runtime::kVllm, Llama8B(32768), L4(), &longer_plan);
  ASSERT_TRUE(longer_plan.fits);
  EXPECT_FALSE(longer.fits) << longer.reason;
  bool explained = false;
  for (const std::string& note : longer.notes) {
    explained = explained || absl::StrContains(note, "at most 0.92");
  }
  EXPECT_TRUE(explained) << "no note says why the utilization is not raised to 0.94";
}

// vLLM 0.21.0 and later (PR #38284) default to a utilization of 0.92 and
// take the CUDA graph estimate out of the KV budget. Every vLLM fit says
// what its command would keep there: on an H100 at the default, 0.92 of the
// card less the same reserves and the graphs, enough for 8,192 tokens; on
// the L4 whose command sets 0.91, the graphs' 1.13 GiB leave too little, and
// the note names the utilization that would do.
TEST(RuntimeFitTest, VllmSaysWhatItsCommandKeepsUnderLaterReleases) {
  const auto later_note = [](const RuntimeFit& fit) -> std::string {
    for (const std::string& note : fit.notes) {
      if (absl::StrContains(note, "vLLM 0.21.0 and later")) return note;
    }
    return "";
  };
  const double graphs = VllmCudaGraphBytes(Llama8BModel(), 1, nullptr);
  EXPECT_NEAR(graphs / kGiB, 0.35 + 32 * 25.0 / 1024, 0.01);
  const auto reserves = [](const RuntimeFit& fit) {
    return Reserved(fit, "weights") + Reserved(fit, "activation_peak") + Reserved(fit, "non_torch");
  };

  const RuntimeFit h100 = Fit(Runtime::kVllm, Llama8B(8192), H100());
  ASSERT_TRUE(h100.fits) << h100.reason;
  const std::string roomy = later_note(h100);
  const double kept = kH100CudaTotal * 0.92 - reserves(h100) - graphs;
  EXPECT_TRUE(absl::StrContains(roomy, absl::StrFormat("at 0.92 (their default), keeps about "
                                                       "%.2f GiB",
                                                       kept / kGiB)))
      << roomy;
  EXPECT_TRUE(absl::StrContains(roomy, "enough for the batch")) << roomy;

  const RuntimeFit l4 = Fit(Runtime::kVllm, Llama8B(26624), L4());
  ASSERT_TRUE(l4.fits) << l4.reason;
  const std::string tight = later_note(l4);
  const double total = 23034.0 * 1048576;
  const double needed = l4.kv_cache_bytes_needed_per_card;
  EXPECT_LT(total * 0.91 - reserves(l4) - graphs, needed);
  EXPECT_TRUE(absl::StrContains(tight, "at 0.91, keeps about")) << tight;
  EXPECT_TRUE(absl::StrContains(
      tight, absl::StrFormat("pass --gpu-memory-utilization %g there",
                             std::ceil((reserves(l4) + graphs + needed) / total * 100) / 100)))
      << tight;
}

// SGLang 0.5.3 and later (PRs #10975 and #11076) reserve 512 MiB + 1.5 MiB
// per chunked-prefill token + 2 MiB per CUDA graph batch entry + TP x PP / 8
// GiB (at least 10 GiB over 60 GiB): 13,440 MiB on an H100 of 81,079 MiB,
// 0.834 (0.835 at nvidia-smi's 81,559 MiB; a public survey of the rule
// quotes "about 0.836"); 3,760 MiB and 0.837 on an L4. Every SGLang fit says
// what its command keeps there: Llama 3.1 8B at 26,624 tokens fits an L4
// under the card-size rule (0.871) and not under the later one.
TEST(RuntimeFitTest, SglangSaysWhatItsCommandKeepsUnderLaterReleases) {
  double reserved = 0;
  EXPECT_DOUBLE_EQ(SglangLaterMemFractionStatic(kH100CudaTotal, 1, &reserved), 0.834);
  EXPECT_DOUBLE_EQ(reserved, 512 + 8192 * 1.5 + 256 * 2 + 1024.0 / 8);
  EXPECT_DOUBLE_EQ(SglangLaterMemFractionStatic(81559.0 * 1048576, 1, nullptr), 0.835);
  EXPECT_DOUBLE_EQ(SglangLaterMemFractionStatic(23034.0 * 1048576, 1, &reserved), 0.837);
  EXPECT_DOUBLE_EQ(reserved, 512 + 2048 * 1.5 + 24 * 2 + 1024.0 / 8);
  const auto later_note = [](const RuntimeFit& fit) -> std::string {
    for (const std::string& note : fit.notes) {
      if (absl::StrContains(note, "SGLang 0.5.3 and later")) return note;
    }
    return "";
  };
  const RuntimeFit h100 = Fit(Runtime::kSglang, Llama8B(8192), H100());
  ASSERT_TRUE(h100.fits) << h100.reason;
  EXPECT_TRUE(absl::StrContains(later_note(h100), "13440 MiB here, a default of 0.834"))
      << later_note(h100);
  EXPECT_TRUE(absl::StrContains(later_note(h100), "enough for the batch")) << later_note(h100);
  const RuntimeFit l4 = Fit(Runtime::kSglang, Llama8B(26624), L4());
  ASSERT_TRUE(l4.fits) << l4.reason;
  EXPECT_TRUE(absl::StrContains(later_note(l4), "short of the batch's 3.25 GiB")) << later_note(l4);
  // A larger fraction would take what that rule keeps for activations and
  // graphs: the note says the plan does not fit there, not which flag to pass.
  EXPECT_TRUE(absl::StrContains(later_note(l4), "the plan does not fit there")) << later_note(l4);
}

// The plan fits at the workload's 0.95; vLLM would need more than 0.95 of
// the card: it does NOT fit, and says why.
TEST(RuntimeFitTest, WhenTheRuntimeIsStricterThePlanDoesNotFitUnderIt) {
  PlanInput input = Llama8B(40960);
  input.workload.memory_utilization = 0.95;
  DevicePlan plan;
  const RuntimeFit fit = Fit(Runtime::kVllm, input, L4(), &plan);
  ASSERT_TRUE(plan.fits);
  EXPECT_FALSE(fit.fits);
  EXPECT_TRUE(fit.launch_command.empty());
  EXPECT_TRUE(absl::StrContains(fit.reason, "vLLM refuses to start")) << fit.reason;
  EXPECT_LT(*fit.kv_cache_blocks, 40960 / 16);
}

// On a 12 GiB card vLLM's default 0.9 leaves 1.2 GiB outside the budget,
// less than the CUDA context (0.6 GiB) and the graphs of 32 layers (0.35
// GiB + 32 x 25 MiB) need: 1.73 GiB, so the command lowers it to
// floor((1 - 1.73 / 12) x 100) / 100 = 0.85. Llama-3.1-8B with int8 weights:
// (0.85 x 12 - 7.48 - 1.18 activation peak - 1) GiB = 0.54 GiB of KV cache,
// 278 blocks, 4,448 tokens: 2,048 tokens fit, 6,144 do not (the plan fits
// both at 0.9).
TEST(RuntimeFitTest, VllmLeavesTheCudaContextAndGraphsOutsideTheBudget) {
  DeviceSpec card = L4();
  card.memory_bytes = 12 * kGiB;
  card.allocatable_memory_bytes = 12 * kGiB;
  PlanInput shorter = Llama8B(2048);
  shorter.sizing.weight_bytes = 8030261248.0;
  DevicePlan plan;
  const RuntimeFit lowered = Fit(Runtime::kVllm, shorter, card, &plan);
  ASSERT_TRUE(plan.fits) << plan.reason;
  ASSERT_TRUE(lowered.fits) << lowered.reason;
  EXPECT_TRUE(absl::StrContains(lowered.launch_command, "--gpu-memory-utilization 0.85"))
      << lowered.launch_command;
  EXPECT_TRUE(absl::StrContains(lowered.reason, "lowered from 0.9")) << lowered.reason;
  EXPECT_EQ(*lowered.kv_cache_blocks,
            std::floor((0.85 * 12 * kGiB - 8030261248.0 -
                        256.0 * 128256 * kVllmSamplerBytesPerLogit - kGiB) /
                       (16 * kKvBytesPerToken)));
  EXPECT_NEAR(Reserved(lowered, "budget"), 0.85 * 12 * kGiB, 1);

  PlanInput longer = Llama8B(6144);
  longer.sizing.weight_bytes = 8030261248.0;
  const RuntimeFit does_not = Fit(Runtime::kVllm, longer, card, &plan);
  ASSERT_TRUE(plan.fits) << plan.reason;
  EXPECT_FALSE(does_not.fits) << does_not.reason;
  EXPECT_TRUE(does_not.launch_command.empty()) << does_not.launch_command;

  // The graphs' estimate: per layer on the card, more for
  // mixture-of-experts layers.
  RuntimeModel dense = Llama8BModel();
  EXPECT_NEAR(VllmCudaGraphBytes(dense, 1, nullptr), 0.35 * kGiB + 32 * 25 * 1048576.0, 1);
  EXPECT_NEAR(VllmCudaGraphBytes(dense, 4, nullptr), 0.35 * kGiB + 8 * 25 * 1048576.0, 1);
  RuntimeModel moe = dense;
  moe.mixture_of_experts = true;
  EXPECT_NEAR(VllmCudaGraphBytes(moe, 1, nullptr), 0.35 * kGiB + 32 * 60 * 1048576.0, 1);
}

// Tensor-parallel cards over NVLink: vLLM counts NCCL's and its all-reduce
// buffers as non-torch memory inside the budget (2.07-2.21 GiB in its
// 0.19.0 logs on H100s, docs/ACCURACY.md), so the fit reserves 2.25 GiB
// where one card, or cards without a link on record, keep the workload's
// 1 GiB; the KV cache is 1.25 GiB smaller for it.
TEST(RuntimeFitTest, VllmReservesTheNonTorchMemoryOfLinkedCards) {
  PlanInput input = Llama8B(16000);
  input.sizing.weight_bytes = 100 * kGiB;  // two cards
  DevicePlan plan;
  const RuntimeFit linked = Fit(Runtime::kVllm, input, LinkedH100(), &plan);
  ASSERT_EQ(plan.tensor_parallel, 2);
  ASSERT_TRUE(linked.fits) << linked.reason;
  EXPECT_NEAR(Reserved(linked, "non_torch"), 2.25 * kGiB, 1);
  EXPECT_TRUE(absl::StrContains(linked.reserved[3].arithmetic, "over the scale-up link"))
      << linked.reserved[3].arithmetic;
  const RuntimeFit pcie = Fit(Runtime::kVllm, input, H100());
  EXPECT_NEAR(Reserved(pcie, "non_torch"), kGiB, 1);
  EXPECT_NEAR(Reserved(pcie, "kv_cache") - Reserved(linked, "kv_cache"), 1.25 * kGiB, 1);
  // One card keeps the workload's overhead, link or not.
  const RuntimeFit one = Fit(Runtime::kVllm, Llama8B(16000), LinkedH100());
  EXPECT_NEAR(Reserved(one, "non_torch"), kGiB, 1);
  // A larger overhead asked for is kept.
  EXPECT_DOUBLE_EQ(VllmNonTorchBytes(3 * kGiB, 4, LinkedH100().links, nullptr), 3 * kGiB);
}

// A server of more than one card keeps NCCL's start-up buffers (1.75 GiB)
// outside the budget besides the CUDA context and graphs (1 GiB), so a raised
// --gpu-memory-utilization stops lower: on two 24 GiB cards at
// floor((1 - 2.75 / 24) x 100) / 100 = 0.88, below the default, so not at
// all; one card still goes to 0.95.
TEST(RuntimeFitTest, VllmKeepsNcclsStartupBuffersOutsideTheBudgetOnSeveralCards) {
  EXPECT_EQ(VllmNcclStartupBytes(1), 0);
  EXPECT_DOUBLE_EQ(VllmNcclStartupBytes(2), 1.75 * kGiB);  // tensor-parallel or stages
  // Llama 3.1 8B at 32,768 tokens x 6 sequences on two 24 GiB cards: the
  // plan fits at 0.9; vLLM needs (7.48 weights + 1.18 activation peak + 1
  // + 12 KV) / 24 = 0.91 per card, more than 0.88.
  PlanInput input = Llama8B(32768, 6);
  DeviceSpec card = L4();
  card.memory_bytes = 24 * kGiB;
  card.allocatable_memory_bytes = 24 * kGiB;
  input.max_cards = 2;
  DevicePlan plan;
  const RuntimeFit two = Fit(Runtime::kVllm, input, card, &plan);
  ASSERT_TRUE(plan.fits) << plan.reason;
  ASSERT_EQ(plan.cards, 2);
  EXPECT_FALSE(two.fits) << two.reason;
  const std::string notes = absl::StrJoin(two.notes, "\n");
  EXPECT_TRUE(absl::StrContains(notes, "NCCL's start-up buffers 1.75 GiB (on each of 2 cards"))
      << notes;
  EXPECT_FALSE(absl::StrContains(two.reserved[3].arithmetic, "start-up buffers"))
      << two.reserved[3].arithmetic;
}

TEST(RuntimeFitTest, VllmHasNoInt8KvCache) {
  PlanInput input = Llama8B(4096);
  input.workload.kv_cache_format = NumberFormat::kInt8;
  const RuntimeFit fit = Fit(Runtime::kVllm, input, H100());
  EXPECT_FALSE(fit.fits);
  EXPECT_TRUE(absl::StrContains(fit.reason, "int8")) << fit.reason;
}

// SGLang's default static fraction by card size (server_args.py
// _handle_gpu_memory_settings), in MiB as nvidia-smi reports them:
//   H100 81,559 MiB, TP 1: reserved (9.5 + 1/2) x 1024 = 10,240;
//     (81,559 - 10,240) / 81,559 = 0.87445 -> 0.874
//   same, TP 8: (9.5 + 4) x 1024 = 13,824 -> 0.83050 -> 0.831
//   L4 23,034 MiB: (2.8 + 0.1) x 1024 = 2,969.6 -> 0.87108 -> 0.871
//   H200 143,771 MiB: (12 + 0.5) x 1024 = 12,800 -> 0.91097 -> 0.911
//   B200 183,359 MiB: 32,768 -> 0.82129 -> 0.821
TEST(RuntimeFitTest, SglangStaticFractionFollowsTheCardSizeRule) {
  double reserved = 0;
  EXPECT_DOUBLE_EQ(SglangMemFractionStatic(81559.0 * 1048576, 1, &reserved), 0.874);
  EXPECT_DOUBLE_EQ(reserved, 10240);
  EXPECT_DOUBLE_EQ(SglangMemFractionStatic(81559.0 * 1048576, 8, nullptr), 0.831);
  EXPECT_DOUBLE_EQ(SglangMemFractionStatic(23034.0 * 1048576, 1, nullptr), 0.871);
  EXPECT_DOUBLE_EQ(SglangMemFractionStatic(143771.0 * 1048576, 1, nullptr), 0.911);
  EXPECT_DOUBLE_EQ(SglangMemFractionStatic(183359.0 * 1048576, 1, nullptr), 0.821);
}

TEST(RuntimeFitTest, SglangPoolHoldsTheWorkload) {
  const RuntimeFit fit = Fit(Runtime::kSglang, Llama8B(131072), H100());
  ASSERT_TRUE(fit.fits) << fit.reason;
  const double pool = kH100CudaTotal * 0.874 - 8030261248.0 * 2 - kGiB;
  EXPECT_NEAR(fit.kv_cache_bytes_per_card, pool, 1);
  EXPECT_EQ(fit.kv_cache_tokens, static_cast<int64_t>(pool / kKvBytesPerToken));
  EXPECT_EQ(fit.launch_command,
            "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B "
            "--context-length 131072");
  // Four sequences of 111,616 tokens (54.5 GiB of KV cache) fit the plan's
  // 0.9 of the card, not SGLang's static pool of 0.874 of it.
  PlanInput four = Llama8B(111616, 4);
  four.max_cards = 1;
  DevicePlan plan;
  const RuntimeFit stricter = Fit(Runtime::kSglang, four, H100(), &plan);
  ASSERT_TRUE(plan.fits);
  EXPECT_FALSE(stricter.fits);
  EXPECT_TRUE(stricter.launch_command.empty());
  EXPECT_LT(stricter.kv_cache_tokens, 4 * 111616);
  EXPECT_TRUE(absl::StrContains(stricter.reason, "--mem-fraction-static")) << stricter.reason;
}

// Llama 3.2 11B Vision (mllama): 40 layers, 8 of them cross-attention
// layers over one image's 4 x 1,601 = 6,404 positions; 8 KV heads of 128,
// 4,096 bf16 bytes per layer and token. The plan's cache holds 32 layers x
// the text and 8 x the image. SGLang (python/sglang/srt/models/mllama.py
// pad_input_ids) puts the image's positions in front of the request as
// tokens of the one pool, each slot holding all 40 layers: 163,840 bytes a
// token, and 8,192 + 6,404 tokens a request, which --context-length counts.
TEST(RuntimeFitTest, SglangCountsAnImagesPositionsAsTokensOfEveryLayer) {
  constexpr double kLayerToken = 2.0 * 8 * 128 * 2;
  RuntimeModel mllama = Llama8BModel();
  mllama.repo_id = "meta-llama/Llama-3.2-11B-Vision-Instruct";
  mllama.num_layers = 40;
  mllama.family = "mllama";
  mllama.multimodal = true;
  mllama.cross_attention_layers = 8;
  mllama.cross_attention_positions = 6404;
  for (int batch : {1, 3}) {
    SCOPED_TRACE(batch);
    PlanInput input = Llama8B(8192, batch);
    input.sizing.kv_cache_bytes = kLayerToken * (32.0 * 8192 + 8.0 * 6404) * batch;
    const DevicePlan plan = PlanOnDevice(input, H100());
    ASSERT_EQ(plan.cards, 1);
    const RuntimeFit fit =
        FitRuntime(Runtime::kSglang, mllama, input.sizing, input.workload, H100(), plan, "NVIDIA");
    ASSERT_TRUE(fit.fits) << fit.reason;
    EXPECT_EQ(fit.kv_cache_tokens,
              static_cast<int64_t>(fit.kv_cache_bytes_per_card / (40 * kLayerToken)));
    EXPECT_DOUBLE_EQ(fit.kv_cache_bytes_needed_per_card,
                     (8192.0 + 6404) * batch * 40 * kLayerToken);
    EXPECT_EQ(fit.max_model_len_tokens, 8192 + 6404);
    EXPECT_DOUBLE_EQ(*fit.max_concurrency, fit.kv_cache_tokens / (8192.0 + 6404));
    EXPECT_TRUE(absl::StrContains(fit.launch_command, "--context-length 14596"))
        << fit.launch_command;
    bool said = false;
    for (const std::string& note : fit.notes) {
      said = said || absl::StrContains(note, "every slot of that pool holds all 40 layers");
    }
    EXPECT_TRUE(said);
  }
  // Three images a request: 3 x 6,404 positions in front of it; none: the
  // text alone, still in slots of all 40 layers.
  for (int images : {3, 0}) {
    SCOPED_TRACE(images);
    PlanInput input = Llama8B(8192, 2);
    input.workload.images_per_sequence = images;
    input.workload.images_per_sequence_defaulted = false;
    input.sizing.kv_cache_bytes = kLayerToken * (32.0 * 8192 + 8.0 * 6404 * images) * 2;
    const DevicePlan plan = PlanOnDevice(input, H100());
    ASSERT_EQ(plan.cards, 1);
    const RuntimeFit fit =
        FitRuntime(Runtime::kSglang, mllama, input.sizing, input.workload, H100(), plan, "NVIDIA");
    ASSERT_TRUE(fit.fits) << fit.reason;
    const int64_t per_request = 8192 + 6404 * images;
    EXPECT_DOUBLE_EQ(fit.kv_cache_bytes_needed_per_card, per_request * 2.0 * 40 * kLayerToken);
    EXPECT_EQ(fit.max_model_len_tokens, per_request);
    EXPECT_TRUE(
        absl::StrContains(fit.launch_command, absl::StrCat("--context-length ", per_request)))
        << fit.launch_command;
    bool said = false;
    for (const std::string& note : fit.notes) {
      said = said || absl::StrContains(note, absl::StrCat("a request with ", images,
                                                          " images takes ", per_request, " slots"));
    }
    EXPECT_TRUE(said);
  }
  // vLLM 0.11 and llama.cpp do not load it: no command.
  const PlanInput input = Llama8B(8192);
  const DevicePlan plan = PlanOnDevice(input, H100());
  for (Runtime runtime : {Runtime::kVllm, Runtime::kLlamaCpp}) {
    const RuntimeFit fit =
        FitRuntime(runtime, mllama, input.sizing, input.workload, H100(), plan, "NVIDIA");
    EXPECT_FALSE(fit.fits);
    EXPECT_TRUE(fit.launch_command.empty());
    EXPECT_TRUE(absl::StrContains(fit.reason, "cannot load mllama")) << fit.reason;
  }
}

TEST(RuntimeFitTest, LlamaCppCountsComputeBufferAndTakesTheWholeCard) {
  const RuntimeFit fit = Fit(Runtime::kLlamaCpp, Llama8B(8192), L4());
  ASSERT_TRUE(fit.fits) << fit.reason;
  // 512 tokens x (128,256 + 4,096) x 4 bytes.
  EXPECT_DOUBLE_EQ(Reserved(fit, "compute_buffer"), 512.0 * (128256 + 4096) * 4);
  EXPECT_EQ(fit.launch_command, "llama-server -m Llama-3.1-8B-BF16.gguf -ngl 33 -c 8192");
  EXPECT_TRUE(fit.model_id_placeholder);

  // An 8-bit KV cache is q8_0 (8.5 bits), for two sequences sharing -c.
  PlanInput input = Llama8B(8192, 2);
  input.workload.kv_cache_format = NumberFormat::kInt8;
  input.sizing.kv_cache_bytes /= 2;
  const RuntimeFit q8 = Fit(Runtime::kLlamaCpp, input, L4());
  ASSERT_TRUE(q8.fits) << q8.reason;
  EXPECT_NEAR(Reserved(q8, "kv_cache"), kKvBytesPerToken / 2 * 8192 * 2 * 8.5 / 8, 1);
  EXPECT_EQ(q8.launch_command,
            "llama-server -m Llama-3.1-8B-BF16.gguf -ngl 33 -c 16384 -np 2 -ctk q8_0 -ctv q8_0");
}

// A plan asked about a GGUF file: llama.cpp's command loads that file by the
// name it was given (a shell word, quoted when it needs to be), and no note
// calls it a placeholder.
TEST(RuntimeFitTest, LlamaCppLoadsTheGgufFileThePlanWasAskedAbout) {
  const PlanInput input = Llama8B(8192);
  const DevicePlan plan = PlanOnDevice(input, L4());
  RuntimeModel model = Llama8BModel();
  model.gguf_file = "Llama-3.1-8B-Instruct-Q4_K_M.gguf";
  RuntimeFit fit =
      FitRuntime(Runtime::kLlamaCpp, model, input.sizing, input.workload, L4(), plan, "NVIDIA");
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.launch_command,
            "llama-server -m Llama-3.1-8B-Instruct-Q4_K_M.gguf -ngl 33 -c 8192");
  EXPECT_FALSE(fit.model_id_placeholder);
  for (const std::string& note : fit.notes) {
    EXPECT_FALSE(absl::StrContains(note, "placeholder")) << note;
  }
  model.gguf_file = "my models/it's.gguf";
  fit = FitRuntime(Runtime::kLlamaCpp, model, input.sizing, input.workload, L4(), plan, "NVIDIA");
  EXPECT_EQ(fit.launch_command, "llama-server -m 'my models/it'\\''s.gguf' -ngl 33 -c 8192");
}

// Published: the README of developer0hye/llama-3-korean-bllossom-8b-q4-docker
// (commit 1159e0ab) logs llama.cpp (via llama-cpp-python, mid-2024) loading
// a Llama-3-8B-architecture GGUF (n_vocab 128,256, n_embd 4,096, 32 layers,
// 8 KV heads of 128) on an RTX 3070 with n_ctx 512, n_ubatch 512,
// flash_attn 0: "CUDA0 KV buffer size = 64.00 MiB", "CUDA0 compute buffer
// size = 258.50 MiB". Ours: 512 x 131,072 B = 64 MiB and 512 x (128,256 +
// 4,096) x 4 B = 258.50 MiB (docs/ACCURACY.md).
TEST(RuntimeFitTest, LlamaCppBuffersMatchAPublishedLog) {
  const RuntimeFit fit = Fit(Runtime::kLlamaCpp, Llama8B(512), L4());
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_DOUBLE_EQ(Reserved(fit, "kv_cache") / 1048576, 64.00);
  EXPECT_NEAR(Reserved(fit, "compute_buffer") / 1048576, 258.50, 0.005);
}

// Gemma 3 27B's shape (62 layers, 52 of them in a 1,024-token window, 16 KV
// heads of 128: 8,192 bf16 bytes per layer and token). llama.cpp gives each
// sliding layer n_swa x sequences + n_ubatch cells, padded to 256
// (src/llama-kv-cache-iswa.cpp; its log: "creating SWA KV cache, size =
// 1536 cells"), not the window: 512 more cells in each of the 52 layers
// than the plan's own sizing holds, 208 MiB at bf16, and n_swa x 4 + 512 =
// 4,608 cells for four sequences sharing -c.
TEST(RuntimeFitTest, LlamaCppKeepsAnUbatchMoreThanTheWindowInSlidingLayers) {
  constexpr double kLayerCell = 2.0 * 16 * 128 * 2;
  const RuntimeModel gemma = Gemma3_27BModel();
  for (int batch : {1, 4}) {
    SCOPED_TRACE(batch);
    const int64_t context = 32768;
    PlanInput input = Llama8B(context, batch);
    input.sizing.kv_cache_bytes = kLayerCell * (52.0 * 1024 + 10.0 * context) * batch;
    input.sizing.kv_cache_bytes_largest_layer = kLayerCell * context * batch;
    const DevicePlan plan = PlanOnDevice(input, H100());
    const RuntimeFit fit =
        FitRuntime(Runtime::kLlamaCpp, gemma, input.sizing, input.workload, H100(), plan, "NVIDIA");
    const double cells = batch == 1 ? 1536 : 4608;
    EXPECT_DOUBLE_EQ(Reserved(fit, "kv_cache") * plan.cards,
                     input.sizing.kv_cache_bytes + 52 * (cells - 1024.0 * batch) * kLayerCell);
    bool said = false;
    for (const RuntimeReservation& r : fit.reserved) {
      said = said || absl::StrContains(r.arithmetic, absl::StrCat(cells, " cells each"));
    }
    EXPECT_TRUE(said);
  }
  // A context within the window: nothing more.
  PlanInput small = Llama8B(1024);
  small.sizing.kv_cache_bytes = kLayerCell * 62 * 1024;
  small.sizing.kv_cache_bytes_largest_layer = kLayerCell * 1024;
  const DevicePlan plan = PlanOnDevice(small, H100());
  const RuntimeFit fit =
      FitRuntime(Runtime::kLlamaCpp, gemma, small.sizing, small.workload, H100(), plan, "NVIDIA");
  EXPECT_DOUBLE_EQ(Reserved(fit, "kv_cache") * plan.cards, small.sizing.kv_cache_bytes);
}

// vLLM counts a sliding-window layer of a request for min(window - 1 +
// max_num_batched_tokens, max_model_len) tokens in blocks, + 1 block
// (vllm/v1/kv_cache_interface.py SlidingWindowSpec.max_memory_usage_bytes),
// not the window, and pads its layer groups: Gemma 3 27B at 32,768 tokens on
// an H100 (8,192 batched tokens) takes 5,510 blocks of 10 layers, 3.82 GiB
// at bf16 more than the plan's 10 x 32,768 + 52 x 1,024 tokens; a plan whose
// KV cache fits by less than that does not fit under vLLM.
TEST(RuntimeFitTest, VllmChecksSlidingLayersForTheWindowPlusTheBatchedTokens) {
  constexpr double kLayerCell = 2.0 * 16 * 128 * 2;
  const RuntimeModel gemma = Gemma3_27BModel();
  const int64_t context = 32768;
  PlanInput input = Llama8B(context);
  input.sizing.kv_cache_bytes = kLayerCell * (52.0 * 1024 + 10.0 * context);
  input.sizing.kv_cache_bytes_largest_layer = kLayerCell * context;
  const DevicePlan plan = PlanOnDevice(input, H100());
  ASSERT_TRUE(plan.fits);
  ASSERT_EQ(plan.cards, 1);
  const RuntimeFit fit =
      FitRuntime(Runtime::kVllm, gemma, input.sizing, input.workload, H100(), plan, "NVIDIA");
  // vLLM groups the 10 full and 52 sliding layers in 7 groups of 10 (8 of
  // them padding); a sliding group's request is min(1023 + 8192, 32768) =
  // 9,215 tokens, 576 blocks + 1: 2,048 + 6 x 577 = 5,510 blocks of 16
  // tokens x 10 layers, against the plan's 10 x 32,768 + 52 x 1,024.
  const double needed = 5510.0 * 16 * 10 * kLayerCell;
  EXPECT_DOUBLE_EQ(fit.kv_cache_bytes_needed_per_card, needed);
  const double extra = needed - input.sizing.kv_cache_bytes;
  EXPECT_GT(extra, 3.3 * kGiB);
  bool said = false;
  for (const std::string& note : fit.notes) {
    said = said || (absl::StrContains(note, "SlidingWindowSpec.max_memory_usage_bytes") &&
                    absl::StrContains(note, "7 groups of 10 layers (8 of them padding"));
  }
  EXPECT_TRUE(said);

  // Weights that leave the window's cache room at the default 0.9 but not
  // vLLM's: the command needs a higher --gpu-memory-utilization.
  PlanInput tight = input;
  tight.sizing.weight_bytes = kH100CudaTotal * 0.9 - Reserved(fit, "activation_peak") -
                              Reserved(fit, "non_torch") - input.sizing.kv_cache_bytes - extra / 2;
  const DevicePlan tight_plan = PlanOnDevice(tight, H100());
  ASSERT_TRUE(tight_plan.fits) << tight_plan.reason;
  const RuntimeFit raised =
      FitRuntime(Runtime::kVllm, gemma, tight.sizing, tight.workload, H100(), tight_plan, "NVIDIA");
  EXPECT_TRUE(absl::StrContains(raised.reason, "at 0.9 it does not")) << raised.reason;
}

// Llama 4 Scout's shape: 48 layers, 36 of them attending within chunks of
// 8,192 tokens, 8 KV heads of 128.
RuntimeModel Llama4ScoutModel() {
  return {.repo_id = "meta-llama/Llama-4-Scout-17B-16E-Instruct",
          .num_layers = 48,
          .num_attention_heads = 40,
          .hidden_size = 5120,
          .intermediate_size = 16384,
          .vocab_size = 202048,
          .max_context_length = 10485760,
          .sliding_window = 8192,
          .sliding_window_layers = 36,
          .model_type = "llama4_text"};
}

// vLLM 0.11 keeps Llama 4's chunked layers whole: its hybrid KV cache
// manager is off for chunked attention by default (vllm-project/vllm PR
// #21761; on from PR #29627, vLLM 0.13), so a plan whose own sizing holds
// the chunks alone can fit where vLLM does not.
TEST(RuntimeFitTest, VllmKeepsLlama4sChunkedLayersWholeAsVersion011Does) {
  constexpr double kLayerCell = 2.0 * 8 * 128 * 2;
  const int64_t context = 131072;
  const auto scout_input = [&](int batch) {
    PlanInput input = Llama8B(context, batch);
    input.sizing.kv_cache_bytes = kLayerCell * batch * (12.0 * context + 36.0 * 8192);
    input.sizing.kv_cache_bytes_largest_layer = kLayerCell * batch * context;
    return input;
  };
  const PlanInput one = scout_input(1);
  const DevicePlan plan = PlanOnDevice(one, H100());
  ASSERT_TRUE(plan.fits) << plan.reason;
  const RuntimeFit fit = FitRuntime(Runtime::kVllm, Llama4ScoutModel(), one.sizing, one.workload,
                                    H100(), plan, "NVIDIA");
  EXPECT_TRUE(fit.fits) << fit.reason;
  EXPECT_DOUBLE_EQ(fit.kv_cache_bytes_needed_per_card, 48.0 * context * kLayerCell);
  EXPECT_EQ(fit.kv_cache_groups, 1);
  for (const RuntimeReservation& r : fit.reserved) {
    if (r.component != "kv_cache") continue;
    // 48 layers x 4,096 bytes a token, not the plan's average.
    EXPECT_TRUE(absl::StrContains(r.arithmetic, "x 1.966e+05 bytes per token per card"))
        << r.arithmetic;
  }
  bool said = false;
  for (const std::string& note : fit.notes) {
    said = said || absl::StrContains(note, "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1");
  }
  EXPECT_TRUE(said);

  // Three sequences: the chunks fit the card (21.4 GiB), the whole
  // context in every layer (72 GiB) does not.
  const PlanInput three = scout_input(3);
  const DevicePlan plan3 = PlanOnDevice(three, H100());
  ASSERT_TRUE(plan3.fits) << plan3.reason;
  ASSERT_EQ(plan3.cards, 1);
  const RuntimeFit fit3 = FitRuntime(Runtime::kVllm, Llama4ScoutModel(), three.sizing,
                                     three.workload, H100(), plan3, "NVIDIA");
  EXPECT_FALSE(fit3.fits) << fit3.reason;
}

// granite-4.0-h-350m's shape (its config.json): 32 layers, 4 of attention
// (4 KV heads of 64) and 28 Mamba-2 (48 heads of 32, state 128, 1 group,
// conv 4).
RuntimeModel Granite4H350mModel() {
  return {.repo_id = "ibm-granite/granite-4.0-h-350m",
          .num_layers = 32,
          .num_attention_heads = 12,
          .hidden_size = 768,
          .intermediate_size = 2048,
          .vocab_size = 100352,
          .max_context_length = 32768,
          .attention_layers = 4,
          .recurrent_layers = 28,
          .model_type = "granitemoehybrid"};
}

// llama.cpp keeps every recurrent state element in F32 whatever -ctk says
// (llama-model.cpp create_memory: llama_memory_hybrid's recurrent_type_r
// and _s): the estimate's 16-bit conv window and SSM state are taken out of
// the KV cache before its type applies and added back at 4 bytes.
TEST(RuntimeFitTest, LlamaCppKeepsAHybridsRecurrentStatesInF32) {
  constexpr double kLayerCell = 2.0 * 4 * 64 * 2;
  constexpr double kLayerState = 3.0 * 1792 * 2 + 48.0 * 32 * 128 * 2;  // the estimate's
  constexpr double kLlamaState = 3.0 * 1792 * 4 + 48.0 * 32 * 128 * 4;  // llama.cpp's
  const int64_t context = 4096;
  const int batch = 4;
  PlanInput input = Llama8B(context, batch);
  input.workload.kv_cache_format = NumberFormat::kInt8;  // -ctk q8_0: 8.5 bits
  input.sizing.recurrent_state_bytes = 28 * kLayerState * batch;
  input.sizing.kv_cache_bytes =
      4 * kLayerCell / 2 * context * batch + input.sizing.recurrent_state_bytes;
  input.sizing.model_kv_cache_bytes = input.sizing.kv_cache_bytes;
  const DevicePlan plan = PlanOnDevice(input, L4());
  ASSERT_TRUE(plan.fits) << plan.reason;
  RuntimeModel model = Granite4H350mModel();
  model.recurrent_state_bytes = 28 * kLayerState;
  model.llama_cpp_recurrent_state_bytes = 28 * kLlamaState;
  const RuntimeFit fit =
      FitRuntime(Runtime::kLlamaCpp, model, input.sizing, input.workload, L4(), plan, "NVIDIA");
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_DOUBLE_EQ(Reserved(fit, "kv_cache"),
                   4 * kLayerCell / 2 * context * batch * 8.5 / 8 + 28 * kLlamaState * batch);
  for (const RuntimeReservation& r : fit.reserved) {
    if (r.component != "kv_cache") continue;
    EXPECT_TRUE(absl::StrContains(r.arithmetic, "recurrent state") &&
                absl::StrContains(r.arithmetic, "every element in f32"))
        << r.arithmetic;
  }
}

// Nemotron-NAS's layers differ (the Super's first 41 hold about 70% of its
// weights and 38 of its 49 caches), and llama.cpp gives each card its
// layers by count: over two cards, the fullest card is sized as 41 layers
// each as large as the largest could be, not half of everything.
TEST(RuntimeFitTest, LlamaCppSizesTheFullestCardOfLayersThatDiffer) {
  PlanInput input = Llama8B(8192);
  DevicePlan plan = PlanOnDevice(input, L4());
  ASSERT_TRUE(plan.fits) << plan.reason;
  plan.cards = 2;
  RuntimeModel model = Llama8BModel();
  model.num_layers = 80;
  model.attention_layers = 49;
  const RuntimeFit even =
      FitRuntime(Runtime::kLlamaCpp, model, input.sizing, input.workload, L4(), plan, "NVIDIA");
  EXPECT_DOUBLE_EQ(Reserved(even, "weights"), input.sizing.weight_bytes / 2);
  model.layers_as_large_as_the_largest = 55;
  const RuntimeFit uneven =
      FitRuntime(Runtime::kLlamaCpp, model, input.sizing, input.workload, L4(), plan, "NVIDIA");
  EXPECT_DOUBLE_EQ(Reserved(uneven, "weights"), 41 * input.sizing.weight_bytes / 55);
  EXPECT_DOUBLE_EQ(Reserved(uneven, "kv_cache"), 41 * Reserved(even, "kv_cache") * 2 / 49);
  for (const RuntimeReservation& r : uneven.reserved) {
    if (r.component == "weights") {
      EXPECT_TRUE(absl::StrContains(r.arithmetic, "given to the cards by count")) << r.arithmetic;
    }
  }
}

// A GGUF file of GLM-4.5 or K-EXAONE keeps the multi-token-prediction
// block after the model's layers, and llama.cpp b10076 caches it as one more
// full-context layer (PR #24060 runs the cache over every block); before it,
// GLM-4.5-Air's log at b6168 held "131072 cells, 46 layers" of its 47 blocks.
// Llama 3.1 8B's 32 layers with one such block cache 33 layers' worth.
TEST(RuntimeFitTest, LlamaCppCachesTheMtpBlocksItsFileKeeps) {
  PlanInput input = Llama8B(8192);
  input.sizing.kv_cache_bytes_largest_layer = input.sizing.kv_cache_bytes / 32;
  const DevicePlan plan = PlanOnDevice(input, H100());
  ASSERT_TRUE(plan.fits) << plan.reason;
  RuntimeModel model = Llama8BModel();
  const RuntimeFit without =
      FitRuntime(Runtime::kLlamaCpp, model, input.sizing, input.workload, H100(), plan, "NVIDIA");
  model.llama_cpp_mtp_kv_layers = 1;
  const RuntimeFit with =
      FitRuntime(Runtime::kLlamaCpp, model, input.sizing, input.workload, H100(), plan, "NVIDIA");
  EXPECT_DOUBLE_EQ(Reserved(with, "kv_cache"), Reserved(without, "kv_cache") * 33 / 32);
  for (const RuntimeReservation& r : with.reserved) {
    if (r.component == "kv_cache") {
      EXPECT_TRUE(absl::StrContains(r.arithmetic, "1 multi-token-prediction block(s)"))
          << r.arithmetic;
    }
  }
  EXPECT_TRUE(LlamaCppCachesMtpBlocks("glm4_moe"));
  EXPECT_TRUE(LlamaCppCachesMtpBlocks("exaone_moe"));
  // Step-3.5 filters its NextN layers out of the cache.
  EXPECT_FALSE(LlamaCppCachesMtpBlocks("step3p5"));
}

// vLLM 0.11 raises a hybrid's attention block until one attention layer's
// page holds one recurrent layer's state, and gives every request one
// state page per recurrent group: a short request takes more than its
// tokens and its state.
TEST(RuntimeFitTest, VllmGivesAHybridsRecurrentLayersAPageOfTheAttentionBlock) {
  constexpr double kLayerCell = 2.0 * 4 * 64 * 2;  // bytes per token of one attention layer
  // Per recurrent layer and sequence: conv 3 x (1,536 + 2 x 128) x 2 bytes
  // + SSM 48 x 32 x 128 x 2 bytes.
  constexpr double kLayerState = 3.0 * 1792 * 2 + 48.0 * 32 * 128 * 2;
  const int64_t context = 4096;
  const int batch = 64;
  PlanInput input = Llama8B(context, batch);
  input.sizing.recurrent_state_bytes = 28 * kLayerState * batch;
  input.sizing.kv_cache_bytes =
      4 * kLayerCell * context * batch + input.sizing.recurrent_state_bytes;
  input.sizing.model_kv_cache_bytes = input.sizing.kv_cache_bytes;
  input.sizing.kv_cache_bytes_largest_layer = kLayerCell * context * batch;
  input.sizing.num_attention_heads = 12;
  input.sizing.num_key_value_heads = 4;
  input.sizing.batch_size = batch;
  const DevicePlan plan = PlanOnDevice(input, H100());
  ASSERT_TRUE(plan.fits) << plan.reason;
  ASSERT_EQ(plan.cards, 1);
  const RuntimeFit fit = FitRuntime(Runtime::kVllm, Granite4H350mModel(), input.sizing,
                                    input.workload, H100(), plan, "NVIDIA");
  ASSERT_TRUE(fit.fits) << fit.reason;
  // 16 x ceil(403,968 / (16 x 1,024)) = 400 tokens; groups of 4 layers: one
  // of attention and seven of state; a block is 400 x 1,024 x 4 bytes.
  EXPECT_EQ(fit.block_size_tokens, 400);
  EXPECT_EQ(fit.kv_cache_groups, 8);
  const double block = 400.0 * kLayerCell * 4;
  ASSERT_TRUE(fit.kv_cache_blocks.has_value());
  EXPECT_EQ(*fit.kv_cache_blocks, static_cast<int64_t>(fit.kv_cache_bytes_per_card / block));
  EXPECT_EQ(fit.kv_cache_tokens, *fit.kv_cache_blocks / 8 * 400);
  // One request: ceil(4,096 / 400) = 11 attention blocks + 7 state pages.
  ASSERT_TRUE(fit.max_concurrency.has_value());
  EXPECT_DOUBLE_EQ(*fit.max_concurrency, static_cast<double>(*fit.kv_cache_blocks) / 18);
  EXPECT_DOUBLE_EQ(fit.kv_cache_bytes_needed_per_card, batch * 18 * block);
  // More than the plan's own sizing of the same sequences (4,400 tokens
  // where 4,096 are kept, each state padded to the page).
  EXPECT_GT(fit.kv_cache_bytes_needed_per_card, input.sizing.kv_cache_bytes * 1.04);
  bool said = false;
  for (const std::string& note : fit.notes) {
    said = said || (absl::StrContains(note, "attention block to 400 tokens") &&
                    absl::StrContains(note, "padded by 1.39% to 409600") &&
                    absl::StrContains(note, "8 groups of 4 layers"));
  }
  EXPECT_TRUE(said);
  for (const RuntimeReservation& r : fit.reserved) {
    if (r.component != "kv_cache") continue;
    EXPECT_TRUE(absl::StrContains(r.arithmetic, "1 x ceil(4096 / 400) + 7 state pages = 18 blocks"))
        << r.arithmetic;
  }
}

// SGLang sizes a hybrid's recurrent state in a pool of its own, which the
// fit does not model: the answer says so rather than present its tokens as
// SGLang's.
TEST(RuntimeFitTest, SglangSaysAHybridsStatePoolIsNotModelled) {
  PlanInput input = Llama8B(4096);
  input.sizing.recurrent_state_bytes = 28 * 403968.0;
  input.sizing.kv_cache_bytes = 4 * 1024.0 * 4096 + input.sizing.recurrent_state_bytes;
  const DevicePlan plan = PlanOnDevice(input, H100());
  ASSERT_TRUE(plan.fits) << plan.reason;
  const RuntimeFit fit = FitRuntime(Runtime::kSglang, Granite4H350mModel(), input.sizing,
                                    input.workload, H100(), plan, "NVIDIA");
  bool said = false;
  for (const std::string& note : fit.notes) {
    said = said || (absl::StrContains(note, "not modelled") &&
                    absl::StrContains(note, "handle_max_mamba_cache"));
  }
  EXPECT_TRUE(said);
  // A transformer gets no such note.
  const RuntimeFit dense = Fit(Runtime::kSglang, Llama8B(4096), H100());
  for (const std::string& note : dense.notes) {
    EXPECT_FALSE(absl::StrContains(note, "handle_max_mamba_cache")) << note;
  }
}

TEST(RuntimeFitTest, APlanThatDoesNotFitDoesNotFitAnyRuntime) {
  PlanInput input = Llama8B(131072, 64);
  input.max_cards = 1;
  DevicePlan plan;
  const RuntimeFit fit = Fit(Runtime::kSglang, input, H100(), &plan);
  ASSERT_FALSE(plan.fits);
  EXPECT_FALSE(fit.fits);
  EXPECT_TRUE(fit.launch_command.empty());
  EXPECT_EQ(fit.version, "SGLang 0.5.x (the card-size rule, before PR #10975)");
}

// The rules are CUDA's and ROCm's for vLLM and SGLang: an Apple or a
// wafer-scale device is not checked (and so not said to fit).
TEST(RuntimeFitTest, DevicesTheRulesDoNotHoldForAreNotChecked) {
  const PlanInput input = Llama8B(4096);
  DeviceSpec mac = L4();
  mac.unified_memory = true;
  const DevicePlan plan = PlanOnDevice(input, mac);
  ASSERT_TRUE(plan.fits);
  const RuntimeFit vllm =
      FitRuntime(Runtime::kVllm, Llama8BModel(), input.sizing, input.workload, mac, plan, "Apple");
  EXPECT_FALSE(vllm.fits);
  EXPECT_TRUE(vllm.launch_command.empty());
  EXPECT_TRUE(absl::StartsWith(vllm.reason, "not checked")) << vllm.reason;
  const RuntimeFit llama = FitRuntime(Runtime::kLlamaCpp, Llama8BModel(), input.sizing,
                                      input.workload, mac, plan, "Apple");
  EXPECT_TRUE(llama.fits) << llama.reason;
  const RuntimeFit amd =
      FitRuntime(Runtime::kSglang, Llama8BModel(), input.sizing, input.workload, L4(), plan, "AMD");
  EXPECT_TRUE(amd.fits) << amd.reason;
  DeviceSpec wafer = H100();
  wafer.roofline_does_not_apply = true;
  const RuntimeFit cerebras = FitRuntime(Runtime::kLlamaCpp, Llama8BModel(), input.sizing,
                                         input.workload, wafer, plan, "Cerebras");
  EXPECT_FALSE(cerebras.fits);
  EXPECT_TRUE(absl::StartsWith(cerebras.reason, "not checked")) << cerebras.reason;
}

// The versions modeled load a family or not (runtime_support.cc, from the
// runtimes' registries and pull requests): Gemma 4 arrived in vLLM 0.19.0
// (vllm-project/vllm PR #38826) and SGLang 0.5.11 (sgl-project/sglang PR
// #21952), after the versions whose rules are modeled, and in llama.cpp at
// b8637 (PR #21309), before b10076.
TEST(RuntimeSupportTest, EachRuntimeSaysWhetherItsVersionLoadsTheFamily) {
  const FamilySupport vllm = FamilySupportOf(Runtime::kVllm, "gemma4");
  EXPECT_EQ(vllm.status, FamilySupportStatus::kLaterVersion);
  EXPECT_EQ(vllm.first_version, "vLLM 0.19.0");
  EXPECT_TRUE(absl::StrContains(vllm.evidence, "#38826")) << vllm.evidence;
  EXPECT_EQ(FamilySupportOf(Runtime::kVllm, "gemma4_text").first_version, "vLLM 0.19.0");
  EXPECT_EQ(FamilySupportOf(Runtime::kSglang, "gemma4").first_version, "SGLang 0.5.11");
  EXPECT_EQ(FamilySupportOf(Runtime::kLlamaCpp, "gemma4").status, FamilySupportStatus::kSupported);
  EXPECT_EQ(FamilySupportOf(Runtime::kVllm, "llama").status, FamilySupportStatus::kSupported);
  // Qwen3-VL: in vLLM 0.11.0, in SGLang only after PR #10975's release.
  EXPECT_EQ(FamilySupportOf(Runtime::kVllm, "qwen3_vl_moe").status,
            FamilySupportStatus::kSupported);
  EXPECT_EQ(FamilySupportOf(Runtime::kSglang, "qwen3_vl_moe").first_version, "SGLang 0.5.3");
  // vLLM 0.11.1, within the modeled 0.11.x line, loads MiniMax-M2; 0.11.0
  // did not: said, not refused.
  const FamilySupport minimax = FamilySupportOf(Runtime::kVllm, "minimax_m2");
  EXPECT_EQ(minimax.status, FamilySupportStatus::kSupported);
  EXPECT_EQ(minimax.first_version, "vLLM 0.11.1");
  EXPECT_EQ(FamilySupportOf(Runtime::kVllm, "bert").status, FamilySupportStatus::kPoolingOnly);
  EXPECT_EQ(FamilySupportOf(Runtime::kVllm, "t5").status, FamilySupportStatus::kNotSupported);
  EXPECT_EQ(FamilySupportOf(Runtime::kLlamaCpp, "opt").status, FamilySupportStatus::kNotSupported);
  EXPECT_EQ(FamilySupportOf(Runtime::kVllm, "no_such_family").status,
            FamilySupportStatus::kUnknown);
  // Read in session 47: SGLang has no PaliGemma, Phi-3-vision or Bamba model
  // file; llama.cpp converts Bamba (PR #13550) but not PaliGemma or
  // Phi-3-vision (their PRs unmerged); LFM2-VL is first in SGLang 0.5.10.
  for (const char* family : {"paligemma", "phi3_v", "bamba"}) {
    EXPECT_EQ(FamilySupportOf(Runtime::kSglang, family).status, FamilySupportStatus::kNotSupported)
        << family;
  }
  EXPECT_EQ(FamilySupportOf(Runtime::kLlamaCpp, "paligemma").status,
            FamilySupportStatus::kNotSupported);
  EXPECT_EQ(FamilySupportOf(Runtime::kLlamaCpp, "bamba").status, FamilySupportStatus::kSupported);
  EXPECT_TRUE(absl::StrContains(FamilySupportOf(Runtime::kLlamaCpp, "bamba").evidence, "#13550"));
  EXPECT_EQ(FamilySupportOf(Runtime::kSglang, "lfm2_vl").first_version, "SGLang 0.5.10");
}

// Every family the config.json reader counts has a row: a family added to
// the reader without reading the runtimes' support fails here.
TEST(RuntimeSupportTest, EveryFamilyTheReaderCountsHasARow) {
  const std::vector<std::string> rows = FamiliesWithSupportOnRecord();
  for (const std::string& type : HfConfigModelTypes()) {
    EXPECT_TRUE(std::binary_search(rows.begin(), rows.end(), type)) << type;
  }
}

// A version that cannot load the family gives no fit and no command, and
// says which version first does and what its own rules would give; one
// that loads it fits as before.
TEST(RuntimeSupportTest, AFitUnderAVersionThatCannotLoadTheFamilyIsNotAFit) {
  const PlanInput input = Llama8B(4096);
  const DevicePlan plan = PlanOnDevice(input, H100());
  ASSERT_TRUE(plan.fits);
  RuntimeModel gemma4 = Llama8BModel();
  gemma4.repo_id = "google/gemma-4-31B-it";
  gemma4.model_type = "gemma4_text";
  gemma4.family = "gemma4";
  gemma4.multimodal = true;
  const RuntimeFit vllm =
      FitRuntime(Runtime::kVllm, gemma4, input.sizing, input.workload, H100(), plan, "NVIDIA");
  EXPECT_FALSE(vllm.fits);
  EXPECT_TRUE(vllm.launch_command.empty());
  EXPECT_TRUE(absl::StartsWith(vllm.reason,
                               "vLLM 0.11.x cannot load gemma4: first in vLLM 0.19.0 (vllm-project/"
                               "vllm PR #38826"))
      << vllm.reason;
  EXPECT_TRUE(absl::StrContains(vllm.reason, "under its memory rules the plan would fit"))
      << vllm.reason;
  EXPECT_GT(vllm.kv_cache_bytes_per_card, 0) << "the figures under its rules stay";
  const RuntimeFit llama =
      FitRuntime(Runtime::kLlamaCpp, gemma4, input.sizing, input.workload, H100(), plan, "NVIDIA");
  EXPECT_TRUE(llama.fits) << llama.reason;
  EXPECT_FALSE(llama.launch_command.empty());
  bool said = false;
  for (const std::string& note : llama.notes) said = said || absl::StrContains(note, "b8637");
  EXPECT_TRUE(said);
  // A multimodal model whose wrapper is not on record: a note, not a refusal.
  RuntimeModel unknown = gemma4;
  unknown.family.clear();
  const RuntimeFit sglang =
      FitRuntime(Runtime::kSglang, unknown, input.sizing, input.workload, H100(), plan, "NVIDIA");
  EXPECT_TRUE(sglang.fits) << sglang.reason;
  said = false;
  for (const std::string& note : sglang.notes) {
    said = said || absl::StrContains(note,
                                     "this multimodal model (its wrapper's model_type is not "
                                     "on record) is not on record");
  }
  EXPECT_TRUE(said) << absl::StrJoin(sglang.notes, " | ");
}

// --- the plan RPC's answer ----------------------------------------------

using testing::Answer;
using testing::Catalog;
using testing::FakeRecords;

TEST(RuntimeFitAnswerTest, PlanCarriesTheRuntimeFitOnlyWhenAsked) {
  auto records = Catalog();
  v1::PlanInferenceRequest request;
  request.set_model("Llama 3.1 8B");
  request.add_hardware("H100");
  Answer<v1::PlanInferenceResponse> plain;
  AnswerPlanInference(records, request, plain.done());
  ASSERT_TRUE(plain.result->ok()) << plain.result->status();
  EXPECT_FALSE((*plain.result)->plans(0).has_runtime_fit());

  request.set_runtime(v1::RUNTIME_VLLM);
  Answer<v1::PlanInferenceResponse> vllm;
  AnswerPlanInference(records, request, vllm.done());
  ASSERT_TRUE(vllm.result->ok()) << vllm.result->status();
  const v1::RuntimeFit& fit = (*vllm.result)->plans(0).runtime_fit();
  EXPECT_EQ(fit.runtime(), v1::RUNTIME_VLLM);
  EXPECT_EQ(fit.runtime_version(), "vLLM 0.11.x");
  EXPECT_TRUE(fit.fits()) << fit.reason();
  // The fake record names no repository: a placeholder, said as such.
  EXPECT_TRUE(fit.model_id_placeholder());
  EXPECT_EQ(fit.launch_command(), "vllm serve <hugging-face-repo> --max-model-len 4096");
  EXPECT_EQ(fit.block_size_tokens(), 16);
  EXPECT_TRUE(fit.has_kv_cache_blocks());
  EXPECT_GE(fit.reserved_size(), 5);
  // The plan itself is unchanged by the runtime.
  EXPECT_EQ((*vllm.result)->plans(0).required_bytes_per_card(),
            (*plain.result)->plans(0).required_bytes_per_card());

  request.set_runtime(static_cast<v1::Runtime>(42));
  Answer<v1::PlanInferenceResponse> bad;
  AnswerPlanInference(records, request, bad.done());
  ASSERT_EQ(bad.result->status().code(), absl::StatusCode::kInvalidArgument);
  const auto violations = GetFieldViolations(bad.result->status());
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].field, "runtime");
}

// Over many accelerators only the best fitting plans carry the runtime's
// text (it is several times a plan's).
TEST(RuntimeFitAnswerTest, OnlyTheBestFittingPlansAreChecked) {
  auto records = std::make_shared<FakeRecords>();
  records->Add(testing::Llama8B());
  for (int i = 0; i < 12; ++i) {
    common::v1::Hardware hw = testing::H100();
    hw.set_name(absl::StrCat("hardware/h100-", i));
    hw.set_display_name(absl::StrCat("H100 ", i));
    records->Add(hw);
  }
  common::v1::Hardware small = testing::H100();
  small.set_name("hardware/small");
  small.set_display_name("Small");
  small.set_memory_bytes(4.0 * (1 << 30));  // does not fit on up to 1 card
  records->Add(small);
  v1::PlanInferenceRequest request;
  request.set_model("Llama 3.1 8B");
  request.set_max_cards(1);
  request.set_runtime(v1::RUNTIME_SGLANG);
  Answer<v1::PlanInferenceResponse> plan;
  AnswerPlanInference(records, request, plan.done());
  ASSERT_TRUE(plan.result->ok()) << plan.result->status();
  ASSERT_EQ((*plan.result)->plans_size(), 13);
  for (int i = 0; i < 13; ++i) {
    const v1::HardwarePlan& p = (*plan.result)->plans(i);
    EXPECT_EQ(p.has_runtime_fit(), i < static_cast<int>(kMaxRuntimeFits)) << i << p.hardware();
    if (p.has_runtime_fit()) {
      EXPECT_TRUE(p.fits());
    }
  }
}

common::v1::Model Dated(common::v1::Model model, const std::string& name, double parameters,
                        int year, const std::string& domain) {
  model.set_name(name);
  model.set_display_name(name.substr(7));
  model.set_parameters(parameters);
  model.mutable_publication_date()->set_year(year);
  model.mutable_publication_date()->set_month(1);
  model.mutable_publication_date()->set_day(15);
  model.clear_domains();
  model.add_domains(domain);
  return model;
}

TEST(NewerModelsTest, PlanListsNewerModelsOfTheSameSizeThatFitTheSameCard) {
  auto records = std::make_shared<FakeRecords>();
  const common::v1::Model base = testing::Llama8B();
  records->Add(Dated(base, "models/llama-3-1-8b", 8030261248, 2024, "Language"));
  // Newer, same size, same domain, less memory: listed, largest first.
  common::v1::Model smaller = Dated(base, "models/newer-7b", 7e9, 2025, "Language");
  smaller.mutable_architecture()->set_num_layers(28);
  records->Add(smaller);
  common::v1::Model same = Dated(base, "models/newer-8b", 8030261248, 2025, "Language");
  records->Add(same);
  // Older; another domain; three times the size: not listed.
  records->Add(Dated(base, "models/older-8b", 8030261248, 2023, "Language"));
  records->Add(Dated(base, "models/newer-vision", 8030261248, 2025, "Vision"));
  common::v1::Model big = Dated(base, "models/newer-24b", 24e9, 2025, "Language");
  big.mutable_architecture()->set_num_layers(96);
  records->Add(big);
  // Newer and within 1.5x, but more memory per card: not listed.
  common::v1::Model wider = Dated(base, "models/newer-11b", 11e9, 2025, "Language");
  wider.mutable_architecture()->set_num_layers(44);
  records->Add(wider);
  records->Add(testing::H100());

  v1::PlanInferenceRequest request;
  request.set_model("models/llama-3-1-8b");
  Answer<v1::PlanInferenceResponse> without;
  AnswerPlanInference(records, request, without.done());
  ASSERT_TRUE(without.result->ok()) << without.result->status();
  EXPECT_FALSE((*without.result)->has_newer_models());

  request.set_newer_models(true);
  Answer<v1::PlanInferenceResponse> plan;
  AnswerPlanInference(records, request, plan.done());
  ASSERT_TRUE(plan.result->ok()) << plan.result->status();
  const v1::NewerModels& newer = (*plan.result)->newer_models();
  EXPECT_EQ(newer.hardware(), "hardware/h100");
  EXPECT_EQ(newer.cards(), 1);
  EXPECT_EQ(newer.required_bytes_per_card(), (*plan.result)->plans(0).required_bytes_per_card());
  ASSERT_EQ(newer.models_size(), 2) << newer.DebugString();
  EXPECT_EQ(newer.models(0).model(), "models/newer-8b");
  EXPECT_EQ(newer.models(1).model(), "models/newer-7b");
  for (const v1::RunnableModel& m : newer.models()) {
    EXPECT_LE(m.required_bytes_per_card(), newer.required_bytes_per_card());
  }
  EXPECT_TRUE(absl::StrContains(newer.selection(), "Language models with open weights"))
      << newer.selection();
  EXPECT_TRUE(absl::StrContains(newer.selection(), "published after 2024-01-15"))
      << newer.selection();
  EXPECT_TRUE(absl::StrContains(newer.selection(), "context 4096 tokens")) << newer.selection();
  // No format asked: a newer model published quantized would be sized as
  // published, and the selection says so.
  EXPECT_TRUE(absl::StrContains(newer.selection(), "each model's weights as published"))
      << newer.selection();
  EXPECT_TRUE(newer.not_selected_reason().empty());
}

TEST(NewerModelsTest, NoSelectionWithoutADateOnRecord) {
  auto records = Catalog();  // its Llama 3.1 8B has no publication date
  v1::PlanInferenceRequest request;
  request.set_model("Llama 3.1 8B");
  request.set_newer_models(true);
  Answer<v1::PlanInferenceResponse> plan;
  AnswerPlanInference(records, request, plan.done());
  ASSERT_TRUE(plan.result->ok()) << plan.result->status();
  EXPECT_EQ((*plan.result)->newer_models().models_size(), 0);
  EXPECT_TRUE(
      absl::StrContains((*plan.result)->newer_models().not_selected_reason(), "publication date"));
  EXPECT_TRUE(NewerModelsFilter(testing::Llama8B()).empty());
}

}  // namespace
}  // namespace modelatlas::estimator
