#!/usr/bin/env bash
# `make test`: install what is needed, then ruff, mypy and the whole pytest suite.
# `make test-fast` (--fast): ruff and the unit tier only (`-m unit`: no PostgreSQL, Spark or
# Airflow is started), in seconds.
# The suite starts its own PostgreSQL cluster (free port, under .local/tests) on first use, a
# Spark session and an Airflow home, so it never touches the demo's state.
set -euo pipefail
cd "$(dirname "$0")/.."
fast=false
if [ "${1:-}" = "--fast" ]; then fast=true; shift; fi
scripts/bootstrap.sh
$fast || scripts/browser.sh
$fast || scripts/pgbouncer.sh
export DBT_SEND_ANONYMOUS_USAGE_STATS=False GX_ANALYTICS_ENABLED=false
echo "==> ruff"; .venv/bin/ruff check .
if $fast; then
  echo "==> pytest (unit tier)"
  set -- -m unit tests/unit "$@"
else
  echo "==> mypy (every package)"; .venv/bin/mypy
  echo "==> pytest"
  set -- --durations=15 "$@"  # the slowest tests, to keep the suite inside CI's budget
fi
set +e
.venv/bin/pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi
exit "$status"
