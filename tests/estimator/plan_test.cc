// Fit and speed bounds on devices (docs/FORMULAS.md, "Fit and speed").
#include "estimator-service/core/plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "estimator-service/core/fit_matrix.h"
#include "tests/estimator/plan_inputs.h"

namespace modelatlas::estimator {
namespace {

// A seeded pseudo-random sequence (Knuth's MMIX linear congruential
// generator): the same cases on every run, so a failure reproduces.
class SeededSequence {
 public:
  explicit SeededSequence(uint64_t seed) : state_(seed) {}
  // The next number in [0, bound).
  uint64_t operator()(uint64_t bound) {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state_ >> 33) % bound;
  }

 private:
  uint64_t state_;
};

constexpr double kGiB = 1073741824.0;

// Llama-3.1-8B in bf16 at 8,192 tokens (the memory estimate's lines),
// without its layer counts: these tests plan the model as one block.
PlanInput Llama8B() {
  PlanInput w = Llama31_8BInBf16();
  w.sizing.num_layers = 0;
  w.sizing.num_largest_layers = 0;
  return w;
}

DeviceSpec H100() {
  DeviceSpec d;
  d.name = "hardware/nvidia-h100-sxm5-80gb";
  d.memory_bytes = 80 * kGiB;
  d.bandwidth_bytes_per_second = 3.35e12;
  d.peak_flops = 989.4e12;
  d.price_usd_per_hour = 4.0;
  return d;
}

TEST(PlanTest, EightBillionOnOneH100WithRooflineBounds) {
  const DevicePlan plan = PlanOnDevice(Llama8B(), H100());
  ASSERT_TRUE(plan.fits);
  EXPECT_TRUE(plan.fits_on_one_card);
  EXPECT_EQ(plan.cards, 1);
  EXPECT_DOUBLE_EQ(plan.usable_bytes_per_card, 80 * kGiB * 0.9);
  EXPECT_DOUBLE_EQ(plan.required_bytes_per_card,
                   16060522496.0 + 1073741824 + 44553216 + 1073741824);
  // Decode: 3.35e12 B/s / (16,060,522,496 + 1,073,741,824) B = 195.5 tokens/s.
  EXPECT_NEAR(*plan.decode_tokens_per_second, 3.35e12 / (16060522496.0 + 1073741824), 1e-6);
  // Prefill: 989.4e12 x 0.5 / (2 x 8,030,261,248) = 30,804 tokens/s; TTFT for 1000 tokens.
  EXPECT_NEAR(*plan.prefill_tokens_per_second, 989.4e12 * 0.5 / (2 * 8030261248.0), 1e-6);
  EXPECT_NEAR(*plan.time_to_first_token_seconds, 1000 / *plan.prefill_tokens_per_second, 1e-12);
  // Cost: $4/h / (195.5 tokens/s x 3600) x 1e6 = $5.68 per million tokens.
  EXPECT_NEAR(*plan.cost_usd_per_million_tokens,
              4.0 / (*plan.decode_tokens_per_second * 3600) * 1e6, 1e-9);
  EXPECT_GE(plan.arithmetic.size(), 5u);
  // The per-card parts add up to what a card needs.
  EXPECT_DOUBLE_EQ(plan.weight_bytes_per_card + plan.kv_cache_bytes_per_card +
                       plan.activation_bytes_per_card + plan.overhead_bytes_per_card,
                   plan.required_bytes_per_card);
  EXPECT_DOUBLE_EQ(plan.weight_bytes_per_card, 16060522496.0);
}

// A record's bandwidth and price texts kept with its UsableCard are copied
// only for the value they were written from: a request's price replaces the
// record's, and a card whose kept texts were written from other values
// (here deliberately wrong text) states its own figures, on one card and on
// several.
TEST(PlanTest, KeptRecordFiguresAreCopiedOnlyForTheirOwnValue) {
  for (const double memory_gib : {80.0, 12.0}) {  // one card, then two
    DeviceSpec device = H100();
    device.memory_bytes = memory_gib * kGiB;
    const UsableCard kept = UsableCardOf(device, 0.9);
    ASSERT_TRUE(kept.bandwidth_gb_per_second.kept);
    EXPECT_EQ(kept.bandwidth_gb_per_second.text, "3350");
    EXPECT_EQ(kept.price_usd_per_hour.text, "4");
    const DevicePlan plain = PlanOnDevice(Llama8B(), device);
    ASSERT_TRUE(plain.fits);
    EXPECT_EQ(plain.cards, memory_gib == 80.0 ? 1 : 2);
    EXPECT_EQ(PlanOnDevice(Llama8B(), device, &kept).arithmetic, plain.arithmetic);

    UsableCard wrong = kept;
    wrong.bandwidth_gb_per_second.value = 1;
    wrong.bandwidth_gb_per_second.text = "WRONG";
    wrong.price_usd_per_hour.value = 1;
    wrong.price_usd_per_hour.text = "WRONG";
    const DevicePlan with_wrong = PlanOnDevice(Llama8B(), device, &wrong);
    EXPECT_EQ(with_wrong.arithmetic, plain.arithmetic);

    DeviceSpec requested_price = device;
    requested_price.price_usd_per_hour = 2.5;  // the request's, not the record's
    const DevicePlan priced = PlanOnDevice(Llama8B(), requested_price, &kept);
    EXPECT_EQ(priced.arithmetic, PlanOnDevice(Llama8B(), requested_price).arithmetic);
    ASSERT_FALSE(priced.arithmetic.empty());
    EXPECT_NE(priced.arithmetic.back().find(" x $2.5/h"), std::string::npos)
        << priced.arithmetic.back();
  }
}

// A model whose KV cache could not be counted (no architecture on record)
// is planned without it, and each card's memory line says so where "KV
// cache 0.00 GiB" would read as none needed, on one card and on several;
// a counted cache reads as before.
TEST(PlanTest, AKvCacheNotCountedIsSaidOnEveryCardsMemoryLine) {
  for (const double memory_gib : {80.0, 12.0}) {  // one card, then two
    DeviceSpec device = H100();
    device.memory_bytes = memory_gib * kGiB;
    PlanInput uncounted = Llama8B();
    uncounted.sizing.kv_cache_bytes = 0;
    uncounted.sizing.model_kv_cache_bytes = 0;
    uncounted.sizing.kv_cache_not_counted = true;
    const auto memory_line = [](const DevicePlan& plan) {
      for (const std::string& line : plan.arithmetic) {
        if (absl::StartsWith(line, "per card on ")) return line;
      }
      return std::string("(no memory line)");
    };
    const DevicePlan plan = PlanOnDevice(uncounted, device);
    ASSERT_TRUE(plan.fits);
    EXPECT_EQ(plan.cards, memory_gib == 80.0 ? 1 : 2);
    EXPECT_EQ(plan.kv_cache_bytes_per_card, 0);
    EXPECT_NE(memory_line(plan).find(
                  "KV cache 0.00 GiB (not counted: no architecture or context) + activations"),
              std::string::npos)
        << memory_line(plan);
    const DevicePlan counted = PlanOnDevice(Llama8B(), device);
    EXPECT_NE(memory_line(counted).find(memory_gib == 80.0 ? "KV cache 1.00 GiB + activations"
                                                           : "KV cache 0.50 GiB + activations"),
              std::string::npos)
        << memory_line(counted);
  }
}

TEST(PlanTest, PerCardPartsSplitTheWeightsOverTheCards) {
  PlanInput w = Llama8B();
  w.sizing.weight_bytes = 141e9;  // a 70B model in bf16
  w.sizing.num_attention_heads = 64;
  const DevicePlan plan = PlanOnDevice(w, H100());
  ASSERT_EQ(plan.cards, 2);
  EXPECT_DOUBLE_EQ(plan.weight_bytes_per_card, 141e9 / 2);
  EXPECT_DOUBLE_EQ(plan.overhead_bytes_per_card, w.sizing.overhead_bytes);
  EXPECT_DOUBLE_EQ(plan.weight_bytes_per_card + plan.kv_cache_bytes_per_card +
                       plan.activation_bytes_per_card + plan.overhead_bytes_per_card,
                   plan.required_bytes_per_card);
}

TEST(PlanTest, TensorParallelismTakesTheFewestValidCards) {
  PlanInput w = Llama8B();
  w.sizing.weight_bytes = 141e9;  // a 70B model in bf16
  w.sizing.num_attention_heads = 64;
  DevicePlan plan = PlanOnDevice(w, H100());
  ASSERT_TRUE(plan.fits);
  EXPECT_EQ(plan.cards, 2);
  EXPECT_DOUBLE_EQ(plan.required_bytes_per_card,
                   141e9 / 2 + 1073741824.0 / 2 + 44553216 + 1073741824);
  // 14 heads (Qwen2.5-0.5B) cannot be split 4 or 8 ways.
  w.sizing.num_attention_heads = 14;
  w.sizing.num_key_value_heads = 2;
  w.sizing.weight_bytes = 300e9;
  plan = PlanOnDevice(w, H100());
  EXPECT_FALSE(plan.fits);
  EXPECT_NE(plan.reason.find("does not fit"), std::string::npos);
  EXPECT_LT(plan.headroom_bytes_per_card, 0);
}

TEST(PlanTest, FewerKvHeadsThanCardsReplicateTheCache) {
  PlanInput w = Llama8B();
  w.sizing.weight_bytes = 300e9;
  w.sizing.num_key_value_heads = 2;
  w.sizing.kv_cache_bytes = 8e9;
  const DevicePlan plan = PlanOnDevice(w, H100());
  ASSERT_TRUE(plan.fits);
  EXPECT_EQ(plan.cards, 8);
  EXPECT_DOUBLE_EQ(plan.required_bytes_per_card, 300e9 / 8 + 8e9 / 2 + 44553216 + 1073741824);
}

TEST(PlanTest, UnifiedMemoryCountsTheGpusShare) {
  DeviceSpec mac;
  mac.name = "hardware/apple-m2-ultra-192gb";
  mac.memory_bytes = 192 * kGiB;
  mac.bandwidth_bytes_per_second = 800e9;
  mac.unified_memory = true;
  const DevicePlan plan = PlanOnDevice(Llama8B(), mac);
  EXPECT_DOUBLE_EQ(plan.usable_bytes_per_card, 192 * kGiB * 0.75);
  EXPECT_TRUE(plan.fits_on_one_card);
  EXPECT_FALSE(plan.prefill_tokens_per_second.has_value());    // no peak on record
  EXPECT_FALSE(plan.cost_usd_per_million_tokens.has_value());  // no price on record
}

TEST(PlanTest, MixtureOfExpertsReadsOnlyActiveWeightsPerToken) {
  PlanInput w = Llama8B();
  w.sizing.parameters = 46.7e9;
  w.sizing.active_share = 12.9e9 / 46.7e9;
  w.sizing.weight_bytes = 93.4e9;
  w.sizing.kv_cache_bytes = 0;
  const DevicePlan plan = PlanOnDevice(w, H100());
  ASSERT_TRUE(plan.fits);
  EXPECT_EQ(plan.cards, 2);
  EXPECT_NEAR(*plan.decode_tokens_per_second, 3.35e12 / (93.4e9 * (12.9 / 46.7) / 2), 1e-3);
}

TEST(PlanTest, RankingByObjective) {
  DeviceSpec cheap = H100();
  cheap.name = "b-cheap";
  cheap.price_usd_per_hour = 1.0;
  cheap.bandwidth_bytes_per_second = 1e12;
  DeviceSpec fast = H100();
  fast.name = "a-fast";
  fast.price_usd_per_hour = 10.0;
  fast.bandwidth_bytes_per_second = 8e12;
  DeviceSpec tiny = H100();
  tiny.name = "c-tiny";
  tiny.memory_bytes = 1 * kGiB;
  std::vector<DevicePlan> plans = {PlanOnDevice(Llama8B(), tiny), PlanOnDevice(Llama8B(), cheap),
                                   PlanOnDevice(Llama8B(), fast)};
  RankPlans(PlanObjective::kCheapest, &plans);
  EXPECT_EQ(plans[0].name, "b-cheap");
  EXPECT_EQ(plans[2].name, "c-tiny");  // does not fit: last
  RankPlans(PlanObjective::kFastest, &plans);
  EXPECT_EQ(plans[0].name, "a-fast");
  EXPECT_EQ(plans[2].name, "c-tiny");
}

// A card whose bandwidth on record is doubtful (Epoch AI's MetaX MXC500
// figure: 18 TB/s over 64 GiB, ten times other sources') would be ranked
// first by speed and by cost on it: it ranks after every card whose figures
// are credible, with as many cards, by any objective, and says why.
TEST(PlanTest, ASpeedOnADoubtfulBandwidthRanksAfterTheCredibleOnes) {
  DeviceSpec credible = H100();
  credible.name = "b-credible";
  credible.price_usd_per_hour = 2.0;
  DeviceSpec doubtful = H100();
  doubtful.name = "a-doubtful";
  doubtful.memory_bytes = 64 * kGiB;
  doubtful.bandwidth_bytes_per_second = 18e12;
  doubtful.bandwidth_doubtful = true;
  doubtful.price_usd_per_hour = 1.0;
  DeviceSpec slow = H100();
  slow.name = "c-slow";
  slow.bandwidth_bytes_per_second = 1e12;
  slow.price_usd_per_hour.reset();
  for (const PlanObjective objective :
       {PlanObjective::kFewestCards, PlanObjective::kFastest, PlanObjective::kCheapest}) {
    std::vector<DevicePlan> plans = {PlanOnDevice(Llama8B(), doubtful),
                                     PlanOnDevice(Llama8B(), credible),
                                     PlanOnDevice(Llama8B(), slow)};
    ASSERT_GT(*plans[0].decode_tokens_per_second_all, *plans[1].decode_tokens_per_second_all);
    ASSERT_LT(*plans[0].cost_usd_per_million_tokens, *plans[1].cost_usd_per_million_tokens);
    EXPECT_TRUE(
        absl::StartsWith(plans[0].decode_bound_doubtful, "bandwidth doubtful: 1.8e+04 GB/s"))
        << plans[0].decode_bound_doubtful;
    EXPECT_NE(std::find(plans[0].arithmetic.begin(), plans[0].arithmetic.end(),
                        plans[0].decode_bound_doubtful),
              plans[0].arithmetic.end());
    EXPECT_EQ(plans[1].decode_bound_doubtful, "");
    RankPlans(objective, &plans);
    std::vector<std::string> order;
    for (const DevicePlan& plan : plans) order.push_back(plan.name);
    // Cheapest: a credible cost first, then the doubtful one, then none.
    EXPECT_EQ(order,
              (std::vector<std::string>{
                  "b-credible", objective == PlanObjective::kCheapest ? "a-doubtful" : "c-slow",
                  objective == PlanObjective::kCheapest ? "c-slow" : "a-doubtful"}))
        << static_cast<int>(objective);
  }
}

// ---- any card count, more than one node (issue 21, point 2) -----------

// A 405B-parameter dense model in bf16 (Llama 3.1 405B's shape: 126 layers,
// 128 query and 8 KV heads, 128,256 x 16,384 embeddings, untied head).
PlanInput Llama405B() {
  PlanInput w;
  w.sizing.parameters = 405.85e9;
  w.sizing.weight_bytes = 2 * 405.85e9;
  w.sizing.num_attention_heads = 128;
  w.sizing.num_key_value_heads = 8;
  w.sizing.num_layers = 126;
  w.sizing.num_largest_layers = 126;
  w.sizing.embedding_parameters = 2.0 * 128256 * 16384;
  // 2 x 126 layers x 8 KV heads x 128 x 2 bytes = 516,096 bytes per token, 8192 tokens.
  w.sizing.kv_cache_bytes = 516096.0 * 8192;
  w.sizing.model_kv_cache_bytes = w.sizing.kv_cache_bytes;
  w.sizing.kv_cache_bytes_largest_layer = w.sizing.kv_cache_bytes / 126;
  w.sizing.activation_bytes = 1e8;
  w.sizing.overhead_bytes = 1073741824;
  w.workload.prompt_tokens = 1000;
  return w;
}

// A bandwidth no DRAM device reaches is stated, and said to be doubtful,
// right after the decode bound that rests on it (the figure stays: the plan
// answers from the record and says what it doubts).
TEST(PlanTest, ADoubtfulBandwidthIsSaidBesideTheDecodeBound) {
  const auto line_after_decode = [](const DevicePlan& plan) -> std::string {
    for (size_t i = 0; i + 1 < plan.arithmetic.size(); ++i) {
      // One card's line, or several cards' (with their links).
      const std::string& line = plan.arithmetic[i];
      if (absl::StartsWith(line, "decode bound: ") || absl::StartsWith(line, "decode step: ")) {
        return plan.arithmetic[i + 1];
      }
    }
    return "";
  };
  const DevicePlan usual = PlanOnDevice(Llama8B(), H100());
  for (const std::string& line : usual.arithmetic) {
    EXPECT_FALSE(absl::StrContains(line, "doubtful")) << line;
  }
  DeviceSpec mxc500 = H100();
  mxc500.name = "hardware/metax-mxc500-oam";
  mxc500.memory_bytes = 64 * kGiB;
  mxc500.bandwidth_bytes_per_second = 18e12;
  mxc500.bandwidth_doubtful = true;
  const DevicePlan plan = PlanOnDevice(Llama8B(), mxc500);
  ASSERT_TRUE(plan.decode_tokens_per_second.has_value());
  // Kept with the record's UsableCard (a plan over every accelerator), the
  // line is written once per record and copied: the same lines.
  const UsableCard kept = UsableCardOf(mxc500, 0.9);
  ASSERT_TRUE(kept.doubtful_bandwidth_line.kept);
  EXPECT_EQ(PlanOnDevice(Llama8B(), mxc500, &kept).arithmetic, plan.arithmetic);
  EXPECT_EQ(line_after_decode(plan),
            "bandwidth doubtful: 1.8e+04 GB/s over 64.00 GiB reads the whole memory 261.9 times a "
            "second, more than any DRAM device on record (at most 150): the record's figure may "
            "be wrong, and the decode bound rests on it");
  // On several cards too (a 405B model over 64 GiB cards).
  const DevicePlan several = PlanOnDevice(Llama405B(), mxc500);
  ASSERT_GT(several.cards, 1);
  EXPECT_TRUE(absl::StartsWith(line_after_decode(several), "bandwidth doubtful: "))
      << absl::StrJoin(several.arithmetic, "\n");
}

// The per-card bound, computed here from the formula in docs/FORMULAS.md.
double StageBytes(const InferenceSizing& s, int tp, int pp) {
  const int layers = (s.num_layers + pp - 1) / pp;
  const double weights =
      pp == 1 ? s.weight_bytes
              : std::min(s.weight_bytes,
                         layers * s.weight_bytes / s.num_largest_layers +
                             s.embedding_parameters * std::max(2.0, s.weight_bytes / s.parameters));
  const double kv = pp == 1 ? s.kv_cache_bytes
                            : std::min(s.kv_cache_bytes, layers * s.kv_cache_bytes_largest_layer);
  return weights / tp + kv / std::min(tp, s.num_key_value_heads) + s.activation_bytes +
         s.overhead_bytes;
}

TEST(LayoutTest, TensorParallelWithinANodePipelineAcrossNodes) {
  const PlanInput w = Llama405B();
  const DevicePlan plan = PlanOnDevice(w, H100());  // no scale-up domain on record
  ASSERT_TRUE(plan.fits) << plan.reason;
  const double usable = 80 * kGiB * 0.9;
  // The fewest cards: no layout of fewer cards fits, independently computed.
  for (int cards = 1; cards < plan.cards; ++cards) {
    for (int tp = 1; tp <= std::min(cards, 8); ++tp) {
      if (cards % tp != 0 || 128 % tp != 0 || (8 % tp != 0 && tp % 8 != 0)) continue;
      EXPECT_GT(StageBytes(w.sizing, tp, cards / tp), usable) << cards << " cards, TP " << tp;
    }
  }
  // At the fewest cards, the widest tensor parallelism (at most 8: one
  // node) that divides the cards and the heads and fits.
  int widest = 0;
  for (int tp = std::min(plan.cards, 8); tp >= 1 && widest == 0; --tp) {
    if (plan.cards % tp == 0 && 128 % tp == 0 && (8 % tp == 0 || tp % 8 == 0) &&
        StageBytes(w.sizing, tp, plan.cards / tp) <= usable) {
      widest = tp;
    }
  }
  EXPECT_EQ(plan.tensor_parallel, widest);
  EXPECT_EQ(plan.pipeline_parallel, plan.cards / widest);
  EXPECT_GT(plan.pipeline_parallel, 1);
  EXPECT_EQ(plan.nodes, (plan.cards + 7) / 8);
  EXPECT_EQ(plan.layout, "TP " + std::to_string(widest) + " x PP " +
                             std::to_string(plan.pipeline_parallel) + " over " +
                             std::to_string(plan.nodes) + " nodes");
  EXPECT_DOUBLE_EQ(plan.required_bytes_per_card,
                   StageBytes(w.sizing, widest, plan.pipeline_parallel));
  EXPECT_LE(plan.required_bytes_per_card, usable);
  bool assumption_stated = false;
  for (const std::string& line : plan.arithmetic) {
    assumption_stated |= line.find("assumed") != std::string::npos;
  }
  EXPECT_TRUE(assumption_stated);
  // Decode: the stages run in turn, so only the tensor-parallel cards read at once.
  EXPECT_NEAR(*plan.decode_tokens_per_second,
              3.35e12 * widest / (w.sizing.weight_bytes + w.sizing.kv_cache_bytes), 1e-9);
}

TEST(LayoutTest, TheRecordsScaleUpDomainBoundsTensorParallelism) {
  DeviceSpec four = H100();
  four.scale_up_domain_size = 4;
  const DevicePlan plan = PlanOnDevice(Llama405B(), four);
  ASSERT_TRUE(plan.fits);
  EXPECT_LE(plan.tensor_parallel, 4);
  EXPECT_GT(plan.pipeline_parallel, 1);
  EXPECT_EQ(plan.nodes, (plan.cards + 3) / 4);
  // The node size is the record's (the link between nodes may still be an
  // assumption, core/speed.h, stated on the decode line).
  for (const std::string& line : plan.arithmetic) {
    EXPECT_EQ(line.find("assumed: the record has no scale-up domain"), std::string::npos) << line;
  }
}

TEST(LayoutTest, AnyCardCountPipelinesWhereHeadsDoNotDivide) {
  // 32 heads cannot be split 3 ways; three pipeline stages of 11, 11 and 10
  // layers can hold what two cards cannot.
  PlanInput w = Llama8B();
  w.sizing.weight_bytes = 160e9;
  w.sizing.parameters = 80e9;
  w.sizing.num_layers = 32;
  w.sizing.num_largest_layers = 32;
  w.sizing.embedding_parameters = 1e9;
  w.sizing.model_kv_cache_bytes = w.sizing.kv_cache_bytes;
  w.sizing.kv_cache_bytes_largest_layer = w.sizing.kv_cache_bytes / 32;
  w.max_cards = 3;
  const DevicePlan plan = PlanOnDevice(w, H100());
  ASSERT_TRUE(plan.fits) << plan.reason;
  EXPECT_EQ(plan.cards, 3);
  EXPECT_EQ(plan.layout, "PP 3 (one node)");
  EXPECT_GT(StageBytes(w.sizing, 2, 1), 80 * kGiB * 0.9);
  EXPECT_DOUBLE_EQ(plan.required_bytes_per_card, std::min(160e9, 11 * 160e9 / 32 + 1e9 * 2.0) +
                                                     11 * (1073741824.0 / 32) + 44553216 +
                                                     1073741824);
  // Without a layer count (an encoder-decoder, or no shape) there are no stages.
  w.sizing.num_layers = 0;
  EXPECT_FALSE(PlanOnDevice(w, H100()).fits);
}

TEST(LayoutTest, LatentAttentionCacheIsWholeOnEveryRank) {
  InferenceSizing s = Llama8B().sizing;
  s.kv_cache_replicated = true;
  EXPECT_DOUBLE_EQ(KvBytesPerCard(s, 8), s.kv_cache_bytes);
  EXPECT_DOUBLE_EQ(KvBytesPerCard(s, Layout{.tensor_parallel = 8, .pipeline_parallel = 1}),
                   s.kv_cache_bytes);
  s.kv_cache_replicated = false;
  EXPECT_DOUBLE_EQ(KvBytesPerCard(s, 8), s.kv_cache_bytes / 8);
}

// The fit matrix's search gives FewestCardsLayout's answer for every
// capacity: shapes with and without heads and layers, KV heads that divide
// or are replicated, draft caches, node sizes 1 to 72, 1 to 130 cards, and
// capacities from none to all fitting, each compared layout for layout.
TEST(FewestCardsSearchTest, EveryAnswerIsFewestCardsLayouts) {
  SeededSequence next(12345);
  const int heads[] = {0, 1, 8, 12, 32, 40, 64, 96, 128};
  const int node_sizes[] = {1, 2, 4, 8, 16, 72};
  int compared = 0, fitting = 0, several = 0;
  for (int shape = 0; shape < 300; ++shape) {
    InferenceSizing s;
    s.parameters = 1e8 * static_cast<double>(1 + next(10000));
    s.weight_bytes = s.parameters * (0.5 + static_cast<double>(next(8)) / 2);
    s.kv_cache_bytes = s.weight_bytes * static_cast<double>(next(100)) / 100;
    s.model_kv_cache_bytes = s.kv_cache_bytes * (next(4) == 0 ? 0.8 : 1.0);
    s.activation_bytes = 1e8 * static_cast<double>(next(20));
    s.overhead_bytes = 1073741824.0;
    s.num_attention_heads = heads[next(9)];
    s.num_key_value_heads = s.num_attention_heads == 0 ? 0 : heads[next(9)] % 17;
    s.kv_cache_replicated = next(10) == 0;
    s.num_layers = next(5) == 0 ? 0 : static_cast<int>(1 + next(126));
    s.num_largest_layers = s.num_layers;
    s.kv_cache_bytes_largest_layer = s.num_layers > 0 ? s.model_kv_cache_bytes / s.num_layers : 0;
    s.embedding_parameters = s.parameters * 0.02;
    const NodeSize node{.cards = node_sizes[next(6)], .assumed = false};
    const int max_cards = static_cast<int>(1 + next(130));
    FewestCardsSearch search(s, max_cards, node);
    // A plan's searches, asked for this node size and for others in turn.
    FewestCardsSearches searches(s, max_cards);
    for (int c = 0; c < 40; ++c) {
      const double usable = 1e9 * static_cast<double>(next(200)) + static_cast<double>(next(1000));
      const std::optional<Layout> want = FewestCardsLayout(s, usable, max_cards, node);
      const std::optional<Layout> got = search.Find(usable);
      ASSERT_EQ(got.has_value(), want.has_value()) << shape << " " << usable;
      const std::optional<Layout> planned = searches.Find(usable, node);
      ASSERT_EQ(planned.has_value(), want.has_value()) << shape << " " << usable;
      const NodeSize other{.cards = node_sizes[next(6)], .assumed = next(2) == 0};
      const std::optional<Layout> other_want = FewestCardsLayout(s, usable, max_cards, other);
      const std::optional<Layout> other_planned = searches.Find(usable, other);
      ASSERT_EQ(other_planned.has_value(), other_want.has_value()) << shape << " " << usable;
      if (other_want.has_value()) {
        ASSERT_EQ(other_planned->tensor_parallel, other_want->tensor_parallel);
        ASSERT_EQ(other_planned->pipeline_parallel, other_want->pipeline_parallel);
      }
      if (want.has_value()) {
        ASSERT_EQ(got->tensor_parallel, want->tensor_parallel) << shape << " " << usable;
        ASSERT_EQ(got->pipeline_parallel, want->pipeline_parallel) << shape << " " << usable;
        ASSERT_EQ(planned->tensor_parallel, want->tensor_parallel) << shape << " " << usable;
        ASSERT_EQ(planned->pipeline_parallel, want->pipeline_parallel) << shape << " " << usable;
        ++fitting;
        several += want->cards() > 1;
      }
      ++compared;
    }
  }
  EXPECT_EQ(compared, 12000);
  // Not a test of nothing: many capacities fit, many on several cards, many not.
  EXPECT_GT(fitting, 2000);
  EXPECT_GT(several, 1000);
  EXPECT_LT(fitting, 11000);
}

// FewestCardsLayout gives up at once on a capacity under the activations and
// overhead every card holds (NothingFits, fit_matrix.cc); FewestCardsSearch,
// which tries every layout, must agree at, just under and just over that
// capacity, for dense and expert shapes, with weights or KV cache of zero
// (where the capacity equal to activations + overhead fits on one card), and
// with parts that are negative or NaN (where the shortcut must not apply).
TEST(FewestCardsSearchTest, CapacitiesUnderTheFixedPartsAreTheSearchsAnswer) {
  SeededSequence next(777);
  int compared = 0, fitting = 0, at_the_fixed_parts = 0;
  for (int shape = 0; shape < 400; ++shape) {
    InferenceSizing s;
    s.parameters = 1e8 * static_cast<double>(1 + next(1000));
    s.weight_bytes = next(6) == 0 ? 0 : s.parameters * 2;
    s.kv_cache_bytes = next(6) == 0 ? 0 : s.weight_bytes * static_cast<double>(next(50)) / 100;
    s.model_kv_cache_bytes = s.kv_cache_bytes;
    s.activation_bytes = 1e7 * static_cast<double>(next(200));
    s.overhead_bytes = next(2) == 0 ? 0 : 1073741824.0;
    s.num_attention_heads = 32;
    s.num_key_value_heads = 8;
    s.num_layers = 32;
    s.num_largest_layers = 32;
    s.kv_cache_bytes_largest_layer = s.kv_cache_bytes / 32;
    s.embedding_parameters = s.parameters * 0.02;
    if (next(3) == 0) {  // a mixture of experts: expert parallel layouts too
      s.expert_weight_bytes = s.weight_bytes * 0.9;
      s.num_experts = 64;
      s.num_experts_per_token = 8;
      s.num_moe_layers = 32;
    }
    switch (next(6)) {  // parts the shortcut must not trust
      case 0:
        s.model_kv_cache_bytes = s.kv_cache_bytes + 1e9;
        break;
      case 1:
        s.weight_bytes = -s.weight_bytes - 1;
        break;
      case 2:
        s.kv_cache_bytes_largest_layer = std::nan("");
        break;
      default:
        break;
    }
    const NodeSize node{.cards = 8, .assumed = false};
    const int max_cards = static_cast<int>(1 + next(64));
    FewestCardsSearch search(s, max_cards, node);
    const double fixed = s.activation_bytes + s.overhead_bytes;
    for (const double usable : {0.0, fixed * 0.5, std::nextafter(fixed, 0.0), fixed,
                                std::nextafter(fixed, 1e300), fixed + 1e9, fixed + 1e11}) {
      const std::optional<Layout> want = search.Find(usable);
      const std::optional<Layout> got = FewestCardsLayout(s, usable, max_cards, node);
      ASSERT_EQ(got.has_value(), want.has_value()) << shape << " " << usable;
      // A plan's searches (one card first, then the node's search): the same.
      FewestCardsSearches searches(s, max_cards);
      const std::optional<Layout> planned = searches.Find(usable, node);
      ASSERT_EQ(planned.has_value(), want.has_value()) << shape << " " << usable;
      if (want.has_value()) {
        ASSERT_EQ(got->tensor_parallel, want->tensor_parallel) << shape << " " << usable;
        ASSERT_EQ(got->pipeline_parallel, want->pipeline_parallel) << shape << " " << usable;
        ASSERT_EQ(got->expert_parallel, want->expert_parallel) << shape << " " << usable;
        ASSERT_EQ(planned->tensor_parallel, want->tensor_parallel) << shape << " " << usable;
        ASSERT_EQ(planned->pipeline_parallel, want->pipeline_parallel) << shape << " " << usable;
        ASSERT_EQ(planned->expert_parallel, want->expert_parallel) << shape << " " << usable;
        ++fitting;
        at_the_fixed_parts += usable == fixed;
      }
      ++compared;
    }
  }
  EXPECT_EQ(compared, 2800);
  // Not a test of nothing: capacities fit, some exactly at the fixed parts
  // (weights and KV cache of zero), and many do not.
  EXPECT_GT(fitting, 500);
  EXPECT_GT(at_the_fixed_parts, 5);
  EXPECT_LT(fitting, 2500);
}

// RankOrder against the order plan.h documents, written here as a plain
// comparator and a stable sort: fitting plans first (cards alone before
// offload), then the objective, fewer cards, faster, then by name; plans
// that do not fit by name. Random plans with many ties (cards, speeds,
// costs, -0 and +0, absent figures, repeated names), names in position order
// (RankOrder's integer keys) and shuffled, and a few NaN speeds (both take
// RankOrder's comparator path), for each objective.
TEST(RankOrderTest, IsTheDocumentedOrderWithSortedShuffledAndRepeatedNames) {
  SeededSequence next(99);
  const auto reference = [](PlanObjective objective, const std::vector<DevicePlan>& plans) {
    std::vector<int> order(plans.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(), [&](int ia, int ib) {
      const DevicePlan& a = plans[ia];
      const DevicePlan& b = plans[ib];
      if (a.fits != b.fits) return a.fits;
      if (!a.fits) return a.name < b.name;
      if ((a.offload != nullptr) != (b.offload != nullptr)) return a.offload == nullptr;
      const double a_speed = a.decode_tokens_per_second_all.value_or(0);
      const double b_speed = b.decode_tokens_per_second_all.value_or(0);
      // A speed or cost resting on a doubtful bandwidth after the credible.
      const bool a_doubtful = !a.decode_bound_doubtful.empty();
      const bool b_doubtful = !b.decode_bound_doubtful.empty();
      if (objective == PlanObjective::kCheapest) {
        const bool a_cost = a.cost_usd_per_million_tokens.has_value();
        if (a_cost != b.cost_usd_per_million_tokens.has_value()) return a_cost;
        if (a_cost && a_doubtful != b_doubtful) return b_doubtful;
        if (a_cost && *a.cost_usd_per_million_tokens != *b.cost_usd_per_million_tokens) {
          return *a.cost_usd_per_million_tokens < *b.cost_usd_per_million_tokens;
        }
      }
      if (objective == PlanObjective::kFastest) {
        if (a_doubtful != b_doubtful) return b_doubtful;
        if (a_speed != b_speed) return a_speed > b_speed;
      }
      if (a.cards != b.cards) return a.cards < b.cards;
      if (a_doubtful != b_doubtful) return b_doubtful;
      if (a_speed != b_speed) return a_speed > b_speed;
      return a.name < b.name;
    });
    return order;
  };
  const auto offload = std::make_shared<const OffloadPlacement>();
  int lists = 0, nan_lists = 0;
  for (int list = 0; list < 300; ++list) {
    const size_t n = 1 + next(300);
    std::vector<DevicePlan> plans(n);
    for (size_t i = 0; i < n; ++i) {
      DevicePlan& p = plans[i];
      p.name = absl::StrCat("hardware/card-", 1000 + i / (1 + next(3)));  // some repeated
      p.fits = next(5) != 0;
      p.cards = static_cast<int>(1 + next(4));
      if (next(8) == 0) p.offload = offload;
      if (next(6) != 0) {
        const double speeds[] = {0.0, -0.0, 12.5, 100.0, 100.0, 1e300};
        p.decode_tokens_per_second_all = speeds[next(6)];
      }
      if (next(3) != 0) p.cost_usd_per_million_tokens = 0.25 * static_cast<double>(next(4));
      if (next(5) == 0) p.decode_bound_doubtful = "bandwidth doubtful: ...";
    }
    if (list % 2 == 0) {  // names in position order, as the snapshot lists them
      std::vector<std::string> names;
      for (const DevicePlan& p : plans) names.push_back(p.name);
      std::sort(names.begin(), names.end());
      for (size_t i = 0; i < n; ++i) plans[i].name = names[i];
    } else {  // out of position order
      for (size_t i = n; i > 1; --i) std::swap(plans[i - 1].name, plans[next(i)].name);
    }
    if (list % 10 == 4) {
      plans[next(n)].decode_tokens_per_second_all = std::nan("");
      ++nan_lists;
    }
    for (const PlanObjective objective :
         {PlanObjective::kFewestCards, PlanObjective::kCheapest, PlanObjective::kFastest}) {
      if (nan_lists > 0 && list % 10 == 4) {
        // NaN is no order: only that RankOrder lists every plan once.
        std::vector<int> order = RankOrder(objective, plans);
        std::sort(order.begin(), order.end());
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(order[i], static_cast<int>(i));
        continue;
      }
      ASSERT_EQ(RankOrder(objective, plans), reference(objective, plans))
          << "list " << list << " objective " << static_cast<int>(objective);
      // The names' ranks given (as the service gives the prepared list's),
      // computed here by comparing every pair: the same order.
      std::vector<int> ranks(n, 0);
      for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < n; ++j) ranks[i] += plans[j].name < plans[i].name ? 1 : 0;
      }
      ASSERT_EQ(RankOrder(objective, n, plans, ranks), reference(objective, plans))
          << "list " << list << " objective " << static_cast<int>(objective);
      const size_t first = next(n + 1);
      ASSERT_EQ(
          RankOrder(objective, first, plans),
          reference(objective, std::vector<DevicePlan>(plans.begin(), plans.begin() + first)));
    }
    ++lists;
  }
  EXPECT_EQ(lists, 300);
  EXPECT_EQ(nan_lists, 30);
}

