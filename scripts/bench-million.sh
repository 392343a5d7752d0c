#!/usr/bin/env bash
# The catalog at a million records (issue 22 point 4), on SQLite or PostgreSQL:
#   1. generates N models as Epoch-style CSV (the generator of scripts/bench.sh);
#   2. starts the real catalog-service on an empty store and imports the file
#      through the real path (`modelatlas import`, streamed over gRPC);
#   3. measures, against the echo server replying as many bytes, in
#      interleaved rounds: GetModel of a model at random (loadgen --vary=N)
#      as server CPU per call (from /proc/PID/stat), calls/s and p99; then a
#      filtered, ordered ListModels page (p50/p99) and resident memory.
#
#   scripts/bench-million.sh [--store=sqlite|postgres] [--models=N] [--rounds=R]
#                            [--record_cache_bytes=B] [--smoke] [--atomic]
#   --atomic: the import is `modelatlas import --atomic` (one transaction, all or nothing)
#   pg_virtualenv -t scripts/bench-million.sh --store=postgres     (PG* from pg_virtualenv)
#   scripts/bench-million.sh --smoke      2,000 models, 1 round of 1 s (CI: no thresholds)
#   BENCH_BUILD_DIR=DIR (with SKIP_BUILD=1): the binaries of another build (e.g. a
#   copy of an earlier commit's, for a before/after on the same machine)
#   BENCH_PRELOADED="how": no generation or import; the store already holds
#   the N models (SQLite: BENCH_DB=FILE is copied in; PostgreSQL: e.g. loaded
#   by scripts/bench-pg-load.sh); "how" is printed with the results.
#   --sqlite_mmap_bytes=B: passed to catalog-service (SQLite reads through a map)
#   WARM_SECONDS=S: the longest warm-up before the GetModel rounds (default 300):
#   runs of 10 s until the record cache's hit rate settles (warm_until_settled
#   in scripts/lib/servers.sh); each round prints its hit rate.
#   BENCH_LOADGEN=PATH: the load generator (default this tree's build).
#   RECORD_CACHE_PRELOAD=1: catalog-service --record_cache_preload (SQLite: the
#   record cache filled from the store before the rounds; for a
#   --record_cache_bytes sized to the catalog); the rounds wait for it.
#   POSTGRES_RECORD_CACHE=1: catalog-service --postgres_record_cache with
#   --record_cache_bytes (PostgreSQL: the record cache and its change follower).
# Each ListModels request runs once per round too (rounds interleaved).
#
# Results (every round) go to .run/bench-million/<store>/results.md and stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
store=sqlite models=1000000 rounds=5 round_seconds=3 cache_bytes=$((64 << 20)) smoke=false
mmap_bytes=0
import_flags=()
for arg in "$@"; do
  case "$arg" in
    --store=*) store="${arg#--store=}" ;;
    --models=*) models="${arg#--models=}" ;;
    --rounds=*) rounds="${arg#--rounds=}" ;;
    --record_cache_bytes=*) cache_bytes="${arg#--record_cache_bytes=}" ;;
    --sqlite_mmap_bytes=*) mmap_bytes="${arg#--sqlite_mmap_bytes=}" ;;
    --smoke) smoke=true ;;
    --atomic) import_flags+=(--atomic) ;;
    *) echo "unknown argument $arg" >&2; exit 2 ;;
  esac
done
if $smoke; then models=2000 rounds=1 round_seconds=1; fi
[[ $store == sqlite || $store == postgres ]] || { echo "--store is sqlite or postgres" >&2; exit 2; }
if [[ $store == postgres && -z "${PGHOST:-}${PGDATABASE:-}" ]]; then
  echo "--store=postgres needs a server: run under pg_virtualenv (PG* variables)" >&2; exit 2
fi
state="${BENCH_STATE_DIR:-$root/.run/bench-million/$store}"
rm -rf "$state" && mkdir -p "$state"
if [[ -z "${SKIP_BUILD:-}" ]]; then
  bash scripts/build.sh catalog-service modelatlas loadgen echo-server >"$state/build.log" 2>&1
