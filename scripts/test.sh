#!/usr/bin/env bash
# Builds ModelAtlas and runs the whole test suite (unit, in-process gRPC and
# end-to-end tests) against a throw-away PostgreSQL server that pg_virtualenv
# starts for the run and removes after it. Installs missing Debian packages first.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh test
bash scripts/build.sh
cd build
# -t: the cluster lives in a temporary directory even as root, not in
# /etc/postgresql/V/regress, so a run killed midway leaves nothing behind that
# makes the next run refuse ("Cluster 15/regress exists").
pg_virtualenv -t ctest --output-on-failure --timeout 600 -j "$(nproc 2>/dev/null || echo 2)"
