// Expert parallelism (issue 21 point 2, docs/FORMULAS.md "Expert
// parallelism"): the routed experts split over the cards, the attention
// tensor-parallel and replicated over data-parallel ranks, as vLLM's
// --enable-expert-parallel and SGLang's --ep-size do. The per-card bytes are
// checked against hand sums from each model's config.json (the shipped
// records' architectures), the fewest-cards answer against the forward fit
// (it holds at the answer, no layout of one card fewer fits) and the decode
// bound against its arithmetic written out here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "catalog-service/dataset.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/core/fit_matrix.h"
#include "estimator-service/core/inference_memory.h"
#include "estimator-service/core/plan.h"
#include "estimator-service/core/runtime_fit.h"
#include "estimator-service/core/speed.h"
#include "tests/estimator/shipped_records.h"

namespace modelatlas::estimator {
namespace {

using testing::ShippedHardware;
using testing::ShippedModel;

constexpr double kGiB = 1073741824.0;

InferenceSizing Size(const std::string& name, NumberFormat weights, int64_t context, int batch) {
  const common::v1::Model& model = ShippedModel(name);
  InferenceMemoryInput input;
  input.parameters = static_cast<double>(model.parameters());
  input.architecture = ToCoreArchitecture(model.architecture());
  input.workload.weight_format = weights;
  input.workload.context_length_tokens = context;
  input.workload.batch_size = batch;
  absl::StatusOr<InferenceSizing> sizing = SizeInference(input);
  EXPECT_TRUE(sizing.ok()) << sizing.status();
  return sizing.ok() ? *sizing : InferenceSizing();
}

// Routed experts' parameters by hand, from each config.json: MoE layers x
// experts x 3 (gated: gate, up, down) x hidden x expert width.
// Mixtral-8x7B-v0.1: 32 x 8 x 3 x 4096 x 14336.
constexpr double kMixtralRouted = 45097156608;
// Qwen3-30B-A3B: 48 x 128 x 3 x 2048 x 768.
constexpr double kQwen3Routed = 28991029248;
// DeepSeek-V3: (61 - 3 dense) x 256 x 3 x 7168 x 2048.
constexpr double kDeepSeekRouted = 653908770816;

struct HandCase {
  const char* model;
  NumberFormat format;
  double bytes_per_parameter;
  double routed_parameters;
  int experts;
  int64_t context;
  int batch;
  int tp;
  int ep;
  // Sequences on the fullest replica, experts on the fullest card, the KV
  // heads' split over TP (1 for MLA), all by hand.
  int sequences;
  int experts_per_card;
  int kv_split;
};

TEST(ExpertParallelTest, PerCardBytesAreTheHandSum) {
  const HandCase cases[] = {
      // Mixtral over 8 cards, attention replicated 8 times: 1 expert each;
      // over 3: ceil(8 / 3) = 3 experts on the fullest.
      {"models/mixtral-8x7b-v0-1", NumberFormat::kBf16, 2, kMixtralRouted, 8, 32768, 8, 1, 8, 1, 1,
       1},
      {"models/mixtral-8x7b-v0-1", NumberFormat::kBf16, 2, kMixtralRouted, 8, 32768, 1, 1, 3, 1, 3,
       1},
      // Qwen3-30B-A3B over 4 cards, TP 2 x 2 replicas: 32 experts each, 4
      // KV heads split 2 ways, 3 of 5 sequences on the fuller replica.
      {"models/qwen3-30b-a3b", NumberFormat::kBf16, 2, kQwen3Routed, 128, 8192, 5, 2, 4, 3, 32, 2},
      // DeepSeek-V3 in fp8 over 16 cards, TP 8 x 2 replicas: 16 experts
      // each; the latent cache is whole on every TP rank.
      {"models/deepseek-v3", NumberFormat::kFp8, 1, kDeepSeekRouted, 256, 32768, 4, 8, 16, 2, 16,
       1},
  };
  for (const HandCase& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.model, " TP ", c.tp, " x EP ", c.ep));
    const InferenceSizing s = Size(c.model, c.format, c.context, c.batch);
    const double parameters = static_cast<double>(ShippedModel(c.model).parameters());
    // bf16 stores every tensor alike; fp8 keeps the embeddings and the
    // output head in 16 bits (core/weight_files.cc), the experts in 8.
    const double all_at_format_bits = parameters * c.bytes_per_parameter;
    if (c.format == NumberFormat::kBf16) {
      ASSERT_DOUBLE_EQ(s.weight_bytes, all_at_format_bits);
    } else {
      // DeepSeek-V3's untied embedding and head, one more byte each; the
      // record's 671e9 is the rounded total the file's bits apply to, so
      // the norms and the rounding are left to a 0.1% margin.
      const double head_and_embeddings = 2.0 * 129280 * 7168;
      ASSERT_NEAR(s.weight_bytes, all_at_format_bits + head_and_embeddings,
                  1e-3 * all_at_format_bits);
    }
    ASSERT_NEAR(s.expert_weight_bytes, c.routed_parameters * c.bytes_per_parameter, 1.0);
    ASSERT_EQ(s.num_experts, c.experts);
    const Layout layout{.tensor_parallel = c.tp, .pipeline_parallel = 1, .expert_parallel = c.ep};
    ASSERT_TRUE(ValidExpertParallel(s, c.ep));
    EXPECT_EQ(ExpertsPerCard(s, c.ep), c.experts_per_card);
    EXPECT_EQ(SequencesPerReplica(s, layout), c.sequences);
    const double dense = s.weight_bytes - c.routed_parameters * c.bytes_per_parameter;
    const double experts =
        c.routed_parameters * c.bytes_per_parameter * c.experts_per_card / c.experts;
    const double kv = s.kv_cache_bytes * c.sequences / c.batch / c.kv_split;
    EXPECT_NEAR(WeightBytesPerCard(s, layout), dense / c.tp + experts, 2.0);
    EXPECT_NEAR(KvBytesPerCard(s, layout), kv, 1e-3);
    EXPECT_NEAR(RequiredBytesPerCard(s, layout),
                dense / c.tp + experts + kv + s.activation_bytes + s.overhead_bytes, 2.0);
  }
}

