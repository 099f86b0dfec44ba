#!/usr/bin/env bash
# Local infrastructure for development and CI: Kafka (KRaft, single node) and the
# Confluent-compatible schema registry (Apicurio), both real JVM processes resolved
# from Maven Central. Idempotent: `up` on a running stack returns in well under a second.
#
#   deploy/local/infra.sh up       # start Kafka, then the registry; waits until both are ready
#   deploy/local/infra.sh down     # stop the registry, then Kafka (state dir is kept)
#   deploy/local/infra.sh status   # one line per component; exit 0 only if both run
#   deploy/local/infra.sh reset    # down + delete $EFS_STATE_DIR/{kafka,registry} (all topics/data)
#
# See kafka.sh / registry.sh for the environment variables (ports, versions, heaps,
# EFS_CACHE_DIR, EFS_STATE_DIR).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
COMPONENT=infra
# shellcheck source=lib/common.sh
. "$HERE/lib/common.sh"

summary() {
  echo "kafka     ${KAFKA_HOST:-127.0.0.1}:${KAFKA_PORT:-9092}  (bootstrap servers)"
  echo "registry  http://${REGISTRY_HOST:-127.0.0.1}:${REGISTRY_PORT:-8085}/apis/ccompat/v7  (Confluent schema-registry API)"
}

case "${1:-}" in
  up)
    "$HERE/kafka.sh" start
    "$HERE/registry.sh" start
    summary
    ;;
  down)
    rc=0
    "$HERE/registry.sh" stop || rc=$?
    "$HERE/kafka.sh" stop || rc=$?
    exit "$rc"
    ;;
  status)
    rc=0
    "$HERE/kafka.sh" status || rc=$?
    "$HERE/registry.sh" status || rc=$?
    exit "$rc"
    ;;
  reset)
    "$0" down
    log "removing $EFS_STATE_DIR/kafka and $EFS_STATE_DIR/registry"
    rm -rf "${EFS_STATE_DIR:?}/kafka" "${EFS_STATE_DIR:?}/registry"
    ;;
  *) echo "usage: $0 up|down|status|reset" >&2; exit 2 ;;
esac
