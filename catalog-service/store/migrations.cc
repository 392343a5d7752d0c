#include "catalog-service/store/migrations.h"

namespace modelatlas::catalog {

const std::vector<Migration>& SqliteMigrations() {
  static const auto* migrations = new std::vector<Migration>{
      {1, "records, lookup keys, revision and change log",
       R"sql(
CREATE TABLE catalog_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  revision INTEGER NOT NULL               -- grows by one per committed write
);
INSERT INTO catalog_state (id, revision) VALUES (1, 0);
CREATE TABLE records (
  kind TEXT NOT NULL,                      -- 'model' or 'hardware'
  id TEXT NOT NULL,                        -- AIP-122 resource id
  display_name TEXT NOT NULL,
  payload BLOB NOT NULL,                   -- the record, serialized protobuf
  revision INTEGER NOT NULL,               -- revision of the last write
  PRIMARY KEY (kind, id)
) WITHOUT ROWID;
CREATE TABLE lookup_keys (
  kind TEXT NOT NULL,
  key TEXT NOT NULL,                       -- LookupKey() of a name or alias
  id TEXT NOT NULL,
  PRIMARY KEY (kind, key, id)
) WITHOUT ROWID;
CREATE TABLE changes (
  revision INTEGER NOT NULL,
  kind TEXT NOT NULL,
  id TEXT NOT NULL,
  operation TEXT NOT NULL,                 -- 'create', 'update' or 'delete'
  PRIMARY KEY (revision, kind, id)
) WITHOUT ROWID;
)sql"},
      {2, "index lookup keys by record, for rewriting a record's keys",
       "CREATE INDEX lookup_keys_by_record ON lookup_keys (kind, id);"},
  };
  return *migrations;
}

const std::vector<Migration>& PostgresMigrations() {
  // The same tables as SQLite's; ids sort bytewise (COLLATE "C") so pages
  // come in the same order on both stores.
  static const auto* migrations = new std::vector<Migration>{
      {1, "records, lookup keys, revision and change log",
       R"sql(
CREATE TABLE catalog_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  revision BIGINT NOT NULL
);
INSERT INTO catalog_state (id, revision) VALUES (1, 0);
CREATE TABLE records (
  kind TEXT NOT NULL,
  id TEXT COLLATE "C" NOT NULL,
  display_name TEXT NOT NULL,
  payload BYTEA NOT NULL,
  revision BIGINT NOT NULL,
  PRIMARY KEY (kind, id)
);
CREATE TABLE lookup_keys (
  kind TEXT NOT NULL,
  key TEXT COLLATE "C" NOT NULL,
  id TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (kind, key, id)
);
CREATE TABLE changes (
  revision BIGINT NOT NULL,
  kind TEXT NOT NULL,
  id TEXT COLLATE "C" NOT NULL,
  operation TEXT NOT NULL,
  PRIMARY KEY (revision, kind, id)
);
)sql"},
      {2, "index lookup keys by record, for rewriting a record's keys",
       "CREATE INDEX lookup_keys_by_record ON lookup_keys (kind, id);"},
  };
  return *migrations;
}

}  // namespace modelatlas::catalog
