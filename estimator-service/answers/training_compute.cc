#include "estimator-service/core/training_compute.h"

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status/errors.h"
#include "estimator-service/answers/conversions.h"
#include "estimator-service/answers/records.h"
#include "estimator-service/answers/training.h"

namespace modelatlas::estimator {
namespace {

using common::v1::Hardware;
using common::v1::Model;

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
  } else if (!tensor16.has && fp16.has && fp32.has && fp16.value < fp32.value) {
    // No tensor cores and FP16 slower than FP32 (Pascal's 1/64 rate: a GTX
    // 1080 Ti does 0.18 TFLOP/s in FP16, 11.3 in FP32): runs use FP32.
    order = {fp32};
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

bool IsKeywordAt(absl::string_view lower, size_t i) {
  for (absl::string_view word : {"utiliz", "utilis", "mfu", "hfu"}) {
    if (lower.substr(i, word.size()) == word) return true;
  }
  return false;
}

// The number written at [begin, end) of `text` as a utilization fraction:
// "0.38" or "38%" / "38 %" (then divided by 100); nothing for other numbers
// (counts, exponents such as 1e25, percentages over 100).
std::optional<double> UtilizationNumber(absl::string_view text, size_t begin, size_t end) {
  double value = 0;
  if (!absl::SimpleAtod(text.substr(begin, end - begin), &value)) return std::nullopt;
  size_t after = end;
  if (after < text.size() && (text[after] == 'e' || text[after] == 'E')) return std::nullopt;
  while (after < text.size() && text[after] == ' ') ++after;
  const bool percent = after < text.size() && text[after] == '%';
  if (percent) value /= 100;
  if (!(value > 0 && value <= 1)) return std::nullopt;
  if (!percent && text.substr(begin, end - begin).find('.') == absl::string_view::npos) {
    return std::nullopt;  // "1" or "2" alone is a count, not a rate
  }
  return value;
}

bool KnownPrecision(const std::string& precision) {
  const std::string p = absl::AsciiStrToLower(precision);
  return p.empty() || p == "fp32" || p == "tf32" || p == "fp16" || p == "bf16" || p == "fp8" ||
         p == "int8";
}

}  // namespace

std::optional<double> UtilizationStatedIn(absl::string_view notes) {
  const std::string lower = absl::AsciiStrToLower(notes);
  // Numbers in the text, as [begin, end) spans.
  std::vector<std::pair<size_t, size_t>> numbers;
  for (size_t i = 0; i < lower.size();) {
    if (absl::ascii_isdigit(static_cast<unsigned char>(lower[i])) &&
        (i == 0 || !absl::ascii_isalnum(static_cast<unsigned char>(lower[i - 1])))) {
      size_t end = i;
      while (end < lower.size() &&
             (absl::ascii_isdigit(static_cast<unsigned char>(lower[end])) ||
              (lower[end] == '.' && end + 1 < lower.size() &&
               absl::ascii_isdigit(static_cast<unsigned char>(lower[end + 1])))))
        ++end;
      numbers.emplace_back(i, end);
      i = end;
    } else {
      ++i;
    }
  }
  // For each mention of utilization, the nearest utilization-like number
  // within a short window (numbers and keywords are each visited in order:
  // linear overall).
  constexpr size_t kWindow = 60;
  std::optional<double> stated;
  size_t first_candidate = 0;
  for (size_t i = 0; i < lower.size(); ++i) {
    if (!IsKeywordAt(lower, i)) continue;
    while (first_candidate < numbers.size() && numbers[first_candidate].second + kWindow < i) {
      ++first_candidate;
    }
    std::optional<double> nearest;
    size_t nearest_distance = kWindow + 1;
    for (size_t n = first_candidate; n < numbers.size() && numbers[n].first <= i + kWindow; ++n) {
      const auto [begin, end] = numbers[n];
      const size_t distance = end <= i ? i - end : (begin >= i ? begin - i : 0);
      if (distance > kWindow || distance >= nearest_distance) continue;
      if (std::optional<double> value = UtilizationNumber(lower, begin, end)) {
        nearest = value;
        nearest_distance = distance;
      }
    }
    if (!nearest) continue;
    if (stated && std::fabs(*stated - *nearest) > 1e-9) return std::nullopt;  // two rates
    stated = nearest;
  }
  return stated;
}

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
    // 6 FLOP per parameter per token counts the parameters a token passes
    // through: for a mixture of experts the active ones (Epoch's DeepSeek-V3
    // record: 6 x 37e9 x 14.8e12), not the total (671e9, 18 times more).
    absl::StatusOr<double> total = ParametersOfModel(*model);
    absl::StatusOr<double> active = ActiveParametersOfModel(*model);
    if (active.ok()) in.parameters = *active;
    if (total.ok() && active.ok() && *active < *total) in.total_parameters = *total;
    in.language_model = IsLanguageModel(*model);
    // Epoch's dataset sizes are tokens for language models; for images or
    // games 6ND does not apply.
    if (in.language_model && !model->training_dataset_size_datapoints().empty()) {
      in.dataset_tokens = model->training_dataset_size_datapoints(0);
    }
    if (model->has_epochs()) in.epochs = model->epochs();
    // Steps x tokens per step, where the record holds both (Epoch's batch
    // size is tokens for language models): the seed pages' arithmetic.
    if (in.language_model && model->has_training_steps() && model->has_batch_size()) {
      in.steps = model->training_steps();
      in.tokens_per_step = model->batch_size();
    }
    if (model->has_hardware_quantity()) in.chips = model->hardware_quantity();
    if (model->has_training_time_hours()) in.training_hours = model->training_time_hours();
    if (model->has_training_chip_hours()) in.chip_hours = model->training_chip_hours();
    if (model->has_hardware_utilization_mfu()) {
      in.utilization = model->hardware_utilization_mfu();
      in.utilization_source = "the record's MFU";
    } else if (model->has_hardware_utilization_assumed()) {
      // The rate the record's own compute estimate assumed (its notes'
      // "assumed utilization rate", kept as a figure since notes are not
      // shipped): the record's figure comes back from the record alone.
      in.utilization = model->hardware_utilization_assumed();
      in.utilization_source = "the utilization the record's estimate assumed";
    } else {
      // A rate the record's notes state comes before the default (Epoch's
      // notes use 0.3 and 0.4 whatever the domain).
      for (const std::string* notes :
           {&model->training_compute_notes(), &model->utilization_notes()}) {
        if (std::optional<double> stated = UtilizationStatedIn(*notes)) {
          in.utilization = *stated;
          in.utilization_source = "stated in the record's notes";
          break;
        }
      }
    }
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
    // The chip's other peaks, for the audit's "another precision" verdict.
    const auto& peaks = hardware->peak();
    const std::pair<bool, std::pair<double, const char*>> others[] = {
        {peaks.has_tensor_fp16_bf16_flops(), {peaks.tensor_fp16_bf16_flops(), "FP16/BF16 tensor"}},
        {peaks.has_fp16_flops(), {peaks.fp16_flops(), "FP16 (non-tensor)"}},
        {peaks.has_fp32_flops(), {peaks.fp32_flops(), "FP32"}},
        {peaks.has_tf32_flops(), {peaks.tf32_flops(), "TF32 tensor"}},
        {peaks.has_fp8_flops(), {peaks.fp8_flops(), "FP8 tensor"}},
        {peaks.has_int8_ops(), {peaks.int8_ops(), "INT8"}}};
    for (const auto& [has, peak] : others) {
      if (!has || !(peak.first > 0)) continue;
      if (in.peak_flops_per_chip && peak.first == *in.peak_flops_per_chip) continue;
      bool seen = false;
      for (const auto& known : in.other_peaks) seen |= known.first == peak.first;
      if (!seen) {
        in.other_peaks.emplace_back(
            peak.first, absl::StrCat(hardware->display_name(), ", ", peak.second, " peak"));
      }
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
  if (request.has_parameters()) in.total_parameters.reset();
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
  if (request.has_utilization()) in.utilization_source.clear();
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

void AnswerTrainingCompute(std::shared_ptr<RecordSource> source,
                           const v1::EstimateTrainingComputeRequest& request,
                           AnswerDone<v1::EstimateTrainingComputeResponse> done) {
  // The hardware named by the request must exist; the record's may not.
  RecordsWanted wanted;
  wanted.model = request.model();
  if (!request.inputs().hardware().empty()) {
    wanted.hardware.push_back(request.inputs().hardware());
  } else {
    wanted.model_training_hardware = true;
    wanted.hardware_optional = true;
  }
  ReadRecords(std::move(source), std::move(wanted),
              [&request, done = std::move(done)](absl::StatusOr<Records> records) {
                if (!records.ok()) return done(records.status());
                done(EstimateTrainingComputeFor(
                    records->model ? &*records->model : nullptr,
                    records->hardware.empty() ? nullptr : &records->hardware.front(), request));
              });
}

}  // namespace modelatlas::estimator
