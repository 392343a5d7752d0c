// The audit answers: a record's derived figures recomputed from its own
// inputs (and its linked hardware records), for one model or the whole
// catalog. No gRPC.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "estimator-service/answers/inference.h"
#include "estimator-service/catalog/record_source.h"
#include "modelatlas/common/v1/hardware.pb.h"
#include "modelatlas/common/v1/model.pb.h"
#include "modelatlas/estimator/v1/estimator_service.pb.h"

namespace modelatlas::estimator {

// The hardware a record trained on, if the records know it.
using HardwareLookup = std::function<std::optional<common::v1::Hardware>(const std::string& name)>;

// Recomputes the record's chip-hours, compute and power from its own
// inputs (and its linked hardware records).
v1::AuditModelResponse AuditRecord(const common::v1::Model& model, const HardwareLookup& hardware,
                                   double tolerance);

// `models` audited (those with checks, or with disagreements only when the
// request says so), then the summary by figure; CANCELLED or
// DEADLINE_EXCEEDED once the call is abandoned (CallAbandoned).
absl::StatusOr<std::vector<v1::AuditCatalogResponse>> AuditModels(
    const std::vector<common::v1::Model>& models, const HardwareLookup& lookup,
    const v1::AuditCatalogRequest& request, double tolerance, int64_t revision);

// AuditModel: the record and its training hardware (when found).
void AnswerAuditModel(std::shared_ptr<RecordSource> source, const v1::AuditModelRequest& request,
                      AnswerDone<v1::AuditModelResponse> done);

// AuditCatalog: every model of the catalog `source` holds that matches the
// filter (UNAVAILABLE when it holds none).
void AnswerAuditCatalog(std::shared_ptr<RecordSource> source,
                        const v1::AuditCatalogRequest& request,
                        AnswerDone<std::vector<v1::AuditCatalogResponse>> done);

}  // namespace modelatlas::estimator
