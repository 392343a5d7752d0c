#!/usr/bin/env bash
# Filtered, ordered ListModels pages of two catalog-service builds on the
# same SQLite catalog, in interleaved rounds (before, after, before, ...),
# for a before/after figure on this noisy machine (issue 22 point 4):
#
#   scripts/bench-lists.sh --db=FILE --before=BUILD_DIR [--after=BUILD_DIR]
#                          [--after_db=FILE] [--rounds=R] [--seconds=S]
#
# FILE is a catalog database (e.g. the one scripts/bench-million.sh leaves in
# .run/bench-million/sqlite/catalog.db, written by the older build); each
# build gets a copy of its own (a newer build migrates its copy, which the
# older one could no longer open). The newer build's first ordered page
# fills the columns a migration added: its time is printed. --after_db: the
# newer build's copy comes from this file instead (one it already migrated
# and filled, to skip that step). Per round and
# request: calls/s, p50, p99 and server CPU per call (from /proc/PID/stat),
# 4 calls in flight. Results: .run/bench-lists/results.md and stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
db="" after_db="" before="" after="$root/build" rounds=3 seconds=6
for arg in "$@"; do
  case "$arg" in
    --db=*) db="${arg#--db=}" ;;
    --after_db=*) after_db="${arg#--after_db=}" ;;
    --before=*) before="${arg#--before=}" ;;
    --after=*) after="${arg#--after=}" ;;
    --rounds=*) rounds="${arg#--rounds=}" ;;
    --seconds=*) seconds="${arg#--seconds=}" ;;
    *) echo "unknown argument $arg" >&2; exit 2 ;;
  esac
done
[[ -f "$db" && -d "$before" ]] || { echo "usage: --db=FILE --before=BUILD_DIR" >&2; exit 2; }
state="$root/.run/bench-lists"
rm -rf "$state" && mkdir -p "$state"
source "$root/scripts/lib/servers.sh"

for side in before after; do
  source_db="$db"
  [[ $side == after && -n "$after_db" ]] && source_db="$after_db"
  cp "$source_db" "$state/$side.db"
  if [[ -f "$source_db-wal" ]]; then cp "$source_db-wal" "$state/$side.db-wal"; fi
done
before_port=$(start before "$before/catalog-service/catalog-service" --sqlite_path="$state/before.db")
after_port=$(start after "$after/catalog-service/catalog-service" --sqlite_path="$state/after.db")
loadgen="$after/bench/loadgen"
method=modelatlas.catalog.v1.CatalogService/ListModels

# One call each: the newer build's first ordered page fills its new columns.
first_page() {  # side port
  local t0; t0=$(date +%s%N)
  "$loadgen" --target=127.0.0.1:$2 --method=$method \
    --request='{"order_by": "parameters desc", "filter": "domains:\"Vision\"", "page_size": 1}' \
    --concurrency=1 --duration=1s --warmup=0s --deadline=1800s --json >"$state/first-$1.json" \
    2>&1 || true
  /usr/bin/python3 -c "print(f'$1: first ordered page after start {($(date +%s%N) - $t0) / 1e9:.1f} s')"
}
first_page before "$before_port" | tee "$state/first.txt"
first_page after "$after_port" | tee -a "$state/first.txt"

lists=("${million_list_requests[@]}")
printf '%s\n' "${lists[@]}" >"$state/lists.txt"
for round in $(seq 1 "$rounds"); do
  for entry in "${lists[@]}"; do
    for side in before after; do
      port=$before_port; [[ $side == after ]] && port=$after_port
      label="${entry%%|*}-$side-$round"
      t0=$(cpu_ticks $side)
      "$loadgen" --target=127.0.0.1:$port --method=$method --request="${entry#*|}" \
        --concurrency=4 --duration="${seconds}s" --warmup=0s --json >"$state/$label.json" \
        2>"$state/$label.err" || true
      t1=$(cpu_ticks $side)
      echo "$label $t0 $t1" >>"$state/ticks.txt"
    done
  done
done

/usr/bin/python3 - "$state" "$rounds" "$(getconf CLK_TCK)" "$(git rev-parse --short HEAD)" <<'PY'
import datetime, json, sys
state, rounds, hz, commit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
ticks = {l.split()[0]: (int(l.split()[1]), int(l.split()[2])) for l in open(f"{state}/ticks.txt")}
out = [f"### ListModels pages, before/after on one catalog ({datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, after = {commit}, load average {open('/proc/loadavg').read().split()[0]})", ""]
out += [open(f"{state}/first.txt").read().strip().replace("\n", "; "), ""]
out += ["| request | round | build | calls/s | p50 | p99 | server CPU/call | errors |", "|---|---:|---|---:|---:|---:|---:|---:|"]
for entry in open(f"{state}/lists.txt").read().splitlines():
    name, request = entry.split("|", 1)
    for r in range(1, rounds + 1):
        for side in ("before", "after"):
            label = f"{name}-{side}-{r}"
            try:
                j = json.load(open(f"{state}/{label}.json"))
            except Exception:
                j = {"qps": 0, "p50_us": 0, "p99_us": 0, "errors": -1, "calls": 0}
            t0, t1 = ticks[label]
            cpu = (t1 - t0) / hz * 1e6 / max(1, j.get("calls", 0))
            out.append(f"| `{request}` | {r} | {side} | {j['qps']:,.0f} | {j['p50_us']/1000:.2f} ms | {j['p99_us']/1000:.2f} ms | {cpu:,.0f} us | {j['errors']} |")
text = "\n".join(out) + "\n"
open(f"{state}/results.md", "w").write(text)
print(text)
PY