DeviceSpec H100() {
  DeviceSpec d;
  d.name = "hardware/nvidia-h100-sxm5-80gb";
  d.display_name = "NVIDIA H100 SXM5 80GB";
  d.memory_bytes = 80 * kGiB;
  d.bandwidth_bytes_per_second = 3.35e12;
  d.peak_flops = 989.4e12;
  d.scale_up_domain_size = 8;
  d.links.scale_up_bytes_per_second = 450e9;
  d.links.scale_up_domain_size = 8;
  return d;
}

// The forward fit at the answer holds and one card fewer does not, by
// every layout the search tries (TP, EP, TP x PP), each checked here.
void ExpectFewestAndFits(const InferenceSizing& s, double usable, const NodeSize& node,
                         const Layout& got) {
  EXPECT_LE(RequiredBytesPerCard(s, got), usable);
  const int fewer = got.cards() - 1;
  EXPECT_FALSE(FewestCardsLayout(s, usable, fewer, node).has_value());
  for (int tp = 1; tp <= std::min(fewer, node.cards); ++tp) {
    if (fewer % tp != 0 || !ValidTensorParallel(s, tp)) continue;
    if (ValidExpertParallel(s, fewer)) {
      EXPECT_GT(
          RequiredBytesPerCard(
              s, Layout{.tensor_parallel = tp, .pipeline_parallel = 1, .expert_parallel = fewer}),
          usable)
          << "TP " << tp << " x EP " << fewer;
    }
    if (fewer / tp <= s.num_layers) {
      EXPECT_GT(
          RequiredBytesPerCard(s, Layout{.tensor_parallel = tp, .pipeline_parallel = fewer / tp}),
          usable)
          << "TP " << tp << " x PP " << fewer / tp;
    }
  }
}

