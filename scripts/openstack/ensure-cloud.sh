#!/usr/bin/env bash
# Makes sure the real Keystone + Nova of ../shared/openstack answer on loopback, for
# `npm run test:openstack`. Idempotent: a cloud that already answers is left alone.
#
# Exit codes: 0 the cloud answers; 1 up.sh ran and failed (its log tail is printed);
# 3 the cloud is not up and cannot be brought up here (not root, or no harness).
#
# Environment: OPENSTACK_HARNESS (default <repo>/../shared/openstack), ENSURE_CLOUD_LOG
# (default /tmp/trellis-openstack-up.log), ENSURE_CLOUD_TIMEOUT: seconds for the whole run (default 480).
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
harness="${OPENSTACK_HARNESS:-$repo/../shared/openstack}"
log_file="${ENSURE_CLOUD_LOG:-/tmp/trellis-openstack-up.log}"
limit="${ENSURE_CLOUD_TIMEOUT:-480}"
keystone_url="http://127.0.0.1:5000/v3"
nova_url="http://127.0.0.1:8774/"
start=$(date +%s)

say() { printf '[ensure-cloud %3ss] %s\n' "$(( $(date +%s) - start ))" "$*"; }

# curl -f fails on 4xx/5xx; Keystone's /v3 answers 200 and Nova's root its version list
answers() { curl -fsS -o /dev/null --max-time 5 "$1" 2>/dev/null; }
cloud_answers() { answers "$keystone_url" && answers "$nova_url"; }

if cloud_answers; then
  say "Keystone ($keystone_url) and Nova ($nova_url) already answer; nothing to do"
  exit 0
fi

missing=()
answers "$keystone_url" || missing+=("Keystone at $keystone_url")
answers "$nova_url" || missing+=("Nova at $nova_url")
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
  timeout --kill-after=20 "$left" bash "$harness/up.sh" >>"$log_file" 2>&1
  status=$?
  if [ "$status" -eq 0 ] && cloud_answers; then
    say "the cloud is up: Keystone and Nova answer (up.sh try $attempt)"
    exit 0
  fi
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    say "try $attempt: up.sh did not finish within the ${left} s left"
    break
  elif [ "$status" -eq 0 ]; then
    say "try $attempt: up.sh finished, but Keystone or Nova still does not answer"
  else
    say "try $attempt: up.sh failed with exit status $status"
  fi
done
say "the real cloud is not up; last 40 lines of $log_file:"
tail -n 40 "$log_file"
exit 1
