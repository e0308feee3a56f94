#!/usr/bin/env bash
# `make test`: install what is needed, then ruff, mypy and the whole pytest suite.
# The suite starts its own PostgreSQL cluster (free port, under .local/tests), Spark session
# and Airflow home, so it never touches the demo's state.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
scripts/browser.sh
export DBT_SEND_ANONYMOUS_USAGE_STATS=False GX_ANALYTICS_ENABLED=false
echo "==> ruff"; .venv/bin/ruff check .
echo "==> mypy (core)"; .venv/bin/mypy
echo "==> pytest"
set +e
.venv/bin/pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi
exit "$status"
