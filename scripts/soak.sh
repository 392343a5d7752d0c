#!/usr/bin/env bash
# The soak test at full length: ten minutes of mixed reads, writes and
# estimates with a fault every minute (tests/e2e/soak_test.cc). CI runs the
# same test for 20 seconds.
#   scripts/soak.sh           600 seconds
#   scripts/soak.sh 120
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh test
bash scripts/build.sh e2e_test catalog-service estimator-service
MODELATLAS_SOAK_SECONDS="${1:-600}" build/tests/e2e_test --gtest_filter='SoakTest.*'
