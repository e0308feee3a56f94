#!/usr/bin/env bash
# `make test`: install what is needed, then ruff, mypy and the whole pytest suite.
# `make test-fast` (--fast): ruff, the import contracts, warm mypy and the unit tier only
# (`-m unit`: no PostgreSQL, Spark or Airflow is started), in under 30 s.
# The suite starts its own PostgreSQL cluster (free port, under .local/tests) on first use, a
# Spark session and an Airflow home, so it never touches the demo's state.
set -euo pipefail
cd "$(dirname "$0")/.."
# background jobs of a script ignore Ctrl-C: an interrupted run stops them too (apt, the archive,
# the install tier)
trap 'trap - INT TERM; kill -TERM 0 2>/dev/null' INT TERM
fast=false
services=false
if [ "${1:-}" = "--fast" ]; then fast=true; shift; fi
if [ "${1:-}" = "--services" ]; then services=true; shift; set -- -m "not e2e and not install" tests "$@"; fi
# Python keeps the project's compiled modules (__pycache__, git-ignored). An environment that
# turns that off (PYTHONDONTWRITEBYTECODE, which some CI images set) makes every pytest worker and
# every airflow, dbt and api-server process of the suite compile them again: a collection of the
# suite took 13.7 s instead of 6.5 s.
unset PYTHONDONTWRITEBYTECODE
mkdir -p .local
# Debian's Chromium and PgBouncer (apt-get, on a machine without them) install beside the venvs
system_pid=
if ! $fast && ! $services; then
  { scripts/browser.sh && scripts/pgbouncer.sh; } >.local/system-packages.log 2>&1 & system_pid=$!
fi
LINEAGE_BOOTSTRAP_ARCHIVE=no scripts/bootstrap.sh
# the Spark driver's class archive (spark_jobs.jvm_archive; about 30 s once, then a no-op) is
# made beside ruff and mypy; the unit tier starts no JVM and needs none
archive_pid=
if ! $fast; then
  .venv/bin/python -m spark_jobs.jvm_archive >.local/jvm-archive.log 2>&1 & archive_pid=$!
  # the project's modules compiled once, before the workers and their subprocesses import them
  .venv/bin/python -m compileall -q -j 1 lineage warehouse spark_jobs dags plugins/lineage_api harness tests \
    >.local/compileall.log 2>&1 &
fi
if [ -n "$system_pid" ]; then
  wait "$system_pid" || { cat .local/system-packages.log >&2; exit 1; }
  cat .local/system-packages.log
fi
export DBT_SEND_ANONYMOUS_USAGE_STATS=False GX_ANALYTICS_ENABLED=false
echo "==> ruff"; .venv/bin/ruff check .
echo "==> import contracts (lint-imports: the layers in pyproject.toml)"
PYTHONPATH=.:plugins .venv/bin/lint-imports >.local/lint-imports.log 2>&1 || { cat .local/lint-imports.log; exit 1; }
grep -E "^Contracts:" .local/lint-imports.log
if $fast; then
  # mypy (warm: its cache in .mypy_cache) on the other core while the unit tier runs
  .venv/bin/mypy >.local/mypy-fast.log 2>&1 & mypy_pid=$!
  echo "==> pytest (unit tier), mypy beside it"
  set +e; .venv/bin/pytest -m unit tests/unit -W error "$@"; status=$?; set -e  # warnings are errors here
  if ! wait "$mypy_pid"; then cat .local/mypy-fast.log; exit 1; fi
  echo "==> mypy: $(tail -1 .local/mypy-fast.log)"
  if [ "$status" -eq 5 ]; then echo "pytest collected no tests (unit tier)" >&2; exit 1; fi
  exit "$status"
else
  echo "==> mypy (every package)"; .venv/bin/mypy
  wait "$archive_pid" || echo "going on without the JVM class archive: $(tail -1 .local/jvm-archive.log)" >&2
  echo "==> $(tail -1 .local/jvm-archive.log)"
  echo "==> pytest"
  set -- --durations=15 "$@"  # the slowest tests, to keep the suite inside CI's budget
fi

# pytest's exit code, with 5 (no tests collected) as a failure
checked() { local status=$1; if [ "$status" -eq 5 ]; then echo "pytest collected no tests ($2)" >&2; return 1; fi; return "$status"; }

if [ $# -gt 1 ]; then  # tests chosen by the caller: one session
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
# The rest runs in one pytest-xdist worker per core (at most 4; LINEAGE_TEST_WORKERS to choose):
# each worker is a session with its own cluster, Spark and Airflow home, and takes whole files
# (--dist loadfile), so a module's world is seeded once; the end-to-end files, the longest, first
# (tests/conftest.py orders them; --no-loadscope-reorder keeps that order). Much of the suite waits on subprocesses
# (dbt, airflow, a JVM), so two workers overlap one's waiting with the other's work.
workers=${LINEAGE_TEST_WORKERS:-$(nproc)}
[ "$workers" -le 4 ] || workers=4
set +e
.venv/bin/pytest -m "not install" -n "$workers" --dist loadfile --no-loadscope-reorder "$@"; status=$?
wait "$install_pid"; install_status=$?
set -e
echo "==> pytest, the install tier (run beside the rest; its log: $install_log)"
if [ "$install_status" -eq 0 ]; then tail -n 25 "$install_log"; else cat "$install_log"; fi
checked "$status" "the suite" && checked "$install_status" "the install tier"
