// The inference answers: EstimateInferenceMemory and PlanInference. One file
// of about 830 lines because both size the model the same way (SizeForModel,
// the model sources, the draft and LoRA extras, kept private here); the
// plan's own parts live apart: core/offload.cc, answers/runtime.cc and
// answers/newer_models.cc.

#include "estimator-service/answers/inference.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/formats/hf_config.h"
#include "common/records/lookup_keys.h"
#include "common/status/errors.h"
#include "common/status/resource_names.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/model_sources.h"
#include "estimator-service/answers/newer_models.h"
#include "estimator-service/answers/plan_wire.h"
#include "estimator-service/answers/records.h"
#include "estimator-service/answers/runtime.h"
#include "estimator-service/core/fit_matrix.h"
#include "estimator-service/core/inference_memory.h"
#include "estimator-service/core/parameters.h"
#include "estimator-service/core/plan.h"
#include "estimator-service/core/runtime_fit.h"
#include "estimator-service/core/units.h"
#include "estimator-service/reply_arena.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace modelatlas::estimator {
namespace {

constexpr char kNoEstimateClosedWeights[] = "no estimate: weights not published";

// Adds the violations of `status` (an INVALID_ARGUMENT) under `prefix`;
// false when `status` is another error.
bool AddViolations(const absl::Status& status, absl::string_view prefix,
                   FieldViolations* violations) {
  if (status.ok()) return true;
  const std::vector<FieldViolation> found = GetFieldViolations(status);
  if (found.empty()) return false;
  for (const FieldViolation& v : found)
    violations->Add(absl::StrCat(prefix, v.field), v.description);
  return true;
}

void ValidateModelSource(bool has_model, absl::string_view model, bool has_inline,
                         const v1::InlineModel& inline_model, FieldViolations* violations) {
  if (has_model) {
    if (model.empty()) violations->Add("model", "must name a catalog model");
  } else if (has_inline) {
    if (inline_model.has_parameters() &&
        (!std::isfinite(inline_model.parameters()) || inline_model.parameters() <= 0)) {
      violations->Add("inline_model.parameters", "must be a positive finite number");
    }
    if (!inline_model.has_parameters() && !inline_model.has_architecture() &&
        inline_model.hf_config_json().empty()) {
      violations->Add("inline_model", "needs parameters, an architecture or hf_config_json");
    }
  } else {
    violations->Add("model_source", "give model (a catalog name), inline_model or source");
  }
}

// The workload's violations added to `violations`, the request's status
// returned; when none, the workload resolved into `resolved`.
absl::Status ValidateWorkloadInto(const v1::InferenceWorkload& asked, FieldViolations* violations,
                                  ResolvedWorkload* resolved) {
  absl::StatusOr<ResolvedWorkload> workload = ResolveWorkload(asked);
  if (!AddViolations(workload.status(), "workload.", violations)) return workload.status();
  if (workload.ok()) *resolved = *workload;
  return violations->ToStatus();
}

// The request's violations; when none, its workload resolved into `resolved`.
absl::Status ValidateMemoryRequest(const v1::EstimateInferenceMemoryRequest& request,
                                   ResolvedWorkload* resolved) {
  FieldViolations violations;
  if (!request.has_source()) {
    ValidateModelSource(request.has_model(), request.model(), request.has_inline_model(),
                        request.inline_model(), &violations);
  }
  return ValidateWorkloadInto(request.workload(), &violations, resolved);
}

// What a plan may offload to: the host record's memory and bandwidth, the
// model's shape split by layer and expert; FAILED_PRECONDITION (naming
// offload_host or offload) when a record lacks what offload needs.
absl::StatusOr<OffloadRequest> OffloadRequestFor(const v1::PlanInferenceRequest& request,
                                                 const common::v1::Model& model,
                                                 const InferenceSizing& sizing,
                                                 const common::v1::Hardware& host) {
  if (absl::Status unusable = CheckDeviceFigures(host); !unusable.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("offload_host: ", unusable.message()));
  }
  if (!(host.memory_bytes() > 0) || !(host.memory_bandwidth_bytes_per_second() > 0)) {
    return absl::FailedPreconditionError(
        absl::StrCat("offload_host: hardware record ", host.name(), " (", host.display_name(),
                     ") has no ", host.memory_bytes() > 0 ? "memory bandwidth" : "memory size",
                     " on record; offload needs both"));
  }
  std::optional<OffloadShape> shape;
  if (model.has_architecture()) {
    shape = OffloadShapeOf(sizing, ToCoreArchitecture(model.architecture()));
  }
  if (!shape.has_value()) {
    return absl::FailedPreconditionError(
        "offload: the model's layers are not known (no decoder architecture on record): offload "
        "splits it by layer");
  }
  OffloadRequest out;
  switch (request.offload()) {
    case v1::OFFLOAD_MODE_LAYERS:
      out.kind = OffloadKind::kLayers;
      break;
    case v1::OFFLOAD_MODE_EXPERTS:
      out.kind = OffloadKind::kExperts;
      if (shape->moe_layers == 0) {
        return InvalidFieldError("offload",
                                 "experts needs a mixture-of-experts model with its expert shape "
                                 "on record; use layers (or auto)");
      }
      break;
    default:
      out.kind = OffloadKind::kAuto;
  }
  out.shape = *std::move(shape);
  const AllocatableMemory allocatable = AllocatableMemoryOfRecord(host);
  out.host = {.name = host.name(),
              .display_name = host.display_name(),
              .memory_bytes = host.memory_bytes(),
              .allocatable_bytes = allocatable.allocatable_bytes,
              .allocatable_source = allocatable.source,
              .bandwidth_bytes_per_second = host.memory_bandwidth_bytes_per_second(),
              .pcie_generation = host.has_pcie_generation() ? host.pcie_generation() : 0};
  out.host.bandwidth_source = host.provenance().source().empty()
                                  ? absl::StrCat("the record ", host.name())
                                  : absl::StrCat(host.name(), ": ", host.provenance().source(),
                                                 host.provenance().urls_size() > 0
                                                     ? absl::StrCat(", ", host.provenance().urls(0))
                                                     : std::string());
  return out;
}

// Where a model came from, for the answer, written into `out` (empty).
void SourceOf(const common::v1::Model& model, const SourcedModel* sourced, std::string* out) {
  if (sourced != nullptr && !sourced->source.empty()) {
    out->assign(sourced->source);
  } else if (!model.name().empty()) {
    out->append("catalog record ");
    out->append(model.name());
  } else {
    out->assign("inline model");
  }
}

// What the memory answer and the plan share besides the response: when
// there is an estimate, its numbers; the workload it assumed.
struct SizedFigures {
  std::optional<InferenceSizing> sizing;
  ResolvedWorkload workload;
};

// What the memory answer and the plan share: the response (lines, echo)
// and, when there is an estimate, its numbers.
struct Sized {
  v1::EstimateInferenceMemoryResponse response;
  std::optional<InferenceSizing> sizing;
  ResolvedWorkload workload;
};

// The weights line and the sizing with the file's own bytes.
void UseExactWeights(const ExactWeights& exact, InferenceMemoryEstimate* estimate) {
  for (EstimateLine& line : estimate->lines) {
    if (line.component != "weights") continue;
    const int64_t bytes = static_cast<int64_t>(exact.bytes);
    estimate->total_bytes += bytes - line.bytes;
    line.bytes = bytes;
    line.arithmetic = ExactWeightsArithmetic(exact);
  }
  estimate->sizing.weight_bytes = static_cast<double>(exact.bytes);
}

// Adds `line` after the line named `after` (at the end when absent).
void AddLineAfter(const char* after, EstimateLine line, InferenceMemoryEstimate* estimate) {
  auto at = estimate->lines.begin();
  for (; at != estimate->lines.end(); ++at) {
    if (at->component == after) break;
  }
  estimate->total_bytes += line.bytes;
  estimate->lines.insert(at == estimate->lines.end() ? at : at + 1, std::move(line));
}

