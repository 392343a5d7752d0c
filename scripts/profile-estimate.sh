#!/usr/bin/env bash
# Profile of an estimator binary on the computed EstimateInferenceMemory
# (the answer cache off; bench-computed.sh's request) and of the echo server
# at the same reply size.
#   scripts/profile-estimate.sh ESTIMATOR_BINARY OUT_DIR [fp|dwarf]
#     perf, 32 in flight (CONCURRENCY=N), 4 s each, echo replying as many bytes as
#     the estimator; PERF_EVENT (e.g. cpu-clock) and PERF_FREQ (default 1999) go to perf record
#   scripts/profile-estimate.sh ESTIMATOR_BINARY OUT_DIR callgrind
#     instructions per call under valgrind's callgrind (user space only; the
#     same on a loaded machine as on a quiet one): each server runs under
#     valgrind, is warmed for WARM_SECONDS (5), its counters zeroed, then
#     driven for SECONDS (8) at 8 in flight and dumped. Prints the
#     instructions per call of the whole process and of the handler
#     (inclusive), then the process's split into libc's string copies and
#     fills (counted a byte an instruction under `rep`) and the rest, the
#     figure to compare; OUT_DIR/{est,echo}.callgrind and -annotate.txt keep
#     the rest (callgrind_annotate --inclusive=yes).
#   CALLGRIND_EXTRA="--cache-sim=yes --LL=1048576,16,64" scripts/profile-estimate.sh ...
#     the same with valgrind's cache simulation (here a last level of this
#     machine's 1 MiB L2): also prints the simulated last-level data misses
#     (reads + writes) per call; any other callgrind options likewise
#   ANSWER_CACHE_BYTES=67108864 scripts/profile-estimate.sh ...   the kept path
#     (after the first call every estimate is replied from the answer cache)
#   REQUEST='{"model": ...}' scripts/profile-estimate.sh ...   another request
#     (echo then replies as many bytes as the estimator's reply)
#   METHOD=PlanInference scripts/profile-estimate.sh ...   another estimator
#     method (default EstimateInferenceMemory; REQUEST then defaults to
#     bench-computed.sh's plan: Llama 3.1 8B on every accelerator)
#   REQUESTS_FILE=varied scripts/profile-estimate.sh ...   bench-computed.sh's
#     varied requests (scripts/varied-requests.py: every shipped model with an
#     architecture x four contexts x three weight formats), one drawn at
#     random per call (loadgen --requests_file); REQUESTS_FILE=PATH another
#     file of JSON requests, one a line. Echo is then sent as many requests,
#     each the model's name in its ignored `name` field, and replies the
#     estimator's mean reply size.
# Writes OUT_DIR/{est,echo}.perf.data, -dso.txt and -sym.txt (self samples)
# and -load.json; for the share under a frame (inclusive), e.g.
#   perf script -i OUT_DIR/est.perf.data -F ip,sym | python3 scripts/lib/perf_under.py SizeForModel
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"; b="${BUILD_DIR:-$root/build}"; bin="$1"; out="$2"; mode="${3:-dwarf}"
state="$root/.run/profile-estimate"; mkdir -p "$state" "$out"; rm -f "$state"/*
source "$root/scripts/lib/servers.sh"
# Echo keeps its heap as the estimator does (KeepHeapForLargeReplies); the
# same settings as GLIBC_TUNABLES for an echo built before session 17, as in
# bench-computed.sh.
ECHO_MALLOC="${ECHO_MALLOC-glibc.malloc.mmap_threshold=8388608:glibc.malloc.trim_threshold=16777216}"
# wait_for_estimator with $b's CLI, patient with an estimator under callgrind.
WAIT_CLI="$b/cli/modelatlas" WAIT_TRIES=300 WAIT_CALL_TIMEOUT=5s
M=modelatlas.estimator.v1.EstimatorService
method_name="${METHOD:-EstimateInferenceMemory}"
est_request="${REQUEST:-{\"model\": \"Llama 3.1 8B\", \"workload\": {\"context_length_tokens\": 8192\}\}}"
[[ $method_name == PlanInference ]] && est_request="${REQUEST:-{\"model\": \"Llama 3.1 8B\"\}}"
# The estimator's requests as loadgen flags: one request, or a file of them.
requests_file="${REQUESTS_FILE:-}"
if [[ $requests_file == varied ]]; then
  requests_file="$state/varied.requests"
  /usr/bin/python3 "$root/scripts/varied-requests.py" "$root/catalog-service/data/dataset.json" \
    "$requests_file"
fi
est_flags=(--request="$est_request")
[[ -n $requests_file ]] && est_flags=(--requests_file="$requests_file")
# echo_flags BYTES: echo's requests, replying BYTES each; with a requests
# file, as many requests of about the same size (the model's name in the
# ignored `name` field).
echo_flags() {
  if [[ -z $requests_file ]]; then
    echo "--request={\"response_bytes\": $1}"
    return
  fi
  /usr/bin/python3 -c 'import json,sys
for line in open(sys.argv[1]):
    if line.strip():
        print(json.dumps({"name": json.loads(line).get("model", ""), "response_bytes": int(sys.argv[2])}))' \
    "$requests_file" "$1" >"$state/echo.requests"
  echo "--requests_file=$state/echo.requests"
}
declare -A port
port[catalog]=$(start catalog "$b/catalog-service/catalog-service" --sqlite_path="$state/catalog.db")

if [[ $mode == callgrind ]]; then
  warm="${WARM_SECONDS:-5}"; seconds="${SECONDS_MEASURED:-8}"
  grind() { echo valgrind --tool=callgrind ${CALLGRIND_EXTRA:-} --dump-instr=no --callgrind-out-file="$state/$1.%p.out"; }
  port[est]=$(start est $(grind est) "$bin" \
    --catalog_address=127.0.0.1:${port[catalog]} --answer_cache_bytes=${ANSWER_CACHE_BYTES:-0})
  wait_for_estimator "${port[catalog]}" "${port[est]}"
  est_bytes=$("$b/bench/loadgen" --target=127.0.0.1:${port[est]} --method=$M/$method_name \
    "${est_flags[@]}" --concurrency=1 --duration=2s --warmup=0s --json |
    /usr/bin/python3 -c 'import json,sys; print(round(json.load(sys.stdin)["response_bytes_mean"]))')
  port[echo]=$(start echo env "GLIBC_TUNABLES=$ECHO_MALLOC" $(grind echo) "$b/bench/echo-server")
  for who in est echo; do
    if [[ $who == est ]]; then method=$M/$method_name; flags=("${est_flags[@]}")
    else method=modelatlas.bench.v1.EchoService/Echo; flags=("$(echo_flags "$est_bytes")"); fi
    run() {
      "$b/bench/loadgen" --target=127.0.0.1:${port[$who]} --method=$method "${flags[@]}" \
        --concurrency=8 --duration="$1" --warmup=0s --deadline=60s --json
    }
    run "${warm}s" >/dev/null
    pid="$(cat "$state/$who.pid")"
    callgrind_control -z "$pid" >/dev/null
    run "${seconds}s" >"$out/$who-load.json"
    callgrind_control -d "$pid" >/dev/null
    sleep 1
    dump="$(ls -t "$state"/$who.*.out.* 2>/dev/null | head -1)"
    cp "$dump" "$out/$who.callgrind"
    callgrind_annotate --inclusive=yes --threshold=100 "$out/$who.callgrind" >"$out/$who-annotate.txt" 2>/dev/null
    /usr/bin/python3 - "$out/$who-annotate.txt" "$out/$who-load.json" "$who" "$method_name" <<'PY'
import json, re, sys
annotate, load, who, method = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
calls = load["calls"] + load.get("errors", 0)
events, total, handler = ["Ir"], None, None
# libc's string copies and fills (memcpy, memmove, memset and their _chk
# forms), leaves whose inclusive figures are their own: valgrind counts each
# byte a `rep movsb` or `rep stosb` moves as an instruction, so echo's
# 297 KB payload, filled then copied, was 600,000 of its 670,000
# "instructions" per call (docs/BENCHMARKS.md, session 28).
string_ops = None
count = r"([\d,]+)\s*(?:\([^)]*\))?\s+"
for line in open(annotate):
    if line.startswith("Events shown:"):
        events = line.split(":", 1)[1].split()
        continue
    m = re.match(r"\s*(?P<figures>(?:" + count + r"){%d})(?P<name>PROGRAM TOTALS|\S.*)" % len(events),
                 line)
    if not m:
        continue
    figures = [int(x.replace(",", "")) for x in re.findall(count, m.group("figures"))]
    name = m.group("name")
    if name == "PROGRAM TOTALS":
        total = figures
    elif re.match(r"\S*/multiarch/mem(?:move|cpy|set)[-\w]*\.S:", name):  # not a "=> " call line
        string_ops = [a + b for a, b in zip(string_ops or [0] * len(figures), figures)]
    elif handler is None and ((f"EstimatorServiceImpl::{method}(" in name and who == "est")
                              or ("EchoService::Echo(" in name and who == "echo")):
        handler = figures
