#include "estimator-service/core/fit_matrix.h"

#include <algorithm>
#include <limits>

#include "absl/strings/numbers.h"

namespace modelatlas::estimator {

namespace {

int EffectiveKvHeads(const InferenceSizing& s) {
  return s.num_key_value_heads > 0 ? s.num_key_value_heads : s.num_attention_heads;
}

// Every layout of `cards` cards, in the order the fewest-cards search tries
// them (fit_matrix.h, FewestCardsLayout): tensor parallelism alone, expert
// parallelism (widest TP first), then TP x pipeline stages (widest TP
// first). `visit` returns false to stop.
template <typename Visit>
void ForEachLayoutOf(const InferenceSizing& s, int cards, int per_node, Visit visit) {
  const int widest = std::min(cards, per_node);
  if (cards == widest && ValidTensorParallel(s, cards)) {
    if (!visit(Layout{.tensor_parallel = cards, .pipeline_parallel = 1})) return;
  }
  if (ValidExpertParallel(s, cards)) {
    for (int tp = widest; tp >= 1; --tp) {
      if (cards % tp != 0 || !ValidTensorParallel(s, tp)) continue;
      if (!visit(Layout{.tensor_parallel = tp, .pipeline_parallel = 1, .expert_parallel = cards})) {
        return;
      }
    }
  }
  for (int tp = widest; tp >= 1; --tp) {
    if (cards % tp != 0 || !ValidTensorParallel(s, tp)) continue;
    const Layout layout{.tensor_parallel = tp, .pipeline_parallel = cards / tp};
    if (layout.pipeline_parallel == 1) continue;  // tried first
    if (layout.pipeline_parallel > s.num_layers) continue;
    if (!visit(layout)) return;
  }
}

}  // namespace

bool ValidExpertParallel(const InferenceSizing& s, int cards) {
  return cards > 1 && s.expert_weight_bytes > 0 && s.num_experts >= cards &&
         s.num_experts_per_token > 0 && s.num_moe_layers > 0;
}

int ExpertsPerCard(const InferenceSizing& s, int cards) {
  return cards > 1 ? (s.num_experts + cards - 1) / cards : s.num_experts;
}

int SequencesPerReplica(const InferenceSizing& s, const Layout& l) {
  const int replicas = std::max(1, l.attention_replicas());
  const int batch = std::max(1, s.batch_size);
  return (batch + replicas - 1) / replicas;
}

bool ValidTensorParallel(const InferenceSizing& s, int cards) {
  if (cards == 1 || s.num_attention_heads == 0) return true;
  const int kv = EffectiveKvHeads(s);
  return s.num_attention_heads % cards == 0 && (kv % cards == 0 || cards % kv == 0);
}

double KvBytesPerCard(const InferenceSizing& s, int cards) {
  return s.kv_cache_bytes / KvCacheDivisor(s, cards);
}

int LayersPerStage(const InferenceSizing& s, int stages) {
  if (stages <= 1 || s.num_layers <= 0) return s.num_layers;
  return (s.num_layers + stages - 1) / stages;
}

double WeightBytesPerCard(const InferenceSizing& s, const Layout& l) {
  if (l.expert_parallel > 1) {
    const double dense = s.weight_bytes - s.expert_weight_bytes;
    return dense / l.tensor_parallel +
           s.expert_weight_bytes * ExpertsPerCard(s, l.expert_parallel) / s.num_experts;
  }
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
  if (l.expert_parallel > 1) {
    const double share = static_cast<double>(SequencesPerReplica(s, l)) / std::max(1, s.batch_size);
    return s.kv_cache_bytes * share / KvCacheDivisor(s, l.tensor_parallel);
  }
  double stage = s.kv_cache_bytes;
  if (l.pipeline_parallel > 1 && s.num_layers > 0) {
    const double draft = s.kv_cache_bytes - s.model_kv_cache_bytes;
    stage =
        std::min(s.kv_cache_bytes,
                 LayersPerStage(s, l.pipeline_parallel) * s.kv_cache_bytes_largest_layer + draft);
  }
  return stage / KvCacheDivisor(s, l.tensor_parallel);
}

double RequiredBytesPerCard(const InferenceSizing& s, const Layout& l) {
  return RequiredBytesPerCard(s, WeightBytesPerCard(s, l), KvBytesPerCard(s, l));
}

namespace {

// True when no layout can fit in `usable_bytes` per card: the activations
// and overhead, which every card holds whole, already exceed it, and no
// layout's weights or KV cache per card can be negative (every part they are
// made of is at least 0; a NaN part fails these checks, and then every
// layout is tried). Floating-point addition is monotonic, so a required
// total of (weights + KV) + activations + overhead with weights + KV >= 0 is
// at least activations + overhead. A plan over every accelerator meets many
// records too small for the model, and trying every count up to max_cards on
// each was most of the search's cost (docs/BENCHMARKS.md, session 17).
bool NothingFits(const InferenceSizing& s, double usable_bytes) {
  const bool parts_not_negative = s.weight_bytes >= 0 && s.expert_weight_bytes >= 0 &&
                                  s.expert_weight_bytes <= s.weight_bytes &&
                                  s.embedding_parameters >= 0 && s.kv_cache_bytes >= 0 &&
                                  s.kv_cache_bytes_largest_layer >= 0 &&
                                  s.model_kv_cache_bytes <= s.kv_cache_bytes;
  return parts_not_negative && usable_bytes < s.activation_bytes + s.overhead_bytes;
}

}  // namespace

std::optional<Layout> FewestCardsLayout(const InferenceSizing& s, double usable_bytes,
                                        int max_cards, const NodeSize& node) {
  if (NothingFits(s, usable_bytes)) return std::nullopt;
  const int per_node = std::max(1, node.cards);
  for (int cards = 1; cards <= std::max(1, max_cards); ++cards) {
    std::optional<Layout> found;
    ForEachLayoutOf(s, cards, per_node, [&](const Layout& layout) {
      if (RequiredBytesPerCard(s, layout) <= usable_bytes) found = layout;
      return !found.has_value();
    });
    if (found.has_value()) return found;
  }
  return std::nullopt;
}

template <typename Visit>
void FewestCardsSearch::ForEachLayout(int cards, Visit visit) const {
  ForEachLayoutOf(*sizing_, cards, per_node_, visit);
}

FewestCardsSearch::FewestCardsSearch(const InferenceSizing& s, int max_cards, const NodeSize& node)
    : sizing_(&s), per_node_(std::max(1, node.cards)), counts_(std::max(1, max_cards)) {
  least_up_to_.reserve(static_cast<size_t>(counts_));
}

std::optional<Layout> FewestCardsSearch::Find(double usable_bytes) {
  // The least per count, from one card up, as far as this capacity needs:
  // to the first count at or under it (every count when none is).
  while (least_up_to_.empty() || !(least_up_to_.back() <= usable_bytes)) {
    if (static_cast<int>(least_up_to_.size()) == counts_) return std::nullopt;
    // A NaN requirement never fits (NaN <= usable is false): it never lowers
    // the least.
    ForEachLayout(static_cast<int>(least_up_to_.size()) + 1, [&](const Layout& layout) {
      const double required = RequiredBytesPerCard(*sizing_, layout);
      if (required < least_) least_ = required;
      return true;
    });
    least_up_to_.push_back(least_);
  }
  // least_up_to_ never increases: the first count at or under the capacity.
  size_t low = 0, high = least_up_to_.size() - 1;
  while (low < high) {
    const size_t mid = (low + high) / 2;
    if (least_up_to_[mid] <= usable_bytes) {
      high = mid;
    } else {
      low = mid + 1;
    }
  }
  std::optional<Layout> found;
  ForEachLayout(static_cast<int>(low) + 1, [&](const Layout& layout) {
    if (RequiredBytesPerCard(*sizing_, layout) <= usable_bytes) found = layout;
    return !found.has_value();
  });
  return found;
}

namespace {
constexpr Layout kOneCard{.tensor_parallel = 1, .pipeline_parallel = 1};
}  // namespace

FewestCardsSearches::FewestCardsSearches(const InferenceSizing& sizing, int max_cards)
    : sizing_(&sizing),
      max_cards_(max_cards),
      one_card_required_bytes_(RequiredBytesPerCard(sizing, kOneCard)) {}

std::optional<Layout> FewestCardsSearches::Find(double usable_bytes, const NodeSize& node) {
  const InferenceSizing& s = *sizing_;
  // FewestCardsLayout's first answer: a card that holds the whole model (on
  // one card the only layout; NothingFits is then false, as the parts it
  // adds up are at least the activations and overhead).
  if (one_card_required_bytes_ <= usable_bytes) return kOneCard;
  if (NothingFits(s, usable_bytes)) return std::nullopt;
  const int per_node = std::max(1, node.cards);
  for (auto& [cards_per_node, search] : by_node_) {
    if (cards_per_node == per_node) return search.Find(usable_bytes);
  }
  by_node_.emplace_back(per_node, FewestCardsSearch(s, max_cards_, node));
  return by_node_.back().second.Find(usable_bytes);
}

std::string LayoutName(const Layout& l, const NodeSize& node) {
  std::string name;
  AppendLayoutName(&name, l, node);
  return name;
}

void AppendLayoutName(std::string* out, const Layout& l, const NodeSize& node) {
  // Appended piece by piece into the caller's string (a plan keeps its
  // layout's storage from reply to reply) rather than StrCat'd into a new one.
  const auto append_int = [out](int value) {
    char digits[absl::numbers_internal::kFastToBufferSize];
    const char* end = absl::numbers_internal::FastIntToBuffer(value, digits);
    out->append(digits, static_cast<size_t>(end - digits));
  };
  if (l.cards() == 1) {
    out->append("one card", 8);
    return;
  }
  const size_t start = out->size();
  const int per_node = std::max(1, node.cards);
  const int nodes = (l.cards() + per_node - 1) / per_node;
  if (l.expert_parallel > 1) {
    out->append("TP ", 3);
    append_int(l.tensor_parallel);
    out->append(" x EP ", 6);
    append_int(l.expert_parallel);
  } else if (l.tensor_parallel > 1) {
    out->append("TP ", 3);
    append_int(l.tensor_parallel);
  }
  if (l.pipeline_parallel > 1) {
    if (out->size() > start) out->append(" x ", 3);
    out->append("PP ", 3);
    append_int(l.pipeline_parallel);
  }
  if (nodes > 1) {
    out->append(" over ", 6);
    append_int(nodes);
    out->append(" nodes", 6);
  } else {
    out->append(" (one node)", 11);
  }
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
