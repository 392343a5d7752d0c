#include "estimator-service/catalog/sources.h"

#include "absl/strings/str_cat.h"
#include "common/status/errors.h"

namespace modelatlas::estimator {
namespace {

// Why `snapshot` cannot answer yet: FAILED_PRECONDITION without one
// (--snapshot=false: never), UNAVAILABLE while it loads (soon), OK once
// loaded.
absl::Status SnapshotUnready(const CatalogSnapshot* snapshot, const std::string& address) {
  if (snapshot == nullptr) {
    return absl::FailedPreconditionError(
        "this estimator runs with --snapshot=false: answers over the whole catalog "
        "(ListRunnableModels, AuditCatalog) need its in-memory copy of the catalog; ask an "
        "estimator started with --snapshot=true");
  }
  if (!snapshot->loaded()) {
    return WithReason(absl::UnavailableError(absl::StrCat(
                          "the estimator has not loaded the catalog at ", address, " yet")),
                      "CATALOG_UNAVAILABLE");
  }
  return absl::OkStatus();
}

// The view of a source whose snapshot handed out records (`used`), and of
// the catalog calls it made (`live`).
RecordSource::View ViewOf(const CatalogSnapshot* snapshot, bool used, bool live) {
  RecordSource::View view;
  view.read_live = live;
  if (used && snapshot != nullptr) {
    view.from_snapshot = true;
    const CatalogSnapshot::Sync sync = snapshot->sync();
    view.snapshot_age = absl::Now() - sync.last_heard;
    view.snapshot_revision = sync.revision;
  }
  return view;
}

}  // namespace

RecordSource::View SnapshotRecords::view() const {
  return ViewOf(snapshot_, used_.load(std::memory_order_relaxed), false);
}

RecordSource::View SnapshotThenCatalog::view() const {
  return ViewOf(snapshot_, used_snapshot_.load(std::memory_order_relaxed),
                remote_.view().read_live);
}

absl::Status SnapshotRecords::Unready() const { return SnapshotUnready(snapshot_, address_); }

void SnapshotRecords::FindModel(const std::string& name, Done<common::v1::Model> done) {
  if (absl::Status unready = Unready(); !unready.ok()) return done(unready);
  std::optional<common::v1::Model> model = snapshot_->FindModel(name);
  if (!model.has_value()) return done(ResourceNotFoundError("Model", name));
  used_.store(true, std::memory_order_relaxed);
  // Answers say which catalog revision they used: the snapshot's.
  model->set_revision(snapshot_->revision());
  done(*std::move(model));
}

void SnapshotRecords::FindHardware(const std::vector<std::string>& names,
                                   Done<SharedRecords<common::v1::Hardware>> done) {
  if (absl::Status unready = Unready(); !unready.ok()) return done(unready);
  used_.store(true, std::memory_order_relaxed);
  if (names.empty()) return done(snapshot_->AllHardware());
  std::vector<common::v1::Hardware> found;
  for (const std::string& name : names) {
    std::optional<common::v1::Hardware> hw = snapshot_->FindHardware(name);
    if (!hw.has_value()) return done(ResourceNotFoundError("Hardware", name));
    found.push_back(*std::move(hw));
  }
  done(std::move(found));
}

bool SnapshotRecords::UseModel(const std::string& name, const ModelUser& use) {
  if (!loaded() || !snapshot_->UseModel(name, use)) return false;
  used_.store(true, std::memory_order_relaxed);
  return true;
}

absl::Status SnapshotRecords::ForEachModel(const ModelVisitor& visit) const {
  if (absl::Status unready = Unready(); !unready.ok()) return unready;
  used_.store(true, std::memory_order_relaxed);
  snapshot_->ForEachModel(visit);
  return absl::OkStatus();
}

absl::Status SnapshotRecords::ForEachModelIndexed(const IndexedModelVisitor& visit,
                                                  uint64_t* generation) const {
  if (absl::Status unready = Unready(); !unready.ok()) return unready;
  used_.store(true, std::memory_order_relaxed);
  snapshot_->ForEachModelIndexed(visit, generation);
  return absl::OkStatus();
}

void RemoteCatalogRecords::FindModel(const std::string& name, Done<common::v1::Model> done) {
  used_.store(true, std::memory_order_relaxed);
  client_->GetModel(caller_, name, std::move(done));
}

void RemoteCatalogRecords::FindHardware(const std::vector<std::string>& names,
                                        Done<SharedRecords<common::v1::Hardware>> done) {
  used_.store(true, std::memory_order_relaxed);
  client_->GetHardware(caller_, names, std::move(done));
}

absl::Status RemoteCatalogRecords::ForEachModel(const ModelVisitor& /*visit*/) const {
  return SnapshotUnready(nullptr, client_->address());
}

void SnapshotThenCatalog::FindModel(const std::string& name, Done<common::v1::Model> done) {
  if (loaded()) {
    std::optional<common::v1::Model> model = snapshot_->FindModel(name);
    if (model.has_value()) {
      model->set_revision(snapshot_->revision());
      used_snapshot_.store(true, std::memory_order_relaxed);
      return done(*std::move(model));
    }
  }
  remote_.FindModel(name, std::move(done));
}

void SnapshotThenCatalog::FindHardware(const std::vector<std::string>& names,
                                       Done<SharedRecords<common::v1::Hardware>> done) {
  if (loaded()) {
    if (names.empty()) {
      used_snapshot_.store(true, std::memory_order_relaxed);
      return done(snapshot_->AllHardware());
    }
    std::vector<common::v1::Hardware> found;
    for (const std::string& name : names) {
      std::optional<common::v1::Hardware> hw = snapshot_->FindHardware(name);
      if (!hw.has_value()) break;
      found.push_back(*std::move(hw));
    }
    if (found.size() == names.size()) {
      used_snapshot_.store(true, std::memory_order_relaxed);
      return done(std::move(found));
    }
  }
  remote_.FindHardware(names, std::move(done));
}

bool SnapshotThenCatalog::UseModel(const std::string& name, const ModelUser& use) {
  if (!loaded() || !snapshot_->UseModel(name, use)) return false;
  used_snapshot_.store(true, std::memory_order_relaxed);
  return true;
}

absl::Status SnapshotThenCatalog::ForEachModel(const ModelVisitor& visit) const {
  if (absl::Status unready = SnapshotUnready(snapshot_, address_); !unready.ok()) return unready;
  used_snapshot_.store(true, std::memory_order_relaxed);
  snapshot_->ForEachModel(visit);
  return absl::OkStatus();
}

absl::Status SnapshotThenCatalog::ForEachModelIndexed(const IndexedModelVisitor& visit,
                                                      uint64_t* generation) const {
  if (absl::Status unready = SnapshotUnready(snapshot_, address_); !unready.ok()) return unready;
  used_snapshot_.store(true, std::memory_order_relaxed);
  snapshot_->ForEachModelIndexed(visit, generation);
  return absl::OkStatus();
}

int64_t SnapshotThenCatalog::revision() const { return loaded() ? snapshot_->revision() : 0; }

}  // namespace modelatlas::estimator
