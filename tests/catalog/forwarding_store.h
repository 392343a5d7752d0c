// A test store that forwards every call to the store it wraps: tests derive
// from it and override only the calls they count, fail or hook.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "catalog-service/store/store.h"

namespace modelatlas::catalog {

class ForwardingStore : public CatalogStore {
 public:
  explicit ForwardingStore(std::unique_ptr<CatalogStore> store) : store_(std::move(store)) {}

  absl::string_view backend() const override { return store_->backend(); }
  int schema_version() const override { return store_->schema_version(); }
  absl::StatusOr<StoredRecord> Get(RecordKind kind, absl::string_view id) override {
    return store_->Get(kind, id);
  }
  absl::StatusOr<std::vector<std::string>> FindIdsByLookupKey(RecordKind kind,
                                                              absl::string_view key) override {
    return store_->FindIdsByLookupKey(kind, key);
  }
  absl::StatusOr<std::vector<StoredRecord>> List(RecordKind kind, absl::string_view after_id,
                                                 int limit) override {
    return store_->List(kind, after_id, limit);
  }
  absl::StatusOr<int64_t> Count(RecordKind kind) override { return store_->Count(kind); }
  absl::StatusOr<int64_t> Revision() override { return store_->Revision(); }
  absl::StatusOr<int64_t> Write(const std::vector<BatchWrite>& writes) override {
    return store_->Write(writes);
  }
  absl::StatusOr<int64_t> Delete(RecordKind kind, absl::string_view id,
                                 int64_t expected_revision) override {
    return store_->Delete(kind, id, expected_revision);
  }
  absl::StatusOr<std::vector<Change>> ChangesAfter(const ChangePosition& after,
                                                   int limit) override {
    return store_->ChangesAfter(after, limit);
  }
  bool orders_in_store() const override { return store_->orders_in_store(); }
  absl::StatusOr<std::vector<OrderedRecord>> ListOrdered(RecordKind kind, OrderColumn column,
                                                         bool descending, const OrderSeek& after,
                                                         int limit) override {
    return store_->ListOrdered(kind, column, descending, after, limit);
  }
  absl::StatusOr<std::vector<StoredRecord>> RecordsWithoutOrderValues(RecordKind kind,
                                                                      int limit) override {
    return store_->RecordsWithoutOrderValues(kind, limit);
  }
  absl::Status SetOrderValues(RecordKind kind,
                              const std::vector<std::pair<StoredRecord, OrderValues>>& values,
                              bool done) override {
    return store_->SetOrderValues(kind, values, done);
  }

 private:
  std::unique_ptr<CatalogStore> store_;
};

}  // namespace modelatlas::catalog
