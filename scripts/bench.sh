#!/usr/bin/env bash
# Every benchmark in one command, results written as a markdown table with
# the machine's description to docs/BENCHMARK-RESULTS.md (or $OUT):
#   1. the Google Benchmark suites (formulas, fit matrix, filter parsing and
#      evaluation, snapshot lookups, record cache, serialization, catalog
#      reads, import, the streamed fit matrix over gRPC);
#   2. the load benchmarks in one run: the echo baseline and the real
#      services under the same closed-loop load (bench/loadgen), on a
#      catalog of generated models, with the services' resident memory idle
#      and after load, and the estimator snapshot's memory per model.
#   scripts/bench.sh            9 interleaved rounds of 2 s for the compared
#                               scenarios, 5 s for the others, 100,000 models
#   scripts/bench.sh --smoke    1 round, 1 s per scenario, 2,000 models (CI: no thresholds)
#   scripts/bench.sh --compare=REF [ROUNDS]
#                               REF's build against the current one, interleaved
#                               (scripts/bench-compare.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == --compare=* ]]; then
  exec bash scripts/bench-compare.sh "${1#--compare=}" "${@:2}"
fi
root="$(pwd)"
smoke=false
[[ "${1:-}" == --smoke ]] && smoke=true
if $smoke; then
  seconds=1; round_seconds=1; rounds=1; models=2000; min_time=0.01
else
  seconds=5; round_seconds=2; rounds=9; models=100000; min_time=0.5
fi
out="${OUT:-$root/docs/BENCHMARK-RESULTS.md}"
$smoke && out="${OUT:-$root/.run/bench/BENCHMARK-RESULTS.md}"
state="$root/.run/bench"
rm -rf "$state" && mkdir -p "$state"

bash scripts/install-deps.sh test
bash scripts/build.sh catalog-service estimator-service modelatlas echo-server loadgen \
  catalog_bench estimator_bench estimator_grpc_bench import_bench hot_paths_bench
b="$root/build"

echo "== Google Benchmark suites"
"$b/bench/estimator_bench" --benchmark_min_time=$min_time --benchmark_format=json >"$state/estimator_bench.json"
MODELATLAS_BENCH_MODELS=$models "$b/bench/hot_paths_bench" --benchmark_min_time=$min_time \
  --benchmark_format=json >"$state/hot_paths_bench.json"
MODELATLAS_BENCH_MODELS=$models "$b/bench/catalog_bench" --benchmark_min_time=$min_time \
  --benchmark_filter=sqlite --benchmark_format=json >"$state/catalog_bench.json"
# Repeated: the table reports the median (this machine's speed moves).
MODELATLAS_BENCH_MODELS=$((models < 3000 ? models : 3000)) "$b/bench/estimator_grpc_bench" \
  --benchmark_min_time=$min_time --benchmark_repetitions=$rounds \
  --benchmark_format=json >"$state/estimator_grpc_bench.json"
"$b/bench/import_bench" --benchmark_min_time=$min_time --benchmark_filter='Parse|IntoEmpty' \
  --benchmark_format=json >"$state/import_bench.json" || true

echo "== load benchmarks: $models generated models, $rounds rounds of ${round_seconds}s, ${seconds}s per other scenario"
source "$root/scripts/lib/servers.sh"
generate_models_csv "$state/models.csv" "$models"

catalog_port=$(start catalog "$b/catalog-service/catalog-service" --sqlite_path="$state/catalog.db")
estimator_port=$(start estimator "$b/estimator-service/estimator-service" --catalog_address=127.0.0.1:$catalog_port)
echo_port=$(start echo "$b/bench/echo-server")
cli=("$b/cli/modelatlas" --catalog=127.0.0.1:$catalog_port --estimator=127.0.0.1:$estimator_port)
for _ in $(seq 1 100); do "${cli[@]}" --timeout=1s estimate memory "GPT-2 (124M)" >/dev/null 2>&1 && break; sleep 0.2; done
estimator_rss_shipped=$(rss_mib estimator)
estimator_metrics() { curl -s "127.0.0.1:$(grep metrics_port "$state/estimator.ports" | cut -d= -f2)/metrics"; }
# The shipped dataset's models, before the generated ones arrive.
shipped_models=$(estimator_metrics |
  awk '/^modelatlas_estimator_snapshot_records\{kind="model"\}/ {print $2}')
echo "$shipped_models" >"$state/shipped-models"
import_start=$(date +%s%N)
"${cli[@]}" --timeout=600s import "$state/models.csv" >"$state/import.txt"
import_seconds=$(( ($(date +%s%N) - import_start) / 1000000 ))e-3
# The estimator's snapshot follows the catalog through Watch: wait for it.
for _ in $(seq 1 600); do
  estimator_metrics |
    grep -q "^modelatlas_estimator_snapshot_records{kind=\"model\"} $((models + shipped_models))" && break
  sleep 0.2
