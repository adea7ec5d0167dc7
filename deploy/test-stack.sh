#!/usr/bin/env bash
# Runs the stack of deploy/docker-compose.yml on this host with podman (or docker) on the host
# network, and a smoke inside it (`npm run test:deploy`):
#   PostgreSQL, Redis, nginx: Debian packages in a stand-in image (deploy/standins/Containerfile);
#   S3: s3rver; two Stowage nodes from stowage:local with deploy/stowage.env (its addresses
#   replaced by this host's), nginx with deploy/nginx.conf in front.
# Then: `stowage migrate`, the nodes' health checks, deploy/smoke.mjs (upload on one node, read
# and transform on the other, a document conversion, the dashboard through the proxy),
# `stowage doctor` in a node's container, one /metrics per node; and the upgrade
# (deploy/upgrade-check.sh) unless --no-upgrade. Everything it started is removed at the end.
#   deploy/test-stack.sh [--no-upgrade] [--keep]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/deploy/engine.sh"
source "$ROOT/deploy/stack-lib.sh"

UPGRADE=1
KEEP=0
for arg in "$@"; do
  case "$arg" in
    --no-upgrade) UPGRADE=0 ;;
    --keep) KEEP=1 ;;
    *) echo "usage: $0 [--no-upgrade] [--keep]" >&2; exit 2 ;;
  esac
done

started=$(date +%s)
stack_init
trap 'stack_down' EXIT
image_exists "$IMAGE" || "$ROOT/deploy/build-image.sh" --tag "$IMAGE"
build_standins

start_services
migrate_with "$IMAGE" stowage
step "schema migrated"
start_node node1 "$IMAGE" "$P_NODE1" stowage
start_node node2 "$IMAGE" "$P_NODE2" stowage
wait_ready node1 "$P_NODE1"
wait_ready node2 "$P_NODE2"
for n in node1 node2; do
  "$ENGINE" healthcheck run "$(cname "$n")" >/dev/null || fail "$n: the image's HEALTHCHECK failed"
done
step "both nodes ready; the image's HEALTHCHECK passes on each"
start_proxy
wait_ready proxy "$P_PROXY"
step "nginx (deploy/nginx.conf) in front of both nodes"

project_keys node1 "$WORK/keys.json"
surfaces_json "$WORK/surfaces.json" a "$P_NODE1" b "$P_NODE2" proxy "$P_PROXY"
node "$ROOT/deploy/smoke.mjs" "$WORK/keys.json" "$WORK/surfaces.json"

doctor=$("$ENGINE" exec "$(cname node1)" node bin/stowage.js doctor --json)
echo "$doctor" | node -e '
  const checks = JSON.parse(require("fs").readFileSync(0, "utf8"));
  const bad = checks.filter((c) => c.status === "failed");
  const want = ["database", "blob store", "redis", "ffmpeg", "libreoffice", "tool sandbox"];
  const notOk = want.filter((n) => checks.find((c) => c.name === n)?.status !== "ok");
  for (const c of checks) console.log(`     doctor: ${c.status.padEnd(7)} ${c.name}: ${c.detail}`);
  if (bad.length || notOk.length) { console.error("FAIL doctor:", bad.map((c) => c.name), notOk); process.exit(1); }'
step "stowage doctor in the container: PostgreSQL, S3, Redis, ffmpeg, LibreOffice, the tool sandbox ok"

check_metrics "$P_NODE1"
step "/metrics once per node (REST port), not on Upload or the CDN"

if [ "$UPGRADE" = 1 ]; then
  source "$ROOT/deploy/upgrade-check.sh"
  upgrade_check
fi
echo "stack test passed in $(( $(date +%s) - started )) s"
