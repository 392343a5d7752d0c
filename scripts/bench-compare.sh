#!/usr/bin/env bash
# The same load scenarios on a previous commit's build and on the current
# tree's, interleaved, so that a change that costs a few percent shows
# through this machine's noise (its speed moves within seconds; interleaving
# puts both builds under the same conditions).
#   scripts/bench-compare.sh REF [ROUNDS]   (also: scripts/bench.sh --compare=REF)
# REF is any commit (e.g. HEAD~3, a tag). Each round runs, in turn, for
# EstimateInferenceMemory, GetModel and PlanInference (every accelerator):
# REF's services, the current ones, and the echo server replying as many
# bytes as the current answer; then the streamed fit matrix
# (estimator_grpc_bench) of each build. Reported per scenario: the median over rounds of server CPU
# per call (microseconds, from /proc/PID/stat), calls/s and p99, and the
# ratio current / REF. Nothing is written to docs/: the table goes to stdout
# and to .run/compare/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
ref="${1:?usage: scripts/bench-compare.sh REF [ROUNDS]}"
rounds="${2:-7}"
seconds=2
ref_sha="$(git rev-parse --verify "$ref^{commit}")"
state="$root/.run/compare"
ref_tree="$state/tree-${ref_sha:0:12}"
mkdir -p "$state"
rm -f "$state"/*.json "$state"/*.pid "$state"/*.ports "$state"/*.log "$state"/*.db*

bash scripts/install-deps.sh test
targets=(catalog-service estimator-service modelatlas echo-server loadgen estimator_grpc_bench)
if [[ ! -d "$ref_tree" ]]; then
  git worktree add --detach "$ref_tree" "$ref_sha" >/dev/null
fi
echo "== building $ref (${ref_sha:0:12}) in $ref_tree and the current tree"
(cd "$ref_tree" && bash scripts/build.sh "${targets[@]}")
bash scripts/build.sh "${targets[@]}"

source "$root/scripts/lib/servers.sh"

declare -A port
for side in ref new; do
  b="$root/build"; [[ $side == ref ]] && b="$ref_tree/build"
  port[catalog-$side]=$(start catalog-$side "$b/catalog-service/catalog-service" \
    --sqlite_path="$state/catalog-$side.db")
  port[estimator-$side]=$(start estimator-$side "$b/estimator-service/estimator-service" \
    --catalog_address=127.0.0.1:${port[catalog-$side]})
  for _ in $(seq 1 100); do
    "$b/cli/modelatlas" --catalog=127.0.0.1:${port[catalog-$side]} \
      --estimator=127.0.0.1:${port[estimator-$side]} --timeout=1s \
      estimate memory "GPT-2 (124M)" >/dev/null 2>&1 && break
    sleep 0.2
  done
done
port[echo]=$(start echo "$root/build/bench/echo-server")

# A scenario's request in the current contract, then in older spellings: each
# build takes the first its own loadgen can parse.
estimate_requests=('{"model": "Llama 3.1 8B", "workload": {"context_length_tokens": 8192}}'
                   '{"model": "Llama 3.1 8B", "context_length_tokens": 8192}')
get_requests=('{"name": "models/llama-3-1-8b"}')

load() {  # label, server name, loadgen binary, method, requests...
  local label="$1" server="$2" loadgen="$3" method="$4"; shift 4
  local request before after
  for request in "$@"; do
    before=$(cpu_ticks "$server")
    if "$loadgen" --target=127.0.0.1:${port[$server]} --method="$method" --request="$request" \
        --concurrency=32 --duration=${seconds}s --warmup=500ms --json >"$state/$label.json" \
        2>"$state/$label.err"; then
      after=$(cpu_ticks "$server")
      /usr/bin/python3 - "$state/$label.json" "$before" "$after" "$(getconf CLK_TCK)" <<'PY'
import json, sys
path, before, after, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
r = json.load(open(path))
# Warm-up calls are not counted in r["calls"], their CPU is: a small
# overestimate, the same for both builds.
r["cpu_us_per_call"] = (after - before) / hz * 1e6 / max(1, r["calls"])
json.dump(r, open(path, "w"))
PY
      return 0
    fi
  done
  echo "$label: no request spelling worked (see $state/$label.err)" >&2
}

plan_requests=('{"model": "Llama 3.1 8B"}' '{"workload": {"model": "Llama 3.1 8B"}}')
scenario_method() {
  case "$1" in
    estimate) echo modelatlas.estimator.v1.EstimatorService/EstimateInferenceMemory ;;
    get) echo modelatlas.catalog.v1.CatalogService/GetModel ;;
    plan) echo modelatlas.estimator.v1.EstimatorService/PlanInference ;;
  esac
}
scenario_server() { [[ $1 == get ]] && echo catalog || echo estimator; }

echo "== $rounds rounds of ${seconds}s per scenario"
for round in $(seq 1 "$rounds"); do
  for scenario in estimate get plan; do
    declare -n requests="${scenario}_requests"
    for side in ref new; do
      b="$root/build"; [[ $side == ref ]] && b="$ref_tree/build"
      load "$scenario-$side-$round" "$(scenario_server $scenario)-$side" "$b/bench/loadgen" \
        "$(scenario_method $scenario)" "${requests[@]}"
    done
    unset -n requests
    # The floor for this scenario: the echo server replying as many bytes as
    # the current build's answer.
    bytes=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("response_bytes", 600))' \
      "$state/$scenario-new-$round.json" 2>/dev/null || echo 600)
    load "echo-$scenario-$round" echo "$root/build/bench/loadgen" modelatlas.bench.v1.EchoService/Echo \
      "{\"payload\": \"\", \"response_bytes\": $bytes}"
  done
  for side in ref new; do
    b="$root/build"; [[ $side == ref ]] && b="$ref_tree/build"
    MODELATLAS_BENCH_MODELS=3000 "$b/bench/estimator_grpc_bench" --benchmark_min_time=0.5 \
      --benchmark_format=json >"$state/matrix-$side-$round.json" 2>/dev/null || true
  done
done

/usr/bin/python3 - "$state" "$rounds" "$ref" "${ref_sha:0:12}" "$(git rev-parse --short HEAD)" <<'PY'
import json, sys
state, rounds, ref, ref_sha, head = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
def read(name):
    try:
        return json.load(open(f"{state}/{name}.json"))
    except Exception:
        return None
def median(values):
    values = sorted(v for v in values if v is not None)
    return values[len(values) // 2] if values else None
def field(name, key):
    return [(read(f"{name}-{r}") or {}).get(key) for r in range(1, rounds + 1)]
def matrix(side):
    out = []
    for r in range(1, rounds + 1):
        doc = read(f"matrix-{side}-{r}") or {"benchmarks": []}
        rates = [b["items_per_second"] for b in doc["benchmarks"] if "items_per_second" in b]
        out.append(rates[0] if rates else None)
    return out
lines = [f"# {ref} ({ref_sha}) against the current tree (HEAD {head} plus any uncommitted change)", "",
         f"{rounds} interleaved rounds; medians over rounds. CPU per call is the server's user+system time "
         "over the calls it answered (the steadiest figure on a shared machine).", "",
         "| scenario | figure | echo | REF | current | current / REF |", "|---|---|---:|---:|---:|---:|"]
def fmt(v, unit):
    return "n/a" if v is None else f"{v:,.1f} {unit}" if unit == "us" else f"{v:,.0f}" if unit == "/s" else f"{v/1000:.2f} ms"
for scenario, label in [("estimate", "EstimateInferenceMemory, Llama 3.1 8B at 8192 tokens"),
                        ("get", "GetModel, Llama 3.1 8B"),
                        ("plan", "PlanInference, Llama 3.1 8B on every accelerator")]:
    sizes = [f"{(read(f'{scenario}-{side}-1') or {}).get('response_bytes', 0):,}" for side in ("ref", "new")]
    label = f"{label} (reply bytes: {sizes[0]} REF, {sizes[1]} current; echo sized as current)"
    for key, unit in [("cpu_us_per_call", "us"), ("qps", "/s"), ("p99_us", "ms")]:
        e = median(field(f"echo-{scenario}", key))
        a, b = median(field(f"{scenario}-ref", key)), median(field(f"{scenario}-new", key))
        ratio = f"{b / a:.3f}" if a and b else "n/a"
        lines.append(f"| {label} | {key} | {fmt(e, unit)} | {fmt(a, unit)} | {fmt(b, unit)} | {ratio} |")
a, b = median(matrix("ref")), median(matrix("new"))
lines.append(f"| streamed fit matrix (estimator_grpc_bench, 3,000 models) | estimates/s | | {fmt(a, '/s')} | {fmt(b, '/s')} | "
             f"{(f'{b / a:.3f}' if a and b else 'n/a')} |")
lines.append("")
lines.append("Every round (current / REF, CPU per call of the estimate): " + ", ".join(
    f"{b / a:.2f}" if a and b else "n/a"
    for a, b in zip(field("estimate-ref", "cpu_us_per_call"), field("estimate-new", "cpu_us_per_call"))))
text = "\n".join(lines) + "\n"
open(f"{state}/RESULTS.md", "w").write(text)
print(text)
PY
