#!/usr/bin/env bash
# The whole test suite: static checks, unit tests, then integration tests against the real
# broker and PostgreSQL. Starts what is missing and stops only what it started.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false
started_kafka=""
cleanup() {
  if [[ -n "$started_kafka" ]]; then npm run --silent kafka:down || true; fi
}
trap cleanup EXIT

step() { printf '\n=== %s\n' "$*"; }

step "static checks: format, lint, typecheck"
npx prettier --check . >/dev/null || { npx prettier --list-different .; echo "run: npm run format" >&2; exit 1; }
npx nx run-many -t lint typecheck --outputStyle=stream-without-prefixes

step "unit tests (the manifest tests render k8s/ with Debian's kubectl, fetched once)"
bash scripts/ensure-kubectl.sh
timeout --kill-after=30 600 npx nx run-many -t test --outputStyle=stream-without-prefixes

step "services: PostgreSQL and the local Kafka broker"
bash scripts/ensure-postgres.sh
if ! [[ -f .local/kafka/broker.pid ]] || ! kill -0 "$(cat .local/kafka/broker.pid)" 2>/dev/null; then
  started_kafka=yes
fi
npm run --silent kafka:up

step "integration tests (real Kafka, real PostgreSQL)"
# Every replica's log is kept (apps/processor/test/cluster.ts), so that a failure is printed
# with the replicas' own warnings and errors instead of only the test's expectation.
export SLUICE_TEST_LOGS="${SLUICE_TEST_LOGS:-$PWD/.local/test-logs}"
rm -rf "$SLUICE_TEST_LOGS"
# A hung test must fail the run, not hold CI until its deadline.
if ! timeout --kill-after=30 2700 npx nx run-many -t int-test --parallel=1 --outputStyle=stream-without-prefixes; then
  step "integration tests failed; the replicas' latest warnings and errors"
  npx tsx -e "process.stdout.write(require('./libs/testing/src/log-warnings').logWarnings(process.argv[1]) + '\n')" "$SLUICE_TEST_LOGS" || true
  # Last, so that a tail of the output still names what failed.
  step "integration tests failed: these tests"
  cat "$SLUICE_TEST_LOGS/failures.txt" 2>/dev/null || echo "(no failed test recorded: a run that timed out or crashed)"
  exit 1
fi

step "all tests passed"
