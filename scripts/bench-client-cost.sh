#!/usr/bin/env bash
# What the load generator itself spends per call against the estimator and
# against echo servers made to cost more server CPU per call, interleaved
# round by round (issue 22 point 1; docs/BENCHMARKS.md, session 16, branch
# s16-transport). On cores shared by the client and the server, QPS follows
# the sum of both sides' CPU per call, and the client's share grows with the
# server's: this separates what the server's cost does to the client from
# anything else (the wire, metadata, the client's own code).
#   scripts/bench-client-cost.sh [ROUNDS] [SECONDS]
#   CPU_NS="500 1000 2000" ...   the echo servers' --cpu_ns_per_call (echo at 0
#                                is always run)
#   CHANNELS=4 ...               loadgen --channels
# Scenario: EstimateInferenceMemory of one request (Llama 3.1 8B at 8,192
# tokens, answer cache off), 32 in flight, echo replying the estimator's
# reply size. Per run and per call, from perf stat's software events and
# tracepoints (the server attached with -p over the whole loadgen run,
# loadgen run under it with --warmup=0s): CPU (task-clock), context
# switches, system calls, recvmsg, sendmsg, futex, for the client and the
# server; then the medians per server.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
rounds="${1:-5}"
seconds="${2:-3}"
b="$root/build"
state="$root/.run/client-cost"
mkdir -p "$state"
rm -f "$state"/*.csv "$state"/*.json "$state"/*.pid "$state"/*.ports "$state"/*.log "$state"/*.db*
command -v perf >/dev/null || { echo "bench-client-cost.sh: needs perf (linux-perf)" >&2; exit 2; }
source "$root/scripts/lib/servers.sh"

declare -A port
port[catalog]=$(start catalog "$b/catalog-service/catalog-service" --sqlite_path="$state/catalog.db")
port[estimator]=$(start estimator "$b/estimator-service/estimator-service" \
  --catalog_address=127.0.0.1:${port[catalog]} --answer_cache_bytes=0)
servers=(estimator echo)
port[echo]=$(start echo "$b/bench/echo-server")
for ns in ${CPU_NS:-500 1000 2000}; do
  port[echo-$ns]=$(start "echo-$ns" "$b/bench/echo-server" --cpu_ns_per_call="$ns")
  servers+=("echo-$ns")
done
wait_for_estimator "${port[catalog]}" "${port[estimator]}"

estimate='{"model": "Llama 3.1 8B", "workload": {"context_length_tokens": 8192}}'
bytes=$("$b/bench/loadgen" --target=127.0.0.1:${port[estimator]} \
  --method=modelatlas.estimator.v1.EstimatorService/EstimateInferenceMemory --request="$estimate" \
  --concurrency=1 --duration=200ms --warmup=0s --json |
  /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["response_bytes"])')
echo "estimator reply: $bytes bytes; echo replies as many"
events=task-clock,context-switches,raw_syscalls:sys_enter,syscalls:sys_enter_recvmsg
events+=,syscalls:sys_enter_sendmsg,syscalls:sys_enter_futex

run() {  # server round
  local server="$1" round="$2" pid method request
  pid=$(cat "$state/$server.pid")
  if [[ $server == estimator ]]; then
    method=modelatlas.estimator.v1.EstimatorService/EstimateInferenceMemory request="$estimate"
  else
    method=modelatlas.bench.v1.EchoService/Echo
    request="{\"name\": \"Llama 3.1 8B\", \"response_bytes\": $bytes}"
  fi
  perf stat -x, -e "$events" -p "$pid" -o "$state/$server-$round.server.csv" &
  local perf_pid=$!
  sleep 0.3
  perf stat -x, -e "$events" -o "$state/$server-$round.client.csv" -- \
    "$b/bench/loadgen" --target=127.0.0.1:${port[$server]} --method="$method" --request="$request" \
    --concurrency=32 --channels="${CHANNELS:-4}" --duration="${seconds}s" --warmup=0s --json \
    --server_pid="$pid" >"$state/$server-$round.json"
  kill -INT "$perf_pid"
  wait "$perf_pid" 2>/dev/null || true
}

for round in $(seq 1 "$rounds"); do
  echo "== round $round ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))"
  count=${#servers[@]}
  for i in $(seq 0 $((count - 1))); do
    server=${servers[$(((i + round - 1) % count))]}
    run "$server" "$round"
    /usr/bin/python3 "$root/scripts/lib/per_call_counts.py" "$state" "$server" "$round"
  done
done
/usr/bin/python3 "$root/scripts/lib/per_call_counts.py" "$state" --medians "$rounds" "${servers[@]}"
