#!/usr/bin/env bash
# Start or stop a single-node Elasticsearch for the tests, on 127.0.0.1 only, security off.
#   bash .ci/elasticsearch.sh start   # prints the URL; export RAG_EVAL_TEST_ES_URL=<it>
#   bash .ci/elasticsearch.sh stop
# Fetches the integ-test-zip distribution from Maven Central with mvn, runs it as a dedicated
# non-root user (Elasticsearch refuses root) with a JDK 21+ from /usr/lib/jvm.
set -euo pipefail

ES_VERSION="${ES_VERSION:-9.5.0}"
ES_PORT="${ES_PORT:-9250}"
ES_USER="${ES_USER:-rag-eval-es}"
STATE_DIR="${ES_STATE_DIR:-/tmp/rag-eval-elasticsearch}"
ES_HOME="$STATE_DIR/elasticsearch-$ES_VERSION"

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
  id "$ES_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$ES_USER"
  mkdir -p "$STATE_DIR"
  chmod 755 "$STATE_DIR"
  if [ ! -x "$ES_HOME/bin/elasticsearch" ]; then
    echo "fetching elasticsearch $ES_VERSION (integ-test-zip) with mvn" >&2
    mvn -q -B dependency:copy \
      -Dartifact="org.elasticsearch.distribution.integ-test-zip:elasticsearch:$ES_VERSION:zip" \
      -DoutputDirectory="$STATE_DIR" >&2
    unzip -q -o "$STATE_DIR/elasticsearch-$ES_VERSION.zip" -d "$STATE_DIR"
    rm -f "$STATE_DIR/elasticsearch-$ES_VERSION.zip"
  fi
  chown -R "$ES_USER" "$ES_HOME"
  jdk=$(find_jdk)
  rm -rf "$ES_HOME/data" "$ES_HOME/logs"
  runuser -u "$ES_USER" -- env ES_JAVA_HOME="$jdk" ES_JAVA_OPTS="-Xms1g -Xmx1g" \
    "$ES_HOME/bin/elasticsearch" -d -p "$ES_HOME/es.pid" \
    -E discovery.type=single-node -E xpack.security.enabled=false \
    -E network.host=127.0.0.1 -E http.port="$ES_PORT" -E transport.port=$((ES_PORT + 100)) \
    -E path.data="$ES_HOME/data" -E path.logs="$ES_HOME/logs" >&2
  for _ in $(seq 1 90); do
    if curl -fsS "http://127.0.0.1:$ES_PORT/_cluster/health?wait_for_status=yellow&timeout=1s" >/dev/null 2>&1; then
      echo "http://127.0.0.1:$ES_PORT"
      return 0
    fi
    sleep 2
  done
  echo "elasticsearch did not become healthy; last log lines:" >&2
  tail -n 40 "$ES_HOME"/logs/*.log >&2 || true
  return 1
}

stop() {
  if [ -f "$ES_HOME/es.pid" ]; then
    pid=$(cat "$ES_HOME/es.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$ES_HOME/es.pid"
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
