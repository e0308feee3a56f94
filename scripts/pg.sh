#!/usr/bin/env bash
# The project-local PostgreSQL cluster: start | stop | status | url | destroy (stop + delete data).
# Data lives in $LINEAGE_HOME/pg (git-ignored). When LINEAGE_DATABASE_URL is set, the
# user's server is used and this script does nothing. initdb refuses to run as root, so as
# root the cluster belongs to the `postgres` system user.
set -euo pipefail
cd "$(dirname "$0")/.."
HOME_DIR=${LINEAGE_HOME:-$PWD/.local}
PORT=${LINEAGE_PG_PORT:-54329}
PG_ROOT=$HOME_DIR/pg
# Made first, so the choice below is the same on the first call of a fresh checkout as later.
mkdir -p "$HOME_DIR"
if [ "$(id -u)" = 0 ] && ! runuser -u postgres -- test -x "$HOME_DIR" 2>/dev/null; then
  # As root the cluster runs as `postgres`, which cannot enter a checkout inside a private
  # directory (e.g. one made by mktemp -d): keep the cluster in a postgres-owned folder named
  # after this checkout instead.
  PG_ROOT=${TMPDIR:-/tmp}/lineage-pg-$(printf '%s' "$HOME_DIR" | sha256sum | cut -c1-12)
fi
DATA=$PG_ROOT/data
SOCK=$PG_ROOT/run
LOG=$PG_ROOT/postgres.log
DATABASES=${LINEAGE_PG_DATABASES:-"lineage airflow"}

if [ -n "${LINEAGE_DATABASE_URL:-}" ]; then
  echo "pg: LINEAGE_DATABASE_URL is set; using that server, not starting a local one"
  exit 0
fi

find_bin() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -z "$dir" ]; then
    echo "pg: no PostgreSQL server binaries found; installing Debian's postgresql package" >&2
    if [ "$(id -u)" = 0 ]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    else
      sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    fi
    dir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
  fi
  echo "$dir"
}

as_owner() {
  # from /: postgres may not be allowed into the current directory
  if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

running() {
  [ -f "$DATA/postmaster.pid" ] && as_owner "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1
}

cmd=${1:-status}
BIN=$(find_bin)
case "$cmd" in
  start)
    mkdir -p "$PG_ROOT"
    if [ "$(id -u)" = 0 ]; then chown postgres "$PG_ROOT"; fi
    if [ ! -f "$DATA/PG_VERSION" ]; then
      as_owner mkdir -p "$DATA" "$SOCK"
      as_owner "$BIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
      echo "pg: initialised cluster in $DATA"
    fi
    as_owner mkdir -p "$SOCK"
    if running; then
      echo "pg: already running on 127.0.0.1:$PORT"
    else
      as_owner "$BIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 \
        -o "-p $PORT -k $SOCK -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=${LINEAGE_PG_SHARED_BUFFERS:-1GB} -c max_wal_size=8GB -c checkpoint_timeout=30min -c work_mem=64MB -c maintenance_work_mem=512MB -c wal_compression=lz4 ${LINEAGE_PG_OPTIONS:-}" start >/dev/null
      echo "pg: started on 127.0.0.1:$PORT (log: $LOG)"
    fi
    for db in $DATABASES; do
      if ! "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -tAc "select 1 from pg_database where datname='$db'" postgres | grep -q 1; then
        "$BIN/createdb" -h 127.0.0.1 -p "$PORT" -U postgres "$db"
        echo "pg: created database $db"
      fi
    done
    ;;
  stop)
    if running; then
      as_owner "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
      echo "pg: stopped"
    else
      echo "pg: not running"
    fi
    ;;
  status)
    if running; then echo "pg: running on 127.0.0.1:$PORT"; else echo "pg: not running"; exit 3; fi
    ;;
  url)
    echo "postgresql://postgres@127.0.0.1:$PORT/lineage"
    ;;
  destroy)
    if running; then as_owner "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null; fi
    rm -rf "$PG_ROOT"
    echo "pg: deleted $PG_ROOT"
    ;;
  *)
    echo "usage: $0 start|stop|status|url|destroy" >&2; exit 2
    ;;
esac