fi
b="${BENCH_BUILD_DIR:-$root/build}"
# The load generator: this tree's by default, whichever build serves (an older
# loadgen replays the same ids in every run: see loadgen --seed).
loadgen="${BENCH_LOADGEN:-$root/build/bench/loadgen}"
[[ -x $loadgen ]] || loadgen="$b/bench/loadgen"

source "$root/scripts/lib/servers.sh"
preloaded="${BENCH_PRELOADED:-}"
if [[ -z $preloaded ]]; then
  echo "== generating $models models"
  generate_models_csv "$state/models.csv" "$models"
elif [[ $store == sqlite ]]; then
  cp "${BENCH_DB:?BENCH_PRELOADED on sqlite needs BENCH_DB=FILE}" "$state/catalog.db"
fi

hwm_mib() { awk '/VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$(cat "$state/$1.pid")/status"; }

if [[ $store == postgres ]]; then
  catalog_flags=(--store=postgres)
else
  catalog_flags=(--sqlite_path="$state/catalog.db" --record_cache_bytes="$cache_bytes"
    --sqlite_mmap_bytes="$mmap_bytes")
fi
pg_cache="${POSTGRES_RECORD_CACHE:-}"
[[ -n $pg_cache && $store == postgres ]] &&
  catalog_flags+=(--postgres_record_cache --record_cache_bytes="$cache_bytes")
preload="${RECORD_CACHE_PRELOAD:-}"
[[ -n $preload ]] && catalog_flags+=(--record_cache_preload)
catalog_port=$(start catalog "$b/catalog-service/catalog-service" "${catalog_flags[@]}")
echo_port=$(start echo "$b/bench/echo-server")
cli=("$b/cli/modelatlas" --catalog=127.0.0.1:$catalog_port)
for _ in $(seq 1 100); do "${cli[@]}" --timeout=1s models get "GPT-2 (124M)" >/dev/null 2>&1 && break; sleep 0.2; done
# The preload runs while the server already answers: wait for its log line.
if [[ -n $preload && ($store == sqlite || -n $pg_cache) ]]; then
  for _ in $(seq 1 600); do grep -q "record cache preloaded" "$state/catalog.log" && break; sleep 0.5; done
  grep "record cache preloaded" "$state/catalog.log" || echo "preload not finished" >&2
fi
rss_before_import=$(rss_mib catalog)

import_start=$(date +%s%N)
import_ticks=$(cpu_ticks catalog)
if [[ -z $preloaded ]]; then
  echo "== importing through the CLI"
  "${cli[@]}" --timeout=1800s import "${import_flags[@]}" "$state/models.csv" >"$state/import.txt"
fi
import_seconds=$(/usr/bin/python3 -c "print(($(date +%s%N) - $import_start) / 1e9)")
import_cpu=$(/usr/bin/python3 -c "print(($(cpu_ticks catalog) - $import_ticks) / $(getconf CLK_TCK))")
load_during_import=$(cut -d' ' -f1 /proc/loadavg)
rss_after_import=$(rss_mib catalog)
hwm_import=$(hwm_mib catalog)
echo "import: ${import_seconds} s wall, ${import_cpu} s of catalog CPU"

load() {  # label, port, method, request, concurrency, seconds[, loadgen flags...]
  local label="$1" port="$2" method="$3" request="$4" concurrency="$5" seconds="$6"; shift 6
  local server=catalog before after
  [[ $label == echo* ]] && server=echo
  before=$(cpu_ticks $server)
  "$loadgen" --target=127.0.0.1:$port --method="$method" --request="$request" \
    --concurrency="$concurrency" --duration="${seconds}s" --warmup=0s --json "$@" \
    >"$state/$label.json" 2>"$state/$label.err" || true
  after=$(cpu_ticks $server)
  /usr/bin/python3 - "$state/$label.json" "$before" "$after" "$(getconf CLK_TCK)" <<'PY'
import json, sys
path, before, after, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
try:
    r = json.load(open(path))
except Exception:
    r = {"calls": 0, "qps": 0, "p50_us": 0, "p99_us": 0, "errors": -1}
r["cpu_us_per_call"] = (after - before) / hz * 1e6 / max(1, r.get("calls", 0))
# The machine's load as the run ended: a p99 moves with it, CPU per call much less.
r["load_average"] = open("/proc/loadavg").read().split()[0]
json.dump(r, open(path, "w"))
PY
}
get_method=modelatlas.catalog.v1.CatalogService/GetModel
get_request='{"name": "models/generated-model-{i}"}'
# Loadgen builds its N requests before it connects: that time is not the server's.
warm() { load "$1" "$catalog_port" $get_method "$get_request" 32 "$2" --vary=$models; }
# Warm until the record cache's hit rate settles (runs of 10 s, at most
# WARM_SECONDS, default 300): the rounds measure the steady state a
# long-running catalog serves from, not a filling cache.
if $smoke; then
  warm warmup 1
else
  warm_until_settled catalog "${WARM_SECONDS:-300}" warm warmup 10
fi
reply_bytes=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("response_bytes", 300))' "$state/warmup.json")
payload=$(printf '%s' '{"name": "models/generated-model-500000"}' | base64 -w0)
echo_request="{\"payload\": \"$payload\", \"response_bytes\": $reply_bytes}"
echo "== $rounds rounds of ${round_seconds}s: echo, GetModel at random, echo ($reply_bytes-byte replies)"
load echo-0 "$echo_port" modelatlas.bench.v1.EchoService/Echo "$echo_request" 32 "$round_seconds"
for round in $(seq 1 "$rounds"); do
  counters=$(record_cache_counters catalog)
  warm "get-$round" "$round_seconds"
  hit_rate "$counters" "$(record_cache_counters catalog)" >"$state/get-$round.hits"
  load "echo-$round" "$echo_port" modelatlas.bench.v1.EchoService/Echo "$echo_request" 32 "$round_seconds"
