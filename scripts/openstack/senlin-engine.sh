#!/usr/bin/env bash
# Stops or starts the harness's senlin-engine (../shared/openstack), for the import-senlin test
# (test/openstack/import-senlin.os-spec.ts): `stop` signals only the process recorded in the
# harness's pid file, and only while its command line still names senlin-engine (as down.sh does),
# then waits until it is gone; `start` starts it exactly as senlin-up.sh does (lib.sh's start_bg,
# same arguments, same pid and log files) and waits until Senlin's service table shows it up.
# `status` prints running/stopped. Run as root, like the harness. The harness: OPENSTACK_HARNESS_DIR, or
# OPENSTACK_HARNESS as ensure-cloud.sh reads it, else ../shared/openstack beside the checkout.
set -euo pipefail
HARNESS_DIR="${OPENSTACK_HARNESS_DIR:-${OPENSTACK_HARNESS:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/openstack}}"
[ -f "$HARNESS_DIR/lib.sh" ] || { echo "senlin-engine.sh: no harness at $HARNESS_DIR (set OPENSTACK_HARNESS_DIR or OPENSTACK_HARNESS)" >&2; exit 3; }
# shellcheck source=/dev/null
. "$HARNESS_DIR/lib.sh"
NAME=senlin-engine
PIDFILE="$PIDS/$NAME.pid"

case "${1:-}" in
  status)
    if is_running "$NAME"; then echo running; else echo stopped; fi ;;
  stop)
    if ! is_running "$NAME"; then echo "senlin-engine: not running"; exit 0; fi
    pid=$(cut -d' ' -f1 "$PIDFILE")
    kill -TERM "$pid"
    for _ in $(seq 1 60); do is_running "$NAME" || { echo "senlin-engine: stopped (pid $pid)"; exit 0; }; sleep 0.5; done
    echo "senlin-engine: pid $pid still running 30 s after SIGTERM" >&2; exit 1 ;;
  start)
    [ "$(id -u)" = 0 ] || die "run as root"
    start_bg "$NAME" "/usr/bin/$NAME" /usr/bin/python3 "/usr/bin/$NAME" --config-file /etc/senlin/senlin.conf --log-file "$LOGS/$NAME.oslo.log"
    admin_env
    wait_for 90 "senlin-engine in Senlin's service table" bash -c \
      "openstack cluster service list -f value -c binary -c state 2>/dev/null | grep -q '^senlin-engine up$'"
    ;;
  *) echo "usage: $0 status|stop|start" >&2; exit 2 ;;
esac
