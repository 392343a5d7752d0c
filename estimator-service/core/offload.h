// Offload to host memory (docs/FORMULAS.md, "Offload"): what a plan keeps on
// the cards and what in the host's memory when the cards alone do not hold
// the model, as llama.cpp does it:
//   layers  (`-ngl N`): the last N repeating layers (weights and their KV
//           cache) on the cards, the first ones, the token embeddings and
//           the output head in host memory (llama.cpp src/llama-model.cpp:
//           i_gpu_start = n_layer - n_gpu_layers; the output layer goes to a
//           card only when n_gpu_layers > n_layer);
//   experts (`--n-cpu-moe N`): every layer on the cards except the routed
//           experts' FFN weights (ffn_{gate,up,down}_exps) of the first N
//           layers, which stay in host memory (llama.cpp common/arg.cpp).
// Decode reads each token's bytes where they sit: the bound is
// 1 / (bytes read from card memory / card bandwidth + bytes read from host
// memory / host bandwidth). Numbers here; the text is written in offload.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "estimator-service/core/architecture.h"
#include "estimator-service/core/inference_memory.h"

namespace modelatlas::estimator {

enum class OffloadKind { kAuto, kLayers, kExperts };

// The host whose memory takes what the cards do not hold.
struct HostSpec {
  std::string name;
  std::string display_name;
  // Marketed (installed) memory and what may be allocated, bytes; the
  // allocatable figure and its source come from AllocatableMemoryOf
  // (core/device_memory.h), as for every card.
  double memory_bytes = 0;
  double allocatable_bytes = 0;
  std::string allocatable_source;
  // Memory bandwidth, bytes/s (> 0), and where it comes from.
  double bandwidth_bytes_per_second = 0;
  std::string bandwidth_source;
};

// The shape offload splits, from the architecture and the sizing.
struct OffloadShape {
  // Repeating layers, and those with routed experts (0 for a dense model).
  int num_layers = 0;
  int moe_layers = 0;
  // Weights of the token embeddings and output head, bytes (at the file's
  // average bits per parameter).
  double embedding_bytes = 0;
  // Weights of one layer, bytes: the largest kind's (the layers' weights /
  // the layers of the largest kind), an upper bound for every layer.
  double layer_bytes_max = 0;
  // Weights of the layers together, bytes (weights - embeddings).
  double layers_bytes = 0;
  // Routed experts' FFN weights of one MoE layer, bytes: experts x
  // (3 gated, else 2) x hidden x expert width x bits / 8.
  double expert_bytes_per_layer = 0;
  // Share of a layer's weights a token reads: the active parameters'
  // share of the non-embedding parameters (MoE: only top-k experts), and of
  // one MoE layer's routed experts: top-k / experts.
  double layer_active_share = 1;
  double expert_active_share = 1;
  // The arithmetic of expert_bytes_per_layer (empty for a dense model).
  std::string expert_arithmetic;
};

// nullopt when the shape cannot be split (no layers known, an
// encoder-decoder, no parameter count).
std::optional<OffloadShape> OffloadShapeOf(const InferenceSizing& sizing,
                                           const Architecture& architecture);

// What a plan may offload to, resolved by the answer builder.
struct OffloadRequest {
  OffloadKind kind = OffloadKind::kAuto;
  HostSpec host;
  OffloadShape shape;
};

// Where the model sits with offload on `cards` cards.
struct OffloadPlacement {
  // kLayers or kExperts (never kAuto).
  OffloadKind kind = OffloadKind::kLayers;
  bool fits = false;
  int cards = 0;
  int layers_on_cards = 0;
  int layers_in_host = 0;
  int expert_layers_in_host = 0;
  // All cards together, bytes.
  double card_weight_bytes = 0;
  double card_kv_cache_bytes = 0;
  // The fullest card, bytes: its weights and KV cache.
  double weight_bytes_per_card = 0;
  double kv_cache_bytes_per_card = 0;
  double host_weight_bytes = 0;
  double host_kv_cache_bytes = 0;
  double host_required_bytes() const { return host_weight_bytes + host_kv_cache_bytes; }
  // Per decode step (every sequence one token), bytes read and seconds.
  double card_read_bytes = 0;
  double host_read_bytes = 0;
  double decode_card_seconds = 0;
  double decode_host_seconds = 0;
  // Why it does not fit with offload either.
  std::string reason;
};

// The fewest cards, 1 to max_cards, on which the model runs with offload to
// `request.host`: for each count the least put in host memory that leaves
// every card within `usable_bytes_per_card` (weights and KV cache + the
// activations and overhead every card keeps), then the host's capacity is
// checked; the first count whose host part fits. At least one layer stays on
// the cards (no layer on a card is CPU inference, not a plan on it). The
// decode figures need `card_bandwidth_bytes_per_second` (0 = none).
// Returns the placement on the fewest cards, or, when none fits, the one on
// max_cards with the reason.
OffloadPlacement PlaceWithOffload(const InferenceSizing& sizing, const OffloadRequest& request,
                                  double usable_bytes_per_card, int max_cards,
                                  double card_bandwidth_bytes_per_second, int batch_size);

// Layer offload with `on_cards` of the layers on `cards` cards (llama.cpp
// `-ngl on_cards`): the bytes where they sit and one decode step's reads
// and seconds; fits is not decided (PlaceWithOffload does).
OffloadPlacement LayersOnCards(const InferenceSizing& sizing, const OffloadShape& shape,
                               int on_cards, int cards, double card_bandwidth_bytes_per_second,
                               double host_bandwidth_bytes_per_second);

// kAuto resolved: experts for an MoE shape, layers otherwise.
OffloadKind ResolveOffloadKind(OffloadKind kind, const OffloadShape& shape);

}  // namespace modelatlas::estimator
