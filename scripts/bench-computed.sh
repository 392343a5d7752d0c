#!/usr/bin/env bash
# Computed answers (the answer cache off) of two estimator builds against the
# echo server at the same reply size, interleaved round by round, every round
# printed (issue 22 point 1). Both estimators follow one catalog-service (the
# current build's, on a new SQLite file: the shipped dataset).
#   scripts/bench-computed.sh REF_BUILD_DIR [ROUNDS] [SECONDS]
#   ANSWER_CACHE_BYTES=67108864 scripts/bench-computed.sh ...   the same rounds
#     with both estimators keeping answers (the default service's kept path:
#     after the warm-up every call is answered from the answer cache)
#   SCENARIOS="estimate varied" scripts/bench-computed.sh ...   only those
#     scenarios (estimate, varied, plan; all three by default)
#   SERVER_CPUS=0 CLIENT_CPUS=1 scripts/bench-computed.sh ...   the servers
#     on core 0 and the load generator on core 1 (scripts/lib/servers.sh)
# REF_BUILD_DIR holds a previous build's estimator-service (a build/ tree or
# a directory with the binary copied into it). Each round runs, for each
# scenario, REF, the current build and echo in a rotated order (ref new
# echo, new echo ref, echo ref new, ...):
#   estimate  EstimateInferenceMemory of one request (Llama 3.1 8B at 8192
#             tokens, 32 in flight): every call the same, so whatever the
#             estimator remembers from call to call is always reused;
#   varied    EstimateInferenceMemory of requests drawn at random, per call,
#             from every shipped model with an architecture x four contexts
#             x three weight formats (loadgen --requests_file): what many
#             users asking for many models cost;
#   plan      PlanInference (Llama 3.1 8B on every accelerator, 8 in flight).
# Echo is sent requests of about the same size (the model's name in its
# ignored `name` field) and replies the current build's mean reply size,
# under the estimator's allocator settings (ECHO_MALLOC below).
# Printed per run: server CPU per call over the measured window only
# (loadgen --server_pid), the load generator's own, calls/s and p99; then the
# medians, and the medians of the per-round ratios: the current build to
# echo and to REF, and REF to echo.
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
# Echo keeps its freed heap as the estimator does (both call
# KeepHeapForLargeReplies, common/server/allocator.h: mmap threshold 8 MiB,
# trim threshold 16 MiB). With glibc's defaults echo's cost per 297 KB reply
# moved with the allocator's history: 142-188 us and 24-54 page faults per
# call between fresh processes, against 109-117 us and none with these
# settings (docs/BENCHMARKS.md, session 17, branch s17-plan). The same
# settings also go to echo as GLIBC_TUNABLES, so that an echo built before
# session 17 is measured the same way (ECHO_MALLOC="" leaves such an old
# echo on glibc's defaults).
ECHO_MALLOC="${ECHO_MALLOC-glibc.malloc.mmap_threshold=8388608:glibc.malloc.trim_threshold=16777216}"

declare -A port
port[catalog]=$(start catalog "$b/catalog-service/catalog-service" --sqlite_path="$state/catalog.db")
port[estimator-ref]=$(start estimator-ref "$ref_bin" --catalog_address=127.0.0.1:${port[catalog]} \
  --answer_cache_bytes=${ANSWER_CACHE_BYTES:-0})
port[estimator-new]=$(start estimator-new "$b/estimator-service/estimator-service" \
  --catalog_address=127.0.0.1:${port[catalog]} --answer_cache_bytes=${ANSWER_CACHE_BYTES:-0})
port[echo]=$(start echo env "GLIBC_TUNABLES=$ECHO_MALLOC" "$b/bench/echo-server")
for side in ref new; do wait_for_estimator "${port[catalog]}" "${port[estimator-$side]}"; done

load() {  # label server concurrency method request [loadgen flags]
  local label="$1" server="$2" concurrency="$3" method="$4" request="$5"; shift 5
  "${client_cpus[@]}" "$b/bench/loadgen" --target=127.0.0.1:${port[$server]} --method="$method" --request="$request" \
    --concurrency="$concurrency" --duration=${seconds}s --warmup=500ms --json \
    --server_pid="$(cat "$state/$server.pid")" "$@" >"$state/$label.json" 2>"$state/$label.err"
  /usr/bin/python3 - "$state/$label.json" <<'PY'
import json, sys
path = sys.argv[1]
r = json.load(open(path))
r["cpu_us_per_call"] = r["server_cpu_us_per_call"]
json.dump(r, open(path, "w"))
print(f"{path.rsplit('/', 1)[1][:-5]:>16}: {r['cpu_us_per_call']:8.1f} us/call (client {r['client_cpu_us_per_call']:5.1f})"
      f" {r['qps']:9.0f} calls/s  p99 {r['p99_us'] / 1000:7.2f} ms  {r['response_bytes_mean']:,.0f} B  errors {r['errors']}")
PY
}

