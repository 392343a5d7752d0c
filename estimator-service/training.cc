#include "estimator-service/training.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/query/filter.h"
#include "common/status/errors.h"
#include "estimator-service/conversions.h"
#include "estimator-service/core/parameters.h"
#include "estimator-service/core/training_memory.h"
#include "estimator-service/core/units.h"

namespace modelatlas::estimator {
namespace {

using common::v1::Hardware;
using common::v1::Model;

constexpr double kDefaultTolerance = 0.1;
constexpr int kDefaultLoraRank = 16;
constexpr int kDefaultMaxDevices = 4096;

bool IsLanguageModel(const Model& model) {
  if (model.domains().empty()) return true;
  for (const std::string& domain : model.domains()) {
    if (absl::EqualsIgnoreCase(domain, "Language")) return true;
  }
  return false;
}

// The chip's peak at a training precision ("fp32", "bf16", ... or a record's
// "FP16"), FLOP/s, and a description of which figure it is.
std::optional<std::pair<double, std::string>> TrainingPeak(const Hardware& hardware,
                                                           std::string precision) {
  precision = absl::AsciiStrToLower(precision);
  const auto& peak = hardware.peak();
  struct Candidate {
    bool has;
    double value;
    const char* what;
  };
  const Candidate tensor16{peak.has_tensor_fp16_bf16_flops(), peak.tensor_fp16_bf16_flops(),
                           "FP16/BF16 tensor"};
  const Candidate fp16{peak.has_fp16_flops(), peak.fp16_flops(), "FP16"};
  const Candidate fp32{peak.has_fp32_flops(), peak.fp32_flops(), "FP32"};
  const Candidate tf32{peak.has_tf32_flops(), peak.tf32_flops(), "TF32 tensor"};
  const Candidate fp8{peak.has_fp8_flops(), peak.fp8_flops(), "FP8 tensor"};
  const Candidate int8{peak.has_int8_ops(), peak.int8_ops(), "INT8"};
  std::vector<Candidate> order;
  if (precision == "fp32") {
    order = {fp32};
  } else if (precision == "tf32") {
    order = {tf32, fp32};
  } else if (precision == "fp8") {
    order = {fp8, tensor16, fp16};
  } else if (precision == "int8") {
    order = {int8};
  } else {  // fp16, bf16, or not on record
    order = {tensor16, fp16, fp32};
  }
  for (const Candidate& c : order) {
    if (c.has && c.value > 0) {
      return std::make_pair(c.value, absl::StrCat(hardware.display_name(), ", ", c.what, " peak"));
    }
  }
  return std::nullopt;
}

bool KnownPrecision(const std::string& precision) {
  const std::string p = absl::AsciiStrToLower(precision);
  return p.empty() || p == "fp32" || p == "tf32" || p == "fp16" || p == "bf16" || p == "fp8" ||
         p == "int8";
}

TransformerShape ShapeOf(const common::v1::Architecture& arch) {
  TransformerShape shape;
  shape.layers = arch.num_layers();
  shape.hidden_size = arch.hidden_size();
  shape.attention_heads = arch.num_attention_heads();
  shape.kv_heads = arch.num_key_value_heads();
  shape.head_dim = arch.head_dim();
  shape.intermediate_size = arch.intermediate_size();
  shape.vocab_size = arch.vocab_size();
  shape.gated_mlp = arch.gated_mlp();
  return shape;
}

void ToLines(const std::vector<MemoryLine>& lines,
             google::protobuf::RepeatedPtrField<v1::MemoryLine>* out) {
  for (const MemoryLine& line : lines) {
    v1::MemoryLine* proto = out->Add();
    proto->set_component(line.component);
    proto->set_bytes(static_cast<int64_t>(std::ceil(line.bytes)));
    proto->set_arithmetic(line.arithmetic);
  }
}

// The settings with every default filled in.
v1::TrainingSettings WithDefaults(v1::TrainingSettings settings) {
  if (settings.optimizer() == v1::OPTIMIZER_UNSPECIFIED)
    settings.set_optimizer(v1::OPTIMIZER_ADAMW);
  if (settings.recompute() == v1::RECOMPUTE_UNSPECIFIED) settings.set_recompute(v1::RECOMPUTE_NONE);
  if (settings.fine_tuning() == v1::FINE_TUNING_UNSPECIFIED) {
    settings.set_fine_tuning(v1::FINE_TUNING_FULL);
  }
  if (settings.data_parallel() == 0) settings.set_data_parallel(1);
  if (settings.tensor_parallel() == 0) settings.set_tensor_parallel(1);
  if (settings.pipeline_parallel() == 0) settings.set_pipeline_parallel(1);
  if (settings.expert_parallel() == 0) settings.set_expert_parallel(1);
  if (settings.sequence_length() == 0) settings.set_sequence_length(2048);
  if (settings.micro_batch() == 0) settings.set_micro_batch(1);
  if (settings.fine_tuning() != v1::FINE_TUNING_FULL) {
    if (settings.lora_rank() == 0) settings.set_lora_rank(kDefaultLoraRank);
    if (settings.lora_target_modules().empty()) {
      for (const char* module : {"q", "k", "v", "o"}) settings.add_lora_target_modules(module);
    }
  }
  if (!settings.has_overhead_bytes()) {
    settings.set_overhead_bytes(static_cast<int64_t>(kBytesPerGiB));
  }
  return settings;
}

absl::StatusOr<TrainingMemoryInput> MemoryInputFor(const Model& model,
                                                   const v1::TrainingSettings& settings) {
  if (absl::Status invalid = ValidateArchitecture(model.architecture(), "model.architecture");
      !invalid.ok()) {
    return invalid;
  }
  TrainingMemoryInput input;
  absl::StatusOr<double> parameters = ParametersOfModel(model);
  if (!parameters.ok()) return parameters.status();
  input.parameters = *parameters;
  if (model.has_architecture()) {
    input.shape = ShapeOf(model.architecture());
    const Architecture arch = ToCoreArchitecture(model.architecture());
    if (arch.IsMoe() && arch.num_experts > arch.num_experts_per_token) {
      absl::StatusOr<ParameterCount> count = CountParameterTotals(arch);
      if (count.ok()) {
        // total - active = experts x (1 - k/E).
        const double share =
            1.0 - static_cast<double>(arch.num_experts_per_token) / arch.num_experts;
        input.expert_parameters =
            std::min(input.parameters, (count->total - count->active) / share);
      }
    }
  }
  switch (settings.optimizer()) {
    case v1::OPTIMIZER_SGD_MOMENTUM:
      input.optimizer = Optimizer::kSgdMomentum;
      break;
    case v1::OPTIMIZER_ADAFACTOR:
      input.optimizer = Optimizer::kAdafactor;
      break;
    case v1::OPTIMIZER_ADAMW_8BIT:
      input.optimizer = Optimizer::kAdamW8Bit;
      break;
    case v1::OPTIMIZER_ADAMW:
      input.optimizer = Optimizer::kAdamW;
      break;
    default:
      return InvalidFieldError("settings.optimizer",
                               absl::StrCat("unknown optimizer ", settings.optimizer()));
  }
  switch (settings.recompute()) {
    case v1::RECOMPUTE_NONE:
      input.recompute = Recompute::kNone;
      break;
    case v1::RECOMPUTE_SELECTIVE:
      input.recompute = Recompute::kSelective;
      break;
    case v1::RECOMPUTE_FULL:
      input.recompute = Recompute::kFull;
      break;
    default:
      return InvalidFieldError("settings.recompute",
                               absl::StrCat("unknown recompute mode ", settings.recompute()));
  }
  switch (settings.fine_tuning()) {
    case v1::FINE_TUNING_FULL:
      input.fine_tuning = FineTuning::kFull;
      break;
    case v1::FINE_TUNING_LORA:
      input.fine_tuning = FineTuning::kLora;
      break;
    case v1::FINE_TUNING_QLORA:
      input.fine_tuning = FineTuning::kQlora;
      break;
    default:
      return InvalidFieldError("settings.fine_tuning",
                               absl::StrCat("unknown fine-tuning mode ", settings.fine_tuning()));
  }
  input.fp32_gradients = settings.fp32_gradients();
  input.zero_stage = settings.zero_stage();
  input.data_parallel = settings.data_parallel();
  input.tensor_parallel = settings.tensor_parallel();
  input.pipeline_parallel = settings.pipeline_parallel();
  input.expert_parallel = settings.expert_parallel();
  input.sequence_parallel = settings.sequence_parallel();
  input.sequence_length = settings.sequence_length();
  input.micro_batch = settings.micro_batch();
  input.offload_optimizer = settings.offload_optimizer();
  input.offload_parameters = settings.offload_parameters();
  input.overhead_bytes = static_cast<double>(settings.overhead_bytes());
  if (input.fine_tuning != FineTuning::kFull) {
    input.lora_rank = settings.lora_rank();
    std::vector<std::string> modules(settings.lora_target_modules().begin(),
                                     settings.lora_target_modules().end());
    absl::StatusOr<Figure> adapters = LoraParameters(input.shape, input.lora_rank, modules);
    if (!adapters.ok()) return PrefixFieldViolations(adapters.status(), "settings.");
    input.lora_parameters = adapters->value;
  }
  return input;
}

}  // namespace

absl::StatusOr<TrainingRunInputs> TrainingInputsFor(const Model* model, const Hardware* hardware,
                                                    const v1::TrainingRunInputs& request) {
  if (!KnownPrecision(request.precision())) {
    return InvalidFieldError("inputs.precision",
                             absl::StrCat("\"", request.precision(),
                                          "\" is not one of fp32, tf32, fp16, bf16, fp8, int8"));
  }
  TrainingRunInputs in;
  std::string precision = request.precision();
  if (model != nullptr) {
    absl::StatusOr<double> parameters = ParametersOfModel(*model);
    if (parameters.ok()) in.parameters = *parameters;
    in.language_model = IsLanguageModel(*model);
    // Epoch's dataset sizes are tokens for language models; for images or
    // games 6ND does not apply.
    if (in.language_model && !model->training_dataset_size_datapoints().empty()) {
      in.dataset_tokens = model->training_dataset_size_datapoints(0);
    }
    if (model->has_epochs()) in.epochs = model->epochs();
    if (model->has_hardware_quantity()) in.chips = model->hardware_quantity();
    if (model->has_training_time_hours()) in.training_hours = model->training_time_hours();
    if (model->has_training_chip_hours()) in.chip_hours = model->training_chip_hours();
    if (model->has_hardware_utilization_mfu()) in.utilization = model->hardware_utilization_mfu();
    if (model->has_publication_date() && model->publication_date().year() > 0) {
      const auto& date = model->publication_date();
      in.fractional_year =
          FractionalYear(date.year(), std::max(1, date.month()), std::max(1, date.day()));
    }
    if (precision.empty() && !model->numerical_formats().empty() &&
        KnownPrecision(model->numerical_formats(0))) {
      precision = model->numerical_formats(0);
    }
    if (request.has_attention_context_tokens() && model->has_architecture()) {
      in.attention_layers = model->architecture().num_layers();
      in.attention_width = static_cast<double>(model->architecture().hidden_size());
    }
  }
  if (hardware != nullptr) {
    if (auto peak = TrainingPeak(*hardware, precision)) {
      in.peak_flops_per_chip = peak->first;
      in.peak_source = peak->second;
    }
    if (hardware->has_tdp_watts()) in.tdp_watts = hardware->tdp_watts();
    if (hardware->has_cloud_price_usd_per_chip_hour()) {
      in.price_usd_per_chip_hour = hardware->cloud_price_usd_per_chip_hour();
    }
  }
  // The request's inputs replace the record's.
  auto take = [](bool has, double value, std::optional<double>* field) {
    if (has) *field = value;
  };
  take(request.has_parameters(), request.parameters(), &in.parameters);
  take(request.has_steps(), request.steps(), &in.steps);
  take(request.has_tokens_per_step(), request.tokens_per_step(), &in.tokens_per_step);
  take(request.has_dataset_tokens(), request.dataset_tokens(), &in.dataset_tokens);
  take(request.has_dataset_bytes(), request.dataset_bytes(), &in.dataset_bytes);
  take(request.has_dataset_words(), request.dataset_words(), &in.dataset_words);
  take(request.has_epochs(), request.epochs(), &in.epochs);
  take(request.has_chips(), request.chips(), &in.chips);
  take(request.has_training_hours(), request.training_hours(), &in.training_hours);
  take(request.has_chip_hours(), request.chip_hours(), &in.chip_hours);
  take(request.has_utilization(), request.utilization(), &in.utilization);
  take(request.has_tdp_watts(), request.tdp_watts(), &in.tdp_watts);
  take(request.has_year(), request.year(), &in.fractional_year);
  take(request.has_price_usd_per_chip_hour(), request.price_usd_per_chip_hour(),
       &in.price_usd_per_chip_hour);
  if (request.has_peak_flops_per_chip()) {
    in.peak_flops_per_chip = request.peak_flops_per_chip();
    in.peak_source = "given";
  }
  if (request.has_language_model()) in.language_model = request.language_model();
  if (request.has_attention_context_tokens()) {
    in.attention_context = static_cast<double>(request.attention_context_tokens());
    if (!in.attention_layers) {
      return InvalidFieldError("inputs.attention_context_tokens",
                               "the attention term needs a catalog model with an architecture");
    }
  }
  // A record's dataset given in bytes or words by the request replaces its tokens.
  if (request.has_dataset_bytes() || request.has_dataset_words()) {
    if (!request.has_dataset_tokens()) in.dataset_tokens.reset();
  }
  return in;
}

absl::StatusOr<v1::EstimateTrainingComputeResponse> EstimateTrainingComputeFor(
    const Model* model, const Hardware* hardware,
    const v1::EstimateTrainingComputeRequest& request) {
  absl::StatusOr<TrainingRunInputs> inputs = TrainingInputsFor(model, hardware, request.inputs());
  if (!inputs.ok()) return inputs.status();
  absl::StatusOr<TrainingRunFigures> run = ComputeTrainingRun(*inputs);
  if (!run.ok()) return PrefixFieldViolations(run.status(), "inputs.");
  v1::EstimateTrainingComputeResponse response;
  if (model != nullptr) {
    response.set_model(model->name());
    response.set_display_name(model->display_name());
  }
  for (const NamedFigure& figure : run->figures) {
    v1::ComputedFigure* out = response.add_figures();
    out->set_name(figure.name);
    out->set_value(figure.value);
    out->set_unit(figure.unit);
    out->set_arithmetic(figure.arithmetic);
  }
  auto set = [](const std::optional<double>& value, auto setter) {
    if (value) setter(*value);
  };
  set(run->training_compute_flop, [&](double v) { response.set_training_compute_flop(v); });
  set(run->operation_counting_flop, [&](double v) { response.set_operation_counting_flop(v); });
  set(run->hardware_method_flop, [&](double v) { response.set_hardware_method_flop(v); });
  set(run->chip_hours, [&](double v) { response.set_chip_hours(v); });
  set(run->power_draw_watts, [&](double v) { response.set_power_draw_watts(v); });
  set(run->energy_kwh, [&](double v) { response.set_energy_kwh(v); });
  set(run->cost_usd, [&](double v) { response.set_cost_usd(v); });
  set(run->tokens, [&](double v) { response.set_tokens(v); });
  response.set_method(run->method);
  for (const std::string& warning : run->warnings) response.add_warnings(warning);
  if (hardware == nullptr && model != nullptr && !model->training_hardware().empty()) {
    response.add_warnings(absl::StrCat("training hardware \"", model->training_hardware(0),
                                       "\" is not in the catalog: no peak, TDP or price"));
  }
  return response;
}

absl::StatusOr<v1::EstimateTrainingMemoryResponse> EstimateTrainingMemoryFor(
    const Model& model, const v1::TrainingSettings& requested) {
  const v1::TrainingSettings settings = WithDefaults(requested);
  absl::StatusOr<TrainingMemoryInput> input = MemoryInputFor(model, settings);
  if (!input.ok()) return input.status();
  absl::StatusOr<TrainingMemory> memory = EstimateTrainingMemory(*input);
  if (!memory.ok()) return PrefixFieldViolations(memory.status(), "settings.");
  v1::EstimateTrainingMemoryResponse response;
  response.set_model(model.name());
  response.set_display_name(model.display_name());
  response.set_parameters(input->parameters);
  ToLines(memory->device_lines, response.mutable_device_lines());
  ToLines(memory->host_lines, response.mutable_host_lines());
  int64_t device = 0, host = 0;
  for (const auto& line : response.device_lines()) device += line.bytes();
  for (const auto& line : response.host_lines()) host += line.bytes();
  response.set_device_total_bytes(device);
  response.set_device_total_gib(BytesToGiB(static_cast<double>(device)));
  response.set_host_total_bytes(host);
  for (const std::string& note : memory->notes) response.add_notes(note);
  *response.mutable_settings() = settings;
  return response;
}

absl::StatusOr<v1::PlanTrainingResponse> PlanTrainingFor(const Model& model,
                                                         const Hardware& hardware,
                                                         const v1::PlanTrainingRequest& request) {
  if (!hardware.has_memory_bytes() || hardware.memory_bytes() <= 0) {
    return WithReason(
        absl::FailedPreconditionError(absl::StrCat("hardware \"", hardware.display_name(),
                                                   "\" has no memory size on record")),
        "HARDWARE_MEMORY_UNKNOWN");
  }
  const int max_devices = request.max_devices() == 0 ? kDefaultMaxDevices : request.max_devices();
  if (max_devices < 1 || max_devices > 1 << 20) {
    return InvalidFieldError(
        "max_devices", absl::StrCat("must be between 1 and 1048576, got ", request.max_devices()));
  }
  v1::TrainingSettings base = WithDefaults(request.settings());
  // Fail fast on settings that no parallel layout can fix.
  absl::StatusOr<v1::EstimateTrainingMemoryResponse> single =
      EstimateTrainingMemoryFor(model, base);
  if (!single.ok()) return single.status();

  const double memory = hardware.memory_bytes();
  const int64_t layers = model.architecture().num_layers();
  const int64_t heads = model.architecture().num_attention_heads();
  v1::PlanTrainingResponse response;
  response.set_model(model.name());
  response.set_display_name(model.display_name());
  response.set_hardware(hardware.name());
  response.set_device_memory_bytes(static_cast<int64_t>(memory));
  // Fewest devices first; at one device count, the least intrusive setup:
  // no offload, then less recomputation, a lower ZeRO stage, less tensor
  // and pipeline parallelism.
  const std::vector<v1::Recompute> recomputes = {v1::RECOMPUTE_NONE, v1::RECOMPUTE_SELECTIVE,
                                                 v1::RECOMPUTE_FULL};
  for (int devices = 1; devices <= max_devices; devices *= 2) {
    for (bool offload : {false, true}) {
      if (offload && !request.allow_offload()) continue;
      for (v1::Recompute recompute : recomputes) {
        for (int zero = 0; zero <= 3; ++zero) {
          for (int tp = 1; tp <= std::min(devices, 8); tp *= 2) {
            if (heads > 0 && heads % tp != 0) continue;
            for (int pp = 1; tp * pp <= devices; pp *= 2) {
              if (layers > 0 && pp > layers) break;
              const int dp = devices / (tp * pp);
              if (zero > 0 && dp == 1) continue;  // nothing to shard over
              v1::TrainingSettings settings = base;
              settings.set_data_parallel(dp);
              settings.set_tensor_parallel(tp);
              settings.set_pipeline_parallel(pp);
              settings.set_zero_stage(zero);
              settings.set_recompute(recompute);
              settings.set_sequence_parallel(tp > 1);
              settings.set_offload_optimizer(offload);
              absl::StatusOr<v1::EstimateTrainingMemoryResponse> estimate =
                  EstimateTrainingMemoryFor(model, settings);
              if (!estimate.ok()) continue;
              if (static_cast<double>(estimate->device_total_bytes()) <= memory) {
                response.set_fits(true);
                response.set_devices(devices);
                *response.mutable_settings() = settings;
                *response.mutable_memory() = *std::move(estimate);
                return response;
              }
            }
          }
        }
      }
    }
  }
  response.set_reason(absl::StrCat("no layout of up to ", max_devices, " devices fits ",
                                   hardware.display_name(), " (", static_cast<int64_t>(memory),
                                   " bytes each): on one device it needs ",
                                   single->device_total_bytes(), " bytes",
                                   request.allow_offload() ? "" : "; allow_offload may help"));
  return response;
}

v1::AuditModelResponse AuditRecord(const Model& model, const HardwareLookup& lookup,
                                   double tolerance) {
  v1::AuditModelResponse response;
  response.set_model(model.name());
  response.set_display_name(model.display_name());
  std::optional<Hardware> hardware;
  for (int i = 0; i < model.training_hardware_size() && !hardware; ++i) {
    const std::string& ref =
        i < model.training_hardware_refs_size() && !model.training_hardware_refs(i).empty()
            ? model.training_hardware_refs(i)
            : model.training_hardware(i);
    hardware = lookup(ref);
  }
  absl::StatusOr<TrainingRunInputs> inputs =
      TrainingInputsFor(&model, hardware ? &*hardware : nullptr, {});
  if (!inputs.ok()) {
    response.add_skipped(std::string(inputs.status().message()));
    return response;
  }
  RecordedFigures recorded;
  if (model.has_training_compute_flop())
    recorded.training_compute_flop = model.training_compute_flop();
  for (int method : model.training_compute_estimation_methods()) {
    recorded.method_operation_counting |=
        method == common::v1::ESTIMATION_METHOD_OPERATION_COUNTING;
    recorded.method_hardware |= method == common::v1::ESTIMATION_METHOD_HARDWARE;
  }
  if (model.has_training_chip_hours()) recorded.chip_hours = model.training_chip_hours();
  if (model.has_training_power_draw_watts()) {
    recorded.power_draw_watts = model.training_power_draw_watts();
  }
  const Audit audit = AuditTrainingRun(*inputs, recorded, tolerance);
  for (const AuditCheck& check : audit.checks) {
    v1::AuditCheck* out = response.add_checks();
    out->set_figure(check.figure);
    out->set_recorded(check.recorded);
    out->set_recomputed(check.recomputed);
    out->set_relative_difference(check.relative_difference);
    out->set_disagrees(check.disagrees);
    out->set_arithmetic(check.arithmetic);
    if (check.disagrees) response.set_disagreements(response.disagreements() + 1);
  }
  for (const std::string& skipped : audit.skipped) response.add_skipped(skipped);
  return response;
}

absl::StatusOr<std::vector<v1::AuditCatalogResponse>> AuditSnapshot(
    const CatalogSnapshot& snapshot, const v1::AuditCatalogRequest& request) {
  if (!std::isfinite(request.tolerance()) || request.tolerance() < 0) {
    return InvalidFieldError("tolerance", "must be a non-negative fraction, or 0 for 0.1");
  }
  const double tolerance = request.tolerance() > 0 ? request.tolerance() : kDefaultTolerance;
  absl::StatusOr<query::Filter> filter =
      query::Filter::Parse(request.filter(), Model::descriptor());
  if (!filter.ok()) return filter.status();
  const HardwareLookup lookup = [&snapshot](const std::string& name) {
    return snapshot.FindHardware(name);
  };
  std::vector<v1::AuditCatalogResponse> out;
  v1::AuditSummary summary;
  struct Tally {
    int64_t on_record = 0, checked = 0, disagreements = 0;
    std::vector<double> differences;
  };
  std::map<std::string, Tally> tallies;
  // Copied out first: hardware lookups take the snapshot's lock, which
  // ForEachModel holds.
  std::vector<Model> models;
  snapshot.ForEachModel([&](const Model& model) {
    if (filter->Matches(model)) models.push_back(model);
  });
  for (const Model& model : models) {
    summary.set_models(summary.models() + 1);
    tallies["training_chip_hours"].on_record += model.has_training_chip_hours();
    tallies["training_compute_flop"].on_record += model.has_training_compute_flop();
    tallies["training_power_draw_watts"].on_record += model.has_training_power_draw_watts();
    v1::AuditModelResponse audit = AuditRecord(model, lookup, tolerance);
    for (const v1::AuditCheck& check : audit.checks()) {
      Tally& tally = tallies[check.figure()];
      ++tally.checked;
      tally.disagreements += check.disagrees();
      tally.differences.push_back(check.relative_difference());
    }
    if (audit.disagreements() > 0) {
      summary.set_models_with_disagreements(summary.models_with_disagreements() + 1);
    }
    if (audit.checks().empty() || (request.disagreements_only() && audit.disagreements() == 0)) {
      continue;
    }
    *out.emplace_back().mutable_model() = std::move(audit);
  }
  for (auto& [figure, tally] : tallies) {
    v1::AuditFigureSummary* entry = summary.add_figures();
    entry->set_figure(figure);
    entry->set_on_record(tally.on_record);
    entry->set_checked(tally.checked);
    entry->set_disagreements(tally.disagreements);
    if (!tally.differences.empty()) {
      auto middle = tally.differences.begin() + tally.differences.size() / 2;
      std::nth_element(tally.differences.begin(), middle, tally.differences.end());
      entry->set_median_relative_difference(*middle);
    }
  }
  summary.set_tolerance(tolerance);
  summary.set_catalog_revision(snapshot.revision());
  *out.emplace_back().mutable_summary() = std::move(summary);
  return out;
}

}  // namespace modelatlas::estimator
