#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-14, AddressSanitizer and
# UndefinedBehaviorSanitizer into build-fuzz/, then runs each for SECONDS
# (default 600) on its corpus in tests/fuzz/corpus/<target>, adding what it
# finds there. Any crash, leak or sanitizer report fails the run.
#   scripts/fuzz.sh            10 minutes per target
#   scripts/fuzz.sh 20         a short run (CI)
#   scripts/fuzz.sh 60 csv_fuzz
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
shift || true
targets=("$@")
((${#targets[@]})) || targets=(csv_fuzz filter_fuzz hf_config_fuzz import_fuzz estimate_fuzz catalog_rpc_fuzz
                          model_header_fuzz)

bash scripts/install-deps.sh build
command -v clang++-14 >/dev/null || {
  echo "Installing clang-14 (libFuzzer)" >&2
  ${SUDO:-} apt-get install -y -q --no-install-recommends clang-14 libclang-rt-14-dev
}
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMODELATLAS_FUZZ=ON \
  -DMODELATLAS_WERROR=OFF -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 >/dev/null
cmake --build build-fuzz --target "${targets[@]}"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
for target in "${targets[@]}"; do
  corpus="tests/fuzz/corpus/$target"
  mkdir -p "$corpus" "build-fuzz/findings/$target"
  echo "== $target: ${seconds}s"
  status=0
  "build-fuzz/tests/fuzz/$target" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
    -rss_limit_mb=2048 -artifact_prefix="build-fuzz/findings/$target/" -print_final_stats=1 \
    "$corpus" >"build-fuzz/findings/$target.log" 2>&1 || status=$?
  grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|SUMMARY)" \
    "build-fuzz/findings/$target.log" || true
  if ((status != 0)) || compgen -G "build-fuzz/findings/$target/*-*" >/dev/null; then
    tail -n 40 "build-fuzz/findings/$target.log" >&2
    echo "$target: a finding, see build-fuzz/findings/$target" >&2
    exit 1
  fi
done
echo "fuzzing: no crash, leak or sanitizer report"
