#!/bin/sh
# Lays out one app for its image under /out: the workspace's package manifests (npm needs all
# of them to read the lockfile), the app's production dependencies only, and the builds of the
# app and the libraries. Run in the Dockerfile's build stage: layout.sh admin|processor
set -eu
app="$1"
mkdir -p /out
cp package.json package-lock.json /out/
for d in libs/* apps/*; do
  mkdir -p "/out/$d"
  cp "$d/package.json" "/out/$d/"
done
for d in libs/* "apps/$app"; do
  if [ -d "$d/dist" ]; then cp -r "$d/dist" "/out/$d/"; fi
done
cp -r patches /out/patches
cd /out
npm ci --omit=dev --ignore-scripts --no-audit --no-fund --workspace "apps/$app"
# The production install runs no scripts (and has no patch-package): the build stage's applies
# patches/ to this node_modules, so the image runs the kafkajs that the tests ran.
/src/node_modules/.bin/patch-package --error-on-fail
