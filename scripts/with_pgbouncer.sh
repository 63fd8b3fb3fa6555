#!/usr/bin/env bash
# Run a command with PgBouncer (transaction mode) between it and the PostgreSQL on 127.0.0.1:5432.
#
#   scripts/with_pgbouncer.sh COMMAND...
#
# Starts a PgBouncer of its own (Debian's package, installed when missing) on a free local port
# with a generated config, exports PGBOUNCER_PORT, runs COMMAND, stops PgBouncer and returns
# COMMAND's exit status. PgBouncer refuses to run as root: as root it runs as `postgres`.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! [ -x /usr/sbin/pgbouncer ]; then
  echo "== Debian's pgbouncer"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null
  # The package's own service (port 6432) is not the one used here.
  (systemctl disable --now pgbouncer || service pgbouncer stop || true) >/dev/null 2>&1
fi

dir="$(mktemp -d /tmp/heyaira-pgbouncer.XXXXXX)"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
cat >"$dir/users.txt" <<USERS
"postgres" ""
USERS
cat >"$dir/pgbouncer.ini" <<INI
[databases]
* = host=127.0.0.1 port=5432

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/users.txt
pool_mode = transaction
; every connection is shared between transactions: session state must not exist (runtime.pgbouncer)
server_reset_query =
max_client_conn = 1000
; PostgreSQL allows 100 connections in all: a bounded share per test database
default_pool_size = 20
max_db_connections = 20
ignore_startup_parameters = extra_float_digits
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
owner=""
if [ "$(id -u)" = 0 ]; then
  chown -R postgres "$dir"
  owner="runuser -u postgres --"
fi
$owner /usr/sbin/pgbouncer -d "$dir/pgbouncer.ini"
for _ in $(seq 1 50); do
  pg_isready -h 127.0.0.1 -p "$port" -q && break
  sleep 0.2
done
stop() {
  if [ -f "$dir/pgbouncer.pid" ]; then kill "$(cat "$dir/pgbouncer.pid")" 2>/dev/null || true; fi
  sleep 0.5
  rm -rf "$dir"
}
trap stop EXIT
echo "PgBouncer (transaction mode) on 127.0.0.1:$port"
export PGBOUNCER_PORT="$port"
# Where tests do their maintenance work (databases made and dropped, backends ended): PostgreSQL
# itself (tests/live.py).
export POSTGRES_DIRECT_PORT=5432
status=0
"$@" || status=$?
exit "$status"
