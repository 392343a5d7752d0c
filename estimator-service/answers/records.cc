#include "estimator-service/answers/records.h"

#include <utility>

namespace modelatlas::estimator {
namespace {

void ReadHardware(std::shared_ptr<RecordSource> source, const RecordsWanted& wanted,
                  Records records, std::function<void(absl::StatusOr<Records>)> done) {
  std::vector<std::string> names = wanted.hardware;
  if (names.empty() && wanted.model_training_hardware && records.model.has_value()) {
    const std::string own = TrainingHardwareOf(*records.model);
    if (!own.empty()) names.push_back(own);
  }
  if (names.empty() && !wanted.all_hardware) return done(std::move(records));
  const bool optional = wanted.hardware_optional;
  RecordSource* reader = source.get();
  reader->FindHardware(
      names,
      [source = std::move(source), optional, records = std::move(records),
       done = std::move(done)](absl::StatusOr<SharedRecords<common::v1::Hardware>> found) mutable {
        if (found.ok()) {
          records.hardware = *std::move(found);
          return done(std::move(records));
        }
        if (optional && absl::IsNotFound(found.status())) return done(std::move(records));
        done(found.status());
      });
}

}  // namespace

void ReadRecords(std::shared_ptr<RecordSource> source, RecordsWanted wanted,
                 std::function<void(absl::StatusOr<Records>)> done) {
  Records records;
  if (wanted.given_model.has_value() || wanted.model.empty()) {
    records.model = std::move(wanted.given_model);
    return ReadHardware(std::move(source), wanted, std::move(records), std::move(done));
  }
  RecordSource* reader = source.get();
  const std::string name = wanted.model;
  reader->FindModel(name,
                    [source = std::move(source), wanted = std::move(wanted),
                     done = std::move(done)](absl::StatusOr<common::v1::Model> model) mutable {
                      if (!model.ok()) return done(model.status());
                      Records found;
                      found.model = *std::move(model);
                      ReadHardware(std::move(source), wanted, std::move(found), std::move(done));
                    });
}

std::string TrainingHardwareOf(const common::v1::Model& model) {
  for (int i = 0; i < model.training_hardware_size(); ++i) {
    if (i < model.training_hardware_refs_size() && !model.training_hardware_refs(i).empty()) {
      return model.training_hardware_refs(i);
    }
    return model.training_hardware(i);
  }
  return "";
}

}  // namespace modelatlas::estimator
