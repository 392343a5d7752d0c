#include "estimator-service/core/offload.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/text/decimal.h"
#include "estimator-service/core/parameters.h"
#include "estimator-service/core/plan.h"
#include "estimator-service/core/speed.h"

namespace modelatlas::estimator {
namespace {

constexpr double kGiB = 1073741824.0;

std::string GiB(double bytes) { return absl::StrCat(FixedDecimals(bytes / kGiB, 2), " GiB"); }
std::string Num(double value) { return SignificantDigits(value, 4); }

// The KV cache of one layer (a full-attention one: sliding-window layers
// hold less), bytes for every sequence, and the model's whole cache; a draft
// model's cache stays on the cards with the draft.
double KvLayerBytes(const InferenceSizing& s) { return s.kv_cache_bytes_largest_layer; }
double DraftKvBytes(const InferenceSizing& s) {
  return std::max(0.0, s.kv_cache_bytes - s.model_kv_cache_bytes);
}

OffloadPlacement PlaceLayers(const InferenceSizing& s, const OffloadShape& shape,
                             double host_usable, double usable_per_card, int max_cards,
                             double card_bw, double host_bw) {
  const int layers = shape.num_layers;
  // Every card keeps the activations and overhead, and the draft's cache
  // (speculative decoding runs the draft on a card).
  const double fixed = s.activation_bytes + s.overhead_bytes + DraftKvBytes(s);
  const double per_layer = shape.layer_bytes_max + KvLayerBytes(s);
  const int per_card =
      per_layer > 0 ? static_cast<int>(std::floor((usable_per_card - fixed) / per_layer)) : layers;
  if (per_card < 1) {
    OffloadPlacement p{.kind = OffloadKind::kLayers, .cards = 1};
    p.reason = absl::StrCat("not even one layer fits on a card: ", GiB(per_layer),
                            " per layer (weights and KV cache) + ", GiB(fixed),
                            " activations and overhead > ", GiB(usable_per_card), " usable");
    return p;
  }
  OffloadPlacement p;
  for (int cards = 1; cards <= std::max(1, max_cards); ++cards) {
    const int on_cards = std::min(layers, cards * per_card);
    p = LayersOnCards(s, shape, on_cards, cards, card_bw, host_bw);
    if (p.host_required_bytes() <= host_usable) {
      p.fits = true;
      return p;
    }
    if (on_cards == layers) break;  // more cards take nothing more from the host
  }
  p.reason = absl::StrCat("host memory short: ", GiB(p.host_required_bytes()), " needed in host (",
                          p.layers_in_host, " layers + embeddings and output head) with ",
                          p.layers_on_cards, " layers on ", p.cards, " card",
                          p.cards > 1 ? "s" : "", ", ", GiB(host_usable), " usable");
  return p;
}

OffloadPlacement PlaceExperts(const InferenceSizing& s, const OffloadShape& shape,
                              double host_usable, double usable_per_card, int max_cards,
                              double card_bw, double host_bw) {
  OffloadPlacement p{.kind = OffloadKind::kExperts};
  const int moe = shape.moe_layers;
  const double expert = shape.expert_bytes_per_layer;
  const double fixed = s.activation_bytes + s.overhead_bytes;
  for (int cards = 1; cards <= std::max(1, max_cards); ++cards) {
    // Layers split over the cards unevenly by at most one layer: the
    // fullest card holds its share plus one layer (weights and KV cache).
    const double margin = cards > 1 ? shape.layer_bytes_max + KvLayerBytes(s) : 0;
    const double room = cards * (usable_per_card - fixed - margin);
    const double excess = s.weight_bytes + s.kv_cache_bytes - room;
    const int in_host =
        excess <= 0 ? 0 : static_cast<int>(std::min<double>(moe + 1, std::ceil(excess / expert)));
    p.cards = cards;
    p.layers_on_cards = shape.num_layers;
    p.expert_layers_in_host = std::min(in_host, moe);
    p.card_weight_bytes = s.weight_bytes - p.expert_layers_in_host * expert;
    p.card_kv_cache_bytes = s.kv_cache_bytes;
    p.weight_bytes_per_card = std::min(
        p.card_weight_bytes, p.card_weight_bytes / cards + (cards > 1 ? shape.layer_bytes_max : 0));
    p.kv_cache_bytes_per_card =
        std::min(s.kv_cache_bytes, s.kv_cache_bytes / cards + (cards > 1 ? KvLayerBytes(s) : 0));
    p.host_weight_bytes = p.expert_layers_in_host * expert;
    p.host_kv_cache_bytes = 0;
    // Every token reads the layers' weights but the routed experts whole
    // (attention, shared experts, routers, dense layers) and top-k of the
    // experts of each MoE layer; the embeddings and output head not counted.
    const double always_read = shape.layers_bytes - moe * expert;
    p.card_read_bytes = always_read +
                        (moe - p.expert_layers_in_host) * expert * shape.expert_active_share +
                        s.kv_cache_bytes;
    p.host_read_bytes = p.expert_layers_in_host * expert * shape.expert_active_share;
    p.decode_card_seconds = card_bw > 0 ? p.card_read_bytes / card_bw : 0;
    p.decode_host_seconds = p.host_read_bytes / host_bw;
    if (in_host > moe) {
      p.reason = absl::StrCat("every MoE layer's experts in host memory still leaves ",
                              GiB(p.weight_bytes_per_card + p.kv_cache_bytes_per_card + fixed),
                              " on a card of ", GiB(usable_per_card), " usable");
      continue;
    }
    if (p.host_required_bytes() <= host_usable) {
      p.fits = true;
      p.reason.clear();
      return p;
    }
    p.reason = absl::StrCat("host memory short: ", GiB(p.host_required_bytes()),
                            " needed in host (the experts of ", p.expert_layers_in_host, " of ",
                            moe, " MoE layers) with ", cards, " card", cards > 1 ? "s" : "", ", ",
                            GiB(host_usable), " usable");
  }
  return p;
}

const char* KindName(OffloadKind kind) {
  return kind == OffloadKind::kExperts ? "experts" : "layers";
}

void PlanPrefillAndCost(const PlanInput& input, const DeviceSpec& device, const HostSpec& host,
                        const OffloadShape& shape, OffloadPlacement* p, DevicePlan* plan);

}  // namespace

OffloadPlacement LayersOnCards(const InferenceSizing& s, const OffloadShape& shape, int on_cards,
                               int cards, double card_bandwidth_bytes_per_second,
                               double host_bandwidth_bytes_per_second) {
  OffloadPlacement p{.kind = OffloadKind::kLayers};
  const int layers = shape.num_layers;
  on_cards = std::clamp(on_cards, 0, layers);
  cards = std::max(1, cards);
  const int in_host = layers - on_cards;
  // llama.cpp's default split (-sm layer) gives each card whole layers: the
  // fullest holds ceil(on_cards / cards).
  const int fullest = (on_cards + cards - 1) / cards;
  p.cards = cards;
  p.layers_on_cards = on_cards;
  p.layers_in_host = in_host;
  p.card_weight_bytes = std::min(shape.layers_bytes, on_cards * shape.layer_bytes_max);
  p.card_kv_cache_bytes =
      std::min(s.model_kv_cache_bytes, on_cards * KvLayerBytes(s)) + DraftKvBytes(s);
  p.weight_bytes_per_card = std::min(p.card_weight_bytes, fullest * shape.layer_bytes_max);
  p.kv_cache_bytes_per_card =
      std::min(s.model_kv_cache_bytes, fullest * KvLayerBytes(s)) + DraftKvBytes(s);
  p.host_weight_bytes =
      std::min(shape.layers_bytes, in_host * shape.layer_bytes_max) + shape.embedding_bytes;
  p.host_kv_cache_bytes = std::min(s.model_kv_cache_bytes, in_host * KvLayerBytes(s));
  // Reads per step: the average layer (a lower bound on the bytes, so an
  // upper bound on speed); the embeddings and output head not counted.
  const double avg_layer_read =
      layers > 0 ? shape.layers_bytes / layers * shape.layer_active_share : 0;
  const double avg_kv_read = layers > 0 ? s.model_kv_cache_bytes / layers : 0;
  p.card_read_bytes = on_cards * (avg_layer_read + avg_kv_read) + DraftKvBytes(s);
  p.host_read_bytes = in_host * (avg_layer_read + avg_kv_read);
  p.decode_card_seconds =
      card_bandwidth_bytes_per_second > 0 ? p.card_read_bytes / card_bandwidth_bytes_per_second : 0;
  p.decode_host_seconds = p.host_read_bytes / host_bandwidth_bytes_per_second;
  return p;
}

std::optional<OffloadShape> OffloadShapeOf(const InferenceSizing& s, const Architecture& arch) {
  if (s.num_layers <= 0 || s.parameters <= 0 || s.weight_bytes <= 0) return std::nullopt;
  OffloadShape shape;
  shape.num_layers = s.num_layers;
  const double bytes_per_parameter = s.weight_bytes / s.parameters;
  shape.embedding_bytes = std::min(s.weight_bytes, s.embedding_parameters * bytes_per_parameter);
  shape.layers_bytes = s.weight_bytes - shape.embedding_bytes;
  const int largest = s.num_largest_layers > 0 ? s.num_largest_layers : s.num_layers;
  shape.layer_bytes_max = shape.layers_bytes / largest;
  const double body_parameters = s.parameters - s.embedding_parameters;
  if (body_parameters > 0) {
    shape.layer_active_share =
        std::clamp((s.active_parameters() - s.embedding_parameters) / body_parameters, 0.0, 1.0);
  }
  if (arch.IsMoe() && arch.num_experts_per_token > 0 && arch.hidden_size > 0) {
    const int64_t width =
        arch.moe_intermediate_size > 0 ? arch.moe_intermediate_size : arch.intermediate_size;
    const int matrices = arch.gated_mlp ? 3 : 2;
    const double parameters = static_cast<double>(arch.num_experts) * matrices *
                              static_cast<double>(arch.hidden_size) * static_cast<double>(width);
    const int moe_layers = arch.num_dense_layers > 0 && arch.num_dense_layers < arch.num_layers
                               ? arch.num_layers - arch.num_dense_layers
                               : arch.num_layers;
    const double bytes = parameters * bytes_per_parameter;
    // Only when the experts are part of the layers counted (a shape from
    // another source than the count would not be).
    if (width > 0 && moe_layers * bytes < shape.layers_bytes) {
      shape.moe_layers = moe_layers;
      shape.expert_bytes_per_layer = bytes;
      shape.expert_active_share =
          std::min(1.0, static_cast<double>(arch.num_experts_per_token) / arch.num_experts);
      shape.expert_arithmetic =
          absl::StrCat(arch.num_experts, " experts x ", matrices, " matrices x ", arch.hidden_size,
                       " x ", width, " x ", Num(bytes_per_parameter * 8),
                       " bits (the weights' average) / 8 = ", GiB(bytes), " per MoE layer");
    }
  }
  return shape;
}

void PrefillWithOffload(const InferenceSizing& s, const OffloadShape& shape, int cards,
                        double peak_flops, double efficiency, int step_tokens,
                        int card_pcie_generation, int host_pcie_generation, OffloadPlacement* p) {
  p->prefill_step_tokens = step_tokens;
  // What crosses PCIe per micro-batch: the layers' weights in host memory
  // (for experts, the whole expert tensors of the host's layers: their
  // MUL_MAT_ID op is handed to the GPU with every expert). Not the token
  // embeddings (GET_ROWS stays where its weights are) nor the output head
  // (prompt processing computes the last row's logits only: one row, under
  // the 32-row threshold, on the host).
  p->prefill_copy_bytes_per_step = std::max(
      0.0, p->kind == OffloadKind::kExperts ? p->host_weight_bytes
                                            : p->host_weight_bytes - shape.embedding_bytes);
  // The link runs at the lower generation of its two ends; with only one on
  // record that one (an upper bound on the link, so the figure stays a bound).
  int generation = std::max(card_pcie_generation, host_pcie_generation);
  if (card_pcie_generation > 0 && host_pcie_generation > 0) {
    generation = std::min(card_pcie_generation, host_pcie_generation);
  }
  p->pcie_bytes_per_second = 0;
  if (generation > 0) {
    const std::optional<Link> link = WithinNodeLink(DeviceLinks{.pcie_generation = generation});
    if (link.has_value()) p->pcie_bytes_per_second = link->bytes_per_second;
  }
  p->prefill_copy_seconds_per_step =
      p->pcie_bytes_per_second > 0 ? p->prefill_copy_bytes_per_step / p->pcie_bytes_per_second : 0;
  const double flops = std::max(1, cards) * peak_flops * efficiency;
  p->prefill_compute_seconds_per_step =
      flops > 0 ? 2 * s.active_parameters() * step_tokens / flops : 0;
}

OffloadKind ResolveOffloadKind(OffloadKind kind, const OffloadShape& shape) {
  if (kind != OffloadKind::kAuto) return kind;
  return shape.moe_layers > 0 ? OffloadKind::kExperts : OffloadKind::kLayers;
}

OffloadPlacement PlaceWithOffload(const InferenceSizing& sizing, const OffloadRequest& request,
                                  double usable_bytes_per_card, int max_cards,
                                  double card_bandwidth_bytes_per_second, int batch_size) {
  (void)batch_size;  // the KV cache in the sizing is already the whole batch's
  const OffloadKind kind = ResolveOffloadKind(request.kind, request.shape);
  if (kind == OffloadKind::kExperts && request.shape.moe_layers == 0) {
    OffloadPlacement p{.kind = kind, .cards = 1};
    p.reason = "expert offload needs a mixture-of-experts model with its expert shape";
    return p;
  }
  const double host_usable = request.host.allocatable_bytes;
  const double host_bw = request.host.bandwidth_bytes_per_second;
  return kind == OffloadKind::kExperts
             ? PlaceExperts(sizing, request.shape, host_usable, usable_bytes_per_card, max_cards,
                            card_bandwidth_bytes_per_second, host_bw)
             : PlaceLayers(sizing, request.shape, host_usable, usable_bytes_per_card, max_cards,
                           card_bandwidth_bytes_per_second, host_bw);
}

void PlanWithOffload(const PlanInput& input, const DeviceSpec& device, const NodeSize& node,
                     DevicePlan* plan) {
  const OffloadRequest& request = *input.offload;
  const HostSpec& host = request.host;
  if (device.roofline_does_not_apply || device.name == host.name) return;
  const InferenceSizing& s = input.sizing;
  const ResolvedWorkload& w = input.workload;
  // The host's memory belongs to one machine: its cards are one node's.
  const int max_cards = std::min(input.max_cards, std::max(1, node.cards));
  const double card_bw = device.bandwidth_bytes_per_second.value_or(0);
  OffloadPlacement p =
      PlaceWithOffload(s, request, plan->usable_bytes_per_card, max_cards, card_bw, w.batch_size);
  const bool experts = p.kind == OffloadKind::kExperts;
  const std::string flag = experts ? absl::StrCat("--n-cpu-moe ", p.expert_layers_in_host)
                                   : absl::StrCat("-ngl ", p.layers_on_cards);
  if (!p.fits) {
    absl::StrAppend(&plan->reason, "; with ", KindName(p.kind), " offloaded to ", host.display_name,
                    " on up to ", max_cards, " card", max_cards > 1 ? "s" : "", ": ", p.reason);
    plan->arithmetic.push_back(absl::StrCat("offload (", KindName(p.kind), ") to ",
                                            host.display_name, ": does not fit: ", p.reason));
    plan->offload = std::make_shared<const OffloadPlacement>(std::move(p));
    return;
  }
  const int n = p.cards;
  plan->fits = true;
  plan->fits_on_one_card = false;
  plan->cards = n;
  plan->tensor_parallel = 1;
  plan->pipeline_parallel = n;
  plan->nodes = 1;
  plan->layout = absl::StrCat(n == 1 ? "one card" : absl::StrCat(n, " cards (layer split)"),
                              " + host memory (llama.cpp ", flag, ")");
  plan->reason = absl::StrCat("fits only with offload: the cards alone do not hold it on ",
                              input.max_cards, " or fewer");
  plan->weight_bytes_per_card = p.weight_bytes_per_card;
  plan->kv_cache_bytes_per_card = p.kv_cache_bytes_per_card;
  plan->activation_bytes_per_card = s.activation_bytes;
  plan->overhead_bytes_per_card = s.overhead_bytes;
  plan->required_bytes_per_card =
      p.weight_bytes_per_card + p.kv_cache_bytes_per_card + s.activation_bytes + s.overhead_bytes;
  plan->headroom_bytes_per_card = plan->usable_bytes_per_card - plan->required_bytes_per_card;

  const OffloadShape& shape = request.shape;
  if (experts) {
    plan->arithmetic.push_back(absl::StrCat("offload (llama.cpp ", flag,
                                            "): the cards alone do not hold the model; the routed "
                                            "experts of ",
                                            p.expert_layers_in_host, " of ", shape.moe_layers,
                                            " MoE layers in host memory of ", host.display_name,
                                            ", everything else on ", n, " card", n > 1 ? "s" : "",
                                            "; experts per layer: ", shape.expert_arithmetic));
    plan->arithmetic.push_back(
        absl::StrCat("host memory: ", p.expert_layers_in_host, " x ",
                     GiB(shape.expert_bytes_per_layer), " = ", GiB(p.host_required_bytes()), " of ",
                     GiB(host.allocatable_bytes), " allocatable (", host.allocatable_source, ")"));
    plan->arithmetic.push_back(absl::StrCat(
        "per card on ", n, ": weights (", GiB(s.weight_bytes), " - ", p.expert_layers_in_host,
        " x ", GiB(shape.expert_bytes_per_layer), ")",
        n > 1 ? absl::StrCat(" / ", n, " + one layer") : "", " = ", GiB(p.weight_bytes_per_card),
        " + KV cache ", GiB(p.kv_cache_bytes_per_card), " + activations ", GiB(s.activation_bytes),
        " + overhead ", GiB(s.overhead_bytes), " = ", GiB(plan->required_bytes_per_card),
        "; headroom ", GiB(plan->headroom_bytes_per_card)));
  } else {
    plan->arithmetic.push_back(
        absl::StrCat("offload (llama.cpp ", flag, "): the cards alone do not hold the model; ",
                     p.layers_on_cards, " of ", shape.num_layers, " layers on ", n, " card",
                     n > 1 ? "s" : "", ", ", p.layers_in_host,
                     " layers, the embeddings and the output head in "
                     "host memory of ",
                     host.display_name));
    plan->arithmetic.push_back(absl::StrCat(
        "host memory: ", p.layers_in_host, " layers x ", GiB(shape.layer_bytes_max),
        " + embeddings and output head ", GiB(shape.embedding_bytes), " + KV cache ",
        p.layers_in_host, " layers x ", GiB(KvLayerBytes(s)), " = ", GiB(p.host_required_bytes()),
        " of ", GiB(host.allocatable_bytes), " allocatable (", host.allocatable_source, ")"));
    const int fullest = (p.layers_on_cards + n - 1) / n;
    plan->arithmetic.push_back(absl::StrCat(
        "per card on ", n, ": ", fullest, " layers x (weights ", GiB(shape.layer_bytes_max),
        " + KV cache ", GiB(KvLayerBytes(s)), ") + activations ", GiB(s.activation_bytes),
        " + overhead ", GiB(s.overhead_bytes), " = ", GiB(plan->required_bytes_per_card),
        "; headroom ", GiB(plan->headroom_bytes_per_card)));
  }
  if (card_bw > 0) {
    const double step = p.decode_card_seconds + p.decode_host_seconds;
    plan->decode_tokens_per_second = 1.0 / step;
    plan->decode_tokens_per_second_all = w.batch_size / step;
    plan->arithmetic.push_back(absl::StrCat(
        "decode bound with offload: card reads ", GiB(p.card_read_bytes), " / ", Num(card_bw / 1e9),
        " GB/s = ", Num(p.decode_card_seconds * 1e3), " ms + host reads ", GiB(p.host_read_bytes),
        " / ", Num(host.bandwidth_bytes_per_second / 1e9), " GB/s (", host.bandwidth_source,
        ") = ", Num(p.decode_host_seconds * 1e3), " ms; 1 / ", Num(step * 1e3),
        " ms = ", Num(*plan->decode_tokens_per_second), " tokens/s per sequence, x ", w.batch_size,
        " sequences = ", Num(*plan->decode_tokens_per_second_all), " tokens/s (reads: ",
        experts ? "top-k of the experts, " : "the average layer's active share, ",
        "the KV cache; embeddings, output head, the CPU's compute and PCIe transfers not counted: "
        "an upper bound)"));
  }
  PlanPrefillAndCost(input, device, host, shape, &p, plan);
  plan->offload = std::make_shared<const OffloadPlacement>(std::move(p));
}

namespace {

// Prefill, time to first token and cost of a plan with offload (see
// PrefillWithOffload): the prefill bound is a micro-batch's tokens over the
// larger of its compute on the cards and its copy of the host's weights; the
// cost is the cards' price over the decode throughput, as without offload.
void PlanPrefillAndCost(const PlanInput& input, const DeviceSpec& device, const HostSpec& host,
                        const OffloadShape& shape, OffloadPlacement* p, DevicePlan* plan) {
  const InferenceSizing& s = input.sizing;
  const ResolvedWorkload& w = input.workload;
  const int n = p->cards;
  const int step_tokens = w.prefill_chunk_tokens;
  const bool has_peak = device.peak_flops.has_value() && *device.peak_flops > 0 &&
                        s.active_parameters() > 0 && w.prefill_efficiency > 0;
  if (!has_peak) {
    plan->arithmetic.push_back(
        "prefill with offload: not given (no peak compute on record for the card)");
  } else if (step_tokens < kGpuOffloadMinBatchTokens) {
    plan->arithmetic.push_back(absl::StrCat(
        "prefill with offload: not given: micro-batches of ", step_tokens, " tokens (under ",
        kGpuOffloadMinBatchTokens,
        ") run the layers in host memory on the CPU (ggml-cuda.cu offload_op), whose compute "
        "is not on record"));
  } else {
    PrefillWithOffload(s, shape, n, *device.peak_flops, w.prefill_efficiency, step_tokens,
                       device.links.pcie_generation, host.pcie_generation, p);
    const double compute = p->prefill_compute_seconds_per_step;
    const double copy = p->prefill_copy_seconds_per_step;
    const double step = std::max(compute, copy);
    plan->prefill_tokens_per_second = step_tokens / step;
    const std::string link =
        p->pcie_bytes_per_second > 0
            ? absl::StrCat(
                  GiB(p->prefill_copy_bytes_per_step),
                  " of layer weights from host memory / PCIe x16 ",
                  Num(p->pcie_bytes_per_second / 1e9), " GB/s (the lower generation of card ",
                  device.links.pcie_generation > 0 ? absl::StrCat(device.links.pcie_generation)
                                                   : "?",
                  " and host ", host.pcie_generation > 0 ? absl::StrCat(host.pcie_generation) : "?",
                  ", raw rate) = ", Num(copy * 1e3), " ms")
            : absl::StrCat(GiB(p->prefill_copy_bytes_per_step),
                           " of layer weights from host memory: not counted (no PCIe generation "
                           "on record for the card or the host)");
    plan->arithmetic.push_back(absl::StrCat(
        "prefill bound with offload: every layer computes on the card", n > 1 ? "s" : "",
        " for micro-batches of ", kGpuOffloadMinBatchTokens,
        " tokens or more, the host's weights copied over PCIe each micro-batch (llama.cpp: "
        "ggml-cuda.cu offload_op); per micro-batch of ",
        step_tokens,
        " tokens (the workload's prefill chunk; llama.cpp's -ub default is 512): compute 2 x ",
        Num(s.active_parameters()), " active parameters x ", step_tokens, " / (", n, " x ",
        Num(*device.peak_flops / 1e12), " TFLOP/s x ", Num(w.prefill_efficiency),
        ") = ", Num(compute * 1e3), " ms; copy ", link,
        "; step = the larger (a bound: llama.cpp "
        "copies a layer's weights before its matmuls, so the real step is nearer the sum) = ",
        Num(step * 1e3), " ms -> ", step_tokens, " / ", Num(step * 1e3),
        " ms = ", Num(*plan->prefill_tokens_per_second), " tokens/s"));
    const int64_t prompt = w.prompt_tokens;
    if (prompt >= kGpuOffloadMinBatchTokens) {
      const int64_t steps = (prompt + step_tokens - 1) / step_tokens;
      const double compute_all = compute * static_cast<double>(prompt) / step_tokens;
      const double copy_all = copy * static_cast<double>(steps);
      plan->time_to_first_token_seconds = std::max(compute_all, copy_all);
      plan->arithmetic.push_back(absl::StrCat(
          "time to first token with offload: ", prompt, " prompt tokens = ", steps, " micro-batch",
          steps > 1 ? "es" : "", ": the larger of compute ", Num(compute * 1e3), " ms x ", prompt,
          " / ", step_tokens, " = ", Num(compute_all), " s and copies ", steps, " x ",
          Num(copy * 1e3), " ms = ", Num(copy_all),
          " s = ", Num(*plan->time_to_first_token_seconds), " s"));
    } else if (prompt > 0) {
      plan->arithmetic.push_back(absl::StrCat(
          "time to first token with offload: not given: a prompt of ", prompt, " tokens (under ",
          kGpuOffloadMinBatchTokens,
          ") runs the layers in host memory on the CPU, whose compute is not on record"));
    }
  }
  if (device.price_usd_per_hour.has_value() && plan->decode_tokens_per_second_all.has_value()) {
    const double per_hour = *plan->decode_tokens_per_second_all * 3600;
    plan->cost_usd_per_million_tokens = *device.price_usd_per_hour * n / per_hour * 1e6;
    plan->arithmetic.push_back(
        absl::StrCat("cost with offload: ", n, " x $", Num(*device.price_usd_per_hour), "/h / (",
                     Num(*plan->decode_tokens_per_second_all), " tokens/s x 3600) x 1e6 = $",
                     Num(*plan->cost_usd_per_million_tokens),
                     " per million tokens (the cards' price only: the host's is not on record)"));
  }
}

}  // namespace

}  // namespace modelatlas::estimator
