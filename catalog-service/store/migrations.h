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

}  // namespace modelatlas::catalog
