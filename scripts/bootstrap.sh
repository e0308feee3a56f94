#!/usr/bin/env bash
# Create or refresh the project's virtual environments from the pinned lock files.
#   .venv      the product: Airflow, PySpark, GX, psycopg, the project itself (editable)
#   .venv-dbt  dbt-core + dbt-postgres, run as a subprocess (their pins conflict with Airflow's
#              often enough that one venv is fragile; see STACK.md)
#   .venv-marquez  Marquez's own Python client, which the tests drive against the Marquez read API
# A venv is rebuilt only when its lock files changed (a stamp holds their hash).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

stamp_of() { cat "$@" | sha256sum | cut -c1-16; }

ensure_venv() {
  local dir=$1; shift
  local stamp=$1; shift
  if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ]; then
    return 0
  fi
  echo "bootstrap: installing $dir (pinned; about a minute)"
  rm -rf "$dir"
  "$PY" -m venv "$dir"
  local log="$dir/install.log"
  if ! { "$dir/bin/pip" install -q --upgrade "pip>=24" && "$dir/bin/pip" install -q "$@"; } >"$log" 2>&1; then
    grep -v "is ignored: it is neither" "$log" | tail -40 >&2
    echo "bootstrap: installing $dir failed (full log: $log)" >&2
    exit 1
  fi
  echo "$stamp" > "$dir/.stamp"
}

# The pages' graph libraries (cytoscape + its dagre layout), from the npm registry, pinned by
# the lock file; the plugin serves them from node_modules.
ensure_ui() {
  local ui=plugins/lineage_api/ui
  local ui_stamp
  ui_stamp=$(stamp_of "$ui/package-lock.json")
  if [ "$(cat "$ui/node_modules/.stamp" 2>/dev/null)" != "$ui_stamp" ]; then
    command -v npm >/dev/null || { echo "bootstrap: npm is needed for the pages' graph library (apt-get install npm)" >&2; exit 1; }
    echo "bootstrap: installing the pages' browser libraries (npm ci)"
    (cd "$ui" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    echo "$ui_stamp" > "$ui/node_modules/.stamp"
  fi
}

# All four at once: pip spends most of an install on one core (the product's venv alone takes
# about 75 s on a fresh clone), so the smaller ones and npm fit beside it. Each reports its own
# failure; the script fails if any did.
pids=()
# background jobs of a script ignore Ctrl-C: an interrupted bootstrap stops them too (a pip left
# running would race the next bootstrap's rm -rf of its venv)
trap 'trap - INT TERM; kill -TERM 0 2>/dev/null' INT TERM
ensure_venv .venv "$(stamp_of pyproject.toml requirements/constraints.txt)" \
  -c requirements/constraints.txt -e ".[dev]" & pids+=($!)
ensure_venv .venv-dbt "$(stamp_of requirements/dbt.txt)" -r requirements/dbt.txt & pids+=($!)
ensure_venv .venv-marquez "$(stamp_of requirements/marquez.txt)" -r requirements/marquez.txt & pids+=($!)
ensure_ui & pids+=($!)
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
trap - INT TERM
[ "$failed" -eq 0 ] || exit 1

# The Spark driver JVM's class archive (spark_jobs.jvm_archive): its start and first jobs in
# about half the time; made once per Java runtime and PySpark (about 30 s), then a no-op.
# Not made (no Java yet, ...): sessions start without it, and its test says so.
# LINEAGE_BOOTSTRAP_ARCHIVE=no: the caller makes it (scripts/test.sh, beside ruff and mypy) or needs none.
if [ "${LINEAGE_BOOTSTRAP_ARCHIVE:-yes}" != "no" ]; then
  .venv/bin/python -m spark_jobs.jvm_archive || echo "bootstrap: going on without the JVM class archive" >&2
fi
