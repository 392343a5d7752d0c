#include "catalog-service/store/postgres_store.h"

#include <algorithm>
#include <cmath>
#include <pqxx/pqxx>
#include <variant>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "catalog-service/store/migrations.h"
#include "common/status/errors.h"

namespace modelatlas::catalog {

// A record by its key: GetModel's read when the record is not cached.
constexpr char kGetRecord[] = "get_record";

struct PooledConnection {
  explicit PooledConnection(const std::string& conninfo) : connection(conninfo) {
    // Registered here, prepared by the server at its first use on this
    // connection: each call then sends only the statement's name and keys,
    // and the server neither parses nor plans it again.
    connection.prepare(kGetRecord,
                       "SELECT id, display_name, encode(payload, 'hex'), revision FROM records "
                       "WHERE kind = $1 AND id = $2");
  }
  pqxx::connection connection;
};

namespace {

// Serializes schema migrations of replicas starting at the same time.
constexpr int64_t kMigrationLockKey = 0x4d6f64656c41746cLL;  // "ModelAtl"

// Payloads travel as hex text both ways (encode(payload, 'hex') out, a
// '\\x...' bytea literal in), which needs no binary parameters from libpqxx.
StoredRecord ReadRecord(const pqxx::row& row) {
  return StoredRecord{row[0].as<std::string>(), row[1].as<std::string>(),
                      absl::HexStringToBytes(row[2].as<std::string>()), row[3].as<int64_t>()};
}

std::string Kind(RecordKind kind) { return std::string(RecordKindName(kind)); }

// The columns of OrderColumn, in its order (migration 3).
constexpr const char* kOrderColumnNames[kOrderColumnCount] = {
    "order_parameters", "order_training_compute_flop", "order_publication_date",
    "order_display_name"};

// The indexes migration 3 created on the order columns: only reads use
// them, and an import's rows land in each at a random place. In a million-row
// import, index insertions took 44% of the server's CPU (perf, branch
// s16-pg) before a bulk load dropped these four of the nine.
std::string OrderIndexName(int column) {
  return absl::StrCat("records_by_", absl::string_view(kOrderColumnNames[column]).substr(6));
}
std::string CreateOrderIndexSql(int column) {
  return absl::StrCat("CREATE INDEX IF NOT EXISTS ", OrderIndexName(column), " ON records (kind, ",
                      kOrderColumnNames[column], ", id)");
}

// An order value as a query parameter: its text (numbers with 17 significant
// digits, which give back the same double), or null for an unset value.
class ValueParam {
 public:
  explicit ValueParam(const OrderValue& value) {
    if (const auto* number = std::get_if<double>(&value)) {
      text_ = absl::StrFormat("%.17g", *number);
    } else if (const auto* text = std::get_if<std::string>(&value)) {
      text_ = *text;
    } else {
      null_ = true;
    }
  }
  const char* get() const { return null_ ? nullptr : text_.c_str(); }

