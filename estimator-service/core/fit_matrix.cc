#include "estimator-service/core/fit_matrix.h"

#include <algorithm>

namespace modelatlas::estimator {

namespace {

int EffectiveKvHeads(const InferenceSizing& s) {
  return s.num_key_value_heads > 0 ? s.num_key_value_heads : s.num_attention_heads;
}

bool ValidTensorParallel(const InferenceSizing& s, int cards) {
  if (cards == 1 || s.num_attention_heads == 0) return true;
  const int kv = EffectiveKvHeads(s);
  return s.num_attention_heads % cards == 0 && (kv % cards == 0 || cards % kv == 0);
}

}  // namespace

double KvBytesPerCard(const InferenceSizing& s, int cards) {
  const int kv = EffectiveKvHeads(s);
  return s.kv_cache_bytes / (kv > 0 ? std::min(cards, kv) : cards);
}

double RequiredBytesPerCard(const InferenceSizing& s, int cards) {
  return s.weight_bytes / cards + KvBytesPerCard(s, cards) + s.activation_bytes + s.overhead_bytes;
}

int FewestCards(const InferenceSizing& s, double usable_bytes, int max_cards) {
  for (int cards = 1; cards <= std::max(1, max_cards); cards *= 2) {
    if (ValidTensorParallel(s, cards) && RequiredBytesPerCard(s, cards) <= usable_bytes) {
      return cards;
    }
  }
  return 0;
}

double DecodeStepsPerSecond(double bandwidth_bytes_per_second, int cards, double weight_bytes_read,
                            double kv_cache_bytes) {
  return bandwidth_bytes_per_second / ((weight_bytes_read + kv_cache_bytes) / cards);
}

double PrefillTokensPerSecond(int cards, double peak_flops, double efficiency,
                              double active_parameters) {
  return cards * peak_flops * efficiency / (2 * active_parameters);
}

}  // namespace modelatlas::estimator
