#!/usr/bin/env bash
# GetModel of two catalog-service builds against the echo server replying as
# many bytes, interleaved round by round, every round printed (issue 22
# point 1). Each catalog serves its own copy of one SQLite file (e.g. the
# 100,000 generated models `scripts/bench-million.sh --models=100000` leaves
# in .run/bench-million/sqlite/catalog.db) with a 32 MiB record cache.
#   scripts/bench-getmodel.sh REF_BUILD_DIR SQLITE_FILE [ROUNDS] [SECONDS]
#   MODELS=N ...         the file holds generated-model-0 .. N-1 (default 100,000)
#   HOT=1 ...            one model (generated-model-42) instead of one at random
#   WARM_SECONDS=40 ...  the longest warm-up of each catalog before the rounds
#                        (default 300): runs of 10 s until its record cache's hit
#                        rate settles (warm_until_settled in scripts/lib/servers.sh)
#   REF_CACHE_BYTES=B NEW_CACHE_BYTES=B ...  each catalog's --record_cache_bytes
#                        (default 32 MiB for both; "default" = the build's own)
#   REF_FLAGS="..." NEW_FLAGS="..."  more flags for each catalog (e.g.
#                        --sqlite_mmap_bytes=2147483648)
# REF_BUILD_DIR holds a previous build's catalog-service (a build/ tree or a
# directory with catalog-service/catalog-service in it); the current build's
# catalog, echo and loadgen are the others. Each round runs the three in a
# rotated order (ref new echo, new echo ref, echo ref new, ...), so none is
# always first or always last. Printed: server CPU per call (user + system
# of all its threads over loadgen's measured window, divided by its calls:
# loadgen --server_pid), the load generator's own CPU per call over the same
# window, calls/s, p99, the mean reply size, and for a catalog the record
# cache's hit rate over the run; then the record caches' counters, resident
# memory and the medians of the per-round ratios. Each loadgen run draws its
# own random ids (loadgen --seed): a run does not replay the ids the run
# before it left in the cache.
#
# Echo is driven as the catalogs are (session 14): the same client flags,
# the same request text (GetModel's name, in echo's ignored `name` field) with
# --vary, so loadgen picks one of as many prepared requests per call, and a
# reply of the catalog's mean reply size on the wire (measured in the new
# catalog's last warm-up run). Before, echo was sent one fixed request and
# replied the size of the catalog's last reply plus its field's 3 bytes of
# tag and length.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
ref="${1:?usage: scripts/bench-getmodel.sh REF_BUILD_DIR SQLITE_FILE [ROUNDS] [SECONDS]}"
db="${2:?usage: scripts/bench-getmodel.sh REF_BUILD_DIR SQLITE_FILE [ROUNDS] [SECONDS]}"
rounds="${3:-5}"; seconds="${4:-3}"
new="${NEW_BUILD_DIR:-$root/build}"
state="$root/.run/getmodel${HOT:+-hot}"; rm -rf "$state"; mkdir -p "$state"
source "$root/scripts/lib/servers.sh"
cp "$db" "$state/ref.db"; cp "$db" "$state/new.db"
cache_flag() { # BYTES: the flag, 32 MiB when unset, none for "default"
  [[ "$1" == default ]] || echo "--record_cache_bytes=${1:-$((32<<20))}"
}
declare -A port
port[catalog-ref]=$(start catalog-ref "$ref/catalog-service/catalog-service" --sqlite_path="$state/ref.db" $(cache_flag "${REF_CACHE_BYTES:-}") ${REF_FLAGS:-})
port[catalog-new]=$(start catalog-new "$new/catalog-service/catalog-service" --sqlite_path="$state/new.db" $(cache_flag "${NEW_CACHE_BYTES:-}") ${NEW_FLAGS:-})
port[echo]=$(start echo "$new/bench/echo-server")
lg="$new/bench/loadgen"
req='{"name": "models/generated-model-{i}"}'; vary=(--vary=${MODELS:-100000})
if [[ -n "${HOT:-}" ]]; then req='{"name": "models/generated-model-42"}'; vary=(); fi
load() { # label server method request [flags]
  local label="$1" server="$2" method="$3" request="$4"; shift 4
  local counters_before="" counters_after=""
  [[ $server == catalog-* ]] && counters_before=$(record_cache_counters "$server")
  "$lg" --target=127.0.0.1:${port[$server]} --method="$method" --request="$request" --concurrency=32 \
    --duration=${seconds}s --warmup=500ms --json --server_pid="$(cat "$state/$server.pid")" "$@" \
    >"$state/$label.json" 2>"$state/$label.err"
  [[ $server == catalog-* ]] && counters_after=$(record_cache_counters "$server")
  python3 - "$state/$label.json" \
    "$([[ -n $counters_before ]] && hit_rate "$counters_before" "$counters_after")" <<'PY'
import json, sys
path = sys.argv[1]
r = json.load(open(path)); r["cpu_us_per_call"] = r["server_cpu_us_per_call"]
hits = f" hit rate {sys.argv[2]}" if sys.argv[2] else ""
if sys.argv[2] and sys.argv[2] != "-": r["hit_rate"] = float(sys.argv[2])
json.dump(r, open(path, "w"))
print(f"{path.rsplit('/',1)[1][:-5]:>10}: {r['cpu_us_per_call']:7.1f} us/call (client {r['client_cpu_us_per_call']:5.1f}) {r['qps']:8.0f}/s p99 {r['p99_us']/1000:6.2f} ms {r['response_bytes_mean']:.1f} B errors {r['errors']}{hits}")
PY
}
M=modelatlas.catalog.v1.CatalogService/GetModel
# Warm both caches the same way, each until its hit rate settles.
seconds_saved=$seconds; seconds=10
for side in ref new; do
  warm_until_settled catalog-$side "${WARM_SECONDS:-300}" load warm-$side catalog-$side $M "$req" "${vary[@]}"
