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

# pytest's exit code, with 5 (no tests collected) as a failure
checked() { local status=$1; if [ "$status" -eq 5 ]; then echo "pytest collected no tests ($2)" >&2; return 1; fi; return "$status"; }

if $fast || [ $# -gt 1 ]; then  # the unit tier, or tests chosen by the caller: one session
  set +e; .venv/bin/pytest "$@"; status=$?; set -e
  checked "$status" "pytest $*"; exit $?
fi

# The whole suite: the install tier (a fresh venv, a real scheduler: minutes of waiting on pip
# and the scheduler, little CPU) runs in a session of its own beside the rest, so its waiting
# overlaps the other tiers' work. Each session has its own PostgreSQL cluster and Airflow home.
mkdir -p .local/tests
install_log=.local/tests/install-tier.log
.venv/bin/pytest -m install tests/install -q -p no:cacheprovider >"$install_log" 2>&1 &
install_pid=$!
set +e
.venv/bin/pytest -m "not install" "$@"; status=$?
wait "$install_pid"; install_status=$?
set -e
echo "==> pytest, the install tier (run beside the rest; its log: $install_log)"
if [ "$install_status" -eq 0 ]; then tail -n 25 "$install_log"; else cat "$install_log"; fi
checked "$status" "the suite" && checked "$install_status" "the install tier"
