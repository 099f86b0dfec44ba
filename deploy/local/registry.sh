#!/usr/bin/env bash
# Local Confluent-compatible schema registry: Apicurio Registry, fetched from
# Maven Central (see registry/pom.xml: io.apicurio:apicurio-registry-app:<v>:zip:all)
# and run as a plain background JVM with H2 storage (a file under the state dir by default).
#
#   deploy/local/registry.sh start    # idempotent; returns once the ccompat API answers 200
#   deploy/local/registry.sh stop     # SIGTERM via pid file, SIGKILL after 30 s
#   deploy/local/registry.sh status   # exit 0 running+ready, 3 otherwise
#   deploy/local/registry.sh wait     # wait (REGISTRY_WAIT_TIMEOUT s) until ready
#
# Clients (e.g. @kafkajs/confluent-schema-registry) use the Confluent API at
#   http://127.0.0.1:${REGISTRY_PORT}/apis/ccompat/v7
#
# Environment (all optional):
#   REGISTRY_PORT=8085 REGISTRY_HOST=127.0.0.1
#   REGISTRY_VERSION=3.0.9              Apicurio version (3.0.x: newest on Central that runs on Java 17)
#   REGISTRY_STORAGE=file|mem           file (default): schemas survive restarts, as Kafka keeps its records;
#                                       (H2 database in $EFS_STATE_DIR/registry/h2); mem: schemas vanish on restart
#   REGISTRY_CCOMPAT_LEGACY_ID_MODE=false  true: ccompat schema ids are Apicurio globalIds
#                                       (one id per subject version) instead of contentIds
#   REGISTRY_HEAP_OPTS="-Xms64m -Xmx384m"  REGISTRY_JAVA_OPTS=... (extra -D overrides)
#   REGISTRY_ACCESS_LOG=false  REGISTRY_WAIT_TIMEOUT=90
#   EFS_CACHE_DIR=~/.cache/efs          distribution: $EFS_CACHE_DIR/apicurio-registry/<version>-<pom hash>
#   EFS_STATE_DIR=~/.local/state/efs    log/pid:      $EFS_STATE_DIR/registry
set -euo pipefail
COMPONENT=registry
# shellcheck source=lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

REGISTRY_VERSION="${REGISTRY_VERSION:-3.0.9}"
REGISTRY_HOST="${REGISTRY_HOST:-127.0.0.1}"
REGISTRY_PORT="${REGISTRY_PORT:-8085}"
REGISTRY_STORAGE="${REGISTRY_STORAGE:-file}"
REGISTRY_CCOMPAT_LEGACY_ID_MODE="${REGISTRY_CCOMPAT_LEGACY_ID_MODE:-false}"
REGISTRY_HEAP_OPTS="${REGISTRY_HEAP_OPTS:--Xms64m -Xmx384m}"
REGISTRY_JAVA_OPTS="${REGISTRY_JAVA_OPTS:-}"
REGISTRY_ACCESS_LOG="${REGISTRY_ACCESS_LOG:-false}"
REGISTRY_WAIT_TIMEOUT="${REGISTRY_WAIT_TIMEOUT:-90}"

DIST="$EFS_CACHE_DIR/apicurio-registry/$REGISTRY_VERSION-$(pom_tag "$LOCAL_DIR/registry/pom.xml")"
RUNNER="$DIST/apicurio-registry-app-$REGISTRY_VERSION-runner.jar"
STATE="$EFS_STATE_DIR/registry"
PIDFILE="$STATE/registry.pid"
LOGFILE="$STATE/registry.log"
MATCH="apicurio-registry-app"   # what our JVM's command line contains
ADDR="$REGISTRY_HOST:$REGISTRY_PORT"
URL="http://$ADDR/apis/ccompat/v7"

# ready: GET /apis/ccompat/v7/subjects answers 200.
ready() {
  port_open "$REGISTRY_HOST" "$REGISTRY_PORT" || return 1
  local code
  if command -v curl >/dev/null 2>&1; then
    code="$(curl -s -o /dev/null -m 3 -w '%{http_code}' "$URL/subjects" 2>/dev/null || true)"
  else
    code="$(node -e 'fetch(process.argv[1]).then(r=>console.log(r.status),()=>console.log(0))' "$URL/subjects" 2>/dev/null || true)"
  fi
  [ "$code" = 200 ]
}

wait_ready() {
  local timeout="$1" pid="${2:-}" deadline
  deadline=$(( $(date +%s) + timeout ))
  while (( $(date +%s) < deadline )); do
    if ready; then return 0; fi
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      log "registry process $pid exited during startup"
      return 1
    fi
    sleep 0.5
  done
  return 1
}

datasource_url() {
  case "$REGISTRY_STORAGE" in
    mem) echo "jdbc:h2:mem:efs_registry" ;;
    file) mkdir -p "$STATE/h2"; echo "jdbc:h2:file:$STATE/h2/registry" ;;
    *) die "REGISTRY_STORAGE must be mem or file, not '$REGISTRY_STORAGE'" ;;
  esac
}

