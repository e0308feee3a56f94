#!/usr/bin/env bash
# `make up`: run `airflow standalone` (scheduler, dag-processor, triggerer, api-server with the
# lineage plugin) in the background on localhost, and wait until it is healthy.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
pidfile=$AIRFLOW_HOME/standalone.pid
log=$AIRFLOW_HOME/standalone.log
url="http://localhost:$AIRFLOW__API__PORT"
if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  echo "airflow: already running at $url (pid $(cat "$pidfile"))"
  exit 0
fi
AIRFLOW__API__HOST=${AIRFLOW__API__HOST:-127.0.0.1} setsid nohup .venv/bin/airflow standalone >"$log" 2>&1 &
echo $! > "$pidfile"
printf "airflow: starting (log: %s) " "$log"
for _ in $(seq 1 120); do
  if curl -fsS "$url/api/v2/monitor/health" >/dev/null 2>&1; then
    echo
    echo "airflow: up at $url  (login admin / admin; Browse > Lineage for the plugin's page)"
    exit 0
  fi
  if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then echo; echo "airflow: exited; see $log" >&2; tail -20 "$log" >&2; exit 1; fi
  printf "."; sleep 2
done
echo; echo "airflow: not healthy after 240 s; see $log" >&2; exit 1
