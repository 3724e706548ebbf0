#!/usr/bin/env bash
# Stops exactly the broker that kafka-up.sh started, waiting for a clean shutdown.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
home="${SLUICE_KAFKA_HOME:-$root/.local/kafka}"
pidfile="$home/broker.pid"
props="$home/server.properties"

say() { printf '[kafka:down] %s\n' "$*"; }

if [[ ! -f "$pidfile" ]]; then
  say "no broker pid file; nothing to stop"
  exit 0
fi
pid="$(cat "$pidfile")"
if ! kill -0 "$pid" 2>/dev/null || ! tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "kafka.Kafka $props"; then
  say "pid $pid is not our broker any more; removing the stale pid file"
  rm -f "$pidfile"
  exit 0
fi

say "stopping the broker (pid $pid)"
kill -TERM "$pid"
# A controlled shutdown flushes logs and writes a clean-shutdown marker; give it time.
for _ in $(seq 1 300); do
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
  say "still running after 30 s; sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
fi
rm -f "$pidfile"
say "stopped"
