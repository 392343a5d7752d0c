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
      // An ordered page of a million models read the whole table and sorted
      // it in the catalog process (seconds per page); with these columns and
      // indexes it reads the page's records in order (OrderColumn). Records
      // already stored get their values from the catalog, which decodes
      // their payloads: they wait in order_values_pending until then, and
      // ordered lists are sorted in the process as before meanwhile.
      {3, "order columns and their indexes, for ordered pages",
       R"sql(
ALTER TABLE records ADD COLUMN order_parameters REAL;
ALTER TABLE records ADD COLUMN order_training_compute_flop REAL;
ALTER TABLE records ADD COLUMN order_publication_date REAL;   -- yyyymmdd
ALTER TABLE records ADD COLUMN order_display_name TEXT;       -- NULL when empty
CREATE INDEX records_by_parameters ON records (kind, order_parameters, id);
CREATE INDEX records_by_training_compute_flop ON records (kind, order_training_compute_flop, id);
CREATE INDEX records_by_publication_date ON records (kind, order_publication_date, id);
CREATE INDEX records_by_display_name ON records (kind, order_display_name, id);
CREATE TABLE order_values_pending (
  kind TEXT NOT NULL,
  id TEXT NOT NULL,
  PRIMARY KEY (kind, id)
) WITHOUT ROWID;
INSERT INTO order_values_pending (kind, id) SELECT kind, id FROM records;
)sql"},
      // A filtered ordered page of a million models read records in order
      // and rejected most of them in the catalog process (0.9 s per page for
      // `parameters > 1e11 AND domains:"Vision"`): filters' comparisons on
      // the order columns and text tests on this column now run in SQL
      // (ColumnTest). Stored records get their text like their order values
      // (order_values_pending); until then a NULL lets every test through.
      {4, "filter text column, for filters pushed into SQL",
       R"sql(
ALTER TABLE records ADD COLUMN filter_text TEXT;
INSERT OR IGNORE INTO order_values_pending (kind, id) SELECT kind, id FROM records;
)sql"},
      // A page of `parameters > 1e11 AND domains:"Vision"` by date still
      // read about 1,500 rows of a million (each a seek from the date index
      // into the table by its text key) to find 50: domains:"vision" is a
      // substring test on filter_text, not a column an index orders. A row
      // per (domain, model) with the model's order values, and an index per
      // order column that also holds the numbers filters compare, lets a
      // page walk one domain's models in order and test the numbers in the
      // index (ColumnTest on kDomainsValue): about 50 rows read for 50. The
      // stored models get their rows with their values (order_values_pending).
      {5, "a row per model and domain, for domain filters pushed into SQL",
       R"sql(
CREATE TABLE model_domains (
  domain TEXT NOT NULL,                    -- an element of Model.domains, lower case
  id TEXT NOT NULL,                        -- the model's id (records.kind = 'model')
  order_parameters REAL,                   -- as records' order columns (migration 3)
  order_training_compute_flop REAL,
  order_publication_date REAL,
  order_display_name TEXT,
  PRIMARY KEY (domain, id)
) WITHOUT ROWID;
CREATE INDEX model_domains_by_parameters ON model_domains
  (domain, order_parameters, id, order_training_compute_flop, order_publication_date);
CREATE INDEX model_domains_by_training_compute_flop ON model_domains
  (domain, order_training_compute_flop, id, order_parameters, order_publication_date);
CREATE INDEX model_domains_by_publication_date ON model_domains
  (domain, order_publication_date, id, order_parameters, order_training_compute_flop);
CREATE INDEX model_domains_by_display_name ON model_domains
  (domain, order_display_name, id, order_parameters, order_training_compute_flop,
   order_publication_date);
INSERT OR IGNORE INTO order_values_pending (kind, id) SELECT kind, id FROM records
  WHERE kind = 'model';
)sql"},
      {6, "the shipped dataset's version the catalog was refreshed to",
       "ALTER TABLE catalog_state ADD COLUMN shipped_dataset_version INTEGER NOT NULL DEFAULT 0;"},
  };
  return *migrations;
}

const std::vector<ReadIndex>& SqliteReadIndexes() {
  // The texts after each name are migrations 3's and 5's, character for
  // character (the schema then reads the same after a rebuild).
  static const auto* indexes = new std::vector<ReadIndex>{
      {"records_by_parameters",
       "CREATE INDEX IF NOT EXISTS records_by_parameters ON records (kind, order_parameters, id)"},
      {"records_by_training_compute_flop",
       "CREATE INDEX IF NOT EXISTS records_by_training_compute_flop ON records (kind, "
       "order_training_compute_flop, id)"},
      {"records_by_publication_date",
       "CREATE INDEX IF NOT EXISTS records_by_publication_date ON records (kind, "
       "order_publication_date, id)"},
      {"records_by_display_name",
       "CREATE INDEX IF NOT EXISTS records_by_display_name ON records (kind, order_display_name, "
       "id)"},
      {"model_domains_by_parameters",
       "CREATE INDEX IF NOT EXISTS model_domains_by_parameters ON model_domains\n"
       "  (domain, order_parameters, id, order_training_compute_flop, order_publication_date)"},
      {"model_domains_by_training_compute_flop",
       "CREATE INDEX IF NOT EXISTS model_domains_by_training_compute_flop ON model_domains\n"
       "  (domain, order_training_compute_flop, id, order_parameters, order_publication_date)"},
      {"model_domains_by_publication_date",
       "CREATE INDEX IF NOT EXISTS model_domains_by_publication_date ON model_domains\n"
       "  (domain, order_publication_date, id, order_parameters, order_training_compute_flop)"},
      {"model_domains_by_display_name",
       "CREATE INDEX IF NOT EXISTS model_domains_by_display_name ON model_domains\n"
       "  (domain, order_display_name, id, order_parameters, order_training_compute_flop,\n"
       "   order_publication_date)"},
  };
  return *indexes;
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
      // As SQLite's migration 3; text compares bytewise (COLLATE "C"), as
      // the catalog's sort does.
      {3, "order columns and their indexes, for ordered pages",
       R"sql(
ALTER TABLE records ADD COLUMN order_parameters DOUBLE PRECISION,
  ADD COLUMN order_training_compute_flop DOUBLE PRECISION,
  ADD COLUMN order_publication_date DOUBLE PRECISION,
  ADD COLUMN order_display_name TEXT COLLATE "C";
CREATE INDEX records_by_parameters ON records (kind, order_parameters, id);
CREATE INDEX records_by_training_compute_flop ON records (kind, order_training_compute_flop, id);
CREATE INDEX records_by_publication_date ON records (kind, order_publication_date, id);
CREATE INDEX records_by_display_name ON records (kind, order_display_name, id);
CREATE TABLE order_values_pending (
  kind TEXT NOT NULL,
  id TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (kind, id)
);
INSERT INTO order_values_pending (kind, id) SELECT kind, id FROM records;
)sql"},
      // As SQLite's migration 4.
      {4, "filter text column, for filters pushed into SQL",
       R"sql(
ALTER TABLE records ADD COLUMN filter_text TEXT COLLATE "C";
INSERT INTO order_values_pending (kind, id) SELECT kind, id FROM records ON CONFLICT DO NOTHING;
)sql"},
      // As SQLite's migration 6 (the two stores number their migrations
      // each on its own).
      {5, "the shipped dataset's version the catalog was refreshed to",
       "ALTER TABLE catalog_state ADD COLUMN shipped_dataset_version INTEGER NOT NULL DEFAULT 0;"},
  };
  return *migrations;
}

}  // namespace modelatlas::catalog
