#include "estimator-service/answers/newer_models.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/query/filter.h"
#include "estimator-service/answers/runnable.h"

namespace modelatlas::estimator {
namespace {

// A filter string literal: quotes and backslashes dropped (no domain name
// has them; the filter's own escapes are not needed for any).
std::string Literal(std::string text) {
  text.erase(std::remove_if(text.begin(), text.end(), [](char c) { return c == '"' || c == '\\'; }),
             text.end());
  return text;
}

}  // namespace

const v1::HardwarePlan* ReferenceCard(const v1::PlanInferenceResponse& plan) {
  const v1::HardwarePlan* smallest = nullptr;
  for (const v1::HardwarePlan& p : plan.plans()) {
    if (p.fits_on_one_card() &&
        (smallest == nullptr || p.usable_bytes_per_card() < smallest->usable_bytes_per_card())) {
      smallest = &p;
    }
  }
  if (smallest != nullptr) return smallest;
  for (const v1::HardwarePlan& p : plan.plans()) {
    if (p.fits()) return &p;
  }
  return nullptr;
}

std::string NewerModelsFilter(const common::v1::Model& model) {
  if (!model.has_parameters() || model.parameters() <= 0 || !model.has_publication_date() ||
      model.publication_date().year() == 0) {
    return "";
  }
  const auto& date = model.publication_date();
  std::string filter = absl::StrFormat(
      "publication_date > \"%04d-%02d-%02d\" AND parameters >= %.17g AND parameters <= %.17g",
      date.year(), std::max(1, date.month()), std::max(1, date.day()), model.parameters() * 0.5,
      model.parameters() * 1.5);
  // The same kind of model: a language model is compared with language models.
  if (!model.domains().empty()) {
    absl::StrAppend(&filter, " AND domains:\"", Literal(model.domains(0)), "\"");
  }
  return filter;
}

absl::Status AddNewerModels(const RecordSource& source, const common::v1::Model& model,
                            const SharedRecords<common::v1::Hardware>& hardware,
                            const ResolvedWorkload& workload, v1::PlanInferenceResponse* response) {
  v1::NewerModels* newer = response->mutable_newer_models();
  const std::string filter_text = NewerModelsFilter(model);
  if (filter_text.empty()) {
    newer->set_not_selected_reason(
        "the model has no parameter count or publication date on record");
    return absl::OkStatus();
  }
  const v1::HardwarePlan* card = ReferenceCard(*response);
  if (card == nullptr) {
    newer->set_not_selected_reason("no card on record runs the model at this workload");
    return absl::OkStatus();
  }
  const common::v1::Hardware* record = nullptr;
  for (const common::v1::Hardware& hw : hardware) {
    if (hw.name() == card->hardware()) {
      record = &hw;
      break;
    }
  }
  if (record == nullptr) {
    newer->set_not_selected_reason("the reference card's record was not read");
    return absl::OkStatus();
  }
  newer->set_hardware(card->hardware());
  newer->set_display_name(card->display_name());
  newer->set_cards(card->cards());
  newer->set_required_bytes_per_card(card->required_bytes_per_card());
  const auto& date = model.publication_date();
  newer->set_selection(absl::StrCat(
      model.domains().empty() ? "open-weight models"
                              : absl::StrCat(model.domains(0), " models with open weights"),
      " published after ",
      absl::StrFormat("%04d-%02d-%02d", date.year(), std::max(1, date.month()),
                      std::max(1, date.day())),
      " with ", absl::StrFormat("%.4g", model.parameters() * 0.5), " to ",
      absl::StrFormat("%.4g", model.parameters() * 1.5), " parameters that run on ", card->cards(),
      " x ", card->display_name(), " at the same workload (",
      // The request's workload, not the reference model's (its maximum
      // context is not theirs).
      WorkloadStatement(workload),
      workload.weight_format_defaulted
          ? "; each model's weights as published where its record names a quantized checkpoint"
          : "",
      ") in no more than ",
      absl::StrFormat("%.2f", static_cast<double>(card->required_bytes_per_card()) / (1 << 30)),
      " GiB per card; most parameters first"));

  absl::StatusOr<query::Filter> filter =
      query::Filter::Parse(filter_text, common::v1::Model::descriptor());
  if (!filter.ok()) return filter.status();
  absl::StatusOr<RunnableRows> rows =
      RunnableModelsOn(source, *record, card->cards(), workload, *filter, /*hypothetical=*/false);
  if (!rows.ok()) return rows.status();
  std::vector<v1::RunnableModel> kept;
  v1::ListRunnableModelsResponse chunk;
  while (rows->Fill(&chunk)) {
    for (v1::RunnableModel& row : *chunk.mutable_models()) {
      if (row.model() != model.name() &&
          row.required_bytes_per_card() <= card->required_bytes_per_card()) {
        kept.push_back(std::move(row));
      }
    }
    chunk.Clear();
  }
  std::sort(kept.begin(), kept.end(), [](const v1::RunnableModel& a, const v1::RunnableModel& b) {
    if (a.parameters() != b.parameters()) return a.parameters() > b.parameters();
    return a.display_name() < b.display_name();
  });
  if (kept.size() > kMaxNewerModels) kept.resize(kMaxNewerModels);
  for (v1::RunnableModel& row : kept) *newer->add_models() = std::move(row);
  return absl::OkStatus();
}

}  // namespace modelatlas::estimator
