// Fitting a sized inference workload (SizeInference) on cards: the fewest
// cards with valid tensor parallelism, the memory per card, and the
// roofline bounds — numbers only, no text. The plan (plan.cc) and the
// whole-catalog answers (which models run on a card) both fit through here.
#pragma once

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "estimator-service/core/inference_memory.h"

namespace modelatlas::estimator {

// The KV cache's divisor over `tp` tensor-parallel ranks: the KV heads,
// replicated beyond them; a latent (MLA) cache is whole on every rank.
inline int KvCacheDivisor(const InferenceSizing& sizing, int tp) {
  if (sizing.kv_cache_replicated) return 1;
  const int kv =
      sizing.num_key_value_heads > 0 ? sizing.num_key_value_heads : sizing.num_attention_heads;
  return kv > 0 ? std::min(tp, kv) : tp;
}

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
// (a scale-up domain), pipeline stages across nodes; or, for a mixture of
// experts, expert parallelism: the routed experts split over
// `expert_parallel` cards (which may span nodes) while the attention and
// the other dense weights are tensor-parallel over `tensor_parallel` cards
// and replicated over expert_parallel / tensor_parallel data-parallel
// ranks, each rank serving its share of the sequences. This is vLLM's
// `--tensor-parallel-size T --data-parallel-size D --enable-expert-parallel`
// (EP size = T x D; docs.vllm.ai serving/expert_parallel_deployment and
// data_parallel_deployment) and SGLang's `--tp E --ep-size E` with
// `--enable-dp-attention --dp D`.
struct Layout {
  int tensor_parallel = 1;
  int pipeline_parallel = 1;
  // Cards the routed experts are split over; 1 = no expert parallelism
  // (then pipeline_parallel may be > 1; with it, pipeline_parallel is 1).
  int expert_parallel = 1;
  int cards() const {
    return expert_parallel > 1 ? expert_parallel : tensor_parallel * pipeline_parallel;
  }
  // Replicas of the attention (data-parallel ranks), each with its share of
  // the sequences: expert_parallel / tensor_parallel, else 1.
  int attention_replicas() const {
    return expert_parallel > 1 ? expert_parallel / tensor_parallel : 1;
  }
};

// Expert parallelism over `cards` is possible: the sizing has routed
// experts (InferenceSizing::expert_weight_bytes), at least one expert per
// card, and more than one card.
bool ValidExpertParallel(const InferenceSizing& sizing, int cards);

// Routed experts on the fullest card of `cards`: ceil(experts / cards)
// (vLLM's determine_expert_map gives the first experts % cards ranks one
// more).
int ExpertsPerCard(const InferenceSizing& sizing, int cards);

// Sequences on the fullest attention replica: ceil(batch / replicas).
int SequencesPerReplica(const InferenceSizing& sizing, const Layout& layout);

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

// Weights on one card of `layout`, bytes. Expert parallel: the dense part
// (weights - routed experts) / TP + the routed experts x ExpertsPerCard /
// experts. One stage: the weights / TP. More
// stages, bounded from above (never under): the fullest stage's layers at the
// largest layer's share (weights / largest-kind layers, counting every byte
// as a layer's) plus the embeddings and output head at max(16 bits, the
// average bits per parameter), at most the whole weights; / TP.
double WeightBytesPerCard(const InferenceSizing& sizing, const Layout& layout);
// KV cache on one card of `layout`: the fullest stage's layers at the
// largest layer's cache (plus a draft model's whole cache), at most the
// whole cache, split with the KV heads over TP as KvBytesPerCard. Expert
// parallel: the fullest attention replica's sequences' share of the cache
// (SequencesPerReplica / batch), split with the KV heads over TP.
double KvBytesPerCard(const InferenceSizing& sizing, const Layout& layout);
// Weights + KV cache + activations + overhead on one card of `layout`.
double RequiredBytesPerCard(const InferenceSizing& sizing, const Layout& layout);
// The same from the layout's weights and KV cache per card (WeightBytesPerCard,
// KvBytesPerCard), for a caller that has them: the same sum, the same bits.
inline double RequiredBytesPerCard(const InferenceSizing& sizing, double weight_bytes,
                                   double kv_cache_bytes) {
  return weight_bytes + kv_cache_bytes + sizing.activation_bytes + sizing.overhead_bytes;
}

// The fewest cards, any count up to max_cards, on which the workload fits
// in `usable_bytes` per card, and how. For each count, in this order: tensor
// parallelism alone over the count (within one node, heads dividing); then,
// for a mixture of experts, expert parallelism over the count with the
// widest tensor parallelism first (every card reads at once, where pipeline
// stages read in turn: a better decode bound at the same cards); then
// tensor parallelism of at most one node with pipeline stages for the rest
// (at most one per layer), widest tensor parallelism first. nullopt when
// none fits.
std::optional<Layout> FewestCardsLayout(const InferenceSizing& sizing, double usable_bytes,
                                        int max_cards, const NodeSize& node);

// FewestCardsLayout of one sizing and node size asked for many capacities
// (the fit matrix asks it for every accelerator): the least memory per card
// each count of cards reaches, over its layouts, is computed once, from one
// card up and only as far as a capacity asked needs it, and the fewest cards
// for a capacity is the first count whose least (or any fewer count's) fits,
// found by bisection; the layout at that count is then chosen as
// FewestCardsLayout chooses it. The same comparisons of the same figures, so
// the same answer (tests/estimator/plan_test.cc checks it), at a bisection's
// cost instead of every layout's for a model that does not fit. Not
// thread-safe (Find extends the counts computed).
class FewestCardsSearch {
 public:
  FewestCardsSearch(const InferenceSizing& sizing, int max_cards, const NodeSize& node);
  std::optional<Layout> Find(double usable_bytes);