done
sleep 1
catalog_rss_idle=$(rss_mib catalog)
estimator_rss_idle=$(rss_mib estimator)
echo_rss_idle=$(rss_mib echo)

load() {  # name, port, method, request[, concurrency[, loadgen flags]]; $duration, $warmup
  "$b/bench/loadgen" --target=127.0.0.1:$2 --method="$3" --request="$4" \
    --concurrency="${5:-32}" --duration="${duration:-${seconds}s}" --warmup="${warmup:-1s}" \
    --json ${6:-} \
    >"$state/load-$1.json" || true
  cat "$state/load-$1.json"
}
cache_counts() {  # the catalog's record cache hits and misses so far
  curl -s "127.0.0.1:$(grep metrics_port "$state/catalog.ports" | cut -d= -f2)/metrics" |
    awk '/^modelatlas_catalog_record_cache_(hits|misses)_total/ {printf "%s ", $2}'
}
estimate_request='{"model": "Llama 3.1 8B", "workload": {"context_length_tokens": 8192}}'
# The baseline answers with as many bytes as the estimator does (the same
# message sizes), so the comparison is of the work, not of the payload.
response_bytes=$("$b/bench/loadgen" --target=127.0.0.1:$estimator_port --concurrency=1 \
  --method=modelatlas.estimator.v1.EstimatorService/EstimateInferenceMemory \
  --request="$estimate_request" --duration=200ms --warmup=0s --json |
  /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["response_bytes"])')
echo "$response_bytes" >"$state/response-bytes"
payload=$(printf '%s' "$estimate_request" | base64 -w0)
# The ratios compare scenarios run one after another, and this machine's
# speed moves (other tenants) within seconds: short rounds interleave them,
# each round between two echo runs, its ratios taken against their mean;
# the table reports the median round.
echo_slice() {
  duration=${round_seconds}s warmup=500ms load echo-$1 "$echo_port" \
    modelatlas.bench.v1.EchoService/Echo \
    "{\"payload\": \"$payload\", \"response_bytes\": $response_bytes}"
}
echo_slice 1
for round in $(seq 1 $rounds); do
  duration=${round_seconds}s warmup=500ms load estimate-$round "$estimator_port" \
    modelatlas.estimator.v1.EstimatorService/EstimateInferenceMemory "$estimate_request"
  duration=${round_seconds}s warmup=500ms load get-$round "$catalog_port" \
    modelatlas.catalog.v1.CatalogService/GetModel \
    "{\"name\": \"models/generated-model-$((models / 2))\"}"
  echo_slice $((round + 1))
done
# GetModel over every model at random: what the record cache (32 MiB by
# default, about 60% of these records) leaves to SQLite.
cache_before=$(cache_counts)
load get-any "$catalog_port" modelatlas.catalog.v1.CatalogService/GetModel \
  '{"name": "models/generated-model-{i}"}' 32 --vary=$models
echo "$cache_before $(cache_counts)" >"$state/cache-counts"
catalog_rss_load=$(rss_mib catalog)
load list "$catalog_port" modelatlas.catalog.v1.CatalogService/ListModels \
  '{"filter": "parameters > 1e11 AND domains:\"Vision\"", "page_size": 50}' 4
catalog_rss_after=$(rss_mib catalog)
estimator_rss_after=$(rss_mib estimator)
echo_rss_after=$(rss_mib echo)

# Overload: 4,000 calls in flight, eight times the servers' default
# --max_concurrent_calls (512): they refuse the excess with
# RESOURCE_EXHAUSTED and their memory stays bounded.
load overload-estimate "$estimator_port" modelatlas.estimator.v1.EstimatorService/EstimateInferenceMemory \
  '{"model": "Llama 3.1 8B", "workload": {"context_length_tokens": 8192}}' 4000
estimator_rss_overload=$(rss_mib estimator)
load overload-get "$catalog_port" modelatlas.catalog.v1.CatalogService/GetModel \
  "{\"name\": \"models/generated-model-$((models / 2))\"}" 4000
catalog_rss_overload=$(rss_mib catalog)
echo "$estimator_rss_overload $catalog_rss_overload" >"$state/overload-rss"

/usr/bin/python3 - "$state" "$out" "$models" "$seconds" "$round_seconds" "$rounds" "$import_seconds" \
  "$catalog_rss_idle" "$catalog_rss_load" "$catalog_rss_after" \
  "$estimator_rss_shipped" "$estimator_rss_idle" "$estimator_rss_after" \
  "$echo_rss_idle" "$echo_rss_after" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" <<'PY'