total, handler = total or [0] * len(events), handler or [0] * len(events)
print(f"{who:>5}: {calls} calls, {load['response_bytes']} B replies; instructions per call: "
      f"whole process {total[0] / calls:,.0f}, handler (inclusive) {handler[0] / calls:,.0f}")
string_ops = string_ops or [0] * len(events)
print(f"{'':>5}  of which libc's string copies and fills {string_ops[0] / calls:,.0f} (a byte an "
      f"instruction under rep); the rest {(total[0] - string_ops[0]) / calls:,.0f}")
# With CALLGRIND_EXTRA=--cache-sim=yes: the simulated last-level misses
# (reads, writes) per call, of the whole process and of the handler.
if "DLmr" in events and "DLmw" in events:
    r, w = events.index("DLmr"), events.index("DLmw")
    print(f"{'':>5}  last-level data misses per call (read + write): whole process "
          f"{total[r] / calls:,.0f} + {total[w] / calls:,.0f}, handler "
          f"{handler[r] / calls:,.0f} + {handler[w] / calls:,.0f}")
PY
  done
  exit 0
fi

port[est]=$(start est "$bin" --catalog_address=127.0.0.1:${port[catalog]} \
  --answer_cache_bytes=${ANSWER_CACHE_BYTES:-0})
port[echo]=$(start echo env "GLIBC_TUNABLES=$ECHO_MALLOC" "$b/bench/echo-server")
wait_for_estimator "${port[catalog]}" "${port[est]}"
# Echo replies as many bytes as the estimator (297,040 for the plan).
est_bytes=$("$b/bench/loadgen" --target=127.0.0.1:${port[est]} --method=$M/$method_name \
  "${est_flags[@]}" --concurrency=1 --duration=1s --warmup=0s --json |
  /usr/bin/python3 -c 'import json,sys; print(round(json.load(sys.stdin)["response_bytes_mean"]))')
