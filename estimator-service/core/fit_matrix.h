// Fitting a sized inference workload (SizeInference) on cards: the fewest
// cards with valid tensor parallelism, the memory per card, and the
// roofline bounds — numbers only, no text. The plan (plan.cc) and the
// whole-catalog answers (which models run on a card) both fit through here.
#pragma once

#include "estimator-service/core/inference_memory.h"

namespace modelatlas::estimator {

// KV cache per card: split with the KV heads, replicated when there are
// fewer KV heads than cards.
double KvBytesPerCard(const InferenceSizing& sizing, int cards);

// Per-card memory on `cards` cards: weights split, KV cache split with the
// KV heads (replicated when fewer than the cards), activations and overhead
// on every card.
double RequiredBytesPerCard(const InferenceSizing& sizing, int cards);

// The fewest cards (1, 2, 4, ... up to max_cards) with valid tensor
// parallelism (query heads divide evenly; KV heads divide or replicate) on
// which the workload fits in `usable_bytes` per card; 0 when none does.
int FewestCards(const InferenceSizing& sizing, double usable_bytes, int max_cards);

// Decode is memory-bound: each step (one token per sequence) reads the
// weights (for an MoE only the active experts') and the batch's KV cache,
// split over the cards. Steps per second.
double DecodeStepsPerSecond(double bandwidth_bytes_per_second, int cards, double weight_bytes_read,
                            double kv_cache_bytes);

// Prefill is compute-bound: 2 FLOP per active parameter per token. Tokens/s.
double PrefillTokensPerSecond(int cards, double peak_flops, double efficiency,
                              double active_parameters);

}  // namespace modelatlas::estimator
