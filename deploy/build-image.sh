#!/usr/bin/env bash
# Builds the Stowage node image (deploy/Dockerfile) as stowage:local, with podman, or docker where
# that is what the machine has. From anywhere:
#   deploy/build-image.sh [--tag name] [--base image] [--context dir] [--no-cache]
# --context builds another source tree (an older release checked out by deploy/upgrade-check.sh)
# with this Dockerfile.
# The base: --base (or BASE_IMAGE) when given; else node:20-bookworm-slim when the registry answers;
# else one built here from Debian packages and the npm registry (deploy/base-image.sh, needs root
# and debootstrap), kept as localhost/stowage-base:node20-bookworm for the next build.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TAG="stowage:local"
BASE="${BASE_IMAGE:-}"
LOCAL_BASE="localhost/stowage-base:node20-bookworm"
CONTEXT=""
CACHE=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) TAG="$2"; shift 2 ;;
    --base) BASE="$2"; shift 2 ;;
    --context) CONTEXT="$2"; shift 2 ;;
    --no-cache) CACHE=(--no-cache); shift ;;
    *) echo "usage: $0 [--tag name] [--base image] [--context dir] [--no-cache]" >&2; exit 2 ;;
  esac
done

source "$ROOT/deploy/engine.sh"
CONTEXT="${CONTEXT:-$ROOT}"

if [ -z "$BASE" ]; then
  if "$ENGINE" image exists "$LOCAL_BASE" 2>/dev/null || "$ENGINE" image inspect "$LOCAL_BASE" >/dev/null 2>&1; then
    BASE="$LOCAL_BASE"
  elif timeout 60 "$ENGINE" pull -q node:20-bookworm-slim >/dev/null 2>&1; then
    BASE="node:20-bookworm-slim"
  else
    echo "no registry reachable: building $LOCAL_BASE from Debian packages"
    ENGINE="$ENGINE" "$ROOT/deploy/base-image.sh" "$LOCAL_BASE"
    BASE="$LOCAL_BASE"
  fi
fi

started=$(date +%s)
echo "building $TAG from $BASE with $ENGINE"
build=("$ENGINE" build "${CACHE[@]}" -f "$ROOT/deploy/Dockerfile" -t "$TAG" --build-arg "BASE_IMAGE=$BASE")
# A CA bundle the host's Node or npm trusts (a TLS-intercepting proxy in front of the npm registry).
CA="${BUILD_CA_FILE:-${NODE_EXTRA_CA_CERTS:-}}"
if [ -z "$CA" ] && command -v npm >/dev/null; then CA="$(npm config get cafile 2>/dev/null || true)"; fi
if [ -n "$CA" ] && [ "$CA" != null ] && [ -s "$CA" ]; then build+=(--secret "id=ca,src=$CA"); fi
if [ "$(basename "$ENGINE")" = podman ]; then
  # Docker's image format keeps the HEALTHCHECK (OCI has no field for it); the host network reaches
  # the Debian mirror and the npm registry without a bridge.
  build+=(--format docker --network host --ignorefile "$ROOT/deploy/Dockerfile.dockerignore")
else
  build+=(--network host)
fi
"${build[@]}" "$CONTEXT"
size=$("$ENGINE" image inspect "$TAG" --format '{{.Size}}')
echo "built $TAG: $((size / 1000000)) MB in $(( $(date +%s) - started )) s"
