#include "catalog-service/store/sqlite_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "catalog-service/store/migrations.h"
#include "common/server/logging.h"
#include "common/status/errors.h"

namespace modelatlas::catalog {
namespace {

// The status of SQLite result `code`: a locked or busy database is
// transient (UNAVAILABLE); a full disk (or a file at its size cap) is
// RESOURCE_EXHAUSTED, retryable once space is freed, and nothing was
// written; everything else is internal.
absl::Status SqliteCodeError(int code, std::string message) {
  switch (code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(message);
    case SQLITE_FULL:
      return WithReason(absl::ResourceExhaustedError(absl::StrCat(
                            message,
                            " (the catalog's storage is full: nothing was written; retry once "
                            "space is freed)")),
                        "STORAGE_FULL");
    default:
      return absl::InternalError(message);
  }
}

absl::Status SqliteError(sqlite3* db, absl::string_view what) {
  return SqliteCodeError(sqlite3_extended_errcode(db),
                         absl::StrCat("sqlite: ", what, ": ", sqlite3_errmsg(db)));
}

// A prepared statement from the store's cache: prepared once per SQL text
// (parsing a statement costs more than running a lookup by key), reset and
// unbound on scope exit. Within one store operation no two live Statements
// share a text.
class Statement {
 public:
  Statement(sqlite3* db, SqliteStore::StatementCache& cache, absl::string_view sql) : db_(db) {
    PrepareCached(cache, sql);
  }
  // A statement of its own, finalized on scope exit: for texts with many
  // shapes (a filter's pushed tests), which would grow the cache without bound.
  Statement(sqlite3* db, absl::string_view sql) : db_(db), owned_(true) { PrepareOwned(sql); }
  // From `cache` while it holds fewer than `max_cached` texts (or already
  // holds this one), else a statement of its own: a filtered list's text
  // depends on the filter's shape, and preparing it (parsing, planning) cost
  // 0.1-0.2 M instructions per page of a million models, under the store's
  // lock (docs/BENCHMARKS.md, s14-list).
  Statement(sqlite3* db, SqliteStore::StatementCache& cache, absl::string_view sql,
            size_t max_cached)
      : db_(db) {
    if (cache.size() < max_cached || cache.contains(sql)) {
      PrepareCached(cache, sql);
      return;
    }
    owned_ = true;
    PrepareOwned(sql);
  }
  ~Statement() {
    if (stmt_ == nullptr) return;
    if (owned_) {
      sqlite3_finalize(stmt_);
      return;
    }
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  const absl::Status& status() const { return status_; }
  // Makes the statement ready to run again with new bindings.
  Statement& Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    return *this;
  }
  Statement& Bind(int index, absl::string_view text) {
    sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    return *this;
  }
  // Bound without SQLite's copy: `text` must outlive this Statement (which
  // resets the statement when it ends).
  Statement& BindUncopied(int index, absl::string_view text) {
    sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
    return *this;
  }
  Statement& BindBlobUncopied(int index, absl::string_view bytes) {
    sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_STATIC);
    return *this;
  }
  Statement& BindBlob(int index, const std::string& bytes) {
    sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& Bind(int index, int64_t value) {
    sqlite3_bind_int64(stmt_, index, value);
    return *this;
  }
  Statement& BindValue(int index, const OrderValue& value) {
    if (const auto* number = std::get_if<double>(&value)) {
      sqlite3_bind_double(stmt_, index, *number);
    } else if (const auto* text = std::get_if<std::string>(&value)) {
      Bind(index, absl::string_view(*text));
    } else {
      sqlite3_bind_null(stmt_, index);
    }
    return *this;
  }
  // Binds the stored values (order columns, filter text) from `first` on.
  Statement& BindValues(int first, const OrderValues& values) {
    for (int i = 0; i < kStoredValueCount; ++i) BindValue(first + i, values[i]);
    return *this;
  }
  // The same without SQLite's copies of the texts: `values` must outlive
  // this Statement (an import's write: each text copied once per column
  // and row was a good part of its allocations).
  Statement& BindValueUncopied(int index, const OrderValue& value) {
    if (const auto* text = std::get_if<std::string>(&value)) return BindUncopied(index, *text);
    return BindValue(index, value);
  }
  Statement& BindValuesUncopied(int first, const OrderValues& values) {
    for (int i = 0; i < kStoredValueCount; ++i) BindValueUncopied(first + i, values[i]);
    return *this;
  }
  // Steps once: true when a row is available, false when done.
  absl::StatusOr<bool> Step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return SqliteError(db_, "step");
  }
  absl::Status Run() {
    absl::StatusOr<bool> row = Step();
    return row.status();
  }
  std::string Text(int column) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    return text == nullptr ? std::string() : std::string(text, sqlite3_column_bytes(stmt_, column));
  }
  std::string Blob(int column) const {
    const auto* data = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
    return data == nullptr ? std::string() : std::string(data, sqlite3_column_bytes(stmt_, column));
  }
  // Views of a column, valid until the next step or reset (no copy).
  absl::string_view TextView(int column) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    return text == nullptr ? absl::string_view()
                           : absl::string_view(text, sqlite3_column_bytes(stmt_, column));
  }
  absl::string_view BlobView(int column) const {
    const auto* data = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
    return data == nullptr ? absl::string_view()
                           : absl::string_view(data, sqlite3_column_bytes(stmt_, column));
  }
  int64_t Int(int column) const { return sqlite3_column_int64(stmt_, column); }
  OrderValue Value(int column) const {
    switch (sqlite3_column_type(stmt_, column)) {
      case SQLITE_NULL:
        return std::monostate();
      case SQLITE_TEXT:
        return Text(column);
      default:
        return sqlite3_column_double(stmt_, column);
    }
  }

 private:
  void PrepareCached(SqliteStore::StatementCache& cache, absl::string_view sql) {
    // Heterogeneous lookup: no key string is built when the text is cached.
    auto [entry, inserted] = cache.try_emplace(sql, nullptr);
    if (inserted) {
      if (sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                             SQLITE_PREPARE_PERSISTENT, &entry->second, nullptr) != SQLITE_OK) {
        status_ = SqliteError(db_, absl::StrCat("prepare ", sql));
        sqlite3_finalize(entry->second);
        cache.erase(entry);
        return;
      }
    }
    stmt_ = entry->second;
  }
  void PrepareOwned(absl::string_view sql) {
    if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) !=
        SQLITE_OK) {
      status_ = SqliteError(db_, absl::StrCat("prepare ", sql));
      sqlite3_finalize(stmt_);
      stmt_ = nullptr;
    }
  }

  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  bool owned_ = false;
  absl::Status status_;
};

absl::Status Exec(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  if (const int code = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error); code != SQLITE_OK) {
    absl::Status status = SqliteCodeError(
        code, absl::StrCat("sqlite: ", error == nullptr ? "error" : error, " in: ", sql));
    sqlite3_free(error);
    return status;
  }
  return absl::OkStatus();
}

