// The fit matrix: every model x every device x every weight format, with no
// text — the numeric core of whole-catalog answers (which hardware runs a
// model, which models run on a card). Same formulas as inference_memory.cc
// and plan.cc, without the arithmetic strings.
#pragma once

#include <cstdint>
#include <vector>

namespace modelatlas::estimator {

// A model, reduced to what fitting needs.
struct MatrixModel {
  double parameters = 0;
  // Active / total parameters (1 for dense models).
  double active_share = 1;
  // KV cache for the workload (all sequences), bytes, at 16 bits per element.
  double kv_cache_bytes = 0;
  double activation_bytes = 0;
  double overhead_bytes = 0;
  int num_attention_heads = 0;
  int num_key_value_heads = 0;
};

struct MatrixDevice {
  double usable_bytes = 0;
  double bandwidth_bytes_per_second = 0;
};

struct MatrixCell {
  // Fewest cards (1, 2, 4, ... up to max_cards); 0 = does not fit.
  int16_t cards = 0;
  // Decode bound, tokens/s per sequence; 0 when it does not fit.
  float decode_tokens_per_second = 0;
};

// KV cache per card: split with the KV heads, replicated when there are
// fewer KV heads than cards.
double KvBytesPerCard(const MatrixModel& model, int cards);

// Per-card memory on `cards` cards: weights split, KV cache split with the
// KV heads (replicated when fewer than the cards), activations and overhead
// on every card.
double RequiredBytesPerCard(const MatrixModel& model, double weight_bytes, int cards);

// The fewest cards (1, 2, 4, ... up to max_cards) with valid tensor
// parallelism (query heads divide evenly; KV heads divide or replicate) on
// which the model fits in `usable_bytes` per card; 0 when none does.
int FewestCards(const MatrixModel& model, double weight_bytes, double usable_bytes, int max_cards);

// Decode is memory-bound: each step (one token per sequence) reads the
// weights (for an MoE only the active experts') and the batch's KV cache,
// split over the cards. Steps per second.
double DecodeStepsPerSecond(double bandwidth_bytes_per_second, int cards, double weight_bytes_read,
                            double kv_cache_bytes);

// Prefill is compute-bound: 2 FLOP per active parameter per token. Tokens/s.
double PrefillTokensPerSecond(int cards, double peak_flops, double efficiency,
                              double active_parameters);

// Fills `cells` (models x devices x bits, in that order) and returns how
// many cells fit.
int64_t ComputeFitMatrix(const std::vector<MatrixModel>& models,
                         const std::vector<MatrixDevice>& devices,
                         const std::vector<double>& bits_per_weight, int max_cards,
                         std::vector<MatrixCell>* cells);

}  // namespace modelatlas::estimator