 private:
  std::string text_;
  bool null_ = false;
};

struct ValueParams {
  explicit ValueParams(const OrderValues& values)
      : p{ValueParam(values[0]), ValueParam(values[1]), ValueParam(values[2]),
          ValueParam(values[3]), ValueParam(values[4])} {}
  ValueParam p[kStoredValueCount];
};

// The SQL of the ColumnTests this store applies, each " AND ...", values
// quoted by the connection (the text's shape depends on the filter, so
// literals rather than a prepared statement); others are left out (the
// caller filters anyway), as non-finite numbers are.
std::string TestsSql(pqxx::transaction_base& tx, const std::vector<ColumnTest>& tests) {
  std::string sql;
  for (const ColumnTest& test : tests) {
    if (test.op == ColumnTest::Op::kContains) {
      const auto* text = std::get_if<std::string>(&test.value);
      if (test.column != kFilterTextValue || text == nullptr) continue;
      // NULL: a row an older binary wrote, not yet filled in; let it through.
      absl::StrAppend(&sql, " AND (filter_text IS NULL OR strpos(filter_text, ", tx.quote(*text),
                      ") > 0)");
      continue;
    }
    const auto* number = std::get_if<double>(&test.value);
    if (number == nullptr || !std::isfinite(*number) || test.column < 0 ||
        test.column >= kOrderColumnCount ||
        test.column == static_cast<int>(OrderColumn::kDisplayName)) {
      continue;
    }
    const char* op = SqlComparison(test.op);
    // A NULL value compares to nothing: unset fields pass no comparison.
    absl::StrAppend(&sql, " AND ", kOrderColumnNames[test.column], " ", op, " ",
                    tx.quote(ValueParam(test.value).get()), "::double precision");
  }
  return sql;
}

OrderValue ReadValue(const pqxx::field& field, OrderColumn column) {
  if (field.is_null()) return std::monostate();
  if (column == OrderColumn::kDisplayName) return field.as<std::string>();
  return field.as<double>();
}

// bytea input in hex format.
std::string HexBytea(const std::string& bytes) {
  return absl::StrCat("\\x", absl::BytesToHexString(bytes));
}

// Inside a write transaction: takes the revision row lock and returns the
// next revision.
int64_t NextRevision(pqxx::work& tx) {
  return tx
      .exec1("UPDATE catalog_state SET revision = revision + 1 WHERE id = 1 RETURNING revision")[0]
      .as<int64_t>();
}

void LogChange(pqxx::work& tx, int64_t revision, RecordKind kind, const std::string& id,
               const char* operation) {
  tx.exec_params("INSERT INTO changes (revision, kind, id, operation) VALUES ($1, $2, $3, $4)",
                 revision, Kind(kind), id, operation);
}

// The record's revision, checked against expected_revision (0 = any).
absl::Status CheckCurrent(pqxx::work& tx, RecordKind kind, const std::string& id,
                          int64_t expected_revision) {
  pqxx::result current = tx.exec_params(
      "SELECT revision FROM records WHERE kind = $1 AND id = $2 FOR UPDATE", Kind(kind), id);
  if (current.empty()) return absl::NotFoundError(absl::StrCat(Kind(kind), " ", id));
  const int64_t revision = current[0][0].as<int64_t>();
  if (expected_revision != 0 && revision != expected_revision) {
    return StaleEtagError(kind, id, expected_revision, revision);
  }
  return absl::OkStatus();
}

// ALREADY_EXISTS naming the first create of `writes` (in their order) that
// `inserted` (the (kind, id) rows an INSERT ... ON CONFLICT DO NOTHING
// RETURNING wrote) lacks: its id was taken.
absl::Status FirstTaken(const std::vector<BatchWrite>& writes, const pqxx::result& inserted) {
  absl::flat_hash_set<std::pair<std::string, std::string>> ids;
  for (const auto& row : inserted) ids.emplace(row[0].as<std::string>(), row[1].as<std::string>());
  for (const BatchWrite& write : writes) {
    if (write.operation == BatchWrite::Operation::kCreate &&
        !ids.contains(std::make_pair(Kind(write.record.kind), write.record.id))) {
      return AlreadyExistsError(write.record.kind, write.record.id);
    }
  }
  return absl::OkStatus();
}

}  // namespace

PostgresStore::PostgresStore(std::string conninfo, int pool_size)
    : conninfo_(std::move(conninfo)), available_(pool_size) {}

PostgresStore::~PostgresStore() = default;

absl::StatusOr<std::unique_ptr<PostgresStore>> PostgresStore::Open(const std::string& conninfo,
                                                                   int pool_size) {
  if (pool_size < 1) return InvalidFieldError("pool_size", "must be at least 1");
  std::unique_ptr<PostgresStore> store(new PostgresStore(conninfo, pool_size));
  if (absl::Status s = store->Migrate(); !s.ok()) return s;
  // A bulk load a crash cut short left its indexes dropped.
  if (absl::Status s = store->CreateMissingOrderIndexes(nullptr); !s.ok()) return s;
  return store;
}

template <typename Result, typename Body>
absl::StatusOr<Result> PostgresStore::WithConnection(Body body) {
  std::unique_ptr<PooledConnection> connection;
  {
    absl::MutexLock lock(&mutex_);
    auto has_one = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
      return !idle_.empty() || available_ > 0;
    };
    mutex_.Await(absl::Condition(&has_one));
    if (!idle_.empty()) {
      connection = std::move(idle_.back());
      idle_.pop_back();
    } else {
      --available_;
    }
  }
  auto give_back = [&](bool healthy) {
    absl::MutexLock lock(&mutex_);
    if (healthy && connection != nullptr && connection->connection.is_open()) {
      idle_.push_back(std::move(connection));
    } else {
      ++available_;  // a new connection is made next time
    }
  };
  try {
    if (connection == nullptr || !connection->connection.is_open()) {
      connection = std::make_unique<PooledConnection>(conninfo_);
    }
    absl::StatusOr<Result> result = body(connection->connection);
    give_back(true);
    return result;
  } catch (const pqxx::broken_connection& e) {
    give_back(false);
    return absl::UnavailableError(absl::StrCat("postgres: connection lost: ", e.what()));
  } catch (const pqxx::unique_violation& e) {
    give_back(true);
    return WithReason(absl::AlreadyExistsError(absl::StrCat("postgres: ", e.what())),
                      "RESOURCE_ALREADY_EXISTS");
  } catch (const pqxx::transaction_rollback& e) {
    give_back(true);
    return absl::AbortedError(absl::StrCat("postgres: transaction rolled back: ", e.what()));
  } catch (const pqxx::sql_error& e) {
    give_back(true);
    return absl::InternalError(
        absl::StrCat("postgres: ", e.what(), " (SQLSTATE ", e.sqlstate(), ")"));
  } catch (const std::exception& e) {
    give_back(false);
    return absl::UnavailableError(absl::StrCat("postgres: ", e.what()));
  }
}