// The encoder and projector lines after the weights, in the model's order:
// a file's exact bytes for the part when it gave them (tensors by name),
// else the count at the weight format's bits; weight-only quantized formats
// (GPTQ, AWQ, bitsandbytes, GGUF) leave these parts in 16 bits (AutoAWQ and
// AutoGPTQ quantize the language model's blocks only; llama.cpp ships the
// encoder as a separate mmproj file, usually F16).
void AddEncoderParts(const std::vector<CountedEncoderPart>& parts, const ResolvedWorkload& workload,
                     const SourcedModel* sourced, InferenceMemoryEstimate* estimate) {
  const char* kept_in_16_bits =
      !IsPlainFormat(workload.weight_format)
          ? " (kept in 16 bits: weight-only quantization leaves encoders alone)"
      : workload.weight_format_from_checkpoint
          ? " (kept in 16 bits: the published checkpoint's quantization covers its language "
            "model; quantization recipes leave encoders in 16 bits)"
          : "";
  const double bits = EncoderPartBitsPerWeight(workload);
  for (auto part = parts.rbegin(); part != parts.rend(); ++part) {
    const ExactWeights* exact = nullptr;
    if (sourced != nullptr) {
      auto it = sourced->part_weights.find(part->kind);
      if (it != sourced->part_weights.end()) exact = &it->second;
    }
    EstimateLine line;
    line.component = part->kind;
    if (exact != nullptr) {
      line.bytes = static_cast<int64_t>(exact->bytes);
      line.arithmetic = ExactWeightsArithmetic(*exact);
    } else {
      line.bytes = EncoderPartWeightBytes(part->parameters, workload);
      line.arithmetic =
          absl::StrCat(part->arithmetic, " parameters x ", absl::StrFormat("%g", bits), " bits / 8",
                       kept_in_16_bits, " = ", line.bytes, " bytes");
    }
    estimate->sizing.weight_bytes += static_cast<double>(line.bytes);
    AddLineAfter("weights", std::move(line), estimate);
  }
}

absl::Status AddExtras(const ServingExtras& extras, const common::v1::Model& model,
                       InferenceMemoryEstimate* estimate) {
  if (extras.lora != nullptr) {
    if (!model.has_architecture()) {
      return WithReason(absl::FailedPreconditionError(
                            absl::StrCat("LoRA adapters are sized from the architecture; model \"",
                                         model.display_name(), "\" has none")),
                        "ARCHITECTURE_UNKNOWN");
    }
    absl::StatusOr<std::pair<double, std::string>> lora =
        LoraParameters(*extras.lora, model.architecture());
    if (!lora.ok()) return lora.status();
    const int adapters = std::max(1, extras.lora->adapters());
    const int64_t bytes = static_cast<int64_t>(std::ceil(lora->first * 2 * adapters));
    AddLineAfter("weights",
                 {"lora_adapters", bytes,
                  absl::StrCat(lora->second, " x 2 bytes (16-bit) x ", adapters,
                               " adapter(s) = ", bytes, " bytes")},
                 estimate);
    estimate->sizing.weight_bytes += static_cast<double>(bytes);
  }
  const char* after = "kv_cache";
  for (const v1::EstimateLine& line : extras.draft_lines) {
    AddLineAfter(after, {line.component(), line.bytes(), line.arithmetic()}, estimate);
    after = "draft_weights";
  }
  estimate->sizing.weight_bytes += extras.draft_weight_bytes;
  estimate->sizing.kv_cache_bytes += extras.draft_kv_cache_bytes;
  return absl::OkStatus();
}

// A GGUF file runs in llama.cpp, which keeps n_ubatch cells more than the
// window in each sliding layer (runtime_fit.h LlamaCppSwaOf): the answer
// sizes the window, as vLLM and transformers keep it, and says what
// llama.cpp adds.
void LlamaCppWindowWarning(const common::v1::Model& model, const InferenceMemoryEstimate& estimate,
                           const ResolvedWorkload& workload, MemoryAnswer* response) {
  const RuntimeModel runtime_model = RuntimeModelOf(model, "");
  const LlamaCppSwa swa =
      LlamaCppSwaOf(runtime_model, estimate.sizing, workload.context_length_tokens,
                    std::max(1, workload.batch_size));
  if (swa.bytes <= 0) return;
  response->AddWarning().assign(absl::StrCat(
      "llama.cpp, which runs GGUF files, keeps ", swa.cells, " cells in each of the ",
      runtime_model.sliding_window_layers, " sliding-window layers, not the window's ",
      swa.window_cells,
      swa.whole ? " (it runs this family without a window)"
                : " (n_swa x sequences + n_ubatch 512, padded to 256; "
                  "src/llama-kv-cache-iswa.cpp)",
      ": ", absl::StrFormat("%.2f", swa.bytes / 1073741824.0),
      " GiB more KV cache than this answer counts; a plan with runtime llama.cpp counts it"));
}

// The memory answer written into `into` (empty: MemoryAnswer::Clear; the
// computed EstimateInferenceMemory replies its wire bytes, the message
// paths convert it, answers/memory_answer.h); its figures returned. On an
// error `into` holds a partial answer.
absl::StatusOr<SizedFigures> SizeForModelAnswer(
    MemoryAnswer* into, const common::v1::Model& model, const v1::InferenceWorkload& asked,
    bool hypothetical, const SourcedModel* sourced, const ServingExtras* extras,
    const absl::Status* architecture_check, const ResolvedWorkload* asked_resolved = nullptr,
    bool split_figures = true, const PreparedRecord* prepared = nullptr) {
  // A snapshot record's check was made once, when it was loaded
  // (RecordSource::UseModel); any other model is checked here.
  if (absl::Status invalid = architecture_check != nullptr
                                 ? *architecture_check
                                 : ValidateModelArchitecture(model, "architecture");
      !invalid.ok()) {
    return invalid;
  }
  // Resolved once per request: the validation's, when the caller has it.
  absl::StatusOr<ResolvedWorkload> resolved =
      asked_resolved != nullptr ? absl::StatusOr<ResolvedWorkload>(*asked_resolved)
                                : ResolveWorkload(asked);
  if (!resolved.ok()) return PrefixFieldViolations(resolved.status(), "workload.");
  // A snapshot record's architecture was converted once, when it was
  // loaded (CatalogSnapshot::UsePreparedModel); any other model's is here.
  // Read in place, copied once into the sizing's input (below).
  std::optional<Architecture> converted;
  if (prepared == nullptr && model.has_architecture()) {
    converted = ToCoreArchitecture(model.architecture());
  }
  const std::optional<Architecture>& architecture =
      prepared != nullptr ? prepared->architecture : converted;

  SizedFigures sized;
  sized.workload = WorkloadForModel(*resolved, architecture);
  sized.workload.weights_from_file = sourced != nullptr && sourced->weights.has_value();
  MemoryAnswer& response = *into;
  response.model.assign(model.name());
  response.display_name.assign(model.display_name());
  response.catalog_revision = model.revision();
  SourceOf(model, sourced, &response.source);
  if (sourced != nullptr) response.source_revision.assign(sourced->revision);
  response.has_workload = true;
  response.workload = sized.workload;
  WorkloadStatementInto(sized.workload, &response.statement);

  const std::optional<bool> published = WeightsPublished(model);
  if (published.has_value() && !*published) {
    if (!hypothetical) {
      response.available = false;
      response.no_estimate_reason.assign(kNoEstimateClosedWeights);
      return sized;
    }
    response.hypothetical = true;
    response.AddWarning().assign(
        "hypothetical: the weights of this model are not published; this is what it would take "
        "if they were");
  } else if (!published.has_value()) {
    response.AddWarning().assign("whether the weights are published is not on record");
  }

  absl::StatusOr<double> parameters =
      ParametersOfModel(model, architecture.has_value() ? &*architecture : nullptr);
  if (!parameters.ok()) return parameters.status();

  // A multimodal model's encoders and projectors get lines of their own;
  // the core sizes the language model.
  std::vector<CountedEncoderPart> parts;
  double parts_parameters = 0;
  if (model.has_architecture() && model.architecture().encoder_parts_size() > 0) {
    absl::StatusOr<std::vector<CountedEncoderPart>> counted =
        CountEncoderParts(model.architecture());
    if (!counted.ok()) return counted.status();
    parts = *std::move(counted);
    for (const CountedEncoderPart& part : parts) parts_parameters += part.parameters;
  }

  InferenceMemoryInput input;
  input.parameters = std::max(0.0, *parameters - parts_parameters);
  if (model.has_active_parameters()) input.active_parameters = model.active_parameters();
  input.architecture = architecture;
  input.workload = sized.workload;
  input.split_figures = split_figures;
  // A snapshot record's weights, kept per format with the record.
  if (prepared != nullptr) input.prepared_weights = prepared->weights.get();
  // Into the answer's own scratch: a pooled answer's texts reuse their
  // buffers (the lines' strings are swapped, below, not copied).
  InferenceMemoryEstimate* estimate = &response.estimate_scratch;
  if (absl::Status estimated =
          EstimateInferenceMemoryInto(input, &response.arithmetic_scratch, estimate);
      !estimated.ok()) {
    return PrefixFieldViolations(estimated, "workload.");
  }
  if (sourced != nullptr && sourced->weights.has_value()) {
    UseExactWeights(*sourced->weights, &*estimate);
    // BF16 is the default (and what the CLI sends unless told otherwise).
    if (asked.weight_format() != v1::NUMBER_FORMAT_UNSPECIFIED &&
        asked.weight_format() != v1::NUMBER_FORMAT_BF16) {
      response.AddWarning().assign(
          "the weights are sized from the file's own tensor types; the requested weight format "
          "is not applied to them");
    }
  }

  if (sourced != nullptr && sourced->from_gguf) {
    LlamaCppWindowWarning(model, *estimate, sized.workload, &response);
  }

  if (!parts.empty() && sourced != nullptr && sourced->encoders_in_weights) {
    for (EstimateLine& line : estimate->lines) {
      if (line.component == "weights") {
        line.arithmetic +=
            " (the encoders and projector included: the file's tensors do not "
            "name their modules as transformers does)";
      }
    }
  } else if (!parts.empty()) {
    AddEncoderParts(parts, sized.workload, sourced, &*estimate);
  }

  if (extras != nullptr) {
    if (absl::Status bad = AddExtras(*extras, model, &*estimate); !bad.ok()) return bad;
  }

  response.available = true;
  response.parameters = *parameters;
  // The estimate is not used after this: its lines swap into the answer's
  // (whose old buffers go back to the scratch, to be written next time).
  for (EstimateLine& line : estimate->lines) {
    EstimateLine& out = response.AddLine();
    out.component.assign(line.component);  // a short name: no buffer to keep
    out.bytes = line.bytes;
    out.arithmetic.swap(line.arithmetic);
  }
  for (std::string& warning : estimate->warnings) response.AddWarning().swap(warning);
  response.total_bytes = estimate->total_bytes;
  response.total_gib = BytesToGiB(static_cast<double>(estimate->total_bytes));
  response.total_gb = BytesToGB(static_cast<double>(estimate->total_bytes));
  sized.sizing = estimate->sizing;
  return sized;
}

