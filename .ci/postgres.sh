#!/usr/bin/env bash
# Start or stop a PostgreSQL server for the tests, on 127.0.0.1 only, in a fresh folder.
#   bash .ci/postgres.sh start   # prints the URL; export RAG_EVAL_TEST_PG_URL=<it>
#   bash .ci/postgres.sh stop
# Uses Debian's postgresql (apt-get install postgresql), run as its `postgres` user (the server
# refuses root). Several runs may share a machine: every start gets a fresh data folder and a
# free port, and this checkout remembers its own server in .ci/postgres/state, so a stop ends only
# that server. Each test then creates a database of its own on it.
set -euo pipefail

REPO_DIR="$(cd "$(dirname "$0")/.." && pwd)"
LOCAL_DIR="$REPO_DIR/.ci/postgres"
STATE_FILE="$LOCAL_DIR/state"

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

bin_dir() {
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
    pg_config --bindir
    return 0
  fi
  for dir in /usr/lib/postgresql/*/bin; do
    [ -x "$dir/initdb" ] && { echo "$dir"; return 0; }
  done
  echo "no PostgreSQL server binaries (apt-get install postgresql)" >&2
  return 1
}

start() {
  mkdir -p "$LOCAL_DIR"
  if [ -f "$STATE_FILE" ]; then stop; fi  # a server this checkout left behind
  id postgres >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin postgres
  bin=$(bin_dir)
  state_dir="$(mktemp -d /tmp/rag-eval-pg.XXXXXX)"
  chown postgres "$state_dir"
  chmod 700 "$state_dir"
  port="${PG_PORT:-$(free_port)}"
  printf 'STATE_DIR=%q\nBIN=%q\nPORT=%q\n' "$state_dir" "$bin" "$port" > "$STATE_FILE"
  runuser -u postgres -- "$bin/initdb" -D "$state_dir/data" -A trust -U postgres -E UTF8 >"$state_dir/initdb.log" 2>&1 || {
    cat "$state_dir/initdb.log" >&2
    return 1
  }
  # many connections: every Dagster process of a test (CLI runs, the webserver, the daemon and
  # its run workers) keeps a small pool of its own
  runuser -u postgres -- "$bin/pg_ctl" -D "$state_dir/data" -l "$state_dir/server.log" -w -t 120 \
    -o "-p $port -k $state_dir -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off" \
    start >&2
  echo "postgresql://postgres@127.0.0.1:$port/postgres"
}

stop() {
  [ -f "$STATE_FILE" ] || return 0
  # shellcheck disable=SC1090
  . "$STATE_FILE"
  runuser -u postgres -- "$BIN/pg_ctl" -D "$STATE_DIR/data" -m fast -w stop >&2 || true
  mkdir -p "$LOCAL_DIR/logs"
  cp "$STATE_DIR/server.log" "$LOCAL_DIR/logs/" 2>/dev/null || true
  case "$STATE_DIR" in /tmp/rag-eval-pg.*) rm -rf "$STATE_DIR" ;; esac
  rm -f "$STATE_FILE"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