// Runs `body` inside BEGIN IMMEDIATE ... COMMIT, rolling back on error.
template <typename Body>
auto InTransaction(sqlite3* db, Body body) -> decltype(body()) {
  if (absl::Status begin = Exec(db, "BEGIN IMMEDIATE"); !begin.ok()) return begin;
  auto result = body();
  if (!result.ok()) {
    Exec(db, "ROLLBACK").IgnoreError();
    return result;
  }
  if (absl::Status commit = Exec(db, "COMMIT"); !commit.ok()) {
    Exec(db, "ROLLBACK").IgnoreError();
    return commit;
  }
  return result;
}

StoredRecord ReadRecord(const Statement& stmt) {
  return StoredRecord{stmt.Text(0), stmt.Text(1), stmt.Blob(2), stmt.Int(3)};
}

// Every row of a statement that selects id, display_name, payload, revision.
absl::StatusOr<std::vector<StoredRecord>> ReadRecords(Statement& stmt) {
  std::vector<StoredRecord> records;
  while (true) {
    absl::StatusOr<bool> row = stmt.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    records.push_back(ReadRecord(stmt));
  }
  return records;
}

// The columns of OrderColumn, in its order (migration 3).
constexpr const char* kOrderColumnNames[kOrderColumnCount] = {
    "order_parameters", "order_training_compute_flop", "order_publication_date",
    "order_display_name"};

// The SQL of `tests` (ColumnTest), each " AND ..." with its value bound at
// ?first, ?first + 1, ... (BindTests); tests a store cannot apply are left
// out (the caller filters anyway).
std::vector<const ColumnTest*> Applicable(const std::vector<ColumnTest>& tests) {
  std::vector<const ColumnTest*> out;
  for (const ColumnTest& test : tests) {
    const bool contains = test.op == ColumnTest::Op::kContains;
    if (contains
            ? test.column == kFilterTextValue && std::holds_alternative<std::string>(test.value)
            : test.column >= 0 && test.column < kOrderColumnCount &&
                  test.column != static_cast<int>(OrderColumn::kDisplayName) &&
                  std::holds_alternative<double>(test.value)) {
      out.push_back(&test);
    }
  }
  return out;
}

// A test on another column than the one the list walks in order is written
// `+column` so that SQLite's planner (which has no statistics here) cannot
// pick that column's index and sort what it finds: a page walks its order's
// index and stops when full. `walked` is the OrderColumn a list is ordered by,
// or -1 (id order). `numbers` and `text` qualify the columns (a walk of
// model_domains tests the numbers its index holds, the text in records).
std::string TestsSql(const std::vector<const ColumnTest*>& tests, int first, int walked,
                     absl::string_view numbers = "", absl::string_view text = "") {
  std::string sql;
  for (size_t i = 0; i < tests.size(); ++i) {
    const ColumnTest& test = *tests[i];
    const int at = first + static_cast<int>(i);
    if (test.op == ColumnTest::Op::kContains) {
      // NULL: a row an older binary wrote, not yet filled in; let it through.
      absl::StrAppend(&sql, " AND (", text, "filter_text IS NULL OR instr(", text, "filter_text, ?",
                      at, ") > 0)");
      continue;
    }
    const char* op = SqlComparison(test.op);
    // A NULL value compares to nothing: unset fields pass no comparison.
    absl::StrAppend(&sql, " AND ", test.column == walked ? "" : "+", numbers,
                    kOrderColumnNames[test.column], " ", op, " ?", at);
  }
  return sql;
}

void BindTests(Statement& stmt, const std::vector<const ColumnTest*>& tests, int first) {
  for (size_t i = 0; i < tests.size(); ++i) {
    stmt.BindValue(first + static_cast<int>(i), tests[i]->value);
  }
}

// The elements of a newline-led list (FilterTextOf's format: "\na\nb").
std::vector<absl::string_view> Elements(const std::string& text) {
  if (text.empty()) return {};
  return absl::StrSplit(absl::string_view(text).substr(1), '\n');
}

// Puts records[first..] in a list's order (OrderSeek's): by value,
// descending or not, then by id; records without a value (all or none of
// them) by id. Values compare as SQLite's do: numbers by value, text
// bytewise (std::string's compare is memcmp's, as SQLite's BINARY).
void SortInListOrder(std::vector<OrderedRecord>& records, size_t first, bool descending) {
  std::sort(records.begin() + static_cast<std::ptrdiff_t>(first), records.end(),
            [descending](const OrderedRecord& a, const OrderedRecord& b) {
              if (!(a.value == b.value)) return descending ? b.value < a.value : a.value < b.value;
              return a.record.id < b.record.id;
            });
}

// A walk of model_domains needs no filter-text test that its domain already
// passes (the domain is one of the text's elements).
std::vector<const ColumnTest*> WithoutImpliedBy(const std::vector<const ColumnTest*>& tests,
                                                absl::string_view domain) {
  std::vector<const ColumnTest*> out;
  for (const ColumnTest* test : tests) {
    const auto* text = std::get_if<std::string>(&test->value);
    if (test->op == ColumnTest::Op::kContains && text != nullptr &&
        absl::StrContains(domain, *text)) {
      continue;
    }
    out.push_back(test);
  }
  return out;
}

// The page cache: SQLite's default is 2 MB, so at a million records (a
// 0.6 GB file: records and five indexes) nearly every index page an
// import writes or a read walks was copied in from the kernel again
// (a quarter of an import's CPU under perf). kPageCacheKiB is allocated as
// pages are used and never more: part of the catalog's constant memory.
constexpr int kPageCacheKiB = 64 << 10;
// During a bulk load (BeginBulkLoad to EndBulkLoad) the cache is this size.
// It was 256 MiB while the upload was held whole (the import's memory grew
// with its file anyway); with the upload spooled to disk the import's peak is
// a stated constant (README, docs/IMPORT.md), and the bulk load keeps the
// serving cache's 64 MiB: no CPU cost showed at a million rows (catalog CPU
// 42-44 s against 48-53 s with 256 MiB and the other changes of that branch,
// on a loaded machine; docs/BENCHMARKS.md, "Session 15, branch s15-import").
constexpr int kBulkLoadCacheKiB = kPageCacheKiB;
// While EndBulkLoad creates the indexes again. CREATE INDEX sorts its keys
// in runs of up to the page cache's size, held in memory beside the cache
// (vdbesort.c: a PMA of cache_size bytes, at least 250 pages) before each is
// written to a temporary file and merged: with the 64 MiB cache the rebuild
// of a million rows took the import's peak up by about 100 MiB. 16 MiB
// bounds both to 32 MiB, for a few more runs to merge (docs/BENCHMARKS.md,
// "Session 15, branch s15-import").
constexpr int kIndexRebuildCacheKiB = 16 << 10;

// Between two CREATE INDEX of EndBulkLoad when a store call waited for the
// step before (see CreateMissingReadIndexes): a quarter of that step (seconds at a million rows:
// the rebuild's wall grows by a quarter, its CPU not at all), and at least long enough for a woken
// reader to be scheduled on a loaded machine.
constexpr absl::Duration kMinPauseBetweenIndexes = absl::Milliseconds(100);

// How many distinct domains DomainToWalk looks through before it leaves
// the test to the filter text (a seek each; Epoch's catalog has about 20).
constexpr int kMaxDomainsScanned = 1000;