// llama.cpp's layer split over unequal cards (issue 21 point 2, -ts):
// Llama 3.1 8B in bf16 at 8,192 tokens over an RTX 4090, an RTX 3090 and an
// RTX 3060 12GB, checked against the arithmetic written out here.
DeviceSpec Card(const std::string& name, double gib, double bandwidth) {
  DeviceSpec d;
  d.name = "hardware/" + name;
  d.display_name = name;
  d.memory_bytes = gib * kGiB;
  d.bandwidth_bytes_per_second = bandwidth;
  return d;
}

PlanInput Llama8BWithLayers() {
  PlanInput w = Llama8B();
  w.sizing.num_layers = 32;
  w.sizing.num_largest_layers = 32;
  // Token embeddings and the untied output head: 2 x 128,256 x 4,096.
  w.sizing.embedding_parameters = 1050673152;
  w.sizing.output_head_parameters = 525336576;
  w.sizing.model_kv_cache_bytes = w.sizing.kv_cache_bytes;
  w.sizing.kv_cache_bytes_largest_layer = w.sizing.kv_cache_bytes / 32;
  w.workload.context_length_tokens = 8192;
  return w;
}

TEST(LayerSplitTest, LayersInProportionToUsableMemoryAsLlamaCppSplits) {
  const std::vector<DeviceSpec> cards = {Card("RTX 4090", 24, 1008e9), Card("RTX 3090", 24, 936e9),
                                         Card("RTX 3060 12GB", 12, 360e9)};
  const LayerSplitPlan plan = PlanLayerSplit(Llama8BWithLayers(), cards);
  ASSERT_TRUE(plan.fits) << plan.reason;
  ASSERT_EQ(plan.cards.size(), 3u);
  // Usable 21.6 : 21.6 : 10.8 GiB, split points 0.4, 0.8, 1.0 over 33
  // layers (32 and the output layer): layer i on the first card whose point
  // exceeds i / 33: 0-13 (13/33 = 0.394), 14-26 (26/33 = 0.788), 27-31 and
  // the output layer.
  EXPECT_EQ(plan.cards[0].layers, 14);
  EXPECT_EQ(plan.cards[1].layers, 13);
  EXPECT_EQ(plan.cards[2].layers, 5);
  EXPECT_FALSE(plan.cards[0].output_layer);
  EXPECT_TRUE(plan.cards[2].output_layer);
  EXPECT_EQ(plan.launch_command, "llama-server -m <model.gguf> -ngl 33 -ts 21.6,21.6,10.8 -c 8192");
  // A layer: (16,060,522,496 - 2 x 1,050,673,152) / 32 = 436,224,256 bytes;
  // its KV cache 1 GiB / 32; the output head 525,336,576 x 2 bytes.
  const double layer = 436224256, kv = 33554432, output = 1050673152;
  const double fixed = 44553216 + 1073741824.0;  // activations + overhead
  EXPECT_DOUBLE_EQ(plan.cards[0].required_bytes, 14 * (layer + kv) + fixed);
  EXPECT_DOUBLE_EQ(plan.cards[1].required_bytes, 13 * (layer + kv) + fixed);
  EXPECT_DOUBLE_EQ(plan.cards[2].required_bytes, 5 * (layer + kv) + output + fixed);
  EXPECT_DOUBLE_EQ(plan.cards[2].usable_bytes, 12 * kGiB * 0.9);
  // Decode: the cards read their layers in turn.
  const double step =
      14 * (layer + kv) / 1008e9 + 13 * (layer + kv) / 936e9 + (5 * (layer + kv) + output) / 360e9;
  ASSERT_TRUE(plan.decode_tokens_per_second.has_value());
  EXPECT_NEAR(*plan.decode_tokens_per_second, 1 / step, 1e-9);
}

