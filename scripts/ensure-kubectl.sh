#!/usr/bin/env bash
# The kubectl the manifest tests render k8s/ with: Debian's kubernetes-client package, unpacked
# under .local/kubectl (no root, no system change), fetched once. kubectl 1.20 embeds kustomize
# 2.0, so manifests that render here render with every later kubectl too.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
target=.local/kubectl
if [[ -x "$target/usr/bin/kubectl" ]]; then exit 0; fi
mkdir -p "$target/deb"
echo "[kubectl] fetching Debian's kubernetes-client package"
(cd "$target/deb" && apt-get download kubernetes-client >/dev/null 2>&1) || {
  echo "[kubectl] apt-get download kubernetes-client failed (is Debian's package index reachable?)" >&2
  exit 1
}
dpkg-deb -x "$target"/deb/kubernetes-client_*.deb "$target"
rm -rf "$target/deb"
"$target/usr/bin/kubectl" version --client 2>/dev/null | head -n 1