// The memory answer as a message, written into `into` (empty; on the heap
// or an arena); its figures returned. On an error `into` is left empty.
absl::StatusOr<SizedFigures> SizeForModelInto(v1::EstimateInferenceMemoryResponse* into,
                                              const common::v1::Model& model,
                                              const v1::InferenceWorkload& asked, bool hypothetical,
                                              const SourcedModel* sourced,
                                              const ServingExtras* extras,
                                              const absl::Status* architecture_check) {
  MemoryAnswer answer;
  absl::StatusOr<SizedFigures> sized =
      SizeForModelAnswer(&answer, model, asked, hypothetical, sourced, extras, architecture_check);
  if (sized.ok()) ToProto(answer, into);
  return sized;
}

absl::StatusOr<Sized> SizeForModel(const common::v1::Model& model,
                                   const v1::InferenceWorkload& asked, bool hypothetical,
                                   const SourcedModel* sourced,
                                   const ServingExtras* extras = nullptr,
                                   const absl::Status* architecture_check = nullptr) {
  Sized sized;
  absl::StatusOr<SizedFigures> figures = SizeForModelInto(
      &sized.response, model, asked, hypothetical, sourced, extras, architecture_check);
  if (!figures.ok()) return figures.status();
  sized.sizing = std::move(figures->sizing);
  sized.workload = figures->workload;
  return sized;
}

// The model a request names or describes.
absl::StatusOr<RecordsWanted> ModelWanted(bool has_inline, const v1::InlineModel& inline_model,
                                          const std::string& name) {
  RecordsWanted wanted;
  if (has_inline) {
    absl::StatusOr<common::v1::Model> model = ModelFromInline(inline_model);
    if (!model.ok()) return model.status();
    wanted.given_model = *std::move(model);
  } else {
    wanted.model = name;
  }
  return wanted;
}

}  // namespace

void WithSourcedModel(std::shared_ptr<RecordSource> source, const v1::ModelSource& model_source,
                      RecordsWanted wanted,
                      std::function<void(absl::StatusOr<Records>, const SourcedModel&)> done,
                      const std::string& field) {
  ResolveModelSource(
      model_source, field,
      [source = std::move(source), wanted = std::move(wanted),
       done = std::move(done)](absl::StatusOr<SourcedModel> sourced) mutable {
        if (!sourced.ok()) return done(sourced.status(), SourcedModel{});
        auto kept = std::make_shared<SourcedModel>(*std::move(sourced));
        if (kept->model.has_value()) {
          wanted.given_model = kept->model;
        } else {
          wanted.model = kept->catalog_name;
        }
        ReadRecords(std::move(source), std::move(wanted),
                    [kept, done = std::move(done)](absl::StatusOr<Records> records) {
                      if (records.ok() && kept->source.empty() && records->model.has_value()) {
                        kept->source = absl::StrCat("catalog record ", records->model->name());
                      }
                      done(std::move(records), *kept);
                    });
      });
}

absl::StatusOr<common::v1::Model> ModelFromInline(const v1::InlineModel& inline_model) {
  common::v1::Model model;
  if (!inline_model.hf_config_json().empty()) {
    absl::StatusOr<common::v1::Architecture> arch =
        ArchitectureFromHfConfig(inline_model.hf_config_json());
    if (!arch.ok()) return PrefixFieldViolations(arch.status(), "inline_model.");
    *model.mutable_architecture() = *arch;
  }
  if (inline_model.has_parameters()) model.set_parameters(inline_model.parameters());
  if (inline_model.has_architecture()) *model.mutable_architecture() = inline_model.architecture();
  if (absl::Status invalid =
          ValidateArchitecture(model.architecture(), "inline_model.architecture");
      !invalid.ok()) {
    return invalid;
  }
  model.set_display_name(inline_model.display_name().empty() ? "inline model"
                                                             : inline_model.display_name());
  // A model described by the caller is one the caller can run.
  model.set_open_model_weights(true);
  return model;
}

absl::StatusOr<v1::EstimateInferenceMemoryResponse> EstimateMemoryForModel(
    const common::v1::Model& model, const v1::EstimateInferenceMemoryRequest& request,
    const SourcedModel* sourced, const ServingExtras* extras,
    const absl::Status* architecture_check) {
  v1::EstimateInferenceMemoryResponse response;
  if (absl::Status estimated = EstimateMemoryForModelInto(&response, model, request, sourced,
                                                          extras, architecture_check);
      !estimated.ok()) {
    return estimated;
  }
  return response;
}

absl::Status EstimateMemoryForModelInto(v1::EstimateInferenceMemoryResponse* response,
                                        const common::v1::Model& model,
                                        const v1::EstimateInferenceMemoryRequest& request,
                                        const SourcedModel* sourced, const ServingExtras* extras,
                                        const absl::Status* architecture_check) {
  return SizeForModelInto(response, model, request.workload(), request.hypothetical(), sourced,
                          extras, architecture_check)
      .status();
}

