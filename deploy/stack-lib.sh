# Functions of deploy/test-stack.sh and deploy/upgrade-check.sh (sourced after deploy/engine.sh).
# Every container and volume is named after $PREFIX, recorded, and removed by stack_down.

stack_init() {
  IMAGE="${STOWAGE_IMAGE:-stowage:local}"
  PREFIX="${STACK_PREFIX:-stowage-stack}"
  local base="${STACK_PORT_BASE:-28000}"
  P_PG=$((base + 432)); P_REDIS=$((base + 379)); P_S3=$((base + 900))
  P_NODE1=$((base + 80)); P_NODE2=$((base + 180)); P_PROXY=$((base + 280)); P_OLD=$((base + 380)); P_NEW=$((base + 480))
  WORK="$(mktemp -d /tmp/stowage-stack.XXXXXX)"
  CONTAINERS=(); VOLUMES=()
  STANDINS="localhost/stowage-standins:bookworm"
  # A container left by an interrupted run would hold the ports.
  for c in postgres redis s3 node1 node2 proxy old new; do "$ENGINE" rm -f "$PREFIX-$c" >/dev/null 2>&1 || true; done
  for v in node1 node2 old new; do "$ENGINE" volume rm -f "$PREFIX-$v" >/dev/null 2>&1 || true; done
}

step() { echo "ok   $*"; }
fail() { echo "FAIL $*" >&2; exit 1; }
cname() { echo "$PREFIX-$1"; }
image_exists() { "$ENGINE" image inspect "$1" >/dev/null 2>&1; }

# Podman runs health checks from systemd timers, which these hosts lack: `healthcheck run` instead.
run_flags() {
  if [ "$(basename "$ENGINE")" = podman ]; then echo "--network=host --health-interval=disable"; else echo "--network=host"; fi
}

run_detached() {
  local name="$1"; shift
  CONTAINERS+=("$(cname "$name")")
  # shellcheck disable=SC2046
  "$ENGINE" run -d --name "$(cname "$name")" $(run_flags) "$@" >/dev/null 2> >(quiet_systemd)
}

# Podman's complaint that it cannot schedule health checks without systemd (they are run by hand).
quiet_systemd() { grep -v 'unable to get systemd connection' >&2 || true; }

stack_down() {
  local status=$?
  if [ "$status" != 0 ]; then
    for c in "${CONTAINERS[@]}"; do
      echo "--- last log lines of $c" >&2
      "$ENGINE" logs --tail 15 "$c" 2>&1 | cut -c1-400 >&2 || true
    done
  fi
  if [ "${KEEP:-0}" = 1 ]; then echo "kept: ${CONTAINERS[*]}"; return; fi
  for c in "${CONTAINERS[@]}"; do "$ENGINE" rm -f -t 5 "$c" >/dev/null 2>&1 || true; done
  for v in "${VOLUMES[@]}"; do "$ENGINE" volume rm -f "$v" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}

base_image() {
  if image_exists localhost/stowage-base:node20-bookworm; then echo localhost/stowage-base:node20-bookworm; else echo node:20-bookworm-slim; fi
}

build_standins() {
  if ! image_exists "$STANDINS"; then
    local flags=(--network host)
    [ "$(basename "$ENGINE")" = podman ] && flags+=(--format docker)
    "$ENGINE" build "${flags[@]}" -q -t "$STANDINS" --build-arg "BASE_IMAGE=$(base_image)" -f "$ROOT/deploy/standins/Containerfile" "$ROOT/deploy/standins" >/dev/null
  fi
  step "stand-in image $STANDINS (PostgreSQL, Redis, nginx from Debian packages)"
}

