#!/usr/bin/env bash
# npm run test:alerts: Prometheus's own checks of deploy/prometheus/trellis-alerts.yml. `promtool
# check rules` parses every expression; `promtool test rules` evaluates each alert on the series of
# trellis-alerts.test.yml (quiet below its threshold, firing above it with its labels and rendered
# annotations). The names it uses are checked against Trellis's metrics by
# test/architecture/alert-rules.spec.ts (npm test).
set -euo pipefail
cd "$(dirname "$0")/../deploy/prometheus"
if ! command -v promtool >/dev/null 2>&1; then
  echo "test:alerts needs promtool (Prometheus's tool): apt-get install prometheus (Debian), or a Prometheus release's promtool on PATH" >&2
  exit 1
fi
promtool --version 2>&1 | head -1
promtool check rules trellis-alerts.yml
promtool test rules trellis-alerts.test.yml
