#!/usr/bin/env bash
# `make demo`: set up the embedded default and run the main job once, end to end.
set -euo pipefail
cd "$(dirname "$0")/.."
# Airflow's own lineage (its OpenLineage provider) and dbt-ol's lineage of the marts, written
# through the in-process transport into this warehouse's raw log (export =false to leave out).
export LINEAGE_AIRFLOW_OPENLINEAGE=${LINEAGE_AIRFLOW_OPENLINEAGE:-true}
export LINEAGE_DBT_OPENLINEAGE=${LINEAGE_DBT_OPENLINEAGE:-true}
source scripts/env.sh
started=$(date -u +%Y-%m-%dT%H:%M:%S+00:00)
step() { printf '\n==> %s\n' "$*"; }
# `airflow dags test DAG` now, its log in $LINEAGE_HOME/demo-<name>.log; stops the demo on failure.
dags_test() {
  local log=$LINEAGE_HOME/demo-$2.log
  if ! .venv/bin/airflow dags test "$1" "$(date -u +%Y-%m-%dT%H:%M:%S+00:00)" >"$log" 2>&1 \
     || ! grep -q "state=success" "$log"; then
    grep -E "ERROR|Error|Exception" "$log" | tail -20; echo "demo: the DAG run of $1 failed; full log: $log" >&2; exit 1
  fi
  grep -o "SUMMARY .*dbt_nodes_passed=[0-9]*" "$log" | tail -1 || true
}

step "1/8 virtual environments (pinned)"; scripts/bootstrap.sh
step "2/8 PostgreSQL"; scripts/pg.sh start
step "3/8 warehouse migrations, and the examples' namespaces"; .venv/bin/python -m warehouse.db.migrate
.venv/bin/python -m warehouse.db.namespace_store create myns --description "the user profiles example of the Field Level Lineage design"
# The warehouse namespaces of the OpenLineage job namespaces `airflow` (Airflow's provider) and `dbt` (dbt-ol).
.venv/bin/python -m warehouse.db.namespace_store create airflow --description "Airflow's own lineage: its OpenLineage provider's DAG and task runs"
.venv/bin/python -m warehouse.db.namespace_store create dbt --description "the marts' lineage, model by model, from dbt-ol"
step "4/8 Airflow home"; scripts/airflow_setup.sh
step "5/8 example PySpark pipelines (user profiles of the Field Level Lineage design, PurchaseHistory of the Metadata and Data Discovery design)"
.venv/bin/python -m spark_jobs.examples --runs "${DEMO_RUNS:-3}" 2> "$LINEAGE_HOME/examples.log" \
  || { tail -30 "$LINEAGE_HOME/examples.log"; exit 1; }
step "6/8 example SQL DAG through Airflow (airflow dags test example_openlineage_sql; its lineage from Airflow's OpenLineage provider)"
dags_test example_openlineage_sql example-sql
step "7/8 compaction DAG through Airflow (airflow dags test lineage_compaction; the marts built under dbt-ol)"
dags_test lineage_compaction dag
step "8/8 compaction DAG again: it records the lineage the first run left (its own tasks, dbt-ol's model runs)"
dags_test lineage_compaction dag-again

printf '\n==> Summary\n'
.venv/bin/python -m warehouse.pipeline.report --since "$started"
cat <<MSG
DAG logs:  $LINEAGE_HOME/demo-example-sql.log, demo-dag.log, demo-dag-again.log
Open the UI: make up   (http://localhost:$AIRFLOW__API__PORT, admin / admin, Browse > Lineage)
Stop all:  make down   (PostgreSQL stays up until then)
MSG
