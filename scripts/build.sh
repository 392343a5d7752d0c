#!/usr/bin/env bash
# Configures and builds ModelAtlas in build/ (both servers, the CLI, tests).
#   scripts/build.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."

build_type="${MODELATLAS_BUILD_TYPE:-RelWithDebInfo}"
if [[ ! -f build/build.ninja ]]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$build_type"
fi
jobs="$(nproc 2>/dev/null || echo 2)"
if (($# > 0)); then
  cmake --build build -j "$jobs" --target "$@"
else
  cmake --build build -j "$jobs"
fi
