// Training a model: `estimate compute`, the compute, chip-hours, power,
// energy and cost of a run from the record, its hardware and these flags.
#include <iostream>
#include <optional>

#include "absl/flags/flag.h"
#include "cli/command.h"
#include "cli/model_source.h"
#include "cli/output.h"

// estimate compute: the record's inputs, replaced by any of these.
ABSL_FLAG(std::optional<double>, parameters, std::nullopt, "compute: parameters");
ABSL_FLAG(std::optional<double>, steps, std::nullopt, "compute: optimizer steps");
ABSL_FLAG(std::optional<double>, tokens_per_step, std::nullopt,
          "compute: tokens per optimizer step (global batch)");
ABSL_FLAG(std::optional<double>, dataset_tokens, std::nullopt, "compute: dataset size, tokens");
ABSL_FLAG(std::optional<double>, dataset_bytes, std::nullopt,
          "compute: dataset size, bytes of text");
ABSL_FLAG(std::optional<double>, dataset_words, std::nullopt, "compute: dataset size, words");
ABSL_FLAG(std::optional<double>, epochs, std::nullopt, "compute: passes over the dataset");
ABSL_FLAG(std::optional<double>, chips, std::nullopt, "compute: chips used");
ABSL_FLAG(std::optional<double>, hours, std::nullopt, "compute: wall-clock training time, hours");
ABSL_FLAG(std::optional<double>, chip_hours, std::nullopt, "compute: chip-hours");
ABSL_FLAG(std::string, precision, "",
          "compute: fp32, tf32, fp16, bf16, fp8 or int8 (empty = the record's; checked by the "
          "estimator)");
ABSL_FLAG(std::optional<double>, peak_flops, std::nullopt, "compute: peak FLOP/s per chip");
ABSL_FLAG(std::optional<double>, utilization, std::nullopt,
          "compute: model FLOP utilization, 0..1");
ABSL_FLAG(std::optional<double>, tdp_watts, std::nullopt, "compute: TDP per chip, W");
ABSL_FLAG(std::optional<double>, year, std::nullopt, "compute: year of the run (for the PUE)");
ABSL_FLAG(std::optional<double>, price, std::nullopt,
          "compute, plan: price per chip (card)-hour, USD (plan: replaces every record's cloud "
          "price)");
ABSL_FLAG(std::optional<int64_t>, attention_context, std::nullopt,
          "compute: add the attention FLOP term at this context length, tokens");

namespace modelatlas::cli {
namespace {

namespace v1 = estimator::v1;

int EstimateCompute(Session& session, const Arguments& args) {
  v1::EstimateTrainingComputeRequest request;
  if (AnyModelSourceFlag()) {
    absl::StatusOr<v1::ModelSource> source = ModelSourceFromFlags(args);
    if (!source.ok()) return UsageError(source.status().message());
    *request.mutable_source() = *std::move(source);
  } else {
    request.set_model(args.empty() ? "" : args[0]);
  }
  v1::TrainingRunInputs* in = request.mutable_inputs();
  auto take = [](const std::optional<double>& flag, auto setter) {
    if (flag) setter(*flag);
  };
  take(absl::GetFlag(FLAGS_parameters), [&](double v) { in->set_parameters(v); });
  take(absl::GetFlag(FLAGS_steps), [&](double v) { in->set_steps(v); });
  take(absl::GetFlag(FLAGS_tokens_per_step), [&](double v) { in->set_tokens_per_step(v); });
  take(absl::GetFlag(FLAGS_dataset_tokens), [&](double v) { in->set_dataset_tokens(v); });
  take(absl::GetFlag(FLAGS_dataset_bytes), [&](double v) { in->set_dataset_bytes(v); });
  take(absl::GetFlag(FLAGS_dataset_words), [&](double v) { in->set_dataset_words(v); });
  take(absl::GetFlag(FLAGS_epochs), [&](double v) { in->set_epochs(v); });
  take(absl::GetFlag(FLAGS_chips), [&](double v) { in->set_chips(v); });
  take(absl::GetFlag(FLAGS_hours), [&](double v) { in->set_training_hours(v); });
  take(absl::GetFlag(FLAGS_chip_hours), [&](double v) { in->set_chip_hours(v); });
  take(absl::GetFlag(FLAGS_peak_flops), [&](double v) { in->set_peak_flops_per_chip(v); });
  take(absl::GetFlag(FLAGS_utilization), [&](double v) { in->set_utilization(v); });
  take(absl::GetFlag(FLAGS_tdp_watts), [&](double v) { in->set_tdp_watts(v); });
  take(absl::GetFlag(FLAGS_year), [&](double v) { in->set_year(v); });
  take(absl::GetFlag(FLAGS_price), [&](double v) { in->set_price_usd_per_chip_hour(v); });
  if (auto context = absl::GetFlag(FLAGS_attention_context)) {
    in->set_attention_context_tokens(*context);
  }
  in->set_precision(absl::GetFlag(FLAGS_precision));
  in->set_hardware(absl::GetFlag(FLAGS_hardware));

  v1::EstimateTrainingComputeResponse response;
  auto context = Session::NewContext();
  grpc::Status status =
      session.estimator().EstimateTrainingCompute(context.get(), request, &response);
  if (!status.ok()) return session.EstimatorFailed(status);
  if (session.json()) {
    PrintJson(response);
    return 0;
  }
  if (!response.display_name().empty()) {
    std::cout << response.display_name();
    if (!response.model().empty()) std::cout << " (" << response.model() << ")";
    std::cout << "\n";
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& figure : response.figures()) {
    rows.push_back({figure.name(), Scientific(figure.value()), figure.unit(), figure.arithmetic()});
  }
  PrintTable({"FIGURE", "VALUE", "UNIT", "ARITHMETIC"}, rows);
  if (!response.source().empty()) std::cout << "source: " << response.source() << "\n";
  if (!response.method().empty()) std::cout << "training compute: " << response.method() << "\n";
  for (const auto& warning : response.warnings()) std::cout << "note: " << warning << "\n";
  return 0;
}

}  // namespace

std::vector<Command> TrainingComputeCommands() {
  return {
      {{"estimate", "compute"},
       "[MODEL]",
       "compute, chip-hours, energy and cost of a training run",
       {"parameters",
        "steps",
        "tokens_per_step",
        "dataset_tokens",
        "dataset_bytes",
        "dataset_words",
        "epochs",
        "chips",
        "hours",
        "chip_hours",
        "hardware",
        "precision",
        "peak_flops",
        "utilization",
        "tdp_watts",
        "year",
        "price",
        "attention_context",
        "hf",
        "gguf",
        "mmproj",
        "safetensors",
        "hf_config"},
       "estimate compute \"T2R + Random Init\" --utilization=0.4",
       EstimateCompute},
  };
}

}  // namespace modelatlas::cli