 private:
  // A count's layouts, widest tensor parallelism first (FewestCardsLayout's order).
  template <typename Visit>
  void ForEachLayout(int cards, Visit visit) const;

  const InferenceSizing* sizing_;
  int per_node_;
  int counts_;  // max_cards, at least 1
  // [c - 1]: the least memory per card on c or fewer cards, bytes; for the
  // counts computed so far.
  std::vector<double> least_up_to_;
  double least_ = std::numeric_limits<double>::infinity();
};

// FewestCardsLayout of one sizing and max_cards for many capacities and a
// few node sizes (a plan over every accelerator: 258 records, almost all
// with the assumed node of 8): one card when the model fits on one, else the
// node size's FewestCardsSearch, built when that node size first needs more
// than one card. The same answers as FewestCardsLayout (plan_test.cc);
// trying every count up to max_cards on each record that needs several
// cards, its divisions per layout, was 4.5% of such a plan's time under
// perf (docs/BENCHMARKS.md, session 20). Not thread-safe: one per plan.
class FewestCardsSearches {
 public:
  // `sizing` must outlive this, unchanged.
  FewestCardsSearches(const InferenceSizing& sizing, int max_cards);
  std::optional<Layout> Find(double usable_bytes, const NodeSize& node);

 private:
  const InferenceSizing* sizing_;
  int max_cards_;
  // What one card holding the whole model needs: the first answer tried,
  // the same for every record (about 40 instructions per record of a plan
  // over every accelerator when computed on each, docs/BENCHMARKS.md,
  // session 21).
  double one_card_required_bytes_;
  // By node size (cards per node), in the order first needed: a few.
  std::vector<std::pair<int, FewestCardsSearch>> by_node_;
};

// "TP 8 x PP 2 over 2 nodes", "TP 4 (one node)", "TP 1 x EP 8 (one node)",
// "one card".
std::string LayoutName(const Layout& layout, const NodeSize& node);
// The same name appended to *out.
void AppendLayoutName(std::string* out, const Layout& layout, const NodeSize& node);

// Decode is memory-bound: each step (one token per sequence) reads the
// weights (for an MoE only the active experts') and the batch's KV cache,
// split over the cards. Steps per second.
double DecodeStepsPerSecond(double bandwidth_bytes_per_second, int cards, double weight_bytes_read,
                            double kv_cache_bytes);

// Prefill is compute-bound: 2 FLOP per active parameter per token. Tokens/s.
double PrefillTokensPerSecond(int cards, double peak_flops, double efficiency,
                              double active_parameters);

}  // namespace modelatlas::estimator