cmd_start() {
  local pid t0 heap extra javabin
  lock_start "$STATE/.start.lock"
  if pid="$(pid_from_file "$PIDFILE" "$MATCH")"; then
    if wait_ready "$REGISTRY_WAIT_TIMEOUT" "$pid"; then
      log "already running (pid $pid) at $URL"; return 0
    fi
    show_log_tail "$LOGFILE"; die "registry (pid $pid) is running but not ready at $URL"
  fi
  if port_open "$REGISTRY_HOST" "$REGISTRY_PORT"; then
    if wait_ready 15; then log "already answering at $URL (not started by this script)"; return 0; fi
    die "$ADDR is taken by something that does not serve $URL/subjects"
  fi
  javabin="$(java_bin)" || exit 1
  mvn_resolve unpack "$LOCAL_DIR/registry/pom.xml" "$DIST" -Dapicurio.version="$REGISTRY_VERSION"
  [ -f "$RUNNER" ] || die "$RUNNER missing after resolution (remove $DIST and retry)"
  mkdir -p "$STATE"
  read -r -a heap <<<"$REGISTRY_HEAP_OPTS"
  read -r -a extra <<<"$REGISTRY_JAVA_OPTS"
  t0="$(now_ms)"
  log "starting Apicurio Registry $REGISTRY_VERSION ($REGISTRY_STORAGE storage) at $URL, log $LOGFILE"
  # All settings are Quarkus/Apicurio runtime properties given as system properties.
  launch_bg "$PIDFILE" "$LOGFILE" "$javabin" "${heap[@]}" \
    -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
    -Djava.util.logging.manager=org.jboss.logmanager.LogManager \
    -Dvertx.cacheDirBase="$STATE/vertx-cache" \
    -Dquarkus.http.host="$REGISTRY_HOST" \
    -Dquarkus.http.port="$REGISTRY_PORT" \
    -Dquarkus.http.access-log.enabled="$REGISTRY_ACCESS_LOG" \
    -Dquarkus.log.console.format='%d{yyyy-MM-dd HH:mm:ss,SSS} %p [%c{3.}] (%t) %m%n' \
    -Dapicurio.storage.kind=sql \
    -Dapicurio.storage.sql.kind=h2 \
    -Dapicurio.datasource.url="$(datasource_url)" \
    -Dapicurio.datasource.jdbc.initial-size=2 \
    -Dapicurio.datasource.jdbc.min-size=2 \
    -Dapicurio.datasource.jdbc.max-size=20 \
    -Dapicurio.rest.deletion.group.enabled=true \
    -Dapicurio.rest.deletion.artifact.enabled=true \
    -Dapicurio.rest.deletion.artifact-version.enabled=true \
    -Dapicurio.ccompat.legacy-id-mode.enabled="$REGISTRY_CCOMPAT_LEGACY_ID_MODE" \
    "${extra[@]}" \
    -jar "$RUNNER"
  pid="$(cat "$PIDFILE")"
  echo "$REGISTRY_VERSION" >"$STATE/registry.version"
  if ! wait_ready "$REGISTRY_WAIT_TIMEOUT" "$pid"; then
    show_log_tail "$LOGFILE" 80
    stop_pidfile "$PIDFILE" registry 10 "$MATCH" # leave nothing half-started behind
    die "registry did not become ready at $URL within ${REGISTRY_WAIT_TIMEOUT}s"
  fi
  log "ready at $URL (pid $pid) after $(( ($(now_ms) - t0) / 1000 ))s"
}

cmd_stop() { stop_pidfile "$PIDFILE" registry 30 "$MATCH"; }

cmd_status() {
  local pid
  if pid="$(pid_from_file "$PIDFILE" "$MATCH")"; then
    if ready; then echo "registry: running pid=$pid url=$URL version=$(cat "$STATE/registry.version" 2>/dev/null || echo "$REGISTRY_VERSION")"; return 0; fi
    echo "registry: starting/unhealthy pid=$pid url=$URL"; return 3
  fi
  if ready; then echo "registry: running (unmanaged) url=$URL"; return 0; fi
  echo "registry: stopped url=$URL"; return 3
}

cmd_wait() {
  if wait_ready "${1:-$REGISTRY_WAIT_TIMEOUT}" "$(pid_from_file "$PIDFILE" "$MATCH" || true)"; then
    log "ready at $URL"; return 0
  fi
  show_log_tail "$LOGFILE" 40
  die "registry not ready at $URL"
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  restart) cmd_stop; cmd_start ;;
  status) cmd_status ;;
  wait) cmd_wait "${2:-}" ;;
  *) echo "usage: $0 start|stop|restart|status|wait [timeout]" >&2; exit 2 ;;
esac
