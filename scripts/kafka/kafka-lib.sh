# Shared by kafka-up.sh, kafka-down.sh and kafka-kill.sh (sourced, not run): where the local
# broker or cluster lives and how to tell its processes. One node (the default) keeps its files
# directly under $SLUICE_KAFKA_HOME; a cluster of N nodes (KAFKA_NODES=N at its first kafka:up,
# remembered in $SLUICE_KAFKA_HOME/nodes) keeps node i's under node-i/.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
home="${SLUICE_KAFKA_HOME:-$root/.local/kafka}"
base_port="${KAFKA_PORT:-9092}"
base_controller_port="${KAFKA_CONTROLLER_PORT:-9093}"
# The jar cache can be shared by several brokers (the restart test runs its own).
libs="${SLUICE_KAFKA_LIBS:-$home/libs}"

# The cluster's size: what it was formatted with, else KAFKA_NODES, else 1.
cluster_size() {
  if [[ -f "$home/nodes" ]]; then cat "$home/nodes"; else echo "${KAFKA_NODES:-1}"; fi
}

# Node i's folder (one node: the home itself, as before clusters existed).
node_dir() { if [[ "$(cluster_size)" -eq 1 ]]; then echo "$home"; else echo "$home/node-$1"; fi; }
node_port() { echo $((base_port + 2 * ($1 - 1))); }
node_controller_port() { echo $((base_controller_port + 2 * ($1 - 1))); }

bootstrap_list() {
  local n list=""
  for n in $(seq 1 "$(cluster_size)"); do list="${list:+$list,}127.0.0.1:$(node_port "$n")"; done
  echo "$list"
}

# The pid of node i's java process, if it runs (a stale pid file may name a recycled pid).
node_pid() {
  local dir pid
  dir="$(node_dir "$1")"
  [[ -f "$dir/broker.pid" ]] || return 1
  pid="$(cat "$dir/broker.pid")"
  if kill -0 "$pid" 2>/dev/null &&
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "kafka.Kafka $dir/server.properties"; then
    echo "$pid"
    return 0
  fi
  return 1
}
