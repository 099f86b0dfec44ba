#!/usr/bin/env bash
# Distributed mode on one machine: every service its own OS process, talking over the real
# Kafka and schema registry, each with its own schema in Postgres (DATABASE_URL).
#
#   deploy/local/services.sh up       start the six services, then the gateway; wait until ready
#   deploy/local/services.sh down     SIGTERM each (graceful), gateway first
#   deploy/local/services.sh status
#
# Environment: DATABASE_URL (default the machine's Postgres, database efs), KAFKA_BROKERS
# (127.0.0.1:9092), SCHEMA_REGISTRY_URL, PORT/UTILITY_PORT/PORTAL_PORT, SANDBOX_* tokens,
# SIGNING_KEY_ENCRYPTION_KEY (the Makefile gives a development value),
# EFS_RUN_DIR (pids and logs, default .run under the repository), HEALTH_PORT_BASE (9100: the
# services' health ports, /healthz, /readyz and /metrics, one each from there, the gateway's last), EFS_CPU_PROF_DIR (set: run the services
# named in EFS_CPU_PROF_SERVICES, default all, under `node --cpu-prof`, each writing
# <service>.cpuprofile there when it stops; bench/run.ts --profile uses it).
set -euo pipefail
COMPONENT=services
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/lib/common.sh"
ROOT="$(cd "$HERE/../.." && pwd)"
RUN_DIR="${EFS_RUN_DIR:-$ROOT/.run}"
export PATH="$("$HERE/node.sh"):$PATH"
export KAFKA_BROKERS="${KAFKA_BROKERS:-127.0.0.1:9092}"
export SCHEMA_REGISTRY_URL="${SCHEMA_REGISTRY_URL:-http://127.0.0.1:8085/apis/ccompat/v7}"
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/efs}"
BACKENDS=(program-catalog commissioning enrollment event-dispatch telemetry-ingest webhooks)
HEALTH_BASE="${HEALTH_PORT_BASE:-9100}"

ensure_database() {
  local db="${DATABASE_URL##*/}"; db="${db%%\?*}"
  local admin="${DATABASE_URL%/*}/postgres"
  node -e '
    const pg = require("pg"); const [admin, db] = process.argv.slice(1);
    const c = new pg.Client({ connectionString: admin });
    c.connect().then(() => c.query("select 1 from pg_database where datname = $1", [db]))
      .then((r) => r.rowCount ? null : c.query(`create database "${db}"`))
      .then(() => c.end()).catch((e) => { console.error(e.message); process.exit(1); });
  ' "$admin" "$db"
}

start_one() {
  local name="$1" port="$2"
  mkdir -p "$RUN_DIR/logs"
  if pid_from_file "$RUN_DIR/$name.pid" "services/$name/src/main.ts" >/dev/null; then log "$name already running"; return 0; fi
  local prof=()
  if [ -n "${EFS_CPU_PROF_DIR:-}" ] && [[ " ${EFS_CPU_PROF_SERVICES:-$name} " == *" $name "* ]]; then
    mkdir -p "$EFS_CPU_PROF_DIR"
    prof=(--cpu-prof --cpu-prof-dir="$EFS_CPU_PROF_DIR" --cpu-prof-name="$name.cpuprofile")
  fi
  HEALTH_PORT="$port" launch_bg "$RUN_DIR/$name.pid" "$RUN_DIR/logs/$name.log" node "${prof[@]}" "$ROOT/services/$name/src/main.ts"
}

wait_ready() {
  local name="$1" url="$2" i
  for i in $(seq 1 120); do
    if curl -sf "$url" >/dev/null 2>&1; then log "$name ready ($url)"; return 0; fi
    pid_from_file "$RUN_DIR/$name.pid" >/dev/null || { tail -n 30 "$RUN_DIR/logs/$name.log" >&2; die "$name exited"; }
    sleep 0.5
  done
  tail -n 30 "$RUN_DIR/logs/$name.log" >&2
  die "$name not ready after 60 s"
}

case "${1:-}" in
  up)
    cd "$ROOT"
    ensure_database
    # Migrations once, before the processes start (as a Kubernetes job would).
    node cli/src/main.ts migrate
    export MIGRATE=false
    i=0
    for s in "${BACKENDS[@]}"; do start_one "$s" $((HEALTH_BASE + i)); i=$((i + 1)); done
    i=0
    for s in "${BACKENDS[@]}"; do wait_ready "$s" "http://127.0.0.1:$((HEALTH_BASE + i))/readyz"; i=$((i + 1)); done
    start_one gateway $((HEALTH_BASE + ${#BACKENDS[@]}))
    wait_ready gateway "http://127.0.0.1:${PORT:-8080}/readyz"
    echo "public API   http://127.0.0.1:${PORT:-8080}"
    echo "utility API  http://127.0.0.1:${UTILITY_PORT:-8081}"
    echo "portal       http://127.0.0.1:${PORTAL_PORT:-8082}"
    echo "metrics      http://127.0.0.1:$HEALTH_BASE/metrics .. :$((HEALTH_BASE + ${#BACKENDS[@]}))/metrics (gateway last)"
    echo "logs         $RUN_DIR/logs"
    ;;
  down)
    stop_pidfile "$RUN_DIR/gateway.pid" gateway 30 "services/gateway/src/main.ts"
    for s in "${BACKENDS[@]}"; do stop_pidfile "$RUN_DIR/$s.pid" "$s" 30 "services/$s/src/main.ts"; done
    ;;
  status)
    rc=0
    for s in "${BACKENDS[@]}" gateway; do
      if pid="$(pid_from_file "$RUN_DIR/$s.pid" "services/$s/src/main.ts")"; then echo "$s running (pid $pid)"; else echo "$s stopped"; rc=1; fi
    done
    exit $rc
    ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
