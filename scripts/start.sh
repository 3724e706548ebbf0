#!/usr/bin/env bash
# The main job on a fresh machine: services up and the database ready.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/ensure-postgres.sh
npm run --silent kafka:up
npm run --silent db:migrate
cat <<MSG

Sluice's services are up:
  Kafka       127.0.0.1:${KAFKA_PORT:-9092}  (log: .local/kafka/broker.log)
  PostgreSQL  ${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/sluice}
Stop the broker with: npm run kafka:down
MSG
