#!/usr/bin/env bash
# Makes sure the real Keystone + Nova of ../shared/openstack answer on loopback, and its Senlin 14
# (test/openstack/import-senlin.os-spec.ts imports from it), for `npm run test:openstack`.
# Idempotent: a cloud that already answers is left alone; when only Senlin is missing,
# senlin-up.sh adds it; when nothing answers, up.sh runs with WITH_SENLIN=1.
#
# Exit codes: 0 the cloud and Senlin answer; 1 up.sh ran and failed (its log tail is printed);
# 3 the cloud is not up and cannot be brought up here (not root, or no harness); 4 Keystone and Nova
# answer but Senlin could not be added (test:openstack still runs; its import test says why it fails).
#
# Environment: OPENSTACK_HARNESS (default <repo>/../shared/openstack), ENSURE_CLOUD_LOG
# (default /tmp/trellis-openstack-up.log), ENSURE_CLOUD_TIMEOUT: seconds for the whole run (default 480).
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
harness="${OPENSTACK_HARNESS:-$repo/../shared/openstack}"
[ -d "$harness" ] && harness="$(cd "$harness" && pwd)"
log_file="${ENSURE_CLOUD_LOG:-/tmp/trellis-openstack-up.log}"
limit="${ENSURE_CLOUD_TIMEOUT:-480}"
keystone_url="http://127.0.0.1:5000/v3"
nova_url="http://127.0.0.1:8774/"
senlin_url="http://127.0.0.1:8777/"
start=$(date +%s)

say() { printf '[ensure-cloud %3ss] %s\n' "$(( $(date +%s) - start ))" "$*"; }

# curl -f fails on 4xx/5xx; Keystone's /v3 answers 200 and Nova's root its version list
answers() { curl -fsS -o /dev/null --max-time 5 "$1" 2>/dev/null; }
cloud_answers() { answers "$keystone_url" && answers "$nova_url"; }
senlin_answers() { answers "$senlin_url"; }

if cloud_answers && senlin_answers; then
  say "Keystone ($keystone_url), Nova ($nova_url) and Senlin ($senlin_url) already answer; nothing to do"
  exit 0
fi

missing=()
answers "$keystone_url" || missing+=("Keystone at $keystone_url")
answers "$nova_url" || missing+=("Nova at $nova_url")
senlin_answers || missing+=("Senlin at $senlin_url")
say "not answering: ${missing[*]}"

if [ "$(id -u)" -ne 0 ]; then
  say "cannot bring the real cloud up: $harness/up.sh installs Debian packages and must run as root (this is uid $(id -u))"
  exit 3
fi
if [ ! -f "$harness/up.sh" ]; then
  say "cannot bring the real cloud up: no OpenStack harness at $harness/up.sh (set OPENSTACK_HARNESS to its folder)"
  exit 3
fi
if ! command -v timeout >/dev/null; then
  say "cannot bring the real cloud up: the 'timeout' command (coreutils) is missing"
  exit 3
fi

# Keystone and Nova are up, Senlin is not: senlin-up.sh adds it (idempotent, about 30 s with its
# packages installed).
if cloud_answers; then
  : >"$log_file"
  say "adding Senlin: $harness/senlin-up.sh (log: $log_file)"
  timeout --kill-after=20 "$limit" bash "$harness/senlin-up.sh" >>"$log_file" 2>&1
  status=$?
  if [ "$status" -eq 0 ] && senlin_answers; then
    say "Senlin is up: $senlin_url answers"
    exit 0
  fi
  say "senlin-up.sh failed (exit status $status); last 40 lines of $log_file:"
  tail -n 40 "$log_file"
  exit 4
fi

