#include "estimator-service/core/fit_matrix.h"

#include <algorithm>

namespace modelatlas::estimator {

namespace {

int EffectiveKvHeads(const MatrixModel& m) {
  return m.num_key_value_heads > 0 ? m.num_key_value_heads : m.num_attention_heads;
}

bool ValidTensorParallel(const MatrixModel& m, int cards) {
  if (cards == 1 || m.num_attention_heads == 0) return true;
  const int kv = EffectiveKvHeads(m);
  return m.num_attention_heads % cards == 0 && (kv % cards == 0 || cards % kv == 0);
}

}  // namespace

double KvBytesPerCard(const MatrixModel& m, int cards) {
  const int kv = EffectiveKvHeads(m);
  return m.kv_cache_bytes / (kv > 0 ? std::min(cards, kv) : cards);
}

double RequiredBytesPerCard(const MatrixModel& m, double weight_bytes, int cards) {
  return weight_bytes / cards + KvBytesPerCard(m, cards) + m.activation_bytes + m.overhead_bytes;
}

int FewestCards(const MatrixModel& m, double weight_bytes, double usable_bytes, int max_cards) {
  for (int cards = 1; cards <= std::max(1, max_cards); cards *= 2) {
    if (ValidTensorParallel(m, cards) &&
        RequiredBytesPerCard(m, weight_bytes, cards) <= usable_bytes) {
      return cards;
    }
  }
  return 0;
}

int64_t ComputeFitMatrix(const std::vector<MatrixModel>& models,
                         const std::vector<MatrixDevice>& devices,
                         const std::vector<double>& bits_per_weight, int max_cards,
                         std::vector<MatrixCell>* cells) {
  cells->assign(models.size() * devices.size() * bits_per_weight.size(), MatrixCell{});
  int64_t fitting = 0;
  size_t index = 0;
  for (const MatrixModel& m : models) {
    for (const MatrixDevice& d : devices) {
      for (double bits : bits_per_weight) {
        MatrixCell& cell = (*cells)[index++];
        const double weights = m.parameters * bits / 8;
        const int cards = FewestCards(m, weights, d.usable_bytes, max_cards);
        if (cards == 0) continue;
        cell.cards = static_cast<int16_t>(cards);
        cell.decode_tokens_per_second = static_cast<float>(DecodeStepsPerSecond(
            d.bandwidth_bytes_per_second, cards, weights * m.active_share, m.kv_cache_bytes));
        ++fitting;
      }
    }
  }
  return fitting;
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
