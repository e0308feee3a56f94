#!/usr/bin/env bash
# `make demo`: set up the embedded default and run the main job once, end to end.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
started=$(date -u +%Y-%m-%dT%H:%M:%S+00:00)
step() { printf '\n==> %s\n' "$*"; }

step "1/6 virtual environments (pinned)"; scripts/bootstrap.sh
step "2/6 PostgreSQL"; scripts/pg.sh start
step "3/6 warehouse migrations, and the examples' namespace"; .venv/bin/python -m warehouse.migrate
.venv/bin/python -m warehouse.namespace_store create myns --description "the user profiles example of the Field Level Lineage design"
step "4/6 Airflow home"; scripts/airflow_setup.sh
step "5/6 example PySpark pipelines (user profiles of the Field Level Lineage design, PurchaseHistory of the Metadata and Data Discovery design)"
.venv/bin/python -m spark_jobs.examples --runs "${DEMO_RUNS:-3}" 2> "$LINEAGE_HOME/examples.log" \
  || { tail -30 "$LINEAGE_HOME/examples.log"; exit 1; }
step "6/6 compaction DAG through Airflow (airflow dags test lineage_compaction)"
log=$LINEAGE_HOME/demo-dag.log
if ! .venv/bin/airflow dags test lineage_compaction "$(date -u +%Y-%m-%dT%H:%M:%S+00:00)" >"$log" 2>&1 \
   || ! grep -q "state=success" "$log"; then
  grep -E "ERROR|Error|Exception" "$log" | tail -20; echo "demo: the DAG run failed; full log: $log" >&2; exit 1
fi
grep -o "SUMMARY .*dbt_nodes_passed=[0-9]*" "$log" | tail -1 || true

printf '\n==> Summary\n'
.venv/bin/python -m warehouse.report --since "$started"
cat <<MSG
DAG log:   $log
Open the UI: make up   (http://localhost:$AIRFLOW__API__PORT, admin / admin, Browse > Lineage)
Stop all:  make down   (PostgreSQL stays up until then)
MSG
