#!/usr/bin/env bash
# Builds ModelAtlas and starts catalog-service, estimator-service and the web
# front (modelatlas-web) in the background on their default ports, on the
# embedded SQLite store with the shipped dataset. Installs missing Debian
# packages first.
#   scripts/run.sh          build, (re)start all three, wait until they answer
#   scripts/run.sh stop     stop them
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
state="$root/.run"
mkdir -p "$state"

stop() {
  for name in web estimator catalog; do
    if [[ -f "$state/$name.pid" ]]; then
      pid="$(cat "$state/$name.pid")"
      if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      fi
      rm -f "$state/$name.pid"
    fi
  done
}

if [[ "${1:-}" == stop ]]; then
  stop
  echo "stopped"
  exit 0
fi

bash scripts/install-deps.sh build
bash scripts/build.sh catalog-service estimator-service modelatlas modelatlas-web
stop

cli="$root/build/cli/modelatlas"
nohup "$root/build/catalog-service/catalog-service" \
  --sqlite_path="$state/catalog.db" >>"$state/catalog.log" 2>&1 &
echo $! >"$state/catalog.pid"
nohup "$root/build/estimator-service/estimator-service" \
  --catalog_address=localhost:50051 >>"$state/estimator.log" 2>&1 &
echo $! >"$state/estimator.pid"
nohup "$root/build/web/modelatlas-web" --catalog_address=localhost:50051 \
  --estimator_address=localhost:50052 >>"$state/web.log" 2>&1 &
echo $! >"$state/web.pid"

# Ready when the estimator answers an estimate that goes through the catalog.
for _ in $(seq 1 100); do
  if "$cli" --timeout=1s estimate memory "GPT-2 (124M)" >/dev/null 2>&1 &&
    curl -fsS http://localhost:8080/readyz >/dev/null 2>&1; then
    cat <<MSG

ModelAtlas is running:
  catalog-service    gRPC localhost:50051   metrics http://localhost:9464/metrics
  estimator-service  gRPC localhost:50052   metrics http://localhost:9465/metrics
  modelatlas-web     http://localhost:8080/  metrics http://localhost:9466/metrics
  data               $state/catalog.db (SQLite)   logs $state/*.log

Open http://localhost:8080/models/llama-3-1-8b (a model), http://localhost:8080/hardware/nvidia-h100-sxm5-80gb
(a card), or the JSON API: curl http://localhost:8080/v1/models/megatron-bert

Try:
  $cli models list
  $cli models get "megatron bert"
  $cli hardware list
  $cli estimate memory "Llama 3.1 8B" --context=8192
  $cli estimate memory "Mistral 7B" --weights=int4 --context=32768 --batch=4

Stop with: bash scripts/run.sh stop
MSG
    exit 0
  fi
  sleep 0.2
done
echo "ModelAtlas did not become ready; see $state/catalog.log, $state/estimator.log and $state/web.log" >&2
tail -n 20 "$state/catalog.log" "$state/estimator.log" "$state/web.log" >&2 || true
exit 1
