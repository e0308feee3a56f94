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
if "$AIRFLOW" connections get lineage_warehouse >/dev/null 2>&1; then
  echo "airflow: connection lineage_warehouse exists"
else
  "$AIRFLOW" connections add lineage_warehouse --conn-uri "$warehouse" >/dev/null
  echo "airflow: created connection lineage_warehouse"
fi