TEST(ExpertParallelTest, DeepSeekV3FitsAtTheAnswerAndNotOneCardFewer) {
  // DeepSeek-V3 in fp8 (671 GB) at 32k x 4 on H100 80 GB and H200 141 GB:
  // whichever layout the search takes, the plan is that layout, it fits,
  // and no layout of one card fewer does.
  const InferenceSizing s = Size("models/deepseek-v3", NumberFormat::kFp8, 32768, 4);
  PlanInput input;
  input.sizing = s;
  input.workload.batch_size = 4;
  input.workload.context_length_tokens = 32768;
  DeviceSpec h200 = H100();
  h200.name = "hardware/nvidia-h200-sxm-141gb";
  h200.memory_bytes = 141e9;
  h200.bandwidth_bytes_per_second = 4.8e12;
  const NodeSize node{.cards = 8, .assumed = false};
  int expert_parallel_plans = 0;
  for (const DeviceSpec& device : {H100(), h200}) {
    SCOPED_TRACE(device.name);
    const DevicePlan plan = PlanOnDevice(input, device);
    ASSERT_TRUE(plan.fits) << plan.reason;
    const double usable = device.memory_bytes * 0.9;
    const std::optional<Layout> layout = FewestCardsLayout(s, usable, 64, node);
    ASSERT_TRUE(layout.has_value());
    ExpectFewestAndFits(s, usable, node, *layout);
    EXPECT_EQ(plan.cards, layout->cards());
    EXPECT_EQ(plan.tensor_parallel, layout->tensor_parallel);
    EXPECT_EQ(plan.expert_parallel, layout->expert_parallel > 1 ? layout->expert_parallel : 0);
    EXPECT_EQ(plan.layout, LayoutName(*layout, node));
    EXPECT_DOUBLE_EQ(plan.required_bytes_per_card, RequiredBytesPerCard(s, *layout));
    if (layout->expert_parallel <= 1) continue;
    ++expert_parallel_plans;
    // At the same cards a pipeline that fits has the worse bound: its
    // stages read in turn, the expert-parallel cards at once.
    SpeedInput speed{.sizing = &s,
                     .layout = *layout,
                     .nodes = plan.nodes,
                     .batch_size = 4,
                     .bandwidth_bytes_per_second = device.bandwidth_bytes_per_second,
                     .peak_flops = device.peak_flops};
    speed.within_node = WithinNodeLink(device.links);
    speed.between_nodes = BetweenNodesLink(device.links);
    const DecodeBound ep = BoundDecode(speed);
    EXPECT_NEAR(*plan.decode_tokens_per_second, ep.tokens_per_second_per_sequence, 1e-9);
    EXPECT_NEAR(*plan.decode_communication_seconds,
                ep.tensor_parallel_seconds + ep.expert_parallel_seconds, 1e-15);
    for (int tp = 1; tp <= std::min(plan.cards, 8); ++tp) {
      const Layout pipeline{.tensor_parallel = tp, .pipeline_parallel = plan.cards / tp};
      if (plan.cards % tp != 0 || pipeline.pipeline_parallel < 2 || !ValidTensorParallel(s, tp) ||
          RequiredBytesPerCard(s, pipeline) > usable) {
        continue;
      }
      speed.layout = pipeline;
      EXPECT_GT(ep.tokens_per_second_per_sequence,
                BoundDecode(speed).tokens_per_second_per_sequence)
          << "TP " << tp;
    }
    bool named = false;
    for (const std::string& line : plan.arithmetic) {
      named |= absl::StrContains(line, "EP all-to-alls 2 (dispatch, combine) x 58 MoE layers");
    }
    EXPECT_TRUE(named);
  }
  EXPECT_GE(expert_parallel_plans, 1);
}

TEST(ExpertParallelTest, MixtralAndQwen3FitAtTheAnswerAndNotOneCardFewer) {
  const NodeSize node{.cards = 8, .assumed = false};
  for (const char* name : {"models/mixtral-8x7b-v0-1", "models/qwen3-30b-a3b"}) {
    for (double gib : {24.0, 40.0, 48.0}) {
      SCOPED_TRACE(absl::StrCat(name, " on ", gib, " GiB cards"));
      const InferenceSizing s = Size(name, NumberFormat::kBf16, 32768, 16);
      const double usable = gib * kGiB * 0.9;
      const std::optional<Layout> layout = FewestCardsLayout(s, usable, 64, node);
      ASSERT_TRUE(layout.has_value());
      ExpectFewestAndFits(s, usable, node, *layout);
    }
  }
}

