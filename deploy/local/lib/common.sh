# shellcheck shell=bash
# Shared helpers for deploy/local/*.sh. Sourced, never executed.

EFS_CACHE_DIR="${EFS_CACHE_DIR:-$HOME/.cache/efs}"
EFS_STATE_DIR="${EFS_STATE_DIR:-$HOME/.local/state/efs}"
# shellcheck disable=SC2034 # used by the sourcing scripts
LOCAL_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

log()  { printf '[%s] %s\n' "${COMPONENT:-infra}" "$*" >&2; }
die()  { log "ERROR: $*"; exit 1; }

now_ms() { date +%s%3N; }

need_cmd() { command -v "$1" >/dev/null 2>&1 || die "'$1' is required but not on PATH"; }

# port_open HOST PORT -> 0 if something accepts TCP connections there.
port_open() {
  (exec 3<>"/dev/tcp/$1/$2") >/dev/null 2>&1
}

# pid_from_file FILE [PATTERN] -> prints the pid if the file names a live process
# (whose command line contains PATTERN, so a recycled pid is never mistaken for ours).
pid_from_file() {
  local f="$1" pattern="${2:-}" pid
  [ -f "$f" ] || return 1
  pid="$(cat "$f" 2>/dev/null)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  if [ -n "$pattern" ] && [ -r "/proc/$pid/cmdline" ]; then
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$pattern" || return 1
  fi
  printf '%s\n' "$pid"
}

# lock_start LOCKFILE: serialize concurrent `start`s of one component (released
# when the calling script exits; launch_bg keeps fd 9 away from the daemon).
lock_start() {
  mkdir -p "$(dirname "$1")"
  exec 9>"$1"
  if command -v flock >/dev/null 2>&1; then
    flock -w 300 9 || die "timed out waiting for another start to finish ($1)"
  fi
}

# launch_bg PIDFILE LOGFILE CMD... : start CMD detached (own session, no
# controlling tty, survives the calling shell/CI step) and record its pid.
launch_bg() {
  local pidfile="$1" logfile="$2"; shift 2
  rm -f "$pidfile"
  # The inner shell writes its own pid and then exec's the command, so the pid
  # in the file is the JVM's pid whatever job-control mode the caller is in.
  # shellcheck disable=SC2016 # $$ / $@ are meant for the inner shell
  PIDFILE="$pidfile" nohup setsid bash -c 'echo $$ > "$PIDFILE"; exec "$@"' _ "$@" \
    >>"$logfile" 2>&1 </dev/null 9>&- &
  local i
  for i in $(seq 1 50); do [ -s "$pidfile" ] && return 0; sleep 0.1; done
  die "process did not record its pid in $pidfile"
}

# stop_pidfile PIDFILE NAME GRACE_SECONDS PATTERN: SIGTERM, wait, SIGKILL after grace.
stop_pidfile() {
  local pidfile="$1" name="$2" grace="${3:-30}" pattern="${4:-}" pid i
  if ! pid="$(pid_from_file "$pidfile" "$pattern")"; then
    rm -f "$pidfile"
    log "$name is not running (no live pid in $pidfile)"
    return 0
  fi
  log "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < grace * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "$name did not exit within ${grace}s, sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$pidfile"
  log "$name stopped"
}

# mvn_resolve GOAL POM OUTDIR [extra mvn args...]: run maven-dependency-plugin's
# GOAL (copy-dependencies: the POM's runtime dependency closure; unpack: the
# POM's configured artifactItems) into OUTDIR, atomically (tmp dir + rename, marker file .complete), so an
# interrupted download is redone next time and a complete one is never redone.
mvn_resolve() {
  local goal="$1" pom="$2" out="$3"; shift 3
  [ -f "$out/.complete" ] && return 0
  need_cmd mvn
  local tmp="$out.tmp.$$"
  rm -rf "$tmp"; mkdir -p "$tmp" "$(dirname "$out")"
  log "resolving $(basename "$(dirname "$pom")") artifacts from Maven Central into $out (first run only)"
  local t0; t0="$(now_ms)"
  if ! mvn -B -q -f "$pom" "$@" \
      "dependency:$goal" -DincludeScope=runtime -DoutputDirectory="$tmp" \
      -Defs.build.dir="$tmp.build" >"$tmp.mvn.log" 2>&1; then
    tail -n 40 "$tmp.mvn.log" >&2
    rm -rf "$tmp" "$tmp.mvn.log" "$tmp.build"
    die "maven resolution failed for $pom"
  fi
  rm -rf "$tmp.mvn.log" "$tmp.build"
  touch "$tmp/.complete"
  rm -rf "$out"; mv "$tmp" "$out"
  log "resolved in $(( ($(now_ms) - t0) / 1000 ))s"
}

show_log_tail() {
  local f="$1" n="${2:-60}"
  [ -f "$f" ] || return 0
  log "---- last $n lines of $f ----"
  tail -n "$n" "$f" >&2
  log "---- end of $f ----"
}

