// Fitting a sized inference workload (SizeInference) on cards: the fewest
// cards with valid tensor parallelism, the memory per card, and the
// roofline bounds — numbers only, no text. The plan (plan.cc) and the
// whole-catalog answers (which models run on a card) both fit through here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "estimator-service/core/inference_memory.h"

namespace modelatlas::estimator {

// KV cache per card: split with the KV heads, replicated when there are
// fewer KV heads than cards (and always under multi-head latent attention,
// whose latent cache every rank holds whole).
double KvBytesPerCard(const InferenceSizing& sizing, int cards);

// Per-card memory on `cards` cards: weights split, KV cache split with the
// KV heads (replicated when fewer than the cards), activations and overhead
// on every card.
double RequiredBytesPerCard(const InferenceSizing& sizing, int cards);

// The fewest cards (1, 2, 4, ... up to max_cards) with valid tensor
// parallelism (query heads divide evenly; KV heads divide or replicate) on
// which the workload fits in `usable_bytes` per card; 0 when none does.
int FewestCards(const InferenceSizing& sizing, double usable_bytes, int max_cards);

// How a plan places a model on its cards: tensor parallelism within a node
// (a scale-up domain), pipeline stages across nodes.
struct Layout {
  int tensor_parallel = 1;
  int pipeline_parallel = 1;
  int cards() const { return tensor_parallel * pipeline_parallel; }
};

// Cards in one node: the record's scale-up domain when it has one of more
// than one card, else an assumption the answer states.
struct NodeSize {
  int cards = 8;
  bool assumed = true;
};
inline constexpr int kAssumedCardsPerNode = 8;

// Tensor parallelism over `cards` is valid: query heads divide evenly, KV
// heads divide or are replicated.
bool ValidTensorParallel(const InferenceSizing& sizing, int cards);

// Layers on the fullest pipeline stage: ceil(layers / stages).
int LayersPerStage(const InferenceSizing& sizing, int stages);

// Weights on one card of `layout`, bytes. One stage: the weights / TP. More
// stages, bounded from above (never under): the fullest stage's layers at the
// largest layer's share (weights / largest-kind layers, counting every byte
// as a layer's) plus the embeddings and output head at max(16 bits, the
// average bits per parameter), at most the whole weights; / TP.
double WeightBytesPerCard(const InferenceSizing& sizing, const Layout& layout);
// KV cache on one card of `layout`: the fullest stage's layers at the
// largest layer's cache (plus a draft model's whole cache), at most the
// whole cache, split with the KV heads over TP as KvBytesPerCard.
double KvBytesPerCard(const InferenceSizing& sizing, const Layout& layout);
// Weights + KV cache + activations + overhead on one card of `layout`.
double RequiredBytesPerCard(const InferenceSizing& sizing, const Layout& layout);

// The fewest cards, any count up to max_cards, on which the workload fits
// in `usable_bytes` per card, and how: for each count the layouts with
// tensor parallelism of at most one node (heads dividing) and pipeline
// stages for the rest (at most one per layer), widest tensor parallelism
// first; nullopt when none fits.
std::optional<Layout> FewestCardsLayout(const InferenceSizing& sizing, double usable_bytes,
                                        int max_cards, const NodeSize& node);

// FewestCardsLayout of one sizing and node size asked for many capacities
// (the fit matrix asks it for every accelerator): the least memory per card
// each count of cards reaches, over its layouts, is computed once, and the
// fewest cards for a capacity is the first count whose least (or any fewer
// count's) fits, found by bisection; the layout at that count is then
// chosen as FewestCardsLayout chooses it. The same comparisons of the same
// figures, so the same answer (tests/estimator/plan_test.cc checks it), at a
// bisection's cost instead of every layout's for a model that does not fit.
class FewestCardsSearch {
 public:
  FewestCardsSearch(const InferenceSizing& sizing, int max_cards, const NodeSize& node);
  std::optional<Layout> Find(double usable_bytes) const;

 private:
  // A count's layouts, widest tensor parallelism first (FewestCardsLayout's order).
  template <typename Visit>
  void ForEachLayout(int cards, Visit visit) const;

  const InferenceSizing* sizing_;
  int per_node_;
  // [c - 1]: the least memory per card on c or fewer cards, bytes.
  std::vector<double> least_up_to_;
};

// "TP 8 x PP 2 over 2 nodes", "TP 4 (one node)", "one card".
std::string LayoutName(const Layout& layout, const NodeSize& node);

// Decode is memory-bound: each step (one token per sequence) reads the
// weights (for an MoE only the active experts') and the batch's KV cache,
// split over the cards. Steps per second.
double DecodeStepsPerSecond(double bandwidth_bytes_per_second, int cards, double weight_bytes_read,
                            double kv_cache_bytes);

// Prefill is compute-bound: 2 FLOP per active parameter per token. Tokens/s.
double PrefillTokensPerSecond(int cards, double peak_flops, double efficiency,
                              double active_parameters);

}  // namespace modelatlas::estimator