done
rss_after_get=$(rss_mib catalog)

list_method=modelatlas.catalog.v1.CatalogService/ListModels
lists=("${million_list_requests[@]}")
printf '%s\n' "${lists[@]}" >"$state/lists.txt"
for round in $(seq 1 "$rounds"); do
  for entry in "${lists[@]}"; do
    load "${entry%%|*}-$round" "$catalog_port" $list_method "${entry#*|}" 4 $((round_seconds * 2))
  done
done
rss_end=$(rss_mib catalog)
hwm_end=$(hwm_mib catalog)
# The PostgreSQL server's own memory: the proportional set size (shared pages
# divided among the processes that map them) of the postmaster and its
# children, summed, and its shared_buffers.
pg_memory=""
if [[ $store == postgres ]]; then
  postmaster=$(head -1 "$(psql -Atc 'SHOW data_directory')/postmaster.pid")
  pg_memory="$(for pid in $postmaster $(ps --ppid "$postmaster" -o pid=); do
    awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup" 2>/dev/null; done |
    awk '{s += $1; n++} END {printf "%.1f MiB PSS over %d processes", s / 1024, n}'), shared_buffers $(psql -Atc 'SHOW shared_buffers')"
fi

/usr/bin/python3 - "$state" "$store" "$models" "$rounds" "$round_seconds" "$cache_bytes" "$import_seconds" \
  "$rss_before_import" "$rss_after_import" "$hwm_import" "$rss_after_get" "$rss_end" "$hwm_end" \
  "$reply_bytes" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$import_cpu" \
  "$load_during_import" "$preloaded" "$mmap_bytes" "$pg_memory" "$preload" "$pg_cache" <<'PY'
import datetime, json, os, sys
(state, store, models, rounds, round_s, cache, import_s, rss0, rss_imp, hwm_imp, rss_get, rss_end, hwm_end,
 reply, commit, import_cpu, import_load, preloaded, mmap_bytes, pg_memory, cache_preload, pg_cache) = sys.argv[1:]
models, rounds = int(models), int(rounds)
def load(name):
    try:
        return json.load(open(f"{state}/{name}.json"))
    except Exception:
        return {"qps": 0, "p50_us": 0, "p99_us": 0, "errors": -1, "calls": 0, "cpu_us_per_call": 0}
