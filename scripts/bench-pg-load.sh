#!/usr/bin/env bash
# Test-only bulk loader for the PostgreSQL read benchmarks (issue 22 point 4):
# copies the records and lookup keys of a SQLite catalog file into an empty
# PostgreSQL catalog with COPY, row for row as the SQLite store wrote them
# (the same serialized payloads, order columns and filter text), so that the
# PostgreSQL read benchmarks run on the very records of a SQLite file, in
# about 40 s at a million (an import of a million generated rows took about
# 70 s on a loaded machine in session 16: docs/BENCHMARKS.md).
# Not a migration tool: the change log is not copied (Watch starts at the
# copied revision), and the file must be of schema 4 or newer with every
# record's columns filled (order_values_pending empty).
#
#   pg_virtualenv -t bash -c 'bash scripts/bench-pg-load.sh FILE && ...'
#   (PG* variables name the database; BENCH_BUILD_DIR: the catalog-service
#   build that creates the schema, default build/)
set -euo pipefail
cd "$(dirname "$0")/.."
db="${1:?usage: bench-pg-load.sh SQLITE_FILE}"
b="${BENCH_BUILD_DIR:-$(pwd)/build}"
pending=$(sqlite3 -readonly "$db" "SELECT COUNT(*) FROM order_values_pending")
[[ $pending == 0 ]] || { echo "$db: $pending records wait for their columns" >&2; exit 1; }

# The schema: catalog-service migrates the empty database (and loads nothing).
state=$(mktemp -d)
source scripts/lib/servers.sh
start schema "$b/catalog-service/catalog-service" --store=postgres --load_shipped_dataset=false \
  >/dev/null
kill -TERM "$(cat "$state/schema.pid")" && rm "$state/schema.pid"
psql -v ON_ERROR_STOP=1 -qc "SELECT COUNT(*) FROM records" >/dev/null

# '\N' marks NULL (an empty text is a value: a model without lists); numbers
# with 17 significant digits, so each double comes back exact.
number() { echo "CASE WHEN $1 IS NULL THEN '\\N' ELSE printf('%.17g', $1) END"; }
text() { echo "CASE WHEN $1 IS NULL THEN '\\N' ELSE $1 END"; }
start_s=$(date +%s)
sqlite3 -readonly -csv "$db" "SELECT kind, id, display_name, '\\x' || hex(payload), revision,
  $(number order_parameters), $(number order_training_compute_flop),
  $(number order_publication_date), $(text order_display_name), $(text filter_text)
  FROM records" |
  psql -v ON_ERROR_STOP=1 -qc "\\copy records (kind, id, display_name, payload, revision,
    order_parameters, order_training_compute_flop, order_publication_date, order_display_name,
    filter_text) FROM STDIN WITH (FORMAT csv, NULL '\\N')"
sqlite3 -readonly -csv "$db" "SELECT kind, key, id FROM lookup_keys" |
  psql -v ON_ERROR_STOP=1 -qc "\\copy lookup_keys (kind, key, id) FROM STDIN WITH (FORMAT csv)"
revision=$(sqlite3 -readonly "$db" "SELECT revision FROM catalog_state")
psql -v ON_ERROR_STOP=1 -qc "UPDATE catalog_state SET revision = $revision" -c "ANALYZE"
echo "loaded $(psql -Atc "SELECT COUNT(*) FROM records") records from $db in $(($(date +%s) - start_s)) s"
rm -rf "$state"
