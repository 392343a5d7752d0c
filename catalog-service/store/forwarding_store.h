// A CatalogStore that passes every call to the store it wraps: the base of
// a store that changes a few calls and leaves the others as they are
// (CachedStore; the tests' counting and failing stores), so that each
// states only what it changes. Every call is passed on, the ones
// CatalogStore has defaults for too (GetShared, GetMany, the atomic write,
// the bulk load...): a wrapper keeps what the wrapped store does instead of
// falling back to those defaults.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "catalog-service/store/store.h"

namespace modelatlas::catalog {

class ForwardingStore : public CatalogStore {
 public:
  explicit ForwardingStore(std::unique_ptr<CatalogStore> inner) : inner_(std::move(inner)) {}

  absl::string_view backend() const override { return inner_->backend(); }
  int schema_version() const override { return inner_->schema_version(); }
  absl::StatusOr<StoredRecord> Get(RecordKind kind, absl::string_view id) override {
    return inner_->Get(kind, id);
  }
  absl::StatusOr<SharedRecord> GetShared(RecordKind kind, absl::string_view id) override {
    return inner_->GetShared(kind, id);
  }
  absl::StatusOr<std::vector<std::string>> FindIdsByLookupKey(RecordKind kind,
                                                              absl::string_view key) override {
    return inner_->FindIdsByLookupKey(kind, key);
  }
  absl::StatusOr<std::vector<StoredRecord>> GetMany(RecordKind kind,
                                                    const std::vector<std::string>& ids) override {
    return inner_->GetMany(kind, ids);
  }
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> FindIdsByLookupKeys(
      RecordKind kind, const std::vector<std::string>& keys) override {
    return inner_->FindIdsByLookupKeys(kind, keys);
  }
  absl::StatusOr<std::vector<StoredRecord>> List(RecordKind kind, absl::string_view after_id,
                                                 int limit) override {
    return inner_->List(kind, after_id, limit);
  }
  absl::StatusOr<int64_t> Count(RecordKind kind) override { return inner_->Count(kind); }
  absl::StatusOr<int64_t> Revision() override { return inner_->Revision(); }
  absl::StatusOr<int32_t> ShippedDatasetVersion() override {
    return inner_->ShippedDatasetVersion();
  }
  absl::Status RaiseShippedDatasetVersion(int32_t version) override {
    return inner_->RaiseShippedDatasetVersion(version);
  }
  absl::StatusOr<int64_t> Write(const std::vector<BatchWrite>& writes) override {
    return inner_->Write(writes);
  }
  absl::StatusOr<int64_t> WriteInOneTransaction(const BatchSource& next_batch) override {
    return inner_->WriteInOneTransaction(next_batch);
  }
  absl::StatusOr<int64_t> Delete(RecordKind kind, absl::string_view id,
                                 int64_t expected_revision) override {
    return inner_->Delete(kind, id, expected_revision);
  }
  absl::StatusOr<std::vector<Change>> ChangesAfter(const ChangePosition& after,
                                                   int limit) override {
    return inner_->ChangesAfter(after, limit);
  }
  bool orders_in_store() const override { return inner_->orders_in_store(); }
  absl::StatusOr<std::vector<OrderedRecord>> ListOrdered(RecordKind kind, OrderColumn column,
                                                         bool descending, const OrderSeek& after,
                                                         int limit) override {
    return inner_->ListOrdered(kind, column, descending, after, limit);
  }
  absl::StatusOr<std::vector<OrderedRecord>> ListOrderedWhere(
      RecordKind kind, OrderColumn column, bool descending, const OrderSeek& after, int limit,
      const std::vector<ColumnTest>& tests) override {
    return inner_->ListOrderedWhere(kind, column, descending, after, limit, tests);
  }
  absl::StatusOr<std::vector<StoredRecord>> ListWhere(
      RecordKind kind, absl::string_view after_id, int limit,
      const std::vector<ColumnTest>& tests) override {
    return inner_->ListWhere(kind, after_id, limit, tests);
  }
  absl::StatusOr<std::vector<StoredRecord>> RecordsWithoutOrderValues(RecordKind kind,
                                                                      int limit) override {
    return inner_->RecordsWithoutOrderValues(kind, limit);
  }
  absl::Status SetOrderValues(RecordKind kind,
                              const std::vector<std::pair<StoredRecord, OrderValues>>& values,
                              bool done) override {
    return inner_->SetOrderValues(kind, values, done);
  }
  absl::StatusOr<bool> BeginBulkLoad() override { return inner_->BeginBulkLoad(); }
  absl::Status EndBulkLoad(const std::function<void(absl::Duration)>& step_done) override {
    return inner_->EndBulkLoad(step_done);
  }

 protected:
  CatalogStore& inner() const { return *inner_; }

 private:
  const std::unique_ptr<CatalogStore> inner_;
};

}  // namespace modelatlas::catalog
