// Where answers read catalog records: find a model, find hardware, iterate
// the whole catalog. The in-memory snapshot, the remote catalog and the
// snapshot-then-catalog fallback implement it (catalog/sources.h); tests use
// an in-memory fake. No gRPC here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "estimator-service/catalog/shared_records.h"
#include "modelatlas/common/v1/hardware.pb.h"
#include "modelatlas/common/v1/model.pb.h"

namespace modelatlas::estimator {

class RecordSource {
 public:
  template <typename T>
  using Done = std::function<void(absl::StatusOr<T>)>;
  using ModelVisitor = std::function<void(const common::v1::Model&)>;

  virtual ~RecordSource() = default;

  // A model by resource name or display name, its revision set to the one
  // the answer uses; NOT_FOUND naming it. `done` may run on another thread,
  // or before FindModel returns.
  virtual void FindModel(const std::string& name, Done<common::v1::Model> done) = 0;

  // The named hardware records in order, or every record when `names` is
  // empty; NOT_FOUND naming a missing one.
  virtual void FindHardware(const std::vector<std::string>& names,
                            Done<SharedRecords<common::v1::Hardware>> done) = 0;

  // Calls `use` with the model FindModel would find, the catalog revision
  // and the record's architecture check as the source computed it once, when
  // the record was loaded (ValidateModelArchitecture(model, "architecture"),
  // answers/conversions.h: the memory answer's check), without copying the
  // record (keep `use` quick); false when this source cannot (the caller then
  // uses FindModel and checks the record itself).
  using ModelUser = std::function<void(const common::v1::Model&, int64_t revision,
                                       const absl::Status& architecture_check)>;
  virtual bool UseModel(const std::string& /*name*/, const ModelUser& /*use*/) { return false; }

  // Calls `visit` for every model of the catalog (keep it quick);
  // UNAVAILABLE (reason CATALOG_UNAVAILABLE) when this source does not hold
  // the whole catalog.
  virtual absl::Status ForEachModel(const ModelVisitor& visit) const = 0;

  // ForEachModel with each model's position in the walk and a generation
  // naming this state of the models (the same generation, the same models
  // at the same positions); 0 = unknown, keep nothing (the default).
  using IndexedModelVisitor = std::function<void(const common::v1::Model&, size_t index)>;
  virtual absl::Status ForEachModelIndexed(const IndexedModelVisitor& visit,
                                           uint64_t* generation) const {
    *generation = 0;
    size_t index = 0;
    return ForEachModel([&](const common::v1::Model& model) { visit(model, index++); });
  }

  // The catalog revision ForEachModel reflects; 0 when unknown.
  virtual int64_t revision() const = 0;

  // How current the records this source has handed out so far were, for the
  // answer's provenance (CatalogView): whether any came from the snapshot (its
  // age and revision now) and whether any were read live from the catalog.
  struct View {
    bool from_snapshot = false;
    // Time since the snapshot last heard from the catalog.
    absl::Duration snapshot_age;
    int64_t snapshot_revision = 0;
    bool read_live = false;
  };
  virtual View view() const { return {}; }
};

}  // namespace modelatlas::estimator
