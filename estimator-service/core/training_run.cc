#include "estimator-service/core/training_run.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status/errors.h"

namespace modelatlas::estimator {
namespace {

std::string Num(double value) { return absl::StrFormat("%.10g", value); }

absl::Status ValidateInputs(const TrainingRunInputs& in) {
  FieldViolations v;
  auto positive = [&](const char* field, const std::optional<double>& value) {
    if (value.has_value() && (!std::isfinite(*value) || *value <= 0)) {
      v.Add(field, absl::StrCat("must be a positive finite number, got ", *value));
    }
  };
  positive("parameters", in.parameters);
  positive("steps", in.steps);
  positive("tokens_per_step", in.tokens_per_step);
  positive("dataset_tokens", in.dataset_tokens);
  positive("dataset_bytes", in.dataset_bytes);
  positive("dataset_words", in.dataset_words);
  positive("epochs", in.epochs);
  positive("sequence_length", in.attention_context);
  positive("chips", in.chips);
  positive("training_hours", in.training_hours);
  positive("chip_hours", in.chip_hours);
  positive("peak_flops_per_chip", in.peak_flops_per_chip);
  positive("utilization", in.utilization);
  positive("tdp_watts", in.tdp_watts);
  if (in.price_usd_per_chip_hour.has_value() &&
      (!std::isfinite(*in.price_usd_per_chip_hour) || *in.price_usd_per_chip_hour < 0)) {
    v.Add("price_usd_per_chip_hour", "must be a non-negative finite number");
  }
  if (in.utilization.has_value() && *in.utilization > 1) {
    v.Add("utilization",
          absl::StrCat("is a fraction and must be at most 1, got ", *in.utilization));
  }
  return v.ToStatus();
}

// Tokens seen in training, with how they were obtained.
std::optional<NamedFigure> Tokens(const TrainingRunInputs& in, std::vector<std::string>* warnings) {
  if (in.steps && in.tokens_per_step) {
    const double tokens = *in.steps * *in.tokens_per_step;
    return NamedFigure{"tokens", tokens, "tokens",
                       absl::StrCat(Num(*in.steps), " steps x ", Num(*in.tokens_per_step),
                                    " tokens per step = ", Num(tokens), " tokens")};
  }
  std::optional<Figure> dataset;
  if (in.dataset_tokens) {
    dataset = Figure{*in.dataset_tokens, absl::StrCat(Num(*in.dataset_tokens), " tokens")};
  } else if (in.dataset_bytes) {
    dataset = TokensFromBytes(*in.dataset_bytes);
  } else if (in.dataset_words) {
    const double tokens = *in.dataset_words * 4 / 3;
    dataset =
        Figure{tokens, absl::StrCat(Num(*in.dataset_words),
                                    " words x (4 tokens / 3 words) = ", Num(tokens), " tokens")};
  }
  if (!dataset) return std::nullopt;
  double epochs = 1;
  if (in.epochs) {
    epochs = *in.epochs;
  } else {
    warnings->push_back("epochs not on record: one pass over the dataset assumed");
  }
  const double tokens = dataset->value * epochs;
  return NamedFigure{"tokens", tokens, "tokens",
                     absl::StrCat("(", dataset->arithmetic, ") x ", Num(epochs), " epochs",
                                  in.epochs ? "" : " (assumed)", " = ", Num(tokens), " tokens")};
}

// When the two methods are more than 3x apart, which inputs most likely
// explain it (the seed pages' Megatron-BERT is 135x apart: its epochs are not
// on record, so operation counting saw one pass over the data).
std::optional<std::string> WhyTheMethodsDisagree(double counted_flop, double hardware_flop,
                                                 bool epochs_assumed, double utilization,
                                                 bool utilization_on_record) {
  constexpr double kExplainAbove = 3;
  const double ratio =
      std::max(counted_flop, hardware_flop) / std::min(counted_flop, hardware_flop);
  if (!(ratio > kExplainAbove)) return std::nullopt;
  std::string why;
  if (hardware_flop > counted_flop) {
    why = epochs_assumed
              ? "the epochs are not on record, so operation counting assumed one pass over the "
                "data; several epochs, or a dataset size on record below the tokens actually "
                "seen, close the gap"
              : "the tokens on record (dataset size x epochs) may be fewer than the run saw, or "
                "the chip-hours on record include more than this run (ablations, restarts)";
  } else {
    why =
        "the chip-hours or the peak on record may be too low for the run, or the run "
        "reached more than the utilization used";
  }
  if (!utilization_on_record) {
    absl::StrAppend(&why, "; the hardware method assumed ", Num(utilization * 100),
                    "% utilization");
  }
  return absl::StrCat("the two methods are ", absl::StrFormat("%.0f", ratio),
                      "x apart (operation counting ", absl::StrFormat("%.3g", counted_flop),
                      " FLOP, hardware method ", absl::StrFormat("%.3g", hardware_flop),
                      " FLOP): ", why);
}

}  // namespace

absl::StatusOr<TrainingRunFigures> ComputeTrainingRun(const TrainingRunInputs& in) {
  if (absl::Status s = ValidateInputs(in); !s.ok()) return s;
  TrainingRunFigures out;
  auto add = [&](NamedFigure figure) { out.figures.push_back(std::move(figure)); };

  // Epochs from steps, when both the steps and the dataset are known.
  if (in.steps && in.tokens_per_step && in.dataset_tokens) {
    absl::StatusOr<Figure> epochs = Epochs(*in.steps, *in.tokens_per_step, *in.dataset_tokens);
    if (epochs.ok()) add({"epochs", epochs->value, "epochs", epochs->arithmetic});
  }
  std::optional<NamedFigure> tokens = Tokens(in, &out.warnings);
  if (tokens) {
    out.tokens = tokens->value;
    add(*tokens);
  }
  if (in.parameters && tokens) {
    // Written as the seed pages write it: parameters x dataset x epochs.
    const bool from_dataset = !(in.steps && in.tokens_per_step);
    const double epochs = from_dataset ? in.epochs.value_or(1) : 1;
    absl::StatusOr<Figure> counted = OperationCountingFlop(*in.parameters, tokens->value / epochs,
                                                           epochs, in.total_parameters.value_or(0));
    if (!counted.ok()) return counted.status();
    double flop = counted->value;
    std::string arithmetic = counted->arithmetic;
    if (in.attention_layers && in.attention_width && in.attention_context) {
      // Kaplan et al. 2020, table 1: forward 2 x n_layer x n_ctx x d_attn FLOP
      // per token for attention scores; training is three passes.
      const double attention =
          6 * *in.attention_layers * *in.attention_context * *in.attention_width * tokens->value;
      flop += attention;
      arithmetic = absl::StrCat(arithmetic, "; + attention 6 x ", Num(*in.attention_layers),
                                " layers x ", Num(*in.attention_context), " context x ",
                                Num(*in.attention_width), " width x ", Num(tokens->value),
                                " tokens = ", absl::StrFormat("%.6g", attention), " FLOP; total ",
                                absl::StrFormat("%.6g", flop), " FLOP");
    }
    out.operation_counting_flop = flop;
    add({"operation_counting_flop", flop, "FLOP", arithmetic});
  } else {
    out.warnings.push_back(in.parameters ? "operation counting: no training tokens on record"
                                         : "operation counting: no parameter count on record");
  }

  // Chip-hours: chips x hours, else as recorded.
  std::optional<double> chip_hours = in.chip_hours;
  std::string chip_hours_text = chip_hours ? absl::StrCat(Num(*chip_hours), " chip-hours") : "";
  if (in.chips && in.training_hours) {
    const Figure figure = ChipHours(*in.chips, *in.training_hours);
    if (!in.chip_hours) {
      chip_hours = figure.value;
      chip_hours_text = figure.arithmetic;
    }
  }
  if (chip_hours) {
    out.chip_hours = chip_hours;
    add({"chip_hours", *chip_hours, "hours", chip_hours_text});
  }

  // Hardware method: chip-hours x peak x 3600 x utilization.
  const double utilization = in.utilization.value_or(in.language_model ? 0.3 : 0.4);
  if (chip_hours && in.peak_flops_per_chip) {
    absl::StatusOr<Figure> hardware =
        HardwareMethodFlop(1, *in.peak_flops_per_chip, *chip_hours, utilization);
    if (!hardware.ok()) return hardware.status();
    out.hardware_method_flop = hardware->value;
    add({"hardware_method_flop", hardware->value, "FLOP",
         absl::StrCat(Num(*chip_hours), " chip-hours x ", Num(*in.peak_flops_per_chip), " FLOP/s",
                      in.peak_source.empty() ? "" : absl::StrCat(" (", in.peak_source, ")"),
                      " x 3600 s/hour x ", Num(utilization), " utilization",
                      in.utilization ? (in.utilization_source.empty()
                                            ? ""
                                            : absl::StrCat(" (", in.utilization_source, ")"))
                                     : (in.language_model ? " (assumed: 30% for language models)"
                                                          : " (assumed: 40% for other models)"),
                      " = ", absl::StrFormat("%.6g", hardware->value), " FLOP")});
  } else {
    out.warnings.push_back(chip_hours ? "hardware method: no peak FLOP/s for the training hardware"
                                      : "hardware method: no chips and training time on record");
  }

  // Tokens from one assumed epoch only bound the count from below: the
  // hardware method, where it has inputs, is the better figure then.
  const bool epochs_assumed = tokens && !in.epochs && !(in.steps && in.tokens_per_step);
  if (epochs_assumed && out.operation_counting_flop && out.hardware_method_flop) {
    out.training_compute_flop = out.hardware_method_flop;
    out.method = "hardware method (operation counting assumed one epoch: a lower bound)";
    add({"training_compute_flop", *out.training_compute_flop, "FLOP",
         "the hardware method; operation counting is a one-epoch lower bound"});
  } else if (out.operation_counting_flop && out.hardware_method_flop) {
    const Figure mean = GeometricMean(*out.operation_counting_flop, *out.hardware_method_flop);
    out.training_compute_flop = mean.value;
    out.method = "geometric mean of operation counting and the hardware method";
    add({"training_compute_flop", mean.value, "FLOP",
         absl::StrCat("geometric mean: ", mean.arithmetic, " FLOP")});
  } else if (out.operation_counting_flop || out.hardware_method_flop) {
    out.training_compute_flop =
        out.operation_counting_flop ? *out.operation_counting_flop : *out.hardware_method_flop;
    out.method = out.operation_counting_flop ? "operation counting" : "hardware method";
    add({"training_compute_flop", *out.training_compute_flop, "FLOP",
         absl::StrCat("the only method with inputs: ", out.method)});
  }

  if (out.operation_counting_flop && out.hardware_method_flop) {
    if (std::optional<std::string> why =
            WhyTheMethodsDisagree(*out.operation_counting_flop, *out.hardware_method_flop,
                                  epochs_assumed, utilization, in.utilization.has_value());
        why.has_value()) {
      out.warnings.push_back(*std::move(why));
    }
  }

  // Power, energy, cost.
  if (in.tdp_watts && in.chips && in.fractional_year) {
    absl::StatusOr<Figure> power =
        TrainingPowerDrawWatts(*in.tdp_watts, *in.chips, *in.fractional_year);
    if (!power.ok()) return power.status();
    out.power_draw_watts = power->value;
    add({"power_draw_watts", power->value, "W", power->arithmetic});
    std::optional<double> hours = in.training_hours;
    if (!hours && chip_hours) hours = *chip_hours / *in.chips;
    if (hours) {
      const double kwh = power->value * *hours / 1000;
      out.energy_kwh = kwh;
      add({"energy_kwh", kwh, "kWh",
           absl::StrCat(absl::StrFormat("%.1f", power->value), " W x ", Num(*hours),
                        " hours / 1000 = ", absl::StrFormat("%.6g", kwh), " kWh")});
    }
  } else {
    out.warnings.push_back("power: needs the chips' TDP, their number and the date of the run");
  }
  if (chip_hours && in.price_usd_per_chip_hour) {
    const double cost = *chip_hours * *in.price_usd_per_chip_hour;
    out.cost_usd = cost;
    add({"cost_usd", cost, "USD",
         absl::StrCat(Num(*chip_hours), " chip-hours x ", Num(*in.price_usd_per_chip_hour),
                      " USD per chip-hour = ", absl::StrFormat("%.2f", cost),
                      " USD (cloud rental at that price, not Epoch AI's amortized 2023 USD)")});
  }
  return out;
}

namespace {

// Utilization a training run plausibly reaches (MFU): Epoch AI's records and
// the literature put real runs between a few percent and about 60%
// (PaLM's 46%, Llama 3's 38-43%, REFERENCE.md section 4); beyond 75% or
// under 5% the record's chips, time or compute are off, whatever its notes
// assumed.
constexpr double kLowestPlausibleUtilization = 0.05;
constexpr double kHighestPlausibleUtilization = 0.75;
// A figure "matches" another precision's peak when it implies a utilization
// Epoch's notes use (0.3 or 0.4, REFERENCE.md section 4), with some room.
constexpr double kLowestConventionalUtilization = 0.2;
constexpr double kHighestConventionalUtilization = 0.6;

std::string Percent(double fraction) { return absl::StrFormat("%.3g%%", fraction * 100); }

bool Near(double value, double target, double tolerance) {
  return target > 0 && std::fabs(value - target) / target <= tolerance;
}

// The verdict of a hardware-method figure beyond the tolerance.
void JudgeHardwareMethod(const TrainingRunInputs& in, double chip_hours, AuditCheck* check) {
  const double implied = check->recorded / (chip_hours * *in.peak_flops_per_chip * 3600.0);
  check->implied_utilization = implied;
  const std::string over = absl::StrCat(Num(chip_hours), " chip-hours at the ", in.peak_source);
  const bool plausible =
      implied >= kLowestPlausibleUtilization && implied <= kHighestPlausibleUtilization;
  if (in.utilization) {
    // The stated rate at another precision's peak (a note that multiplied
    // by the FP32 or non-tensor FP16 figure) is the record's convention.
    for (const auto& [peak, what] : in.other_peaks) {
      if (Near(check->recorded, chip_hours * peak * 3600.0 * *in.utilization, 0.1)) {
        check->verdict = AuditVerdict::kRecordSemantics;
        check->reason = absl::StrCat("the compute is the stated ", Percent(*in.utilization),
                                     " utilization of the ", what, ", not of the ", in.peak_source,
                                     ": the record's estimate used that precision's peak");
        return;
      }
    }
    check->verdict = AuditVerdict::kInputsDisagree;
    check->reason =
        absl::StrCat("the record states ", Percent(*in.utilization), " utilization (",
                     in.utilization_source, "), but its compute implies ", Percent(implied),
                     " over ", over, ": the utilization, chips, time or compute on record is off");
    return;
  }
  if (plausible) {
    check->verdict = AuditVerdict::kRecordSemantics;
    check->reason =
        absl::StrCat("the compute implies ", Percent(implied), " utilization over ", over,
                     ", a rate real runs reach; the record states none and the audit's default is ",
                     Percent(in.language_model ? 0.3 : 0.4),
                     ": the record's estimate assumed another rate, not a contradiction");
    return;
  }
  for (const auto& [peak, what] : in.other_peaks) {
    const double at_other = check->recorded / (chip_hours * peak * 3600.0);
    if (at_other >= kLowestConventionalUtilization && at_other <= kHighestConventionalUtilization) {
      check->verdict = AuditVerdict::kRecordSemantics;
      check->reason = absl::StrCat(
          "the compute implies ", Percent(implied), " of the ", in.peak_source, " but ",
          Percent(at_other), " of the ", what,
          ": the record's estimate used that precision's peak, not the one its format names");
      return;
    }
  }
  check->verdict = AuditVerdict::kInputsDisagree;
  check->reason =
      absl::StrCat("the compute implies ", Percent(implied), " utilization over ", over,
                   implied > 1 ? std::string(", more than the chips can do")
                   : implied > kHighestPlausibleUtilization
                       ? absl::StrCat(", above the ", Percent(kHighestPlausibleUtilization),
                                      " no recorded run exceeds")
                       : absl::StrCat(", below the ", Percent(kLowestPlausibleUtilization),
                                      " any recorded run reaches"),
                   ": the chip count, training time, hardware or compute on record is wrong");
}

// The verdict of an operation-counting figure beyond the tolerance.
void JudgeOperationCounting(const TrainingRunInputs& in, double tolerance, AuditCheck* check) {
  const double recorded = check->recorded;
  const double recomputed = check->recomputed;
  if (in.epochs && *in.epochs > 1 && Near(recorded, recomputed / *in.epochs, tolerance)) {
    check->verdict = AuditVerdict::kRecordSemantics;
    check->reason =
        absl::StrCat("the compute is one pass over the data: the record's ", Num(*in.epochs),
                     " epochs were not applied (or its dataset size already counts "
                     "them)");
    return;
  }
  if (in.total_parameters && in.parameters &&
      Near(recorded, recomputed * *in.total_parameters / *in.parameters, tolerance)) {
    check->verdict = AuditVerdict::kRecordSemantics;
    check->reason = absl::StrCat("the compute counts all ", Num(*in.total_parameters),
                                 " parameters of the mixture of experts; a token passes through ",
                                 Num(*in.parameters), " (6 x active x tokens)");
    return;
  }
  if (Near(recorded, recomputed / 3, tolerance)) {
    check->verdict = AuditVerdict::kRecordSemantics;
    check->reason =
        "the compute is 2 x parameters x tokens (a forward pass only), a third of 6 x N x D";
    return;
  }
  check->verdict = AuditVerdict::kInputsDisagree;
  check->reason = absl::StrCat("6 x parameters x tokens from the record's own fields is ",
                               absl::StrFormat("%.3g", recomputed / recorded),
                               " times its compute: the parameters, dataset size, epochs or "
                               "compute on record is wrong");
}

}  // namespace

Audit AuditTrainingRun(const TrainingRunInputs& inputs, const RecordedFigures& recorded,
                       double tolerance) {
  Audit audit;
  absl::StatusOr<TrainingRunFigures> run = ComputeTrainingRun(inputs);
  if (!run.ok()) {
    audit.skipped.push_back(absl::StrCat("every figure: ", run.status().message()));
    return audit;
  }
  auto find = [&](const std::string& name) -> const NamedFigure* {
    for (const NamedFigure& figure : run->figures) {
      if (figure.name == name) return &figure;
    }
    return nullptr;
  };
  auto check = [&](const std::string& figure, double on_record,
                   const NamedFigure& recomputed) -> AuditCheck& {
    AuditCheck c;
    c.figure = figure;
    c.recorded = on_record;
    c.recomputed = recomputed.value;
    c.relative_difference = std::fabs(recomputed.value - on_record) / on_record;
    c.verdict =
        c.relative_difference > tolerance ? AuditVerdict::kInputsDisagree : AuditVerdict::kAgrees;
    c.arithmetic = recomputed.arithmetic;
    audit.checks.push_back(std::move(c));
    return audit.checks.back();
  };

  if (recorded.chip_hours) {
    if (inputs.chips && inputs.training_hours) {
      const Figure recomputed = ChipHours(*inputs.chips, *inputs.training_hours);
      AuditCheck& c = check("training_chip_hours", *recorded.chip_hours,
                            {"chip_hours", recomputed.value, "hours", recomputed.arithmetic});
      if (c.verdict != AuditVerdict::kAgrees) {
        c.reason = absl::StrCat(
            Num(*inputs.chips), " chips x ", Num(*inputs.training_hours), " hours is ",
            absl::StrFormat("%.3g", c.recomputed / c.recorded), " times the recorded chip-hours",
            Near(*recorded.chip_hours, *inputs.training_hours, tolerance)
                ? ": the recorded chip-hours equal the wall-clock hours (the chips were not "
                  "multiplied in)"
                : ": the chip count, training time or chip-hours on record is wrong");
      }
    } else {
      audit.skipped.push_back("training_chip_hours: needs chips and training time");
    }
  }
  if (recorded.training_compute_flop) {
    // Compare with what the record says it used.
    const NamedFigure* counted = find("operation_counting_flop");
    const NamedFigure* hardware = find("hardware_method_flop");
    const NamedFigure* chosen = nullptr;
    if (recorded.method_operation_counting && recorded.method_hardware) {
      chosen = counted && hardware ? find("training_compute_flop") : nullptr;
    } else if (recorded.method_operation_counting) {
      chosen = counted;
    } else if (recorded.method_hardware) {
      chosen = hardware;
    }
    const bool uses_counting = recorded.method_operation_counting;
    const bool epochs_assumed = !inputs.epochs && !(inputs.steps && inputs.tokens_per_step);
    if (!recorded.method_operation_counting && !recorded.method_hardware) {
      audit.skipped.push_back(
          "training_compute_flop: established otherwise (reported, benchmarks, comparison)");
    } else if (uses_counting && counted != nullptr && epochs_assumed) {
      audit.skipped.push_back(
          "training_compute_flop: epochs not on record (one pass would be a guess)");
    } else if (chosen != nullptr) {
      AuditCheck& c = check("training_compute_flop", *recorded.training_compute_flop, *chosen);
      const bool uses_hardware = chosen != counted;
      if (c.verdict == AuditVerdict::kAgrees) {
        // Agrees.
      } else if (recorded.has_base_model && c.recomputed < c.recorded) {
        const bool finetune_matches =
            recorded.finetune_compute_flop &&
            Near(c.recomputed, *recorded.finetune_compute_flop, tolerance);
        c.verdict = finetune_matches ? AuditVerdict::kRecordSemantics : AuditVerdict::kCannotCheck;
        c.reason = absl::StrCat(
            "the model is fine-tuned from another one: its training compute adds the base "
            "model's, while the chips, time and data on record are the fine-tune's",
            finetune_matches ? " (which matches the record's fine-tune compute)" : "");
      } else if (uses_hardware && recorded.several_kinds_of_hardware) {
        c.verdict = AuditVerdict::kCannotCheck;
        c.reason =
            "the record trained on several kinds of chips; the hardware method here uses the "
            "first one's peak only";
      } else if (recorded.method_operation_counting && recorded.method_hardware && counted &&
                 hardware &&
                 (Near(c.recorded, counted->value, tolerance) ||
                  Near(c.recorded, hardware->value, tolerance))) {
        c.verdict = AuditVerdict::kRecordSemantics;
        c.reason = absl::StrCat("the record names both methods but its figure is ",
                                Near(c.recorded, counted->value, tolerance) ? "the operation count"
                                                                            : "the hardware "
                                                                              "method",
                                " alone, not their geometric mean");
      } else if (recorded.method_other) {
        c.verdict = AuditVerdict::kCannotCheck;
        c.reason =
            "the record combines this method with one the audit cannot redo (reported, "
            "benchmarks, comparison with other models, cost): only part of its figure is "
            "recomputed";
      } else if (chosen == hardware) {
        // The hardware method ran, so the run has chip-hours.
        JudgeHardwareMethod(inputs, *run->chip_hours, &c);
      } else if (chosen == counted) {
        JudgeOperationCounting(inputs, tolerance, &c);
      } else {
        c.reason =
            absl::StrCat("the geometric mean of the two methods is ",
                         absl::StrFormat("%.3g", c.recomputed / c.recorded),
                         " times the recorded compute: the record's inputs to one of them are off");
      }
    } else {
      audit.skipped.push_back("training_compute_flop: the record lacks the method's inputs");
    }
  }
  if (recorded.power_draw_watts) {
    if (const NamedFigure* power = find("power_draw_watts")) {
      AuditCheck& c = check("training_power_draw_watts", *recorded.power_draw_watts, *power);
      if (c.verdict != AuditVerdict::kAgrees) {
        // Everything but the TDP is the record's own (chips, date): the
        // recorded power says which TDP it used.
        const double implied_tdp = *inputs.tdp_watts * c.recorded / c.recomputed;
        const double ratio = implied_tdp / *inputs.tdp_watts;
        const bool another_tdp = ratio >= 0.5 && ratio <= 2;
        c.verdict = another_tdp ? AuditVerdict::kRecordSemantics : AuditVerdict::kInputsDisagree;
        c.reason = absl::StrCat(
            "the recorded power implies ", absl::StrFormat("%.0f", implied_tdp),
            " W per chip; the linked hardware record gives ", Num(*inputs.tdp_watts), " W",
            another_tdp ? ": the figure used another TDP for this chip (Epoch AI's hardware "
                          "table can differ from the datasheet a hardware record cites)"
                        : ": no TDP of this chip explains it; the chip count, the linked "
                          "hardware or the power on record is wrong");
      }
    } else {
      audit.skipped.push_back("training_power_draw_watts: needs the chips' TDP, count and date");
    }
  }
  for (AuditCheck& c : audit.checks) c.disagrees = c.verdict == AuditVerdict::kInputsDisagree;
  return audit;
}

}  // namespace modelatlas::estimator
