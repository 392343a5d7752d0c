#!/usr/bin/env bash
# A previous build's estimator and the current one, side by side on one
# catalog (the shipped dataset), asked the same EstimateInferenceMemory
# requests (every shipped model with an architecture and 40 without, under
# 8 workloads); their raw replies compared byte for byte, the catalog_view
# field (the snapshot's age) cut off. Prints the count of identical and of
# different replies, and the first differences.
#   scripts/compare-estimates.sh REF_BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
ref_dir="${1:?usage: scripts/compare-estimates.sh REF_BUILD_DIR}"
b="$root/build"
state="$root/.run/compare-estimates"
mkdir -p "$state"
rm -f "$state"/*.pid "$state"/*.ports "$state"/*.log "$state"/*.db*
source "$root/scripts/lib/servers.sh"
ref_bin="$(ref_estimator_bin "$ref_dir")"
declare -A port
port[catalog]=$(start catalog "$b/catalog-service/catalog-service" --sqlite_path="$state/catalog.db")
port[ref]=$(start ref "$ref_bin" --catalog_address=127.0.0.1:${port[catalog]} --answer_cache_bytes=0)
port[new]=$(start new "$b/estimator-service/estimator-service" \
  --catalog_address=127.0.0.1:${port[catalog]} --answer_cache_bytes=0)
for side in ref new; do wait_for_estimator "${port[catalog]}" "${port[$side]}"; done
/usr/bin/python3 "$root/scripts/lib/compare_estimates.py" "${port[ref]}" "${port[new]}" \
  catalog-service/data/dataset.json