// Filtered lists' statements kept prepared (SqliteStore::filter_statements_):
// a shape is the pushed tests' columns and operators, the order and where a
// page starts, so a catalog's clients use a few dozen; each takes about
// 8 KB of SQLite's memory (`.stats` of the sqlite3 shell).
constexpr size_t kMaxFilterStatements = 128;

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                               int64_t max_pages,
                                                               int64_t mmap_bytes) {
  sqlite3* db = nullptr;
  // NOMUTEX: the connection's own mutex (taken by every sqlite3_* call: a
  // bind, a step, a column read) is not wanted; every use of db_ is already
  // serialized by mutex_ (the store's one connection), which is what SQLite's
  // multi-thread mode asks of the caller (https://sqlite.org/threadsafe.html).
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    absl::Status status = absl::UnavailableError(
        absl::StrCat("cannot open SQLite database \"", path, "\": ", sqlite3_errmsg(db)));
    sqlite3_close(db);
    return status;
  }
  std::unique_ptr<SqliteStore> store(new SqliteStore(db));
  sqlite3_busy_timeout(db, 5000);
  // One process owns the file (SQLite serves one catalog replica; several
  // share PostgreSQL): the exclusive lock, taken by the first transaction
  // and held until close, refuses a second catalog-service on the same file
  // and spares every read a file lock and unlock (a tenth of GetModel's
  // CPU). It also lets the store cache records (see CachedStore): no other
  // process can write behind it. Set before WAL so the WAL index lives in
  // the heap, not in a shared-memory file. synchronous=FULL makes every
  // commit durable before it is acknowledged.
  if (absl::Status s = Exec(db, "PRAGMA locking_mode=EXCLUSIVE"); !s.ok()) return s;
  if (absl::Status s = Exec(db, "BEGIN EXCLUSIVE; COMMIT"); !s.ok()) {
    return absl::UnavailableError(
        absl::StrCat("SQLite database \"", path,
                     "\" is in use by another process (one catalog-service owns a SQLite file; "
                     "run several replicas on --store=postgres): ",
                     s.message()));
  }
  if (absl::Status s = Exec(db, absl::StrCat("PRAGMA cache_size=-", kPageCacheKiB)); !s.ok()) {
    return s;
  }
  // A checkpoint every 10,000 WAL pages (40 MB) instead of 1,000: an index
  // page that several import transactions dirty is copied into the file once.
  for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL",
                             "PRAGMA foreign_keys=ON", "PRAGMA wal_autocheckpoint=10000"}) {
    if (absl::Status s = Exec(db, pragma); !s.ok()) return s;
  }
  // A GetModel at random over a million models misses the page cache on most
  // B-tree pages: each miss is a pread copy (`filemap_read`, `_copy_to_iter`
  // in perf, about a third of its kernel time). Mapped, a page the kernel
  // holds is read in place; SQLite caps the map at SQLITE_MAX_MMAP_SIZE.
  if (mmap_bytes > 0) {
    if (absl::Status s = Exec(db, absl::StrCat("PRAGMA mmap_size=", mmap_bytes)); !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = store->Migrate(); !s.ok()) return s;
  // A bulk load that a crash (or a kill) ended left its indexes dropped:
  // they are created again before the store serves (ordered pages would
  // scan the whole table without them).
  if (absl::Status s = store->CreateMissingReadIndexes(nullptr, /*after_crash=*/true); !s.ok())
    return s;
  if (absl::Status s = store->LoadRevision(); !s.ok()) return s;
  if (max_pages > 0) {
    if (absl::Status s = Exec(db, absl::StrCat("PRAGMA max_page_count=", max_pages)); !s.ok()) {
      return s;
    }
  }
  return store;
}

SqliteStore::~SqliteStore() {
  StoreLock lock(this);
  for (auto& [sql, statement] : statements_) sqlite3_finalize(statement);
  for (auto& [sql, statement] : filter_statements_) sqlite3_finalize(statement);
  sqlite3_close(db_);
}

