// Training a model: estimate training-memory, plan training and audit
// (estimate compute is in training_compute.cc); requests built from flags, answers printed as
// tables with their arithmetic (or JSON).
#include <iostream>
#include <optional>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "cli/command.h"
#include "cli/enum_spellings.h"
#include "cli/model_source.h"
#include "cli/output.h"

// estimate training-memory / plan training.
ABSL_FLAG(std::string, optimizer, "adamw",
          modelatlas::cli::EnumFlagHelp("training: optimizer", modelatlas::cli::Optimizers()));
ABSL_FLAG(int32_t, zero, 0, "training: ZeRO stage 0..3 (checked by the estimator)");
ABSL_FLAG(int32_t, dp, 1, "training: data-parallel degree");
ABSL_FLAG(int32_t, tp, 1, "training: tensor-parallel degree");
ABSL_FLAG(int32_t, pp, 1, "training: pipeline-parallel degree");
ABSL_FLAG(int32_t, ep, 1, "training: expert-parallel degree");
ABSL_FLAG(bool, sp, false, "training: sequence parallelism");
ABSL_FLAG(int64_t, sequence_length, 2048, "training: sequence length, tokens");
ABSL_FLAG(int32_t, micro_batch, 1, "training: sequences per device per step");
ABSL_FLAG(std::string, recompute, "none",
          modelatlas::cli::EnumFlagHelp("training: activation recomputation",
                                        modelatlas::cli::Recomputes()));
ABSL_FLAG(bool, offload_optimizer, false, "training: optimizer states in CPU memory");
ABSL_FLAG(bool, offload_parameters, false, "training: parameters in CPU memory (ZeRO-3)");
ABSL_FLAG(std::string, finetune, "full",
          modelatlas::cli::EnumFlagHelp("training: what is trained",
                                        modelatlas::cli::FineTunings()));
ABSL_FLAG(int32_t, lora_rank, 16, "training: LoRA rank");
ABSL_FLAG(std::string, lora_modules, "q,k,v,o", "training: projections with adapters");
ABSL_FLAG(bool, fp32_gradients, false, "training: keep gradients in fp32");
ABSL_FLAG(bool, deepspeed, false,
          "training: model states as DeepSpeed allocates them (its ZeRO-2/3 estimators: 18 bytes "
          "per parameter under ZeRO-3) instead of the idealized 16");
ABSL_FLAG(std::string, framework, "",
          modelatlas::cli::EnumFlagHelp("training: whose memory allocation to follow (empty: the "
                                        "framework whose default the settings match)",
                                        modelatlas::cli::TrainingFrameworks()));
ABSL_FLAG(std::string, loss, "",
          modelatlas::cli::EnumFlagHelp("training (DeepSpeed, FSDP): the loss's implementation "
                                        "(empty: transformers' stock loss)",
                                        modelatlas::cli::TrainingLosses()));
ABSL_FLAG(int32_t, max_devices, 4096, "plan training: most devices to consider");
ABSL_FLAG(bool, allow_offload, false, "plan training: let the planner offload optimizer states");
ABSL_FLAG(double, tolerance, 0.1, "audit: relative difference that counts as a disagreement");
ABSL_FLAG(bool, disagreements_only, false, "audit: print only records that disagree");

// Defined with `estimate compute` (cli/commands/training_compute.cc).
ABSL_DECLARE_FLAG(std::optional<double>, parameters);
ABSL_FLAG(std::optional<double>, largest_layer, std::nullopt,
          "training-memory with --parameters and no MODEL: parameters of the largest layer "
          "(needed for ZeRO-3, as DeepSpeed's estimator)");