out = []
w = out.append
load_avg = open("/proc/loadavg").read().split()[:3]
w(f"### {store}, {models:,} models ({datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, commit {commit}, load average {' '.join(load_avg)})")
w("")
cache_note = f"record cache {int(cache) >> 20} MiB{' preloaded' if cache_preload else ''}, SQLite memory map {int(mmap_bytes) >> 20} MiB" if store == "sqlite" else (f"record cache {int(cache) >> 20} MiB{' preloaded' if cache_preload else ''} (--postgres_record_cache)" if pg_cache else "no record cache (PostgreSQL)") + f"; the PostgreSQL server at the end: {pg_memory}"
if preloaded:
    w(f"No import: the store was preloaded ({preloaded}). Resident memory of catalog-service: {rss0} MiB at start (and {float(import_s):.1f} s later), {rss_get} MiB after the GetModel rounds, {rss_end} MiB at the end (peak over the run {hwm_end} MiB; {cache_note}).")
else:
  w(f"Import through `modelatlas import` ({models:,} CSV rows): **{float(import_s):.1f} s** wall, {float(import_cpu):.1f} s of catalog-service CPU (load average {import_load} at its end). Resident memory of catalog-service: {rss0} MiB before the import, peak {hwm_imp} MiB during it, {rss_imp} MiB after it, {rss_get} MiB after the GetModel rounds, {rss_end} MiB at the end (peak over the run {hwm_end} MiB; {cache_note}).")
w("")
w(f"GetModel of a model at random ({reply} B replies) against echo replying as many bytes, 32 calls in flight, {round_s} s per run:")
w("")
w("| round | GetModel CPU/call | echo CPU/call (mean of runs around) | ratio | GetModel calls/s | echo calls/s | QPS ratio | GetModel p99 | echo p99 | errors | record cache hit rate |")
w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
ratios = []
for r in range(1, rounds + 1):
    g, e0, e1 = load(f"get-{r}"), load(f"echo-{r-1}"), load(f"echo-{r}")
    ecpu = (e0["cpu_us_per_call"] + e1["cpu_us_per_call"]) / 2
    eqps = (e0["qps"] + e1["qps"]) / 2
    ep99 = (e0["p99_us"] + e1["p99_us"]) / 2
    ratio = g["cpu_us_per_call"] / ecpu if ecpu else 0
    ratios.append((ratio, g["qps"] / eqps if eqps else 0, g["p99_us"] / ep99 if ep99 else 0))
    try:
        hits = open(f"{state}/get-{r}.hits").read().strip()
    except Exception:
        hits = "-"
    w(f"| {r} | {g['cpu_us_per_call']:.1f} us | {ecpu:.1f} us | {ratio:.2f} | {g['qps']:,.0f} | {eqps:,.0f} | {ratios[-1][1]:.2f} | {g['p99_us']/1000:.2f} ms | {ep99/1000:.2f} ms | {g['errors']} | {hits} |")
def median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else 0
w(f"| median | | | **{median([x[0] for x in ratios]):.2f}** | | | {median([x[1] for x in ratios]):.2f} | | p99 ratio {median([x[2] for x in ratios]):.2f} | | |")
w("")
w(f"ListModels, 4 calls in flight, {2 * int(round_s)} s per request and round:")
w("")
w("| request | round | calls/s | p50 | p99 | server CPU/call | errors | load average |")
w("|---|---:|---:|---:|---:|---:|---:|---:|")
for entry in open(f"{state}/lists.txt").read().splitlines():
    name, request = entry.split("|", 1)
    for r_i in range(1, rounds + 1):
        r = load(f"{name}-{r_i}")
        w(f"| {'`' + request + '`' if r_i == 1 else ''} | {r_i} | {r['qps']:,.0f} | {r['p50_us']/1000:.2f} ms | {r['p99_us']/1000:.2f} ms | {r['cpu_us_per_call']:.0f} us | {r['errors']} | {r.get('load_average', '-')} |")
text = "\n".join(out) + "\n"
open(f"{state}/results.md", "w").write(text)
print(text)
PY
