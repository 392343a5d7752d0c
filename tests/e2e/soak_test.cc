// Soak runs that share the machine with other tests (SQLite). The
// PostgreSQL soak restarts the server, so it runs alone
// (postgres_restart_test.cc). The runner: soak.h.
#include "tests/e2e/soak.h"

namespace modelatlas {
namespace {

// The catalog and an estimator replica killed in turn; records created.
TEST_F(SoakTest, MixedLoadWithAFaultEveryTenthSurvivesAndLosesNoWrite) {
  RunSoak({.store_args = {"--sqlite_path=" + dir_ + "/catalog.db"},
           .faults = {Fault::kKillCatalog, Fault::kKillEstimator}});
}

// A constant record count (the same 96 records updated over and over) and
// neither measured server restarted: resident-memory growth is the
// services' own.
TEST_F(SoakTest, ConstantRecordCountShowsTheServicesOwnMemoryGrowth) {
  RunSoak({.store_args = {"--sqlite_path=" + dir_ + "/catalog.db"},
           .faults = {Fault::kKillEstimator},
           .writes = Writes::kUpdateFixedSet});
}

}  // namespace
}  // namespace modelatlas