namespace modelatlas::cli {
namespace {

namespace v1 = estimator::v1;

bool BuildSettings(v1::TrainingSettings* settings, std::string* error) {
  const auto optimizer = Optimizers().ParseFlag("optimizer", absl::GetFlag(FLAGS_optimizer));
  const auto recompute = Recomputes().ParseFlag("recompute", absl::GetFlag(FLAGS_recompute));
  const auto finetune = FineTunings().ParseFlag("finetune", absl::GetFlag(FLAGS_finetune));
  const auto framework =
      TrainingFrameworks().ParseFlag("framework", absl::GetFlag(FLAGS_framework));
  const auto loss = TrainingLosses().ParseFlag("loss", absl::GetFlag(FLAGS_loss));
  for (const absl::Status& status : {optimizer.status(), recompute.status(), finetune.status(),
                                     framework.status(), loss.status()}) {
    if (!status.ok()) return *error = std::string(status.message()), false;
  }
  settings->set_optimizer(*optimizer);
  settings->set_recompute(*recompute);
  settings->set_fine_tuning(*finetune);
  settings->set_zero_stage(absl::GetFlag(FLAGS_zero));
  settings->set_data_parallel(absl::GetFlag(FLAGS_dp));
  settings->set_tensor_parallel(absl::GetFlag(FLAGS_tp));
  settings->set_pipeline_parallel(absl::GetFlag(FLAGS_pp));
  settings->set_expert_parallel(absl::GetFlag(FLAGS_ep));
  settings->set_sequence_parallel(absl::GetFlag(FLAGS_sp));
  settings->set_sequence_length(absl::GetFlag(FLAGS_sequence_length));
  settings->set_micro_batch(absl::GetFlag(FLAGS_micro_batch));
  settings->set_offload_optimizer(absl::GetFlag(FLAGS_offload_optimizer));
  settings->set_offload_parameters(absl::GetFlag(FLAGS_offload_parameters));
  settings->set_fp32_gradients(absl::GetFlag(FLAGS_fp32_gradients));
  settings->set_deepspeed_model_states(absl::GetFlag(FLAGS_deepspeed));
  settings->set_framework(*framework);
  settings->set_loss(*loss);
  if (settings->fine_tuning() != v1::FINE_TUNING_FULL) {
    settings->set_lora_rank(absl::GetFlag(FLAGS_lora_rank));
    for (absl::string_view module :
         absl::StrSplit(absl::GetFlag(FLAGS_lora_modules), ',', absl::SkipEmpty())) {
      settings->add_lora_target_modules(std::string(module));
    }
  }
  return true;
}

void PrintMemory(const v1::EstimateTrainingMemoryResponse& memory) {
  if (!memory.allocation().empty()) std::cout << "allocation: " << memory.allocation() << "\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& line : memory.device_lines()) {
    rows.push_back(BytesRow(line.component(), line.bytes(), line.arithmetic()));
  }
  rows.push_back({"total per device", absl::StrCat(memory.device_total_bytes()),
                  Fixed(memory.device_total_gib(), 2),
                  DecimalGbNote(static_cast<double>(memory.device_total_bytes()) / 1e9)});
  PrintTable(kBytesHeader, rows);
  if (memory.host_lines_size() > 0) {
    rows.clear();
    for (const auto& line : memory.host_lines()) {
      rows.push_back(BytesRow(line.component(), line.bytes(), line.arithmetic()));
    }
    rows.push_back(BytesRow("host total per device", memory.host_total_bytes(), ""));
    PrintTable({"HOST MEMORY", "BYTES", "GiB", "ARITHMETIC"}, rows);
  }
  for (const auto& note : memory.notes()) std::cout << "note: " << note << "\n";
}

// The model of a training command: MODEL, a source flag (cli/model_source.h),
// or --parameters with --largest_layer (DeepSpeed's model-states estimate).
absl::Status SetTrainingModel(const Arguments& args, v1::TrainingModel* out) {
  if (args.empty() && !AnyModelSourceFlag() && absl::GetFlag(FLAGS_parameters).has_value()) {
    v1::InlineModel* model = out->mutable_any()->mutable_inline_model();
    model->set_display_name("inline parameter count");
    model->set_parameters(*absl::GetFlag(FLAGS_parameters));
    if (auto layer = absl::GetFlag(FLAGS_largest_layer))
      model->set_largest_layer_parameters(*layer);
    return absl::OkStatus();
  }
  absl::StatusOr<v1::ModelSource> source = ModelSourceFromFlags(args);
  if (!source.ok()) return source.status();
  *out->mutable_any() = *std::move(source);
  return absl::OkStatus();
}

int EstimateTrainingMemory(Session& session, const Arguments& args) {
  v1::EstimateTrainingMemoryRequest request;
  if (absl::Status bad = SetTrainingModel(args, request.mutable_model()); !bad.ok()) {
    return UsageError(bad.message());
  }
  std::string error;
  if (!BuildSettings(request.mutable_settings(), &error)) return UsageError(error);
  v1::EstimateTrainingMemoryResponse response;
  auto context = Session::NewContext();
  grpc::Status status =
      session.estimator().EstimateTrainingMemory(context.get(), request, &response);
  if (!status.ok()) return session.EstimatorFailed(status);
  if (session.json()) {
    PrintJson(response);
    return 0;
  }
  std::cout << response.display_name();
  if (!response.model().empty()) std::cout << " (" << response.model() << ")";
  std::cout << ", " << HumanCount(response.parameters()) << " parameters\n";
  if (!response.source().empty()) std::cout << "source: " << response.source() << "\n";
  PrintMemory(response);
  return 0;
}

int PlanTraining(Session& session, const Arguments& args) {
  v1::PlanTrainingRequest request;
  if (absl::Status bad = SetTrainingModel(args, request.mutable_model()); !bad.ok()) {
    return UsageError(bad.message());
  }
  if (absl::GetFlag(FLAGS_hardware).empty())
    return UsageError("plan training needs --hardware=NAME");
  request.set_hardware(absl::GetFlag(FLAGS_hardware));
  std::string error;
  if (!BuildSettings(request.mutable_settings(), &error)) return UsageError(error);
  request.set_max_devices(absl::GetFlag(FLAGS_max_devices));
  request.set_allow_offload(absl::GetFlag(FLAGS_allow_offload));
  v1::PlanTrainingResponse response;
  auto context = Session::NewContext();
  grpc::Status status = session.estimator().PlanTraining(context.get(), request, &response);
  if (!status.ok()) return session.EstimatorFailed(status);
  if (session.json()) {
    PrintJson(response);
    return 0;
  }
  if (!response.fits()) {
    std::cout << "does not fit: " << response.reason() << "\n";
    return 0;
  }
  const auto& s = response.settings();
  std::cout << absl::StrFormat(
      "%s on %s: %d devices (data %d x tensor %d x pipeline %d), ZeRO-%d, recompute %s%s%s\n",
      response.display_name(), response.hardware(), response.devices(), s.data_parallel(),
      s.tensor_parallel(), s.pipeline_parallel(), s.zero_stage(),
      Recomputes().Spelling(s.recompute()), s.sequence_parallel() ? ", sequence parallel" : "",
      s.offload_optimizer() ? ", optimizer offloaded" : "");
  PrintMemory(response.memory());
  return 0;
}

int Audit(Session& session, const Arguments& args) {
  const std::string model = args.empty() ? "" : args[0];
  auto print = [](const v1::AuditModelResponse& audit) {
    std::cout << audit.display_name() << " (" << audit.model() << "): " << audit.disagreements()
              << " disagreement(s)\n";
    for (const auto& check : audit.checks()) {
      std::cout << absl::StrFormat("  %-9s %s: recorded %s, recomputed %s (%.1f%% apart)\n",
                                   AuditVerdicts().Spelling(check.verdict()), check.figure(),
                                   Scientific(check.recorded()), Scientific(check.recomputed()),
                                   100 * check.relative_difference())
                << "    " << check.arithmetic() << "\n";
      if (!check.reason().empty()) std::cout << "    why: " << check.reason() << "\n";
    }
    for (const auto& skipped : audit.skipped()) std::cout << "  not checked: " << skipped << "\n";
  };
  if (!model.empty()) {
    v1::AuditModelRequest request;
    request.set_model(model);
    request.set_tolerance(absl::GetFlag(FLAGS_tolerance));
    v1::AuditModelResponse response;
    auto context = Session::NewContext();
    grpc::Status status = session.estimator().AuditModel(context.get(), request, &response);
    if (!status.ok()) return session.EstimatorFailed(status);
    if (session.json()) {
      PrintJson(response);
    } else {
      print(response);
    }
    return 0;
  }
  v1::AuditCatalogRequest request;
  request.set_filter(absl::GetFlag(FLAGS_filter));
  request.set_tolerance(absl::GetFlag(FLAGS_tolerance));
  request.set_disagreements_only(absl::GetFlag(FLAGS_disagreements_only));
  auto context = Session::NewContext();
  auto reader = session.estimator().AuditCatalog(context.get(), request);
  v1::AuditCatalogResponse message;
  std::optional<JsonListPrinter> json;  // one array (or JSON Lines) of the stream's messages
  if (session.json()) json.emplace(session.jsonl(), std::cout);
  while (reader->Read(&message)) {
    if (json) {
      json->Add(message);
    } else if (message.has_model()) {
      print(message.model());
    } else if (message.has_summary()) {
      const auto& summary = message.summary();
      std::cout << absl::StrFormat(
          "\n%d models audited, %d whose own inputs disagree beyond %.0f%%\n", summary.models(),
          summary.models_with_disagreements(), 100 * summary.tolerance());
      std::vector<std::vector<std::string>> rows;
      for (const auto& figure : summary.figures()) {
        rows.push_back({figure.figure(), absl::StrCat(figure.on_record()),
                        absl::StrCat(figure.checked()), absl::StrCat(figure.disagreements()),
                        absl::StrCat(figure.record_semantics()),
                        absl::StrCat(figure.cannot_check()),
                        absl::StrFormat("%.2f%%", 100 * figure.median_relative_difference())});
      }
      PrintTable({"FIGURE", "ON RECORD", "CHECKED", "INPUTS DISAGREE", "CONVENTION", "PART CHECKED",
                  "MEDIAN DIFFERENCE"},
                 rows);
    }
  }
  grpc::Status status = reader->Finish();
  if (json) json->Finish();
  if (!status.ok()) return session.EstimatorFailed(status);
  return 0;
}

}  // namespace

