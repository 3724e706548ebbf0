#!/usr/bin/env bash
# npm stop: stops what npm start started (processors first, so they hand over cleanly), then
# the broker. PostgreSQL is the machine's and stays up.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
run=.local/run
for name in processor-2 processor-1 admin-1; do
  pidfile="$run/$name.pid"
  [[ -f "$pidfile" ]] || continue
  pid="$(cat "$pidfile")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    echo "$name stopped"
  fi
  rm -f "$pidfile"
done
npm run --silent kafka:down