TEST(ExpertParallelTest, ExpertParallelGivesFewerCardsWhereHeadsDoNotDivide) {
  // A Mixtral-shaped model with 6 query heads (no tensor parallelism of 4)
  // and few layers: on 4 cards only expert parallelism (TP 2 x EP 4) or a
  // pipeline fits; EP needs less than the 2-stage pipeline's fullest stage
  // here because the experts split 4 ways and the dense part 2 ways.
  InferenceSizing s;
  s.parameters = 40e9;
  s.weight_bytes = 80e9;
  s.expert_weight_bytes = 76e9;
  s.num_experts = 8;
  s.num_experts_per_token = 2;
  s.num_moe_layers = 3;
  s.num_layers = 3;
  s.num_largest_layers = 3;
  s.embedding_parameters = 1e9;
  s.num_attention_heads = 6;
  s.num_key_value_heads = 2;
  s.hidden_size = 4096;
  s.kv_cache_bytes = 1e9;
  s.model_kv_cache_bytes = 1e9;
  s.kv_cache_bytes_largest_layer = 1e9 / 3;
  s.overhead_bytes = kGiB;
  s.batch_size = 2;  // one sequence on each of the 2 attention replicas
  const NodeSize node{.cards = 8, .assumed = false};
  // EP 4 x TP 2: 4 GB / 2 + 76 GB x 2 / 8 + 1 GB / 2 replicas / 2 KV heads + 1 GiB = 22.32 GB.
  const double ep4 = 4e9 / 2 + 76e9 * 2 / 8 + 1e9 / 2 / 2 + kGiB;
  EXPECT_DOUBLE_EQ(
      RequiredBytesPerCard(
          s, Layout{.tensor_parallel = 2, .pipeline_parallel = 1, .expert_parallel = 4}),
      ep4);
  const std::optional<Layout> got = FewestCardsLayout(s, ep4, 64, node);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->cards(), 4);
  EXPECT_EQ(got->expert_parallel, 4);
  EXPECT_EQ(got->tensor_parallel, 2);
  ExpectFewestAndFits(s, ep4, node, *got);
  // Without the experts' shape the same capacity takes more cards.
  InferenceSizing dense = s;
  dense.expert_weight_bytes = 0;
  const std::optional<Layout> without = FewestCardsLayout(dense, ep4, 64, node);
  ASSERT_TRUE(without.has_value());
  EXPECT_GT(without->cards(), 4);
  EXPECT_EQ(LayoutName(*got, node), "TP 2 x EP 4 (one node)");
}

TEST(ExpertParallelTest, DecodeBoundIsItsArithmetic) {
  // Mixtral 8x7B in bf16 on 8 H100s, TP 1 x EP 8, 8 sequences of 4,096
  // tokens (one per replica).
  const InferenceSizing s = Size("models/mixtral-8x7b-v0-1", NumberFormat::kBf16, 4096, 8);
  const Layout layout{.tensor_parallel = 1, .pipeline_parallel = 1, .expert_parallel = 8};
  SpeedInput speed{.sizing = &s,
                   .layout = layout,
                   .nodes = 1,
                   .batch_size = 8,
                   .bandwidth_bytes_per_second = 3.35e12};
  speed.within_node = WithinNodeLink(H100().links);
  const DecodeBound d = BoundDecode(speed);
  // Reads: the dense part (every parameter but the routed experts'), one
  // routed expert of each layer (top-2 over 8 cards: ceil(2 / 8) = 1), and
  // one sequence's cache: 2 x 32 layers x 8 KV heads x 128 x 2 bytes x 4096.
  const double expert = kMixtralRouted * 2 / 8;  // one expert of every layer, bytes
  const double dense = (46702792704.0 - kMixtralRouted) * 2;
  const double kv = 2.0 * 32 * 8 * 128 * 2 * 4096;
  EXPECT_EQ(d.experts_read_per_card, 1);
  EXPECT_NEAR(d.memory_seconds, (dense + expert + kv) / 3.35e12, 1e-9);
  // Two all-to-alls per MoE layer: 1 token x top-2 x 4096 x 2 bytes, 7/8 of
  // it to the other 7 cards over NVLink at 450 GB/s, 2 us each.
  const double one = 2e-6 + 7.0 / 8 * 1 * 2 * 4096 * 2 / 450e9;
  EXPECT_NEAR(d.expert_parallel_seconds, 2 * 32 * one, 1e-12);
  EXPECT_EQ(d.tensor_parallel_seconds, 0);
  // 8 sequences, 1 per replica: the batch does not split in two on a replica.
  EXPECT_FALSE(d.overlapped && d.memory_seconds < d.expert_parallel_seconds);
  EXPECT_NEAR(d.tokens_per_second_per_sequence, 1 / d.step_seconds(), 1e-9);
}

