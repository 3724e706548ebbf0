#!/usr/bin/env bash
# Starts the local single-node KRaft broker (docs/design.md §8). Idempotent: reuses the jar cache, the
# formatted data dir and a broker that is already running.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
home="${SLUICE_KAFKA_HOME:-$root/.local/kafka}"
port="${KAFKA_PORT:-9092}"
controller_port="${KAFKA_CONTROLLER_PORT:-9093}"
# The jar cache can be shared by several brokers (the restart test runs its own).
libs="${SLUICE_KAFKA_LIBS:-$home/libs}"
data="$home/data"
pidfile="$home/broker.pid"
logfile="$home/broker.log"
props="$home/server.properties"

say() { printf '[kafka:up] %s\n' "$*"; }

broker_pid() {
  [[ -f "$pidfile" ]] || return 1
  local pid
  pid="$(cat "$pidfile")"
  # A stale pid file may name a recycled pid: check that it is our java process.
  if kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "kafka.Kafka $props"; then
    echo "$pid"
    return 0
  fi
  return 1
}

wait_ready() {
  # log4j2 without a config file would print its own warning; the client logs nothing useful here.
  java -Xmx128m -Dlog4j2.level=OFF -Dlog4j2.statusLoggerLevel=OFF -cp "$libs/*" "$here/WaitReady.java" \
    "127.0.0.1:$port" "${KAFKA_READY_TIMEOUT_SECONDS:-90}" || {
    say "the broker did not become ready; last lines of $logfile:"
    tail -n 40 "$logfile" >&2 || true
    exit 1
  }
}

mkdir -p "$home"

if pid="$(broker_pid)"; then
  say "already running (pid $pid) on 127.0.0.1:$port"
  wait_ready
  exit 0
fi

if [[ ! -f "$libs/.complete" ]]; then
  say "fetching the broker's jars from Maven Central into $libs (once)"
  rm -rf "$libs"
  mvn -B -Dstyle.color=never -f "$here/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$libs" >"$home/maven.log" 2>&1 || {
    say "Maven could not fetch the broker; see $home/maven.log"
    tail -n 20 "$home/maven.log" >&2
    exit 1
  }
  say "$(find "$libs" -name '*.jar' | wc -l) jars cached"
  touch "$libs/.complete"
fi

if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  say "port $port is taken by a process that is not this project's broker; stop it or set KAFKA_PORT"
  exit 1
fi

sed -e "s|@DATA_DIR@|$data|" -e "s|@PORT@|$port|" -e "s|@CONTROLLER_PORT@|$controller_port|" \
  "$here/server.properties.template" >"$props"

classpath="$libs/*"
java_opts=(-Xms256m "-Xmx${KAFKA_HEAP_MAX:-1g}" -XX:+UseG1GC -XX:MaxGCPauseMillis=20
  -Djava.awt.headless=true "-Dlog4j2.configurationFile=$here/log4j2.properties")

if [[ ! -f "$data/meta.properties" ]]; then
  say "formatting KRaft storage in $data"
  cluster_id="$(java -cp "$classpath" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1)"
  java "${java_opts[@]}" -cp "$classpath" kafka.tools.StorageTool format \
    -t "$cluster_id" -c "$props" --standalone >>"$logfile" 2>&1
fi

say "starting the broker on 127.0.0.1:$port (log: $logfile)"
# setsid: the broker outlives this script and the npm process that ran it.
setsid nohup java "${java_opts[@]}" -cp "$classpath" kafka.Kafka "$props" >>"$logfile" 2>&1 </dev/null &
echo $! >"$pidfile"
wait_ready
say "ready (pid $(cat "$pidfile"))"