int PlanTrainingFromSourceFlags(Session& session) { return PlanTraining(session, {}); }

CommandGroup TrainingCommands() {
  const std::vector<absl::string_view> settings = {"optimizer",
                                                   "zero",
                                                   "dp",
                                                   "tp",
                                                   "pp",
                                                   "ep",
                                                   "sp",
                                                   "sequence_length",
                                                   "micro_batch",
                                                   "recompute",
                                                   "offload_optimizer",
                                                   "offload_parameters",
                                                   "finetune",
                                                   "lora_rank",
                                                   "lora_modules",
                                                   "fp32_gradients",
                                                   "deepspeed",
                                                   "framework",
                                                   "loss"};
  std::vector<absl::string_view> plan = settings;
  plan.insert(plan.begin(), {"hardware", "max_devices", "allow_offload"});
  auto with_source = [](std::vector<absl::string_view> flags) {
    flags.insert(flags.end(), ModelSourceFlags().begin(), ModelSourceFlags().end());
    flags.insert(flags.end(), {"parameters", "largest_layer"});
    return flags;
  };
  CommandGroup group{
      "Training (compute, memory, plans, audits)",
      {
          {{"estimate", "training-memory"},
           "[MODEL]",
           "memory per device to train MODEL (or --hf, --gguf, --safetensors, --hf_config)",
           with_source(settings),
           "estimate training-memory \"Llama 3.1 8B\" --finetune=qlora --zero=2",
           EstimateTrainingMemory},
          {{"plan", "training"},
           "MODEL",
           "the fewest devices of --hardware that train MODEL (or with --hf, ... and no MODEL), "
           "and how",
           with_source(plan),
           "plan training \"Llama 3.1 8B\" --hardware=\"NVIDIA H100\"",
           PlanTraining},
          {{"audit"},
           "[MODEL]",
           "recompute a record's figures from its inputs; no MODEL audits the catalog",
           {"tolerance", "filter", "disagreements_only"},
           "audit Megatron-BERT --tolerance=0.2",
           Audit},
      }};
  std::vector<Command> compute = TrainingComputeCommands();
  group.commands.insert(group.commands.begin(), compute.begin(), compute.end());
  return group;
}

}  // namespace modelatlas::cli
