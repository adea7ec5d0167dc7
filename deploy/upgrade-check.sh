# The upgrade part of deploy/test-stack.sh (sourced; uses deploy/stack-lib.sh): a node of the
# previous release and one of this release on one PostgreSQL schema after `stowage migrate`.
# The previous release is the commit before the newest migration was added (its schema is one
# migration behind), or STOWAGE_PREVIOUS_REF; it is built from git with this Dockerfile once and
# kept as localhost/stowage:previous-<commit>.
#   1. the previous release migrates a fresh schema, starts, and takes uploads;
#   2. this release's `stowage migrate` brings the schema forward while that node runs;
#   3. the old node still serves: its earlier files, new uploads, CDN transforms;
#   4. a node of this release joins: each reads and transforms what the other took, and a
#      document conversion (a job either node may claim) finishes;
#   5. the old node restarts on the migrated schema (reported: releases before the one that
#      leaves newer schemas alone stop at start).

upgrade_check() {
  local ref="${STOWAGE_PREVIOUS_REF:-$(git -C "$ROOT" log --diff-filter=A -1 --format=%H -- src/db/migrations/)^}"
  local sha
  sha="$(git -C "$ROOT" rev-parse --short "$ref")"
  local prev="localhost/stowage:previous-$sha"
  if ! image_exists "$prev"; then
    local src="$WORK/previous"
    mkdir -p "$src"
    git -C "$ROOT" archive "$sha" | tar -x -C "$src"
    mkdir -p "$src/deploy"
    cp "$ROOT/deploy/healthcheck.mjs" "$src/deploy/"
    "$ROOT/deploy/build-image.sh" --tag "$prev" --context "$src" >"$WORK/previous-build.log" 2>&1 \
      || { tail -n 30 "$WORK/previous-build.log"; fail "building the previous release $sha"; }
  fi
  step "previous release $sha: $prev ($(git -C "$ROOT" log -1 --format=%s "$sha" | cut -c1-60)…)"

  "$ENGINE" exec "$(cname postgres)" createdb -h 127.0.0.1 -p "$P_PG" -U stowage stowage_upgrade
  migrate_with "$prev" stowage_upgrade >/dev/null
  start_node old "$prev" "$P_OLD" stowage_upgrade
  wait_ready old "$P_OLD"
  project_keys old "$WORK/keys-upgrade.json"
  surfaces_json "$WORK/old.json" a "$P_OLD" b "$P_OLD"
  SMOKE_ONLY=cross SMOKE_UUIDS_OUT="$WORK/before.txt" node "$ROOT/deploy/smoke.mjs" "$WORK/keys-upgrade.json" "$WORK/old.json" >/dev/null
  step "previous release serving on its own schema ($(wc -l <"$WORK/before.txt") uploads)"

  local said
  said="$(migrate_with "$IMAGE" stowage_upgrade)"
  step "this release's migrate while the old node runs: $said"
  SMOKE_ONLY=read,cross SMOKE_UUIDS_IN="$WORK/before.txt" node "$ROOT/deploy/smoke.mjs" "$WORK/keys-upgrade.json" "$WORK/old.json" | sed 's/^/     /'
  step "the old node keeps serving on the migrated schema"

  start_node new "$IMAGE" "$P_NEW" stowage_upgrade
  wait_ready new "$P_NEW"
  surfaces_json "$WORK/mixed.json" a "$P_OLD" b "$P_NEW"
  SMOKE_ONLY=read,cross,convert SMOKE_UUIDS_IN="$WORK/before.txt" node "$ROOT/deploy/smoke.mjs" "$WORK/keys-upgrade.json" "$WORK/mixed.json" | sed 's/^/     /'
  step "old and new release side by side on one schema: each reads and transforms the other's uploads; a conversion job runs"

  "$ENGINE" restart -t 10 "$(cname old)" >/dev/null 2> >(quiet_systemd)
  if wait_ready_quiet old "$P_OLD" 60; then
    step "the old node restarted on the migrated schema and serves"
  else
    echo "info the previous release $sha does not restart on the migrated schema: $("$ENGINE" logs --tail 3 "$(cname old)" 2>&1 | grep -o 'corrupted migrations[^"]*' | head -n1)"
  fi
}

wait_ready_quiet() { # name, port, seconds: like wait_ready, but answers instead of failing
  local end=$(( $(date +%s) + $3 ))
  until curl -fsS "http://127.0.0.1:$2/readyz" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$end" ] || return 1
    [ "$("$ENGINE" inspect -f '{{.State.Running}}' "$(cname "$1")" 2>/dev/null)" = true ] || return 1
    sleep 1
  done
}
