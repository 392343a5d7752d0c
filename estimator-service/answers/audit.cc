#include "estimator-service/answers/audit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/query/filter.h"
#include "common/status/errors.h"
#include "estimator-service/answers/model_sources.h"
#include "estimator-service/answers/records.h"
#include "estimator-service/answers/training.h"
#include "estimator-service/catalog/record_table.h"
#include "estimator-service/core/training_run.h"

namespace modelatlas::estimator {
namespace {

using common::v1::Hardware;
using common::v1::Model;

constexpr double kDefaultTolerance = 0.1;

absl::StatusOr<double> ToleranceOf(double tolerance) {
  if (!std::isfinite(tolerance) || tolerance < 0) {
    return InvalidFieldError("tolerance", "must be a non-negative fraction, or 0 for 0.1");
  }
  return tolerance > 0 ? tolerance : kDefaultTolerance;
}

v1::AuditVerdict ToProto(AuditVerdict verdict) {
  switch (verdict) {
    case AuditVerdict::kAgrees:
      return v1::AUDIT_VERDICT_AGREES;
    case AuditVerdict::kInputsDisagree:
      return v1::AUDIT_VERDICT_INPUTS_DISAGREE;
    case AuditVerdict::kRecordSemantics:
      return v1::AUDIT_VERDICT_RECORD_SEMANTICS;
    case AuditVerdict::kCannotCheck:
      return v1::AUDIT_VERDICT_CANNOT_CHECK;
  }
  return v1::AUDIT_VERDICT_UNSPECIFIED;
}

}  // namespace

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
    recorded.method_other |= method != common::v1::ESTIMATION_METHOD_OPERATION_COUNTING &&
                             method != common::v1::ESTIMATION_METHOD_HARDWARE &&
                             method != common::v1::ESTIMATION_METHOD_UNSPECIFIED;
  }
  recorded.has_base_model = !model.base_models().empty();
  if (model.has_finetune_compute_flop()) {
    recorded.finetune_compute_flop = model.finetune_compute_flop();
  }
  recorded.several_kinds_of_hardware = model.training_hardware_size() > 1;
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
    out->set_verdict(ToProto(check.verdict));
    out->set_reason(check.reason);
    if (check.implied_utilization) out->set_implied_utilization(*check.implied_utilization);
    if (check.disagrees) response.set_disagreements(response.disagreements() + 1);
  }
  for (const std::string& skipped : audit.skipped) response.add_skipped(skipped);
  return response;
}

absl::StatusOr<std::vector<v1::AuditCatalogResponse>> AuditModels(
    const std::vector<Model>& models, const HardwareLookup& lookup,
    const v1::AuditCatalogRequest& request, double tolerance, int64_t revision) {
  std::vector<v1::AuditCatalogResponse> out;
  v1::AuditSummary summary;
  struct Tally {
    int64_t on_record = 0, checked = 0, disagreements = 0, record_semantics = 0, cannot_check = 0;
    std::vector<double> differences;
  };
  std::map<std::string, Tally> tallies;
  for (const Model& model : models) {
    if (summary.models() % kRecordsPerAbandonCheck == 0) {
      if (absl::Status abandoned = CallAbandoned(absl::StrCat(
              "auditing the catalog (", summary.models(), " of ", models.size(), " audited)"));
          !abandoned.ok()) {
        return abandoned;
      }
    }
    summary.set_models(summary.models() + 1);
    tallies["training_chip_hours"].on_record += model.has_training_chip_hours();
    tallies["training_compute_flop"].on_record += model.has_training_compute_flop();
    tallies["training_power_draw_watts"].on_record += model.has_training_power_draw_watts();
    v1::AuditModelResponse audit = AuditRecord(model, lookup, tolerance);
    for (const v1::AuditCheck& check : audit.checks()) {
      Tally& tally = tallies[check.figure()];
      ++tally.checked;
      tally.disagreements += check.disagrees();
      tally.record_semantics += check.verdict() == v1::AUDIT_VERDICT_RECORD_SEMANTICS;
      tally.cannot_check += check.verdict() == v1::AUDIT_VERDICT_CANNOT_CHECK;
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
    entry->set_record_semantics(tally.record_semantics);
    entry->set_cannot_check(tally.cannot_check);
    if (!tally.differences.empty()) {
      auto middle = tally.differences.begin() + tally.differences.size() / 2;
      std::nth_element(tally.differences.begin(), middle, tally.differences.end());
      entry->set_median_relative_difference(*middle);
    }
  }
  summary.set_tolerance(tolerance);
  summary.set_catalog_revision(revision);
  *out.emplace_back().mutable_summary() = std::move(summary);
  return out;
}

void AnswerAuditModel(std::shared_ptr<RecordSource> source, const v1::AuditModelRequest& request,
                      AnswerDone<v1::AuditModelResponse> done) {
  absl::StatusOr<double> tolerance = ToleranceOf(request.tolerance());
  if (!tolerance.ok()) return done(tolerance.status());
  RecordsWanted wanted;
  wanted.model = request.model();
  wanted.model_training_hardware = true;
  wanted.hardware_optional = true;
  ReadRecords(std::move(source), std::move(wanted),
              [tolerance = *tolerance, done = std::move(done)](absl::StatusOr<Records> records) {
                if (!records.ok()) return done(records.status());
                std::optional<Hardware> found;
                if (!records->hardware.empty()) found = records->hardware.front();
                done(AuditRecord(
                    *records->model, [found](const std::string&) { return found; }, tolerance));
              });
}

void AnswerAuditCatalog(std::shared_ptr<RecordSource> source,
                        const v1::AuditCatalogRequest& request,
                        AnswerDone<std::vector<v1::AuditCatalogResponse>> done) {
  absl::StatusOr<double> tolerance = ToleranceOf(request.tolerance());
  if (!tolerance.ok()) return done(tolerance.status());
  absl::StatusOr<query::Filter> filter =
      query::Filter::Parse(request.filter(), Model::descriptor());
  if (!filter.ok()) return done(filter.status());
  // Copied out first: hardware lookups may take the lock ForEachModel holds.
  std::vector<Model> models;
  absl::Status abandoned;
  int visits = 0;
  if (absl::Status visited = source->ForEachModel([&](const Model& model) {
        if (!abandoned.ok()) return;
        if (visits++ % kRecordsPerAbandonCheck == 0) {
          abandoned =
              CallAbandoned(absl::StrCat("auditing the catalog (", visits - 1, " records read)"));
          if (!abandoned.ok()) return;
        }
        if (filter->Matches(model)) models.push_back(model);
      });
      !visited.ok()) {
    return done(visited);
  }
  if (!abandoned.ok()) return done(abandoned);
  const int64_t revision = source->revision();
  RecordSource* reader = source.get();
  reader->FindHardware({}, [source = std::move(source), &request, tolerance = *tolerance, revision,
                            models = std::move(models), done = std::move(done)](
                               absl::StatusOr<SharedRecords<Hardware>> hardware) {
    if (!hardware.ok()) return done(hardware.status());
    auto table = std::make_shared<RecordTable<Hardware>>();
    for (const Hardware& hw : *hardware) table->Put(hw.name(), hw);
    const HardwareLookup lookup = [table](const std::string& name) -> std::optional<Hardware> {
      const Hardware* found = table->Find(name);
      if (found == nullptr) return std::nullopt;
      return *found;
    };
    done(AuditModels(models, lookup, request, tolerance, revision));
  });
}

}  // namespace modelatlas::estimator