done
# Echo replies the new catalog's mean reply size (its last warm-up run's),
# sent the same names; warmed once as the catalogs were (its threads and
# allocator in their steady state).
bytes=$(python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["response_bytes_mean"]))' "$state/warm-new.json")
echo_req="${req%\}}, \"response_bytes\": $bytes}"
E=modelatlas.bench.v1.EchoService/Echo
load warm-echo echo $E "$echo_req" "${vary[@]}"
seconds=$seconds_saved
run_side() { # side round
  if [[ $1 == echo ]]; then load "echo-$2" echo $E "$echo_req" "${vary[@]}"
  else load "get-$1-$2" catalog-$1 $M "$req" "${vary[@]}"; fi
}
for r in $(seq 1 "$rounds"); do
  echo "== round $r ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))"
  sides=(ref new echo)
  for i in 0 1 2; do run_side "${sides[$(( (i + r - 1) % 3 ))]}" "$r"; done
done
for side in ref new; do
  echo "$side record cache: $(curl -s http://127.0.0.1:$(grep metrics_port $state/catalog-$side.ports | cut -d= -f2)/metrics | grep -E '^modelatlas_catalog_record_cache_(hits_total|misses_total|records|bytes) ' | tr '\n' ' ')"
  # Anonymous (the process's own) and file-backed (the SQLite file's pages
  # mapped by --sqlite_mmap_bytes: the kernel's page cache, clean and
  # reclaimable, which read() copies would have left uncounted) apart.
  echo "$side resident: $(rss_mib catalog-$side) MiB ($(awk '/^(RssAnon|RssFile|VmHWM)/ {printf "%s %.1f MiB ", $1, $2 / 1024}' "/proc/$(cat "$state/catalog-$side.pid")/status"))"
done
python3 - "$state" "$rounds" <<'PY'
import json, statistics, sys
state, rounds = sys.argv[1], int(sys.argv[2])
g = lambda n, k: [json.load(open(f"{state}/{n}-{r}.json"))[k] for r in range(1, rounds + 1)]
for side in ("ref", "new"):
    rates = [json.load(open(f"{state}/get-{side}-{r}.json")).get("hit_rate") for r in range(1, rounds + 1)]
    if all(x is not None for x in rates):
        print(f"{side} hit rate per round: {', '.join(f'{x:.3f}' for x in rates)} (median {statistics.median(rates):.3f})")
for k in ("cpu_us_per_call", "client_cpu_us_per_call", "qps", "p99_us"):
    e, a, n = g("echo", k), g("get-ref", k), g("get-new", k)
    re = [x / y for x, y in zip(n, e)]; ra = [x / y for x, y in zip(n, a)]; rae = [x / y for x, y in zip(a, e)]
    print(f"{k:16} echo {statistics.median(e):9.1f} ref {statistics.median(a):9.1f} new {statistics.median(n):9.1f}"
          f"  new/echo {statistics.median(re):.2f} ({', '.join(f'{x:.2f}' for x in re)})"
          f"  ref/echo {statistics.median(rae):.2f}  new/ref {statistics.median(ra):.2f} ({', '.join(f'{x:.2f}' for x in ra)})")
PY