M=modelatlas.estimator.v1.EstimatorService
E=modelatlas.bench.v1.EchoService/Echo
estimate='{"model": "Llama 3.1 8B", "workload": {"context_length_tokens": 8192}}'
plan='{"model": "Llama 3.1 8B"}'
# The varied requests: every shipped model with an architecture (the
# catalog's file: the shipped dataset) x contexts x weight formats.
/usr/bin/python3 "$root/scripts/varied-requests.py" "$root/catalog-service/data/dataset.json" \
  "$state/varied.requests"
echo "varied: $(wc -l <"$state/varied.requests") requests"
# Echo's requests, as many and of about the same size: the model's name in
# its ignored `name` field; the reply size is set per round.
echo_requests() {  # scenario bytes
  case "$1" in
    varied) /usr/bin/python3 -c 'import json,sys
for line in open(sys.argv[1]):
    print(json.dumps({"name": json.loads(line)["model"], "response_bytes": int(sys.argv[2])}))' \
      "$state/varied.requests" "$2" >"$state/echo-varied.requests"
      echo "--requests_file=$state/echo-varied.requests" ;;
    *) echo "--request={\"name\": \"Llama 3.1 8B\", \"response_bytes\": $2}" ;;
  esac
}
scenario_run() {  # scenario side round
  local scenario="$1" side="$2" round="$3" concurrency=32 method="$M/EstimateInferenceMemory"
  [[ $scenario == plan ]] && { concurrency=8; method="$M/PlanInference"; }
  local flags=(--request="$estimate")
  [[ $scenario == plan ]] && flags=(--request="$plan")
  [[ $scenario == varied ]] && flags=(--requests_file="$state/varied.requests")
  if [[ $side == echo ]]; then
    # The current build's mean reply in this round, or its warm-up's.
    local last="$state/$scenario-new-$round.json"
    [[ -f $last ]] || last="$state/$scenario-new-warm.json"
    local bytes
    bytes=$(/usr/bin/python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["response_bytes_mean"]))' "$last")
    load "$scenario-echo-$round" echo "$concurrency" "$E" "{}" "$(echo_requests "$scenario" "$bytes")"
  else
    load "$scenario-$side-$round" "estimator-$side" "$concurrency" "$method" "{}" "${flags[@]}"
  fi
}
scenarios=(${SCENARIOS:-estimate varied plan})
echo "== warm-up"
for scenario in "${scenarios[@]}"; do
  for side in ref new echo; do scenario_run "$scenario" "$side" warm; done
done
for round in $(seq 1 "$rounds"); do
  echo "== round $round ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))"
  for scenario in "${scenarios[@]}"; do
    sides=(ref new echo)
    for i in 0 1 2; do scenario_run "$scenario" "${sides[$(( (i + round - 1) % 3 ))]}" "$round"; done
  done
done

echo "resident after the rounds: REF $(rss_mib estimator-ref) MiB, current $(rss_mib estimator-new) MiB"
/usr/bin/python3 - "$state" "$rounds" "${scenarios[@]}" <<'PY'
import json, statistics, sys
state, rounds, scenarios = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def get(name, key):
    return [json.load(open(f"{state}/{name}-{r}.json"))[key] for r in range(1, rounds + 1)]
print("\nmedians over rounds; ratios per round then their median")
for scenario in scenarios:
    for key, unit in (("cpu_us_per_call", "us"), ("client_cpu_us_per_call", "us"), ("qps", "/s"), ("p99_us", "us")):
        e, a, n = (get(f"{scenario}-{s}", key) for s in ("echo", "ref", "new"))
        ratio_echo = [x / y for x, y in zip(n, e)]
        ratio_ref = [x / y for x, y in zip(n, a)]
        # REF against echo in the same rounds: where the tree stood before
        # the change, which moves from day to day with the machine.
        ref_echo = statistics.median(x / y for x, y in zip(a, e))
        print(f"{scenario:8} {key:22} echo {statistics.median(e):10.1f}  ref {statistics.median(a):10.1f}"
              f"  new {statistics.median(n):10.1f}  new/echo {statistics.median(ratio_echo):.2f}"
              f" ({', '.join(f'{x:.2f}' for x in ratio_echo)})  new/ref {statistics.median(ratio_ref):.2f}"
              f" ({', '.join(f'{x:.2f}' for x in ratio_ref)})  ref/echo {ref_echo:.2f}")
PY