absl::Status EstimateMemoryForModelInto(MemoryAnswer* answer, const common::v1::Model& model,
                                        const v1::EstimateInferenceMemoryRequest& request,
                                        const SourcedModel* sourced, const ServingExtras* extras,
                                        const absl::Status* architecture_check,
                                        const ResolvedWorkload* resolved) {
  // Only the answer is wanted, not the sizing's split figures (a plan's).
  return SizeForModelAnswer(answer, model, request.workload(), request.hypothetical(), sourced,
                            extras, architecture_check, resolved, /*split_figures=*/false)
      .status();
}

std::optional<absl::Status> AnswerInferenceMemoryFromSnapshot(
    const CatalogSnapshot& snapshot, const v1::EstimateInferenceMemoryRequest& request,
    MemoryAnswer* answer, CatalogSnapshot::Sync* read) {
  // Only a catalog model by name with nothing served beside it is answered
  // from its record alone; anything else may fetch or read the catalog.
  if (request.has_lora() || request.has_draft_model()) return std::nullopt;
  if (request.has_model()) {
    return AnswerCatalogMemoryFromSnapshot(snapshot, CatalogModelField::kModel, request.model(),
                                           request.workload(), request.hypothetical(), answer,
                                           read);
  }
  if (request.has_source() && request.source().has_catalog_name()) {
    return AnswerCatalogMemoryFromSnapshot(snapshot, CatalogModelField::kSourceCatalogName,
                                           request.source().catalog_name(), request.workload(),
                                           request.hypothetical(), answer, read);
  }
  return std::nullopt;
}

std::optional<absl::Status> AnswerCatalogMemoryFromSnapshot(const CatalogSnapshot& snapshot,
                                                            CatalogModelField field,
                                                            absl::string_view name,
                                                            const v1::InferenceWorkload& workload,
                                                            bool hypothetical, MemoryAnswer* answer,
                                                            CatalogSnapshot::Sync* read) {
  // As AnswerInferenceMemoryFigures: the request's checks come first, the
  // same for every source (ValidateMemoryRequest's, in its order: the
  // model field, then the workload).
  answer->Clear();
  FieldViolations violations;
  if (field == CatalogModelField::kModel) {
    ValidateModelSource(/*has_model=*/true, name, false, v1::InlineModel::default_instance(),
                        &violations);
  }
  ResolvedWorkload resolved;
  if (absl::Status invalid = ValidateWorkloadInto(workload, &violations, &resolved);
      !invalid.ok()) {
    return invalid;
  }
  absl::Status estimate;
  const bool found = snapshot.UsePreparedModel(name, [&](const CatalogSnapshot::UsedModel& used) {
    estimate = SizeForModelAnswer(answer, used.model, workload, hypothetical, nullptr, nullptr,
                                  &used.prepared.architecture_check, &resolved,
                                  /*split_figures=*/false, &used.prepared)
                   .status();
    if (estimate.ok()) answer->catalog_revision = used.sync.revision;
    *read = used.sync;
  });
  // Not in the snapshot (or not loaded): the catalog is asked, elsewhere.
  if (!found) return std::nullopt;
  return estimate;
}

namespace {

// The answer of a record prepared with its answer's own fields
// (PreparedRecord::answer_head) written from its parts into `reserve`'s
// memory: what SizeForModelAnswer sets for such a record (no encoder
// parts, weights published: no warning of its own, not hypothetical), with
// no MemoryAnswer filled. False when the sizing fails (nothing reserved):
// the caller answers through SizeForModelAnswer, which gives the error.
bool WriteAnswerFromParts(const CatalogSnapshot::UsedModel& used, const ResolvedWorkload& resolved,
                          MemoryAnswer* scratch, ReserveReplyBytes reserve) {
  const PreparedRecord& prepared = used.prepared;
  const ResolvedWorkload sized = WorkloadForModel(resolved, prepared.architecture);
  InferenceMemoryInput input;
  input.parameters = std::max(0.0, prepared.parameters);
  input.active_parameters = prepared.active_parameters;
  input.architecture = prepared.architecture;
  input.workload = sized;
  input.split_figures = false;
  input.prepared_weights = prepared.weights.get();
  InferenceMemoryEstimate& estimate = scratch->estimate_scratch;
  if (!EstimateInferenceMemoryInto(input, &scratch->arithmetic_scratch, &estimate).ok()) {
    return false;
  }
  const MemoryAnswerParts parts{.head = prepared.answer_head,
                                .lines = &estimate.lines,
                                .total_bytes = estimate.total_bytes,
                                .warnings = &estimate.warnings,
                                .catalog_revision = used.sync.revision,
                                .workload = EncodedWorkloadField(sized),
                                .source = prepared.answer_source};
  const MemoryAnswerPartsBytes bytes(parts);
  bytes.Write(reserve(bytes.size(), used.sync));
  return true;
}

// ResolveWorkload(asked) (answers/conversions.h) when it is OK and
// `asked`'s formats are known: its figures in bounds (WorkloadInBounds),
// resolved with no violations' bookkeeping. False otherwise: the caller
// validates it in full, which names what is wrong.
bool ResolveWorkloadInBounds(const v1::InferenceWorkload& asked, ResolvedWorkload* out) {
  WorkloadRequest request = WorkloadFiguresOf(asked);
  for (const auto& [format, into] : {std::pair<v1::NumberFormat, std::optional<NumberFormat>*>{
                                         asked.weight_format(), &request.weight_format},
                                     {asked.kv_cache_format(), &request.kv_cache_format}}) {
    if (format == v1::NUMBER_FORMAT_UNSPECIFIED) continue;
    absl::StatusOr<NumberFormat> core = ToCoreNumberFormat(format, NumberFormat::kBf16, "");
    if (!core.ok()) return false;
    *into = *core;
  }
  if (!WorkloadInBounds(request)) return false;
  *out = WorkloadWithDefaults(request);
  return true;
}

}  // namespace

std::optional<absl::Status> WriteCatalogMemoryFromSnapshot(const CatalogSnapshot& snapshot,
                                                           absl::string_view name,
                                                           const v1::InferenceWorkload& workload,
                                                           bool hypothetical, MemoryAnswer* scratch,
                                                           ReserveReplyBytes reserve) {
  // AnswerCatalogMemoryFromSnapshot's checks, in its order, made in full
  // only when a check fails (nearly no request).
  ResolvedWorkload resolved;
  if (name.empty() || !ResolveWorkloadInBounds(workload, &resolved)) {
    FieldViolations violations;
    ValidateModelSource(/*has_model=*/true, name, false, v1::InlineModel::default_instance(),
                        &violations);
    if (absl::Status invalid = ValidateWorkloadInto(workload, &violations, &resolved);
        !invalid.ok()) {
      return invalid;
    }
  }
  absl::Status estimate;
  const bool found = snapshot.UsePreparedModel(name, [&](const CatalogSnapshot::UsedModel& used) {
    if (!used.prepared.answer_head.empty() &&
        WriteAnswerFromParts(used, resolved, scratch, reserve)) {
      return;
    }
    // Only this way fills the answer (the parts' way uses its scratch).
    scratch->Clear();
    estimate = SizeForModelAnswer(scratch, used.model, workload, hypothetical, nullptr, nullptr,
                                  &used.prepared.architecture_check, &resolved,
                                  /*split_figures=*/false, &used.prepared)
                   .status();
    if (!estimate.ok()) return;
    scratch->catalog_revision = used.sync.revision;
    const MemoryAnswerBytes bytes(*scratch);
    bytes.Write(reserve(bytes.size(), used.sync));
  });
  if (!found) return std::nullopt;
  return estimate;
}

