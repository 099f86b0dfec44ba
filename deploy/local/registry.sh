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
# What the lifecycle in lib/common.sh needs.
COMPONENT_VERSION="$REGISTRY_VERSION" LISTEN_HOST="$REGISTRY_HOST" LISTEN_PORT="$REGISTRY_PORT" WAIT_TIMEOUT="$REGISTRY_WAIT_TIMEOUT"
WHERE="at $URL" SHOWN="url=$URL" FOREIGN="does not serve $URL/subjects"

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

datasource_url() {
  case "$REGISTRY_STORAGE" in
    mem) echo "jdbc:h2:mem:efs_registry" ;;
    file) mkdir -p "$STATE/h2"; echo "jdbc:h2:file:$STATE/h2/registry" ;;
    *) die "REGISTRY_STORAGE must be mem or file, not '$REGISTRY_STORAGE'" ;;
  esac
}

prepare() {
  JAVABIN="$(java_bin)" || exit 1
  mvn_resolve unpack "$LOCAL_DIR/registry/pom.xml" "$DIST" -Dapicurio.version="$REGISTRY_VERSION"
  [ -f "$RUNNER" ] || die "$RUNNER missing after resolution (remove $DIST and retry)"
  mkdir -p "$STATE"
}

launch() {
  local heap extra
  read -r -a heap <<<"$REGISTRY_HEAP_OPTS"
  read -r -a extra <<<"$REGISTRY_JAVA_OPTS"
  log "starting Apicurio Registry $REGISTRY_VERSION ($REGISTRY_STORAGE storage) at $URL, log $LOGFILE"
  # All settings are Quarkus/Apicurio runtime properties given as system properties.
  launch_bg "$PIDFILE" "$LOGFILE" "$JAVABIN" "${heap[@]}" \
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
}

startup_logs() { show_log_tail "$LOGFILE" 80; }

component_main "$@"
