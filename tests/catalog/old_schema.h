// A SQLite catalog file as an older binary left it: the SQL that applies
// the first `migrations` of SqliteMigrations() and records them, for the
// upgrade tests (ordered lists from schema 2, filter columns from 3).
#pragma once

#include <string>

#include "absl/strings/str_cat.h"
#include "catalog-service/store/migrations.h"

namespace modelatlas::catalog {

inline std::string OldSchemaSql(int migrations) {
  std::string setup =
      "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL);";
  for (int i = 0; i < migrations; ++i) {
    const Migration& m = SqliteMigrations()[i];
    absl::StrAppend(&setup, m.sql, "; INSERT INTO schema_migrations VALUES (", m.version, ", 'v",
                    m.version, "');");
  }
  absl::StrAppend(&setup, "UPDATE catalog_state SET revision = 1;");
  return setup;
}

}  // namespace modelatlas::catalog
