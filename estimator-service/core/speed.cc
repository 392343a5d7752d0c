#include "estimator-service/core/speed.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/text/decimal.h"

namespace modelatlas::estimator {

std::optional<Link> WithinNodeLink(const DeviceLinks& links) {
  if (links.scale_up_domain_size > 1 && links.scale_up_bytes_per_second > 0) {
    return Link{.bytes_per_second = links.scale_up_bytes_per_second,
                .latency_seconds = kScaleUpLatencySeconds,
                .kind = "scale-up fabric (NVLink, Infinity Fabric, ICI)"};
  }
  if (links.pcie_generation >= 3 && links.pcie_generation <= 7) {
    // PCI Express x16: 8 GT/s per lane at gen 3 (PCI-SIG), doubling each
    // generation; 16 lanes / 8 bits = 2 bytes per GT, before encoding.
    const double gts = 8.0 * std::pow(2.0, links.pcie_generation - 3);
    return Link{
        .bytes_per_second = gts * 2e9, .latency_seconds = kPcieLatencySeconds, .kind = "PCIe x16"};
  }
  if (links.intra_node_bytes_per_second > 0) {
    return Link{.bytes_per_second = links.intra_node_bytes_per_second,
                .latency_seconds = kPcieLatencySeconds,
                .kind = "the record's intra-node link"};
  }
  return std::nullopt;
}

Link BetweenNodesLink(const DeviceLinks& links) {
  if (links.inter_node_bytes_per_second > 0) {
    return Link{.bytes_per_second = links.inter_node_bytes_per_second,
                .latency_seconds = kNetworkLatencySeconds,
                .kind = "the record's inter-node network"};
  }
  return Link{.bytes_per_second = kAssumedNetworkBytesPerSecond,
              .latency_seconds = kNetworkLatencySeconds,
              .kind = "InfiniBand NDR 400 Gb/s per card",
              .assumed = true};
}

bool RooflineDoesNotApply(const std::string& memory_type, double memory_bytes,
                          double bandwidth_bytes_per_second) {
  for (size_t i = 0; i + 4 <= memory_type.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(memory_type[i])) == 'S' &&
        std::toupper(static_cast<unsigned char>(memory_type[i + 1])) == 'R' &&
        std::toupper(static_cast<unsigned char>(memory_type[i + 2])) == 'A' &&
        std::toupper(static_cast<unsigned char>(memory_type[i + 3])) == 'M') {
      return true;
    }
  }
  return memory_bytes > 0 && bandwidth_bytes_per_second > 0 &&
         bandwidth_bytes_per_second / memory_bytes > kOnChipMemoryReadsPerSecond;
}

bool BandwidthDoubtful(const std::string& memory_type, double memory_bytes,
                       double bandwidth_bytes_per_second) {
  return memory_bytes > 0 && bandwidth_bytes_per_second > 0 &&
         bandwidth_bytes_per_second / memory_bytes > kMostDramMemoryReadsPerSecond &&
         !RooflineDoesNotApply(memory_type, memory_bytes, bandwidth_bytes_per_second);
}

std::string DoubtfulBandwidthReason(double memory_bytes, double bandwidth_bytes_per_second) {
  return absl::StrCat(
      "bandwidth doubtful: ", SignificantDigits(bandwidth_bytes_per_second / 1e9, 4), " GB/s over ",
      FixedDecimals(memory_bytes / (1024.0 * 1024.0 * 1024.0), 2), " GiB reads the whole memory ",
      SignificantDigits(bandwidth_bytes_per_second / memory_bytes, 4),
      " times a second, more than any DRAM device on record (at most ",
      static_cast<int>(kMostDramMemoryReadsPerSecond),
      "): the record's figure may be wrong, and the decode bound rests on it");
}

