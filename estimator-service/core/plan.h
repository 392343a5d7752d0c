// Fit and speed of a model on a device (docs/FORMULAS.md, "Fit and speed"):
// the fewest cards with tensor parallelism, memory headroom, roofline bounds
// for decode (memory bandwidth) and prefill (peak compute x efficiency),
// time to first token, and cost per million generated tokens.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "estimator-service/core/inference_memory.h"
#include "estimator-service/core/offload.h"
#include "estimator-service/core/speed.h"
#include "estimator-service/core/workload.h"

namespace modelatlas::estimator {

// A device, as the plan needs it. Absent figures make the figures that need
// them absent, never zero.
struct DeviceSpec {
  std::string name;
  std::string display_name;
  // Marketed capacity, bytes.
  double memory_bytes = 0;
  // What one process can allocate, bytes (AllocatableMemoryOf,
  // core/device_memory.h; for unified memory the GPU's share): the capacity
  // fits are decided on. Absent: memory_bytes, or memory_bytes x
  // ResolvedWorkload::kUnifiedMemoryFraction for unified memory.
  std::optional<double> allocatable_memory_bytes;
  // Where allocatable_memory_bytes comes from (a source or the rule used).
  std::string allocatable_memory_source;
  // True when allocatable_memory_bytes was derived by a rule.
  bool allocatable_memory_assumed = false;
  std::optional<double> bandwidth_bytes_per_second;
  // Peak for the format the weights compute in, FLOP/s; absent = unknown.
  std::optional<double> peak_flops;
  std::optional<double> price_usd_per_hour;
  bool unified_memory = false;
  // Cards in one scale-up domain (NVLink, ICI, ...); absent or 1 = not on
  // record, and the plan assumes 8 cards per node (and says so).
  std::optional<int> scale_up_domain_size;
  // The links between cards (core/speed.h), for the communication share of
  // the speed bounds.
  DeviceLinks links;
  // On-chip SRAM (wafer-scale, SRAM-only): no roofline figure is given.
  bool roofline_does_not_apply = false;
  // The bandwidth reads the whole memory more often than any DRAM device on
  // record (BandwidthDoubtful, core/speed.h): the plan's decode line is
  // followed by a line that says so.
  bool bandwidth_doubtful = false;
};

// What a plan fits: the workload sized by SizeInference, the workload
// itself (batch, prompt, memory utilization, prefill efficiency) and the
// most cards to consider.
struct PlanInput;

// The figures of a plan's text that are the same on every device (the
// sizing's parts in GiB, the active parameters, the prefill efficiency):
// written once per plan over every accelerator, not once per device.
struct SizingFigures {
  std::string weights_gib;
  std::string kv_cache_gib;
  std::string activations_gib;
  std::string overhead_gib;
  std::string active_parameters;
  std::string prefill_efficiency;
  // The memory line of a plan on one card up to its headroom, which alone
  // depends on the card: "per card on 1: weights ... = 16.50 GiB; headroom ".
  std::string one_card_parts;
  // The text between the figures each card writes in the speed lines, the
  // same on every card for one request (a line assembled from a dozen
  // pieces per card was a third of a plan over every accelerator's
  // instructions, docs/BENCHMARKS.md, session 17, branch s17-plan):
  // one card's decode line after its bandwidth:
  //   " GB/s / (weights 14.96 GiB + KV 0.50 GiB) = "
  std::string decode_one_card;
  // after the decode tokens/s per sequence: " tokens/s per sequence, x 1 sequences = "
  std::string decode_batch;
  // the prefill line after the peak: " TFLOP/s x 0.5 efficiency / (2 x 8.03e+09 active parameters)
  // = "
  std::string prefill_after_peak;
  // the time to first token line up to the prefill tokens/s:
  //   "time to first token: 1000 prompt tokens / "
  std::string first_token_before_prefill;
  // A many-card plan's memory line between KV cache and total:
  //   " + activations 0.04 GiB + overhead 1.00 GiB = "
  std::string fixed_parts_sum;
  // A many-card decode step line up to the tensor parallelism, and after it:
  //   "decode step: (weights 14.96 GiB / " and " + KV 0.50 GiB"
  std::string decode_step_weights;
  std::string decode_step_kv;
};
SizingFigures FiguresOf(const PlanInput& input);

class FewestCardsSearches;  // core/fit_matrix.h

struct PlanInput {
  InferenceSizing sizing;
  ResolvedWorkload workload;
  int max_cards = 64;
  // FiguresOf(*this), when the caller plans on many devices; null = each
  // plan writes its own.
  const SizingFigures* figures = nullptr;
  // Offload to host memory when the cards alone do not hold the model
  // (core/offload.h); null = none.
  const OffloadRequest* offload = nullptr;
  // Lines written as DevicePlan::arithmetic_wire (a caller that puts them on
  // the wire as they are) instead of into DevicePlan::arithmetic.
  bool lines_as_wire = false;
  // The plans are left unnamed: the caller sets DevicePlan::record_name and
  // record_display_name (the service's reply over the snapshot's records).
  bool names_by_caller = false;
  // FewestCardsSearches of `sizing` and `max_cards`, when the caller plans
  // on many devices; null = each plan searches with FewestCardsLayout.
  FewestCardsSearches* layouts = nullptr;
  // NewPlanGeneration(), when the caller plans this input on many devices:
  // lines that depend on a few of the device's figures only are then kept
  // (per thread) and copied to the next plan whose device has the same
  // figures: a one-card plan's memory, decode and prefill lines, and a
  // many-card plan's layout and memory lines (same layout, node size and
  // headroom). 0 = each plan writes its own. The same lines either way.
  uint64_t shared_lines_generation = 0;
};

// A number no earlier call returned (any thread): one plan over many devices'
// PlanInput::shared_lines_generation.
uint64_t NewPlanGeneration();

// A plan's lines as the reply carries them: each line protobuf's encoding of
// one value of HardwarePlan's repeated string field `arithmetic` (field 15,
// estimator_service.proto; tag byte (15 << 3) | 2, the length as a varint,
// the text; protobuf encoding guide, "Length-Delimited Records"), one after
// another. Written once, copied into the reply whole (answers/plan_wire.h):
// a line kept as a string was sized, then copied piece by piece.
inline constexpr int kArithmeticLineField = 15;
inline constexpr unsigned char kArithmeticLineTag = (kArithmeticLineField << 3) | 2;
// The lines of `wire` (as DevicePlan::arithmetic_wire holds them), in order,
// appended to *lines.
void AppendWireLines(const std::string& wire, std::vector<std::string>* lines);
struct DevicePlan;
// Every line a plan wrote encoded, in order (DevicePlan::usable_line_wire,
// then DevicePlan::arithmetic_wire), appended to *lines.
void AppendPlanWireLines(const DevicePlan& plan, std::vector<std::string>* lines);

struct DevicePlan {
  std::string name;
  std::string display_name;
  // Instead of the two above (then empty): the hardware record's own name
  // and display name, when the caller names the plan (PlanInput::
  // names_by_caller) and keeps the records until the plan is read. Copying
  // both into every plan of a plan over every accelerator was 2.7% of its
  // time under perf (docs/BENCHMARKS.md, session 20). NameOf and
  // DisplayNameOf read whichever is set.
  const std::string* record_name = nullptr;
  const std::string* record_display_name = nullptr;
  // Fits on `cards` cards (cards <= max_cards).
  bool fits = false;
  bool fits_on_one_card = false;
  int cards = 0;
  // How the cards are used: tensor parallelism within a node, pipeline
  // stages across; nodes = ceil(cards / cards per node).
  int tensor_parallel = 0;
  int pipeline_parallel = 0;
  // Cards the routed experts are split over (expert parallelism, a
  // mixture of experts); 0 = none. With it, `cards` = expert_parallel, the
  // attention tensor-parallel over tensor_parallel cards and replicated
  // over expert_parallel / tensor_parallel data-parallel ranks.
  int expert_parallel = 0;
  int nodes = 0;
  // e.g. "TP 8 x PP 2 over 2 nodes", "TP 1 x EP 8 (one node)".
  std::string layout;
  // Per card: what the model needs, what the card offers, the difference.
  double required_bytes_per_card = 0;
  double usable_bytes_per_card = 0;
  double headroom_bytes_per_card = 0;
  // The parts of required_bytes_per_card, bytes (on `cards` cards, or on one
  // card when it does not fit): weights split, KV cache split with the KV
  // heads, activations and overhead on every card.
  double weight_bytes_per_card = 0;
  double kv_cache_bytes_per_card = 0;
  double activation_bytes_per_card = 0;
  double overhead_bytes_per_card = 0;
  std::optional<double> decode_tokens_per_second;      // per sequence
  std::optional<double> decode_tokens_per_second_all;  // the whole batch
  std::optional<double> prefill_tokens_per_second;
  std::optional<double> time_to_first_token_seconds;
  std::optional<double> cost_usd_per_million_tokens;
  // The interconnect's share of one decode step, seconds (tensor-parallel
  // all-reduces and pipeline hops); absent on one card.
  std::optional<double> decode_communication_seconds;
  // Why there is no speed figure at all ("not modelled"), empty otherwise.
  std::string speed_not_modelled;
  // Why the decode bounds (and the cost on them) rest on a doubtful
  // bandwidth (DeviceSpec::bandwidth_doubtful; DoubtfulBandwidthReason,
  // core/speed.h), empty otherwise: such a plan ranks after the plans whose
  // figures are credible (RankPlans).
  std::string decode_bound_doubtful;
  // Why it does not fit, or what limits it.
  std::string reason;
  // The arithmetic behind each figure: the line at usable_line_wire, the
  // lines of arithmetic_wire (kArithmeticLineTag's encoding;
  // PlanInput::lines_as_wire), then these.
  // With lines_as_wire and the record's UsableCard, its usable-memory line
  // (the same ~300 bytes on every plan on that record) is not copied into
  // arithmetic_wire: this points at the card's UsableCard::line_wire, which
  // the caller keeps while the plan is read (null: no such line).
  const std::string* usable_line_wire = nullptr;
  std::string arithmetic_wire;
  std::vector<std::string> arithmetic;
  // Set when offload was tried (PlanInput::offload and the cards alone do
  // not hold the model): fits says whether it fits with it.
  // Shared, not inline: most plans have none, and a plan is moved while
  // ranked.
  std::shared_ptr<const OffloadPlacement> offload;
};

// A plan's hardware name and display name, its own or its record's.
inline const std::string& NameOf(const DevicePlan& plan) {
  return plan.record_name != nullptr ? *plan.record_name : plan.name;
}
inline const std::string& DisplayNameOf(const DevicePlan& plan) {
  return plan.record_display_name != nullptr ? *plan.record_display_name : plan.display_name;
}

// Memory a serving engine may use per card, bytes: the allocatable capacity
// x memory_utilization (vLLM's --gpu-memory-utilization is a fraction of the
// total the driver reports, torch.cuda.mem_get_info), or the GPU's whole
// share of unified memory. `arithmetic`, when given, receives the sentence.
double UsableBytesPerCard(const DeviceSpec& device, double memory_utilization,
                          std::string* arithmetic = nullptr);

// UsableBytesPerCard of one device at one memory utilization, with its
// sentence: the same for every plan on that device at that utilization, so a
// caller that plans on the same records again (a plan over every accelerator)
// keeps it with the records instead of writing it on every plan.
// A figure's text as a plan's lines state it (4 significant digits), kept
// with the value it was written from.
struct KeptFigure {
  bool kept = false;
  double value = 0;
  std::string text;
};
struct UsableCard {
  double memory_utilization = 0;
  double usable_bytes = 0;
  std::string arithmetic;
  // `arithmetic` as a plan's first encoded line (kArithmeticLineTag, the
  // length, the text): a plan written for the wire points at it
  // (DevicePlan::usable_line_wire) rather than copying it, and the reply's
  // writer copies it from here (a copy into every plan and another into the
  // reply was about 3.5% of a plan over every accelerator's CPU,
  // docs/BENCHMARKS.md, session 19).
  std::string line_wire;
  // The record's own figures in the speed and cost lines: bandwidth in GB/s
  // and price in USD per hour, written once per record instead of once per
  // plan (formatting was the largest share of a plan over every accelerator,
  // docs/BENCHMARKS.md, session 17). A plan copies a text only when its
  // figure is the very value it was written from (a request's price
  // replaces the record's).
  KeptFigure bandwidth_gb_per_second;
  KeptFigure price_usd_per_hour;
  // The line after the decode bound on a record whose bandwidth is doubtful
  // (DeviceSpec::bandwidth_doubtful; DoubtfulBandwidthReason, core/speed.h),
  // kept with the bandwidth in bytes/s it was written from.
  KeptFigure doubtful_bandwidth_line;
};
UsableCard UsableCardOf(const DeviceSpec& device, double memory_utilization);

// `usable`, when given and made at the workload's memory utilization, is
// UsableCardOf(device, ...) kept by the caller: the plan copies it instead
// of writing it again (the same plan either way).
DevicePlan PlanOnDevice(const PlanInput& input, const DeviceSpec& device,
                        const UsableCard* usable = nullptr);
// The same plan written into *plan, which may hold an earlier plan: its
// strings' and lines' storage is reused (a caller that plans on the same
// records call after call keeps its plans and allocates no line again), and
// nothing of the earlier plan is left in it.
void PlanOnDeviceInto(const PlanInput& input, const DeviceSpec& device, const UsableCard* usable,
                      DevicePlan* plan);

// For a plan that does not fit on the cards alone: the fewest cards of one
// node with offload to input.offload's host (core/offload.cc); the plan
// then fits with offload, or says why not.
void PlanWithOffload(const PlanInput& input, const DeviceSpec& device, const NodeSize& node,
                     DevicePlan* plan);

// llama.cpp's layer split over cards that differ (docs/FORMULAS.md,
// "Uneven splits"): `llama-server -ngl L+1 -ts a,b,c` puts whole layers on
// the cards in proportion to a:b:c (llama.cpp src/llama-model.cpp
// load_tensors: the split points are the cumulative proportions, layer il
// goes to the first card whose point is above il / (L + 1), the output layer
// is layer L; the token embeddings stay in host memory). The proportions are
// each card's usable memory, as llama.cpp's default split by free memory.
struct SplitCard {
  std::string name;
  std::string display_name;
  // The -ts value: usable memory in GiB, one decimal.
  double proportion = 0;
  int layers = 0;
  bool output_layer = false;
  double weight_bytes = 0;
  double kv_cache_bytes = 0;
  double required_bytes = 0;
  double usable_bytes = 0;
  // Reading its layers (and the output head) for one decode step, seconds;
  // absent without a bandwidth on record.
  std::optional<double> decode_seconds;
  // Why its bandwidth, on which decode_seconds and the split's decode bound
  // rest, is doubtful (DeviceSpec::bandwidth_doubtful; DoubtfulBandwidthReason,
  // core/speed.h); empty otherwise.
  std::string decode_bound_doubtful;
};

struct LayerSplitPlan {
  bool fits = false;
  // Why not, naming the card ("does not fit on RTX 3060 12GB: ...").
  std::string reason;
  std::vector<SplitCard> cards;
  // 1 / the sum of the cards' decode seconds (the layers run in turn).
  std::optional<double> decode_tokens_per_second;
  std::optional<double> decode_tokens_per_second_all;
  std::string launch_command;
  std::vector<std::string> arithmetic;
};

// The layer split of input's sizing over `cards` (in llama.cpp's device
// order; at least one). Needs the layer count (a model without one cannot
// be split: fits false, and why).
LayerSplitPlan PlanLayerSplit(const PlanInput& input, const std::vector<DeviceSpec>& cards);

enum class PlanObjective { kFewestCards, kCheapest, kFastest };

// Orders plans: fitting ones first (on the cards alone before those with
// offload), then by the objective (ties: fewer cards, then faster, then
// name). A speed or a cost resting on a doubtful bandwidth
// (DevicePlan::decode_bound_doubtful) ranks after the credible ones: with
// the fewest cards, among the plans on as many cards; cheapest, after every
// credible cost (before the plans with none); fastest, after every credible
// speed. Ranked first, a card whose record overstates its bandwidth tenfold
// (Epoch's MetaX MXC500) would be the answer people read first.
void RankPlans(PlanObjective objective, std::vector<DevicePlan>* plans);
// The order RankPlans puts `plans` in, as positions into it: a caller that
// only reads the plans in that order need not move them.
std::vector<int> RankOrder(PlanObjective objective, const std::vector<DevicePlan>& plans);
// The same over the first `count` plans (a caller that keeps more plans than
// it planned this time, for their storage).
std::vector<int> RankOrder(PlanObjective objective, size_t count,
                           const std::vector<DevicePlan>& plans);
// The same with the names' order given: name_ranks[i] is the rank of
// plans[i].name among the plans' names (equal names, equal ranks; a list
// planned on again keeps its ranks: PreparedDevice::name_rank). Shorter
// than `count`: the ranks are computed here.
std::vector<int> RankOrder(PlanObjective objective, size_t count,
                           const std::vector<DevicePlan>& plans, std::span<const int> name_ranks);
// By position, the rank of each of `count` names (name_of(i)) among them,
// 0 first: equal names, equal ranks.
std::vector<int> RanksByName(size_t count, absl::FunctionRef<const std::string&(size_t)> name_of);

}  // namespace modelatlas::estimator