namespace {

using Extras = std::shared_ptr<ServingExtras>;

// Sizes the draft model (any source) with the workload, into `extras`, then
// `next` (with the first error).
void SizeDraft(std::shared_ptr<RecordSource> source, const v1::ModelSource& draft,
               const v1::InferenceWorkload& workload, Extras extras,
               std::function<void(absl::Status)> next) {
  WithSourcedModel(
      std::move(source), draft, RecordsWanted{},
      [&workload, extras, next = std::move(next)](absl::StatusOr<Records> records,
                                                  const SourcedModel& sourced) {
        if (!records.ok()) return next(records.status());
        const common::v1::Model& model = *records->model;
        absl::StatusOr<Sized> sized =
            SizeForModel(model, workload, /*hypothetical=*/true, &sourced);
        if (!sized.ok()) return next(PrefixFieldViolations(sized.status(), "draft_model."));
        for (const v1::EstimateLine& line : sized->response.lines()) {
          if (line.component() != "weights" && line.component() != "kv_cache") continue;
          v1::EstimateLine out = line;
          out.set_component(absl::StrCat("draft_", line.component()));
          out.set_arithmetic(absl::StrCat("draft model ", model.display_name(), " (",
                                          sized->response.source(), "): ", line.arithmetic()));
          extras->draft_lines.push_back(out);
        }
        if (sized->sizing.has_value()) {
          extras->draft_weight_bytes = sized->sizing->weight_bytes;
          extras->draft_kv_cache_bytes = sized->sizing->kv_cache_bytes;
        }
        next(absl::OkStatus());
      },
      "draft_model.");
}

// The memory answer into `response` (empty), which must outlive `done`;
// `extras` may be null (nothing served beside the model).
// `resolved`: the request's workload resolved, or null (read only on the
// synchronous path, before this returns).
void AnswerMemoryWith(std::shared_ptr<RecordSource> source,
                      const v1::EstimateInferenceMemoryRequest& request, Extras extras,
                      MemoryAnswer* response, StatusDone done,
                      const ResolvedWorkload* resolved = nullptr) {
  const bool by_catalog_name = request.has_source() && request.source().has_catalog_name();
  if (request.has_model() || by_catalog_name) {
    // The hot path: a catalogued model estimated in place (copying the
    // record cost more than the estimate), straight into the response.
    absl::Status estimate;
    const std::string& name = by_catalog_name ? request.source().catalog_name() : request.model();
    const bool found = source->UseModel(name, [&](const common::v1::Model& model, int64_t revision,
                                                  const absl::Status& architecture_check) {
      estimate = EstimateMemoryForModelInto(response, model, request, nullptr, extras.get(),
                                            &architecture_check, resolved);
      if (estimate.ok()) response->catalog_revision = revision;
    });
    if (found) return done(estimate);
  }
  if (request.has_source()) {
    return WithSourcedModel(std::move(source), request.source(), RecordsWanted{},
                            [&request, extras, response, done = std::move(done)](
                                absl::StatusOr<Records> records, const SourcedModel& sourced) {
                              if (!records.ok()) return done(records.status());
                              done(EstimateMemoryForModelInto(response, *records->model, request,
                                                              &sourced, extras.get()));
                            });
  }
  absl::StatusOr<RecordsWanted> wanted =
      ModelWanted(request.has_inline_model(), request.inline_model(), request.model());
  if (!wanted.ok()) return done(wanted.status());
  ReadRecords(
      std::move(source), *std::move(wanted),
      [&request, extras, response, done = std::move(done)](absl::StatusOr<Records> records) {
        if (!records.ok()) return done(records.status());
        done(EstimateMemoryForModelInto(response, *records->model, request, nullptr, extras.get()));
      });
}

// The plan into `plan`, then (when asked) the newer models of the same size
// on its reference card, read from `reader`'s catalog.
absl::Status PlanWithNewerModels(const RecordSource& reader, const common::v1::Model& model,
                                 const SharedRecords<common::v1::Hardware>& hardware,
                                 const v1::PlanInferenceRequest& request,
                                 const SourcedModel* sourced, const ServingExtras* extras,
                                 const common::v1::Hardware* offload_host,
                                 v1::PlanInferenceResponse* plan, PlanWireCards* wire) {
  absl::Status planned =
      PlanInferenceInto(plan, wire, model, hardware, request, sourced, extras, offload_host);
  if (!planned.ok() || !request.newer_models() || !plan->memory().available()) return planned;
  absl::StatusOr<ResolvedWorkload> workload = ResolveWorkload(request.workload());
  if (!workload.ok()) return PrefixFieldViolations(workload.status(), "workload.");
  return AddNewerModels(reader, model, hardware, *workload, plan);
}

// Reads the model named by `request` (or the one it describes) and the
// hardware, then plans.
void AnswerPlanReadingModel(std::shared_ptr<RecordSource> source,
                            const v1::PlanInferenceRequest& request, Extras extras,
                            std::shared_ptr<const common::v1::Hardware> host,
                            v1::PlanInferenceResponse* response, PlanWireCards* wire,
                            StatusDone done) {
  const common::v1::Hardware* offload_host = host.get();
  std::shared_ptr<RecordSource> reader = source;
  if (request.has_source()) {
    RecordsWanted hardware;
    hardware.hardware.assign(request.hardware().begin(), request.hardware().end());
    hardware.all_hardware = true;
    return WithSourcedModel(
        std::move(source), request.source(), std::move(hardware),
        [&request, extras, reader, host, offload_host, response, wire, done = std::move(done)](
            absl::StatusOr<Records> records, const SourcedModel& sourced) {
          if (!records.ok()) return done(records.status());
          done(PlanWithNewerModels(*reader, *records->model, records->hardware, request, &sourced,
                                   extras.get(), offload_host, response, wire));
        });
  }
  absl::StatusOr<RecordsWanted> wanted =
      ModelWanted(request.has_inline_model(), request.inline_model(), request.model());
  if (!wanted.ok()) return done(wanted.status());
  wanted->hardware.assign(request.hardware().begin(), request.hardware().end());
  wanted->all_hardware = true;
  ReadRecords(std::move(source), *std::move(wanted),
              [&request, extras, reader, host, offload_host, response, wire,
               done = std::move(done)](absl::StatusOr<Records> records) {
                if (!records.ok()) return done(records.status());
                done(PlanWithNewerModels(*reader, *records->model, records->hardware, request,
                                         nullptr, extras.get(), offload_host, response, wire));
              });
}

void AnswerPlanWithHost(std::shared_ptr<RecordSource> source,
                        const v1::PlanInferenceRequest& request, Extras extras,
                        std::shared_ptr<const common::v1::Hardware> host,
                        v1::PlanInferenceResponse* response, PlanWireCards* wire, StatusDone done) {
  // A catalogued model by name is planned on the source's own record
  // (RecordSource::UseModel, the snapshot's), not on a copy: copying the
  // record and freeing it was 3% of a plan over every accelerator under perf
  // (docs/BENCHMARKS.md, session 26). The plan runs under the snapshot's
  // reader lock (shared with every other reader; an update of the snapshot
  // waits the plan's 0.2-0.3 ms). The hardware is read first, outside that
  // lock; newer models read the source again and are planned on a copy.
  // A source that does not lend the record has the model read (FindModel)
  // and planned with the hardware already read; when the hardware cannot be
  // read, both are read as ever, so the model's error comes first. Nothing
  // is written before.
  if (request.has_source() || request.has_inline_model() || request.model().empty() ||
      request.newer_models()) {
    return AnswerPlanReadingModel(std::move(source), request, std::move(extras), std::move(host),
                                  response, wire, std::move(done));
  }
  RecordsWanted hardware;
  hardware.hardware.assign(request.hardware().begin(), request.hardware().end());
  hardware.all_hardware = true;
  RecordSource* reader = source.get();
  ReadRecords(source, std::move(hardware),
              [source, &request, extras = std::move(extras), host = std::move(host), response, wire,
               reader, done = std::move(done)](absl::StatusOr<Records> records) mutable {
                if (!records.ok()) {
                  return AnswerPlanReadingModel(std::move(source), request, std::move(extras),
                                                std::move(host), response, wire, std::move(done));
                }
                absl::Status planned;
                const bool lent = reader->UseModel(
                    request.model(), [&](const common::v1::Model& model, int64_t revision,
                                         const absl::Status& architecture_check) {
                      planned =
                          PlanInferenceInto(response, wire, model, records->hardware, request,
                                            nullptr, extras.get(), host.get(), &architecture_check);
                      // FindModel's copy carries the revision the answer used.
                      if (response->has_memory()) {
                        response->mutable_memory()->set_catalog_revision(revision);
                      }
                    });
                if (lent) return done(planned);
                RecordsWanted model;
                model.model = request.model();
                ReadRecords(std::move(source), std::move(model),
                            [&request, extras = std::move(extras), host = std::move(host), response,
                             wire, hardware = std::move(records->hardware),
                             done = std::move(done)](absl::StatusOr<Records> read) {
                              if (!read.ok()) return done(read.status());
                              done(PlanInferenceInto(response, wire, *read->model, hardware,
                                                     request, nullptr, extras.get(), host.get()));
                            });
              });
}

// Reads the offload host first when the request names one (NOT_FOUND naming
// it), then plans.
void AnswerPlanWith(std::shared_ptr<RecordSource> source, const v1::PlanInferenceRequest& request,
                    Extras extras, v1::PlanInferenceResponse* response, PlanWireCards* wire,
                    StatusDone done) {
  if (request.offload() == v1::OFFLOAD_MODE_UNSPECIFIED) {
    return AnswerPlanWithHost(std::move(source), request, std::move(extras), nullptr, response,
                              wire, std::move(done));
  }
  RecordSource* reader = source.get();
  reader->FindHardware(
      {request.offload_host()},
      [source = std::move(source), &request, extras = std::move(extras), response, wire,
       done = std::move(done)](absl::StatusOr<SharedRecords<common::v1::Hardware>> found) mutable {
        if (!found.ok()) {
          return done(absl::Status(found.status().code(),
                                   absl::StrCat("offload_host: ", found.status().message())));
        }
        if (found->size() != 1) {
          return done(absl::NotFoundError(
              absl::StrCat("offload_host: hardware ", request.offload_host(), " not found")));
        }
        auto host = std::make_shared<const common::v1::Hardware>(*found->begin());
        AnswerPlanWithHost(std::move(source), request, std::move(extras), std::move(host), response,
                           wire, std::move(done));
      });
}

// What a request serves next to its model (a LoRA adapter, a draft model
// sized with the same workload), then `next(source, extras, done)`; a draft
// that cannot be sized ends the call with its error.
template <typename Request, typename Done, typename Next>
void WithServingExtras(std::shared_ptr<RecordSource> source, const Request& request, Done done,
                       Next next) {
  auto extras = std::make_shared<ServingExtras>();
  if (request.has_lora()) extras->lora = &request.lora();
  if (!request.has_draft_model()) {
    return next(std::move(source), std::move(extras), std::move(done));
  }
  std::shared_ptr<RecordSource> reader = source;
  SizeDraft(std::move(reader), request.draft_model(), request.workload(), extras,
            [source = std::move(source), extras, done = std::move(done),
             next = std::move(next)](absl::Status drafted) mutable {
              if (!drafted.ok()) return done(drafted);
              next(std::move(source), extras, std::move(done));
            });
}

}  // namespace

