#!/usr/bin/env bash
# A post-mortem of a broker's transactions: dumps every log segment of the partitions whose
# directory names match the given patterns (DumpLogSegments --deep-iteration, the transaction
# log decoded), and, when a broker answers on --bootstrap, asks it for hanging transactions.
# Usage: dump-evidence.sh <data-dir> <out-dir> [--bootstrap host:port] [pattern…]
#        (patterns are extended regexes on partition directory names; default: every partition)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
libs="${SLUICE_KAFKA_LIBS:-$root/.local/kafka/libs}"
data="$1" out="$2"
shift 2
bootstrap=""
if [[ "${1:-}" == "--bootstrap" ]]; then bootstrap="$2"; shift 2; fi
patterns=("$@")
[[ ${#patterns[@]} -eq 0 ]] && patterns=(".")
mkdir -p "$out"
java_run() { java -Xmx512m -Dlog4j2.level=OFF -Dlog4j2.statusLoggerLevel=OFF -cp "$libs/*" "$@"; }

for dir in "$data"/*-[0-9]*; do
  name="$(basename "$dir")"
  matched=""
  for pattern in "${patterns[@]}"; do [[ "$name" =~ $pattern ]] && matched=yes; done
  [[ -n "$matched" ]] || continue
  segments=("$dir"/*.log)
  [[ -e "${segments[0]}" ]] || continue
  decoder=()
  [[ "$name" == __transaction_state-* ]] && decoder=(--transaction-log-decoder)
  java_run org.apache.kafka.tools.DumpLogSegments --deep-iteration --print-data-log "${decoder[@]}" \
    --files "$(IFS=,; echo "${segments[*]}")" >"$out/$name.txt" 2>&1 || true
done
if [[ -n "$bootstrap" ]]; then
  java_run org.apache.kafka.tools.TransactionsCommand --bootstrap-server "$bootstrap" \
    find-hanging --broker-id 1 >"$out/find-hanging.txt" 2>&1 || true
fi
echo "[dump-evidence] $(find "$out" -name '*.txt' | wc -l) files in $out"
