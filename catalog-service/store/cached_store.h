// A CatalogStore that keeps the records it has read in memory, least
// recently used first out, within a budget of bytes, in front of a store
// that no other process writes: the SQLite store, which holds its file
// exclusively. Every write and delete goes through this class, which drops
// the records it touches, so a cached record is always the stored one.
// Not for PostgreSQL: other replicas write the same database behind it.
//
// Why: reading one record costs a SQLite statement (a B-tree lookup and a
// copy of the row) under the store's one connection: a third of the
// catalog's CPU per GetModel call (see docs/BENCHMARKS.md); a hit costs a
// hash lookup and a copy.
//
// Admission: until the cache is full every record read is kept. Once it is
// full, keeping a record means evicting another (a hash erase, a list node
// and a block freed, a list node allocated), so a record read from the store
// is kept only if its key was missed once already within about the last
// `records` misses: a doorkeeper, the first stage of TinyLFU (Einziger,
// Friedman, Manes, "TinyLFU: A Highly Efficient Cache Admission Policy",
// ACM TOS 2017, section 3.4.2), here a bit array without the frequency
// sketch behind it. Reads at random over a catalog several times larger than
// the cache hit as often either way (the cached share of the keys), so the
// churn each miss paid bought nothing; a key read again soon (the head of a
// skewed workload) is kept on its second miss. Admission only decides what
// is kept: a write or delete drops the record whether or not it was kept,
// and a read that overlapped a write keeps nothing, as before.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "catalog-service/store/store.h"

namespace modelatlas::catalog {

class CachedStore : public CatalogStore {
 public:
  struct Stats {
    int64_t hits = 0;
    int64_t misses = 0;
    int64_t records = 0;
    // Bytes of the cached records (their strings and bookkeeping).
    int64_t bytes = 0;
    // Misses whose record was not kept: the cache was full and the
    // doorkeeper had not seen the key (see above).
    int64_t refused = 0;
  };

  // capacity_bytes > 0: records are evicted beyond it. A record larger than
  // the whole budget is not cached.
  CachedStore(std::unique_ptr<CatalogStore> store, size_t capacity_bytes);

  Stats stats() const;

  absl::string_view backend() const override { return store_->backend(); }
  int schema_version() const override { return store_->schema_version(); }

  absl::StatusOr<StoredRecord> Get(RecordKind kind, absl::string_view id) override;
  // A hit takes a reference to the cached block: no copy, no allocation.
  absl::StatusOr<SharedRecord> GetShared(RecordKind kind, absl::string_view id) override;
  absl::StatusOr<std::vector<std::string>> FindIdsByLookupKey(RecordKind kind,
                                                              absl::string_view key) override {
    return store_->FindIdsByLookupKey(kind, key);
  }
  // Not cached: an import's batched lookups, mostly of ids that do not exist.
  absl::StatusOr<std::vector<StoredRecord>> GetMany(RecordKind kind,
                                                    const std::vector<std::string>& ids) override {
    return store_->GetMany(kind, ids);
  }
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> FindIdsByLookupKeys(
      RecordKind kind, const std::vector<std::string>& keys) override {
    return store_->FindIdsByLookupKeys(kind, keys);
  }
  absl::StatusOr<std::vector<StoredRecord>> List(RecordKind kind, absl::string_view after_id,
                                                 int limit) override {
    return store_->List(kind, after_id, limit);
  }
  absl::StatusOr<int64_t> Count(RecordKind kind) override { return store_->Count(kind); }
  absl::StatusOr<int64_t> Revision() override { return store_->Revision(); }
  absl::StatusOr<int64_t> Write(const std::vector<BatchWrite>& writes) override;
  absl::StatusOr<int64_t> Delete(RecordKind kind, absl::string_view id,
                                 int64_t expected_revision) override;
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
  absl::StatusOr<std::vector<OrderedRecord>> ListOrderedWhere(
      RecordKind kind, OrderColumn column, bool descending, const OrderSeek& after, int limit,
      const std::vector<ColumnTest>& tests) override {
    return store_->ListOrderedWhere(kind, column, descending, after, limit, tests);
  }
  absl::StatusOr<std::vector<StoredRecord>> ListWhere(
      RecordKind kind, absl::string_view after_id, int limit,
      const std::vector<ColumnTest>& tests) override {
    return store_->ListWhere(kind, after_id, limit, tests);
  }
  absl::StatusOr<std::vector<StoredRecord>> RecordsWithoutOrderValues(RecordKind kind,
                                                                      int limit) override {
    return store_->RecordsWithoutOrderValues(kind, limit);
  }
  // Order values are not part of a cached record: nothing to drop.
  absl::Status SetOrderValues(RecordKind kind,
                              const std::vector<std::pair<StoredRecord, OrderValues>>& values,
                              bool done) override {
    return store_->SetOrderValues(kind, values, done);
  }
  // Indexes are not part of a cached record either.
  absl::StatusOr<bool> BeginBulkLoad() override { return store_->BeginBulkLoad(); }
  absl::Status EndBulkLoad(const std::function<void(absl::Duration)>& step_done) override {
    return store_->EndBulkLoad(step_done);
  }

 private:
  // One cached record: its id, display name and payload back to back in one
  // shared block (SharedRecord), which a read that passes the record on
  // shares instead of copying; the index holds a view of the block's id.
  struct Entry {
    SharedRecord record;
    RecordKind kind = RecordKind::kModel;

    absl::string_view id() const { return record.id(); }
  };
  using Lru = std::list<Entry>;  // most recently used first

  // What an entry takes, its text included (see the definition).
  static size_t EntryBytes(const Entry& entry);
  static size_t Kind(RecordKind kind) { return kind == RecordKind::kModel ? 0 : 1; }
  void Remember(RecordKind kind, SharedRecord record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // On a miss: whether the record read for this key is to be kept. True
  // while the cache has room; once full, true if the doorkeeper has seen the
  // key since it was last cleared, which it now has.
  bool AdmitMiss(RecordKind kind, absl::string_view id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void Forget(RecordKind kind, absl::string_view id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const std::unique_ptr<CatalogStore> store_;
  const size_t capacity_bytes_;
  mutable absl::Mutex mutex_;
  Lru lru_ ABSL_GUARDED_BY(mutex_);
  // By kind, then id (a view of the entry's own text).
  std::array<absl::flat_hash_map<absl::string_view, Lru::iterator>, 2> index_
      ABSL_GUARDED_BY(mutex_);
  size_t bytes_ ABSL_GUARDED_BY(mutex_) = 0;
  // Grows with every write, after it commits and drops what it touched: a
  // record read from the store while a write ran may be the old one, so a
  // read caches its record only if no write ended since it began.
  uint64_t writes_ ABSL_GUARDED_BY(mutex_) = 0;
  int64_t hits_ ABSL_GUARDED_BY(mutex_) = 0;
  int64_t misses_ ABSL_GUARDED_BY(mutex_) = 0;
  int64_t refused_ ABSL_GUARDED_BY(mutex_) = 0;
  // The doorkeeper: one bit per hash of (kind, id) missed while full,
  // kDoorkeeperBits of them (512 KiB, allocated when the cache is first
  // full: part of the catalog's constant memory, not of the budget), cleared
  // once it has marked as many keys as the cache holds records (at most
  // kDoorkeeperBits / 16, so that a key never missed is let in by a
  // colliding bit less than one time in 16).
  static constexpr size_t kDoorkeeperBits = size_t{1} << 22;
  std::vector<uint64_t> doorkeeper_ ABSL_GUARDED_BY(mutex_);
  size_t doorkeeper_marks_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace modelatlas::catalog
