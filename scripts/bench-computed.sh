#!/usr/bin/env bash
# Computed answers (the answer cache off) of two estimator builds against the
# echo server at the same reply size, interleaved round by round, every round
# printed (issue 22 point 1). Both estimators follow one catalog-service (the
# current build's, on a new SQLite file: the shipped dataset).
#   scripts/bench-computed.sh REF_BUILD_DIR [ROUNDS] [SECONDS]
#   ANSWER_CACHE_BYTES=67108864 scripts/bench-computed.sh ...   the same rounds
#     with both estimators keeping answers (the default service's kept path:
#     after the warm-up every call is answered from the answer cache)
#   SCENARIOS=estimate scripts/bench-computed.sh ...   only those scenarios
#     (estimate, plan; both by default)
# REF_BUILD_DIR holds a previous build's estimator-service (a build/ tree or
# a directory with the binary copied into it). Each round runs, in turn:
# EstimateInferenceMemory (Llama 3.1 8B at 8192 tokens, 32 in flight) on REF
# then on the current build, echo replying as many bytes; then PlanInference
# (Llama 3.1 8B on every accelerator, 8 in flight) the same way. Printed per
# run: server CPU per call (user + system from /proc/PID/stat over warm-up and
# measurement, divided by the measured calls: a small overestimate, the same
# for every server), calls/s and p99; then the medians and the ratios to echo.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
ref_dir="${1:?usage: scripts/bench-computed.sh REF_BUILD_DIR [ROUNDS] [SECONDS]}"
rounds="${2:-5}"
seconds="${3:-2}"
b="$root/build"
state="$root/.run/computed"
mkdir -p "$state"
rm -f "$state"/*.json "$state"/*.pid "$state"/*.ports "$state"/*.log "$state"/*.db*
source "$root/scripts/lib/servers.sh"
ref_bin="$(ref_estimator_bin "$ref_dir")"

declare -A port
port[catalog]=$(start catalog "$b/catalog-service/catalog-service" --sqlite_path="$state/catalog.db")
port[estimator-ref]=$(start estimator-ref "$ref_bin" --catalog_address=127.0.0.1:${port[catalog]} \
  --answer_cache_bytes=${ANSWER_CACHE_BYTES:-0})
port[estimator-new]=$(start estimator-new "$b/estimator-service/estimator-service" \
  --catalog_address=127.0.0.1:${port[catalog]} --answer_cache_bytes=${ANSWER_CACHE_BYTES:-0})
port[echo]=$(start echo "$b/bench/echo-server")
for side in ref new; do wait_for_estimator "${port[catalog]}" "${port[estimator-$side]}"; done

load() {  # label server concurrency method request
  local label="$1" server="$2" concurrency="$3" method="$4" request="$5" before after
  before=$(cpu_ticks "$server")
  "$b/bench/loadgen" --target=127.0.0.1:${port[$server]} --method="$method" --request="$request" \
    --concurrency="$concurrency" --duration=${seconds}s --warmup=500ms --json \
    >"$state/$label.json" 2>"$state/$label.err"
  after=$(cpu_ticks "$server")
  /usr/bin/python3 - "$state/$label.json" "$before" "$after" "$(getconf CLK_TCK)" <<'PY'
import json, sys
path, before, after, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
r = json.load(open(path))
r["cpu_us_per_call"] = (after - before) / hz * 1e6 / max(1, r["calls"])
json.dump(r, open(path, "w"))
print(f"{path.rsplit('/', 1)[1][:-5]:>16}: {r['cpu_us_per_call']:8.1f} us/call {r['qps']:9.0f} calls/s"
      f"  p99 {r['p99_us'] / 1000:7.2f} ms  {r.get('response_bytes', 0):,} B  errors {r['errors']}")
PY
}

M=modelatlas.estimator.v1.EstimatorService
estimate='{"model": "Llama 3.1 8B", "workload": {"context_length_tokens": 8192}}'
plan='{"model": "Llama 3.1 8B"}'
for round in $(seq 1 "$rounds"); do
  echo "== round $round ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))"
  for scenario in ${SCENARIOS:-estimate plan}; do
    concurrency=32; [[ $scenario == plan ]] && concurrency=8
    method="$M/EstimateInferenceMemory"; [[ $scenario == plan ]] && method="$M/PlanInference"
    declare -n request="$scenario"
    for side in ref new; do
      load "$scenario-$side-$round" "estimator-$side" "$concurrency" "$method" "$request"
    done
    unset -n request
    bytes=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["response_bytes"])' \
      "$state/$scenario-new-$round.json")
    load "$scenario-echo-$round" echo "$concurrency" modelatlas.bench.v1.EchoService/Echo \
      "{\"response_bytes\": $bytes}"
  done
done

echo "resident after the rounds: REF $(rss_mib estimator-ref) MiB, current $(rss_mib estimator-new) MiB"
/usr/bin/python3 - "$state" "$rounds" ${SCENARIOS:-estimate plan} <<'PY'
import json, statistics, sys
state, rounds, scenarios = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def get(name, key):
    return [json.load(open(f"{state}/{name}-{r}.json"))[key] for r in range(1, rounds + 1)]
print("\nmedians over rounds; ratios per round then their median")
for scenario in scenarios:
    for key, unit in (("cpu_us_per_call", "us"), ("qps", "/s"), ("p99_us", "us")):
        e, a, n = (get(f"{scenario}-{s}", key) for s in ("echo", "ref", "new"))
        ratio_echo = [x / y for x, y in zip(n, e)]
        ratio_ref = [x / y for x, y in zip(n, a)]
        print(f"{scenario:8} {key:16} echo {statistics.median(e):10.1f}  ref {statistics.median(a):10.1f}"
              f"  new {statistics.median(n):10.1f}  new/echo {statistics.median(ratio_echo):.2f}"
              f" ({', '.join(f'{x:.2f}' for x in ratio_echo)})  new/ref {statistics.median(ratio_ref):.2f}"
              f" ({', '.join(f'{x:.2f}' for x in ratio_ref)})")
PY
