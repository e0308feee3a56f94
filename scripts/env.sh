# Environment of the embedded default, sourced by the Makefile and scripts.
# Every value can be overridden by exporting it before `make`.
_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export LINEAGE_HOME=${LINEAGE_HOME:-$_root/.local}
export LINEAGE_PG_PORT=${LINEAGE_PG_PORT:-54329}
if [ -n "${LINEAGE_DATABASE_URL:-}" ]; then
  # A real server: Airflow's metadata DB defaults to an `airflow` database on the same server.
  _pg=${LINEAGE_DATABASE_URL%/*}
  _pg=postgresql+psycopg://${_pg#*://}
else
  _pg="postgresql+psycopg://postgres@127.0.0.1:${LINEAGE_PG_PORT}"
fi
export AIRFLOW_HOME=${AIRFLOW_HOME:-$LINEAGE_HOME/airflow}
export AIRFLOW__CORE__DAGS_FOLDER=${AIRFLOW__CORE__DAGS_FOLDER:-$_root/dags}
export AIRFLOW__CORE__PLUGINS_FOLDER=${AIRFLOW__CORE__PLUGINS_FOLDER:-$_root/plugins}
export AIRFLOW__CORE__LOAD_EXAMPLES=False
export AIRFLOW__CORE__PARALLELISM=${AIRFLOW__CORE__PARALLELISM:-4}
export AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=${AIRFLOW__DATABASE__SQL_ALCHEMY_CONN:-$_pg/airflow}
export AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC=${AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC:-$AIRFLOW__DATABASE__SQL_ALCHEMY_CONN}
export AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS=${AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS:-admin:admin}
export AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE=${AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE:-$AIRFLOW_HOME/simple_auth_manager_passwords.json}
export AIRFLOW__API__PORT=${AIRFLOW__API__PORT:-8080}
# Airflow's own lineage: LINEAGE_AIRFLOW_OPENLINEAGE=true turns on the OpenLineage provider with
# our in-process transport (every Airflow process here shares the raw log root) and the job
# namespace `airflow`. Off by default; Airflow's own AIRFLOW__OPENLINEAGE__* settings win.
# Events are emitted from a thread of the task process: the provider's default, a forked child
# per event, took over its 10 s execution_timeout under `airflow dags test` here and was killed
# with the event (about 0.1 s per event in a thread). On a loaded 2-core machine a thread's
# extraction can pass 10 s too, and the task ends without its events: 60 s here.
case $(echo "${LINEAGE_AIRFLOW_OPENLINEAGE:-false}" | tr '[:upper:]' '[:lower:]') in
  true|1|yes|on)
    export AIRFLOW__OPENLINEAGE__TRANSPORT=${AIRFLOW__OPENLINEAGE__TRANSPORT:-'{"type": "lineage.transport.openlineage.RawLogTransport"}'}
    export AIRFLOW__OPENLINEAGE__NAMESPACE=${AIRFLOW__OPENLINEAGE__NAMESPACE:-airflow}
    export AIRFLOW__OPENLINEAGE__EXECUTE_IN_THREAD=${AIRFLOW__OPENLINEAGE__EXECUTE_IN_THREAD:-true}
    export AIRFLOW__OPENLINEAGE__EXECUTION_TIMEOUT=${AIRFLOW__OPENLINEAGE__EXECUTION_TIMEOUT:-60} ;;
  false|0|no|off) ;;
  *) echo "LINEAGE_AIRFLOW_OPENLINEAGE must be true or false, got '$LINEAGE_AIRFLOW_OPENLINEAGE'" >&2; return 1 ;;
esac
export DBT_SEND_ANONYMOUS_USAGE_STATS=False
export GX_ANALYTICS_ENABLED=false
export PYTHONPATH=$_root:$_root/plugins${PYTHONPATH:+:$PYTHONPATH}
export PATH=$_root/.venv/bin:$PATH
unset _root _pg
