#!/usr/bin/env bash
# perf profile of an estimator binary on the computed EstimateInferenceMemory
# (the answer cache off; bench-computed.sh's request, 32 in flight) and of
# the echo server at the same reply size, each for 4 s under loadgen.
#   scripts/profile-estimate.sh ESTIMATOR_BINARY OUT_DIR [fp|dwarf]
#   ANSWER_CACHE_BYTES=67108864 scripts/profile-estimate.sh ...   the kept path
#     (after the first call every estimate is replied from the answer cache)
# Writes OUT_DIR/{est,echo}.perf.data, -dso.txt and -sym.txt (self samples)
# and -load.json; for the share under a frame (inclusive), e.g.
#   perf script -i OUT_DIR/est.perf.data -F ip,sym | python3 scripts/lib/perf_under.py SizeForModel
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"; b="$root/build"; bin="$1"; out="$2"; mode="${3:-dwarf}"
state="$root/.run/profile-estimate"; mkdir -p "$state" "$out"; rm -f "$state"/*
source "$root/scripts/lib/servers.sh"
declare -A port
port[catalog]=$(start catalog "$b/catalog-service/catalog-service" --sqlite_path="$state/catalog.db")
port[est]=$(start est "$bin" --catalog_address=127.0.0.1:${port[catalog]} \
  --answer_cache_bytes=${ANSWER_CACHE_BYTES:-0})
port[echo]=$(start echo "$b/bench/echo-server")
wait_for_estimator "${port[catalog]}" "${port[est]}"
M=modelatlas.estimator.v1.EstimatorService
g=(-g); [[ $mode == dwarf ]] && g=(--call-graph dwarf,16384)
for who in est echo; do
  if [[ $who == est ]]; then
    method=$M/EstimateInferenceMemory
    req='{"model": "Llama 3.1 8B", "workload": {"context_length_tokens": 8192}}'
  else
    method=modelatlas.bench.v1.EchoService/Echo; req='{"response_bytes": 830}'
  fi
  "$b/bench/loadgen" --target=127.0.0.1:${port[$who]} --method=$method --request="$req" \
    --concurrency=32 --duration=7s --warmup=500ms --json >"$out/$who-load.json" 2>/dev/null &
  lg=$!
  sleep 1.5
  perf record -F 1999 "${g[@]}" -o "$out/$who.perf.data" -p "$(cat "$state/$who.pid")" \
    -- sleep 4 >/dev/null 2>&1 || true
  wait $lg || true
  perf report -i "$out/$who.perf.data" --no-children --sort dso --stdio -g none 2>/dev/null |
    grep -v "^#" | grep -v "^$" | head -16 >"$out/$who-dso.txt" || true
  perf report -i "$out/$who.perf.data" --no-children --sort dso,sym --stdio -g none 2>/dev/null |
    grep -v "^#" | grep -v "^$" | head -80 >"$out/$who-sym.txt" || true
done