// A card whose bandwidth is doubtful (BandwidthDoubtful, core/speed.h: 18
// TB/s over 64 GiB, Epoch's MetaX MXC500) carries the reason, and the
// split's decode bound, which rests on it, is followed by a line naming the
// card; the other card carries none, and without the flag no line says so.
TEST(LayerSplitTest, ADoubtfulBandwidthIsSaidWithTheSplitsDecodeBound) {
  std::vector<DeviceSpec> cards = {Card("MXC500", 64, 18e12), Card("RTX 4090", 24, 1008e9)};
  cards[0].bandwidth_doubtful = true;
  LayerSplitPlan plan = PlanLayerSplit(Llama8BWithLayers(), cards);
  ASSERT_TRUE(plan.fits) << plan.reason;
  const std::string reason = DoubtfulBandwidthReason(64 * kGiB, 18e12);
  EXPECT_EQ(plan.cards[0].decode_bound_doubtful, reason);
  EXPECT_TRUE(plan.cards[1].decode_bound_doubtful.empty());
  const auto decode =
      std::find_if(plan.arithmetic.begin(), plan.arithmetic.end(),
                   [](const std::string& line) { return line.rfind("decode bound: ", 0) == 0; });
  ASSERT_NE(decode, plan.arithmetic.end());
  ASSERT_NE(decode + 1, plan.arithmetic.end());
  EXPECT_EQ(*(decode + 1), "MXC500: " + reason);

  cards[0].bandwidth_doubtful = false;
  plan = PlanLayerSplit(Llama8BWithLayers(), cards);
  EXPECT_TRUE(plan.cards[0].decode_bound_doubtful.empty());
  for (const std::string& line : plan.arithmetic) {
    EXPECT_FALSE(absl::StrContains(line, "bandwidth doubtful")) << line;
  }
}

