#include "estimator-service/core/training_compute.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status/errors.h"

namespace modelatlas::estimator {
namespace {

std::string Num(double value) { return absl::StrFormat("%.10g", value); }

// Every input is a count, a size, a time or a fraction: finite and positive.
void CheckPositive(FieldViolations* violations, const char* field, double value) {
  if (!std::isfinite(value) || value <= 0) {
    violations->Add(field, absl::StrCat("must be a positive finite number, got ", value));
  }
}

}  // namespace

absl::StatusOr<Figure> OperationCountingFlop(double parameters, double tokens, double epochs,
                                             double total_parameters) {
  FieldViolations v;
  CheckPositive(&v, "parameters", parameters);
  CheckPositive(&v, "tokens", tokens);
  CheckPositive(&v, "epochs", epochs);
  if (absl::Status s = v.ToStatus(); !s.ok()) return s;
  const double flop = 6 * parameters * tokens * epochs;
  const bool active = total_parameters > parameters;
  return Figure{flop, absl::StrCat("6 FLOP / token / parameter x ", Num(parameters),
                                   active ? absl::StrCat(" active parameters (of ",
                                                         Num(total_parameters), " total)")
                                          : std::string(" parameters"),
                                   " x ", Num(tokens), " tokens",
                                   epochs == 1 ? "" : absl::StrCat(" x ", Num(epochs), " epochs"),
                                   " = ", absl::StrFormat("%.6g", flop), " FLOP")};
}

absl::StatusOr<Figure> HardwareMethodFlop(double chips, double peak_flops_per_chip, double hours,
                                          double utilization) {
  FieldViolations v;
  CheckPositive(&v, "chips", chips);
  CheckPositive(&v, "peak_flops", peak_flops_per_chip);
  CheckPositive(&v, "hours", hours);
  CheckPositive(&v, "utilization", utilization);
  if (utilization > 1) v.Add("utilization", absl::StrCat("is a fraction, got ", utilization));
  if (absl::Status s = v.ToStatus(); !s.ok()) return s;
  const double flop = chips * peak_flops_per_chip * hours * 3600 * utilization;
  return Figure{flop, absl::StrCat(Num(chips), " chips x ", Num(peak_flops_per_chip), " FLOP/s x ",
                                   Num(hours), " hours x 3600 s/hour x ", Num(utilization),
                                   " utilization = ", absl::StrFormat("%.6g", flop), " FLOP")};
}

Figure GeometricMean(double a, double b) {
  const double mean = std::sqrt(a * b);
  return Figure{mean,
                absl::StrCat("sqrt(", absl::StrFormat("%.6g", a), " x ", absl::StrFormat("%.6g", b),
                             ") = ", absl::StrFormat("%.7g", mean))};
}

absl::StatusOr<Figure> Epochs(double steps, double tokens_per_batch, double dataset_tokens) {
  FieldViolations v;
  CheckPositive(&v, "steps", steps);
  CheckPositive(&v, "tokens_per_batch", tokens_per_batch);
  CheckPositive(&v, "dataset_tokens", dataset_tokens);
  if (absl::Status s = v.ToStatus(); !s.ok()) return s;
  const double epochs = steps * tokens_per_batch / dataset_tokens;
  return Figure{epochs, absl::StrCat(Num(steps), " steps x ", Num(tokens_per_batch),
                                     " tokens per batch / ", Num(dataset_tokens),
                                     " tokens = ", absl::StrFormat("%.6g", epochs), " epochs")};
}

Figure TokensFromBytes(double bytes) {
  const double tokens = bytes / 5 * 4 / 3;
  return Figure{tokens, absl::StrCat(Num(bytes),
                                     " bytes x (1 word / 5 bytes) x (4 tokens / 3 "
                                     "words) = ",
                                     absl::StrFormat("%.6g", tokens), " tokens")};
}

Figure ChipHours(double chips, double hours) {
  return Figure{chips * hours, absl::StrCat(Num(chips), " chips x ", Num(hours),
                                            " hours = ", Num(chips * hours), " chip-hours")};
}

double PowerUsageEffectiveness(double fractional_year) {
  return 1.12474 * std::exp(-0.0081336 * (fractional_year - 2020));
}

double FractionalYear(int year, int month, int day) {
  static constexpr int kDaysBefore[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  const int day_of_year = kDaysBefore[(month - 1) % 12] + day + (leap && month > 2 ? 1 : 0);
  return year + (day_of_year - 1) / 365.25;
}

absl::StatusOr<Figure> TrainingPowerDrawWatts(double tdp_watts, double chips,
                                              double fractional_year) {
  FieldViolations v;
  CheckPositive(&v, "tdp_watts", tdp_watts);
  CheckPositive(&v, "chips", chips);
  if (!std::isfinite(fractional_year) || fractional_year < 1950 || fractional_year > 2100) {
    v.Add("year", absl::StrCat("must be between 1950 and 2100, got ", fractional_year));
  }
  if (absl::Status s = v.ToStatus(); !s.ok()) return s;
  const double overhead = chips > 1 ? 1.82 : 1.0;
  const double pue = PowerUsageEffectiveness(fractional_year);
  const double watts = tdp_watts * chips * overhead * pue;
  return Figure{watts,
                absl::StrCat(Num(tdp_watts), " W TDP x ", Num(chips), " chips x ", Num(overhead),
                             " server overhead x ", absl::StrFormat("%.5f", pue), " PUE (",
                             absl::StrFormat("%.2f", fractional_year),
                             ") = ", absl::StrFormat("%.1f", watts), " W")};
}

}  // namespace modelatlas::estimator
