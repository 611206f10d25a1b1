#!/usr/bin/env bash
# Start or stop a Redis server for the tests (the Celery workers' broker), on 127.0.0.1 only, in
# a fresh folder.
#   bash .ci/redis.sh start   # prints the URL; export RAG_EVAL_TEST_REDIS_URL=<it>
#   bash .ci/redis.sh stop
# Uses Debian's redis-server 7 (apt-get install redis-server; PyPI's redis-server wheel is 6.0.9,
# too old for kombu 5.7). Several runs may share a machine: every start gets a fresh folder and a
# free port, and this checkout remembers its own server in .ci/redis/state, so a stop ends only it.
set -euo pipefail

REPO_DIR="$(cd "$(dirname "$0")/.." && pwd)"
LOCAL_DIR="$REPO_DIR/.ci/redis"
STATE_FILE="$LOCAL_DIR/state"

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start() {
  mkdir -p "$LOCAL_DIR"
  if [ -f "$STATE_FILE" ]; then stop; fi  # a server this checkout left behind
  command -v redis-server >/dev/null 2>&1 || { echo "no redis-server (apt-get install redis-server)" >&2; return 1; }
  state_dir="$(mktemp -d /tmp/rag-eval-redis.XXXXXX)"
  port="${REDIS_PORT:-$(free_port)}"
  printf 'STATE_DIR=%q\nPORT=%q\n' "$state_dir" "$port" > "$STATE_FILE"
  redis-server --port "$port" --bind 127.0.0.1 --dir "$state_dir" --save '' --appendonly no \
    --databases 64 --daemonize yes --pidfile "$state_dir/redis.pid" --logfile "$state_dir/redis.log"
  for _ in $(seq 1 100); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && { echo "redis://127.0.0.1:$port/0"; return 0; }
    sleep 0.1  # the server is still starting
  done
  cat "$state_dir/redis.log" >&2
  return 1
}

stop() {
  [ -f "$STATE_FILE" ] || return 0
  # shellcheck disable=SC1090
  . "$STATE_FILE"
  redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1 || true
  case "$STATE_DIR" in /tmp/rag-eval-redis.*) rm -rf "$STATE_DIR" ;; esac
  rm -f "$STATE_FILE"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
