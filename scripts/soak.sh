#!/usr/bin/env bash
# The soak tests at full length (tests/e2e/soak.h): mixed reads, writes and
# estimates with a fault every tenth of the run. CI runs the same tests for
# 20 seconds each.
#   scripts/soak.sh               600 seconds each: all three runs
#   scripts/soak.sh 120           shorter
#   scripts/soak.sh 600 sqlite    only the SQLite runs (catalog and estimator
#                                 kills; constant record count)
#   scripts/soak.sh 600 postgres  only the PostgreSQL run (catalog kills,
#                                 PostgreSQL restarts, estimator kills)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
which="${2:-all}"
bash scripts/install-deps.sh test
bash scripts/build.sh e2e_test e2e_serial_test catalog-service estimator-service modelatlas
export MODELATLAS_SOAK_SECONDS="$seconds"
if [[ "$which" == all || "$which" == sqlite ]]; then
  build/tests/e2e_test --gtest_filter='SoakTest.*'
fi
if [[ "$which" == all || "$which" == postgres ]]; then
  pg_virtualenv -t build/tests/e2e_serial_test --gtest_filter='SoakTest.*'
fi
