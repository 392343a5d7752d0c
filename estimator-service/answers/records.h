// The records an answer needs, read through a RecordSource in one place:
// a model (by catalog name, or one the request describes) and hardware (by
// name, every record, or the model's own training hardware). No gRPC.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "estimator-service/catalog/record_source.h"

namespace modelatlas::estimator {

struct RecordsWanted {
  // A catalog model by name; empty = none (or `given_model`).
  std::string model;
  // A model the request describes (no catalog read).
  std::optional<common::v1::Model> given_model;
  // Hardware records by name.
  std::vector<std::string> hardware;
  // Every hardware record (when `hardware` is empty).
  bool all_hardware = false;
  // The model's first training hardware (when `hardware` is empty).
  bool model_training_hardware = false;
  // Hardware that is not found is left out instead of failing the answer.
  bool hardware_optional = false;
};

struct Records {
  std::optional<common::v1::Model> model;
  SharedRecords<common::v1::Hardware> hardware;
};

// Reads what `wanted` names from `source` (kept alive until `done` runs);
// the first error (NOT_FOUND naming the record, UNAVAILABLE...) fails it.
void ReadRecords(std::shared_ptr<RecordSource> source, RecordsWanted wanted,
                 std::function<void(absl::StatusOr<Records>)> done);

// The first training hardware of a record: its linked record, else its name.
std::string TrainingHardwareOf(const common::v1::Model& model);

}  // namespace modelatlas::estimator