# pom_tag POM: short content hash, so editing a pom (versions, bindings) lands in a
# fresh cache directory instead of silently reusing jars resolved for the old one.
pom_tag() {
  sha256sum "$1" | cut -c1-8
}

# java_bin: prints the java to use ($JAVA_HOME/bin/java if set, else PATH) after
# checking it is Java 17+ (Kafka 4.x brokers and Apicurio 3.0 need 17).
java_bin() {
  local j="${JAVA_HOME:+$JAVA_HOME/bin/}java" v major
  command -v "$j" >/dev/null 2>&1 || die "java not found (install a JDK 17+ or set JAVA_HOME)"
  v="$("$j" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n1)"
  major="${v%%.*}"; [ "$major" = 1 ] && major=8
  if ! [[ "$major" =~ ^[0-9]+$ ]] || (( major < 17 )); then
    die "java '$v' is too old: Java 17+ required ($j)"
  fi
  printf '%s\n' "$j"
}

# ---- The lifecycle of one background JVM (kafka.sh, registry.sh) ----
# The sourcing script sets COMPONENT, COMPONENT_VERSION, STATE, PIDFILE, LOGFILE, MATCH (a
# string its JVM's command line contains), LISTEN_HOST and LISTEN_PORT (where it listens), WHERE
# (where it answers, as the log says it: "on host:port", "at url"), SHOWN (the same for `status`:
# "addr=...", "url=..."), FOREIGN (what a process on LISTEN_PORT that is not it fails to do) and
# WAIT_TIMEOUT, and defines
#   ready         0 once it serves
#   prepare       what comes before the launch: resolve artifacts, write configuration
#   launch        logs and starts the JVM with launch_bg "$PIDFILE" ...
#   startup_logs  what to show when it does not become ready

# wait_ready TIMEOUT [PID]: 0 once ready; 1 at the timeout or as soon as PID exits.
wait_ready() {
  local timeout="$1" pid="${2:-}" deadline
  deadline=$(( $(date +%s) + timeout ))
  while (( $(date +%s) < deadline )); do
    if ready; then return 0; fi
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      log "$COMPONENT process $pid exited during startup"
      return 1
    fi
    sleep 0.5
  done
  return 1
}

# component_start: idempotent; returns once it serves (ours or one already answering on LISTEN_PORT).
component_start() {
  local pid t0
  lock_start "$STATE/.start.lock"
  if pid="$(pid_from_file "$PIDFILE" "$MATCH")"; then
    if wait_ready "$WAIT_TIMEOUT" "$pid"; then
      log "already running (pid $pid) $WHERE"; return 0
    fi
    show_log_tail "$LOGFILE"; die "$COMPONENT (pid $pid) is running but not ready $WHERE"
  fi
  if port_open "$LISTEN_HOST" "$LISTEN_PORT"; then
    if wait_ready 15; then log "already answering $WHERE (not started by this script)"; return 0; fi
    die "$LISTEN_HOST:$LISTEN_PORT is taken by something that $FOREIGN"
  fi
  prepare
  t0="$(now_ms)"
  launch
  pid="$(cat "$PIDFILE")"
  echo "$COMPONENT_VERSION" >"$STATE/$COMPONENT.version"
  if ! wait_ready "$WAIT_TIMEOUT" "$pid"; then
    startup_logs
    stop_pidfile "$PIDFILE" "$COMPONENT" 10 "$MATCH" # leave nothing half-started behind
    die "$COMPONENT did not become ready $WHERE within ${WAIT_TIMEOUT}s"
  fi
  log "ready $WHERE (pid $pid) after $(( ($(now_ms) - t0) / 1000 ))s"
}

component_status() {
  local pid
  if pid="$(pid_from_file "$PIDFILE" "$MATCH")"; then
    if ready; then echo "$COMPONENT: running pid=$pid $SHOWN version=$(cat "$STATE/$COMPONENT.version" 2>/dev/null || echo "$COMPONENT_VERSION")"; return 0; fi
    echo "$COMPONENT: starting/unhealthy pid=$pid $SHOWN"; return 3
  fi
  if ready; then echo "$COMPONENT: running (unmanaged) $SHOWN"; return 0; fi
  echo "$COMPONENT: stopped $SHOWN"; return 3
}

component_wait() {
  if wait_ready "${1:-$WAIT_TIMEOUT}" "$(pid_from_file "$PIDFILE" "$MATCH" || true)"; then
    log "ready $WHERE"; return 0
  fi
  show_log_tail "$LOGFILE" 40
  die "$COMPONENT not ready $WHERE"
}

# component_main "$@": the command line every component script answers.
component_main() {
  case "${1:-}" in
    start) component_start ;;
    stop) stop_pidfile "$PIDFILE" "$COMPONENT" 30 "$MATCH" ;;
    restart) stop_pidfile "$PIDFILE" "$COMPONENT" 30 "$MATCH"; component_start ;;
    status) component_status ;;
    wait) component_wait "${2:-}" ;;
    pid) pid_from_file "$PIDFILE" "$MATCH" ;;
    *) echo "usage: $0 start|stop|restart|status|wait [timeout]|pid" >&2; exit 2 ;;
  esac
}