namespace {

// One ring all-reduce of `bytes` over `ranks` cards (Patarasuk and Yuan
// 2009: each rank sends 2 (ranks - 1) / ranks of the message, the least any
// all-reduce moves); one latency, the least a one-shot all-reduce pays.
double AllReduceSeconds(const Link& link, int ranks, double bytes) {
  return link.latency_seconds + 2.0 * (ranks - 1) / ranks * bytes / link.bytes_per_second;
}

// One all-to-all of `bytes` leaving each card of `ranks` (expert
// parallelism's dispatch or combine), `per_node` ranks per node: the share
// bound for ranks of the same node over `within`, the rest over `between`,
// both at once; one latency (the slower link's when both are used).
// nullopt when a share has no link on record.
std::optional<double> AllToAllSeconds(const std::optional<Link>& within, const Link& between,
                                      int ranks, int per_node, double bytes) {
  if (ranks <= 1) return 0.0;
  const int local = std::min(ranks, std::max(1, per_node));
  const double within_share = static_cast<double>(local - 1) / ranks;
  const double between_share = static_cast<double>(ranks - local) / ranks;
  double seconds = 0, latency = 0;
  if (within_share > 0) {
    if (!within.has_value()) return std::nullopt;
    seconds = std::max(seconds, within_share * bytes / within->bytes_per_second);
    latency = std::max(latency, within->latency_seconds);
  }
  if (between_share > 0) {
    if (between.bytes_per_second <= 0) return std::nullopt;
    seconds = std::max(seconds, between_share * bytes / between.bytes_per_second);
    latency = std::max(latency, between.latency_seconds);
  }
  return latency + seconds;
}

// Decode on an expert-parallel layout (speed.h, BoundDecode).
DecodeBound BoundExpertParallelDecode(const SpeedInput& in) {
  const InferenceSizing& s = *in.sizing;
  const int tp = std::max(1, in.layout.tensor_parallel);
  const int ep = in.layout.expert_parallel;
  const int batch = std::max(1, in.batch_size);
  DecodeBound bound;
  // Reads of the fullest card: the dense part's active bytes / TP (the
  // active bytes less the active experts'), the routed experts it holds
  // that a token uses, and its replica's sequences' KV cache.
  const double expert_bytes_each = s.expert_weight_bytes / s.num_experts;  // all MoE layers
  const double active_expert_bytes = expert_bytes_each * s.num_experts_per_token;
  const double dense_read =
      std::max(0.0, s.weight_bytes * s.active_share - active_expert_bytes) / tp;
  bound.experts_read_per_card = (s.num_experts_per_token + ep - 1) / ep;
  const double expert_read = expert_bytes_each * bound.experts_read_per_card;
  const double kv_read = KvBytesPerCard(s, in.layout);
  bound.memory_seconds = (dense_read + expert_read + kv_read) / *in.bandwidth_bytes_per_second;

  const int sequences = SequencesPerReplica(s, in.layout);
  if (s.num_layers <= 0 || s.hidden_size <= 0) {
    bound.communication_counted = false;
  } else {
    const double hidden_bytes = static_cast<double>(s.hidden_size) * kActivationBytesPerElement;
    if (tp > 1) {
      if (in.within_node.has_value()) {
        // The attention's all-reduce in every layer, the MLP's too in the
        // dense layers (the MoE output comes back by the combine).
        const int all_reduces = s.num_layers + std::max(0, s.num_layers - s.num_moe_layers);
        bound.tensor_parallel_seconds =
            all_reduces * AllReduceSeconds(*in.within_node, tp, sequences * hidden_bytes);
      } else {
        bound.communication_counted = false;
      }
    }
    // Each card sends its share of its replica's tokens (tokens / TP) to
    // the cards of their k experts, (EP - 1) / EP of them elsewhere.
    const int per_node = in.nodes > 1 ? (ep + in.nodes - 1) / in.nodes : ep;
    // AllToAllSeconds takes the share bound for each link: 1 / EP of the
    // copies per card, uniform routing.
    const double bytes =
        static_cast<double>(sequences) / tp * s.num_experts_per_token * hidden_bytes;
    const std::optional<double> one =
        AllToAllSeconds(in.within_node, in.between_nodes, ep, per_node, bytes);
    if (one.has_value()) {
      bound.expert_parallel_seconds = 2.0 * s.num_moe_layers * *one;
    } else {
      bound.communication_counted = false;
    }
  }
  bound.overlapped = batch >= 2;
  const double step = bound.step_seconds();
  // Every replica advances its sequences in one step.
  bound.tokens_per_second_per_sequence = 1.0 / step;
  bound.tokens_per_second_all = batch / step;
  if (in.peak_flops.has_value() && *in.peak_flops > 0 && s.active_parameters() > 0) {
    const double roof = ep * *in.peak_flops / (2.0 * s.active_parameters());
    bound.compute_roof_tokens_per_second = roof;
    if (bound.tokens_per_second_all > roof) {
      bound.compute_bound = true;
      bound.tokens_per_second_all = roof;
      bound.tokens_per_second_per_sequence = roof / batch;
    }
  }
  return bound;
}

}  // namespace

