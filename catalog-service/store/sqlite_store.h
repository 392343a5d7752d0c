// The embedded store: one SQLite file in WAL mode with synchronous=FULL, so
// an acknowledged write survives a crash of the process or the machine.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "catalog-service/store/store.h"

struct sqlite3;
struct sqlite3_stmt;

namespace modelatlas::catalog {

class SqliteStore : public CatalogStore {
 public:
  // Opens (creating if needed) the database at `path` and applies pending
  // migrations. ":memory:" gives a private in-memory database.
  // `max_pages` > 0 caps the database's size in pages (SQLite's
  // max_page_count, never below its size at open): writes past it fail as on
  // a full disk. `mmap_bytes` > 0 reads up to that much of the file through
  // a memory map (PRAGMA mmap_size) instead of copying each page from the
  // kernel into SQLite's page cache; 0 copies every page.
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                           int64_t max_pages = 0,
                                                           int64_t mmap_bytes = 0);

  // As much of the file as SQLite maps at most (its SQLITE_MAX_MMAP_SIZE,
  // 0x7fff0000 bytes on Linux: a larger mmap_size is lowered to it). Mapped,
  // a read that misses the record cache finds each B-tree page in place
  // instead of a hash lookup in SQLite's page cache, a recycled page and a
  // pread() copy: GetModel at random over 1,000,000 models (default record
  // cache, 80% misses) took 0.63x the CPU in one thread, the server
  // 0.87-0.88x per call (docs/BENCHMARKS.md, session 15, branch s15-miss);
  // instructions are the same (callgrind). Not the default: the mapped
  // pages count in the process's resident memory (RssFile, up to the file's
  // size: 645 MiB of a 1.04 GB file), outside the bound README states for
  // --record_cache_bytes, and an I/O error on a mapped page is a SIGBUS
  // instead of an error status (https://sqlite.org/mmap.html).
  static constexpr int64_t kLargestMmapBytes = 0x7fff0000;
  ~SqliteStore() override;

  // Prepared statements by SQL text (see Statement in sqlite_store.cc).
  using StatementCache = absl::flat_hash_map<std::string, sqlite3_stmt*>;

  absl::string_view backend() const override { return "sqlite"; }
  int schema_version() const override { return schema_version_; }

  absl::StatusOr<StoredRecord> Get(RecordKind kind, absl::string_view id) override;
  absl::StatusOr<SharedRecord> GetShared(RecordKind kind, absl::string_view id) override;
  absl::StatusOr<std::vector<std::string>> FindIdsByLookupKey(RecordKind kind,
                                                              absl::string_view key) override;
  // An import's batched reads (Catalog::PrefetchImportLookups): the lock
  // taken once for the batch, so a planner beside the import's writes
  // (Catalog::ImportFile) waits for a chunk's write once, not per read.
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
  // The revision the last committed write gave, kept in memory (the store
  // holds its file exclusively: no other process writes behind it), so that
  // a List, which reads it before its page, does not wait for the store's
  // lock twice.
  absl::StatusOr<int64_t> Revision() override;
  absl::StatusOr<int32_t> ShippedDatasetVersion() override;
  absl::Status RaiseShippedDatasetVersion(int32_t version) override;
  absl::StatusOr<int64_t> Write(const std::vector<BatchWrite>& writes) override;
  // One BEGIN IMMEDIATE ... COMMIT around every batch, written as each
  // comes (see CatalogStore::WriteInOneTransaction), with the store's lock
  // held throughout.
  absl::StatusOr<int64_t> WriteInOneTransaction(const BatchSource& next_batch) override;
  absl::StatusOr<int64_t> Delete(RecordKind kind, absl::string_view id,
                                 int64_t expected_revision) override;
  absl::StatusOr<std::vector<Change>> ChangesAfter(const ChangePosition& after, int limit) override;
  // Drops the order indexes (SqliteReadIndexes) in one transaction and
  // enlarges the page cache; EndBulkLoad creates them again, each by one
  // sort (CREATE INDEX), the store's lock released between them.
  absl::StatusOr<bool> BeginBulkLoad() override;
  absl::Status EndBulkLoad(
      const std::function<void(absl::Duration step)>& step_done = nullptr) override;
  // Pauses the index rebuild has made between its steps (each one because
  // a store call was waiting when a step ended): for tests.
  int64_t rebuild_pauses() const { return rebuild_pauses_.load(std::memory_order_relaxed); }

