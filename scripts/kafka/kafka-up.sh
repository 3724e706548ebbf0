#!/usr/bin/env bash
# Starts the local KRaft broker (docs/design.md §8): one node by default, or a cluster of
# KAFKA_NODES combined nodes (node i on KAFKA_PORT + 2(i-1) and KAFKA_CONTROLLER_PORT + 2(i-1)).
# Idempotent: reuses the jar cache, the formatted data dirs and every node already running, and
# brings back whichever nodes are down. Prints the bootstrap list and writes it to
# $SLUICE_KAFKA_HOME/bootstrap.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-lib.sh"

say() { printf '[kafka:up] %s\n' "$*"; }

mkdir -p "$home"
if [[ -f "$home/nodes" && -n "${KAFKA_NODES:-}" && "$KAFKA_NODES" != "$(cat "$home/nodes")" ]]; then
  say "$home holds a cluster of $(cat "$home/nodes") node(s), not $KAFKA_NODES; run kafka:down and remove it first"
  exit 1
fi
nodes="$(cluster_size)"
if ! [[ "$nodes" =~ ^[1-9][0-9]*$ ]]; then
  say "KAFKA_NODES must be a positive number, not $nodes"
  exit 1
fi

secure=""
case "${SLUICE_KAFKA_SECURE:-}" in
  1 | true) secure=yes ;;
  "" | 0 | false) ;;
  *)
    say "SLUICE_KAFKA_SECURE must be 1 or 0, not $SLUICE_KAFKA_SECURE"
    exit 1
    ;;
esac
if [[ -n "$secure" ]]; then
  if [[ "$nodes" -ne 1 ]]; then
    say "SLUICE_KAFKA_SECURE=1 makes a single secured node; it cannot be combined with KAFKA_NODES=$nodes"
    exit 1
  fi
  source "$here/kafka-secure.sh"
  if [[ -f "$home/data/meta.properties" && "$(cat "$home/secure/.complete" 2>/dev/null)" != "$secure_version" ]]; then
    say "$home was formatted without SLUICE_KAFKA_SECURE or with older users (they are made at format time); run kafka:down and remove it first"
    exit 1
  fi
  secure_material
fi

# The cache is complete for the pom.xml it was fetched with; a changed pom fetches again.
pom_sum="$(sha256sum "$here/pom.xml" | cut -d' ' -f1)"
if [[ ! -f "$libs/.complete" || "$(cat "$libs/.complete")" != "$pom_sum" ]]; then
  say "fetching the broker's jars from Maven Central into $libs (once)"
  rm -rf "$libs"
  mkdir -p "$(dirname "$libs")"
  mvn -B -Dstyle.color=never -f "$here/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$libs" >"$home/maven.log" 2>&1 || {
    say "Maven could not fetch the broker; see $home/maven.log"
    tail -n 20 "$home/maven.log" >&2
    exit 1
  }
  say "$(find "$libs" -name '*.jar' | wc -l) jars cached"
  echo "$pom_sum" >"$libs/.complete"
fi

classpath="$libs/*"
# KAFKA_LOG4J_CONFIG: another logging setup (the evidence runs log the transaction coordinator).
java_opts=(-Xms256m "-Xmx${KAFKA_HEAP_MAX:-1g}" -XX:+UseG1GC -XX:MaxGCPauseMillis=20
  -Djava.awt.headless=true "-Dlog4j2.configurationFile=${KAFKA_LOG4J_CONFIG:-$here/log4j2.properties}")

if [[ "$nodes" -eq 1 ]]; then
  quorum="controller.quorum.bootstrap.servers=127.0.0.1:$(node_controller_port 1)"
  replication=1 min_isr=1
else
  voters=""
  for n in $(seq 1 "$nodes"); do voters="${voters:+$voters,}$n@127.0.0.1:$(node_controller_port "$n")"; done
  quorum="controller.quorum.voters=$voters"
  replication=$((nodes < 3 ? nodes : 3)) min_isr=$((nodes < 3 ? 1 : 2))
