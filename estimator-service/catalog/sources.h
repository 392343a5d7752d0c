// The RecordSource implementations: the in-memory snapshot, the remote
// catalog (one call per record, carrying the caller's deadline), and the
// snapshot with the catalog as fallback, which the service uses.
#pragma once

#include <grpcpp/support/callback_common.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "estimator-service/catalog/catalog_client.h"
#include "estimator-service/catalog/record_source.h"
#include "estimator-service/catalog/snapshot.h"

namespace modelatlas::estimator {

// Records from the snapshot only, read synchronously (every `done` runs
// before the call returns); NOT_FOUND for what it does not hold, UNAVAILABLE
// (reason CATALOG_UNAVAILABLE, naming the catalog at `address`) while it is
// not loaded. `snapshot` may be null.
class SnapshotRecords : public RecordSource {
 public:
  SnapshotRecords(const CatalogSnapshot* snapshot, std::string address)
      : snapshot_(snapshot), address_(std::move(address)) {}
  void FindModel(const std::string& name, Done<common::v1::Model> done) override;
  void FindHardware(const std::vector<std::string>& names,
                    Done<SharedRecords<common::v1::Hardware>> done) override;
  bool UseModel(const std::string& name, const ModelUser& use) override;
  absl::Status ForEachModel(const ModelVisitor& visit) const override;
  absl::Status ForEachModelIndexed(const IndexedModelVisitor& visit,
                                   uint64_t* generation) const override;
  int64_t revision() const override { return loaded() ? snapshot_->revision() : 0; }
  View view() const override;

 private:
  bool loaded() const { return snapshot_ != nullptr && snapshot_->loaded(); }
  // FAILED_PRECONDITION without a snapshot (--snapshot=false), UNAVAILABLE
  // while it loads, OK once loaded.
  absl::Status Unready() const;

  const CatalogSnapshot* snapshot_;
  std::string address_;
  // A record was handed out (the view's from_snapshot).
  mutable std::atomic<bool> used_{false};
};

// Records from the catalog service, one call each, inheriting the deadline
// and cancellation of `caller` (may be null). Cannot iterate the catalog.
class RemoteCatalogRecords : public RecordSource {
 public:
  RemoteCatalogRecords(CatalogClient* client, grpc::CallbackServerContext* caller)
      : client_(client), caller_(caller) {}
  void FindModel(const std::string& name, Done<common::v1::Model> done) override;
  void FindHardware(const std::vector<std::string>& names,
                    Done<SharedRecords<common::v1::Hardware>> done) override;
  absl::Status ForEachModel(const ModelVisitor& visit) const override;
  int64_t revision() const override { return 0; }
  View view() const override {
    View view;
    view.read_live = used_.load(std::memory_order_relaxed);
    return view;
  }

 private:
  CatalogClient* client_;
  grpc::CallbackServerContext* caller_;
  std::atomic<bool> used_{false};
};

// The snapshot when it is loaded and holds the record, else the catalog
// (whose answer is authoritative for unknown or ambiguous names).
// `snapshot` may be null.
class SnapshotThenCatalog : public RecordSource {
 public:
  SnapshotThenCatalog(const CatalogSnapshot* snapshot, CatalogClient* client,
                      grpc::CallbackServerContext* caller)
      : snapshot_(snapshot), remote_(client, caller), address_(client->address()) {}
  void FindModel(const std::string& name, Done<common::v1::Model> done) override;
  void FindHardware(const std::vector<std::string>& names,
                    Done<SharedRecords<common::v1::Hardware>> done) override;
  bool UseModel(const std::string& name, const ModelUser& use) override;
  absl::Status ForEachModel(const ModelVisitor& visit) const override;
  absl::Status ForEachModelIndexed(const IndexedModelVisitor& visit,
                                   uint64_t* generation) const override;
  int64_t revision() const override;
  View view() const override;

 private:
  bool loaded() const { return snapshot_ != nullptr && snapshot_->loaded(); }

  const CatalogSnapshot* snapshot_;
  RemoteCatalogRecords remote_;
  std::string address_;
  mutable std::atomic<bool> used_snapshot_{false};
};

}  // namespace modelatlas::estimator