g=(-g); [[ $mode == dwarf ]] && g=(--call-graph dwarf,16384)
# PERF_EVENT=cpu-clock PERF_FREQ=4999 CONCURRENCY=8: session 19's plan profile
# (cpu-clock counts kernel time in this VM).
event=(); [[ -n ${PERF_EVENT:-} ]] && event=(-e "$PERF_EVENT")
for who in est echo; do
  if [[ $who == est ]]; then
    method=$M/$method_name
    flags=("${est_flags[@]}")
  else
    method=modelatlas.bench.v1.EchoService/Echo; flags=("$(echo_flags "$est_bytes")")
  fi
  "$b/bench/loadgen" --target=127.0.0.1:${port[$who]} --method=$method "${flags[@]}" \
    --concurrency="${CONCURRENCY:-32}" --duration=7s --warmup=500ms --json \
    --server_pid="$(cat "$state/$who.pid")" >"$out/$who-load.json" 2>/dev/null &
  lg=$!
  sleep 1.5
  perf record "${event[@]}" -F "${PERF_FREQ:-1999}" "${g[@]}" -o "$out/$who.perf.data" \
    -p "$(cat "$state/$who.pid")" \
    -- sleep 4 >/dev/null 2>&1 || true
  wait $lg || true
  perf report -i "$out/$who.perf.data" --no-children --sort dso --stdio -g none 2>/dev/null |
    grep -v "^#" | grep -v "^$" | head -16 >"$out/$who-dso.txt" || true
  perf report -i "$out/$who.perf.data" --no-children --sort dso,sym --stdio -g none 2>/dev/null |
    grep -v "^#" | grep -v "^$" | head -80 >"$out/$who-sym.txt" || true
done
