#!/usr/bin/env bash
# Debian packages some tests use. Idempotent; a no-op when everything is present.
set -euo pipefail
need=()
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
# A real browser for the CORS contract of /mcp (packages/peer-tests); Debian's build, never a download.
[ -x /usr/bin/chromium ] || need+=(chromium)
# The container image test (packages/cli): an engine and debootstrap for the registry-free base.
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
# The scale-out harness (packages/cli): a real load balancer in front of several gateways.
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "install-system-deps: missing ${need[*]} and cannot apt-get install; tests that need them will fail" >&2
  fi
fi
# Start an engine for the image test when none answers (root only; a no-op otherwise).
bash "$(dirname "$0")/image/ensure-engine.sh"
