// A training run's figures recomputed from its inputs: tokens, epochs,
// compute by operation counting and by the hardware method, their
// combination, chip-hours, power, energy and cost; and the audit of a
// record's own figures against them. Plain C++ over optional numbers: the
// adapter fills TrainingRunInputs from a catalog record, its hardware and
// the request.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "estimator-service/core/training_compute.h"

namespace modelatlas::estimator {

struct TrainingRunInputs {
  // Parameters per token for operation counting: the active ones of a
  // mixture of experts.
  std::optional<double> parameters;
  // The model's total when `parameters` is only its active part (MoE): the
  // arithmetic says so.
  std::optional<double> total_parameters;
  // Tokens come from the first of: steps x tokens per step; dataset tokens
  // (or bytes, or words, converted) x epochs.
  std::optional<double> steps;
  std::optional<double> tokens_per_step;
  std::optional<double> dataset_tokens;
  std::optional<double> dataset_bytes;
  std::optional<double> dataset_words;
  std::optional<double> epochs;
  // Optional attention term (Kaplan et al. 2020): layers, hidden size, context.
  std::optional<double> attention_layers;
  std::optional<double> attention_width;
  std::optional<double> attention_context;

  std::optional<double> chips;
  std::optional<double> training_hours;  // wall clock
  std::optional<double> chip_hours;
  std::optional<double> peak_flops_per_chip;  // FLOP/s at the training precision
  std::string peak_source;                    // e.g. "NVIDIA A100 SXM4 40 GB, FP16/BF16 tensor"
  std::optional<double> utilization;          // fraction
  // Where `utilization` came from ("the record's MFU", "stated in the
  // record's notes"); empty when it is the request's or not set.
  std::string utilization_source;
  // The chip's peaks at the other precisions (FLOP/s, with what each is),
  // for the audit: a recorded compute that matches one of them follows
  // another convention rather than being wrong.
  std::vector<std::pair<double, std::string>> other_peaks;
  bool language_model = true;             // the default utilization: 0.3, else 0.4
  std::optional<double> tdp_watts;        // per chip
  std::optional<double> fractional_year;  // for the PUE
  std::optional<double> price_usd_per_chip_hour;
};

struct NamedFigure {
  std::string name;  // e.g. "operation_counting_flop"
  double value = 0;
  std::string unit;  // "FLOP", "tokens", "epochs", "hours", "W", "kWh", "USD"
  std::string arithmetic;
};

struct TrainingRunFigures {
  std::vector<NamedFigure> figures;  // in the order computed
  std::optional<double> tokens;
  std::optional<double> operation_counting_flop;
  std::optional<double> hardware_method_flop;
  std::optional<double> training_compute_flop;  // the combination
  std::string method;                           // how training_compute_flop was obtained
  std::optional<double> chip_hours;
  std::optional<double> power_draw_watts;
  std::optional<double> energy_kwh;
  std::optional<double> cost_usd;
  std::vector<std::string> warnings;
};

// Everything the inputs allow; INVALID_ARGUMENT naming the field for a
// negative, zero or non-finite input, or a utilization above 1.
absl::StatusOr<TrainingRunFigures> ComputeTrainingRun(const TrainingRunInputs& inputs);

// What a record says about itself, for the audit.
struct RecordedFigures {
  std::optional<double> training_compute_flop;
  bool method_operation_counting = false;
  bool method_hardware = false;
  // The record also names a method the audit cannot recompute (reported,
  // benchmarks, comparison with other models, cost, third party, other).
  bool method_other = false;
  // Fine-tuned from another model: Epoch AI's training compute then adds the
  // base model's, while the chips and time on record are the fine-tune's.
  bool has_base_model = false;
  std::optional<double> finetune_compute_flop;
  // Trained on more than one kind of chip: one peak cannot redo it.
  bool several_kinds_of_hardware = false;
  std::optional<double> chip_hours;
  std::optional<double> power_draw_watts;
};

// What a difference means (see AuditVerdict in training.proto).
enum class AuditVerdict { kAgrees, kInputsDisagree, kRecordSemantics, kCannotCheck };

struct AuditCheck {
  std::string
      figure;  // "training_chip_hours", "training_compute_flop", "training_power_draw_watts"
  double recorded = 0;
  double recomputed = 0;
  // |recomputed - recorded| / recorded.
  double relative_difference = 0;
  // verdict == kInputsDisagree.
  bool disagrees = false;
  std::string arithmetic;
  AuditVerdict verdict = AuditVerdict::kAgrees;
  // The verdict in a sentence (empty when the figure agrees).
  std::string reason;
  // Hardware method: recorded compute / (chip-hours x peak x 3600 s).
  std::optional<double> implied_utilization;
};

struct Audit {
  std::vector<AuditCheck> checks;
  // Figures on record that could not be recomputed, with why.
  std::vector<std::string> skipped;
};

// Recomputes each recorded figure whose inputs the record holds and gives
// each a verdict: within `tolerance` (a fraction) it agrees; beyond it, a
// convention the record follows may explain the difference (another
// precision's peak, a utilization the record does not state but the default
// does not match, epochs not applied, total instead of active parameters),
// part of it may not be checkable (a method the audit cannot redo), and only
// what nothing explains is INPUTS_DISAGREE. `inputs` must come from the
// record alone (no request overrides, no assumed epochs).
Audit AuditTrainingRun(const TrainingRunInputs& inputs, const RecordedFigures& recorded,
                       double tolerance);

}  // namespace modelatlas::estimator
