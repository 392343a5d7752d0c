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

# start NAME COMMAND...: runs COMMAND on free ports, waits up to 60 s for its
# port file, prints its gRPC port.
start() {
  local name="$1"; shift
  "$@" --grpc_address=127.0.0.1:0 --metrics_address=127.0.0.1:0 --port_file="$state/$name.ports" \
    >"$state/$name.log" 2>&1 &
  echo $! >"$state/$name.pid"
  for _ in $(seq 1 600); do [[ -s "$state/$name.ports" ]] && break; sleep 0.1; done
  grep grpc_port "$state/$name.ports" | cut -d= -f2
}

# wait_for_estimator CATALOG_PORT ESTIMATOR_PORT: up to 30 s until the
# estimator answers an estimate from its catalog snapshot (it loads the
# snapshot after it starts serving). Uses $root/build/cli/modelatlas.
wait_for_estimator() {
  for _ in $(seq 1 150); do
    "$root/build/cli/modelatlas" --catalog="127.0.0.1:$1" --estimator="127.0.0.1:$2" \
      --timeout=1s estimate memory "GPT-2 (124M)" >/dev/null 2>&1 && return 0
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
