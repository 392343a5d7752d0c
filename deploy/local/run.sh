#!/usr/bin/env bash
# A local multi-process ModelAtlas: one catalog (SQLite), two estimator
# replicas that clients balance over, and Prometheus scraping all three
# with the project's rules. Ports stay clear of scripts/run.sh's.
#   deploy/local/run.sh          (re)start everything, wait until it answers; builds
#                                and installs only what is missing
#   deploy/local/run.sh --build  rebuild the binaries first (after a change)
#   deploy/local/run.sh stop     stop everything
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$(pwd)"
state="$root/.run/local"
mkdir -p "$state"
names=(prometheus estimator-b estimator-a catalog)

stop() {
  for name in "${names[@]}"; do
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

binaries=(build/catalog-service/catalog-service build/estimator-service/estimator-service
          build/cli/modelatlas)
missing=0
for binary in "${binaries[@]}"; do [[ -x "$binary" ]] || missing=1; done
command -v prometheus >/dev/null || missing=1
if [[ "${1:-}" == --build || "$missing" == 1 ]]; then
  bash scripts/install-deps.sh test
  bash scripts/build.sh catalog-service estimator-service modelatlas
fi
stop

start() {  # name, then the command
  local name="$1"
  shift
  nohup "$@" >>"$state/$name.log" 2>&1 &
  echo $! >"$state/$name.pid"
}
start catalog "$root/build/catalog-service/catalog-service" --sqlite_path="$state/catalog.db" \
  --grpc_address=127.0.0.1:51051 --metrics_address=127.0.0.1:9564
for replica in a:51052:9565 b:51062:9566; do
  IFS=: read -r letter grpc metrics <<<"$replica"
  start "estimator-$letter" "$root/build/estimator-service/estimator-service" \
    --catalog_address=127.0.0.1:51051 --grpc_address="127.0.0.1:$grpc" \
    --metrics_address="127.0.0.1:$metrics"
done
sed -e "s#rules/#$root/deploy/prometheus/rules/#" \
    -e 's#"127.0.0.1:9464"#"127.0.0.1:9564"#' \
    -e 's#\["127.0.0.1:9465"\]#["127.0.0.1:9565", "127.0.0.1:9566"]#' \
    "$root/deploy/prometheus/prometheus.yml" >"$state/prometheus.yml"
start prometheus prometheus --config.file="$state/prometheus.yml" \
  --storage.tsdb.path="$state/prometheus-data" --web.listen-address=127.0.0.1:9590

cli=("$root/build/cli/modelatlas" --catalog=127.0.0.1:51051 --estimator=127.0.0.1:51052,127.0.0.1:51062)
for _ in $(seq 1 150); do
  if "${cli[@]}" --timeout=1s estimate memory "GPT-2 (124M)" >/dev/null 2>&1; then
    cat <<MSG

ModelAtlas (local, multi-process) is running:
  catalog-service      gRPC 127.0.0.1:51051   metrics http://127.0.0.1:9564/metrics
  estimator-service a  gRPC 127.0.0.1:51052   metrics http://127.0.0.1:9565/metrics
  estimator-service b  gRPC 127.0.0.1:51062   metrics http://127.0.0.1:9566/metrics
  Prometheus           http://127.0.0.1:9590  (rules from deploy/prometheus/rules)
  state and logs       $state

Clients balance over both estimators when given both addresses:
  ${cli[*]} estimate memory "Llama 3.1 8B" --context=8192
  ${cli[*]} plan training "Llama 3.1 8B" --hardware="NVIDIA H100"

Stop with: bash deploy/local/run.sh stop
MSG
    exit 0
  fi
  sleep 0.2
done
echo "not ready; see $state/*.log" >&2
exit 1
