// The soak runner: mixed reads, writes and estimates against a catalog and
// two estimator replicas for a set time, with a fault injected at every
// tenth of the run. It reports errors by code, p99 latency per operation and
// resident-memory growth, and fails the test on a lost acknowledged write or
// a server that died on its own. MODELATLAS_SOAK_SECONDS sets the length
// (default 20 s, the CI smoke); scripts/soak.sh runs ten minutes.
#pragma once

#include <string>
#include <vector>

#include "tests/e2e/end_to_end.h"

namespace modelatlas {

enum class Fault {
  kKillCatalog,      // SIGKILL catalog-service, restart it on its port
  kRestartPostgres,  // stop PostgreSQL (fast), wait, start it
  kKillEstimator,    // SIGKILL the second estimator replica, restart it
};

enum class Writes {
  kCreate,          // new records: the catalog grows
  kUpdateFixedSet,  // updates of 96 records: the record count stays constant
};

struct SoakOptions {
  // Catalog flags for its store (SQLite path or PostgreSQL URL).
  std::vector<std::string> store_args;
  // Injected in turn, ten in all.
  std::vector<Fault> faults;
  Writes writes = Writes::kCreate;
};

class SoakTest : public EndToEndTest {
 protected:
  // Runs the soak; failures are reported through gtest.
  void RunSoak(const SoakOptions& options);
};

}  // namespace modelatlas
