#!/usr/bin/env bash
# Stops exactly the broker (or every node of the cluster) that kafka-up.sh started, waiting
# for each to shut down cleanly.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-lib.sh"

say() { printf '[kafka:down] %s\n' "$*"; }

stop_node() {
  local n="$1" dir pid label
  dir="$(node_dir "$n")"
  label="the broker"
  [[ "$(cluster_size)" -gt 1 ]] && label="node $n"
  if [[ ! -f "$dir/broker.pid" ]]; then
    say "no pid file for $label; nothing to stop"
    return 0
  fi
  if ! pid="$(node_pid "$n")"; then
    say "$label is not running any more; removing the stale pid file"
    rm -f "$dir/broker.pid"
    return 0
  fi
  say "stopping $label (pid $pid)"
  kill -TERM "$pid"
  # A controlled shutdown flushes logs and writes a clean-shutdown marker; give it time.
  for _ in $(seq 1 300); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    say "$label still running after 30 s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/broker.pid"
  say "stopped"
}

# Every node is asked at once: a node of a cluster waits for its peers while it shuts down.
for n in $(seq 1 "$(cluster_size)"); do stop_node "$n" & done
wait
