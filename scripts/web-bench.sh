#!/usr/bin/env bash
# The web front's figures (issue 23, point 6) on the shipped dataset: the
# three real binaries on loopback, then every page kind rendered ROUNDS times
# over a set of models and cards, reading each render's own server time from
# its Server-Timing header (the calls to both services included, the network
# not), its size in bytes, and the web process's resident memory after.
#   scripts/web-bench.sh [ROUNDS]     default 20 rounds (about 1,000 pages)
#   scripts/web-bench.sh --smoke      2 rounds (CI: figures only, no thresholds)
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
rounds="${1:-20}"
[[ "$rounds" == --smoke ]] && rounds=2
state="$root/.run/web-bench"
rm -rf "$state" && mkdir -p "$state"

bash scripts/install-deps.sh build
bash scripts/build.sh catalog-service estimator-service modelatlas-web
b="$root/build"

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
port() {  # file, key: waits for the port file
  for _ in $(seq 1 300); do
    if [[ -f "$1" ]] && grep -q "^$2=" "$1" && grep -q "^metrics_port=" "$1"; then
      grep "^$2=" "$1" | cut -d= -f2; return 0
    fi
    sleep 0.1
  done
  echo "no $2 in $1" >&2; return 1
}
"$b/catalog-service/catalog-service" --sqlite_path="$state/catalog.db" --grpc_address=127.0.0.1:0 \
  --metrics_address=127.0.0.1:0 --port_file="$state/catalog.ports" >"$state/catalog.log" 2>&1 &
pids+=($!)
catalog="$(port "$state/catalog.ports" grpc_port)"
"$b/estimator-service/estimator-service" --catalog_address="127.0.0.1:$catalog" \
  --grpc_address=127.0.0.1:0 --metrics_address=127.0.0.1:0 --port_file="$state/estimator.ports" \
  >"$state/estimator.log" 2>&1 &
pids+=($!)
estimator="$(port "$state/estimator.ports" grpc_port)"
"$b/web/modelatlas-web" --catalog_address="127.0.0.1:$catalog" \
  --estimator_address="127.0.0.1:$estimator" --http_address=127.0.0.1:0 \
  --metrics_address=127.0.0.1:0 --port_file="$state/web.ports" >"$state/web.log" 2>&1 &
web_pid=$!
pids+=($web_pid)
web="$(port "$state/web.ports" http_port)"

/usr/bin/python3 - "$web" "$rounds" "$web_pid" <<'PY'
import json, statistics, sys, time, urllib.parse, urllib.request
port, rounds, pid = sys.argv[1], int(sys.argv[2]), sys.argv[3]
base = f"http://127.0.0.1:{port}"
for _ in range(300):
    try:
        if urllib.request.urlopen(base + "/readyz", timeout=2).status == 200:
            break
    except OSError:
        time.sleep(0.1)

def get(path):
    with urllib.request.urlopen(base + path, timeout=30) as r:
        body = r.read()
        timing = r.headers.get("Server-Timing", "")
        ms = float(timing.split("dur=")[1]) if "dur=" in timing else float("nan")
        return ms, len(body)

def rss_mib():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024

# Models: the largest open-weight ones, the newest ones and closed ones, as
# the catalog lists them (ids from the JSON API, so nothing is hard-coded).
def ids(query):
    records = json.load(urllib.request.urlopen(base + "/v1/models?" + query, timeout=30))
    return [m["name"].split("/", 1)[1] for m in records.get("models", [])]
q = urllib.parse.quote
open_models = ids("page_size=20&order_by=" + q("parameters desc") + "&filter=" +
                  q("open_model_weights = true AND parameters < 1e12"))
newest = ids("page_size=10&order_by=" + q("publication_date desc") + "&filter=" +
             q("open_model_weights = true"))
closed = ids("page_size=10&filter=" + q("open_model_weights = false"))
cards = [h["name"].split("/", 1)[1] for h in json.load(urllib.request.urlopen(
    base + "/v1/hardware?page_size=10&order_by=" + q("memory_bytes desc"), timeout=30))["hardware"]]
kinds = {
    "model page (open weights)": [f"/models/{m}" for m in open_models + newest],
    "model page (closed weights)": [f"/models/{m}" for m in closed],
    "model page, context 32,768, int4": [f"/models/{m}?context=32768&weights=int4" for m in open_models[:10]],
    "card page": [f"/hardware/{h}" for h in cards],
    "search page": ["/search?q=llama", "/search?filter=" + q("parameters > 1e10")],
}
for paths in kinds.values():  # warm: the estimator's snapshot, the catalog's cache
    for p in paths:
        get(p)
rss_before = rss_mib()
print(f"| page | pages | server ms p50 | p99 | max | KB median | KB max |")
print(f"|---|---|---|---|---|---|---|")
for kind, paths in kinds.items():
    ms, sizes = [], []
    for _ in range(rounds):
        for p in paths:
            t, n = get(p)
            ms.append(t); sizes.append(n / 1000)
    ms.sort()
    p99 = ms[min(len(ms) - 1, int(0.99 * len(ms)))]
    print(f"| {kind} | {len(ms)} | {statistics.median(ms):.2f} | {p99:.2f} | {ms[-1]:.2f} | "
          f"{statistics.median(sizes):.1f} | {max(sizes):.1f} |")
print(f"\nweb process resident memory: {rss_before:.1f} MiB after warm-up, {rss_mib():.1f} MiB after the run")
PY
