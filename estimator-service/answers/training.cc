#include "estimator-service/answers/training.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/formats/hf_config.h"
#include "common/status/errors.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/records.h"
#include "estimator-service/core/arithmetic_text.h"
#include "estimator-service/core/parameters.h"
#include "estimator-service/core/training_memory.h"
#include "estimator-service/core/units.h"

namespace modelatlas::estimator {
namespace {

using common::v1::Hardware;
using common::v1::Model;

constexpr int kDefaultLoraRank = 16;
constexpr int kDefaultMaxDevices = 4096;

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
  if (absl::Status invalid = ValidateModelArchitecture(model, "model.architecture");
      !invalid.ok()) {
    return invalid;
  }
  TrainingMemoryInput input;
  absl::StatusOr<double> parameters = ParametersOfModel(model);
  if (!parameters.ok()) return parameters.status();
  input.parameters = *parameters;
  if (model.has_architecture()) {
    input.architecture = ToCoreArchitecture(model.architecture());
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
  absl::StatusOr<Optimizer> optimizer = ToCoreOptimizer(settings.optimizer(), "settings.optimizer");
  if (!optimizer.ok()) return optimizer.status();
  absl::StatusOr<Recompute> recompute = ToCoreRecompute(settings.recompute(), "settings.recompute");
  if (!recompute.ok()) return recompute.status();
  absl::StatusOr<FineTuning> fine_tuning =
      ToCoreFineTuning(settings.fine_tuning(), "settings.fine_tuning");
  if (!fine_tuning.ok()) return fine_tuning.status();
  input.optimizer = *optimizer;
  input.recompute = *recompute;
  input.fine_tuning = *fine_tuning;
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
  input.deepspeed_model_states = settings.deepspeed_model_states();
  absl::StatusOr<Framework> framework = ToCoreFramework(settings.framework(), "settings.framework");
  if (!framework.ok()) return framework.status();
  if (settings.deepspeed_model_states() && *framework != Framework::kDefault &&
      *framework != Framework::kDeepSpeed) {
    return InvalidFieldError("settings.framework",
                             "conflicts with deepspeed_model_states (which means DeepSpeed)");
  }
  input.framework = *framework;
  absl::StatusOr<LossImplementation> loss = ToCoreLoss(settings.loss(), "settings.loss");
  if (!loss.ok()) return loss.status();
  input.loss = *loss;
  if (input.fine_tuning != FineTuning::kFull) {
    input.lora_rank = settings.lora_rank();
    std::vector<std::string> modules(settings.lora_target_modules().begin(),
                                     settings.lora_target_modules().end());
    absl::StatusOr<Figure> adapters = LoraParameters(input.architecture, input.lora_rank, modules);
    if (!adapters.ok()) return PrefixFieldViolations(adapters.status(), "settings.");
    input.lora_parameters = adapters->value;
  }
  return input;
}

// A multimodal model's encoders are in the weights, gradients and optimizer
// states (their parameters are the model's), but the activation formulas
// are the language model's over the sequence: say what is left out.
std::string EncoderActivationsNote(const common::v1::Architecture& arch) {
  if (arch.encoder_parts_size() == 0) return "";
  std::string note = absl::StrCat(
      "multimodal: the encoders' and projector's ", WholeNumber(EncoderPartsParameters(arch)),
      " parameters are in the weights, gradients and optimizer states, but the activations are "
      "the language model's over sequence_length tokens (image or audio tokens count as far as "
      "the sequence holds them); the encoders' own activations are not counted");
  if (arch.num_cross_attention_layers() > 0) {
    absl::StrAppend(&note, ", nor the ", arch.num_cross_attention_layers(),
                    " cross-attention layers' over the image's ", arch.cross_attention_positions(),
                    " positions (their text-side activations are)");
  }
  return note;
}

}  // namespace

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
  if (const std::string note = EncoderActivationsNote(model.architecture()); !note.empty()) {
    response.add_notes(note);
  }
  *response.mutable_settings() = settings;
  // The framework the figures followed, resolved when none was asked.
  response.mutable_settings()->set_framework(ToProtoFramework(memory->framework));
  if (memory->framework == Framework::kDeepSpeed || memory->framework == Framework::kFsdp) {
    response.mutable_settings()->set_loss(ToProtoLoss(input->loss));
  }
  response.set_allocation(memory->allocation);
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
  // Fail fast on settings that no parallel layout can fix (DeepSpeed's
  // model states exist for ZeRO-2 and ZeRO-3 only: checked at ZeRO-3).
  v1::TrainingSettings first = base;
  if (first.deepspeed_model_states() && first.zero_stage() < 2) first.set_zero_stage(3);
  if (first.framework() == v1::TRAINING_FRAMEWORK_DEEPSPEED && first.zero_stage() < 2) {
    first.set_zero_stage(3);
  }
  // A loss other than transformers' is counted for DeepSpeed and FSDP only:
  // with the framework left to the settings, ZeRO-0/1 would resolve to
  // Megatron-LM (its own loss), so the one-device figure is taken at ZeRO-3.
  if (first.framework() == v1::TRAINING_FRAMEWORK_UNSPECIFIED &&
      first.loss() != v1::TRAINING_LOSS_UNSPECIFIED &&
      first.loss() != v1::TRAINING_LOSS_TRANSFORMERS && first.zero_stage() < 2) {
    first.set_zero_stage(3);
  }
  if (first.framework() == v1::TRAINING_FRAMEWORK_FSDP && first.zero_stage() == 1) {
    first.set_zero_stage(0);
  }
  if (first.framework() == v1::TRAINING_FRAMEWORK_MEGATRON && first.zero_stage() > 1) {
    first.set_zero_stage(0);
  }
  absl::StatusOr<v1::EstimateTrainingMemoryResponse> single =
      EstimateTrainingMemoryFor(model, first);
  if (!single.ok()) return single.status();