DecodeBound BoundDecode(const SpeedInput& in) {
  const InferenceSizing& s = *in.sizing;
  if (in.layout.expert_parallel > 1) return BoundExpertParallelDecode(in);
  const int tp = std::max(1, in.layout.tensor_parallel);
  const int pp = std::max(1, in.layout.pipeline_parallel);
  const int batch = std::max(1, in.batch_size);
  DecodeBound bound;
  bound.micro_batches = std::min(batch, pp);
  const int m = bound.micro_batches;
  // A micro-batch passes the stages in turn; each stage's cards read their
  // share of the stage's weights (an MoE: the active experts') and of the
  // micro-batch's KV cache. With m micro-batches in flight the weights are
  // read once per micro-batch: a step of all m costs what one pass does,
  // with 1/m of the cache.
  const double weights_read = s.weight_bytes * s.active_share / tp;
  const double kv_read = s.kv_cache_bytes / m / KvCacheDivisor(s, tp);
  bound.memory_seconds = (weights_read + kv_read) / *in.bandwidth_bytes_per_second;

  const int layers = s.num_layers;
  const double message_bytes = static_cast<double>(batch) / m * static_cast<double>(s.hidden_size) *
                               kActivationBytesPerElement;
  if ((tp > 1 || pp > 1) && (layers <= 0 || s.hidden_size <= 0)) {
    bound.communication_counted = false;
  } else if (tp > 1 || pp > 1) {
    if (!in.within_node.has_value() && (tp > 1 || pp > in.nodes)) {
      bound.communication_counted = false;
    }
    if (tp > 1 && in.within_node.has_value()) {
      // Megatron-LM's tensor parallelism (Shoeybi et al. 2019): one
      // all-reduce after attention and one after the MLP, every layer.
      bound.tensor_parallel_seconds =
          2.0 * layers * AllReduceSeconds(*in.within_node, tp, message_bytes);
    }
    if (pp > 1) {
      // pp - 1 hops; nodes - 1 of them cross the network (stages fill a
      // node before the next).
      const int crossings = std::min(pp - 1, std::max(0, in.nodes - 1));
      const int inside = pp - 1 - crossings;
      // Only when a hop crosses nodes: on one node the between-nodes link is
      // unset (0 bytes/s), and 0 x (bytes / 0) is NaN, not 0 (every
      // one-node pipeline's decode bound was NaN).
      if (crossings > 0) {
        bound.pipeline_seconds = crossings * (in.between_nodes.latency_seconds +
                                              message_bytes / in.between_nodes.bytes_per_second);
      }
      if (in.within_node.has_value()) {
        bound.pipeline_seconds += inside * (in.within_node->latency_seconds +
                                            message_bytes / in.within_node->bytes_per_second);
      }
    }
  }
  bound.overlapped = batch / m >= 2;
  const double step = bound.step_seconds();
  bound.tokens_per_second_per_sequence = 1.0 / step;
  bound.tokens_per_second_all = batch / step;
  if (in.peak_flops.has_value() && *in.peak_flops > 0 && s.active_parameters() > 0) {
    const double roof = tp * pp * *in.peak_flops / (2.0 * s.active_parameters());
    bound.compute_roof_tokens_per_second = roof;
    if (bound.tokens_per_second_all > roof) {
      bound.compute_bound = true;
      bound.tokens_per_second_all = roof;
      bound.tokens_per_second_per_sequence = roof / batch;
    }
  }
  return bound;
}

PrefillBound BoundPrefill(const SpeedInput& in) {
  const InferenceSizing& s = *in.sizing;
  const int tp = std::max(1, in.layout.tensor_parallel);
  const int pp = std::max(1, in.layout.pipeline_parallel);
  // Expert parallel: every card computes (its replica's prompts and its
  // experts' tokens), so the cards' peak, as for TP x PP.
  const int cards = in.layout.cards();
  PrefillBound bound;
  bound.tokens_per_second =
      PrefillTokensPerSecond(cards, *in.peak_flops, in.prefill_efficiency, s.active_parameters());
  const double prompt = static_cast<double>(std::max<int64_t>(0, in.prompt_tokens));
  const int64_t chunk = std::max(1, in.prefill_chunk_tokens);
  bound.chunks = static_cast<int>(std::max<int64_t>(1, (in.prompt_tokens + chunk - 1) / chunk));
  // GPipe's bubble (Huang et al. 2019): m micro-batches through p stages
  // take (m + p - 1) stage-steps where m would on p times the cards.
  bound.bubble_factor = static_cast<double>(bound.chunks + pp - 1) / bound.chunks;
  bound.compute_seconds = prompt / bound.tokens_per_second;
  if (tp > 1 && in.within_node.has_value() && s.num_layers > 0 && s.hidden_size > 0) {
    // Each stage's cards all-reduce over their own links, and the stages
    // work on different chunks at once: the least time is one stage's share.
    bound.tensor_parallel_seconds =
        2.0 * s.num_layers / pp *
        AllReduceSeconds(*in.within_node, tp,
                         prompt * static_cast<double>(s.hidden_size) * kActivationBytesPerElement);
  }
  bound.time_to_first_token_seconds =
      std::max(bound.compute_seconds * bound.bubble_factor, bound.tensor_parallel_seconds);
  return bound;
}

}  // namespace modelatlas::estimator
