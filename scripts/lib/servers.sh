# Shared by the benchmark scripts: start the real servers on free ports, stop
# them on exit, read their CPU time and memory. Source it after setting
# $state (a directory for pid, port and log files).

# The servers' pids are in their pid files ($(start ...) runs in a subshell).
cleanup() {
  for file in "$state"/*.pid; do
    [[ -f "$file" ]] && kill -TERM "$(cat "$file")" 2>/dev/null || true
  done
}
trap cleanup EXIT

# SERVER_CPUS / CLIENT_CPUS (taskset lists, e.g. 0 and 1): the servers and
# the load generator each kept to their own cores, so that neither's work
# evicts the other's from the caches of a shared core (unset: both on every
# core, as the figures before session 25 were taken).
server_cpus=(); [[ -n ${SERVER_CPUS:-} ]] && server_cpus=(taskset -c "$SERVER_CPUS")
client_cpus=(); [[ -n ${CLIENT_CPUS:-} ]] && client_cpus=(taskset -c "$CLIENT_CPUS")

# start NAME COMMAND...: runs COMMAND on free ports (on SERVER_CPUS when
# set), waits up to 60 s for its port file, prints its gRPC port.
start() {
  local name="$1"; shift
  "${server_cpus[@]}" "$@" --grpc_address=127.0.0.1:0 --metrics_address=127.0.0.1:0 --port_file="$state/$name.ports" \
    >"$state/$name.log" 2>&1 &
  echo $! >"$state/$name.pid"
  for _ in $(seq 1 600); do [[ -s "$state/$name.ports" ]] && break; sleep 0.1; done
  grep grpc_port "$state/$name.ports" | cut -d= -f2
}

# wait_for_estimator CATALOG_PORT ESTIMATOR_PORT: up to 30 s (WAIT_TRIES x
# 0.2 s, default 150) until the estimator answers an estimate from its
# catalog snapshot (it loads the snapshot after it starts serving), each
# call given WAIT_CALL_TIMEOUT (default 1s). Uses WAIT_CLI (default
# $root/build/cli/modelatlas).
wait_for_estimator() {
  for _ in $(seq 1 "${WAIT_TRIES:-150}"); do
    "${WAIT_CLI:-$root/build/cli/modelatlas}" --catalog="127.0.0.1:$1" --estimator="127.0.0.1:$2" \
      --timeout="${WAIT_CALL_TIMEOUT:-1s}" estimate memory "GPT-2 (124M)" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
}

# ref_estimator_bin DIR: the estimator-service binary of a previous build,
# DIR a build/ tree or a directory holding the binary.
ref_estimator_bin() {
  if [[ -x "$1/estimator-service/estimator-service" ]]; then
    echo "$1/estimator-service/estimator-service"
  else
    echo "$1/estimator-service"
  fi
}

# CPU time of server NAME so far, in clock ticks (user + system).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$(cat "$state/$1.pid")/stat"; }

# Resident memory of server NAME, MiB.
rss_mib() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$(cat "$state/$1.pid")/status"; }

# generate_models_csv PATH N: N generated models in Epoch's CSV columns
# (parameters 1e6..1e12, compute 1e16..1e25, dates 2015..2025).
generate_models_csv() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import csv, sys
path, n = sys.argv[1], int(sys.argv[2])
domains = ["Language", "Vision", "Speech", "Biology", "Games"]
with open(path, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["Model", "Domain", "Organization", "Parameters", "Training compute (FLOP)", "Publication date"])
    for i in range(n):
        w.writerow([f"Generated Model {i}", domains[i % 5], f"Lab {i % 97}",
                    f"{10 ** (6 + (i * 7919 % 6000) / 1000):.6g}", f"{10 ** (16 + (i * 104729 % 9000) / 1000):.6g}",
                    f"{2015 + i % 11}-{1 + i % 12:02d}-{1 + i % 28:02d}"])
PY
}

# The filtered, ordered ListModels pages measured at a million models
# (scripts/bench-million.sh and scripts/bench-lists.sh), as "label|request JSON".
million_list_requests=(
  'list-date|{"filter": "parameters > 1e11 AND domains:\"Vision\"", "order_by": "publication_date desc", "page_size": 50}'
  'list-params|{"filter": "domains:\"Vision\"", "order_by": "parameters desc", "page_size": 50}'
  'list-name|{"filter": "publication_date >= \"2024-01-01\"", "order_by": "display_name", "page_size": 50}'
  'list-filter|{"filter": "parameters > 1e11 AND domains:\"Vision\"", "page_size": 50}'
)

# record_cache_counters NAME: "hits misses records" of catalog NAME's record
# cache, from its metrics (zeros when it has none: PostgreSQL).
record_cache_counters() {
  { curl -s "http://127.0.0.1:$(grep metrics_port "$state/$1.ports" | cut -d= -f2)/metrics" || true; } |
    awk '/^modelatlas_catalog_record_cache_hits_total /{h=$2}
         /^modelatlas_catalog_record_cache_misses_total /{m=$2}
         /^modelatlas_catalog_record_cache_records /{r=$2}
         END {printf "%d %d %d\n", h, m, r}'
}

# hit_rate BEFORE AFTER: the share of reads answered by the cache between two
# record_cache_counters readings ("-" when there were none).
hit_rate() {
  /usr/bin/python3 -c 'import sys
b, a = [list(map(int, s.split())) for s in sys.argv[1:3]]
n = (a[0] - b[0]) + (a[1] - b[1])
print(f"{(a[0] - b[0]) / n:.3f}" if n > 0 else "-")' "$1" "$2"
}

# warm_until_settled NAME MAX_SECONDS CMD...: runs CMD (one load run: GetModel
# at random against catalog NAME) again and again until its record cache is
# in its steady state: the hit rate of two runs in a row within one point and
# the cached records within 1% (a full cache, or the whole catalog), or
# MAX_SECONDS have passed. A short warm-up measures the filling cache (every
# miss also inserts, none evicts) instead of the state a long-running catalog
# serves from. Prints each run's hit rate.
warm_until_settled() {
  local name="$1" max="$2"; shift 2
  local start=$SECONDS before after rate last=-1 last_records=-1 records
  while true; do
    before=$(record_cache_counters "$name")
    "$@"
    after=$(record_cache_counters "$name")
    rate=$(hit_rate "$before" "$after"); records=${after##* }
    echo "  warm $name: hit rate $rate, $records records cached ($((SECONDS - start)) s)"
    [[ $rate == - ]] && break
    if /usr/bin/python3 -c 'import sys
r, l, n, m = map(float, sys.argv[1:])
sys.exit(0 if l >= 0 and abs(r - l) < 0.01 and abs(n - m) <= 0.01 * max(n, 1) else 1)' \
      "$rate" "$last" "$records" "$last_records"; then
      break
    fi
    (( SECONDS - start >= max )) && { echo "  warm $name: not settled after $max s"; break; }
    last=$rate last_records=$records
  done
}
