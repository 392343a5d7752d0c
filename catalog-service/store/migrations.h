// Versioned schema migrations. A store applies, in one transaction each,
// every migration newer than the version recorded in schema_migrations.
#pragma once

#include <string>
#include <vector>

namespace modelatlas::catalog {

struct Migration {
  int version;
  std::string description;
  std::string sql;
};

const std::vector<Migration>& SqliteMigrations();
const std::vector<Migration>& PostgresMigrations();

// An index that only reads use, which a bulk load may drop and rebuild
// (SqliteStore::BeginBulkLoad). `sql` creates it exactly as its migration
// did, with IF NOT EXISTS (SQLite stores the text without it, so the
// schema reads the same either way: SqliteStoreTest checks it).
struct ReadIndex {
  std::string name;
  std::string sql;
};

// SQLite's order indexes (migrations 3 and 5): no write reads them, and
// each takes every imported row at a random place.
const std::vector<ReadIndex>& SqliteReadIndexes();

}  // namespace modelatlas::catalog