double EncoderPartBitsPerWeight(const ResolvedWorkload& workload) {
  return IsPlainFormat(workload.weight_format) && !workload.weight_format_from_checkpoint
             ? BitsPerElement(workload.weight_format)
             : 16;
}

int64_t EncoderPartWeightBytes(double parameters, const ResolvedWorkload& workload) {
  return static_cast<int64_t>(std::ceil(parameters * EncoderPartBitsPerWeight(workload) / 8));
}

void AnswerInferenceMemory(std::shared_ptr<RecordSource> source,
                           const v1::EstimateInferenceMemoryRequest& request,
                           AnswerDone<v1::EstimateInferenceMemoryResponse> done) {
  auto answer = std::make_shared<MemoryAnswer>();
  MemoryAnswer* into = answer.get();
  AnswerInferenceMemoryFigures(
      std::move(source), request, into,
      [answer = std::move(answer), done = std::move(done)](const absl::Status& status) {
        if (!status.ok()) return done(status);
        v1::EstimateInferenceMemoryResponse response;
        ToProto(*answer, &response);
        done(std::move(response));
      });
}

void AnswerInferenceMemoryInto(std::shared_ptr<RecordSource> source,
                               const v1::EstimateInferenceMemoryRequest& request,
                               v1::EstimateInferenceMemoryResponse* response, StatusDone done) {
  auto answer = std::make_shared<MemoryAnswer>();
  MemoryAnswer* into = answer.get();
  AnswerInferenceMemoryFigures(
      std::move(source), request, into,
      [answer = std::move(answer), response, done = std::move(done)](const absl::Status& status) {
        if (status.ok()) ToProto(*answer, response);
        done(status);
      });
}

void AnswerInferenceMemoryFigures(std::shared_ptr<RecordSource> source,
                                  const v1::EstimateInferenceMemoryRequest& request,
                                  MemoryAnswer* response, StatusDone done) {
  response->Clear();
  ResolvedWorkload resolved;
  if (absl::Status invalid = ValidateMemoryRequest(request, &resolved); !invalid.ok()) {
    return done(invalid);
  }
  if (!request.has_lora() && !request.has_draft_model()) {
    // Nothing served beside the model: no extras to size or to keep.
    return AnswerMemoryWith(std::move(source), request, nullptr, response, std::move(done),
                            &resolved);
  }
  WithServingExtras(std::move(source), request, std::move(done),
                    [&request, response](auto reader, auto extras, auto answered) {
                      AnswerMemoryWith(std::move(reader), request, std::move(extras), response,
                                       std::move(answered));
                    });
}

// Cards of one llama.cpp layer split (PlanInferenceRequest.split_cards).
constexpr int kMaxSplitCards = 16;

// The record of `hardware` that split_cards[index] names: by resource name,
// bare id, or lookup key (display name, aliases, shared aliases). A name that
// fits several records ("RTX 3060": the 8 GB and the 12 GB card) is told
// apart by its exact spelling, or asked back: a split over a card the user
// did not mean would say "fits" for the wrong memory.
absl::StatusOr<const common::v1::Hardware*> SplitCardNamed(
    const SharedRecords<common::v1::Hardware>& hardware, const v1::PlanInferenceRequest& request,
    int index) {
  const std::string field = absl::StrCat("split_cards[", index, "]");
  const std::string name(absl::StripAsciiWhitespace(request.split_cards(index)));
  const std::string key = LookupKey(name);
  const std::string as_resource = absl::StrCat("hardware/", name);
  std::vector<const common::v1::Hardware*> by_key;
  std::vector<const common::v1::Hardware*> exact;
  for (const common::v1::Hardware& hw : hardware) {
    if (hw.name() == name || hw.name() == as_resource) return &hw;
    const std::vector<std::string> keys = LookupKeysOf(hw);
    if (key.empty() || std::find(keys.begin(), keys.end(), key) == keys.end()) continue;
    by_key.push_back(&hw);
    const bool spelled =
        hw.display_name() == name ||
        std::find(hw.aliases().begin(), hw.aliases().end(), name) != hw.aliases().end();
    if (spelled) exact.push_back(&hw);
  }
  if (by_key.size() == 1) return by_key.front();
  if (exact.size() == 1) return exact.front();
  if (by_key.empty()) {
    return WithReason(absl::NotFoundError(absl::StrCat(
                          field, ": no hardware record \"", name, "\" among those planned",
                          request.hardware_size() > 0 ? " (name it in hardware too)" : "")),
                      "HARDWARE_NOT_FOUND");
  }
  std::vector<std::string> names;
  for (const common::v1::Hardware* hw : by_key) names.push_back(hw->name());
  return WithReason(absl::FailedPreconditionError(
                        absl::StrCat(field, ": \"", name, "\" matches several records: ",
                                     absl::StrJoin(names, ", "), "; name one of them")),
                    "AMBIGUOUS_NAME");
}