TEST(LayerSplitTest, AnOverFullSplitNamesTheCard) {
  // Llama 3.1 70B-sized in bf16 (80 layers of 1.71 GiB) does not fit on
  // these three cards: the first card's share is already over.
  PlanInput big = Llama8BWithLayers();
  big.sizing.weight_bytes = 141e9;
  big.sizing.parameters = 70.5e9;
  big.sizing.num_layers = 80;
  big.sizing.num_largest_layers = 80;
  big.sizing.kv_cache_bytes_largest_layer = big.sizing.kv_cache_bytes / 80;
  const std::vector<DeviceSpec> cards = {Card("RTX 4090", 24, 1008e9), Card("RTX 3090", 24, 936e9),
                                         Card("RTX 3060 12GB", 12, 360e9)};
  LayerSplitPlan plan = PlanLayerSplit(big, cards);
  EXPECT_FALSE(plan.fits);
  EXPECT_EQ(plan.reason.rfind("does not fit on RTX 4090: its ", 0), 0u) << plan.reason;
  EXPECT_TRUE(plan.launch_command.empty());
  // Only the output card over-full: a vocabulary of 2.5 million tokens puts
  // a 20.97 GB output head (2.5e6 x 4096 x 2 bytes) beside 5 layers on the
  // 12 GB card, which the 10.8 GiB it may use cannot hold.
  PlanInput wide = Llama8BWithLayers();
  wide.sizing.output_head_parameters = 2.5e6 * 4096;
  plan = PlanLayerSplit(wide, cards);
  EXPECT_FALSE(plan.fits);
  EXPECT_LE(plan.cards[0].required_bytes, plan.cards[0].usable_bytes);
  EXPECT_GT(plan.cards[2].required_bytes, plan.cards[2].usable_bytes);
  EXPECT_EQ(
      plan.reason.rfind("does not fit on RTX 3060 12GB: its 5 layers and the output layer", 0), 0u)
      << plan.reason;
  // Without a layer count there is nothing to split.
  PlanInput shapeless = Llama8B();
  EXPECT_FALSE(PlanLayerSplit(shapeless, cards).fits);
}

}  // namespace
}  // namespace modelatlas::estimator
