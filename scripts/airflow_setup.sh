#!/usr/bin/env bash
# Prepare the project-local Airflow home: metadata DB (in the local PostgreSQL unless
# overridden), the admin user's password, and the `lineage_warehouse` connection.
# Idempotent: a second run changes nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
AIRFLOW=.venv/bin/airflow
mkdir -p "$AIRFLOW_HOME"
passwords=$AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE
if [ ! -s "$passwords" ]; then
  # admin:admin for the local UI; set AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE to your own file elsewhere.
  echo '{"admin": "admin"}' > "$passwords"
fi
"$AIRFLOW" db migrate >"$AIRFLOW_HOME/db-migrate.log" 2>&1 || { tail -30 "$AIRFLOW_HOME/db-migrate.log"; exit 1; }
echo "airflow: metadata database ready ($AIRFLOW_HOME)"
warehouse=$(.venv/bin/python -c "from lineage.settings import Settings, libpq_url; print(libpq_url(Settings.from_env().database_url))")
current=$("$AIRFLOW" connections get lineage_warehouse -o json 2>/dev/null \
  | .venv/bin/python -c "import json,sys; print(json.load(sys.stdin)[0]['get_uri'])" 2>/dev/null || true)
current=${current/#postgres:\/\//postgresql://}
if [ "$current" = "$warehouse" ]; then
  echo "airflow: connection lineage_warehouse exists"
else
  if [ -n "$current" ]; then "$AIRFLOW" connections delete lineage_warehouse >/dev/null; fi
  "$AIRFLOW" connections add lineage_warehouse --conn-uri "$warehouse" >/dev/null
  action=created; [ -n "$current" ] && action=updated
  shown=$(.venv/bin/python -c "import sys; from lineage.settings import redact_url; print(redact_url(sys.argv[1]))" "$warehouse")
  echo "airflow: connection lineage_warehouse $action ($shown)"
fi