// The layer split over the request's split_cards, each found among
// `hardware` (SplitCardNamed).
absl::Status AddLayerSplit(const SharedRecords<common::v1::Hardware>& hardware,
                           const v1::PlanInferenceRequest& request, const PlanInput& input,
                           v1::PlanInferenceResponse* response) {
  std::vector<DeviceSpec> cards;
  for (int i = 0; i < request.split_cards_size(); ++i) {
    const std::string field = absl::StrCat("split_cards[", i, "]");
    absl::StatusOr<const common::v1::Hardware*> named = SplitCardNamed(hardware, request, i);
    if (!named.ok()) return named.status();
    const common::v1::Hardware* found = *named;
    if (absl::Status unusable = CheckDeviceFigures(*found); !unusable.ok()) {
      return InvalidFieldError(field, unusable.message());
    }
    cards.push_back(DeviceOf(*found, input.workload.weight_format));
  }
  const LayerSplitPlan split = PlanLayerSplit(input, cards);
  v1::LayerSplitPlan* out = response->mutable_layer_split();
  out->set_fits(split.fits);
  out->set_reason(split.reason);
  for (const SplitCard& card : split.cards) {
    v1::LayerSplitCard* c = out->add_cards();
    c->set_hardware(card.name);
    c->set_display_name(card.display_name);
    c->set_tensor_split_share(card.proportion);
    c->set_layers(card.layers);
    c->set_output_layer(card.output_layer);
    c->set_weight_bytes(static_cast<int64_t>(std::ceil(card.weight_bytes)));
    c->set_kv_cache_bytes(static_cast<int64_t>(std::ceil(card.kv_cache_bytes)));
    c->set_required_bytes(static_cast<int64_t>(std::ceil(card.required_bytes)));
    c->set_usable_bytes(static_cast<int64_t>(std::floor(card.usable_bytes)));
    if (card.decode_seconds.has_value()) c->set_decode_seconds(*card.decode_seconds);
    c->set_decode_bound_doubtful(card.decode_bound_doubtful);
  }
  if (split.decode_tokens_per_second.has_value()) {
    out->set_decode_tokens_per_second(*split.decode_tokens_per_second);
  }
  if (split.decode_tokens_per_second_all.has_value()) {
    out->set_decode_tokens_per_second_batch(*split.decode_tokens_per_second_all);
  }
  out->set_launch_command(split.launch_command);
  for (const std::string& line : split.arithmetic) out->add_arithmetic(line);
  return absl::OkStatus();
}

absl::Status ValidatePlanRequest(const v1::PlanInferenceRequest& request) {
  FieldViolations violations;
  if (absl::StatusOr<PlanObjective> objective = ToCorePlanObjective(request.objective(), "");
      !objective.ok()) {
    violations.Add("objective", absl::StrCat("has no value ", request.objective()));
  }
  const int cards = request.max_cards();
  if (cards < 0 || cards > 1024) {
    violations.Add("max_cards",
                   absl::StrCat("must be between 1 and 1024 cards (0 = 64), got ", cards));
  }
  if (request.hardware_size() > 1000) {
    violations.Add("hardware", absl::StrCat("at most 1000 names, got ", request.hardware_size()));
  }
  if (request.split_cards_size() > kMaxSplitCards) {
    violations.Add("split_cards", absl::StrCat("at most ", kMaxSplitCards, " cards, got ",
                                               request.split_cards_size()));
  }
  for (int i = 0; i < request.split_cards_size() && i < kMaxSplitCards; ++i) {
    if (absl::StripAsciiWhitespace(request.split_cards(i)).empty()) {
      violations.Add(absl::StrCat("split_cards[", i, "]"), "must name a hardware record");
    }
  }
  if (!v1::OffloadMode_IsValid(request.offload())) {
    violations.Add("offload", absl::StrCat("has no value ", request.offload()));
  } else if (request.offload() != v1::OFFLOAD_MODE_UNSPECIFIED && request.offload_host().empty()) {
    violations.Add("offload_host",
                   "is required with offload (no host is assumed): a host record, e.g. "
                   "hardware/host-2x-amd-epyc-9004-ddr5-4800");
  } else if (request.offload() == v1::OFFLOAD_MODE_UNSPECIFIED && !request.offload_host().empty()) {
    violations.Add("offload", "must be set (auto, layers or experts) to use offload_host");
  }
  if (request.has_price_usd_per_card_hour() && !(std::isfinite(request.price_usd_per_card_hour()) &&
                                                 request.price_usd_per_card_hour() > 0)) {
    violations.Add("price_usd_per_card_hour",
                   absl::StrCat("must be a positive number of USD per card-hour, got ",
                                request.price_usd_per_card_hour()));
  }
  if (absl::StatusOr<Runtime> runtime = ToCoreRuntime(request.runtime(), "runtime");
      !runtime.ok()) {
    violations.Add("runtime", absl::StrCat("has no value ", request.runtime(),
                                           " (vllm, sglang or llama.cpp; unspecified = none)"));
  }
  if (!request.has_source()) {
    ValidateModelSource(request.has_model(), request.model(), request.has_inline_model(),
                        request.inline_model(), &violations);
  }
  absl::StatusOr<ResolvedWorkload> workload = ResolveWorkload(request.workload());
  if (!AddViolations(workload.status(), "workload.", &violations)) return workload.status();
  return violations.ToStatus();
}

absl::StatusOr<v1::PlanInferenceResponse> PlanInferenceFor(
    const common::v1::Model& model, const SharedRecords<common::v1::Hardware>& hardware,
    const v1::PlanInferenceRequest& request, const SourcedModel* sourced,
    const ServingExtras* extras, const common::v1::Hardware* offload_host) {
  v1::PlanInferenceResponse response;
  if (absl::Status planned =
          PlanInferenceInto(&response, model, hardware, request, sourced, extras, offload_host);
      !planned.ok()) {
    return planned;
  }
  return response;
}

absl::Status PlanInferenceInto(v1::PlanInferenceResponse* response, const common::v1::Model& model,
                               const SharedRecords<common::v1::Hardware>& hardware,
                               const v1::PlanInferenceRequest& request, const SourcedModel* sourced,
                               const ServingExtras* extras,
                               const common::v1::Hardware* offload_host) {
  return PlanInferenceInto(response, nullptr, model, hardware, request, sourced, extras,
                           offload_host);
}