TEST(ExpertParallelTest, LaunchCommandsNameTheLayoutAndEachNode) {
  // DeepSeek-V3 fp8, TP 8 x EP 16 over 2 nodes of 8 H100s.
  const InferenceSizing s = Size("models/deepseek-v3", NumberFormat::kFp8, 32768, 4);
  ResolvedWorkload workload;
  workload.batch_size = 4;
  workload.context_length_tokens = 32768;
  workload.weight_format = NumberFormat::kFp8;
  const Layout layout{.tensor_parallel = 8, .pipeline_parallel = 1, .expert_parallel = 16};
  DevicePlan plan;
  plan.fits = true;
  plan.cards = 16;
  plan.tensor_parallel = 8;
  plan.pipeline_parallel = 1;
  plan.expert_parallel = 16;
  plan.nodes = 2;
  plan.weight_bytes_per_card = WeightBytesPerCard(s, layout);
  plan.kv_cache_bytes_per_card = KvBytesPerCard(s, layout);
  plan.activation_bytes_per_card = s.activation_bytes;
  plan.overhead_bytes_per_card = s.overhead_bytes;
  plan.required_bytes_per_card = RequiredBytesPerCard(s, layout);
  const RuntimeModel model{.repo_id = "deepseek-ai/DeepSeek-V3",
                           .num_layers = 61,
                           .num_attention_heads = 128,
                           .hidden_size = 7168,
                           .intermediate_size = 18432,
                           .vocab_size = 129280,
                           .max_context_length = 163840};
  const RuntimeFit vllm = FitRuntime(Runtime::kVllm, model, s, workload, H100(), plan, "NVIDIA");
  ASSERT_TRUE(vllm.fits) << vllm.reason;
  // Each of the 2 data-parallel engines keeps its own blocks for its 2 of
  // the 4 sequences; a token's latent cache is whole on every TP rank:
  // 61 layers x (512 + 64) x 2 bytes = 70,272 bytes.
  EXPECT_DOUBLE_EQ(vllm.kv_cache_bytes_needed_per_card, 2.0 * 32768 * 61 * 576 * 2);
  EXPECT_TRUE(absl::StrContains(vllm.reason,
                                "the batch needs 2 (the fullest of 2 data-parallel "
                                "engines; batch 4)"))
      << vllm.reason;
  EXPECT_EQ(vllm.launch_command,
            "vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size 8 --data-parallel-size 2 "
            "--enable-expert-parallel --max-model-len 32768");
  ASSERT_EQ(vllm.node_commands.size(), 2u);
  EXPECT_EQ(vllm.node_commands[0],
            "node 0: " + vllm.launch_command +
                " --data-parallel-size-local 1 --data-parallel-address <node-0-address> "
                "--data-parallel-rpc-port 13345 (serves the API) (8 cards)");
  EXPECT_TRUE(absl::StrContains(vllm.node_commands[1],
                                "--data-parallel-size-local 1 --data-parallel-start-rank 1 "
                                "--headless"));
  const RuntimeFit sglang =
      FitRuntime(Runtime::kSglang, model, s, workload, H100(), plan, "NVIDIA");
  ASSERT_TRUE(sglang.fits) << sglang.reason;
  EXPECT_TRUE(
      absl::StrContains(sglang.launch_command, "--tp 16 --ep-size 16 --enable-dp-attention --dp 2"))
      << sglang.launch_command;
  ASSERT_EQ(sglang.node_commands.size(), 2u);
  EXPECT_TRUE(absl::StrContains(sglang.node_commands[1],
                                "--nnodes 2 --node-rank 1 --dist-init-addr <node-0-address>:5000"));
  // TP 8 x PP 2 over the same nodes: a Ray cluster, then vllm serve on its head.
  DevicePlan pipeline = plan;
  pipeline.expert_parallel = 0;
  pipeline.pipeline_parallel = 2;
  const RuntimeFit ray = FitRuntime(Runtime::kVllm, model, s, workload, H100(), pipeline, "NVIDIA");
  ASSERT_EQ(ray.node_commands.size(), 3u) << ray.reason;
  EXPECT_EQ(ray.node_commands[0], "node 0 (head): ray start --head --port 6379");
  EXPECT_EQ(ray.node_commands[1], "node 1: ray start --address <node-0-address>:6379");
  EXPECT_TRUE(absl::StrContains(ray.node_commands[2], "--pipeline-parallel-size 2"));
  EXPECT_TRUE(absl::StrContains(ray.node_commands[2], "--distributed-executor-backend ray"));
}

