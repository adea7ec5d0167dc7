# Sourced by the deploy/ scripts: picks the container engine and, for podman, the settings these
# hosts need (deploy/podman/containers.conf) without touching /etc.
if [ -z "${ENGINE:-}" ]; then
  ENGINE="$(command -v podman || command -v docker || true)"
fi
if [ -z "$ENGINE" ]; then
  echo "neither podman nor docker is installed" >&2
  exit 1
fi
if [ "$(basename "$ENGINE")" = podman ] && [ -z "${CONTAINERS_CONF:-}" ]; then
  export CONTAINERS_CONF="$ROOT/deploy/podman/containers.conf"
fi
