#include "estimator-service/core/fit_matrix.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace modelatlas::estimator {

namespace {

int EffectiveKvHeads(const InferenceSizing& s) {
  return s.num_key_value_heads > 0 ? s.num_key_value_heads : s.num_attention_heads;
}

// The KV cache's divisor over `tp` ranks.
int KvSplit(const InferenceSizing& s, int tp) {
  if (s.kv_cache_replicated) return 1;
  const int kv = EffectiveKvHeads(s);
  return kv > 0 ? std::min(tp, kv) : tp;
}

}  // namespace

bool ValidTensorParallel(const InferenceSizing& s, int cards) {
  if (cards == 1 || s.num_attention_heads == 0) return true;
  const int kv = EffectiveKvHeads(s);
  return s.num_attention_heads % cards == 0 && (kv % cards == 0 || cards % kv == 0);
}

double KvBytesPerCard(const InferenceSizing& s, int cards) {
  return s.kv_cache_bytes / KvSplit(s, cards);
}

int LayersPerStage(const InferenceSizing& s, int stages) {
  if (stages <= 1 || s.num_layers <= 0) return s.num_layers;
  return (s.num_layers + stages - 1) / stages;
}

double WeightBytesPerCard(const InferenceSizing& s, const Layout& l) {
  double stage = s.weight_bytes;
  if (l.pipeline_parallel > 1 && s.num_largest_layers > 0 && s.parameters > 0) {
    const double largest_layer = s.weight_bytes / s.num_largest_layers;
    const double embedding = s.embedding_parameters * std::max(2.0, s.weight_bytes / s.parameters);
    stage = std::min(s.weight_bytes,
                     LayersPerStage(s, l.pipeline_parallel) * largest_layer + embedding);
  }
  return stage / l.tensor_parallel;
}

double KvBytesPerCard(const InferenceSizing& s, const Layout& l) {
  double stage = s.kv_cache_bytes;
  if (l.pipeline_parallel > 1 && s.num_layers > 0) {
    const double draft = s.kv_cache_bytes - s.model_kv_cache_bytes;
    stage =
        std::min(s.kv_cache_bytes,
                 LayersPerStage(s, l.pipeline_parallel) * s.kv_cache_bytes_largest_layer + draft);
  }
  return stage / KvSplit(s, l.tensor_parallel);
}

double RequiredBytesPerCard(const InferenceSizing& s, const Layout& l) {
  return WeightBytesPerCard(s, l) + KvBytesPerCard(s, l) + s.activation_bytes + s.overhead_bytes;
}

std::optional<Layout> FewestCardsLayout(const InferenceSizing& s, double usable_bytes,
                                        int max_cards, const NodeSize& node) {
  const int per_node = std::max(1, node.cards);
  for (int cards = 1; cards <= std::max(1, max_cards); ++cards) {
    for (int tp = std::min(cards, per_node); tp >= 1; --tp) {
      if (cards % tp != 0 || !ValidTensorParallel(s, tp)) continue;
      const Layout layout{.tensor_parallel = tp, .pipeline_parallel = cards / tp};
      if (layout.pipeline_parallel > 1 && layout.pipeline_parallel > s.num_layers) continue;
      if (RequiredBytesPerCard(s, layout) <= usable_bytes) return layout;
    }
  }
  return std::nullopt;
}

std::string LayoutName(const Layout& l, const NodeSize& node) {
  if (l.cards() == 1) return "one card";
  const int per_node = std::max(1, node.cards);
  const int nodes = (l.cards() + per_node - 1) / per_node;
  std::string name;
  if (l.tensor_parallel > 1) name = absl::StrCat("TP ", l.tensor_parallel);
  if (l.pipeline_parallel > 1) {
    absl::StrAppend(&name, name.empty() ? "" : " x ", "PP ", l.pipeline_parallel);
  }
  if (nodes > 1) {
    absl::StrAppend(&name, " over ", nodes, " nodes");
  } else {
    absl::StrAppend(&name, " (one node)");
  }
  return name;
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
