// The inverse questions (largest context, largest batch, best weight format).
// About 560 lines: the three share one search driver and its forward
// evaluation, and each adds only its validation and its statement.

#include "estimator-service/answers/inverse.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status/errors.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/records.h"
#include "estimator-service/core/inverse.h"
#include "estimator-service/core/number_format.h"
#include "estimator-service/core/units.h"

namespace modelatlas::estimator {
namespace {

// The bounds of the searches: ResolveWorkload's bounds of the same fields.
constexpr int64_t kMaxContextSearchTokens = 100'000'000;
constexpr int64_t kMaxBatchSearchSequences = 1'000'000;
constexpr int kMaxKvBlockSizeTokens = 1'000'000;
constexpr int kMaxTargetCards = 1024;
constexpr int kMaxPreferredFormats = 64;

std::string GiB(double bytes) { return absl::StrFormat("%.2f GiB", BytesToGiB(bytes)); }

int CardsOf(const v1::MemoryTarget& target) { return target.cards() > 0 ? target.cards() : 1; }

int64_t BlockOf(int32_t kv_block_size_tokens) {
  return kv_block_size_tokens > 0 ? kv_block_size_tokens : kDefaultKvBlockSizeTokens;
}

// The checks every inverse request shares.
void ValidateCommon(bool has_source, bool has_target, const v1::MemoryTarget& target,
                    const v1::InferenceWorkload& workload, FieldViolations* violations) {
  if (!has_source) {
    violations->Add("source",
                    "must name the model: catalog_name, inline_model, hf_repo, gguf_header or "
                    "safetensors_header");
  }
  switch (target.memory_case()) {
    case v1::MemoryTarget::kHardware:
      if (target.hardware().empty())
        violations->Add("target.hardware", "must name a hardware record");
      if (target.cards() < 0 || target.cards() > kMaxTargetCards) {
        violations->Add("target.cards", absl::StrCat("must be between 1 and ", kMaxTargetCards,
                                                     " cards (0 = 1), got ", target.cards()));
      }
      break;
    case v1::MemoryTarget::kMemoryBudgetBytes:
      if (target.memory_budget_bytes() <= 0 || target.memory_budget_bytes() > kMaxBytes) {
        violations->Add("target.memory_budget_bytes",
                        absl::StrCat("must be more than 0 bytes and at most ",
                                     absl::StrFormat("%.0f", kMaxBytes), " bytes, got ",
                                     target.memory_budget_bytes()));
      }
      if (target.cards() != 0) {
        violations->Add("target.cards",
                        "applies to a hardware target only; leave it 0 with "
                        "memory_budget_bytes");
      }
      break;
    case v1::MemoryTarget::MEMORY_NOT_SET:
      violations->Add(has_target ? "target.memory" : "target",
                      "must name hardware (with cards) or give memory_budget_bytes");
      break;
  }
  // Offload as the plan takes it (ValidatePlanRequest), on a hardware target.
  if (!v1::OffloadMode_IsValid(target.offload())) {
    violations->Add("target.offload", absl::StrCat("has no value ", target.offload()));
  } else if (target.offload() != v1::OFFLOAD_MODE_UNSPECIFIED) {
    if (target.has_memory_budget_bytes()) {
      violations->Add("target.offload",
                      "applies to a hardware target only (cards and a host), not to a memory "
                      "budget");
    }
    if (target.offload_host().empty()) {
      violations->Add("target.offload_host",
                      "is required with offload (no host is assumed): a host record, e.g. "
                      "hardware/host-desktop-ddr5-6000-dual-channel");
    }
  } else if (!target.offload_host().empty()) {
    violations->Add("target.offload", "must be set (auto, layers or experts) to use offload_host");
  }
  absl::StatusOr<ResolvedWorkload> resolved = ResolveWorkload(workload);
  for (const FieldViolation& v : GetFieldViolations(resolved.status())) {
    violations->Add(absl::StrCat("workload.", v.field), v.description);
  }
}

void ValidateBlock(int32_t kv_block_size_tokens, FieldViolations* violations) {
  if (kv_block_size_tokens < 0 || kv_block_size_tokens > kMaxKvBlockSizeTokens) {
    violations->Add("kv_block_size_tokens",
                    absl::StrCat("must be between 1 and ", kMaxKvBlockSizeTokens, " tokens (0 = ",
                                 kDefaultKvBlockSizeTokens, "), got ", kv_block_size_tokens));
  }
}

// The forward answer at one workload.
struct Probe {
  bool fits = false;
  // Per card (hardware) or in total (budget), bytes.
  int64_t required_bytes = 0;
  int64_t available_bytes = 0;
  v1::EstimateInferenceMemoryResponse memory;
  std::optional<v1::HardwarePlan> plan;
  // The plan keeps part of the model in host memory (or tried to): what it
  // puts there and what the host may hold, bytes.
  bool offload = false;
  int64_t host_required_bytes = 0;
  int64_t host_available_bytes = 0;
  // Offload was tried and the host's memory is what falls short.
  bool host_short() const { return offload && host_required_bytes > host_available_bytes; }
};

// An offload error of the plan named as the inverse request's field.
absl::Status AsTargetField(absl::Status status) {
  for (const FieldViolation& v : GetFieldViolations(status)) {
    if (v.field == "offload" || v.field == "offload_host") {
      return InvalidFieldError(absl::StrCat("target.", v.field), v.description);
    }
  }
  return status;
}

// The forward function of every question: PlanInferenceFor on the target's
// cards, or EstimateMemoryForModel against the budget.
class Forward {
 public:
  Forward(const common::v1::Model& model, const SharedRecords<common::v1::Hardware>& hardware,
          const v1::MemoryTarget& target, bool hypothetical, const SourcedModel* sourced,
          const common::v1::Hardware* offload_host)
      : model_(model),
        hardware_(hardware),
        target_(target),
        hypothetical_(hypothetical),
        sourced_(sourced),
        offload_host_(offload_host) {}

