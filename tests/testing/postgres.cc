#include "tests/testing/postgres.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <pqxx/pqxx>
#include <vector>

#include "tests/testing/process.h"

namespace modelatlas::testing {

bool PostgresConfigured() { return std::getenv("PGHOST") != nullptr; }

namespace {

constexpr char kPgCtlCluster[] = "/usr/bin/pg_ctlcluster";

std::string PgCtlCluster(const std::vector<std::string>& action) {
  std::vector<std::string> argv = {kPgCtlCluster, std::getenv("PGVERSION"), "regress"};
  argv.insert(argv.end(), action.begin(), action.end());
  CommandResult result = RunCommand(argv);
  return result.exit_code == 0 ? "" : "pg_ctlcluster failed: " + result.out + result.err;
}

}  // namespace

bool PostgresRestartable() {
  return PostgresConfigured() && std::getenv("PGVERSION") != nullptr &&
         access(kPgCtlCluster, X_OK) == 0;
}

std::string StopPostgres() { return PgCtlCluster({"stop", "--mode", "fast"}); }
std::string StartPostgres() { return PgCtlCluster({"start"}); }

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
