#!/usr/bin/env bash
# Make sure Debian's PgBouncer is installed (the managed-PostgreSQL tests put one in front of a
# test cluster in transaction pooling mode). Only the binary is used: the harness runs its own
# pgbouncer on a free port with its own config, so the package's service is left stopped.
set -euo pipefail
if command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ]; then exit 0; fi
echo "pgbouncer: installing Debian's pgbouncer (apt-get; under a minute)"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq pgbouncer >/dev/null
/usr/sbin/pgbouncer --version | head -n 1
