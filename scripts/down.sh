#!/usr/bin/env bash
# `make down`: stop every local service the project started (Airflow standalone, PostgreSQL).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
pidfile=$AIRFLOW_HOME/standalone.pid
if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  kill -TERM -- "-$(cat "$pidfile")" 2>/dev/null || kill -TERM "$(cat "$pidfile")"
  for _ in $(seq 1 30); do kill -0 "$(cat "$pidfile")" 2>/dev/null || break; sleep 1; done
  kill -KILL -- "-$(cat "$pidfile")" 2>/dev/null || true
  echo "airflow: stopped"
else
  echo "airflow: not running"
fi
rm -f "$pidfile"
scripts/pg.sh stop