absl::Status PostgresStore::Migrate() {
  absl::StatusOr<int> version = WithConnection<int>([](pqxx::connection& c) -> absl::StatusOr<int> {
    pqxx::work tx(c);
    tx.exec_params("SELECT pg_advisory_xact_lock($1)", kMigrationLockKey);
    tx.exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "version INTEGER PRIMARY KEY, description TEXT NOT NULL)");
    int current = tx.exec1("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")[0].as<int>();
    const std::vector<Migration>& migrations = PostgresMigrations();
    if (current > static_cast<int>(migrations.size())) {
      return absl::FailedPreconditionError(
          absl::StrCat("database schema version ", current, " is newer than this binary knows (",
                       migrations.size(), "); upgrade catalog-service"));
    }
    for (const Migration& migration : migrations) {
      if (migration.version <= current) continue;
      tx.exec(migration.sql);
      tx.exec_params("INSERT INTO schema_migrations (version, description) VALUES ($1, $2)",
                     migration.version, migration.description);
      current = migration.version;
    }
    tx.commit();
    return current;
  });
  if (!version.ok()) return version.status();
  schema_version_ = *version;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> PostgresStore::MissingOrderIndexes() {
  return WithConnection<std::vector<std::string>>(
      [&](pqxx::connection& c) -> absl::StatusOr<std::vector<std::string>> {
        pqxx::nontransaction tx(c);
        std::vector<std::string> missing;
        for (int column = 0; column < kOrderColumnCount; ++column) {
          const std::string name = OrderIndexName(column);
          if (tx.exec_params1("SELECT to_regclass($1) IS NULL", name)[0].as<bool>()) {
            missing.push_back(name);
          }
        }
        return missing;
      });
}

