// Speed bounds that respect the hardware (issue 21, point 4): the links of
// a record, the interconnect's share of a decode step, pipeline bubbles,
// the compute roof, the devices the roofline does not apply to, and the
// bounds compared with published measurements (docs/ACCURACY.md, "Speed
// bounds"), which they must never fall below.
#include "estimator-service/core/speed.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "catalog-service/dataset.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/core/plan.h"
#include "tests/estimator/shipped_records.h"

namespace modelatlas::estimator {
namespace {

using testing::Shipped;
using testing::ShippedHardware;
using testing::ShippedModel;

using common::v1::Hardware;
using common::v1::Model;

// A shipped model sized as every answer sizes it (runnable.cc's composition).
InferenceSizing Sized(const Model& model, const ResolvedWorkload& workload) {
  InferenceMemoryInput input;
  input.architecture = ToCoreArchitecture(model.architecture());
  auto parameters = ParametersOfModel(model, &*input.architecture);
  EXPECT_TRUE(parameters.ok()) << parameters.status();
  input.parameters = parameters.ok() ? *parameters : 0;
  input.workload = workload;
  auto sizing = SizeInference(input);
  EXPECT_TRUE(sizing.ok()) << sizing.status();
  return sizing.ok() ? *sizing : InferenceSizing();
}

ResolvedWorkload Workload(NumberFormat format, int64_t context, int batch) {
  ResolvedWorkload w;
  w.weight_format = format;
  w.kv_cache_format = format;
  w.context_length_tokens = context;
  w.context_defaulted = false;
  w.batch_size = batch;
  return w;
}

// The bound for a record on a given layout, as PlanOnDevice computes it.
SpeedInput On(const InferenceSizing& sizing, const DeviceSpec& device, Layout layout, int nodes,
              const ResolvedWorkload& w) {
  SpeedInput in{.sizing = &sizing,
                .layout = layout,
                .nodes = nodes,
                .batch_size = w.batch_size,
                .prompt_tokens = w.prompt_tokens,
                .prefill_chunk_tokens = w.prefill_chunk_tokens,
                .prefill_efficiency = w.prefill_efficiency,
                .bandwidth_bytes_per_second = device.bandwidth_bytes_per_second,
                .peak_flops = device.peak_flops};
  if (layout.cards() > 1) in.within_node = WithinNodeLink(device.links);
  if (nodes > 1) in.between_nodes = BetweenNodesLink(device.links);
  return in;
}

// ---- links ------------------------------------------------------------

TEST(LinksTest, ScaleUpFabricThenPcieThenTheRecordsFigure) {
  const DeviceSpec h100 =
      DeviceOf(ShippedHardware("hardware/nvidia-h100-sxm5-80gb"), NumberFormat::kBf16);
  // The record's 900 GB/s is both directions summed.
  auto link = WithinNodeLink(h100.links);
  ASSERT_TRUE(link.has_value());
  EXPECT_DOUBLE_EQ(link->bytes_per_second, 450e9);
  EXPECT_DOUBLE_EQ(link->latency_seconds, kScaleUpLatencySeconds);

  // PCIe only (scale-up domain 1): x16 at gen 4 = 16 GT/s x 16 lanes / 8.
  const DeviceSpec l4 = DeviceOf(ShippedHardware("hardware/nvidia-l4"), NumberFormat::kBf16);
  link = WithinNodeLink(l4.links);
  ASSERT_TRUE(link.has_value());
  EXPECT_DOUBLE_EQ(link->bytes_per_second, 32e9);
  EXPECT_DOUBLE_EQ(link->latency_seconds, kPcieLatencySeconds);
  DeviceLinks gen3{.pcie_generation = 3};
  EXPECT_DOUBLE_EQ(WithinNodeLink(gen3)->bytes_per_second, 16e9);

  DeviceLinks none;
  EXPECT_FALSE(WithinNodeLink(none).has_value());
  none.intra_node_bytes_per_second = 20e9;
  EXPECT_DOUBLE_EQ(WithinNodeLink(none)->bytes_per_second, 20e9);

  // Between nodes: the record's figure, else the stated assumption.
  EXPECT_DOUBLE_EQ(BetweenNodesLink(h100.links).bytes_per_second, 50e9);
  EXPECT_FALSE(BetweenNodesLink(h100.links).assumed);
  const DeviceSpec b200 = DeviceOf(ShippedHardware("hardware/nvidia-b200"), NumberFormat::kBf16);
  EXPECT_TRUE(BetweenNodesLink(b200.links).assumed);
  EXPECT_DOUBLE_EQ(BetweenNodesLink(b200.links).bytes_per_second, kAssumedNetworkBytesPerSecond);
}

TEST(LinksTest, OnChipSramDevicesAreNotGivenARoofline) {
  EXPECT_TRUE(DeviceOf(ShippedHardware("hardware/cerebras-cs-2"), NumberFormat::kBf16)
                  .roofline_does_not_apply);  // memory type "on-wafer SRAM"
  // No memory type on record: 80 TB/s over 230 MiB is read 330,000 times a second.
  EXPECT_TRUE(DeviceOf(ShippedHardware("hardware/groqchip-lpu-v1"), NumberFormat::kBf16)
                  .roofline_does_not_apply);
  // Exactly the SRAM records of the shipped dataset: the two above, and
  // Epoch's MTIA v1/v2 records, whose 128/256 MB at 0.8/1 TB/s are the
  // chips' on-chip SRAM (read 6,000 and 3,700 times a second). Every HBM,
  // GDDR or LPDDR device keeps its roofline.
  std::set<std::string> not_modelled;
  for (const Hardware& hw : Shipped().hardware()) {
    if (DeviceOf(hw, NumberFormat::kBf16).roofline_does_not_apply) not_modelled.insert(hw.name());
  }
  EXPECT_EQ(not_modelled, (std::set<std::string>{
                              "hardware/cerebras-cs-2", "hardware/groqchip-lpu-v1",
                              "hardware/meta-mtia-v1-mtia-100", "hardware/meta-mtia-v2-mtia-200"}));
  EXPECT_FALSE(RooflineDoesNotApply("HBM3", 80.0 * (1 << 30), 3.35e12));
  EXPECT_TRUE(RooflineDoesNotApply("on-chip sram", 80.0 * (1 << 30), 3.35e12));
}

// A DRAM device read more often than any on record is flagged (Epoch AI's
// MetaX MXC500 figure: 18 TB/s over 64 GiB, 262 times a second); SRAM
// designs are not (no roofline), nor any HBM, GDDR or LPDDR device of the
// dataset, which lists none as doubtful (ShippedDatasetTest).
TEST(LinksTest, BandwidthBeyondAnyDramDeviceIsDoubtful) {
  std::set<std::string> doubtful;
  for (const Hardware& hw : Shipped().hardware()) {
    if (DeviceOf(hw, NumberFormat::kBf16).bandwidth_doubtful) doubtful.insert(hw.name());
  }
  EXPECT_EQ(doubtful, std::set<std::string>{});
  Hardware epochs_mxc500 = ShippedHardware("hardware/metax-mxc500-oam");
  epochs_mxc500.set_memory_bandwidth_bytes_per_second(18e12);
  EXPECT_TRUE(DeviceOf(epochs_mxc500, NumberFormat::kBf16).bandwidth_doubtful);
  const double gib = 1 << 30;
  EXPECT_FALSE(BandwidthDoubtful("HBM3", 80 * gib, 3.35e12));  // 39 a second
  EXPECT_FALSE(BandwidthDoubtful("", 64 * gib, 150 * 64 * gib));
  EXPECT_TRUE(BandwidthDoubtful("", 64 * gib, 151 * 64 * gib));
  EXPECT_TRUE(BandwidthDoubtful("HBM2e", 64 * gib, 18e12));
  EXPECT_FALSE(BandwidthDoubtful("", 64 * gib, 1001 * 64 * gib));  // on-chip: no roofline
  EXPECT_FALSE(BandwidthDoubtful("SRAM", 64 * gib, 200 * 64 * gib));
  EXPECT_FALSE(BandwidthDoubtful("HBM3", 0, 3.35e12));
}

// ---- decode and prefill -------------------------------------------------

TEST(DecodeBoundTest, TensorParallelPaysTwoAllReducesPerLayer) {
  const ResolvedWorkload w = Workload(NumberFormat::kBf16, 8192, 1);
  const InferenceSizing s = Sized(ShippedModel("models/llama-3-1-70b"), w);
  const DeviceSpec h100 =
      DeviceOf(ShippedHardware("hardware/nvidia-h100-sxm5-80gb"), NumberFormat::kBf16);
  const DecodeBound d = BoundDecode(On(s, h100, {.tensor_parallel = 4}, 1, w));
  // Memory: weights / 4 + KV / 4 (8 KV heads over 4 ranks), read at 3.35 TB/s.
  EXPECT_NEAR(d.memory_seconds, (s.weight_bytes / 4 + s.kv_cache_bytes / 4) / 3.35e12, 1e-12);
  // 80 layers x 2 all-reduces of one sequence's 8192 x 2 bytes, ring over
  // 4: 2 us + 2 x 3/4 x 16,384 B / 450 GB/s each; one sequence cannot
  // overlap them with its reads.
  const double one = 2e-6 + 1.5 * 8192 * 2 / 450e9;
  EXPECT_NEAR(d.tensor_parallel_seconds, 160 * one, 1e-12);
  EXPECT_DOUBLE_EQ(d.pipeline_seconds, 0);
  EXPECT_FALSE(d.overlapped);
  EXPECT_NEAR(d.tokens_per_second_per_sequence, 1 / (d.memory_seconds + 160 * one), 1e-9);
  EXPECT_NEAR(d.tokens_per_second_all, d.tokens_per_second_per_sequence, 1e-9);
  EXPECT_FALSE(d.compute_bound);
  // Without the links it would be 1 / memory.
  EXPECT_LT(d.tokens_per_second_per_sequence, 0.99 / d.memory_seconds);
}

// A pipeline within one node crosses no network: the between-nodes link
// is left unset, as the plan leaves it, and the bound is a number (it was
// NaN: 0 crossings x bytes / 0 bytes/s; Mixtral 8x7B on 3 L40S, PP 3).
TEST(DecodeBoundTest, PipelineWithinOneNodeIsANumber) {
  const ResolvedWorkload one = Workload(NumberFormat::kBf16, 4096, 1);
  const InferenceSizing s = Sized(ShippedModel("models/llama-3-1-70b"), one);
  const DeviceSpec a100 =
      DeviceOf(ShippedHardware("hardware/nvidia-a100-sxm4-40gb"), NumberFormat::kBf16);
  const DecodeBound d =
      BoundDecode(On(s, a100, {.tensor_parallel = 1, .pipeline_parallel = 3}, 1, one));
  ASSERT_TRUE(std::isfinite(d.tokens_per_second_per_sequence));
  EXPECT_GT(d.tokens_per_second_per_sequence, 0);
  // 2 hops inside the node over its own link, none across.
  const double bytes = 8192 * 2;
  EXPECT_NEAR(d.pipeline_seconds, 2 * (2e-6 + bytes / 300e9), 1e-12);
}

TEST(DecodeBoundTest, PipelineHopsBubblesAndMicroBatches) {
  const ResolvedWorkload one = Workload(NumberFormat::kBf16, 4096, 1);
  const InferenceSizing s = Sized(ShippedModel("models/llama-3-1-70b"), one);
  const DeviceSpec a100 =
      DeviceOf(ShippedHardware("hardware/nvidia-a100-sxm4-40gb"), NumberFormat::kBf16);
  // TP 4 x PP 4 over 2 nodes of 8: 3 hops, one across the record's 25 GB/s network.
  const DecodeBound d = BoundDecode(On(s, a100, {4, 4}, 2, one));
  EXPECT_EQ(d.micro_batches, 1);
  const double bytes = 8192 * 2;
  EXPECT_NEAR(d.pipeline_seconds, (5e-6 + bytes / 25e9) + 2 * (2e-6 + bytes / 300e9), 1e-12);
  // One sequence: the stages wait for each other; the weights are read once per step.
  EXPECT_NEAR(d.memory_seconds, (s.weight_bytes / 4 + s.kv_cache_bytes / 4) / 1.555e12, 1e-12);
  // Four sequences fill the four stages: four micro-batches, each reading
  // the weights, so a step costs one pass with a quarter of the cache each.
  ResolvedWorkload four = one;
  four.batch_size = 4;
  const InferenceSizing s4 = Sized(ShippedModel("models/llama-3-1-70b"), four);
  const DecodeBound d4 = BoundDecode(On(s4, a100, {4, 4}, 2, four));
  EXPECT_EQ(d4.micro_batches, 4);
  EXPECT_NEAR(d4.memory_seconds, (s4.weight_bytes / 4 + s4.kv_cache_bytes / 4 / 4) / 1.555e12,
              1e-12);
  EXPECT_GT(d4.tokens_per_second_all, d.tokens_per_second_all);
}

TEST(DecodeBoundTest, TheAggregateStopsAtTheComputeRoof) {
  // 4096 short sequences on one H100: reading weights and cache would allow
  // 327,000 tokens/s, the FP8 peak only 123,000.
  const ResolvedWorkload w = Workload(NumberFormat::kFp8, 128, 4096);
  const InferenceSizing s = Sized(ShippedModel("models/llama-3-1-8b"), w);
  const DeviceSpec h100 =
      DeviceOf(ShippedHardware("hardware/nvidia-h100-sxm5-80gb"), NumberFormat::kFp8);
  const DecodeBound d = BoundDecode(On(s, h100, {1, 1}, 1, w));
  const double roof = 1978.9e12 / (2 * s.active_parameters());
  EXPECT_TRUE(d.compute_bound);
  EXPECT_NEAR(d.tokens_per_second_all, roof, 1e-9 * roof);
  EXPECT_NEAR(d.tokens_per_second_per_sequence, roof / 4096, 1e-9 * roof);
  EXPECT_GT(4096 / d.step_seconds(), 2 * roof);
}

TEST(DecodeBoundTest, ABatchOverlapsLinksWithReadsOneSequenceCannot) {
  const DeviceSpec h100 =
      DeviceOf(ShippedHardware("hardware/nvidia-h100-sxm5-80gb"), NumberFormat::kBf16);
  const ResolvedWorkload one = Workload(NumberFormat::kBf16, 4096, 1);
  const InferenceSizing s1 = Sized(ShippedModel("models/llama-3-1-70b"), one);
  const DecodeBound d1 = BoundDecode(On(s1, h100, {8, 1}, 1, one));
  EXPECT_FALSE(d1.overlapped);
  EXPECT_NEAR(d1.step_seconds(), d1.memory_seconds + d1.tensor_parallel_seconds, 1e-15);
  const ResolvedWorkload two = Workload(NumberFormat::kBf16, 4096, 2);
  const InferenceSizing s2 = Sized(ShippedModel("models/llama-3-1-70b"), two);
  const DecodeBound d2 = BoundDecode(On(s2, h100, {8, 1}, 1, two));
  EXPECT_TRUE(d2.overlapped);
  EXPECT_NEAR(d2.step_seconds(), std::max(d2.memory_seconds, d2.tensor_parallel_seconds), 1e-15);
}

TEST(PrefillBoundTest, TimeToFirstTokenCarriesThePipelineBubble) {
  ResolvedWorkload w = Workload(NumberFormat::kBf16, 8192, 1);
  w.prompt_tokens = 2048;
  w.prefill_chunk_tokens = 512;
  const InferenceSizing s = Sized(ShippedModel("models/llama-3-1-70b"), w);
  DeviceSpec h100 =
      DeviceOf(ShippedHardware("hardware/nvidia-h100-sxm5-80gb"), NumberFormat::kBf16);
  const PrefillBound one_stage = BoundPrefill(On(s, h100, {8, 1}, 1, w));
  const double compute = 2048 * 2 * s.active_parameters() / (8 * 989.4e12 * 0.5);
  EXPECT_NEAR(one_stage.time_to_first_token_seconds, compute, 1e-12);
  // Four stages of 2: 4 chunks take (4 + 3) stage-steps where 4 would do.
  const PrefillBound staged = BoundPrefill(On(s, h100, {2, 4}, 1, w));
  EXPECT_EQ(staged.chunks, 4);
  EXPECT_NEAR(staged.time_to_first_token_seconds, compute * 7 / 4, 1e-12);
}

// ---- the issue's examples ---------------------------------------------

TEST(SpeedIssueExamplesTest, SixtyFourV100sNoLongerDecodeFasterThanOneB200) {
  // Llama 3.1 70B in bf16, one sequence of 4096 tokens: fits one B200.
  const ResolvedWorkload w = Workload(NumberFormat::kBf16, 4096, 1);
  const InferenceSizing s = Sized(ShippedModel("models/llama-3-1-70b"), w);
  const DeviceSpec v100 =
      DeviceOf(ShippedHardware("hardware/nvidia-v100-sxm2-16gb"), NumberFormat::kBf16);
  const DeviceSpec b200 = DeviceOf(ShippedHardware("hardware/nvidia-b200"), NumberFormat::kBf16);
  const DecodeBound one_b200 = BoundDecode(On(s, b200, {1, 1}, 1, w));
  // 64 V100s: TP 8 within each 8-card NVLink node, 8 stages over 8 nodes
  // (the record's 12.5 GB/s network).
  const DecodeBound sixty_four = BoundDecode(On(s, v100, {8, 8}, 8, w));
  EXPECT_LT(sixty_four.tokens_per_second_per_sequence, one_b200.tokens_per_second_per_sequence);
  EXPECT_GT(sixty_four.pipeline_seconds, 0);
  EXPECT_GT(sixty_four.tensor_parallel_seconds, 0);
  // What the plans used to give: 64 cards reading at once, 7.2x one B200.
  const double all_at_once = 64 * 900e9 / (s.weight_bytes + s.kv_cache_bytes);
  EXPECT_GT(all_at_once, 7 * one_b200.tokens_per_second_per_sequence);

  // And as the plan answers it, over the shipped records (the V100s: the
  // fewest that fit, over two nodes).
  v1::PlanInferenceRequest request;
  request.mutable_workload()->set_context_length_tokens(4096);
  auto plan =
      PlanInferenceFor(ShippedModel("models/llama-3-1-70b"),
                       SharedRecords<Hardware>({ShippedHardware("hardware/nvidia-b200"),
                                                ShippedHardware("hardware/nvidia-v100-sxm2-16gb")}),
                       request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->plans_size(), 2);
  const bool b200_first = plan->plans(0).hardware() == "hardware/nvidia-b200";
  const auto& b200_plan = plan->plans(b200_first ? 0 : 1);
  const auto& v100_plan = plan->plans(b200_first ? 1 : 0);
  ASSERT_TRUE(b200_plan.fits_on_one_card());
  ASSERT_TRUE(v100_plan.fits());
  EXPECT_GT(v100_plan.nodes(), 1);
  EXPECT_LT(v100_plan.decode_tokens_per_second(), b200_plan.decode_tokens_per_second());
  EXPECT_GT(v100_plan.decode_communication_seconds(), 0);
  EXPECT_FALSE(b200_plan.has_decode_communication_seconds());
}

TEST(SpeedIssueExamplesTest, CerebrasAndGroqAreNotGivenARooflineFigure) {
  // The issue's example: Llama 3.1 70B at 32k x 8 showed 704,825 tokens/s on a CS-2.
  v1::PlanInferenceRequest request;
  request.mutable_workload()->set_context_length_tokens(32768);
  request.mutable_workload()->set_batch_size(8);
  request.set_max_cards(1024);
  auto plan =
      PlanInferenceFor(ShippedModel("models/llama-3-1-70b"),
                       SharedRecords<Hardware>({ShippedHardware("hardware/cerebras-cs-2"),
                                                ShippedHardware("hardware/groqchip-lpu-v1")}),
                       request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->plans_size(), 2);
  for (const auto& p : plan->plans()) {
    SCOPED_TRACE(p.hardware());
    if (!p.fits()) continue;  // 230 MB GroqChips: more than 1024 of them
    EXPECT_FALSE(p.has_decode_tokens_per_second());
    EXPECT_FALSE(p.has_decode_tokens_per_second_batch());
    EXPECT_FALSE(p.has_prefill_tokens_per_second());
    EXPECT_FALSE(p.has_time_to_first_token_seconds());
    EXPECT_FALSE(p.has_cost_usd_per_million_tokens());
    EXPECT_NE(p.speed_not_modelled().find("not modelled"), std::string::npos);
  }
  EXPECT_TRUE(plan->plans(0).hardware() == "hardware/cerebras-cs-2" ? plan->plans(0).fits()
                                                                    : plan->plans(1).fits());
}

// ---- published measurements -----------------------------------------------
//
// NVIDIA, "Performance of TensorRT-LLM", docs/source/performance.md in
// github.com/NVIDIA/TensorRT-LLM at commit 138f96d45f90b9667426f7c47297d8c06bafac73
// (data of v0.6.1; the L40S table of v0.5): measured output tokens/s at a
// stated batch size, tensor parallelism, input and output length
// (gptSessionBenchmark, static batching: the time includes the prefill).
// The H100 table gives tokens/s per GPU (x TP here). The decode bound is
// taken at the mean context of the generation, input + output / 2 (a step
// costs what its context reads, linearly), with FP8 weights and KV cache on
// H100 and L40S (--enable_fp8 --fp8_kv_cache) and FP16 on A100.
struct Published {
  const char* model;
  const char* hardware;
  NumberFormat format;
  int tensor_parallel;
  int batch;
  int input_tokens;
  int output_tokens;
  double measured_tokens_per_second;  // the whole batch, every GPU
  double ratio_in_docs;               // bound / measured, docs/ACCURACY.md
};

constexpr Published kPublished[] = {
    {"models/llama-2-7b", "hardware/nvidia-h100-sxm5-80gb", NumberFormat::kFp8, 1, 768, 128, 128,
     19694, 2.86},
    {"models/llama-2-7b", "hardware/nvidia-h100-sxm5-80gb", NumberFormat::kFp8, 1, 48, 2048, 2048,
     2740, 1.29},
    {"models/llama-2-70b", "hardware/nvidia-h100-sxm5-80gb", NumberFormat::kFp8, 2, 64, 2048, 2048,
     547.0 * 2, 3.85},
    {"models/llama-2-7b", "hardware/nvidia-a100-sxm4-80gb", NumberFormat::kFp16, 1, 384, 128, 128,
     5586, 2.69},
    {"models/llama-2-7b", "hardware/nvidia-l40s", NumberFormat::kFp8, 1, 64, 128, 128, 3240, 1.67},
    // The A100 table's header does not say per GPU; read as per GPU (x 4),
    // the stricter reading for a bound.
    {"models/llama-2-70b", "hardware/nvidia-a100-sxm4-80gb", NumberFormat::kFp16, 4, 240, 128, 2048,
     525.0 * 4, 4.08},
};

TEST(SpeedAccuracyTest, DecodeBoundsStayAbovePublishedMeasurements) {
  for (const Published& p : kPublished) {
    SCOPED_TRACE(std::string(p.model) + " on " + std::to_string(p.tensor_parallel) + " x " +
                 p.hardware + ", batch " + std::to_string(p.batch));
    const ResolvedWorkload w = Workload(p.format, p.input_tokens + p.output_tokens / 2, p.batch);
    const InferenceSizing s = Sized(ShippedModel(p.model), w);
    const DeviceSpec device = DeviceOf(ShippedHardware(p.hardware), p.format);
    // The published configuration fits the memory the plan allows.
    EXPECT_LE(RequiredBytesPerCard(s, Layout{.tensor_parallel = p.tensor_parallel}),
              device.memory_bytes * w.memory_utilization);
    const DecodeBound d = BoundDecode(On(s, device, {p.tensor_parallel, 1}, 1, w));
    const double ratio = d.tokens_per_second_all / p.measured_tokens_per_second;
    EXPECT_GE(ratio, 1.0) << "the bound " << d.tokens_per_second_all << " tokens/s is below "
                          << p.measured_tokens_per_second;
    EXPECT_NEAR(ratio, p.ratio_in_docs, 0.01) << "docs/ACCURACY.md is out of date";
  }
}

// Time to first token: the same publication's "Low Latency" tables (batch
// 1, v0.5). A bound on time is a floor: at 100% of peak (prefill_efficiency
// 1) the answer must not exceed the measurement. At the default efficiency
// of 0.5 it is an estimate, not a bound.
struct PublishedFirstToken {
  const char* model;
  const char* hardware;
  NumberFormat format;
  int tensor_parallel;
  int input_tokens;
  double measured_seconds;
  double ratio_in_docs;  // bound / measured
};

constexpr PublishedFirstToken kFirstToken[] = {
    {"models/llama-2-70b", "hardware/nvidia-h100-sxm5-80gb", NumberFormat::kFp8, 4, 2048, 0.109,
     0.33},
    {"models/llama-2-7b", "hardware/nvidia-h100-sxm5-80gb", NumberFormat::kFp8, 1, 2048, 0.036,
     0.39},
    {"models/llama-2-7b", "hardware/nvidia-a100-sxm4-80gb", NumberFormat::kFp16, 1, 2048, 0.133,
     0.67},
    {"models/llama-2-70b", "hardware/nvidia-a100-sxm4-80gb", NumberFormat::kFp16, 4, 2048, 0.377,
     0.60},
};

TEST(SpeedAccuracyTest, TimeToFirstTokenAtFullPeakStaysBelowPublishedMeasurements) {
  for (const PublishedFirstToken& p : kFirstToken) {
    SCOPED_TRACE(std::string(p.model) + " on " + std::to_string(p.tensor_parallel) + " x " +
                 p.hardware);
    ResolvedWorkload w = Workload(p.format, p.input_tokens, 1);
    w.prompt_tokens = p.input_tokens;
    w.prefill_chunk_tokens = p.input_tokens;
    w.prefill_efficiency = 1;
    const InferenceSizing s = Sized(ShippedModel(p.model), w);
    const DeviceSpec device = DeviceOf(ShippedHardware(p.hardware), p.format);
    const PrefillBound b = BoundPrefill(On(s, device, {p.tensor_parallel, 1}, 1, w));
    const double ratio = b.time_to_first_token_seconds / p.measured_seconds;
    EXPECT_LE(ratio, 1.0);
    EXPECT_NEAR(ratio, p.ratio_in_docs, 0.01) << "docs/ACCURACY.md is out of date";
  }
}

// The plan answers with the same figures as the core on the same layout.
TEST(SpeedAccuracyTest, ThePlanGivesTheCoresBound) {
  v1::PlanInferenceRequest request;
  request.mutable_workload()->set_weight_format(v1::NUMBER_FORMAT_FP8);
  request.mutable_workload()->set_kv_cache_format(v1::NUMBER_FORMAT_FP8);
  request.mutable_workload()->set_context_length_tokens(3072);
  request.mutable_workload()->set_batch_size(64);
  auto plan = PlanInferenceFor(
      ShippedModel("models/llama-2-70b"),
      SharedRecords<Hardware>({ShippedHardware("hardware/nvidia-h100-sxm5-80gb")}), request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const auto& p = plan->plans(0);
  ASSERT_EQ(p.cards(), 2);
  ASSERT_EQ(p.tensor_parallel(), 2);
  const ResolvedWorkload w = Workload(NumberFormat::kFp8, 3072, 64);
  const InferenceSizing s = Sized(ShippedModel("models/llama-2-70b"), w);
  const DeviceSpec device =
      DeviceOf(ShippedHardware("hardware/nvidia-h100-sxm5-80gb"), NumberFormat::kFp8);
  const DecodeBound d = BoundDecode(On(s, device, {2, 1}, 1, w));
  EXPECT_NEAR(p.decode_tokens_per_second_batch(), d.tokens_per_second_all, 1e-9);
  EXPECT_NEAR(p.decode_communication_seconds(), d.tensor_parallel_seconds, 1e-15);
  bool stated = false;
  for (const std::string& line : p.arithmetic()) {
    stated |= line.find("TP all-reduces 2 x 80 layers") != std::string::npos;
  }
  EXPECT_TRUE(stated);
}

}  // namespace
}  // namespace modelatlas::estimator