  // Fits are decided on what one process can allocate (the driver's figure,
  // or the rule for the memory type), not the marketed capacity: the
  // framework's allocator never sees the rest.
  const AllocatableMemory allocatable = AllocatableMemoryOfRecord(hardware);
  const double memory = allocatable.allocatable_bytes;
  const int64_t layers = model.architecture().num_layers();
  const int64_t heads = model.architecture().num_attention_heads();
  v1::PlanTrainingResponse response;
  response.set_model(model.name());
  response.set_display_name(model.display_name());
  response.set_hardware(hardware.name());
  response.set_device_memory_bytes(static_cast<int64_t>(memory));
  ToProto(allocatable, response.mutable_device_memory());
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
  response.set_reason(
      absl::StrCat("no layout of up to ", max_devices, " devices fits ", hardware.display_name(),
                   " (", static_cast<int64_t>(memory), " bytes each a process can allocate",
                   allocatable.assumed ? ", assumed" : "", "): on one device it needs ",
                   single->device_total_bytes(), " bytes",
                   request.allow_offload() ? "" : "; allow_offload may help"));
  return response;
}

static absl::StatusOr<RecordsWanted> TrainingModelWanted(const v1::TrainingModel& model) {
  RecordsWanted wanted;
  Model given;
  switch (model.source_case()) {
    case v1::TrainingModel::kModel:
      wanted.model = model.model();
      return wanted;
    case v1::TrainingModel::kArchitecture:
      given.set_display_name("inline architecture");
      *given.mutable_architecture() = model.architecture();
      break;
    case v1::TrainingModel::kHfConfigJson: {
      absl::StatusOr<common::v1::Architecture> arch =
          ArchitectureFromHfConfig(model.hf_config_json());
      if (!arch.ok()) return PrefixFieldViolations(arch.status(), "model.");
      given.set_display_name("inline config.json");
      *given.mutable_architecture() = *std::move(arch);
      break;
    }
    default:
      return InvalidFieldError("model", "give model, architecture or hf_config_json");
  }
  wanted.given_model = std::move(given);
  return wanted;
}

void AnswerTrainingMemory(std::shared_ptr<RecordSource> source,
                          const v1::EstimateTrainingMemoryRequest& request,
                          AnswerDone<v1::EstimateTrainingMemoryResponse> done) {
  absl::StatusOr<RecordsWanted> wanted = TrainingModelWanted(request.model());
  if (!wanted.ok()) return done(wanted.status());
  ReadRecords(std::move(source), *std::move(wanted),
              [&request, done = std::move(done)](absl::StatusOr<Records> records) {
                if (!records.ok()) return done(records.status());
                done(EstimateTrainingMemoryFor(*records->model, request.settings()));
              });
}

void AnswerPlanTraining(std::shared_ptr<RecordSource> source,
                        const v1::PlanTrainingRequest& request,
                        AnswerDone<v1::PlanTrainingResponse> done) {
  if (request.hardware().empty()) {
    return done(InvalidFieldError("hardware", "required: the accelerator to train on"));
  }
  absl::StatusOr<RecordsWanted> wanted = TrainingModelWanted(request.model());
  if (!wanted.ok()) return done(wanted.status());
  wanted->hardware.push_back(request.hardware());
  ReadRecords(std::move(source), *std::move(wanted),
              [&request, done = std::move(done)](absl::StatusOr<Records> records) {
                if (!records.ok()) return done(records.status());
                if (records->hardware.empty()) {
                  return done(ResourceNotFoundError("Hardware", request.hardware()));
                }
                done(PlanTrainingFor(*records->model, records->hardware.front(), request));
              });
}

}  // namespace modelatlas::estimator
