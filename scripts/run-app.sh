#!/usr/bin/env bash
# npm run start:<app>: runs the built app, building it first when the build is missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
app="$1"
main="apps/$app/dist/main.js"
if [[ ! -f "$main" ]]; then
  echo "[start:$app] no build yet; building $app" >&2
  NX_DAEMON=false npx nx run "$app:build" --outputStyle=stream-without-prefixes >&2
fi
# The processor runs as its image does (docker/Dockerfile): a larger young generation.
if [[ "$app" == processor ]]; then export NODE_OPTIONS="${NODE_OPTIONS:---max-semi-space-size=64}"; fi
exec node "$main"
