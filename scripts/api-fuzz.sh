#!/usr/bin/env bash
# Fuzzes `mancaladb serve` against its own OpenAPI document
# (GET /api/openapi.json) with Schemathesis: starts the server on DB
# (default db, levels 0..16 as the README's first command builds them),
# runs every check Schemathesis has on EXAMPLES generated cases per
# operation (default 2000; SEED fixes them, default 1), and stops the
# server. Exit status: Schemathesis' (0 when no check failed).
#
# Schemathesis comes from PyPI into VENV (default /tmp/venv-api-fuzz),
# pinned. Not run by CI: the server's tests already check every answer
# they receive against the document (tests/it/openapi.rs).
#
# Two of Schemathesis' expectations do not fit this API, and are set
# below with the reason:
# * positive_data_acceptance (off): the document cannot say every rule of
#   valid input (at most 48 seeds on a board in all, an Omweso start pit
#   that holds 2 seeds or more), so boards that match the schema's types
#   are rightly refused with a 400;
# * negative_data_rejection takes 413 as a refusal too: a body over 1 MiB
#   is refused by its size before it is read.
#
# A relative DB or VENV is taken from the directory the script is run from.
set -euo pipefail
# Before the cd below (and the one into OUT, from where Schemathesis runs):
# DB=../x and VENV=venv name the caller's directories.
[[ -z ${DB:-} || $DB == /* ]] || DB=$PWD/${DB#./}
[[ -z ${VENV:-} || $VENV == /* ]] || VENV=$PWD/${VENV#./}
cd "$(dirname "$0")/.."
DB=${DB:-db}
VENV=${VENV:-/tmp/venv-api-fuzz}
[[ -e $DB/awari-16.mdb ]] ||
  { echo "api-fuzz.sh: no level 16 in $DB (mancaladb build --max-seeds 16 --db $DB)" >&2; exit 2; }
[[ -x $VENV/bin/schemathesis ]] || {
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet 'schemathesis==4.32.5'
}
cargo build --release --quiet --bin mancaladb
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
TARGET=${CARGO_TARGET_DIR:-target}
source scripts/start-server.sh
start_server api-fuzz.sh "$TARGET/release/mancaladb" "$DB" "$OUT"
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$OUT"' EXIT
cat > "$OUT/schemathesis.toml" <<'EOF'
[checks.negative_data_rejection]
expected-statuses = ["400", "404", "405", "413"]
EOF
echo "# schemathesis against ${URL}api/openapi.json, DB $DB, $(date -u +%FT%TZ)"
# In OUT, where it keeps its example database (.schemathesis/).
cd "$OUT"
"$VENV/bin/schemathesis" --config-file schemathesis.toml run "${URL}api/openapi.json" \
  --checks all --exclude-checks positive_data_acceptance --max-examples "${EXAMPLES:-2000}" --seed "${SEED:-1}" --workers 1