wait_for() { # what, seconds, command...
  local what="$1" seconds="$2"; shift 2
  local end=$(( $(date +%s) + seconds ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$end" ] || fail "$what not ready in ${seconds} s"
    sleep 1
  done
}

start_services() {
  run_detached postgres --user postgres "$STANDINS" bash -c \
    "bin=\$(ls -d /usr/lib/postgresql/*/bin) && \$bin/initdb -D /tmp/pg -U stowage --auth=trust >/dev/null && exec \$bin/postgres -D /tmp/pg -p $P_PG -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off"
  run_detached redis "$STANDINS" redis-server --port "$P_REDIS" --bind 127.0.0.1 --save '' --appendonly no
  run_detached s3 -v "$ROOT/node_modules:/opt/s3/node_modules:ro" "$STANDINS" \
    node /opt/s3/node_modules/s3rver/bin/s3rver.js -d /tmp/s3 -a 127.0.0.1 -p "$P_S3" --no-vhost-buckets --configure-bucket stowage
  wait_for PostgreSQL 60 "$ENGINE" exec "$(cname postgres)" pg_isready -q -h 127.0.0.1 -p "$P_PG"
  "$ENGINE" exec "$(cname postgres)" createdb -h 127.0.0.1 -p "$P_PG" -U stowage stowage
  wait_for Redis 30 "$ENGINE" exec "$(cname redis)" redis-cli -p "$P_REDIS" ping
  wait_for s3rver 30 curl -s -o /dev/null "http://127.0.0.1:$P_S3/stowage"
  step "PostgreSQL :$P_PG, Redis :$P_REDIS, s3rver :$P_S3 (bucket stowage)"
}

# deploy/stowage.env with its addresses (the keys it marks "address") pointing at this host's services.
node_env() { # file, database, rest port
  local file="$1" db="$2" port="$3"
  awk -v db="postgres://stowage:stowage@127.0.0.1:$P_PG/$db" -v s3="http://127.0.0.1:$P_S3" -v redis="redis://127.0.0.1:$P_REDIS" -F= '
    /^STOWAGE_DATABASE_URL=/ { print $1 "=" db; next }
    /^STOWAGE_S3_ENDPOINT=/ { print $1 "=" s3; next }
    /^STOWAGE_S3_ACCESS_KEY_ID=/ || /^STOWAGE_S3_SECRET_ACCESS_KEY=/ { print $1 "=S3RVER"; next }
    /^STOWAGE_REDIS_URL=/ { print $1 "=" redis; next }
    /^STOWAGE_TRUSTED_PROXIES=/ { print $1 "=127.0.0.1/32"; next }
    { print }' "$ROOT/deploy/stowage.env" >"$file"
  cat >>"$file" <<ENV
STOWAGE_HOST=127.0.0.1
STOWAGE_REST_PORT=$port
STOWAGE_UPLOAD_PORT=$((port + 1))
STOWAGE_CDN_PORT=$((port + 2))
STOWAGE_REST_BASE_URL=http://127.0.0.1:$P_PROXY
STOWAGE_UPLOAD_BASE_URL=http://127.0.0.1:$((P_PROXY + 1))
STOWAGE_CDN_BASE_URL=http://127.0.0.1:$((P_PROXY + 2))
STOWAGE_S3_PUBLIC_ENDPOINT=http://127.0.0.1:$P_S3
ENV
}

migrate_with() { # image, database
  node_env "$WORK/migrate.env" "$2" 1
  "$ENGINE" run --rm $(run_flags) --env-file "$WORK/migrate.env" "$1" migrate 2> >(quiet_systemd)
}

start_node() { # name, image, rest port, database
  node_env "$WORK/$1.env" "$4" "$3"
  VOLUMES+=("$(cname "$1")")
  # As the compose file's security_opt: bubblewrap mounts a /proc of its own (podman's seccomp
  # profile already lets it create user namespaces).
  run_detached "$1" --env-file "$WORK/$1.env" -v "$(cname "$1"):/var/lib/stowage" --security-opt systempaths=unconfined "$2" serve
}

wait_ready() { # name, rest port
  wait_for "$1 (/readyz)" "${3:-120}" curl -fsS "http://127.0.0.1:$2/readyz"
}

start_proxy() {
  sed -e "s/node1:8080/127.0.0.1:$P_NODE1/; s/node2:8080/127.0.0.1:$P_NODE2/" \
      -e "s/node1:8081/127.0.0.1:$((P_NODE1 + 1))/; s/node2:8081/127.0.0.1:$((P_NODE2 + 1))/" \
      -e "s/node1:8082/127.0.0.1:$((P_NODE1 + 2))/; s/node2:8082/127.0.0.1:$((P_NODE2 + 2))/" \
      -e "s/listen 8080;/listen 127.0.0.1:$P_PROXY;/; s/listen 8081;/listen 127.0.0.1:$((P_PROXY + 1));/; s/listen 8082;/listen 127.0.0.1:$((P_PROXY + 2));/" \
      "$ROOT/deploy/nginx.conf" >"$WORK/nginx.conf"
  grep -q "node[12]:" "$WORK/nginx.conf" && fail "deploy/nginx.conf names an upstream this script does not map"
  run_detached proxy -v "$WORK/nginx.conf:/etc/nginx/stowage.conf:ro" "$STANDINS" nginx -c /etc/nginx/stowage.conf -g 'daemon off;'
}

project_keys() { # node, file
  "$ENGINE" exec "$(cname "$1")" node bin/stowage.js project create --name "smoke-$RANDOM" --json >"$2"
}

surfaces_json() { # file, then pairs of label and REST port
  local file="$1"; shift
  local out="{" sep=""
  while [ $# -gt 0 ]; do
    out+="$sep\"$1\":{\"rest\":\"http://127.0.0.1:$2\",\"upload\":\"http://127.0.0.1:$(($2 + 1))\",\"cdn\":\"http://127.0.0.1:$(($2 + 2))\"}"
    sep=","; shift 2
  done
  echo "$out}" >"$file"
}

check_metrics() { # rest port
  curl -fsS "http://127.0.0.1:$1/metrics" | grep -q '^process_resident_memory_bytes ' || fail "/metrics on the REST port"
  for p in $(($1 + 1)) $(($1 + 2)); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p/metrics")" = 404 ] || fail "/metrics answered on port $p"
  done
}
