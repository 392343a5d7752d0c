// Training compute the way Epoch AI establishes it, and the seed pages show
// it (../shared/docs/REFERENCE.md section 4; docs/FORMULAS.md, "Training"):
// operation counting, the hardware method, their geometric mean, epochs,
// tokens from bytes, chip-hours and the training power draw. Each figure
// comes with its arithmetic.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace modelatlas::estimator {

struct Figure {
  double value = 0;
  std::string arithmetic;
};

// 6 FLOP per parameter per token: 6 x parameters x tokens x epochs, FLOP.
// `parameters` are those a token passes through; for a mixture of experts
// give the active ones and the model's total as `total_parameters` (> 0),
// which the arithmetic then names ("37e9 active parameters (of 671e9)").
absl::StatusOr<Figure> OperationCountingFlop(double parameters, double tokens, double epochs = 1,
                                             double total_parameters = 0);

// chips x peak FLOP/s x hours x 3600 x utilization, FLOP.
absl::StatusOr<Figure> HardwareMethodFlop(double chips, double peak_flops_per_chip, double hours,
                                          double utilization);

// sqrt(a x b): how the seed pages combine the two methods.
Figure GeometricMean(double a, double b);

// steps x tokens per batch / dataset tokens.
absl::StatusOr<Figure> Epochs(double steps, double tokens_per_batch, double dataset_tokens);

// bytes x (1 word / 5 bytes) x (4 tokens / 3 words).
Figure TokensFromBytes(double bytes);

// chips x wall-clock hours.
Figure ChipHours(double chips, double hours);

// Power usage effectiveness of data centres in a year (a fractional year,
// e.g. 2021.22): 1.12474 x exp(-0.0081336 x (year - 2020)).
double PowerUsageEffectiveness(double fractional_year);

// The fractional year of a date: year + (day of year - 1) / 365.25.
double FractionalYear(int year, int month, int day);

// TDP x chips x 1.82 (server overhead, when more than one chip) x PUE, W.
absl::StatusOr<Figure> TrainingPowerDrawWatts(double tdp_watts, double chips,
                                              double fractional_year);

}  // namespace modelatlas::estimator