// A split over a card whose bandwidth on record is doubtful (Epoch AI's
// MetaX MXC500 figure, 18 TB/s over 64 GiB, ten times the shipped record's)
// says so on that card, with the reason the plan gives, and not on the
// other.
TEST(LayerSplitAnswerTest, ADoubtfulBandwidthIsSaidOnItsCard) {
  common::v1::Hardware mxc500 = ShippedHardware("hardware/metax-mxc500-oam");
  mxc500.set_memory_bandwidth_bytes_per_second(18e12);
  const std::vector<common::v1::Hardware> hardware = {
      mxc500, ShippedHardware("hardware/nvidia-geforce-rtx-4090")};
  v1::PlanInferenceRequest request;
  request.set_model("models/llama-3-1-8b");
  request.mutable_workload()->set_context_length_tokens(8192);
  request.add_split_cards("hardware/metax-mxc500-oam");
  request.add_split_cards("hardware/nvidia-geforce-rtx-4090");
  absl::StatusOr<v1::PlanInferenceResponse> answer =
      PlanInferenceFor(ShippedModel("models/llama-3-1-8b"), hardware, request);
  ASSERT_TRUE(answer.ok()) << answer.status();
  const v1::LayerSplitPlan& split = answer->layer_split();
  ASSERT_EQ(split.cards_size(), 2);
  EXPECT_TRUE(absl::StartsWith(split.cards(0).decode_bound_doubtful(),
                               "bandwidth doubtful: 1.8e+04 GB/s over 64.00 GiB reads the whole "
                               "memory 261.9 times a second"))
      << split.cards(0).decode_bound_doubtful();
  EXPECT_TRUE(split.cards(1).decode_bound_doubtful().empty());
  EXPECT_NE(std::find(split.arithmetic().begin(), split.arithmetic().end(),
                      absl::StrCat("MetaX MXC500 (OAM): ", split.cards(0).decode_bound_doubtful())),
            split.arithmetic().end());
}

