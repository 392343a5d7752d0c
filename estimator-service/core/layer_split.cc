// llama.cpp's layer split over unequal cards (--tensor-split, -ts): which
// layers each card holds, its bytes and the decode bound (docs/FORMULAS.md,
// "Uneven splits"). Apart from plan.cc: a different placement (proportional,
// not a search over identical cards) with its own arithmetic.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/text/decimal.h"
#include "estimator-service/core/plan.h"

namespace modelatlas::estimator {
namespace {

constexpr double kGiB = 1073741824.0;

std::string GiB(double bytes) { return absl::StrCat(FixedDecimals(bytes / kGiB, 2), " GiB"); }
std::string Num(double value) { return SignificantDigits(value, 4); }

}  // namespace

LayerSplitPlan PlanLayerSplit(const PlanInput& input, const std::vector<DeviceSpec>& cards) {
  const InferenceSizing& s = input.sizing;
  const ResolvedWorkload& w = input.workload;
  LayerSplitPlan plan;
  const int layers = s.num_layers;
  if (cards.empty()) {
    plan.reason = "no cards named";
    return plan;
  }
  if (layers <= 0 || s.parameters <= 0) {
    plan.reason = "cannot split by layers: the model's layer count is not known";
    return plan;
  }
  // Bytes of one layer, bounded from above: the layers' weights (all but
  // the embeddings) over the layers of the largest kind; of one layer's KV
  // cache: a full-attention layer's.
  const double bytes_per_parameter = s.weight_bytes / s.parameters;
  const double embedding_bytes =
      std::min(s.weight_bytes, s.embedding_parameters * bytes_per_parameter);
  const int largest = s.num_largest_layers > 0 ? s.num_largest_layers : layers;
  const double layer_bytes = (s.weight_bytes - embedding_bytes) / largest;
  const double kv_layer = s.kv_cache_bytes_largest_layer > 0 ? s.kv_cache_bytes_largest_layer
                                                             : s.model_kv_cache_bytes / layers;
  const double draft_kv = std::max(0.0, s.kv_cache_bytes - s.model_kv_cache_bytes);
  // The output head on the output card (a copy of tied embeddings); the
  // token embeddings stay in host memory (llama.cpp's input layer is the CPU).
  const double output_bytes = s.output_head_parameters > 0
                                  ? s.output_head_parameters * bytes_per_parameter
                                  : embedding_bytes;
  // A token reads the active share of a layer (MoE: its experts).
  const double body = s.parameters - s.embedding_parameters;
  const double layer_active =
      body > 0 ? std::clamp((s.active_parameters() - s.embedding_parameters) / body, 0.0, 1.0)
               : 1.0;

  // The -ts proportions: each card's usable memory in GiB, one decimal;
  // the split points from those same numbers, as llama.cpp computes them.
  std::vector<double> points;
  double sum = 0;
  for (const DeviceSpec& device : cards) {
    SplitCard card{.name = device.name, .display_name = device.display_name};
    card.usable_bytes = UsableBytesPerCard(device, w.memory_utilization);
    card.proportion = std::round(card.usable_bytes / kGiB * 10) / 10;
    sum += card.proportion;
    points.push_back(sum);
    plan.cards.push_back(std::move(card));
  }
  if (!(sum > 0)) {
    plan.reason = "no memory size on record for the cards named";
    return plan;
  }
  for (double& point : points) point /= sum;
  // -ngl L + 1: every layer and the output layer on the cards.
  const int gpu_layers = layers + 1;
  for (int il = 0; il <= layers; ++il) {
    const float at = static_cast<float>(il) / static_cast<float>(gpu_layers);
    size_t i = 0;
    while (i + 1 < points.size() && !(static_cast<float>(points[i]) > at)) ++i;
    if (il == layers) {
      plan.cards[i].output_layer = true;
    } else {
      ++plan.cards[i].layers;
    }
  }
  plan.fits = true;
  std::string split, split_text;
  double step_seconds = 0;
  bool every_bandwidth = true;
  for (size_t i = 0; i < plan.cards.size(); ++i) {
    SplitCard& card = plan.cards[i];
    card.weight_bytes = card.layers * layer_bytes + (card.output_layer ? output_bytes : 0);
    card.kv_cache_bytes = card.layers * kv_layer + (i == 0 ? draft_kv : 0);
    card.required_bytes =
        card.weight_bytes + card.kv_cache_bytes + s.activation_bytes + s.overhead_bytes;
    absl::StrAppend(&split, i > 0 ? "," : "", Num(card.proportion));
    plan.arithmetic.push_back(absl::StrCat(
        card.display_name, ": ", card.layers, " of ", layers, " layers",
        card.output_layer ? " + the output layer" : "", " (-ts share ", Num(card.proportion),
        " of ", Num(sum), "): weights ", card.layers, " x ", GiB(layer_bytes),
        card.output_layer ? absl::StrCat(" + output head ", GiB(output_bytes)) : std::string(),
        " + KV cache ", card.layers, " x ", GiB(kv_layer),
        i == 0 && draft_kv > 0 ? absl::StrCat(" + the draft model's ", GiB(draft_kv))
                               : std::string(),
        " + activations ", GiB(s.activation_bytes), " + overhead ", GiB(s.overhead_bytes), " = ",
        GiB(card.required_bytes), " of ", GiB(card.usable_bytes), " usable"));
    if (card.required_bytes > card.usable_bytes && plan.fits) {
      plan.fits = false;
      plan.reason =
          absl::StrCat("does not fit on ", card.display_name, ": its ", card.layers, " layers",
                       card.output_layer ? " and the output layer" : "", " need ",
                       GiB(card.required_bytes), ", ", GiB(card.usable_bytes), " usable");
    }
    const std::optional<double>& bandwidth = cards[i].bandwidth_bytes_per_second;
    if (bandwidth.has_value() && *bandwidth > 0) {
      card.decode_seconds = (card.layers * (layer_bytes * layer_active + kv_layer) +
                             (card.output_layer ? output_bytes : 0) + (i == 0 ? draft_kv : 0)) /
                            *bandwidth;
      step_seconds += *card.decode_seconds;
      if (cards[i].bandwidth_doubtful) {
        card.decode_bound_doubtful = DoubtfulBandwidthReason(cards[i].memory_bytes, *bandwidth);
      }
      absl::StrAppend(&split_text, i > 0 ? " + " : "", Num(*card.decode_seconds * 1e3), " ms (",
                      card.display_name, ")");
    } else {
      every_bandwidth = false;
    }
  }
  plan.arithmetic.insert(
      plan.arithmetic.begin(),
      absl::StrCat("llama.cpp layer split (-ts ", split, ": each card's usable memory in GiB): ",
                   "layer i on the first card whose cumulative share exceeds i / ", gpu_layers,
                   " (-ngl ", gpu_layers, ": ", layers,
                   " layers and the output layer; token embeddings in host memory); a layer ",
                   GiB(layer_bytes), " (", Num(s.weight_bytes / kGiB), " GiB less embeddings ",
                   GiB(embedding_bytes), ", / ", largest, " layers), its KV cache ",
                   GiB(kv_layer)));
  if (every_bandwidth && step_seconds > 0) {
    plan.decode_tokens_per_second = 1 / step_seconds;
    plan.decode_tokens_per_second_all = w.batch_size / step_seconds;
    plan.arithmetic.push_back(absl::StrCat(
        "decode bound: the cards read their layers in turn (layers x (", GiB(layer_bytes),
        layer_active < 1 ? absl::StrCat(" x active share ", Num(layer_active)) : std::string(),
        " + KV ", GiB(kv_layer), ") / the card's bandwidth): 1 / (", split_text,
        ") = ", Num(*plan.decode_tokens_per_second), " tokens/s per sequence, x ", w.batch_size,
        " sequences = ", Num(*plan.decode_tokens_per_second_all),
        " tokens/s; the hops between cards (hidden x 2 bytes each) not counted"));
    // The bound is only as good as each card's bandwidth.
    for (const SplitCard& card : plan.cards) {
      if (!card.decode_bound_doubtful.empty()) {
        plan.arithmetic.push_back(
            absl::StrCat(card.display_name, ": ", card.decode_bound_doubtful));
      }
    }
  } else if (!every_bandwidth) {
    plan.arithmetic.push_back("decode bound: not given (a card has no memory bandwidth on record)");
  }
  if (plan.fits) {
    plan.launch_command = absl::StrCat("llama-server -m <model.gguf> -ngl ", gpu_layers, " -ts ",
                                       split, " -c ", w.context_length_tokens * w.batch_size);
    if (w.batch_size > 1) absl::StrAppend(&plan.launch_command, " -np ", w.batch_size);
  }
  return plan;
}

}  // namespace modelatlas::estimator