  // FAILED_PRECONDITION when the target's hardware record cannot be planned on.
  absl::Status CheckTarget() const {
    if (target_.has_memory_budget_bytes()) return absl::OkStatus();
    if (offloads() && offload_host_ == nullptr) {
      return InvalidFieldError("target.offload_host", "the host record was not read");
    }
    if (hardware_.size() != 1) {
      return absl::InternalError(absl::StrCat("expected one hardware record for ",
                                              target_.hardware(), ", got ", hardware_.size()));
    }
    const common::v1::Hardware& hw = hardware_[0];
    if (absl::Status unusable = CheckDeviceFigures(hw); !unusable.ok()) return unusable;
    if (!hw.has_memory_bytes() || hw.memory_bytes() <= 0) {
      return WithReason(absl::FailedPreconditionError(
                            absl::StrCat("hardware record ", hw.name(), " (", hw.display_name(),
                                         ") has no memory size on record: nothing to fit in")),
                        "HARDWARE_MEMORY_UNKNOWN");
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Probe> operator()(const v1::InferenceWorkload& workload) {
    ++evaluations_;
    Probe probe;
    if (target_.has_memory_budget_bytes()) {
      v1::EstimateInferenceMemoryRequest request;
      *request.mutable_workload() = workload;
      request.set_hypothetical(hypothetical_);
      absl::StatusOr<v1::EstimateInferenceMemoryResponse> memory =
          EstimateMemoryForModel(model_, request, sourced_);
      if (!memory.ok()) return memory.status();
      probe.memory = *std::move(memory);
      probe.required_bytes = probe.memory.total_bytes();
      probe.available_bytes = target_.memory_budget_bytes();
      probe.fits = probe.required_bytes <= probe.available_bytes;
    } else {
      v1::PlanInferenceRequest request;
      *request.mutable_workload() = workload;
      request.set_hypothetical(hypothetical_);
      request.set_max_cards(CardsOf(target_));
      if (offloads()) {
        // The plan's own offload: the same placement, host check and layout.
        request.set_offload(target_.offload());
        request.set_offload_host(target_.offload_host());
      }
      absl::StatusOr<v1::PlanInferenceResponse> plan = PlanInferenceFor(
          model_, hardware_, request, sourced_, nullptr, offloads() ? offload_host_ : nullptr);
      if (!plan.ok()) return AsTargetField(plan.status());
      probe.memory = std::move(*plan->mutable_memory());
      if (plan->plans_size() == 1) {
        probe.plan = plan->plans(0);
        probe.fits = probe.plan->fits();
        probe.required_bytes = probe.plan->required_bytes_per_card();
        probe.available_bytes = probe.plan->usable_bytes_per_card();
        if (probe.plan->has_offload()) {
          probe.offload = true;
          probe.host_required_bytes = probe.plan->offload().host_required_bytes();
          probe.host_available_bytes = probe.plan->offload().host_usable_bytes();
        }
      }
    }
    if (!probe.memory.available()) {
      return WithReason(absl::FailedPreconditionError(absl::StrCat(
                            probe.memory.no_estimate_reason(), " (model \"",
                            probe.memory.display_name(), "\"); set hypothetical to answer anyway")),
                        "WEIGHTS_NOT_PUBLISHED");
    }
    return probe;
  }

  // "on up to 2 x NVIDIA H100 SXM5 80GB" or "in a budget of ... bytes".
  std::string Where() const {
    if (target_.has_memory_budget_bytes()) {
      return absl::StrCat("in a memory budget of ", target_.memory_budget_bytes(), " bytes (",
                          GiB(static_cast<double>(target_.memory_budget_bytes())), ")");
    }
    return absl::StrCat("on up to ", CardsOf(target_), " x ", hardware_[0].display_name(),
                        offloads() ? absl::StrCat(" with offload (", OffloadName(), ") to ",
                                                  offload_host_->display_name())
                                   : "");
  }
  // How a probe compares, e.g. "needs 70.1 GiB per card on 2 cards <= 72.0 GiB usable: fits".
  std::string Compare(const Probe& probe) const {
    const bool per_card = !target_.has_memory_budget_bytes();
    std::string cards;
    if (per_card && probe.plan.has_value()) {
      cards = probe.fits ? absl::StrCat(" on ", probe.plan->cards(), " card(s)")
                         : absl::StrCat(" on one card (no layout of up to ", CardsOf(target_),
                                        " cards fits)");
    }
    if (per_card && probe.plan.has_value() && probe.offload) {
      // With offload the plan's per-card figures are the cards' side when it
      // fits; when it does not they are the cards alone, so the placement's
      // host side and the plan's reason say what is short.
      const std::string host =
          absl::StrCat("host memory needs ", probe.host_required_bytes, " bytes (",
                       GiB(static_cast<double>(probe.host_required_bytes)), ")",
                       probe.host_short() ? " > " : " <= ", probe.host_available_bytes, " bytes (",
                       GiB(static_cast<double>(probe.host_available_bytes)), ") usable");
      if (!probe.fits) {
        return absl::StrCat("with offload (", OffloadName(), "): ", host, ": does not fit (",
                            probe.plan->reason(), ")");
      }
      return absl::StrCat(
          "with offload (", probe.plan->layout(), "): cards need ", probe.required_bytes,
          " bytes (", GiB(static_cast<double>(probe.required_bytes)),
          ") per card <= ", probe.available_bytes, " bytes (",
          GiB(static_cast<double>(probe.available_bytes)), ") usable; ", host, ": fits");
    }
    return absl::StrCat(
        "needs ", probe.required_bytes, " bytes (", GiB(static_cast<double>(probe.required_bytes)),
        ")", per_card ? " per card" : " in total", cards, probe.fits ? " <= " : " > ",
        probe.available_bytes, " bytes (", GiB(static_cast<double>(probe.available_bytes)), ") ",
        per_card ? "usable per card" : "budget", probe.fits ? ": fits" : ": does not fit");
  }
  // What stops `beyond` (a probe that does not fit) when memory does: the
  // host's memory when offload put more there than it holds, else the cards'.
  std::string MemoryConstraint(const Probe& beyond) const {
    if (target_.has_memory_budget_bytes()) {
      return absl::StrCat("the memory budget (", target_.memory_budget_bytes(), " bytes)");
    }
    if (beyond.host_short()) {
      return absl::StrCat("host memory (", offload_host_->display_name(), ": ",
                          beyond.host_required_bytes, " bytes needed > ",
                          beyond.host_available_bytes, " usable)");
    }
    return absl::StrCat("memory per card (", CardsOf(target_), " x ", hardware_[0].display_name(),
                        offloads() ? ", with offload" : "", ")");
  }
  bool offloads() const {
    return !target_.has_memory_budget_bytes() && target_.offload() != v1::OFFLOAD_MODE_UNSPECIFIED;
  }
  std::string OffloadName() const {
    switch (target_.offload()) {
      case v1::OFFLOAD_MODE_LAYERS:
        return "layers";
      case v1::OFFLOAD_MODE_EXPERTS:
        return "experts";
      default:
        return "auto";
    }
  }
  int evaluations() const { return evaluations_; }

 private:
  const common::v1::Model& model_;
  const SharedRecords<common::v1::Hardware>& hardware_;
  const v1::MemoryTarget& target_;
  bool hypothetical_;
  const SourcedModel* sourced_;
  const common::v1::Hardware* offload_host_;
  int evaluations_ = 0;
};

// The answer's header and the forward answer at the result (or at the first
// step, when nothing fits).
v1::InverseAnswer AnswerFrom(const char* question, const Probe& probe) {
  v1::InverseAnswer answer;
  answer.set_question(question);
  answer.set_model(probe.memory.model());
  answer.set_display_name(probe.memory.display_name());
  answer.set_source(probe.memory.source());
  answer.set_fits(probe.fits);
  answer.set_required_bytes(probe.required_bytes);
  answer.set_available_bytes(probe.available_bytes);
  if (probe.plan.has_value()) {
    if (probe.fits) answer.set_cards(probe.plan->cards());
    *answer.mutable_plan() = *probe.plan;
  }
  if (probe.offload) {
    answer.set_host_required_bytes(probe.host_required_bytes);
    answer.set_host_available_bytes(probe.host_available_bytes);
    if (probe.fits) {
      const v1::OffloadPlacement& o = probe.plan->offload();
      answer.add_arithmetic(absl::StrCat(
          "layout at the answer: ", probe.plan->layout(), ": ",
          o.mode() == v1::OFFLOAD_MODE_EXPERTS
              ? absl::StrCat("the routed experts of ", o.expert_layers_in_host(), " of ",
                             o.moe_layers(), " MoE layers in host memory")
              : absl::StrCat(o.layers_on_cards(), " layers on the cards, ", o.layers_in_host(),
                             " layers, the embeddings and the output head in host memory"),
          " of ", o.host_display_name(), " (", GiB(static_cast<double>(o.host_required_bytes())),
          " of ", GiB(static_cast<double>(o.host_usable_bytes())), " usable)"));
    }
  }
  *answer.mutable_memory() = probe.memory;
  for (const std::string& warning : probe.memory.warnings()) answer.add_warnings(warning);
  return answer;
}

int64_t LineBytes(const v1::EstimateInferenceMemoryResponse& memory, const char* component) {
  for (const v1::EstimateLine& line : memory.lines()) {
    if (line.component() == component) return line.bytes();
  }
  return 0;
}

absl::Status NeedsArchitecture(const common::v1::Model& model, const char* what) {
  if (model.has_architecture() && model.architecture().num_layers() > 0) return absl::OkStatus();
  return WithReason(absl::FailedPreconditionError(absl::StrCat(
                        "model \"", model.display_name(),
                        "\" has no architecture on record: the KV cache, and so the largest ", what,
                        ", cannot be sized")),
                    "ARCHITECTURE_UNKNOWN");
}

// A search over one workload field: the forward answer at `set(workload, x)`
// for x in [1, limit].
template <typename Set>
absl::StatusOr<LargestFit> Search(Forward& forward, const v1::InferenceWorkload& base,
                                  int64_t limit, Set set) {
  return LargestFitting(limit, [&](int64_t x) -> absl::StatusOr<bool> {
    v1::InferenceWorkload workload = base;
    set(&workload, x);
    absl::StatusOr<Probe> probe = forward(workload);
    if (!probe.ok()) return probe.status();
    return probe->fits;
  });
}

absl::Status NotMonotone(const char* what) {
  return absl::InternalError(
      absl::StrCat("the forward answer is not monotone in the ", what, ": the search is invalid"));
}

}  // namespace

absl::Status ValidateInverseRequest(const v1::FindMaxContextRequest& request) {
  FieldViolations violations;
  ValidateCommon(request.has_source(), request.has_target(), request.target(), request.workload(),
                 &violations);
  ValidateBlock(request.kv_block_size_tokens(), &violations);
  if (request.workload().context_length_tokens() != 0) {
    violations.Add("workload.context_length_tokens", "is what FindMaxContext answers; leave it 0");
  }
  return violations.ToStatus();
}

absl::Status ValidateInverseRequest(const v1::FindMaxBatchRequest& request) {
  FieldViolations violations;
  ValidateCommon(request.has_source(), request.has_target(), request.target(), request.workload(),
                 &violations);
  ValidateBlock(request.kv_block_size_tokens(), &violations);
  if (request.workload().batch_size() != 0) {
    violations.Add("workload.batch_size", "is what FindMaxBatch answers; leave it 0");
  }
  return violations.ToStatus();
}

absl::Status ValidateInverseRequest(const v1::FindBestWeightFormatRequest& request) {
  FieldViolations violations;
  ValidateCommon(request.has_source(), request.has_target(), request.target(), request.workload(),
                 &violations);
  if (request.workload().weight_format() != v1::NUMBER_FORMAT_UNSPECIFIED) {
    violations.Add("workload.weight_format",
                   "is what FindBestWeightFormat answers; leave it unset");
  }
  if (request.preferred_formats_size() > kMaxPreferredFormats) {
    violations.Add("preferred_formats",
                   absl::StrCat("at most ", kMaxPreferredFormats, " formats, got ",
                                request.preferred_formats_size()));
  }
  for (int i = 0; i < request.preferred_formats_size(); ++i) {
    const v1::NumberFormat format = request.preferred_formats(i);
    if (format == v1::NUMBER_FORMAT_UNSPECIFIED ||
        !ToCoreNumberFormat(format, NumberFormat::kBf16, "").ok()) {
      violations.Add(absl::StrCat("preferred_formats[", i, "]"),
                     absl::StrCat("must be a weight format, got ", format));
    }
  }
  return violations.ToStatus();
}

absl::StatusOr<v1::InverseAnswer> MaxContextFor(const common::v1::Model& model,
                                                const SharedRecords<common::v1::Hardware>& hardware,
                                                const v1::FindMaxContextRequest& request,
                                                const SourcedModel* sourced,
                                                const common::v1::Hardware* offload_host) {
  if (absl::Status invalid = ValidateInverseRequest(request); !invalid.ok()) return invalid;
  if (absl::Status unsized = NeedsArchitecture(model, "context"); !unsized.ok()) return unsized;
  Forward forward(model, hardware, request.target(), request.hypothetical(), sourced, offload_host);
  if (absl::Status unusable = forward.CheckTarget(); !unusable.ok()) return unusable;

  const int64_t block = BlockOf(request.kv_block_size_tokens());
  const int64_t model_max = model.architecture().max_context_length();
  const bool model_limits = model_max > 0 && model_max <= kMaxContextSearchTokens;
  const int64_t limit_tokens = model_limits ? model_max : kMaxContextSearchTokens;
  const int64_t limit_blocks = std::max<int64_t>(1, limit_tokens / block);
  auto set = [block](v1::InferenceWorkload* w, int64_t blocks) {
    w->set_context_length_tokens(blocks * block);
  };
  absl::StatusOr<LargestFit> found = Search(forward, request.workload(), limit_blocks, set);
  if (!found.ok()) return found.status();

  auto at = [&](int64_t blocks) {
    v1::InferenceWorkload workload = request.workload();
    set(&workload, blocks);
    return forward(workload);
  };
  const int64_t answer_blocks = std::max<int64_t>(1, found->largest);
  absl::StatusOr<Probe> probe = at(answer_blocks);
  if (!probe.ok()) return probe.status();
  v1::InverseAnswer answer = AnswerFrom("max_context", *probe);
  answer.set_kv_block_size_tokens(static_cast<int32_t>(block));
  answer.add_arithmetic(absl::StrCat(
      "search: the largest context in whole KV blocks of ", block, " tokens ", forward.Where(),
      ", up to ", limit_blocks, " blocks (",
      model_limits ? absl::StrCat("the model's maximum context, ", model_max, " tokens")
                   : absl::StrCat("the request limit, ", kMaxContextSearchTokens, " tokens"),
      "): ", found->evaluations, " evaluations of the forward ",
      request.target().has_memory_budget_bytes() ? "memory estimate" : "plan"));
  if (found->largest == 0) {
    if (probe->fits) return NotMonotone("context");
    answer.set_binding_constraint(absl::StrCat(
        forward.MemoryConstraint(*probe), ": not even one KV block of ", block, " tokens fits"));
    answer.set_required_bytes_one_step_beyond(probe->required_bytes);
    answer.add_arithmetic(absl::StrCat("at ", block, " tokens: ", forward.Compare(*probe)));
    return answer;
  }
  const int64_t tokens = answer_blocks * block;
  answer.set_max_context_length_tokens(tokens);
  answer.add_arithmetic(absl::StrCat("at ", tokens, " tokens (", answer_blocks,
                                     " blocks): ", forward.Compare(*probe), "; KV cache ",
                                     LineBytes(probe->memory, "kv_cache"), " bytes"));
  if (answer_blocks < limit_blocks) {
    absl::StatusOr<Probe> beyond = at(answer_blocks + 1);
    if (!beyond.ok()) return beyond.status();
    if (beyond->fits) return NotMonotone("context");
    answer.set_required_bytes_one_step_beyond(beyond->required_bytes);
    if (beyond->offload) {
      answer.set_host_required_bytes_one_step_beyond(beyond->host_required_bytes);
    }
    answer.set_binding_constraint(forward.MemoryConstraint(*beyond));
    answer.add_arithmetic(absl::StrCat(
        "at ", tokens + block, " tokens (one block more): ", forward.Compare(*beyond),
        "; KV cache ", LineBytes(beyond->memory, "kv_cache"), " bytes (+",
        LineBytes(beyond->memory, "kv_cache") - LineBytes(probe->memory, "kv_cache"), ")"));
  } else if (model_limits) {
    answer.set_binding_constraint(
        absl::StrCat("the model's maximum context (", model_max, " tokens",
                     tokens < model_max ? absl::StrCat(", ", tokens, " in whole blocks") : "",
                     "); memory would hold more"));
  } else {
    answer.set_binding_constraint(absl::StrCat("the request limit (", kMaxContextSearchTokens,
                                               " tokens); memory would hold more"));
  }
  return answer;
}

absl::StatusOr<v1::InverseAnswer> MaxBatchFor(const common::v1::Model& model,
                                              const SharedRecords<common::v1::Hardware>& hardware,
                                              const v1::FindMaxBatchRequest& request,
                                              const SourcedModel* sourced,
                                              const common::v1::Hardware* offload_host) {
  if (absl::Status invalid = ValidateInverseRequest(request); !invalid.ok()) return invalid;
  if (absl::Status unsized = NeedsArchitecture(model, "batch"); !unsized.ok()) return unsized;
  Forward forward(model, hardware, request.target(), request.hypothetical(), sourced, offload_host);
  if (absl::Status unusable = forward.CheckTarget(); !unusable.ok()) return unusable;

  absl::StatusOr<ResolvedWorkload> resolved = ResolveWorkload(request.workload());
  if (!resolved.ok()) return PrefixFieldViolations(resolved.status(), "workload.");
  const ResolvedWorkload fitted =
      WorkloadForModel(*resolved, model.architecture().max_context_length());
  const int64_t block = BlockOf(request.kv_block_size_tokens());
  const int64_t context = fitted.context_length_tokens;
  const int64_t held = RoundUpToBlocks(context, block);
  v1::InferenceWorkload base = request.workload();
  base.set_context_length_tokens(held);
  auto set = [](v1::InferenceWorkload* w, int64_t batch) {
    w->set_batch_size(static_cast<int32_t>(batch));
  };
  absl::StatusOr<LargestFit> found = Search(forward, base, kMaxBatchSearchSequences, set);
  if (!found.ok()) return found.status();

  auto at = [&](int64_t batch) {
    v1::InferenceWorkload workload = base;
    set(&workload, batch);
    return forward(workload);
  };
  const int64_t batch = std::max<int64_t>(1, found->largest);
  absl::StatusOr<Probe> probe = at(batch);
  if (!probe.ok()) return probe.status();
  v1::InverseAnswer answer = AnswerFrom("max_batch", *probe);
  answer.set_kv_block_size_tokens(static_cast<int32_t>(block));
  answer.add_arithmetic(
      absl::StrCat("context ", context, " tokens",
                   fitted.context_capped ? " (the default, capped at the model's maximum)" : "",
                   " per sequence = ceil(", context, " / ", block, ") = ", held / block,
                   " KV blocks of ", block, " tokens = ", held, " tokens held per sequence"));
  answer.add_arithmetic(absl::StrCat(
      "search: the largest batch ", forward.Where(), ", up to ", kMaxBatchSearchSequences,
      " sequences: ", found->evaluations, " evaluations of the forward ",
      request.target().has_memory_budget_bytes() ? "memory estimate" : "plan"));
  if (found->largest == 0) {
    if (probe->fits) return NotMonotone("batch");
    answer.set_binding_constraint(absl::StrCat(
        forward.MemoryConstraint(*probe), ": not even one sequence of ", held, " tokens fits"));
    answer.set_required_bytes_one_step_beyond(probe->required_bytes);
    answer.add_arithmetic(absl::StrCat("batch 1: ", forward.Compare(*probe)));
    return answer;
  }
  answer.set_max_batch_size(static_cast<int32_t>(batch));
  answer.add_arithmetic(absl::StrCat("batch ", batch, ": ", forward.Compare(*probe), "; KV cache ",
                                     LineBytes(probe->memory, "kv_cache"), " bytes"));
  if (batch < kMaxBatchSearchSequences) {
    absl::StatusOr<Probe> beyond = at(batch + 1);
    if (!beyond.ok()) return beyond.status();
    if (beyond->fits) return NotMonotone("batch");
    answer.set_required_bytes_one_step_beyond(beyond->required_bytes);
    if (beyond->offload) {
      answer.set_host_required_bytes_one_step_beyond(beyond->host_required_bytes);
    }
    answer.set_binding_constraint(forward.MemoryConstraint(*beyond));
    answer.add_arithmetic(
        absl::StrCat("batch ", batch + 1, " (one sequence more): ", forward.Compare(*beyond),
                     "; KV cache ", LineBytes(beyond->memory, "kv_cache"), " bytes"));
  } else {
    answer.set_binding_constraint(absl::StrCat("the request limit (", kMaxBatchSearchSequences,
                                               " sequences); memory would hold more"));
  }
  return answer;
}

absl::StatusOr<v1::InverseAnswer> BestWeightFormatFor(
    const common::v1::Model& model, const SharedRecords<common::v1::Hardware>& hardware,
    const v1::FindBestWeightFormatRequest& request, const SourcedModel* sourced,
    const common::v1::Hardware* offload_host) {
  if (absl::Status invalid = ValidateInverseRequest(request); !invalid.ok()) return invalid;
  if (sourced != nullptr && sourced->weights.has_value()) {
    return WithReason(absl::FailedPreconditionError(absl::StrCat(
                          "the weights of ", sourced->source,
                          " are sized from the file's own tensor types; its format is the "
                          "file's, not a choice")),
                      "WEIGHT_FORMAT_FIXED");
  }
  Forward forward(model, hardware, request.target(), request.hypothetical(), sourced, offload_host);
  if (absl::Status unusable = forward.CheckTarget(); !unusable.ok()) return unusable;

  std::vector<v1::NumberFormat> formats;
  for (int format : request.preferred_formats()) {
    formats.push_back(static_cast<v1::NumberFormat>(format));
  }
  const bool by_precision = formats.empty();
  if (by_precision) {
    for (NumberFormat format : WeightFormatsByPrecision()) {
      formats.push_back(ToProtoNumberFormat(format));
    }
  }
  std::vector<std::string> tried;
  std::optional<Probe> previous;
  v1::NumberFormat previous_format = v1::NUMBER_FORMAT_UNSPECIFIED;
  for (size_t i = 0; i < formats.size(); ++i) {
    v1::InferenceWorkload workload = request.workload();
    workload.set_weight_format(formats[i]);
    absl::StatusOr<Probe> probe = forward(workload);
    if (!probe.ok()) return probe.status();
    absl::StatusOr<NumberFormat> core =
        ToCoreNumberFormat(formats[i], NumberFormat::kBf16, "preferred_formats");
    const std::string name = core.ok() ? NumberFormatName(*core) : "?";
    tried.push_back(absl::StrCat(name, ": ", forward.Compare(*probe), " (weights ",
                                 LineBytes(probe->memory, "weights"), " bytes)"));
    const bool last = i + 1 == formats.size();
    if (!probe->fits && !last) {
      previous = *std::move(probe);
      previous_format = formats[i];
      continue;
    }
    v1::InverseAnswer answer = AnswerFrom("best_weight_format", *probe);
    answer.add_arithmetic(
        absl::StrCat("search: the first format that fits ", forward.Where(), ", in the order ",
                     by_precision ? "of bits per weight, highest first" : "of preference given",
                     " (", formats.size(), " formats; ", forward.evaluations(), " evaluated)"));
    for (std::string& line : tried) answer.add_arithmetic(std::move(line));
    if (!probe->fits) {
      answer.set_binding_constraint(
          absl::StrCat(forward.MemoryConstraint(*probe), ": no format of the list fits"));
      answer.set_required_bytes_one_step_beyond(probe->required_bytes);
      return answer;
    }
    answer.set_weight_format(formats[i]);
    if (previous.has_value()) {
      absl::StatusOr<NumberFormat> better =
          ToCoreNumberFormat(previous_format, NumberFormat::kBf16, "preferred_formats");
      answer.set_binding_constraint(
          absl::StrCat(forward.MemoryConstraint(*previous), ": the next better format, ",
                       better.ok() ? NumberFormatName(*better) : "?", ", does not fit"));
      answer.set_required_bytes_one_step_beyond(previous->required_bytes);
      if (previous->offload) {
        answer.set_host_required_bytes_one_step_beyond(previous->host_required_bytes);
      }
    } else {
      answer.set_binding_constraint("none: the first format of the list fits");
    }
    return answer;
  }
  return absl::InternalError("no format to try");
}

namespace {

template <typename Request, typename Solve>
void AnswerInverseWithHost(std::shared_ptr<RecordSource> source, const Request& request,
                           std::shared_ptr<const common::v1::Hardware> host,
                           AnswerDone<v1::InverseAnswer> done, Solve solve) {
  RecordsWanted wanted;
  if (request.target().has_hardware()) wanted.hardware.push_back(request.target().hardware());
  WithSourcedModel(std::move(source), request.source(), std::move(wanted),
                   [&request, host, done = std::move(done), solve](absl::StatusOr<Records> records,
                                                                   const SourcedModel& sourced) {
                     if (!records.ok()) return done(records.status());
                     done(solve(*records->model, records->hardware, request, &sourced, host.get()));
                   });
}

// Reads the offload host first when the target names one (NOT_FOUND naming
// target.offload_host), as the plan does, then answers.
template <typename Request, typename Solve>
void AnswerInverse(std::shared_ptr<RecordSource> source, const Request& request,
                   AnswerDone<v1::InverseAnswer> done, Solve solve) {
  if (absl::Status invalid = ValidateInverseRequest(request); !invalid.ok()) return done(invalid);
  if (request.target().offload() == v1::OFFLOAD_MODE_UNSPECIFIED) {
    return AnswerInverseWithHost(std::move(source), request, nullptr, std::move(done), solve);
  }
  RecordSource* reader = source.get();
  reader->FindHardware(
      {request.target().offload_host()},
      [source = std::move(source), &request, done = std::move(done),
       solve](absl::StatusOr<SharedRecords<common::v1::Hardware>> found) mutable {
        if (!found.ok()) {
          return done(absl::Status(found.status().code(), absl::StrCat("target.offload_host: ",
                                                                       found.status().message())));
        }
        if (found->size() != 1) {
          return done(absl::NotFoundError(absl::StrCat(
              "target.offload_host: hardware ", request.target().offload_host(), " not found")));
        }
        auto host = std::make_shared<const common::v1::Hardware>(*found->begin());
        AnswerInverseWithHost(std::move(source), request, std::move(host), std::move(done), solve);
      });
}

}  // namespace

void AnswerFindMaxContext(std::shared_ptr<RecordSource> source,
                          const v1::FindMaxContextRequest& request,
                          AnswerDone<v1::InverseAnswer> done) {
  AnswerInverse(std::move(source), request, std::move(done),
                [](const auto&... args) { return MaxContextFor(args...); });
}

void AnswerFindMaxBatch(std::shared_ptr<RecordSource> source,
                        const v1::FindMaxBatchRequest& request,
                        AnswerDone<v1::InverseAnswer> done) {
  AnswerInverse(std::move(source), request, std::move(done),
                [](const auto&... args) { return MaxBatchFor(args...); });
}

void AnswerFindBestWeightFormat(std::shared_ptr<RecordSource> source,
                                const v1::FindBestWeightFormatRequest& request,
                                AnswerDone<v1::InverseAnswer> done) {
  AnswerInverse(std::move(source), request, std::move(done),
                [](const auto&... args) { return BestWeightFormatFor(args...); });
}

}  // namespace modelatlas::estimator
