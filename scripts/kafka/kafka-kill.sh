#!/usr/bin/env bash
# npm run kafka:kill -- --node N: SIGKILLs node N of the local cluster (no controlled shutdown),
# as a crash or a pulled plug would; `npm run kafka:up` brings it back.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-lib.sh"

node=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --node) node="${2:-}"; shift 2 ;;
    --node=*) node="${1#--node=}"; shift ;;
    *) echo "[kafka:kill] unknown argument $1 (usage: kafka:kill -- --node N)" >&2; exit 2 ;;
  esac
done
nodes="$(cluster_size)"
if ! [[ "$node" =~ ^[0-9]+$ ]] || [[ "$node" -lt 1 || "$node" -gt "$nodes" ]]; then
  echo "[kafka:kill] --node must be 1 to $nodes" >&2
  exit 2
fi
if ! pid="$(node_pid "$node")"; then
  echo "[kafka:kill] node $node is not running"
  exit 0
fi
kill -KILL "$pid"
while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
rm -f "$(node_dir "$node")/broker.pid"
echo "[kafka:kill] node $node (pid $pid) killed"
