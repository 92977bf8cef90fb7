#!/usr/bin/env bash
# What `npm install sallyport` gives a user, made from this checkout: packs every publishable
# workspace package (`pnpm pack` rewrites workspace ranges to versions, as a publish does) and
# installs the sallyport CLI from those tarballs into DEST with plain npm, production dependencies
# only (no workspace, no dev tree, optional peers such as msw left out). The packages must be
# built first. The container image and the pack-install test both use this script.
#
#   scripts/pack-install.sh /opt/sallyport    # then: /opt/sallyport/node_modules/.bin/sallyport
set -euo pipefail
dest=${1:?usage: scripts/pack-install.sh DEST}
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(node -p "require('${root}/package.json').packageManager.split('@')[1]")
pnpm() {
  if [ "$(command pnpm --version 2>/dev/null)" = "$version" ]; then command pnpm "$@"; else npx -y "pnpm@${version}" "$@"; fi
}
tarballs=$(mktemp -d)
trap 'rm -rf "$tarballs"' EXIT
for dir in "$root"/packages/*/; do
  [ -f "${dir}package.json" ] || continue
  node -e "process.exit(require('${dir}package.json').private ? 1 : 0)" || continue
  (cd "$dir" && pnpm pack --pack-destination "$tarballs" >/dev/null)
done
mkdir -p "$dest"
[ -f "$dest/package.json" ] || printf '{ "name": "sallyport-install", "private": true }\n' >"$dest/package.json"
cd "$dest"
npm install --omit=dev --no-audit --no-fund --no-update-notifier "$tarballs"/*.tgz
