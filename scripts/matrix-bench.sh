#!/usr/bin/env bash
# The whole fit matrix over gRPC against the real binaries (issue 22 point 2):
# catalog-service on a new SQLite file (the full shipped dataset), the
# estimator following it, and bench/loadgen driving StreamFitMatrix (every
# model x every accelerator x the default four weight formats), counting
# cells (--count_field=cards). Each round: the matrix for $seconds, the
# estimator's CPU over it (/proc/PID/stat), then the echo server replying
# messages of the matrix's average size for as long, the same client.
#   scripts/matrix-bench.sh [ROUNDS] [SECONDS] [CONCURRENCY]   (default 5 rounds of 5 s, 1 call)
# Prints every round; nothing is written to docs/.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
rounds="${1:-5}"
seconds="${2:-5}"
concurrency="${3:-1}"
b="$root/build"
state="$root/.run/matrix-bench"
rm -rf "$state" && mkdir -p "$state"

source "$root/scripts/lib/servers.sh"

catalog_port=$(start catalog "$b/catalog-service/catalog-service" --sqlite_path="$state/catalog.db")
estimator_port=$(start estimator "$b/estimator-service/estimator-service" \
  --catalog_address=127.0.0.1:$catalog_port)
echo_port=$(start echo "$b/bench/echo-server")
for _ in $(seq 1 100); do
  grep -q "catalog snapshot loaded" "$state/estimator.log" && break
  sleep 0.2
done
grep "catalog snapshot loaded" "$state/estimator.log" | tail -1

request='{"workload": {"context_length_tokens": 4096}}'
hz=$(getconf CLK_TCK)
echo "round | cells/s | messages/s | MB/s | estimator CPU s per 1M cells | calls | p99 ms | echo messages/s (same bytes) | echo CPU us/message | matrix messages/s / echo"
for round in $(seq 1 "$rounds"); do
  before=$(cpu_ticks estimator)
  "$b/bench/loadgen" --target=127.0.0.1:$estimator_port \
    --method=modelatlas.estimator.v1.EstimatorService/StreamFitMatrix --request="$request" \
    --count_field=cards --concurrency="$concurrency" --channels=1 --duration=${seconds}s \
    --warmup=1s --deadline=120s --json >"$state/matrix-$round.json"
  after=$(cpu_ticks estimator)
  bytes=$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(int(r["stream_bytes_per_s"] / max(1, r["messages_per_s"])))' "$state/matrix-$round.json")
  echo_before=$(cpu_ticks echo)
  "$b/bench/loadgen" --target=127.0.0.1:$echo_port --method=modelatlas.bench.v1.EchoService/Echo \
    --request="{\"payload\": \"\", \"response_bytes\": $bytes}" --concurrency="$concurrency" \
    --channels=1 --duration=${seconds}s --warmup=1s --json >"$state/echo-$round.json"
  echo_after=$(cpu_ticks echo)
  /usr/bin/python3 - "$round" "$state/matrix-$round.json" "$state/echo-$round.json" \
    "$before" "$after" "$echo_before" "$echo_after" "$hz" "$seconds" <<'PY'
import json, sys
rnd, mpath, epath = sys.argv[1:4]
before, after, ebefore, eafter, hz, seconds = map(float, sys.argv[4:10])
m, e = json.load(open(mpath)), json.load(open(epath))
# CPU over warm-up and measurement (1 s + seconds); the cells over the
# measurement only, scaled to the same span.
cells = m["items_per_s"] * (seconds + 1)
cpu = (after - before) / hz
echo_cpu_us = (eafter - ebefore) / hz * 1e6 / max(1, e["qps"] * (seconds + 1))
print(f"{rnd} | {m['items_per_s']:,.0f} | {m['messages_per_s']:,.1f} | {m['stream_bytes_per_s'] / 1e6:,.1f} | "
      f"{cpu / max(1, cells) * 1e6:.3f} | {m['calls']} | {m['p99_us'] / 1000:,.0f} | {e['qps']:,.0f} | "
      f"{echo_cpu_us:.1f} | {m['messages_per_s'] / max(1, e['qps']):.2f}")
PY
done
