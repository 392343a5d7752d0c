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

DevicePlan PlanOnDevice(const PlanInput& input, const DeviceSpec& device) {
  const InferenceSizing& shape = input.sizing;
  const ResolvedWorkload& w = input.workload;
  DevicePlan plan;
  plan.name = device.name;
  plan.display_name = device.display_name;
  const double fraction =
      device.unified_memory ? ResolvedWorkload::kUnifiedMemoryFraction : w.memory_utilization;
  plan.usable_bytes_per_card = device.memory_bytes * fraction;
  plan.arithmetic.push_back(absl::StrCat(
      "usable per card: ", GiB(device.memory_bytes), " x ", Num(fraction),
      device.unified_memory ? " (unified memory: the GPU's share)" : " (memory utilization)", " = ",
      GiB(plan.usable_bytes_per_card)));
  if (device.memory_bytes <= 0) {
    plan.reason = "memory size not on record";
    return plan;
  }

  plan.cards = FewestCards(shape, plan.usable_bytes_per_card, input.max_cards);
  plan.fits = plan.cards > 0;
  const auto split = [&](int cards) {
    plan.weight_bytes_per_card = shape.weight_bytes / cards;
    plan.kv_cache_bytes_per_card = KvBytesPerCard(shape, cards);
    plan.activation_bytes_per_card = shape.activation_bytes;
    plan.overhead_bytes_per_card = shape.overhead_bytes;
  };
  if (!plan.fits) {
    split(1);
    plan.required_bytes_per_card = RequiredBytesPerCard(shape, 1);
    plan.headroom_bytes_per_card = plan.usable_bytes_per_card - plan.required_bytes_per_card;
    plan.reason = absl::StrCat("does not fit on ", input.max_cards, " cards or fewer (",
                               GiB(plan.required_bytes_per_card), " needed on one card, ",
                               GiB(plan.usable_bytes_per_card), " usable)");
    return plan;
  }
  const int n = plan.cards;
  plan.fits_on_one_card = n == 1;
  split(n);
  plan.required_bytes_per_card = RequiredBytesPerCard(shape, n);
  plan.headroom_bytes_per_card = plan.usable_bytes_per_card - plan.required_bytes_per_card;
  plan.arithmetic.push_back(absl::StrCat(
      "per card on ", n, ": weights ", GiB(shape.weight_bytes), " / ", n, " + KV cache ",
      GiB(KvBytesPerCard(shape, n)), " + activations ", GiB(shape.activation_bytes), " + overhead ",
      GiB(shape.overhead_bytes), " = ", GiB(plan.required_bytes_per_card), "; headroom ",
      GiB(plan.headroom_bytes_per_card)));

  // Decode is memory-bound: every step reads the weights (for MoE only the
  // active experts' share) and the batch's KV cache once.
  const double active_share = shape.active_share;
  if (device.bandwidth_bytes_per_second.has_value() && *device.bandwidth_bytes_per_second > 0) {
    const double steps =
        DecodeStepsPerSecond(*device.bandwidth_bytes_per_second, n,
                             shape.weight_bytes * active_share, shape.kv_cache_bytes);
    plan.decode_tokens_per_second = steps;
    plan.decode_tokens_per_second_all = steps * w.batch_size;
    plan.arithmetic.push_back(absl::StrCat(
        "decode bound: ", Num(*device.bandwidth_bytes_per_second / 1e9), " GB/s / ((weights ",
        GiB(shape.weight_bytes), active_share < 1 ? " x active share " : "",
        active_share < 1 ? Num(active_share) : "", " + KV ", GiB(shape.kv_cache_bytes), ") / ", n,
        " cards) = ", Num(steps), " tokens/s per sequence, x ", w.batch_size,
        " sequences = ", Num(steps * w.batch_size), " tokens/s"));
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
