#!/usr/bin/env bash
# Start or stop a single-node Elasticsearch for the tests, on 127.0.0.1 only, security off.
#   bash .ci/elasticsearch.sh start   # prints the URL; export RAG_EVAL_TEST_ES_URL=<it>
#   bash .ci/elasticsearch.sh stop
# Fetches the integ-test-zip distribution from Maven Central with mvn, runs it as a dedicated
# non-root user (Elasticsearch refuses root) with a JDK 21+ from /usr/lib/jvm.
#
# Several runs may share a machine: every start gets a fresh state folder and free ports, and
# this checkout remembers its own node in .ci/elasticsearch/state, so a stop ends only that node.
# The disk watermarks are off: on a shared machine whose disk is over 90% full the node would
# otherwise refuse to place any new shard, and the tests would time out for a neighbour's files.
# The node's logs are copied into .ci/elasticsearch/logs (ignored by git) when it stops.
set -euo pipefail

ES_VERSION="${ES_VERSION:-9.5.0}"
ES_USER="${ES_USER:-rag-eval-es}"
REPO_DIR="$(cd "$(dirname "$0")/.." && pwd)"
LOCAL_DIR="$REPO_DIR/.ci/elasticsearch"
STATE_FILE="$LOCAL_DIR/state"

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

find_jdk() {
  for dir in /usr/lib/jvm/*/; do
    [ -x "$dir/bin/java" ] || continue
    major=$("$dir/bin/java" -version 2>&1 | awk -F'"' '/version/ {print $2}' | cut -d. -f1)
    if [ "${major:-0}" -ge 21 ] 2>/dev/null; then echo "${dir%/}"; return 0; fi
  done
  echo "no JDK 21+ under /usr/lib/jvm" >&2
  return 1
}

start() {
  mkdir -p "$LOCAL_DIR"
  if [ -f "$STATE_FILE" ]; then stop; fi  # a node this checkout left behind
  id "$ES_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$ES_USER"
  # a fresh folder the node's user can reach (a checkout under a private home may not be)
  state_dir="${ES_STATE_DIR:-$(mktemp -d /tmp/rag-eval-es.XXXXXX)}"
  chmod 755 "$state_dir"
  es_home="$state_dir/elasticsearch-$ES_VERSION"
  http_port="${ES_PORT:-$(free_port)}"
  transport_port="$(free_port)"
  echo "fetching elasticsearch $ES_VERSION (integ-test-zip) with mvn" >&2
  mvn -q -B dependency:copy \
    -Dartifact="org.elasticsearch.distribution.integ-test-zip:elasticsearch:$ES_VERSION:zip" \
    -DoutputDirectory="$state_dir" >&2
  unzip -q -o "$state_dir/elasticsearch-$ES_VERSION.zip" -d "$state_dir"
  rm -f "$state_dir/elasticsearch-$ES_VERSION.zip"
  chown -R "$ES_USER" "$es_home"
  printf 'STATE_DIR=%q\nES_HOME=%q\nHTTP_PORT=%q\n' "$state_dir" "$es_home" "$http_port" > "$STATE_FILE"
  jdk=$(find_jdk)
  runuser -u "$ES_USER" -- env ES_JAVA_HOME="$jdk" ES_JAVA_OPTS="-Xms1g -Xmx1g" \
    "$es_home/bin/elasticsearch" -d -p "$es_home/es.pid" \
    -E discovery.type=single-node -E xpack.security.enabled=false \
    -E network.host=127.0.0.1 -E http.port="$http_port" -E transport.port="$transport_port" \
    -E cluster.routing.allocation.disk.threshold_enabled=false \
    -E path.data="$es_home/data" -E path.logs="$es_home/logs" >&2
  for _ in $(seq 1 90); do
    if curl -fsS "http://127.0.0.1:$http_port/_cluster/health?wait_for_status=yellow&timeout=1s" >/dev/null 2>&1; then
      echo "http://127.0.0.1:$http_port"
      return 0
    fi
    sleep 2  # polling the node's health endpoint until it answers
  done
  echo "elasticsearch did not become healthy; last log lines:" >&2
  tail -n 40 "$es_home"/logs/*.log >&2 || true
  return 1
}

stop() {
  [ -f "$STATE_FILE" ] || return 0
  # shellcheck disable=SC1090
  . "$STATE_FILE"
  if [ -f "$ES_HOME/es.pid" ]; then
    pid=$(cat "$ES_HOME/es.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done  # until it exits
    kill -9 "$pid" 2>/dev/null || true
  fi
  mkdir -p "$LOCAL_DIR/logs"
  cp -r "$ES_HOME/logs/." "$LOCAL_DIR/logs/" 2>/dev/null || true
  case "$STATE_DIR" in /tmp/rag-eval-es.*) rm -rf "$STATE_DIR" ;; esac
  rm -f "$STATE_FILE"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