absl::Status SqliteStore::Migrate() {
  StoreLock lock(this);
  if (absl::Status s = Exec(db_,
                            "CREATE TABLE IF NOT EXISTS schema_migrations ("
                            "version INTEGER PRIMARY KEY, description TEXT NOT NULL)");
      !s.ok()) {
    return s;
  }
  Statement current(db_, statements_, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
  if (!current.status().ok()) return current.status();
  absl::StatusOr<bool> row = current.Step();
  if (!row.ok()) return row.status();
  schema_version_ = static_cast<int>(current.Int(0));

  const std::vector<Migration>& migrations = SqliteMigrations();
  if (schema_version_ > static_cast<int>(migrations.size())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "database schema version ", schema_version_, " is newer than this binary knows (",
        migrations.size(), "); upgrade catalog-service"));
  }
  for (const Migration& migration : migrations) {
    if (migration.version <= schema_version_) continue;
    absl::Status applied = InTransaction(db_, [&]() -> absl::Status {
      if (absl::Status s = Exec(db_, migration.sql); !s.ok()) return s;
      Statement record(db_, statements_,
                       "INSERT INTO schema_migrations (version, description) VALUES (?, ?)");
      if (!record.status().ok()) return record.status();
      return record.Bind(1, int64_t{migration.version}).Bind(2, migration.description).Run();
    });
    if (!applied.ok()) return applied;
    schema_version_ = migration.version;
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::CreateMissingReadIndexes(
    const std::function<void(absl::Duration)>& step_done, bool after_crash) {
  absl::Duration last_step;
  // Whether a store call was waiting when the last step ended.
  bool call_waited = false;
  for (const ReadIndex& index : SqliteReadIndexes()) {
    // absl::Mutex is not fair: relocked at once, it starved a List of a
    // million-model catalog for all eight steps (35 s at load 10). A pause
    // after a step that a call waited for lets the calls that queued behind
    // it in first, and the next store calls of the same request (a List
    // makes several, each of which would otherwise wait for a step of its
    // own: 24 s with a fixed 100 ms pause at load 7). With no call waiting
    // the next step starts at once: the pauses were about 3 s of a
    // million-model rebuild's 16 s (docs/BENCHMARKS.md, s12-import).
    if (call_waited && !after_crash) {
      rebuild_pauses_.fetch_add(1, std::memory_order_relaxed);
      absl::SleepFor(std::max(kMinPauseBetweenIndexes, last_step / 4));
    }
    call_waited = false;
    const absl::Time start = absl::Now();
    // Not a StoreLock: the rebuild's own wait is not a call's.
    absl::MutexLock lock(&mutex_);
    {
      Statement exists(db_, statements_,
                       "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?");
      if (!exists.status().ok()) return exists.status();
      absl::StatusOr<bool> row = exists.Bind(1, index.name).Step();
      if (!row.ok()) return row.status();
      if (*row) continue;
    }
    if (after_crash) {
      MA_LOG_INFO("creating the missing index %s (a bulk import did not finish)",
                  index.name.c_str());
    }
    // PRAGMA temp_store=MEMORY for the sort was measured and not kept: at
    // a million rows it cost more CPU (3.5-3.6 s instead of 3.0 s for
    // records_by_parameters; docs/BENCHMARKS.md, branch s12-import).
    if (absl::Status s = Exec(db_, index.sql); !s.ok()) return s;
    last_step = absl::Now() - start;
    call_waited = waiting_calls_.load(std::memory_order_relaxed) > 0;
    if (step_done) step_done(last_step);
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> SqliteStore::BeginBulkLoad() {
  StoreLock lock(this);
  if (bulk_loads_ > 0) {
    ++bulk_loads_;
    return true;
  }
  // One transaction: the indexes are all there or all dropped (a crash
  // after it leaves them to the next open, CreateMissingReadIndexes).
  absl::Status dropped = InTransaction(db_, [&]() -> absl::Status {
    for (const ReadIndex& index : SqliteReadIndexes()) {
      if (absl::Status s = Exec(db_, absl::StrCat("DROP INDEX IF EXISTS ", index.name)); !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  });
  if (!dropped.ok()) return dropped;
  ++bulk_loads_;
  Exec(db_, absl::StrCat("PRAGMA cache_size=-", kBulkLoadCacheKiB)).IgnoreError();
  return true;
}

absl::Status SqliteStore::EndBulkLoad(const std::function<void(absl::Duration)>& step_done) {
  {
    StoreLock lock(this);
    if (bulk_loads_ == 0) return absl::OkStatus();
    // Another bulk load still runs: the last to end rebuilds.
    if (--bulk_loads_ > 0) return absl::OkStatus();
  }
  {
    StoreLock lock(this);
    Exec(db_, absl::StrCat("PRAGMA cache_size=-", kIndexRebuildCacheKiB)).IgnoreError();
  }
  absl::Status created = CreateMissingReadIndexes(step_done, /*after_crash=*/false);
  StoreLock lock(this);
  Exec(db_,
       absl::StrCat("PRAGMA cache_size=-", bulk_loads_ == 0 ? kPageCacheKiB : kBulkLoadCacheKiB))
      .IgnoreError();
  return created;
}

namespace {

constexpr char kSelectRecord[] =
    "SELECT id, display_name, payload, revision FROM records WHERE kind = ? AND id = ?";

// Steps `stmt` (kSelectRecord) onto the record's row; NOT_FOUND naming it
// when there is none. The two keys are bound without SQLite's copies of
// them: both outlive the step, and the statement clears its bindings when
// it is given back.
absl::Status StepOntoRecord(Statement& stmt, RecordKind kind, absl::string_view id) {
  if (!stmt.status().ok()) return stmt.status();
  stmt.BindUncopied(1, RecordKindName(kind)).BindUncopied(2, id);
  absl::StatusOr<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::NotFoundError(absl::StrCat(RecordKindName(kind), " ", id));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<StoredRecord> SqliteStore::Get(RecordKind kind, absl::string_view id) {
  StoreLock lock(this);
  Statement stmt(db_, statements_, kSelectRecord);
  if (absl::Status found = StepOntoRecord(stmt, kind, id); !found.ok()) return found;
  return ReadRecord(stmt);
}

// The row's columns copied once, straight into the shared block (no
// StoredRecord's three strings first): the read of a GetModel that misses
// the record cache.
absl::StatusOr<SharedRecord> SqliteStore::GetShared(RecordKind kind, absl::string_view id) {
  StoreLock lock(this);
  Statement stmt(db_, statements_, kSelectRecord);
  if (absl::Status found = StepOntoRecord(stmt, kind, id); !found.ok()) return found;
  return SharedRecord::Make(stmt.TextView(0), stmt.TextView(1), stmt.BlobView(2), stmt.Int(3));
}

absl::StatusOr<std::vector<std::string>> SqliteStore::FindIdsByLookupKey(RecordKind kind,
                                                                         absl::string_view key) {
  StoreLock lock(this);
  Statement stmt(db_, statements_,
                 "SELECT DISTINCT id FROM lookup_keys WHERE kind = ? AND key = ? ORDER BY id");
  if (!stmt.status().ok()) return stmt.status();
  stmt.Bind(1, RecordKindName(kind)).Bind(2, key);
  std::vector<std::string> ids;
  while (true) {
    absl::StatusOr<bool> row = stmt.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    ids.push_back(stmt.Text(0));
  }
  return ids;
}

absl::StatusOr<std::vector<StoredRecord>> SqliteStore::GetMany(
    RecordKind kind, const std::vector<std::string>& ids) {
  StoreLock lock(this);
  Statement stmt(db_, statements_, kSelectRecord);
  if (!stmt.status().ok()) return stmt.status();
  std::vector<StoredRecord> found;
  for (const std::string& id : ids) {
    absl::Status step = StepOntoRecord(stmt.Reset(), kind, id);
    if (absl::IsNotFound(step)) continue;
    if (!step.ok()) return step;
    found.push_back(ReadRecord(stmt));
  }
  return found;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> SqliteStore::FindIdsByLookupKeys(
    RecordKind kind, const std::vector<std::string>& keys) {
  StoreLock lock(this);
  Statement stmt(db_, statements_,
                 "SELECT DISTINCT id FROM lookup_keys WHERE kind = ? AND key = ? ORDER BY id");
  if (!stmt.status().ok()) return stmt.status();
  std::vector<std::pair<std::string, std::string>> found;
  for (const std::string& key : keys) {
    stmt.Reset().BindUncopied(1, RecordKindName(kind)).BindUncopied(2, key);
    while (true) {
      absl::StatusOr<bool> row = stmt.Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      found.emplace_back(key, stmt.Text(0));
    }
  }
  return found;
}

absl::StatusOr<std::vector<StoredRecord>> SqliteStore::List(RecordKind kind,
                                                            absl::string_view after_id, int limit) {
  StoreLock lock(this);
  Statement stmt(db_, statements_,
                 "SELECT id, display_name, payload, revision FROM records "
                 "WHERE kind = ? AND id > ? ORDER BY id LIMIT ?");
  if (!stmt.status().ok()) return stmt.status();
  stmt.Bind(1, RecordKindName(kind)).Bind(2, after_id).Bind(3, int64_t{limit});
  return ReadRecords(stmt);
}

absl::StatusOr<std::vector<OrderedRecord>> SqliteStore::ListOrdered(
    RecordKind kind, OrderColumn column, bool descending, const OrderSeek& after, int limit) {
  return ListOrderedWhere(kind, column, descending, after, limit, {});
}

absl::StatusOr<std::vector<OrderedRecord>> SqliteStore::ListOrderedWhere(
    RecordKind kind, OrderColumn column, bool descending, const OrderSeek& after, int limit,
    const std::vector<ColumnTest>& column_tests) {
  StoreLock lock(this);
  const absl::string_view column_name = kOrderColumnNames[static_cast<int>(column)];
  const char* direction = descending ? " DESC" : "";
  std::vector<const ColumnTest*> tests = Applicable(column_tests);
  absl::StatusOr<DomainWalk> walk = DomainToWalk(kind, column_tests);
  if (!walk.ok()) return walk.status();
  if (walk->none) return std::vector<OrderedRecord>{};
  // Walking one domain's rows of model_domains (schema 5): its index for the
  // column also holds the numbers the tests compare, so a row that fails
  // them is skipped without reading the record; ?5 is the domain, the tests
  // follow. Otherwise the records' own index for the column.
  if (walk->walk) tests = WithoutImpliedBy(tests, walk->domain);
  const int first_test = walk->walk ? 6 : 5;
  const std::string c = walk->walk ? absl::StrCat("d.", column_name) : std::string(column_name);
  const char* id = walk->walk ? "d.id" : "id";
  const char* select = walk->walk ? "SELECT r.id, r.display_name, r.payload, r.revision, "
                                  : "SELECT id, display_name, payload, revision, ";
  const char* from = walk->walk ? " FROM model_domains d CROSS JOIN records r "
                                  "WHERE d.domain = ?5 AND r.kind = ?1 AND r.id = d.id AND "
                                : " FROM records WHERE kind = ?1 AND ";
  // Without tests, one cached statement per column and direction; with
  // them, the text depends on the filter's shape: kept among the filter
  // statements (kMaxFilterStatements), else prepared for this call only.
  auto prepare = [&](const std::string& sql) {
    return tests.empty()
               ? std::make_unique<Statement>(db_, statements_, sql)
               : std::make_unique<Statement>(db_, filter_statements_, sql, kMaxFilterStatements);
  };
  // The records with a value, through the column's index (kind, value, id);
  // descending, the index is read backwards and each run of equal values is
  // put in id order (SQLite's "temp b-tree for right part of ORDER BY").
  // The tests' values are bound after the statement's own (?5 or ?6 on).
  const std::string where = walk->walk
                                ? TestsSql(tests, first_test, static_cast<int>(column), "d.", "r.")
                                : TestsSql(tests, first_test, static_cast<int>(column));
  // A walk whose tests all compare the domain rows' numbers picks the page's
  // ids from model_domains' index alone (it holds them: no seek), then reads
  // only those records: a run of equal values sorted into id order
  // (descending) is a run of index entries, not of records read.
  const bool keys_first =
      walk->walk && std::none_of(tests.begin(), tests.end(), [](const ColumnTest* test) {
        return test->op == ColumnTest::Op::kContains;
      });
  auto sql_of = [&](absl::string_view value, absl::string_view conditions, bool by_value,
                    absl::string_view limit_param) {
    const std::string order = by_value ? absl::StrCat(c, direction, ", ", id) : std::string(id);
    if (keys_first) {
      // No ORDER BY outside: SQLite would copy every row, payload and all,
      // into a sorter (a fifth of the statement's VM steps on a page of a
      // million models); the page is put in order after it is read.
      return absl::StrCat(
          "SELECT r.id, r.display_name, r.payload, r.revision, s.v FROM (SELECT d.id AS id, ",
          value, " AS v FROM model_domains d WHERE d.domain = ?5 AND ", conditions, where,
          " ORDER BY ", order, " LIMIT ", limit_param,
          ") s CROSS JOIN records r WHERE r.kind = ?1 AND r.id = s.id");
    }
    return absl::StrCat(select, value, from, conditions, where, " ORDER BY ", order, " LIMIT ",
                        limit_param);
  };
  std::vector<OrderedRecord> records;
  auto read = [&](Statement& stmt) -> absl::Status {
    const size_t first = records.size();
    while (true) {
      absl::StatusOr<bool> row = stmt.Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      records.push_back(OrderedRecord{ReadRecord(stmt), stmt.Value(4)});
    }
    if (keys_first) SortInListOrder(records, first, descending);
    return absl::OkStatus();
  };
  const bool in_values = after.start || !std::holds_alternative<std::monostate>(after.value);
  if (in_values) {
    const std::string sql =
        after.start ? sql_of(c, absl::StrCat(c, " IS NOT NULL"), true, "?2")
                    : sql_of(c,
                             absl::StrCat(c, " IS NOT NULL AND ", c,
                                          descending ? " <= ?2" : " >= ?2", " AND (", c,
                                          descending ? " < ?2" : " > ?2", " OR ", id, " > ?3)"),
                             true, "?4");
    std::unique_ptr<Statement> stmt = prepare(sql);
    if (!stmt->status().ok()) return stmt->status();
    stmt->Bind(1, RecordKindName(kind));
    if (walk->walk) stmt->Bind(5, walk->domain);
    if (after.start) {
      stmt->Bind(2, int64_t{limit});
    } else {
      stmt->BindValue(2, after.value).Bind(3, after.id).Bind(4, int64_t{limit});
    }
    BindTests(*stmt, tests, first_test);
    if (absl::Status s = read(*stmt); !s.ok()) return s;
  }
  // Then the records without one, in id order.
  if (static_cast<int>(records.size()) < limit) {
    std::unique_ptr<Statement> stmt =
        prepare(sql_of("NULL", absl::StrCat(c, " IS NULL AND ", id, " > ?2"), false, "?3"));
    if (!stmt->status().ok()) return stmt->status();
    if (walk->walk) stmt->Bind(5, walk->domain);
    stmt->Bind(1, RecordKindName(kind))
        // "" (not a null view, which SQLite would bind as NULL): every id is after it.
        .Bind(2, in_values ? absl::string_view("") : absl::string_view(after.id))
        .Bind(3, int64_t{limit - static_cast<int>(records.size())});
    BindTests(*stmt, tests, first_test);
    if (absl::Status s = read(*stmt); !s.ok()) return s;
  }
  return records;
}

absl::StatusOr<std::vector<StoredRecord>> SqliteStore::ListWhere(
    RecordKind kind, absl::string_view after_id, int limit,
    const std::vector<ColumnTest>& column_tests) {
  std::vector<const ColumnTest*> tests = Applicable(column_tests);
  if (tests.empty()) return List(kind, after_id, limit);
  StoreLock lock(this);
  absl::StatusOr<DomainWalk> walk = DomainToWalk(kind, column_tests);
  if (!walk.ok()) return walk.status();
  if (walk->none) return std::vector<StoredRecord>{};
  if (walk->walk) {
    // One domain's models in id order (model_domains' key), the numbers
    // tested on its rows, the rest on the records: ?4 the domain.
    tests = WithoutImpliedBy(tests, walk->domain);
    Statement stmt(db_, filter_statements_,
                   absl::StrCat("SELECT r.id, r.display_name, r.payload, r.revision "
                                "FROM model_domains d CROSS JOIN records r "
                                "WHERE d.domain = ?4 AND d.id > ?2 AND r.kind = ?1 "
                                "AND r.id = d.id",
                                TestsSql(tests, 5, -1, "d.", "r."), " ORDER BY d.id LIMIT ?3"),
                   kMaxFilterStatements);
    if (!stmt.status().ok()) return stmt.status();
    stmt.Bind(1, RecordKindName(kind))
        .Bind(2, after_id)
        .Bind(3, int64_t{limit})
        .Bind(4, walk->domain);
    BindTests(stmt, tests, 5);
    return ReadRecords(stmt);
  }
  Statement stmt(db_, filter_statements_,
                 absl::StrCat("SELECT id, display_name, payload, revision FROM records "
                              "WHERE kind = ?1 AND id > ?2",
                              TestsSql(tests, 4, -1), " ORDER BY id LIMIT ?3"),
                 kMaxFilterStatements);
  if (!stmt.status().ok()) return stmt.status();
  stmt.Bind(1, RecordKindName(kind)).Bind(2, after_id).Bind(3, int64_t{limit});
  BindTests(stmt, tests, 4);
  return ReadRecords(stmt);
}

absl::StatusOr<SqliteStore::DomainWalk> SqliteStore::DomainToWalk(
    RecordKind kind, const std::vector<ColumnTest>& tests) {
  DomainWalk walk;
  if (kind != RecordKind::kModel) return walk;
  const std::string* text = nullptr;
  for (const ColumnTest& test : tests) {
    if (test.column == kDomainsValue && test.op == ColumnTest::Op::kContains) {
      text = std::get_if<std::string>(&test.value);
      if (text != nullptr) break;
    }
  }
  if (text == nullptr) return walk;
  // Models an older binary stored have no rows yet (their values are being
  // filled, see Catalog::FillOrderValues): the filter text's test until then.
  // Nothing becomes pending again once the list is empty.
  if (!domain_rows_complete_) {
    Statement pending(db_, statements_,
                      "SELECT 1 FROM order_values_pending WHERE kind = 'model' LIMIT 1");
    if (!pending.status().ok()) return pending.status();
    absl::StatusOr<bool> row = pending.Step();
    if (!row.ok()) return row.status();
    if (*row) return walk;
    domain_rows_complete_ = true;
  }
  // The domains that contain the text.
  absl::StatusOr<const Domains*> domains = KnownDomains();
  if (!domains.ok()) return domains.status();
  if ((*domains)->too_many) return DomainWalk{};
  int matching = 0;
  for (const std::string& domain : (*domains)->names) {
    if (absl::StrContains(domain, *text)) {
      if (++matching > 1) return DomainWalk{};
      walk.domain = domain;
    }
  }
  // One domain: walk it; none: no model can match; several: the models of
  // each would have to be merged in order, left to the filter text.
  walk.walk = matching == 1;
  walk.none = matching == 0;
  return walk;
}

absl::StatusOr<const SqliteStore::Domains*> SqliteStore::KnownDomains() {
  if (known_domains_.has_value()) return &*known_domains_;
  // The distinct domains, one seek each (read per List, this was 0.15 M
  // instructions of a page at a million models, under the store's lock).
  Statement first(db_, statements_, "SELECT domain FROM model_domains ORDER BY domain LIMIT 1");
  Statement next(db_, statements_,
                 "SELECT domain FROM model_domains WHERE domain > ? ORDER BY domain LIMIT 1");
  for (const Statement* stmt : {&first, &next}) {
    if (!stmt->status().ok()) return stmt->status();
  }
  Domains domains;
  Statement* stmt = &first;
  while (true) {
    absl::StatusOr<bool> row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    if (static_cast<int>(domains.names.size()) == kMaxDomainsScanned) {
      domains.names.clear();
      domains.too_many = true;
      break;
    }
    domains.names.push_back(stmt->Text(0));
    next.Reset().Bind(1, domains.names.back());
    stmt = &next;
  }
  known_domains_ = std::move(domains);
  return &*known_domains_;
}

absl::Status SqliteStore::AddDomainRows(absl::string_view id, const OrderValues& values) {
  const auto* domains = std::get_if<std::string>(&values[kDomainsValue]);
  if (domains == nullptr || domains->empty()) return absl::OkStatus();
  // Read again by the next list that needs them (after this transaction,
  // committed or rolled back: no list reads meanwhile, the lock is held).
  known_domains_.reset();
  Statement add(db_, statements_,
                "INSERT OR REPLACE INTO model_domains (domain, id, order_parameters, "
                "order_training_compute_flop, order_publication_date, order_display_name) "
                "VALUES (?, ?, ?, ?, ?, ?)");
  if (!add.status().ok()) return add.status();
  for (absl::string_view domain : Elements(*domains)) {
    // Bound without copies: `id` and `values` outlive `add`.
    add.Reset().BindUncopied(1, domain).BindUncopied(2, id);
    for (int i = 0; i < kOrderColumnCount; ++i) add.BindValueUncopied(3 + i, values[i]);
    if (absl::Status s = add.Run(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::RemoveDomainRows(absl::string_view id) {
  std::string text;
  {
    Statement old(db_, statements_,
                  "SELECT filter_text FROM records WHERE kind = 'model' AND id = ?");
    if (!old.status().ok()) return old.status();
    absl::StatusOr<bool> row = old.Bind(1, id).Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
    text = old.Text(0);
  }
  Statement remove(db_, statements_, "DELETE FROM model_domains WHERE domain = ? AND id = ?");
  if (!remove.status().ok()) return remove.status();
  known_domains_.reset();
  for (absl::string_view element : Elements(text)) {
    if (absl::Status s = remove.Reset().Bind(1, element).Bind(2, id).Run(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<StoredRecord>> SqliteStore::RecordsWithoutOrderValues(RecordKind kind,
                                                                                 int limit) {
  StoreLock lock(this);
  Statement stmt(db_, statements_,
                 "SELECT r.id, r.display_name, r.payload, r.revision FROM order_values_pending p "
                 "JOIN records r ON r.kind = p.kind AND r.id = p.id WHERE p.kind = ? "
                 "ORDER BY p.id LIMIT ?");
  if (!stmt.status().ok()) return stmt.status();
  stmt.Bind(1, RecordKindName(kind)).Bind(2, int64_t{limit});
  return ReadRecords(stmt);
}

absl::Status SqliteStore::SetOrderValues(
    RecordKind kind, const std::vector<std::pair<StoredRecord, OrderValues>>& values, bool done) {
  StoreLock lock(this);
  return InTransaction(db_, [&]() -> absl::Status {
    // Each column group is written only when it differs from what is stored:
    // an upgrade from schema 4 (values and text already there, only the
    // domain rows missing) or 3 (values there) then rewrites no order index
    // (SQLite updates every index of a SET column, equal value or not).
    Statement current(db_, statements_,
                      "SELECT order_parameters, order_training_compute_flop, "
                      "order_publication_date, order_display_name, filter_text FROM records "
                      "WHERE kind = ? AND id = ? AND revision = ?");
    Statement set_order(db_, statements_,
                        "UPDATE records SET order_parameters = ?, order_training_compute_flop = ?, "
                        "order_publication_date = ?, order_display_name = ? "
                        "WHERE kind = ? AND id = ?");
    Statement set_text(db_, statements_,
                       "UPDATE records SET filter_text = ? WHERE kind = ? AND id = ?");
    Statement clear(db_, statements_, "DELETE FROM order_values_pending WHERE kind = ? AND id = ?");
    for (const Statement* stmt : {&current, &set_order, &set_text, &clear}) {
      if (!stmt->status().ok()) return stmt->status();
    }
    const absl::string_view kind_name = RecordKindName(kind);
    for (const auto& [record, order_values] : values) {
      absl::StatusOr<bool> unchanged =
          current.Reset().Bind(1, kind_name).Bind(2, record.id).Bind(3, record.revision).Step();
      if (!unchanged.ok()) return unchanged.status();
      // Not at the revision read: a write since then stored its own values.
      if (*unchanged) {
        bool order_differs = false;
        for (int i = 0; i < kOrderColumnCount; ++i) {
          order_differs = order_differs || !(current.Value(i) == order_values[i]);
        }
        const bool text_differs =
            !(current.Value(kFilterTextValue) == order_values[kFilterTextValue]);
        current.Reset();
        if (order_differs) {
          set_order.Reset();
          for (int i = 0; i < kOrderColumnCount; ++i) set_order.BindValue(1 + i, order_values[i]);
          if (absl::Status s = set_order.Bind(5, kind_name).Bind(6, record.id).Run(); !s.ok()) {
            return s;
          }
        }
        if (text_differs) {
          if (absl::Status s = set_text.Reset()
                                   .BindValue(1, order_values[kFilterTextValue])
                                   .Bind(2, kind_name)
                                   .Bind(3, record.id)
                                   .Run();
              !s.ok()) {
            return s;
          }
        }
        if (kind == RecordKind::kModel) {
          if (absl::Status s = AddDomainRows(record.id, order_values); !s.ok()) return s;
        }
        if (absl::Status s = clear.Reset().Bind(1, kind_name).Bind(2, record.id).Run(); !s.ok()) {
          return s;
        }
      }
      // Changed since it was read: a write through the API wrote its own
      // rows, an import's may have deferred them again; either way the
      // entry stays and the next batch reads the record as it is now.
    }
    if (!done) return absl::OkStatus();
    // Only the entries of records deleted since they were listed: an import
    // running beside the fill may have listed new ones.
    Statement rest(
        db_, statements_,
        "DELETE FROM order_values_pending WHERE kind = ?1 AND NOT EXISTS "
        "(SELECT 1 FROM records r WHERE r.kind = ?1 AND r.id = order_values_pending.id)");
    if (!rest.status().ok()) return rest.status();
    return rest.Bind(1, kind_name).Run();
  });
}

absl::StatusOr<int64_t> SqliteStore::Count(RecordKind kind) {
  StoreLock lock(this);
  Statement stmt(db_, statements_, "SELECT COUNT(*) FROM records WHERE kind = ?");
  if (!stmt.status().ok()) return stmt.status();
  stmt.Bind(1, RecordKindName(kind));
  absl::StatusOr<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  return stmt.Int(0);
}

absl::Status SqliteStore::LoadRevision() {
  StoreLock lock(this);
  Statement stmt(db_, statements_, "SELECT revision FROM catalog_state WHERE id = 1");
  if (!stmt.status().ok()) return stmt.status();
  absl::StatusOr<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  revision_.store(stmt.Int(0), std::memory_order_release);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> SqliteStore::Revision() {
  return revision_.load(std::memory_order_acquire);
}

absl::StatusOr<int32_t> SqliteStore::ShippedDatasetVersion() {
  StoreLock lock(this);
  Statement stmt(db_, statements_,
                 "SELECT shipped_dataset_version FROM catalog_state WHERE id = 1");
  if (!stmt.status().ok()) return stmt.status();
  absl::StatusOr<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  return static_cast<int32_t>(stmt.Int(0));
}

absl::Status SqliteStore::RaiseShippedDatasetVersion(int32_t version) {
  StoreLock lock(this);
  Statement stmt(db_, statements_,
                 "UPDATE catalog_state SET shipped_dataset_version = "
                 "MAX(shipped_dataset_version, ?1) WHERE id = 1");
  if (!stmt.status().ok()) return stmt.status();
  return stmt.Bind(1, int64_t{version}).Run();
}

absl::StatusOr<int64_t> SqliteStore::Write(const std::vector<BatchWrite>& writes) {
  StoreLock lock(this);
  return Committed(InTransaction(db_, [&]() -> absl::StatusOr<int64_t> {
    absl::StatusOr<int64_t> revision = NextRevision();
    if (!revision.ok()) return revision.status();
    if (absl::Status s = WriteBatchAt(*revision, writes); !s.ok()) return s;
    return *revision;
  }));
}

absl::StatusOr<int64_t> SqliteStore::WriteInOneTransaction(const BatchSource& next_batch) {
  // The store's lock is held from the first batch to the commit or
  // rollback: the connection is the store's only one (locking_mode=EXCLUSIVE
  // keeps any other out), so a read on it meanwhile would see the writes not
  // yet committed. Reads and writes wait instead, as they waited for one
  // Write of every planned row before (a read the record cache answers does
  // not wait; CachedStore drops each batch's records as it is pulled, under
  // this lock). The pages the transaction dirties beyond the page cache
  // spill to the WAL (SQLite's cache_spill), so its memory stays the cache's.
  StoreLock lock(this);
  std::vector<BatchWrite> batch;
  // Nothing to write is no write (no revision, no change logged).
  if (absl::Status s = next_batch(&batch); !s.ok()) return s;
  if (batch.empty()) return Revision();
  return Committed(InTransaction(db_, [&]() -> absl::StatusOr<int64_t> {
    absl::StatusOr<int64_t> revision = NextRevision();
    if (!revision.ok()) return revision.status();
    while (!batch.empty()) {
      if (absl::Status s = WriteBatchAt(*revision, batch); !s.ok()) return s;
      batch.clear();
      if (absl::Status s = next_batch(&batch); !s.ok()) return s;
    }
    return *revision;
  }));
}

// Each write's statements at `revision`: a create's insert, or an update's
// check and update, then its domain rows (or their deferral), keys and change.
absl::Status SqliteStore::WriteBatchAt(int64_t revision, const std::vector<BatchWrite>& writes) {
  Statement insert(db_, statements_,
                   "INSERT INTO records (kind, id, display_name, payload, revision, "
                   "order_parameters, order_training_compute_flop, order_publication_date, "
                   "order_display_name, filter_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  Statement update(db_, statements_,
                   "UPDATE records SET display_name = ?, payload = ?, revision = ?, "
                   "order_parameters = ?, order_training_compute_flop = ?, "
                   "order_publication_date = ?, order_display_name = ?, filter_text = ? "
                   "WHERE kind = ? AND id = ?");
  Statement defer(db_, statements_,
                  "INSERT OR IGNORE INTO order_values_pending (kind, id) VALUES ('model', ?)");
  for (const Statement* stmt : {&insert, &update, &defer}) {
    if (!stmt->status().ok()) return stmt->status();
  }
  for (const BatchWrite& write : writes) {
    const RecordWrite& record = write.record;
    const absl::string_view kind = RecordKindName(record.kind);
    absl::Status written;
    const bool created = write.operation == BatchWrite::Operation::kCreate;
    if (created) {
      // A taken id fails the primary key (the statement alone is undone),
      // found by the insert's own seek instead of a lookup before it.
      // Bound without copies: `writes` outlives the statement.
      written = insert.Reset()
                    .BindUncopied(1, kind)
                    .BindUncopied(2, record.id)
                    .BindUncopied(3, record.display_name)
                    .BindBlobUncopied(4, record.payload)
                    .Bind(5, revision)
                    .BindValuesUncopied(6, record.order_values)
                    .Run();
      if (!written.ok() && sqlite3_extended_errcode(db_) == SQLITE_CONSTRAINT_PRIMARYKEY) {
        return AlreadyExistsError(record.kind, record.id);
      }
    } else {
      written = CheckCurrent(record.kind, record.id, write.expected_revision);
      if (written.ok() && record.kind == RecordKind::kModel) {
        written = RemoveDomainRows(record.id);  // by the text still stored
      }
      if (written.ok()) {
        written = update.Reset()
                      .Bind(1, record.display_name)
                      .BindBlob(2, record.payload)
                      .Bind(3, revision)
                      .BindValues(4, record.order_values)
                      .Bind(9, kind)
                      .Bind(10, record.id)
                      .Run();
      }
    }
    if (written.ok() && record.kind == RecordKind::kModel) {
      if (write.defer_derived_rows) {
        // Its domain rows come with the fill after the import
        // (SetOrderValues); until then domain filters use the filter text.
        written = defer.Reset().Bind(1, record.id).Run();
        domain_rows_complete_ = false;
      } else {
        written = AddDomainRows(record.id, record.order_values);
      }
    }
    if (!written.ok()) return written;
    // A created record has no keys yet (Delete removes a record's keys).
    if (absl::Status s = ReplaceLookupKeys(record, /*clear_old=*/!created); !s.ok()) return s;
    if (absl::Status s = LogChange(revision, record.kind, record.id, created ? "create" : "update");
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> SqliteStore::Committed(absl::StatusOr<int64_t> revision) {
  if (revision.ok()) revision_.store(*revision, std::memory_order_release);
  return revision;
}

absl::StatusOr<int64_t> SqliteStore::NextRevision() {
  Statement bump(
      db_, statements_,
      "UPDATE catalog_state SET revision = revision + 1 WHERE id = 1 RETURNING revision");
  if (!bump.status().ok()) return bump.status();
  absl::StatusOr<bool> row = bump.Step();
  if (!row.ok()) return row.status();
  const int64_t revision = bump.Int(0);
  if (absl::Status s = bump.Run(); !s.ok()) return s;  // finish the RETURNING statement
  return revision;
}

absl::Status SqliteStore::CheckCurrent(RecordKind kind, absl::string_view id,
                                       int64_t expected_revision) {
  Statement current(db_, statements_, "SELECT revision FROM records WHERE kind = ? AND id = ?");
  if (!current.status().ok()) return current.status();
  absl::StatusOr<bool> row = current.Bind(1, RecordKindName(kind)).Bind(2, id).Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::NotFoundError(absl::StrCat(RecordKindName(kind), " ", id));
  if (expected_revision != 0 && current.Int(0) != expected_revision) {
    return StaleEtagError(kind, id, expected_revision, current.Int(0));
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::LogChange(int64_t revision, RecordKind kind, absl::string_view id,
                                    absl::string_view operation) {
  Statement log(db_, statements_,
                "INSERT INTO changes (revision, kind, id, operation) VALUES (?, ?, ?, ?)");
  if (!log.status().ok()) return log.status();
  return log.Bind(1, revision)
      .BindUncopied(2, RecordKindName(kind))
      .BindUncopied(3, id)
      .BindUncopied(4, operation)
      .Run();
}

absl::Status SqliteStore::ReplaceLookupKeys(const RecordWrite& record, bool clear_old) {
  if (clear_old) {
    Statement clear(db_, statements_, "DELETE FROM lookup_keys WHERE kind = ? AND id = ?");
    if (!clear.status().ok()) return clear.status();
    if (absl::Status s = clear.Bind(1, RecordKindName(record.kind)).Bind(2, record.id).Run();
        !s.ok()) {
      return s;
    }
  }
  Statement add(db_, statements_,
                "INSERT OR IGNORE INTO lookup_keys (kind, key, id) VALUES (?, ?, ?)");
  if (!add.status().ok()) return add.status();
  for (const std::string& key : record.lookup_keys) {
    if (absl::Status s = add.Reset()
                             .BindUncopied(1, RecordKindName(record.kind))
                             .BindUncopied(2, key)
                             .BindUncopied(3, record.id)
                             .Run();
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> SqliteStore::Delete(RecordKind kind, absl::string_view id,
                                            int64_t expected_revision) {
  StoreLock lock(this);
  return Committed(InTransaction(db_, [&]() -> absl::StatusOr<int64_t> {
    if (absl::Status s = CheckCurrent(kind, id, expected_revision); !s.ok()) return s;
    if (kind == RecordKind::kModel) {
      if (absl::Status s = RemoveDomainRows(id); !s.ok()) return s;
    }
    absl::StatusOr<int64_t> revision = NextRevision();
    if (!revision.ok()) return revision.status();
    // The record's entry waiting for the fill goes with it (a List would
    // otherwise fall back to the filter text until the next fill's end).
    for (const char* sql : {"DELETE FROM records WHERE kind = ? AND id = ?",
                            "DELETE FROM lookup_keys WHERE kind = ? AND id = ?",
                            "DELETE FROM order_values_pending WHERE kind = ? AND id = ?"}) {
      Statement remove(db_, statements_, sql);
      if (!remove.status().ok()) return remove.status();
      if (absl::Status s = remove.Bind(1, RecordKindName(kind)).Bind(2, id).Run(); !s.ok()) {
        return s;
      }
    }
    if (absl::Status s = LogChange(*revision, kind, id, "delete"); !s.ok()) return s;
    return *revision;
  }));
}

absl::StatusOr<std::vector<Change>> SqliteStore::ChangesAfter(const ChangePosition& after,
                                                              int limit) {
  StoreLock lock(this);
  const bool whole_revision = after.id.empty();
  // The primary key's order: a page may end, and the next begin, inside a revision.
  Statement stmt(db_, statements_,
                 whole_revision ? "SELECT revision, kind, id, operation FROM changes WHERE "
                                  "revision > ? ORDER BY revision, kind, id LIMIT ?"
                                : "SELECT revision, kind, id, operation FROM changes WHERE "
                                  "(revision, kind, id) > (?, ?, ?) "
                                  "ORDER BY revision, kind, id LIMIT ?");
  if (!stmt.status().ok()) return stmt.status();
  if (whole_revision) {
    stmt.Bind(1, after.revision).Bind(2, int64_t{limit});
  } else {
    stmt.Bind(1, after.revision)
        .Bind(2, RecordKindName(after.kind))
        .Bind(3, after.id)
        .Bind(4, int64_t{limit});
  }
  std::vector<Change> changes;
  while (true) {
    absl::StatusOr<bool> row = stmt.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    changes.push_back(Change{stmt.Int(0),
                             stmt.Text(1) == "model" ? RecordKind::kModel : RecordKind::kHardware,
                             stmt.Text(2), stmt.Text(3)});
  }
  return changes;
}

}  // namespace modelatlas::catalog