import json, os, platform, subprocess, sys, datetime
(state, out, models, seconds, round_seconds, rounds, import_s, c_idle, c_load, c_after, e_shipped, e_idle, e_after,
 echo_idle, echo_after, commit) = sys.argv[1:]
models, rounds = int(models), int(rounds)
def load(name):
    try:
        return json.load(open(f"{state}/load-{name}.json"))
    except Exception:
        return {"qps": 0, "p50_us": 0, "p99_us": 0, "p999_us": 0, "errors": -1, "calls": 0}
def bench(name):
    try:
        return json.load(open(f"{state}/{name}.json"))["benchmarks"]
    except Exception:
        return []
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
mem = int(next(l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal"))) / 1048576
lines = []
w = lines.append
w("# Benchmark results")
w("")
w(f"Written by `scripts/bench.sh` on {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, commit {commit}.")
w(f"Machine: {os.cpu_count()} cores ({cpu}), {mem:.1f} GiB, {platform.system()} {platform.release()}.")
try:
    response_bytes = int(open(f"{state}/response-bytes").read())
except Exception:
    response_bytes = 0
w(f"Load scenarios: closed loop, 32 calls in flight (4 for the filtered list), over 4 connections; {models:,} generated models in a SQLite catalog. The echo baseline answers with {response_bytes} bytes, the size of the estimator's response. The estimate and GetModel run in {rounds} short round(s) ({round_seconds} s each after 0.5 s of warm-up), each round between two echo runs: a round's ratios are taken against the mean of the echo runs around it, and the median round is reported, as this shared machine's speed moves within seconds. The other scenarios run {seconds} s after 1 s of warm-up.")
w("")
def ratio(a, b):
    return a / b if b else 0
def median(values):
    values = sorted(values)
    return values[len(values) // 2] if values else 0
rounds_of = lambda name, n=rounds: [load(f"{name}-{r}") for r in range(1, n + 1)]
echo_runs, ests, gets = rounds_of("echo", rounds + 1), rounds_of("estimate"), rounds_of("get")
# Each round's baseline: the echo runs before and after it.
echoes = [{k: (a[k] + b[k]) / 2 for k in ("qps", "p99_us")} for a, b in zip(echo_runs, echo_runs[1:])]
est_qps = [ratio(e["qps"], b["qps"]) for e, b in zip(ests, echoes)]
est_p99 = [ratio(e["p99_us"], b["p99_us"]) for e, b in zip(ests, echoes)]
get_qps = [ratio(g["qps"], b["qps"]) for g, b in zip(gets, echoes)]
def median_round(ratios):  # the round whose ratio is the median
    return sorted(range(len(ratios)), key=lambda i: ratios[i])[len(ratios) // 2] if ratios else 0
def per_round(ratios, fmt):
    return ", ".join(fmt(r) for r in ratios)
lst = load("list")
w("## Targets")
w("")
w("| target | measured (median round) | every round | met |")
w("|---|---|---|---|")
i = median_round(est_qps); r_qps = median(est_qps)
w(f"| estimator memory estimate >= 85% of echo QPS | {ests[i]['qps']:.0f} / {echoes[i]['qps']:.0f} calls/s = {100*r_qps:.0f}% | {per_round(est_qps, lambda r: f'{100*r:.0f}%')} | {'yes' if r_qps >= 0.85 else 'no'} |")
i = median_round(est_p99); r_p99 = median(est_p99)
w(f"| estimator p99 <= 1.25 x echo p99 | {ests[i]['p99_us']/1000:.2f} / {echoes[i]['p99_us']/1000:.2f} ms = {r_p99:.2f}x | {per_round(est_p99, lambda r: f'{r:.2f}x')} | {'yes' if 0 < r_p99 <= 1.25 else 'no'} |")
i = median_round(get_qps); r_get = median(get_qps)
w(f"| catalog GetModel ({models:,} models) >= 70% of echo QPS | {gets[i]['qps']:.0f} / {echoes[i]['qps']:.0f} = {100*r_get:.0f}% | {per_round(get_qps, lambda r: f'{100*r:.0f}%')} | {'yes' if r_get >= 0.7 else 'no'} |")
w(f"| filtered ListModels over {models:,} models: p99 < 20 ms | {lst['p99_us']/1000:.1f} ms | | {'yes' if 0 < lst['p99_us'] < 20000 else 'no'} |")
streamed = [b["items_per_second"] for b in bench("estimator_grpc_bench")
            if "items_per_second" in b and b.get("run_type", "iteration") == "iteration"]
fit = median(streamed)
w(f"| streamed fit matrix > 1,000,000 estimates/s | {fit:,.0f} estimates/s (median of {len(streamed)} runs) | {', '.join(f'{x:,.0f}' for x in streamed)} | {'yes' if fit > 1e6 else 'no'} |")
w(f"| catalog-service < 150 MiB resident under load | {c_load} MiB (idle {c_idle}, after all load {c_after}) | | {'yes' if max(float(c_load), float(c_after)) < 150 else 'no'} |")
per_model = (float(e_idle) - float(e_shipped)) * 1048576 / models if models else 0
try:
    shipped = int(float(open(f"{state}/shipped-models").read()))
except Exception:
    shipped = 0
w(f"| estimator snapshot < 4 KiB per model | {per_model/1024:.2f} KiB ({e_shipped} MiB with the {shipped:,} shipped models, {e_idle} MiB with {models:,} more) | | {'yes' if 0 < per_model < 4096 else 'no'} |")
w("")
w("Where a target is not met, its profile and what limits it: docs/BENCHMARKS.md, \"Services under load against an echo baseline\" and \"The streamed fit matrix over gRPC\".")
w("")
w("## Load scenarios")
w("")
w("| scenario | round | calls/s | p50 | p90 | p99 | p99.9 | errors |")
w("|---|---:|---:|---:|---:|---:|---:|---:|")
def row(label, round_label, r):
    w(f"| {label} | {round_label} | {r['qps']:.0f} | {r.get('p50_us',0)/1000:.2f} ms | {r.get('p90_us',0)/1000:.2f} ms | {r['p99_us']/1000:.2f} ms | {r['p999_us']/1000:.2f} ms | {r['errors']} |")
for r in range(rounds + 1):
    label = "before 1" if r == 0 else f"after {r}" if r == rounds else f"{r} / {r + 1}"
    row("echo baseline", label, echo_runs[r])
    if r < rounds:
        row("EstimateInferenceMemory, Llama 3.1 8B", r + 1, ests[r])
        row("GetModel, one model by name", r + 1, gets[r])
row(f"GetModel, any of the {models:,} models at random", "", load("get-any"))
row("ListModels, filtered, page of 50", "", lst)
w("")
try:
    h0, m0, h1, m1 = (float(x) for x in open(f"{state}/cache-counts").read().split())
    hit = ratio(h1 - h0, (h1 - h0) + (m1 - m0))
    w(f"The catalog's record cache (`--record_cache_bytes`, 32 MiB) answered {100*hit:.0f}% of the reads of models at random; every read of the one model after the first.")
except Exception:
    w("The catalog's record cache counts were not read.")
w("")
w("## Overload")
w("")
w("4,000 calls in flight against each server (eight times the default `--max_concurrent_calls` of 512), closed loop: the excess is refused with RESOURCE_EXHAUSTED, and resident memory stays bounded.")
w("")
w("| scenario | calls/s answered | by code | p99 | resident memory after |")
w("|---|---:|---|---:|---:|")
try:
    e_over, c_over = open(f"{state}/overload-rss").read().split()
except Exception:
    e_over, c_over = "?", "?"
for name, label, rss in [("overload-estimate", "EstimateInferenceMemory", e_over), ("overload-get", "GetModel", c_over)]:
    r = load(name)
    codes = ", ".join(f"{k} {v:,}" for k, v in r.get("codes", {}).items())
    w(f"| {label} | {r['qps']:.0f} | {codes} | {r['p99_us']/1000:.1f} ms | {rss} MiB |")
w("")
w(f"Resident memory (MiB): catalog {c_idle} idle, {c_load} after GetModel load, {c_after} at the end; estimator {e_idle} idle, {e_after} at the end; echo {echo_idle} idle, {echo_after} at the end. Import of the {models:,} generated rows through the CLI: {float(import_s):.1f} s.")
w("")
w("## Google Benchmark suites")
w("")
w("| benchmark | time | CPU | items/s |")
w("|---|---:|---:|---:|")
for suite in ["estimator_bench", "hot_paths_bench", "catalog_bench", "estimator_grpc_bench", "import_bench"]:
    for b in bench(suite):
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        unit = b.get("time_unit", "ns")
        ips = f"{b['items_per_second']:,.0f}" if "items_per_second" in b else ""
        w(f"| {b['name']} | {b['real_time']:.3g} {unit} | {b['cpu_time']:.3g} {unit} | {ips} |")
os.makedirs(os.path.dirname(out), exist_ok=True)
open(out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
print(f"\nwritten to {out}")
PY
