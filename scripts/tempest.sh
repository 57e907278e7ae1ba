#!/usr/bin/env bash
# `npm run test:tempest`: Senlin's own API test suite (senlin-tempest-plugin, 306 tests) against
# Trellis on RabbitMQ + PostgreSQL with the real Keystone + Nova of ../shared/openstack.
#
# Starts Trellis (`trellis start`, the embedded composition on a fresh PostgreSQL database and
# RabbitMQ vhost, with the cloud's `trellis` service user), runs ../shared/openstack/tempest-senlin.sh
# against it and stops it. Results: /var/tmp/tempest-senlin/last/ (summary.txt, failing.txt) and
# the tempest-senlin.sh closing line "N passed, M failed, K skipped".
#
# Trellis runs with Senlin's stock policy types (TRELLIS_POLICY_PLUGINS=none), as Senlin's gate ran the
# suite against a Senlin without third-party policy plugins: test_policy_type_list_v1_5 asserts that
# every listed type is one of Senlin's eight, so the bundled role anti-affinity type fails it
# (TRELLIS_POLICY_PLUGINS=bundled npm run test:tempest shows that; docs/CONFORMANCE.md).
#
# Environment: TEMPEST_FIXTURE (default harness), TEMPEST_WORKERS (2), CLUSTERING_WAIT (60),
# TEMPEST_TIME_LIMIT (900), TEMPEST_REGEX / TEMPEST_MODULES (passed through), TRELLIS_TEMPEST_PORT
# (18777), AMQP_URL / DATABASE_URL (the servers to make the vhost and database on; defaults the
# machine's), OPENSTACK_HARNESS (../shared/openstack), TEMPEST_MIN_PASSED (fail below this many passes;
# default 0: report only).
# Exit status: tempest-senlin.sh's (0 nothing failed, 1 tests failed, 2 set-up error, 3 timeout),
# or 4 when fewer than TEMPEST_MIN_PASSED tests passed.
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
harness="${OPENSTACK_HARNESS:-$repo/../shared/openstack}"
port="${TRELLIS_TEMPEST_PORT:-18777}"
amqp_base="${AMQP_URL:-amqp://guest:guest@127.0.0.1:5672}"
db_base="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
run_id="tempest$(date +%s)"
log_file="${TRELLIS_TEMPEST_LOG:-/tmp/trellis-tempest.log}"

say() { printf '[tempest] %s\n' "$*"; }

[ -x "$harness/tempest-senlin.sh" ] || [ -f "$harness/tempest-senlin.sh" ] || { say "no $harness/tempest-senlin.sh"; exit 2; }
[ -f "$repo/dist/cli/trellis.js" ] || { say "build first: npm run build"; exit 2; }

db_url="${db_base%/*}/trellis_${run_id}"
psql "$db_base" -q -c "CREATE DATABASE trellis_${run_id}" || { say "cannot create database"; exit 2; }
vhost="trellis-${run_id}"
rabbitmqctl -q add_vhost "$vhost" && rabbitmqctl -q set_permissions -p "$vhost" guest '.*' '.*' '.*' || { say "cannot create vhost"; exit 2; }
amqp_url="${amqp_base%/}/${vhost}"

cleanup() {
  [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rabbitmqctl -q delete_vhost "$vhost" >/dev/null 2>&1
  psql "$db_base" -q -c "DROP DATABASE IF EXISTS trellis_${run_id} WITH (FORCE)" >/dev/null 2>&1
}
trap cleanup EXIT

# The suite's profile-update tests (test_cluster_update_profile, test_node_update_profile, the
# multichoices negative test) name a flavor `new_flavor` and an image `new_image`; Senlin's gate ran
# them on a fake cloud driver that accepts any name. Trellis checks names against Nova and Glance at
# profile create (as Senlin does on a real cloud), so the test cloud gets them: a public flavor and
# image like the harness's own (idempotent; left in place for the next run).
ensure_update_fixtures() {
  local os_env=(env OS_AUTH_URL="${OS_AUTH_URL:-http://127.0.0.1:5000/v3}" OS_IDENTITY_API_VERSION=3 OS_USERNAME=admin
    OS_PASSWORD="${ADMIN_PASS:-admin}" OS_PROJECT_NAME=admin OS_USER_DOMAIN_NAME=Default OS_PROJECT_DOMAIN_NAME=Default
    OS_REGION_NAME=RegionOne OS_INTERFACE=public)
  "${os_env[@]}" openstack flavor show new_flavor >/dev/null 2>&1 ||
    "${os_env[@]}" openstack flavor create --public --ram 128 --disk 1 --vcpus 1 new_flavor >/dev/null || return 1
  if ! "${os_env[@]}" openstack image show new_image >/dev/null 2>&1; then
    local img; img="$(mktemp)"; head -c 1024 /dev/zero > "$img"
    "${os_env[@]}" openstack image create --disk-format raw --container-format bare --public --file "$img" new_image >/dev/null || { rm -f "$img"; return 1; }
    rm -f "$img"
  fi
}
ensure_update_fixtures && say "test cloud: flavor new_flavor and image new_image present" \
  || say "WARNING: could not add flavor new_flavor / image new_image; the profile-update tests will fail at profile create"

say "starting Trellis on 127.0.0.1:$port (RabbitMQ vhost $vhost, database trellis_${run_id}; log $log_file)"
env TRELLIS_HOST=127.0.0.1 TRELLIS_PORT="$port" TRELLIS_PUBLIC_URL="http://127.0.0.1:$port" \
  DATABASE_URL="$db_url" AMQP_URL="$amqp_url" \
  OS_AUTH_URL="${OS_AUTH_URL:-http://127.0.0.1:5000/v3}" OS_USERNAME=trellis OS_PASSWORD="${SERVICE_PASS:-service-secret}" \
  OS_PROJECT_NAME=service OS_USER_DOMAIN_NAME=Default OS_PROJECT_DOMAIN_NAME=Default OS_REGION_NAME=RegionOne \
  TRELLIS_POLL_INTERVAL_MS=250 LOG_LEVEL="${LOG_LEVEL:-info}" TRELLIS_POLICY_PLUGINS="${TRELLIS_POLICY_PLUGINS-none}" \
  node "$repo/dist/cli/trellis.js" start >"$log_file" 2>&1 &
pid=$!
for _ in $(seq 1 60); do
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/") && [ "$code" = 300 ] && break
  kill -0 "$pid" 2>/dev/null || { say "Trellis exited; last lines of $log_file:"; tail -20 "$log_file"; exit 2; }
  sleep 1
done
[ "${code:-}" = 300 ] || { say "Trellis did not answer GET / with 300"; tail -20 "$log_file"; exit 2; }

out="$(mktemp)"
TEMPEST_FIXTURE="${TEMPEST_FIXTURE:-harness}" TEMPEST_WORKERS="${TEMPEST_WORKERS:-2}" CLUSTERING_WAIT="${CLUSTERING_WAIT:-60}" \
  TEMPEST_TIME_LIMIT="${TEMPEST_TIME_LIMIT:-900}" bash "$harness/tempest-senlin.sh" "http://127.0.0.1:$port" 2>&1 | tee "$out"
status=${PIPESTATUS[0]}
passed=$(grep -Eo '^[0-9]+ passed' "$out" | tail -1 | grep -Eo '[0-9]+')
rm -f "$out"
min="${TEMPEST_MIN_PASSED:-0}"
if [ -n "$passed" ] && [ "$passed" -lt "$min" ]; then
  say "only $passed passed; at least $min must"
  exit 4
fi
exit "$status"