fi

# One cluster id for every node; kept so that a node formatted later joins the same cluster.
if [[ ! -f "$home/cluster-id" ]]; then
  java -cp "$classpath" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1 >"$home/cluster-id"
fi
cluster_id="$(cat "$home/cluster-id")"
echo "$nodes" >"$home/nodes"

start_node() {
  local n="$1" dir port cport props
  dir="$(node_dir "$n")" port="$(node_port "$n")" cport="$(node_controller_port "$n")"
  props="$dir/server.properties"
  mkdir -p "$dir"
  if pid="$(node_pid "$n")"; then
    say "node $n already running (pid $pid) on 127.0.0.1:$port"
    return 0
  fi
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    say "port $port is taken by a process that is not this project's broker; stop it or set KAFKA_PORT"
    exit 1
  fi
  sed -e "s|@NODE_ID@|$n|" -e "s|@QUORUM@|$quorum|" -e "s|@DATA_DIR@|$dir/data|" \
    -e "s|@PORT@|$port|" -e "s|@CONTROLLER_PORT@|$cport|" -e "s|@REPLICATION@|$replication|" \
    -e "s|@MIN_ISR@|$min_isr|" "$here/server.properties.template" >"$props"
  [[ -n "$secure" ]] && secure_properties "$props" "$port" "$cport"
  if [[ ! -f "$dir/data/meta.properties" ]]; then
    say "formatting KRaft storage of node $n in $dir/data"
    local standalone=() scram=()
    [[ "$nodes" -eq 1 ]] && standalone=(--standalone)
    if [[ -n "$secure" ]]; then
      # Not through a process substitution: a failure here must stop the format, not drop the users.
      local format_args
      format_args="$(secure_format_args)"
      mapfile -t scram <<<"$format_args"
    fi
    java "${java_opts[@]}" -cp "$classpath" kafka.tools.StorageTool format \
      -t "$cluster_id" -c "$props" "${standalone[@]}" "${scram[@]}" >>"$dir/broker.log" 2>&1
  fi
  say "starting node $n on 127.0.0.1:$port (log: $dir/broker.log)"
  # setsid: the broker outlives this script and the npm process that ran it.
  setsid nohup java "${java_opts[@]}" -cp "$classpath" kafka.Kafka "$props" >>"$dir/broker.log" 2>&1 </dev/null &
  echo $! >"$dir/broker.pid"
}

for n in $(seq 1 "$nodes"); do start_node "$n"; done

bootstrap="$(bootstrap_list)"
echo "$bootstrap" >"$home/bootstrap"
# log4j2 without a config file would print its own warning; the client logs nothing useful here.
java -Xmx128m -Dlog4j2.level=OFF -Dlog4j2.statusLoggerLevel=OFF -cp "$libs/*" "$here/WaitReady.java" \
  "$bootstrap" "${KAFKA_READY_TIMEOUT_SECONDS:-90}" "$nodes" || {
  for n in $(seq 1 "$nodes"); do
    say "the cluster did not become ready; last lines of $(node_dir "$n")/broker.log:"
    tail -n 20 "$(node_dir "$n")/broker.log" >&2 || true
  done
  exit 1
}
if [[ -n "$secure" ]]; then
  secure_acls
  # Beside bootstrap, where a client looks first; the certificates and passwords stay in secure/.
  cp "$secure_dir/secure.env" "$home/secure.env"
  say "secured: SASL_SSL on 127.0.0.1:$secure_port, mTLS on 127.0.0.1:$mtls_port; a client's settings are in $home/secure.env"
fi
pids=""
for n in $(seq 1 "$nodes"); do pids="${pids:+$pids, }$(node_pid "$n" || echo '?')"; done
say "ready (pid $pids); bootstrap $bootstrap"