absl::Status PlanInferenceInto(v1::PlanInferenceResponse* response, PlanWireCards* wire,
                               const common::v1::Model& model,
                               const SharedRecords<common::v1::Hardware>& hardware,
                               const v1::PlanInferenceRequest& request, const SourcedModel* sourced,
                               const ServingExtras* extras,
                               const common::v1::Hardware* offload_host,
                               const absl::Status* architecture_check) {
  // The cards for the wire point at the plans until the reply is serialized:
  // only the plans pooled on the reply's arena live that long.
  if (wire != nullptr && response->GetArena() == nullptr) {
    return absl::InternalError("plan cards for the wire need a reply on an arena");
  }
  // The memory answer written where the reply holds it (on the reply's
  // arena): sized on the heap and moved in, it was copied field by field
  // (about 20,000 instructions and 40 allocations a plan, docs/BENCHMARKS.md,
  // session 24).
  absl::StatusOr<SizedFigures> sized =
      SizeForModelInto(response->mutable_memory(), model, request.workload(),
                       request.hypothetical(), sourced, extras, architecture_check);
  if (!sized.ok()) {
    response->clear_memory();
    return sized.status();
  }
  // "no estimate: weights not published"
  if (!sized->sizing.has_value()) return absl::OkStatus();

  PlanInput input;
  input.sizing = *sized->sizing;
  input.workload = sized->workload;
  if (request.max_cards() > 0) input.max_cards = request.max_cards();
  // The cards: written into the reply below (the message path), or left to
  // the caller's hand serializer (PlanWireReply: the service's reply, with
  // no HardwarePlan message and no copy of the plans' text), which copies
  // each plan's lines as they were written (PlanInput::lines_as_wire).
  // With newer models the cards are messages: AddNewerModels picks its
  // reference card from the reply's plans (ReferenceCard); *wire is then
  // left without cards and the reply serializes as a whole.
  const bool to_wire = wire != nullptr && !request.newer_models();
  input.lines_as_wire = to_wire;
  input.names_by_caller = to_wire;
  // Written once: every device's text shows the same sizing.
  const SizingFigures figures = FiguresOf(input);
  input.figures = &figures;
  // The fewest cards, searched once per node size for the records that
  // need several.
  FewestCardsSearches layouts(input.sizing, input.max_cards);
  input.layouts = &layouts;
  // One-card plans on records that share a figure share lines.
  input.shared_lines_generation = NewPlanGeneration();
  absl::StatusOr<Runtime> runtime = ToCoreRuntime(request.runtime(), "runtime");
  if (!runtime.ok()) return runtime.status();
  // What the runtime's rules read of the model, once for every device.
  std::optional<RuntimeModel> runtime_model;
  std::map<std::string, RuntimeFit> runtime_fits;  // hardware name -> the plan under the runtime
  // hardware name -> the device planned on and its manufacturer
  std::map<std::string, std::pair<DeviceSpec, std::string>> runtime_devices;
  if (*runtime != Runtime::kNone) {
    runtime_model = RuntimeModelOf(model, request.has_source() && request.source().has_hf_repo()
                                              ? request.source().hf_repo().id()
                                              : std::string());
    // A GGUF file asked about by name is the one llama.cpp's command loads.
    if (request.has_source() && request.source().has_gguf_header()) {
      runtime_model->gguf_file = request.source().gguf_header().file_name();
    }
  }
  std::optional<OffloadRequest> offload;
  if (offload_host != nullptr && request.offload() != v1::OFFLOAD_MODE_UNSPECIFIED) {
    absl::StatusOr<OffloadRequest> wanted =
        OffloadRequestFor(request, model, input.sizing, *offload_host);
    if (!wanted.ok()) return wanted.status();
    offload = *std::move(wanted);
    input.offload = &*offload;
  }
  // Each record's checks and conversion, made once per list (the snapshot's:
  // once per state of the hardware).
  const std::shared_ptr<const std::vector<PreparedDevice>> prepared = PreparedDevicesOf(hardware);
  // plans[i] is the plan on hardware[i] (a record that cannot be planned on
  // has one saying why), so the records' own figures are found by position:
  // nothing is copied or hashed per plan.
  //
  // On an arena (the service's reply) the plans are kept from one reply to
  // the next (PooledOnArena): each is written over the plan a previous reply
  // made on the same position, reusing its strings' storage, and the reply
  // points at its lines instead of taking them (UnsafeArenaAddAllocated), so
  // a plan over every accelerator allocates and frees no line (about 1,200
  // of its 1,550 strings; docs/BENCHMARKS.md, branch s11-plan). On the heap
  // the plans are this call's and their lines move into the reply.
  google::protobuf::Arena* const arena = response->GetArena();
  std::vector<DevicePlan> own_plans;
  std::vector<DevicePlan>& plans =
      arena != nullptr ? *PooledOnArena<std::vector<DevicePlan>>(arena) : own_plans;
  // Never shrunk below the largest list seen: the plans past this list's end
  // keep their storage for the next.
  if (plans.size() < hardware.size()) plans.resize(hardware.size());
  // hardware[i] -> USD per card-hour used (the request's, else the record's).
  std::vector<std::optional<double>> prices(hardware.size());
  // One spec for every record that needs its own (another format or the
  // request's price): assigning the next record's reuses its strings.
  DeviceSpec scratch_device;
  const std::optional<double> request_price =
      request.has_price_usd_per_card_hour()
          ? std::optional<double>(request.price_usd_per_card_hour())
          : std::nullopt;
  for (size_t index = 0; index < hardware.size(); ++index) {
    const common::v1::Hardware& hw = hardware[index];
    if (index % kRecordsPerAbandonCheck == 0) {
      if (absl::Status abandoned = CallAbandoned(absl::StrCat(
              "planning on every accelerator (", index, " of ", hardware.size(), " planned)"));
          !abandoned.ok()) {
        return abandoned;
      }
    }
    const PreparedDevice& record = (*prepared)[index];
    if (const absl::Status& unusable = record.figures; !unusable.ok()) {
      // Listed, not planned: its figures would make every number a guess.
      DevicePlan skipped{.name = hw.name(), .display_name = hw.display_name()};
      skipped.reason = std::string(unusable.message());
      plans[index] = std::move(skipped);
      continue;
    }
    // The request's price, when given, replaces every record's.
    const DeviceSpec& device =
        DeviceForPlan(record, hw, input.workload.weight_format, request_price, &scratch_device);
    PlanOnDeviceInto(input, device, &record.usable, &plans[index]);
    if (input.names_by_caller) {
      // The prepared record's own strings (its name and display name are
      // the record's): the reply holds the prepared list (cards.prepared)
      // until it is written.
      plans[index].record_name = &record.device.name;
      plans[index].record_display_name = &record.device.display_name;
    }
    if (runtime_model.has_value() && plans[index].fits) {
      runtime_devices[hw.name()] = {device, hw.manufacturer()};
    }
    prices[index] = device.price_usd_per_hour;
    response->set_catalog_revision(std::max(response->catalog_revision(), hw.revision()));
  }
  absl::StatusOr<PlanObjective> objective = ToCorePlanObjective(request.objective(), "objective");
  if (!objective.ok()) return objective.status();
  // Positions into plans, best first: the plans are read in this order and
  // never moved.
  std::vector<int> name_ranks(hardware.size());
  for (size_t i = 0; i < name_ranks.size(); ++i) name_ranks[i] = (*prepared)[i].name_rank;
  std::vector<int> order = RankOrder(*objective, hardware.size(), plans, name_ranks);
  if (request.split_cards_size() > 0) {
    if (absl::Status split = AddLayerSplit(hardware, request, input, response); !split.ok()) {
      return split;
    }
  }
  // The runtime's fit for the best fitting plans only: its text is several
  // times a plan's, and a plan over every accelerator has hundreds.
  if (runtime_model.has_value()) {
    for (int i : order) {
      const DevicePlan& plan = plans[i];
      if (!plan.fits || runtime_fits.size() >= kMaxRuntimeFits) break;
      auto planned = runtime_devices.find(NameOf(plan));
      if (planned == runtime_devices.end()) continue;
      runtime_fits[NameOf(plan)] =
          FitRuntime(*runtime, *runtime_model, input.sizing, input.workload, planned->second.first,
                     plan, planned->second.second);
    }
  }
  PlanWireCards own_cards;
  PlanWireCards& cards = to_wire ? *wire : own_cards;
  cards.plans = &plans;
  cards.order = std::move(order);
  cards.prices = std::move(prices);
  cards.price_source =
      request.has_price_usd_per_card_hour() ? v1::PRICE_SOURCE_REQUEST : v1::PRICE_SOURCE_RECORD;
  cards.prepared = prepared;
  cards.runtime_fits = std::move(runtime_fits);
  cards.offload = std::move(offload);
  if (to_wire) return absl::OkStatus();
  // The plans are not used after this: their text moves into the reply.
  response->mutable_plans()->Reserve(static_cast<int>(plans.size()));
  for (int index : cards.order) CardToMessage(cards, index, arena, response->add_plans());
  return absl::OkStatus();
}

void AnswerPlanInference(std::shared_ptr<RecordSource> source,
                         const v1::PlanInferenceRequest& request,
                         AnswerDone<v1::PlanInferenceResponse> done) {
  auto response = std::make_shared<v1::PlanInferenceResponse>();
  v1::PlanInferenceResponse* into = response.get();
  AnswerPlanInferenceInto(
      std::move(source), request, into,
      [response = std::move(response), done = std::move(done)](const absl::Status& planned) {
        if (!planned.ok()) return done(planned);
        done(std::move(*response));
      });
}

void AnswerPlanInferenceInto(std::shared_ptr<RecordSource> source,
                             const v1::PlanInferenceRequest& request,
                             v1::PlanInferenceResponse* response, StatusDone done) {
  AnswerPlanInferenceInto(std::move(source), request, response, nullptr, std::move(done));
}

void AnswerPlanInferenceInto(std::shared_ptr<RecordSource> source,
                             const v1::PlanInferenceRequest& request,
                             v1::PlanInferenceResponse* response, PlanWireCards* wire,
                             StatusDone done) {
  if (absl::Status invalid = ValidatePlanRequest(request); !invalid.ok()) return done(invalid);
  WithServingExtras(std::move(source), request, std::move(done),
                    [&request, response, wire](auto reader, auto extras, auto answered) {
                      AnswerPlanWith(std::move(reader), request, std::move(extras), response, wire,
                                     std::move(answered));
                    });
}

}  // namespace modelatlas::estimator