absl::Status PostgresStore::CreateMissingOrderIndexes(
    const std::function<void(absl::Duration)>& step_done) {
  absl::StatusOr<std::vector<std::string>> missing = MissingOrderIndexes();
  if (!missing.ok()) return missing.status();
  for (int column = 0; column < kOrderColumnCount; ++column) {
    if (std::find(missing->begin(), missing->end(), OrderIndexName(column)) == missing->end()) {
      continue;
    }
    const absl::Time start = absl::Now();
    // CREATE INDEX takes the table's SHARE lock: reads go on, writes (other
    // replicas') wait for this one index. Two replicas creating the same
    // index at once (both opening after a crash) would both pass IF NOT
    // EXISTS and one fail on the name: the migration lock puts them in turn.
    absl::StatusOr<bool> created =
        WithConnection<bool>([&](pqxx::connection& c) -> absl::StatusOr<bool> {
          pqxx::work tx(c);
          tx.exec_params("SELECT pg_advisory_xact_lock($1)", kMigrationLockKey);
          tx.exec(CreateOrderIndexSql(column));
          tx.commit();
          return true;
        });
    if (!created.ok()) return created.status();
    if (step_done) step_done(absl::Now() - start);
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> PostgresStore::BeginBulkLoad() {
  {
    absl::MutexLock lock(&mutex_);
    if (bulk_loads_++ > 0) return true;
  }
  // One transaction: all four dropped or none. DROP INDEX waits for the
  // reads under way (its lock is exclusive) and holds new ones that long.
  absl::StatusOr<bool> dropped =
      WithConnection<bool>([&](pqxx::connection& c) -> absl::StatusOr<bool> {
        pqxx::work tx(c);
        tx.exec_params("SELECT pg_advisory_xact_lock($1)", kMigrationLockKey);
        for (int column = 0; column < kOrderColumnCount; ++column) {
          tx.exec(absl::StrCat("DROP INDEX IF EXISTS ", OrderIndexName(column)));
        }
        tx.commit();
        return true;
      });
  if (!dropped.ok()) {
    absl::MutexLock lock(&mutex_);
    --bulk_loads_;
    return dropped.status();
  }
  return true;
}

absl::Status PostgresStore::EndBulkLoad(const std::function<void(absl::Duration)>& step_done) {
  {
    absl::MutexLock lock(&mutex_);
    if (bulk_loads_ == 0) return absl::OkStatus();
    // Another bulk load still runs: the last to end rebuilds.
    if (--bulk_loads_ > 0) return absl::OkStatus();
  }
  return CreateMissingOrderIndexes(step_done);
}

absl::StatusOr<StoredRecord> PostgresStore::Get(RecordKind kind, absl::string_view id) {
  return WithConnection<StoredRecord>([&](pqxx::connection& c) -> absl::StatusOr<StoredRecord> {
    pqxx::nontransaction tx(c);  // one statement: no BEGIN/COMMIT round trips
    pqxx::result rows = tx.exec_prepared(kGetRecord, Kind(kind), std::string(id));
    if (rows.empty()) return absl::NotFoundError(absl::StrCat(Kind(kind), " ", id));
    return ReadRecord(rows[0]);
  });
}

absl::StatusOr<std::vector<std::string>> PostgresStore::FindIdsByLookupKey(RecordKind kind,
                                                                           absl::string_view key) {
  return WithConnection<std::vector<std::string>>(
      [&](pqxx::connection& c) -> absl::StatusOr<std::vector<std::string>> {
        pqxx::nontransaction tx(c);  // one statement: no BEGIN/COMMIT round trips
        std::vector<std::string> ids;
        for (const auto& row :
             tx.exec_params("SELECT DISTINCT id FROM lookup_keys WHERE kind = $1 AND key = $2 "
                            "ORDER BY id",
                            Kind(kind), std::string(key))) {
          ids.push_back(row[0].as<std::string>());
        }
        return ids;
      });
}

namespace {

// The wanted values of a batch lookup as a VALUES list, each quoted.
std::string QuotedValuesList(pqxx::transaction_base& tx, const std::vector<std::string>& values) {
  std::string list;
  for (const std::string& value : values) {
    absl::StrAppend(&list, list.empty() ? "(" : ",(", tx.quote(value), ")");
  }
  return list;
}

}  // namespace

// One statement for a batch of an import's lookups (see CatalogStore::GetMany):
// an import of 100,000 rows spent 1.8 ms per row on four single reads, each
// a round trip (docs/BENCHMARKS.md, a million models). Each wanted id is one
// probe of the primary key: `kind = K AND id IN (...)` was planned, on a
// table growing faster than its statistics (an import), as a scan of every
// record of the kind filtered by a hash of the list, so an import's lookups
// grew with the square of the catalog (23 s of a million-row import's 67 s
// of server CPU went to the taken-id check alone; docs/BENCHMARKS.md, branch
// s16-pg). OFFSET 0 keeps the planner from flattening the subquery into a
// join it could answer with that scan again.
absl::StatusOr<std::vector<StoredRecord>> PostgresStore::GetMany(
    RecordKind kind, const std::vector<std::string>& ids) {
  if (ids.empty()) return std::vector<StoredRecord>{};
  return WithConnection<std::vector<StoredRecord>>(
      [&](pqxx::connection& c) -> absl::StatusOr<std::vector<StoredRecord>> {
        pqxx::nontransaction tx(c);
        std::vector<StoredRecord> records;
        for (const auto& row : tx.exec(absl::StrCat(
                 "SELECT r.id, r.display_name, encode(r.payload, 'hex'), r.revision FROM (VALUES ",
                 QuotedValuesList(tx, ids),
                 ") AS wanted (id) CROSS JOIN LATERAL (SELECT id, display_name, payload, "
                 "revision FROM records WHERE kind = ",
                 tx.quote(Kind(kind)), " AND id = wanted.id OFFSET 0) AS r"))) {
          records.push_back(ReadRecord(row));
        }
        return records;
      });
}

// As GetMany: one probe of the primary key (kind, key, id) per wanted key.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> PostgresStore::FindIdsByLookupKeys(
    RecordKind kind, const std::vector<std::string>& keys) {
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  if (keys.empty()) return Pairs{};
  return WithConnection<Pairs>([&](pqxx::connection& c) -> absl::StatusOr<Pairs> {
    pqxx::nontransaction tx(c);
    Pairs found;
    for (const auto& row : tx.exec(absl::StrCat(
             "SELECT DISTINCT k.key, k.id FROM (VALUES ", QuotedValuesList(tx, keys),
             ") AS wanted (key) CROSS JOIN LATERAL (SELECT key, id FROM lookup_keys WHERE kind = ",
             tx.quote(Kind(kind)), " AND key = wanted.key OFFSET 0) AS k"))) {
      found.emplace_back(row[0].as<std::string>(), row[1].as<std::string>());
    }
    return found;
  });
}

absl::StatusOr<std::vector<StoredRecord>> PostgresStore::List(RecordKind kind,
                                                              absl::string_view after_id,
                                                              int limit) {
  return WithConnection<std::vector<StoredRecord>>(
      [&](pqxx::connection& c) -> absl::StatusOr<std::vector<StoredRecord>> {
        pqxx::nontransaction tx(c);  // one statement: no BEGIN/COMMIT round trips
        std::vector<StoredRecord> records;
        for (const auto& row : tx.exec_params(
                 "SELECT id, display_name, encode(payload, 'hex'), revision FROM records "
                 "WHERE kind = $1 AND id > $2 ORDER BY id LIMIT $3",
                 Kind(kind), std::string(after_id), limit)) {
          records.push_back(ReadRecord(row));
        }
        return records;
      });
}

absl::StatusOr<std::vector<OrderedRecord>> PostgresStore::ListOrdered(
    RecordKind kind, OrderColumn column, bool descending, const OrderSeek& after, int limit) {
  return ListOrderedWhere(kind, column, descending, after, limit, {});
}

absl::StatusOr<std::vector<OrderedRecord>> PostgresStore::ListOrderedWhere(
    RecordKind kind, OrderColumn column, bool descending, const OrderSeek& after, int limit,
    const std::vector<ColumnTest>& tests) {
  return WithConnection<std::vector<OrderedRecord>>(
      [&](pqxx::connection& c) -> absl::StatusOr<std::vector<OrderedRecord>> {
        pqxx::read_transaction tx(c);
        const std::string col = kOrderColumnNames[static_cast<int>(column)];
        const char* direction = descending ? " DESC" : "";
        const std::string where = TestsSql(tx, tests);
        std::vector<OrderedRecord> records;
        auto read = [&](const pqxx::result& rows) {
          for (const auto& row : rows) {
            records.push_back(OrderedRecord{ReadRecord(row), ReadValue(row[4], column)});
          }
        };
        // As SQLite's: the records with a value through the index (kind,
        // value, id) (descending: read backwards, runs of equal values put
        // in id order by an incremental sort), then those without, by id.
        const bool in_values = after.start || !std::holds_alternative<std::monostate>(after.value);
        if (in_values) {
          const std::string select =
              absl::StrCat("SELECT id, display_name, encode(payload, 'hex'), revision, ", col,
                           " FROM records WHERE kind = $1 AND ", col, " IS NOT NULL", where);
          if (after.start) {
            read(tx.exec_params(absl::StrCat(select, " ORDER BY ", col, direction, ", id LIMIT $2"),
                                Kind(kind), limit));
          } else {
            const ValueParam value(after.value);
            read(tx.exec_params(
                absl::StrCat(select, " AND ", col, descending ? " <= $2" : " >= $2", " AND (", col,
                             descending ? " < $2" : " > $2", " OR id > $3) ORDER BY ", col,
                             direction, ", id LIMIT $4"),
                Kind(kind), value.get(), after.id, limit));
          }
        }
        if (static_cast<int>(records.size()) < limit) {
          read(tx.exec_params(
              absl::StrCat("SELECT id, display_name, encode(payload, 'hex'), revision, NULL "
                           "FROM records WHERE kind = $1 AND ",
                           col, " IS NULL AND id > $2", where, " ORDER BY id LIMIT $3"),
              Kind(kind), in_values ? std::string() : after.id,
              limit - static_cast<int>(records.size())));
        }
        return records;
      });
}

absl::StatusOr<std::vector<StoredRecord>> PostgresStore::ListWhere(
    RecordKind kind, absl::string_view after_id, int limit, const std::vector<ColumnTest>& tests) {
  if (tests.empty()) return List(kind, after_id, limit);
  return WithConnection<std::vector<StoredRecord>>(
      [&](pqxx::connection& c) -> absl::StatusOr<std::vector<StoredRecord>> {
        pqxx::nontransaction tx(c);  // one statement: no BEGIN/COMMIT round trips
        std::vector<StoredRecord> records;
        for (const auto& row : tx.exec_params(
                 absl::StrCat("SELECT id, display_name, encode(payload, 'hex'), revision FROM "
                              "records WHERE kind = $1 AND id > $2",
                              TestsSql(tx, tests), " ORDER BY id LIMIT $3"),
                 Kind(kind), std::string(after_id), limit)) {
          records.push_back(ReadRecord(row));
        }
        return records;
      });
}

absl::StatusOr<std::vector<StoredRecord>> PostgresStore::RecordsWithoutOrderValues(RecordKind kind,
                                                                                   int limit) {
  return WithConnection<std::vector<StoredRecord>>(
      [&](pqxx::connection& c) -> absl::StatusOr<std::vector<StoredRecord>> {
        pqxx::nontransaction tx(c);  // one statement: no BEGIN/COMMIT round trips
        std::vector<StoredRecord> records;
        for (const auto& row : tx.exec_params(
                 "SELECT r.id, r.display_name, encode(r.payload, 'hex'), r.revision "
                 "FROM order_values_pending p JOIN records r ON r.kind = p.kind AND r.id = p.id "
                 "WHERE p.kind = $1 ORDER BY p.id LIMIT $2",
                 Kind(kind), limit)) {
          records.push_back(ReadRecord(row));
        }
        return records;
      });
}

absl::Status PostgresStore::SetOrderValues(
    RecordKind kind, const std::vector<std::pair<StoredRecord, OrderValues>>& values, bool done) {
  return WithConnection<bool>([&](pqxx::connection& c) -> absl::StatusOr<bool> {
           pqxx::work tx(c);
           for (const auto& [record, order_values] : values) {
             const ValueParams params(order_values);
             // Only at the revision read: a write since then set its own values.
             tx.exec_params(
                 "UPDATE records SET order_parameters = $1, order_training_compute_flop = $2, "
                 "order_publication_date = $3, order_display_name = $4, filter_text = $5 "
                 "WHERE kind = $6 AND id = $7 AND revision = $8",
                 params.p[0].get(), params.p[1].get(), params.p[2].get(), params.p[3].get(),
                 params.p[4].get(), Kind(kind), record.id, record.revision);
             tx.exec_params("DELETE FROM order_values_pending WHERE kind = $1 AND id = $2",
                            Kind(kind), record.id);
           }
           if (done) tx.exec_params("DELETE FROM order_values_pending WHERE kind = $1", Kind(kind));
           tx.commit();
           return true;
         })
      .status();
}

absl::StatusOr<int64_t> PostgresStore::Count(RecordKind kind) {
  return WithConnection<int64_t>([&](pqxx::connection& c) -> absl::StatusOr<int64_t> {
    pqxx::nontransaction tx(c);  // one statement: no BEGIN/COMMIT round trips
    return tx.exec_params1("SELECT COUNT(*) FROM records WHERE kind = $1", Kind(kind))[0]
        .as<int64_t>();
  });
}

absl::StatusOr<int64_t> PostgresStore::Revision() {
  return WithConnection<int64_t>([&](pqxx::connection& c) -> absl::StatusOr<int64_t> {
    pqxx::nontransaction tx(c);  // one statement: no BEGIN/COMMIT round trips
    return tx.exec1("SELECT revision FROM catalog_state WHERE id = 1")[0].as<int64_t>();
  });
}

absl::StatusOr<int32_t> PostgresStore::ShippedDatasetVersion() {
  return WithConnection<int32_t>([&](pqxx::connection& c) -> absl::StatusOr<int32_t> {
    pqxx::nontransaction tx(c);
    return tx.exec1("SELECT shipped_dataset_version FROM catalog_state WHERE id = 1")[0]
        .as<int32_t>();
  });
}

absl::Status PostgresStore::RaiseShippedDatasetVersion(int32_t version) {
  absl::StatusOr<bool> raised =
      WithConnection<bool>([&](pqxx::connection& c) -> absl::StatusOr<bool> {
        // One statement, atomic on its own: replicas raising it at once
        // leave the highest.
        pqxx::nontransaction tx(c);
        tx.exec_params(
            "UPDATE catalog_state SET shipped_dataset_version = "
            "GREATEST(shipped_dataset_version, $1) WHERE id = 1",
            version);
        return true;
      });
  return raised.status();
}

namespace {

// The statements of one batch of writes at `revision`, inside `tx`: Write
// runs one batch in its own transaction, WriteInOneTransaction many in one.
absl::Status WriteBatchIn(pqxx::work& tx, int64_t revision, const std::vector<BatchWrite>& writes) {
  // A statement per row and per lookup key made an import of a million
  // rows take tens of minutes of round trips: a batch now costs one query
  // for the ids it creates, one per update (checked and locked as before)
  // and one round trip for every row it writes.
  auto quote_value = [&](const OrderValue& value) -> std::string {
    const ValueParam param(value);
    return param.get() == nullptr ? "NULL" : tx.quote(std::string(param.get()));
  };
  // The same id twice in one batch: the second is taken by the first.
  // An id taken in the store is found by the insert itself (ON CONFLICT DO
  // NOTHING, the rows it inserted returned), not by a query before it: that
  // query cost a second probe per created row (docs/BENCHMARKS.md, branch
  // s16-pg).
  absl::flat_hash_set<std::pair<RecordKind, std::string>> created;
  for (const BatchWrite& write : writes) {
    if (write.operation != BatchWrite::Operation::kCreate) continue;
    if (!created.emplace(write.record.kind, write.record.id).second) {
      return AlreadyExistsError(write.record.kind, write.record.id);
    }
  }
  std::string inserts, updates, clear_keys, keys, changes;
  for (const BatchWrite& write : writes) {
    const RecordWrite& record = write.record;
    const std::string kind = tx.quote(Kind(record.kind));
    const std::string id = tx.quote(record.id);
    const std::string values =
        absl::StrCat(quote_value(record.order_values[0]), ",", quote_value(record.order_values[1]),
                     ",", quote_value(record.order_values[2]), ",",
                     quote_value(record.order_values[3]), ",", quote_value(record.order_values[4]));
    const bool create = write.operation == BatchWrite::Operation::kCreate;
    if (create) {
      absl::StrAppend(&inserts, inserts.empty() ? "" : ",", "(", kind, ",", id, ",",
                      tx.quote(record.display_name), ",", tx.quote(HexBytea(record.payload)),
                      "::bytea,", revision, ",", values, ")");
    } else {
      if (absl::Status s = CheckCurrent(tx, record.kind, record.id, write.expected_revision);
          !s.ok()) {
        return s;
      }
      absl::StrAppend(&updates, "UPDATE records SET display_name = ", tx.quote(record.display_name),
                      ", payload = ", tx.quote(HexBytea(record.payload)),
                      "::bytea, revision = ", revision,
                      ", (order_parameters, order_training_compute_flop, "
                      "order_publication_date, order_display_name, filter_text) = (",
                      values, ") WHERE kind = ", kind, " AND id = ", id, ";\n");
      absl::StrAppend(&clear_keys, "DELETE FROM lookup_keys WHERE kind = ", kind, " AND id = ", id,
                      ";\n");
    }
    for (const std::string& key : record.lookup_keys) {
      absl::StrAppend(&keys, keys.empty() ? "" : ",", "(", kind, ",", tx.quote(key), ",", id, ")");
    }
    absl::StrAppend(&changes, changes.empty() ? "" : ",", "(", revision, ",", kind, ",", id, ",",
                    create ? "'create'" : "'update'", ")");
  }
  // Two round trips: the updates and the inserted records (whose result,
  // the last statement's, names the ids inserted), then the lookup keys and
  // the change log.
  std::string sql = absl::StrCat(updates, clear_keys);
  if (!inserts.empty()) {
    absl::StrAppend(&sql,
                    "INSERT INTO records (kind, id, display_name, payload, revision, "
                    "order_parameters, order_training_compute_flop, order_publication_date, "
                    "order_display_name, filter_text) VALUES ",
                    inserts, " ON CONFLICT DO NOTHING RETURNING kind, id;\n");
  }
  if (!sql.empty()) {
    const pqxx::result inserted = tx.exec(sql);
    if (!inserts.empty() && inserted.size() < created.size()) {
      if (absl::Status s = FirstTaken(writes, inserted); !s.ok()) return s;
    }
  }
  std::string rows_sql;
  if (!keys.empty()) {
    absl::StrAppend(&rows_sql, "INSERT INTO lookup_keys (kind, key, id) VALUES ", keys,
                    " ON CONFLICT DO NOTHING;\n");
  }
  if (!changes.empty()) {
    absl::StrAppend(&rows_sql, "INSERT INTO changes (revision, kind, id, operation) VALUES ",
                    changes, ";\n");
  }
  if (!rows_sql.empty()) tx.exec(rows_sql);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int64_t> PostgresStore::Write(const std::vector<BatchWrite>& writes) {
  return WithConnection<int64_t>([&](pqxx::connection& c) -> absl::StatusOr<int64_t> {
    pqxx::work tx(c);  // rolls back when destroyed uncommitted
    const int64_t revision = NextRevision(tx);
    if (absl::Status s = WriteBatchIn(tx, revision, writes); !s.ok()) return s;
    tx.commit();
    return revision;
  });
}

absl::StatusOr<int64_t> PostgresStore::WriteInOneTransaction(const BatchSource& next_batch) {
  std::vector<BatchWrite> batch;
  // Nothing to write is no write (no revision, no change logged).
  if (absl::Status s = next_batch(&batch); !s.ok()) return s;
  if (batch.empty()) return Revision();
  return WithConnection<int64_t>([&](pqxx::connection& c) -> absl::StatusOr<int64_t> {
    // One transaction for every batch: other connections read the state
    // before it until it commits (PostgreSQL's snapshots), and other writers
    // wait for the revision row it locks first. An error, or one of
    // next_batch, returns before the commit: `tx` rolls back when destroyed.
    pqxx::work tx(c);
    const int64_t revision = NextRevision(tx);
    while (!batch.empty()) {
      if (absl::Status s = WriteBatchIn(tx, revision, batch); !s.ok()) return s;
      batch.clear();
      if (absl::Status s = next_batch(&batch); !s.ok()) return s;
    }
    tx.commit();
    return revision;
  });
}

absl::StatusOr<int64_t> PostgresStore::Delete(RecordKind kind, absl::string_view id,
                                              int64_t expected_revision) {
  const std::string key(id);
  return WithConnection<int64_t>([&](pqxx::connection& c) -> absl::StatusOr<int64_t> {
    pqxx::work tx(c);
    const int64_t revision = NextRevision(tx);
    if (absl::Status s = CheckCurrent(tx, kind, key, expected_revision); !s.ok()) return s;
    tx.exec_params("DELETE FROM records WHERE kind = $1 AND id = $2", Kind(kind), key);
    tx.exec_params("DELETE FROM lookup_keys WHERE kind = $1 AND id = $2", Kind(kind), key);
    LogChange(tx, revision, kind, key, "delete");
    tx.commit();
    return revision;
  });
}

absl::StatusOr<std::vector<Change>> PostgresStore::ChangesAfter(const ChangePosition& after,
                                                                int limit) {
  return WithConnection<std::vector<Change>>(
      [&](pqxx::connection& c) -> absl::StatusOr<std::vector<Change>> {
        pqxx::nontransaction tx(c);  // one statement: no BEGIN/COMMIT round trips
        // The primary key's order: a page may end, and the next begin, inside a revision.
        const pqxx::result rows =
            after.id.empty()
                ? tx.exec_params(
                      "SELECT revision, kind, id, operation FROM changes "
                      "WHERE revision > $1 ORDER BY revision, kind, id LIMIT $2",
                      after.revision, limit)
                : tx.exec_params(
                      "SELECT revision, kind, id, operation FROM changes "
                      "WHERE (revision, kind, id) > ($1, $2, $3) "
                      "ORDER BY revision, kind, id LIMIT $4",
                      after.revision, std::string(RecordKindName(after.kind)), after.id, limit);
        std::vector<Change> changes;
        for (const auto& row : rows) {
          changes.push_back(Change{
              row[0].as<int64_t>(),
              row[1].as<std::string>() == "model" ? RecordKind::kModel : RecordKind::kHardware,
              row[2].as<std::string>(), row[3].as<std::string>()});
        }
        return changes;
      });
}

}  // namespace modelatlas::catalog
