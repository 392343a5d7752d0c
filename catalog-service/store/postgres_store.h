// The shared store: PostgreSQL through libpqxx, for several catalog replicas
// on one database. Every write runs in one transaction that takes the
// catalog-revision row lock first, so writes commit in revision order across
// replicas and etag checks happen inside the transaction.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "catalog-service/store/store.h"

namespace modelatlas::catalog {

struct PooledConnection;  // a pqxx::connection, defined in postgres_store.cc

class PostgresStore : public CatalogStore {
 public:
  // Connects with a libpq connection string ("host=... dbname=..." or
  // "postgresql://..."; empty = the PG* environment variables), opening
  // `pool_size` connections, and applies pending migrations.
  static absl::StatusOr<std::unique_ptr<PostgresStore>> Open(const std::string& conninfo,
                                                             int pool_size = 4);
  ~PostgresStore() override;

  absl::string_view backend() const override { return "postgres"; }
  int schema_version() const override { return schema_version_; }

  absl::StatusOr<StoredRecord> Get(RecordKind kind, absl::string_view id) override;
  absl::StatusOr<std::vector<std::string>> FindIdsByLookupKey(RecordKind kind,
                                                              absl::string_view key) override;
  absl::StatusOr<std::vector<StoredRecord>> GetMany(RecordKind kind,
                                                    const std::vector<std::string>& ids) override;
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> FindIdsByLookupKeys(
      RecordKind kind, const std::vector<std::string>& keys) override;
  absl::StatusOr<std::vector<StoredRecord>> List(RecordKind kind, absl::string_view after_id,
                                                 int limit) override;
  bool orders_in_store() const override { return true; }
  absl::StatusOr<std::vector<OrderedRecord>> ListOrdered(RecordKind kind, OrderColumn column,
                                                         bool descending, const OrderSeek& after,
                                                         int limit) override;
  absl::StatusOr<std::vector<OrderedRecord>> ListOrderedWhere(
      RecordKind kind, OrderColumn column, bool descending, const OrderSeek& after, int limit,
      const std::vector<ColumnTest>& tests) override;
  absl::StatusOr<std::vector<StoredRecord>> ListWhere(
      RecordKind kind, absl::string_view after_id, int limit,
      const std::vector<ColumnTest>& tests) override;
  absl::StatusOr<std::vector<StoredRecord>> RecordsWithoutOrderValues(RecordKind kind,
                                                                      int limit) override;
  absl::Status SetOrderValues(RecordKind kind,
                              const std::vector<std::pair<StoredRecord, OrderValues>>& values,
                              bool done) override;
  absl::StatusOr<int64_t> Count(RecordKind kind) override;
  absl::StatusOr<int64_t> Revision() override;
  absl::StatusOr<int32_t> ShippedDatasetVersion() override;
  absl::Status RaiseShippedDatasetVersion(int32_t version) override;
  absl::StatusOr<int64_t> Write(const std::vector<BatchWrite>& writes) override;
  // Write's statements per batch, every batch in one transaction (see
  // CatalogStore::WriteInOneTransaction).
  absl::StatusOr<int64_t> WriteInOneTransaction(const BatchSource& next_batch) override;
  absl::StatusOr<int64_t> Delete(RecordKind kind, absl::string_view id,
                                 int64_t expected_revision) override;
  absl::StatusOr<std::vector<Change>> ChangesAfter(const ChangePosition& after, int limit) override;
  // Drops the four order indexes (migration 3) until the last bulk load of
  // this process ends; EndBulkLoad creates them again, one sort each. Reads
  // meanwhile give the same records, found by scanning. Replicas sharing the
  // database count their own bulk loads: one that ends first (or one that
  // opens the store) creates the indexes while another still loads, which
  // then loads slower, never wrongly. A crash in between leaves them to the
  // next Open.
  absl::StatusOr<bool> BeginBulkLoad() override;
  absl::Status EndBulkLoad(const std::function<void(absl::Duration)>& step_done) override;

  // The order indexes the database lacks (tests: a bulk load in progress).
  absl::StatusOr<std::vector<std::string>> MissingOrderIndexes();

 private:
  // Runs `body` with a pooled connection, reconnecting a broken one first.
  // Errors become statuses: a lost server UNAVAILABLE, a unique violation
  // ALREADY_EXISTS, a rolled-back transaction ABORTED, anything else INTERNAL.
  template <typename Result, typename Body>
  absl::StatusOr<Result> WithConnection(Body body);

  PostgresStore(std::string conninfo, int pool_size);
  absl::Status Migrate();
  // Creates the order indexes the database lacks, one transaction each,
  // reporting each one's time to `step_done` if set.
  absl::Status CreateMissingOrderIndexes(const std::function<void(absl::Duration)>& step_done);

  std::string conninfo_;
  int schema_version_ = 0;
  absl::Mutex mutex_;
  std::vector<std::unique_ptr<PooledConnection>> idle_ ABSL_GUARDED_BY(mutex_);
  int available_ ABSL_GUARDED_BY(mutex_);
  // Bulk loads begun and not yet ended in this process.
  int bulk_loads_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace modelatlas::catalog
