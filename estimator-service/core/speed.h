// Speed bounds that respect the hardware (docs/FORMULAS.md, "Speed bounds"):
// the memory roofline of decode plus the interconnect's share of each step
// (tensor-parallel all-reduces, pipeline hops within and between nodes),
// pipeline bubbles, a compute roof on the aggregate, and the devices where
// the roofline does not apply at all. Numbers only: plan.cc writes the text.
//
// Every figure here is an upper bound on speed (a lower bound on time):
// link latencies are set below measured small-message figures and link
// bandwidths at their raw peak, so that a published measurement is never
// faster than the bound (tests/estimator/speed_test.cc holds six throughput
// and four first-token measurements, docs/ACCURACY.md).
#pragma once

#include <algorithm>
#include <optional>
#include <string>

#include "estimator-service/core/fit_matrix.h"
#include "estimator-service/core/inference_memory.h"

namespace modelatlas::estimator {

// One kind of link between two cards: bandwidth in one direction, bytes per
// second, and the latency of one message, seconds.
struct Link {
  double bytes_per_second = 0;
  double latency_seconds = 0;
  // What it is, for the arithmetic: "NVLink/scale-up 450 GB/s per direction".
  const char* kind = "";
  // Not from the record: an assumption the answer states.
  bool assumed = false;
};

// Assumed latencies, seconds: below the small-message all-reduce and
// send/receive times NCCL reports (about 5-10 us within an NVLink node and
// 10-20 us across InfiniBand, nccl-tests), so that the bound stays a bound.
inline constexpr double kScaleUpLatencySeconds = 2e-6;
inline constexpr double kPcieLatencySeconds = 5e-6;
inline constexpr double kNetworkLatencySeconds = 5e-6;
// Between nodes when the record has no figure: one 400 Gb/s InfiniBand NDR
// (or 400 GbE) port per card, as in a DGX H100: 50 GB/s per direction.
inline constexpr double kAssumedNetworkBytesPerSecond = 50e9;
// Activations cross the links in 16-bit (bf16/fp16), bytes per element.
inline constexpr double kActivationBytesPerElement = 2;
// A device reads its whole memory more than this many times a second only
// when that memory is on-chip SRAM (wafer-scale or SRAM-only designs:
// Cerebras CS-2 20 PB/s over 40 GB = 465,000/s, GroqChip 80 TB/s over
// 230 MB = 332,000/s); HBM, GDDR and LPDDR devices read theirs 10-60 times
// (H100 SXM 3.35 TB/s over 80 GiB: 39/s). Per second.
inline constexpr double kOnChipMemoryReadsPerSecond = 1000;
// The most times a second a DRAM device on record reads its whole memory
// (HBM, GDDR, LPDDR, DDR: 0.6 to 131, the GeForce GTX 280's 141 GB/s over
// 1 GiB the highest; ShippedDatasetTest.BandwidthIsPlausibleForTheMemory...).
// Between this and kOnChipMemoryReadsPerSecond a bandwidth figure is
// doubtful (Epoch's MetaX MXC500: 18 TB/s over 64 GiB, 262/s): the plan
// says so beside the decode bound it rests on. Per second.
inline constexpr double kMostDramMemoryReadsPerSecond = 150;

// The links of one device kind, from its record's figures.
struct DeviceLinks {
  // Bandwidth per direction, bytes/s: the scale-up fabric's (the record
  // states both directions summed, so half), 0 = none on record.
  double scale_up_bytes_per_second = 0;
  int scale_up_domain_size = 0;
  int pcie_generation = 0;  // 0 = not on record
  double intra_node_bytes_per_second = 0;
  double inter_node_bytes_per_second = 0;
};

// The link tensor parallelism and pipeline hops use within a node: the
// scale-up fabric when the record has one of more than one card, else PCIe
// of the record's generation (x16, raw: 16 GB/s per direction for gen 3,
// doubling each generation), else the record's intra-node figure; nullopt
// when none is on record.
std::optional<Link> WithinNodeLink(const DeviceLinks& links);
// Between nodes: the record's inter-node figure, else the assumed 400 Gb/s
// per card.
Link BetweenNodesLink(const DeviceLinks& links);

// True when the roofline does not apply: the memory is on-chip SRAM (the
// record's memory type says so, or it reads its whole memory more than
// kOnChipMemoryReadsPerSecond times a second).
bool RooflineDoesNotApply(const std::string& memory_type, double memory_bytes,
                          double bandwidth_bytes_per_second);
// True when the bandwidth reads the whole memory more often than any DRAM
// device on record (kMostDramMemoryReadsPerSecond) and the roofline applies
// (not on-chip SRAM): a figure probably wrong on its record.
bool BandwidthDoubtful(const std::string& memory_type, double memory_bytes,
                       double bandwidth_bytes_per_second);
// Why a bandwidth BandwidthDoubtful flags is doubtful, in words with the
// figures (memory_bytes > 0): the plan's line after its decode bound, the
// runnable list's and the fit matrix's decode_bound_doubtful.
std::string DoubtfulBandwidthReason(double memory_bytes, double bandwidth_bytes_per_second);

struct SpeedInput {
  const InferenceSizing* sizing = nullptr;
  Layout layout;
  int nodes = 1;
  int batch_size = 1;  // sequences decoded together (the concurrency)
  int64_t prompt_tokens = 0;
  int prefill_chunk_tokens = 512;
  double prefill_efficiency = 0.5;
  std::optional<double> bandwidth_bytes_per_second;
  std::optional<double> peak_flops;
  std::optional<Link> within_node;
  Link between_nodes;
};

struct DecodeBound {
  // Pipeline micro-batches in flight: min(batch, stages); 1 without stages.
  int micro_batches = 1;
  // One step (every sequence advances one token), seconds: the memory
  // reads of the cards of each stage in turn, then the links.
  double memory_seconds = 0;
  double tensor_parallel_seconds = 0;  // 2 all-reduces per layer
  double pipeline_seconds = 0;         // stage-to-stage hops
  // Expert parallelism: 2 all-to-alls (dispatch, combine) per MoE layer.
  double expert_parallel_seconds = 0;
  // Expert parallelism: routed experts the fullest card reads per MoE layer
  // (ceil(top-k / EP): the k experts of a token spread at best evenly).
  int experts_read_per_card = 0;
  // Communication counted: layers and hidden size known, a link on record
  // (or assumed) for each hop.
  bool communication_counted = true;
  // A micro-batch of two or more sequences can be split in two so that one
  // half's transfers overlap the other half's reads (as runtimes that
  // overlap communication do): the step is then the longer of the two, not
  // their sum, which keeps the bound a bound.
  bool overlapped = false;
  double step_seconds() const {
    const double links = tensor_parallel_seconds + pipeline_seconds + expert_parallel_seconds;
    return overlapped ? std::max(memory_seconds, links) : memory_seconds + links;
  }
  // The aggregate's compute roof at 100% of peak: cards x peak / (2 x active
  // parameters), tokens/s; nullopt without a peak.
  std::optional<double> compute_roof_tokens_per_second;
  bool compute_bound = false;
  double tokens_per_second_per_sequence = 0;
  double tokens_per_second_all = 0;
};

// Decode for `input.batch_size` sequences on the layout. Needs a bandwidth.
// Expert parallel (layout.expert_parallel > 1): each card reads the dense
// part's active bytes / TP, ExpertsPerRead routed experts of each MoE layer
// and its replica's sequences' KV cache; the links carry two all-to-alls
// per MoE layer (each card's tokens' hidden states to the cards of their
// top-k experts and back: tokens x k x (EP - 1) / EP x hidden x 2 bytes,
// the volume of balanced routing, which EP load balancing aims for), within
// a node over its link and across nodes over the network at once, and the
// attention's TP all-reduce (one per layer, two in dense layers).
DecodeBound BoundDecode(const SpeedInput& input);

struct PrefillBound {
  // Many prompts at once (every card busy): cards x peak x efficiency /
  // (2 x active parameters), tokens/s.
  double tokens_per_second = 0;
  // One prompt of prompt_tokens: chunks of prefill_chunk_tokens pipelined
  // through the stages, (chunks + stages - 1) / chunks of the compute time
  // (the pipeline bubble), or the tensor-parallel all-reduce traffic when
  // that takes longer (it overlaps compute), seconds.
  int chunks = 1;
  double compute_seconds = 0;
  double bubble_factor = 1;
  double tensor_parallel_seconds = 0;
  double time_to_first_token_seconds = 0;
};

// Prefill. Needs a peak.
PrefillBound BoundPrefill(const SpeedInput& input);

}  // namespace modelatlas::estimator