# The harness's bootstrap.py writes the image file to <harness>/run/, which does not exist when the
# harness folder is a read-only copy: up.sh then stops at "image cirros-fake" with everything else
# up. The same image made here from a temporary file lets the next up.sh run pass that step.
create_image_if_missing() {
  [ -f "$harness/lib.sh" ] && command -v openstack >/dev/null || return 0
  answers "http://127.0.0.1:9292/versions" || return 0
  (
    # shellcheck source=/dev/null
    . "$harness/lib.sh" && admin_env
    openstack image show cirros-fake >/dev/null 2>&1 && exit 0
    img="$(mktemp)"
    head -c 1024 /dev/zero >"$img"
    openstack image create --disk-format raw --container-format bare --public --file "$img" cirros-fake >/dev/null
    rc=$?
    rm -f "$img"
    exit $rc
  ) >>"$log_file" 2>&1 && say "image cirros-fake is in Glance"
}

# What the test suites need beyond two answering APIs: both zones, the flavor and the image.
cloud_complete() {
  command -v jq >/dev/null || return 1
  local token
  token="$(curl -fsS -D - -o /dev/null --max-time 10 -H 'Content-Type: application/json' "$keystone_url/auth/tokens" -d '{"auth":
    {"identity": {"methods": ["password"], "password": {"user": {"name": "admin", "domain": {"name": "Default"}, "password": "'"${ADMIN_PASS:-admin}"'"}}},
     "scope": {"project": {"name": "admin", "domain": {"name": "Default"}}}}}' | tr -d '\r' | sed -n 's/^[Xx]-[Ss]ubject-[Tt]oken: //p')"
  [ -n "$token" ] || return 1
  curl -fsS --max-time 10 -H "X-Auth-Token: $token" "http://127.0.0.1:8774/v2.1/os-availability-zone" |
    jq -e '[.availabilityZoneInfo[].zoneName] | index("az1") != null and index("az2") != null' >/dev/null &&
    curl -fsS -o /dev/null --max-time 10 -H "X-Auth-Token: $token" "http://127.0.0.1:8774/v2.1/flavors/1" &&
    curl -fsS --max-time 10 -H "X-Auth-Token: $token" "http://127.0.0.1:9292/v2/images?name=cirros-fake" |
    jq -e '[.images[] | select(.status == "active")] | length == 1' >/dev/null
}

# A first up.sh on empty databases has been seen to stop at `nova-manage cell_v2 create_cell`
# (a known flake of the harness); up.sh is idempotent, so one more run completes it.
deadline=$(( start + limit ))
for attempt in 1 2; do
  left=$(( deadline - $(date +%s) ))
  if [ "$left" -lt 60 ]; then
    say "no time left for try $attempt of up.sh (limit ${limit} s)"
    break
  fi
  say "try $attempt: $harness/up.sh (log: $log_file; ${left} s left; about 2 min to install packages the first time, then 1-2 min)"
  [ "$attempt" -eq 1 ] && : >"$log_file"
  echo "=== ensure-cloud: up.sh try $attempt at $(date -u +%FT%TZ)" >>"$log_file"
  WITH_SENLIN=1 timeout --kill-after=20 "$left" bash "$harness/up.sh" >>"$log_file" 2>&1
  status=$?
  if [ "$status" -eq 0 ] && cloud_answers && senlin_answers; then
    say "the cloud is up: Keystone, Nova and Senlin answer (up.sh try $attempt)"
    exit 0
  fi
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    say "try $attempt: up.sh did not finish within the ${left} s left"
    break
  elif [ "$status" -eq 0 ]; then
    say "try $attempt: up.sh finished, but Keystone, Nova or Senlin still does not answer"
  else
    say "try $attempt: up.sh failed with exit status $status"
  fi
  if [ "$attempt" -eq 1 ]; then
    create_image_if_missing
    # the image is bootstrap's last step: with it made, the cloud may already be whole
    if cloud_answers && cloud_complete 2>/dev/null; then
      say "the cloud is up: Keystone and Nova answer, zones az1/az2, flavor m1.tiny and image cirros-fake exist"
      exit 0
    fi
  fi
done
say "the real cloud is not up; last 40 lines of $log_file:"
tail -n 40 "$log_file"
exit 1
