#!/usr/bin/env bash
# Starts (or stops) the real database servers the test suite runs against: a PostgreSQL 15 and a
# MariaDB 10.11 cluster in a fresh temporary directory, each on a private Unix socket only (no TCP
# port, so it never collides with a system server), plus nothing else. Used by ctest as a fixture
# (tests/services/CMakeLists.txt), so `ctest` alone starts them; usable by hand too:
#
#   scripts/test-services.sh start ENV_FILE     writes KEY=VALUE lines the tests read:
#                                               PG_SOCKET_DIR PG_PORT PG_USER PG_DATABASE
#                                               MYSQL_SOCKET MYSQL_USER MYSQL_DATABASE SERVICES_DIR
#   scripts/test-services.sh stop ENV_FILE      stops both and removes the directory
#
# As root, the servers run as the packages' system users (postgres, mysql): PostgreSQL refuses
# to run as root. Data lives under ${TMPDIR:-/tmp}, which those users can reach.
set -euo pipefail
cmd=${1:?usage: test-services.sh start|stop ENV_FILE}
env_file=${2:?usage: test-services.sh start|stop ENV_FILE}

pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
as_user() {  # as_user USER CMD...: run as USER when we are root, else as ourselves
  local u=$1; shift
  if [ "$(id -u)" -eq 0 ]; then runuser -u "$u" -- "$@"; else "$@"; fi
}

stop_services() {
  [ -f "$env_file" ] || return 0
  # shellcheck disable=SC1090
  . "$env_file"
  if [ -n "${SERVICES_DIR:-}" ] && [ -d "$SERVICES_DIR" ]; then
    if [ -f "$SERVICES_DIR/pg/data/postmaster.pid" ]; then
      as_user postgres "$pg_bin/pg_ctl" -D "$SERVICES_DIR/pg/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    if [ -f "$SERVICES_DIR/mysql/mysqld.pid" ]; then
      kill "$(cat "$SERVICES_DIR/mysql/mysqld.pid")" 2>/dev/null || true
      for _ in $(seq 1 100); do [ -f "$SERVICES_DIR/mysql/mysqld.pid" ] || break; sleep 0.1; done
    fi
    rm -rf "$SERVICES_DIR"
  fi
  rm -f "$env_file"
}

if [ "$cmd" = stop ]; then
  stop_services
  exit 0
fi
[ "$cmd" = start ] || { echo "usage: test-services.sh start|stop ENV_FILE" >&2; exit 2; }
[ -n "$pg_bin" ] || { echo "test-services: PostgreSQL server binaries not found (apt-get install postgresql-15)" >&2; exit 1; }
command -v mariadbd >/dev/null || { echo "test-services: mariadbd not found (apt-get install mariadb-server)" >&2; exit 1; }
stop_services  # a leftover from an interrupted run

dir=$(mktemp -d "${TMPDIR:-/tmp}/drivelab-services.XXXXXX")
chmod 755 "$dir"
mkdir -p "$dir/pg" "$dir/mysql/tmp"
pg_user=$(id -un); my_user=$(id -un)
if [ "$(id -u)" -eq 0 ]; then
  chown postgres:postgres "$dir/pg"; chown mysql:mysql "$dir/mysql" "$dir/mysql/tmp"
  pg_user=postgres; my_user=root
fi

# PostgreSQL: trust auth on the private socket only.
as_user postgres "$pg_bin/initdb" -D "$dir/pg/data" -U "$pg_user" -A trust -E UTF8 --no-sync >"$dir/pg/initdb.log" 2>&1 \
  || { cat "$dir/pg/initdb.log" >&2; exit 1; }
cat >>"$dir/pg/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$dir/pg'
port = 5499
max_connections = 300
shared_buffers = 256MB
fsync = on
max_prepared_transactions = 0
CONF
as_user postgres "$pg_bin/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/server.log" -w -t 60 start >/dev/null \
  || { tail -20 "$dir/pg/server.log" >&2; exit 1; }
as_user postgres "$pg_bin/createdb" -h "$dir/pg" -p 5499 -U "$pg_user" drivelab_test

# MariaDB: socket only, root by unix_socket auth when we are root. Its own tmpdir: a mariadbd that
# starts deletes every "#sql*" file in its tmpdir, so a shared /tmp breaks a concurrent bootstrap.
mariadb-install-db --no-defaults --datadir="$dir/mysql/data" --user=mysql --auth-root-authentication-method=socket \
  --skip-test-db --tmpdir="$dir/mysql/tmp" >"$dir/mysql/install.log" 2>&1 || { cat "$dir/mysql/install.log" >&2; exit 1; }
mariadbd --no-defaults --datadir="$dir/mysql/data" --tmpdir="$dir/mysql/tmp" --user=mysql --skip-networking \
  --socket="$dir/mysql/mysqld.sock" --pid-file="$dir/mysql/mysqld.pid" --log-error="$dir/mysql/error.log" \
  --innodb-buffer-pool-size=256M --max-connections=300 --max-prepared-stmt-count=100000 \
  </dev/null >"$dir/mysql/stderr.log" 2>&1 &  # no inherited pipes: ctest waits for those to close
for _ in $(seq 1 600); do
  [ -S "$dir/mysql/mysqld.sock" ] && mariadb --no-defaults -S "$dir/mysql/mysqld.sock" -u "$my_user" -e 'select 1' >/dev/null 2>&1 && break
  sleep 0.1
done
mariadb --no-defaults -S "$dir/mysql/mysqld.sock" -u "$my_user" -e 'CREATE DATABASE IF NOT EXISTS drivelab_test' \
  || { tail -20 "$dir/mysql/error.log" >&2; exit 1; }

cat >"$env_file" <<ENV
SERVICES_DIR=$dir
PG_SOCKET_DIR=$dir/pg
PG_PORT=5499
PG_USER=$pg_user
PG_DATABASE=drivelab_test
MYSQL_SOCKET=$dir/mysql/mysqld.sock
MYSQL_USER=$my_user
MYSQL_DATABASE=drivelab_test
ENV
echo "test-services: PostgreSQL on $dir/pg (port 5499), MariaDB on $dir/mysql/mysqld.sock"
