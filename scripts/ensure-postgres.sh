#!/usr/bin/env bash
# Starts the machine's PostgreSQL cluster if it is not answering on 127.0.0.1:5432.
set -euo pipefail
if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  exit 0
fi
if ! command -v pg_ctlcluster >/dev/null; then
  echo "[postgres] PostgreSQL is not answering on 127.0.0.1:5432 and pg_ctlcluster is not installed" >&2
  exit 1
fi
version="$(ls /etc/postgresql | sort -V | tail -n 1)"
echo "[postgres] starting cluster $version/main"
pg_ctlcluster --skip-systemctl-redirect "$version" main start
for _ in $(seq 1 60); do
  pg_isready -q -h 127.0.0.1 -p 5432 && exit 0
  sleep 0.5
done
echo "[postgres] did not become ready" >&2
exit 1
