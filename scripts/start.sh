#!/usr/bin/env bash
# npm start: a running Sluice on this machine in a few minutes. Brings up Kafka and PostgreSQL,
# migrates the database, builds and starts the admin and two processors, applies the
# daily-revenue example, produces a week of sample orders and prints the results as they
# arrive. Everything keeps running afterwards; `npm stop` stops it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

run=.local/run
mkdir -p "$run"
export NX_DAEMON=false NX_TUI=false
export KAFKA_BROKERS="${KAFKA_BROKERS:-127.0.0.1:9092}"
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/sluice}"
export ADMIN_PORT="${ADMIN_PORT:-3900}"
export SLUICE_URL="http://127.0.0.1:$ADMIN_PORT"
orders="${SLUICE_DEMO_ORDERS:-50000}"

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

step "PostgreSQL and the local Kafka broker"
bash scripts/ensure-postgres.sh
npm run --silent kafka:up

step "database: create and migrate"
npm run --silent db:migrate

step "build the admin, the processor and the CLI"
npx nx run-many -t build -p admin processor cli --outputStyle=stream-without-prefixes >/dev/null
echo "built"

# The token is made once and kept out of the repository (.local is git-ignored).
if [[ ! -s .local/admin-token ]]; then
  node -e "process.stdout.write(require('node:crypto').randomBytes(24).toString('hex'))" >.local/admin-token
  chmod 600 .local/admin-token
fi
export SLUICE_ADMIN_TOKEN="$(cat .local/admin-token)"

running() { [[ -f "$run/$1.pid" ]] && kill -0 "$(cat "$run/$1.pid")" 2>/dev/null; }
launch() { # name, then environment assignments
  local name="$1"
  shift
  if running "$name"; then
    echo "$name is already running (pid $(cat "$run/$name.pid"))"
    return
  fi
  env "$@" setsid node "apps/${name%-*}/dist/main.js" >"$run/$name.log" 2>&1 &
  echo $! >"$run/$name.pid"
  echo "$name started (pid $!, log $run/$name.log)"
}
wait_for() { # url, what
  for _ in $(seq 1 120); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.5
  done
  echo "$2 did not become ready; see the logs in $run/" >&2
  exit 1
}

step "start the admin and two processors"
launch admin-1 LOG_LEVEL=info
launch processor-1 PROCESSOR_ID=processor-1 METRICS_PORT=9464
launch processor-2 PROCESSOR_ID=processor-2 METRICS_PORT=9465
wait_for "$SLUICE_URL/health/ready" "the admin"
wait_for "http://127.0.0.1:9464/health" "processor-1"
wait_for "http://127.0.0.1:9465/health" "processor-2"

step "apply the daily-revenue example"
npx sluice apply -f examples/daily-revenue/pipeline.yaml

if [[ -f "$run/demo-orders-produced" ]]; then
  step "sample orders"
  echo "already produced by an earlier npm start; their days have closed, so sending them again"
  echo "would put them on daily_revenue.late. Results so far:"
  npx sluice tail daily_revenue --from-beginning --idle-exit 3
else
  step "produce $orders sample orders (a week of them, to the topic 'events')"
  node scripts/demo/generate-orders.mjs "$orders" "$run/orders.jsonl"
  npx sluice produce -f "$run/orders.jsonl" -t events
  touch "$run/demo-orders-produced"
  step "daily revenue per currency, as each day's window closes (the last one after 10 s of quiet)"
  # 7 days × 3 currencies; --idle-exit only guards against waiting forever.
  npx sluice tail daily_revenue --from-beginning --max 21 --idle-exit 90
fi

cat <<MSG

$(printf '\033[1m')Sluice is running.$(printf '\033[0m')
  Admin API     $SLUICE_URL/api/v1/pipelines   (docs: $SLUICE_URL/docs)
  Metrics       $SLUICE_URL/metrics, http://127.0.0.1:9464/metrics, http://127.0.0.1:9465/metrics
  Admin token   .local/admin-token
  Logs          $run/*.log

Try the CLI (in this directory):
  export SLUICE_ADMIN_TOKEN=\$(cat .local/admin-token)
  npx sluice get
  npx sluice stats --watch
  npx sluice apply -R -f examples/
  npx sluice tail daily_revenue --from-beginning

Stop everything with: npm stop
MSG