// The layer split through the plan's answer (PlanInferenceRequest.split_cards):
// each card found by its name or alias, the answer the core split's, an
// unknown card NOT_FOUND naming its field, a shared name asked back, an
// over-full one named.
TEST(LayerSplitAnswerTest, SplitCardsAreFoundPlannedAndNamed) {
  const std::vector<common::v1::Hardware> hardware = {
      ShippedHardware("hardware/nvidia-geforce-rtx-4090"),
      ShippedHardware("hardware/nvidia-geforce-rtx-3090"),
      ShippedHardware("hardware/nvidia-geforce-rtx-3060")};
  v1::PlanInferenceRequest request;
  request.set_model("models/llama-3-1-8b");
  request.mutable_workload()->set_context_length_tokens(8192);
  for (const char* card : {"RTX 4090", "RTX 3090", "RTX 3060 12GB"}) request.add_split_cards(card);
  absl::StatusOr<v1::PlanInferenceResponse> answer =
      PlanInferenceFor(ShippedModel("models/llama-3-1-8b"), hardware, request);
  ASSERT_TRUE(answer.ok()) << answer.status();
  ASSERT_TRUE(answer->has_layer_split());
  const v1::LayerSplitPlan& split = answer->layer_split();
  EXPECT_TRUE(split.fits()) << split.reason();
  ASSERT_EQ(split.cards_size(), 3);
  EXPECT_EQ(split.cards(0).hardware(), "hardware/nvidia-geforce-rtx-4090");
  EXPECT_EQ(split.cards(2).hardware(), "hardware/nvidia-geforce-rtx-3060");
  int layers = 0;
  for (const v1::LayerSplitCard& card : split.cards()) {
    layers += card.layers();
    EXPECT_LE(card.required_bytes(), card.usable_bytes()) << card.display_name();
  }
  EXPECT_EQ(layers, 32);
  EXPECT_TRUE(split.cards(2).output_layer());
  // The 12 GB card gets fewer layers than the 24 GB ones.
  EXPECT_LT(split.cards(2).layers(), split.cards(1).layers());
  EXPECT_TRUE(
      absl::StrContains(split.launch_command(), "llama-server -m <model.gguf> -ngl 33 -ts "))
      << split.launch_command();
  EXPECT_TRUE(split.has_decode_tokens_per_second());

  // An unknown card: NOT_FOUND naming its place in the list.
  v1::PlanInferenceRequest unknown = request;
  unknown.set_split_cards(1, "RTX 9999");
  absl::StatusOr<v1::PlanInferenceResponse> missing =
      PlanInferenceFor(ShippedModel("models/llama-3-1-8b"), hardware, unknown);
  ASSERT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "split_cards[1]"));

  // A name two records share ("RTX 3060": the 8 GB and the 12 GB card) is
  // asked back with both, never split over one of them silently; the bare id
  // and the card's own alias each name one.
  std::vector<common::v1::Hardware> both = hardware;
  both.push_back(ShippedHardware("hardware/nvidia-geforce-rtx-3060-8gb"));
  v1::PlanInferenceRequest shared = request;
  shared.set_split_cards(2, "RTX 3060");
  absl::StatusOr<v1::PlanInferenceResponse> ambiguous =
      PlanInferenceFor(ShippedModel("models/llama-3-1-8b"), both, shared);
  ASSERT_EQ(ambiguous.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(ambiguous.status().message(), "split_cards[2]"));
  EXPECT_TRUE(
      absl::StrContains(ambiguous.status().message(), "hardware/nvidia-geforce-rtx-3060-8gb"));
  for (const char* name : {"nvidia-geforce-rtx-3060-8gb", "RTX 3060 8GB"}) {
    shared.set_split_cards(2, name);
    absl::StatusOr<v1::PlanInferenceResponse> one =
        PlanInferenceFor(ShippedModel("models/llama-3-1-8b"), both, shared);
    ASSERT_TRUE(one.ok()) << name << ": " << one.status();
    EXPECT_EQ(one->layer_split().cards(2).hardware(), "hardware/nvidia-geforce-rtx-3060-8gb");
  }

  // Llama 3.1 70B in bf16 does not fit on the three: the first card is named.
  v1::PlanInferenceRequest big = request;
  big.set_model("models/llama-3-1-70b");
  absl::StatusOr<v1::PlanInferenceResponse> over =
      PlanInferenceFor(ShippedModel("models/llama-3-1-70b"), hardware, big);
  ASSERT_TRUE(over.ok()) << over.status();
  EXPECT_FALSE(over->layer_split().fits());
  EXPECT_TRUE(absl::StartsWith(over->layer_split().reason(),
                               "does not fit on NVIDIA GeForce RTX 4090: its "))
      << over->layer_split().reason();
  EXPECT_TRUE(over->layer_split().launch_command().empty());
}

}  // namespace
}  // namespace modelatlas::estimator
