#include "tests/testing/postgres.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <pqxx/pqxx>

namespace modelatlas::testing {

bool PostgresConfigured() { return std::getenv("PGHOST") != nullptr; }

PostgresTestDatabase::PostgresTestDatabase() {
  static std::atomic<int> counter{0};
  name_ = "modelatlas_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  try {
    pqxx::connection admin("");
    pqxx::nontransaction tx(admin);
    tx.exec("DROP DATABASE IF EXISTS " + name_);
    tx.exec("CREATE DATABASE " + name_);
    ok_ = true;
  } catch (const std::exception& e) {
    error_ = e.what();
  }
}

PostgresTestDatabase::~PostgresTestDatabase() {
  if (!ok_) return;
  try {
    pqxx::connection admin("");
    pqxx::nontransaction tx(admin);
    tx.exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  } catch (const std::exception&) {
    // Left behind: pg_virtualenv drops the whole cluster at the end.
  }
}

}  // namespace modelatlas::testing
