#include "catalog-service/store/postgres_store.h"

#include <pqxx/pqxx>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "catalog-service/store/migrations.h"
#include "common/status/errors.h"

namespace modelatlas::catalog {

struct PooledConnection {
  explicit PooledConnection(const std::string& conninfo) : connection(conninfo) {}
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

void ReplaceLookupKeys(pqxx::work& tx, const RecordWrite& record) {
  tx.exec_params("DELETE FROM lookup_keys WHERE kind = $1 AND id = $2", Kind(record.kind),
                 record.id);
  for (const std::string& key : record.lookup_keys) {
    tx.exec_params(
        "INSERT INTO lookup_keys (kind, key, id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
        Kind(record.kind), key, record.id);
  }
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

}  // namespace

PostgresStore::PostgresStore(std::string conninfo, int pool_size)
    : conninfo_(std::move(conninfo)), available_(pool_size) {}

PostgresStore::~PostgresStore() = default;

absl::StatusOr<std::unique_ptr<PostgresStore>> PostgresStore::Open(const std::string& conninfo,
                                                                   int pool_size) {
  if (pool_size < 1) return InvalidFieldError("pool_size", "must be at least 1");
  std::unique_ptr<PostgresStore> store(new PostgresStore(conninfo, pool_size));
  if (absl::Status s = store->Migrate(); !s.ok()) return s;
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

absl::StatusOr<StoredRecord> PostgresStore::Get(RecordKind kind, absl::string_view id) {
  return WithConnection<StoredRecord>([&](pqxx::connection& c) -> absl::StatusOr<StoredRecord> {
    pqxx::read_transaction tx(c);
    pqxx::result rows = tx.exec_params(
        "SELECT id, display_name, encode(payload, 'hex'), revision FROM records WHERE kind = $1 "
        "AND id = $2",
        Kind(kind), std::string(id));
    if (rows.empty()) return absl::NotFoundError(absl::StrCat(Kind(kind), " ", id));
    return ReadRecord(rows[0]);
  });
}

absl::StatusOr<std::vector<std::string>> PostgresStore::FindIdsByLookupKey(RecordKind kind,
                                                                           absl::string_view key) {
  return WithConnection<std::vector<std::string>>(
      [&](pqxx::connection& c) -> absl::StatusOr<std::vector<std::string>> {
        pqxx::read_transaction tx(c);
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

absl::StatusOr<std::vector<StoredRecord>> PostgresStore::List(RecordKind kind,
                                                              absl::string_view after_id,
                                                              int limit) {
  return WithConnection<std::vector<StoredRecord>>(
      [&](pqxx::connection& c) -> absl::StatusOr<std::vector<StoredRecord>> {
        pqxx::read_transaction tx(c);
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

absl::StatusOr<int64_t> PostgresStore::Count(RecordKind kind) {
  return WithConnection<int64_t>([&](pqxx::connection& c) -> absl::StatusOr<int64_t> {
    pqxx::read_transaction tx(c);
    return tx.exec_params1("SELECT COUNT(*) FROM records WHERE kind = $1", Kind(kind))[0]
        .as<int64_t>();
  });
}

absl::StatusOr<int64_t> PostgresStore::Revision() {
  return WithConnection<int64_t>([&](pqxx::connection& c) -> absl::StatusOr<int64_t> {
    pqxx::read_transaction tx(c);
    return tx.exec1("SELECT revision FROM catalog_state WHERE id = 1")[0].as<int64_t>();
  });
}

absl::StatusOr<int64_t> PostgresStore::Write(const std::vector<BatchWrite>& writes) {
  return WithConnection<int64_t>([&](pqxx::connection& c) -> absl::StatusOr<int64_t> {
    pqxx::work tx(c);  // rolls back when destroyed uncommitted
    const int64_t revision = NextRevision(tx);
    for (const BatchWrite& write : writes) {
      const RecordWrite& record = write.record;
      if (write.operation == BatchWrite::Operation::kCreate) {
        pqxx::result inserted = tx.exec_params(
            "INSERT INTO records (kind, id, display_name, payload, revision) "
            "VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING id",
            Kind(record.kind), record.id, record.display_name, HexBytea(record.payload), revision);
        if (inserted.empty()) return AlreadyExistsError(record.kind, record.id);
      } else {
        if (absl::Status s = CheckCurrent(tx, record.kind, record.id, write.expected_revision);
            !s.ok()) {
          return s;
        }
        tx.exec_params(
            "UPDATE records SET display_name = $1, payload = $2, revision = $3 "
            "WHERE kind = $4 AND id = $5",
            record.display_name, HexBytea(record.payload), revision, Kind(record.kind), record.id);
      }
      ReplaceLookupKeys(tx, record);
      LogChange(tx, revision, record.kind, record.id,
                write.operation == BatchWrite::Operation::kCreate ? "create" : "update");
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
        pqxx::read_transaction tx(c);
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
