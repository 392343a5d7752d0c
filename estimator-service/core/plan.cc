#include "estimator-service/core/plan.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/text/decimal.h"
#include "estimator-service/core/fit_matrix.h"

namespace modelatlas::estimator {
namespace {

constexpr double kGiB = 1073741824.0;

std::string GiB(double bytes) { return absl::StrCat(FixedDecimals(bytes / kGiB, 2), " GiB"); }
std::string Num(double value) { return SignificantDigits(value, 4); }

}  // namespace

double UsableBytesPerCard(const DeviceSpec& device, double memory_utilization,
                          std::string* arithmetic) {
  if (device.allocatable_memory_bytes.has_value()) {
    // The GPU's share of unified memory is already what it may use: no
    // serving engine's fraction on top (llama.cpp and MLX plan on it).
    const double fraction = device.unified_memory ? 1.0 : memory_utilization;
    const double usable = *device.allocatable_memory_bytes * fraction;
    if (arithmetic != nullptr) {
      *arithmetic = absl::StrCat(
          "usable per card: allocatable ", GiB(*device.allocatable_memory_bytes), " of ",
          GiB(device.memory_bytes), " marketed",
          device.allocatable_memory_source.empty()
              ? ""
              : absl::StrCat(" (", device.allocatable_memory_source, ")"),
          device.unified_memory ? ", the GPU's share of unified memory, used whole"
                                : absl::StrCat(" x ", Num(fraction), " (memory utilization)"),
          " = ", GiB(usable));
    }
    return usable;
  }
  const double fraction =
      device.unified_memory ? ResolvedWorkload::kUnifiedMemoryFraction : memory_utilization;
  const double usable = device.memory_bytes * fraction;
  if (arithmetic != nullptr) {
    *arithmetic = absl::StrCat(
        "usable per card: ", GiB(device.memory_bytes), " x ", Num(fraction),
        device.unified_memory ? " (unified memory: the GPU's share)" : " (memory utilization)",
        " = ", GiB(usable));
  }
  return usable;
}

DevicePlan PlanOnDevice(const PlanInput& input, const DeviceSpec& device) {
  const InferenceSizing& shape = input.sizing;
  const ResolvedWorkload& w = input.workload;
  DevicePlan plan;
  plan.name = device.name;
  plan.display_name = device.display_name;
  plan.usable_bytes_per_card =
      UsableBytesPerCard(device, w.memory_utilization, &plan.arithmetic.emplace_back());
  if (device.memory_bytes <= 0) {
    plan.reason = "memory size not on record";
    return plan;
  }

  NodeSize node;
  if (device.scale_up_domain_size.has_value() && *device.scale_up_domain_size > 1) {
    node = {.cards = *device.scale_up_domain_size, .assumed = false};
  }
  const std::optional<Layout> layout =
      FewestCardsLayout(shape, plan.usable_bytes_per_card, input.max_cards, node);
  plan.fits = layout.has_value();
  // What each card holds, by component (the plan's memory bars).
  const auto split = [&](double weight_bytes, double kv_cache_bytes) {
    plan.weight_bytes_per_card = weight_bytes;
    plan.kv_cache_bytes_per_card = kv_cache_bytes;
    plan.activation_bytes_per_card = shape.activation_bytes;
    plan.overhead_bytes_per_card = shape.overhead_bytes;
  };
  if (!plan.fits) {
    split(shape.weight_bytes, KvBytesPerCard(shape, 1));
    plan.required_bytes_per_card = RequiredBytesPerCard(shape, 1);
    plan.headroom_bytes_per_card = plan.usable_bytes_per_card - plan.required_bytes_per_card;
    plan.reason = absl::StrCat("does not fit on ", input.max_cards, " cards or fewer (",
                               GiB(plan.required_bytes_per_card), " needed on one card, ",
                               GiB(plan.usable_bytes_per_card), " usable)");
    return plan;
  }
  const int n = layout->cards();
  const int tp = layout->tensor_parallel;
  const int pp = layout->pipeline_parallel;
  plan.cards = n;
  plan.tensor_parallel = tp;
  plan.pipeline_parallel = pp;
  plan.nodes = (n + node.cards - 1) / node.cards;
  plan.layout = LayoutName(*layout, node);
  plan.fits_on_one_card = n == 1;
  split(WeightBytesPerCard(shape, *layout), KvBytesPerCard(shape, *layout));
  plan.required_bytes_per_card = RequiredBytesPerCard(shape, *layout);
  plan.headroom_bytes_per_card = plan.usable_bytes_per_card - plan.required_bytes_per_card;
  if (n > 1) {
    plan.arithmetic.push_back(absl::StrCat(
        "layout: ", plan.layout, ": tensor parallelism within a node of ", node.cards, " cards",
        node.assumed ? " (assumed: the record has no scale-up domain size)"
                     : " (the record's scale-up domain)",
        ", heads ", shape.num_attention_heads, " / ", tp,
        pp > 1 ? absl::StrCat(", ", pp, " pipeline stages of at most ", LayersPerStage(shape, pp),
                              " of ", shape.num_layers, " layers")
               : std::string()));
  }
  const double weights = WeightBytesPerCard(shape, *layout);
  if (pp > 1) {
    plan.arithmetic.push_back(absl::StrCat(
        "weights per stage (bounded from above): min(", GiB(shape.weight_bytes), ", ",
        LayersPerStage(shape, pp), " layers x ", GiB(shape.weight_bytes), " / ",
        shape.num_largest_layers, " layers + embeddings ", Num(shape.embedding_parameters),
        " parameters x ", Num(std::max(2.0, shape.weight_bytes / shape.parameters)),
        " bytes) = ", GiB(weights * tp), "; KV cache per stage: min(", GiB(shape.kv_cache_bytes),
        ", ", LayersPerStage(shape, pp), " layers x ", GiB(shape.kv_cache_bytes_largest_layer),
        " per full layer",
        shape.kv_cache_bytes > shape.model_kv_cache_bytes ? " + the draft model's" : "", ")"));
  }
  plan.arithmetic.push_back(absl::StrCat(
      "per card on ", n, ": weights ", pp > 1 ? "per stage " : "", GiB(weights * tp), " / ", tp,
      " + KV cache ", GiB(KvBytesPerCard(shape, *layout)),
      shape.kv_cache_replicated && tp > 1 ? " (MLA latent cache: whole on every rank)" : "",
      " + activations ", GiB(shape.activation_bytes), " + overhead ", GiB(shape.overhead_bytes),
      " = ", GiB(plan.required_bytes_per_card), "; headroom ", GiB(plan.headroom_bytes_per_card)));

  // Decode is memory-bound: every step reads the weights (for MoE only the
  // active experts' share) and the batch's KV cache once.
  const double active_share = shape.active_share;
  if (device.bandwidth_bytes_per_second.has_value() && *device.bandwidth_bytes_per_second > 0) {
    // Pipeline stages run one after another for a token: only the tensor
    // parallel cards read at once.
    const double steps =
        DecodeStepsPerSecond(*device.bandwidth_bytes_per_second, tp,
                             shape.weight_bytes * active_share, shape.kv_cache_bytes);
    plan.decode_tokens_per_second = steps;
    plan.decode_tokens_per_second_all = steps * w.batch_size;
    plan.arithmetic.push_back(absl::StrCat(
        "decode bound: ", Num(*device.bandwidth_bytes_per_second / 1e9), " GB/s / ((weights ",
        GiB(shape.weight_bytes), active_share < 1 ? " x active share " : "",
        active_share < 1 ? Num(active_share) : "", " + KV ", GiB(shape.kv_cache_bytes), ") / ", tp,
        pp > 1 ? " tensor-parallel cards; the stages run in turn) = " : " cards) = ", Num(steps),
        " tokens/s per sequence, x ", w.batch_size, " sequences = ", Num(steps * w.batch_size),
        " tokens/s"));
  }

  // Prefill is compute-bound: 2 FLOP per active parameter per token.
  if (device.peak_flops.has_value() && *device.peak_flops > 0 && shape.active_parameters() > 0) {
    const double rate = PrefillTokensPerSecond(n, *device.peak_flops, w.prefill_efficiency,
                                               shape.active_parameters());
    plan.prefill_tokens_per_second = rate;
    plan.arithmetic.push_back(absl::StrCat(
        "prefill bound: ", n, " x ", Num(*device.peak_flops / 1e12), " TFLOP/s x ",
        Num(w.prefill_efficiency), " efficiency / (2 x ", Num(shape.active_parameters()),
        " active parameters) = ", Num(rate), " tokens/s"));
    if (w.prompt_tokens > 0) {
      plan.time_to_first_token_seconds = static_cast<double>(w.prompt_tokens) / rate;
      plan.arithmetic.push_back(
          absl::StrCat("time to first token: ", w.prompt_tokens, " prompt tokens / ", Num(rate),
                       " tokens/s = ", Num(*plan.time_to_first_token_seconds), " s"));
    }
  }

  if (device.price_usd_per_hour.has_value() && plan.decode_tokens_per_second_all.has_value()) {
    const double per_hour = *plan.decode_tokens_per_second_all * 3600;
    plan.cost_usd_per_million_tokens = *device.price_usd_per_hour * n / per_hour * 1e6;
    plan.arithmetic.push_back(
        absl::StrCat("cost: ", n, " x $", Num(*device.price_usd_per_hour), "/h / (",
                     Num(*plan.decode_tokens_per_second_all), " tokens/s x 3600) x 1e6 = $",
                     Num(*plan.cost_usd_per_million_tokens), " per million tokens"));
  }
  return plan;
}

void RankPlans(PlanObjective objective, std::vector<DevicePlan>* plans) {
  auto speed = [](const DevicePlan& p) { return p.decode_tokens_per_second_all.value_or(0); };
  std::stable_sort(plans->begin(), plans->end(), [&](const DevicePlan& a, const DevicePlan& b) {
    if (a.fits != b.fits) return a.fits;
    if (!a.fits) return a.name < b.name;
    switch (objective) {
      case PlanObjective::kCheapest:
        if (a.cost_usd_per_million_tokens.has_value() !=
            b.cost_usd_per_million_tokens.has_value()) {
          return a.cost_usd_per_million_tokens.has_value();
        }
        if (a.cost_usd_per_million_tokens != b.cost_usd_per_million_tokens) {
          return *a.cost_usd_per_million_tokens < *b.cost_usd_per_million_tokens;
        }
        break;
      case PlanObjective::kFastest:
        if (speed(a) != speed(b)) return speed(a) > speed(b);
        break;
      case PlanObjective::kFewestCards:
        break;
    }
    if (a.cards != b.cards) return a.cards < b.cards;
    if (speed(a) != speed(b)) return speed(a) > speed(b);
    return a.name < b.name;
  });
}

}  // namespace modelatlas::estimator
