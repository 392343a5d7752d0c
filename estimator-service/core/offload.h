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
// memory / host bandwidth). Prefill runs every layer on the cards: ggml's
// scheduler hands an op whose weights sit in host memory to the GPU when it
// has 32 rows or more (ggml/src/ggml-cuda/ggml-cuda.cu,
// ggml_backend_cuda_device_offload_op: min_batch_size = 32), copying the
// weights over PCIe once per micro-batch; a step is bounded by the larger
// of that copy and the cards' compute (PrefillWithOffload). Numbers here;
// the text is written in offload.cc.
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
  // The host's PCI Express generation (0 = not on record): with the card's,
  // the link prefill copies the host's weights over.
  int pcie_generation = 0;
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
  // Prefill (PlanWithOffload; docs/FORMULAS.md, "Offload"): per step of
  // prefill_step_tokens (llama.cpp's micro-batch), the weights copied from
  // host memory to the card and the seconds of the copy and of the compute
  // on the cards; the link's bandwidth, bytes/s (0 = no PCIe generation on
  // record for the card or the host: copies not counted).
  int prefill_step_tokens = 0;
  double prefill_copy_bytes_per_step = 0;
  double pcie_bytes_per_second = 0;
  double prefill_copy_seconds_per_step = 0;
  double prefill_compute_seconds_per_step = 0;
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

// llama.cpp runs an op on the GPU from this many rows (tokens) up, copying
// host-resident weights to it (ggml-cuda.cu, offload_op's min_batch_size).
inline constexpr int kGpuOffloadMinBatchTokens = 32;

// The prefill figures of a placement `p` that fits on `cards` cards of
// `peak_flops` each: per step of `step_tokens` tokens, the compute on the
// cards (2 x active parameters x tokens / (cards x peak x efficiency)) and
// the copy of the host's layer weights (the token embeddings are read by
// row on the host and the output head computes one row per prompt, on the
// host, so neither is copied) over a PCIe x16 link of the lower of the two
// generations (`card_pcie_generation`, `host_pcie_generation`; 0 = not on
// record). Sets p's prefill fields.
void PrefillWithOffload(const InferenceSizing& sizing, const OffloadShape& shape, int cards,
                        double peak_flops, double efficiency, int step_tokens,
                        int card_pcie_generation, int host_pcie_generation, OffloadPlacement* p);

// kAuto resolved: experts for an MoE shape, layers otherwise.
OffloadKind ResolveOffloadKind(OffloadKind kind, const OffloadShape& shape);

}  // namespace modelatlas::estimator
