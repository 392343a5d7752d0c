// A throw-away PostgreSQL database for one test, on the server the PG*
// environment variables point at (scripts/test.sh runs the suite under
// pg_virtualenv, which starts one). Without PGHOST the test is skipped,
// except under CI, where it fails.
#pragma once

#include <string>

namespace modelatlas::testing {

// True when PGHOST is set.
bool PostgresConfigured();

// The server is pg_virtualenv's throw-away cluster ("regress", version
// $PGVERSION), which pg_ctlcluster can stop and start.
bool PostgresRestartable();
// Stops the server (fast shutdown: sessions terminated) and returns its
// pg_ctlcluster output on failure, empty on success.
std::string StopPostgres();
std::string StartPostgres();

class PostgresTestDatabase {
 public:
  // Creates a uniquely named database.
  PostgresTestDatabase();
  // Drops it (terminating leftover connections).
  ~PostgresTestDatabase();
  PostgresTestDatabase(const PostgresTestDatabase&) = delete;
  PostgresTestDatabase& operator=(const PostgresTestDatabase&) = delete;

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  // libpq connection string for the database.
  std::string conninfo() const { return "dbname=" + name_; }

 private:
  std::string name_;
  bool ok_ = false;
  std::string error_;
};

}  // namespace modelatlas::testing

// Skips (fails under CI) when no PostgreSQL server is configured.
#define REQUIRE_POSTGRES()                                                            \
  if (!::modelatlas::testing::PostgresConfigured()) {                                 \
    if (::modelatlas::testing::RunningUnderCi()) FAIL() << "PGHOST not set under CI"; \
    GTEST_SKIP() << "no PostgreSQL server (PGHOST unset); run under pg_virtualenv";   \
  }