 private:
  // The store's lock, held for every store call, which counts the calls
  // waiting for it, so that the index rebuild pauses between its steps only
  // when one waits (CreateMissingReadIndexes).
  class ABSL_SCOPED_LOCKABLE StoreLock {
   public:
    explicit StoreLock(SqliteStore* store) ABSL_EXCLUSIVE_LOCK_FUNCTION(store->mutex_)
        : store_(store) {
      store_->waiting_calls_.fetch_add(1, std::memory_order_relaxed);
      store_->mutex_.Lock();
      store_->waiting_calls_.fetch_sub(1, std::memory_order_relaxed);
    }
    ~StoreLock() ABSL_UNLOCK_FUNCTION() { store_->mutex_.Unlock(); }
    StoreLock(const StoreLock&) = delete;
    StoreLock& operator=(const StoreLock&) = delete;

   private:
    SqliteStore* const store_;
  };

  explicit SqliteStore(sqlite3* db) : db_(db) {}
  absl::Status Migrate();
  // Creates the order indexes that do not exist (dropped by a bulk load that
  // ended, or that a crash ended: `after_crash` logs each), one statement
  // each with the lock released between them; a no-op on a store that has
  // them all.
  absl::Status CreateMissingReadIndexes(const std::function<void(absl::Duration)>& step_done,
                                        bool after_crash);
  // Inside a transaction: writes (Write's checks) at `revision`.
  absl::Status WriteBatchAt(int64_t revision, const std::vector<BatchWrite>& writes);
  // Inside a transaction: bumps the catalog revision and returns the new one.
  absl::StatusOr<int64_t> NextRevision();
  // Reads the stored revision into revision_ (at open).
  absl::Status LoadRevision();
  // A write's transaction's result: its revision, once committed, is the
  // one Revision() gives.
  absl::StatusOr<int64_t> Committed(absl::StatusOr<int64_t> revision);
  // Inside a transaction: checks that the record exists at expected_revision
  // (0 = any revision).
  absl::Status CheckCurrent(RecordKind kind, absl::string_view id, int64_t expected_revision);
  absl::Status LogChange(int64_t revision, RecordKind kind, absl::string_view id,
                         absl::string_view operation);
  // Inside a transaction: the record's lookup keys; `clear_old` removes
  // the ones stored before (false for a record just created).
  absl::Status ReplaceLookupKeys(const RecordWrite& record, bool clear_old);
  // Inside a transaction: the model's rows in model_domains (schema 5) for
  // the domains in values[kDomainsValue], with its order values.
  absl::Status AddDomainRows(absl::string_view id, const OrderValues& values);
  // Inside a transaction: removes the model's rows, found through the
  // elements of its stored filter text (a superset of its domains), so no
  // index by id is kept (it would cost every imported row).
  absl::Status RemoveDomainRows(absl::string_view id);
  // The domain a list with these tests can walk in model_domains: unset
  // when none can (no domains test, more than one domain contains its text,
  // or stored models still wait for their rows); "" in `none` when no
  // domain contains it (nothing can match). The distinct domains are read
  // once and kept (KnownDomains) until a write adds or removes domain rows.
  struct DomainWalk {
    bool walk = false;
    bool none = false;
    std::string domain;
  };
  absl::StatusOr<DomainWalk> DomainToWalk(RecordKind kind, const std::vector<ColumnTest>& tests);
  // The distinct domains of model_domains in order, read by one seek each
  // (at most kMaxDomainsScanned; more is `too_many`), kept in
  // known_domains_ until AddDomainRows or RemoveDomainRows clears it.
  struct Domains {
    std::vector<std::string> names;
    bool too_many = false;
  };
  absl::StatusOr<const Domains*> KnownDomains() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  // One connection, serialized: SQLite allows one writer at a time anyway.
  absl::Mutex mutex_;
  sqlite3* db_;
  StatementCache statements_ ABSL_GUARDED_BY(mutex_);
  // Prepared statements of filtered lists, whose text depends on the
  // filter's shape (its pushed tests' columns and operators, not their
  // values, which are bound): kept like statements_ up to
  // kMaxFilterStatements texts, prepared per call beyond that.
  StatementCache filter_statements_ ABSL_GUARDED_BY(mutex_);
  // The distinct domains (KnownDomains); unset until read, or after a write
  // of domain rows.
  std::optional<Domains> known_domains_ ABSL_GUARDED_BY(mutex_);
  // The catalog revision as of the last committed write (Revision()).
  std::atomic<int64_t> revision_{0};
  int schema_version_ = 0;
  // No model waits in order_values_pending: every model has its domain rows.
  bool domain_rows_complete_ ABSL_GUARDED_BY(mutex_) = false;
  // Bulk loads under way (BeginBulkLoad less EndBulkLoad).
  int bulk_loads_ ABSL_GUARDED_BY(mutex_) = 0;
  // Store calls waiting for mutex_ (StoreLock).
  std::atomic<int> waiting_calls_{0};
  std::atomic<int64_t> rebuild_pauses_{0};
};

}  // namespace modelatlas::catalog
