#!/usr/bin/env bash
# npm run test:upgrade: a rolling upgrade from the release before to this checkout, on real RabbitMQ
# and PostgreSQL (AMQP_URL, DATABASE_URL as for test:integration). The release before is the commit
# TRELLIS_UPGRADE_FROM (default: PREVIOUS_RELEASE below), exported from this checkout's history with
# git archive into a directory of its own, built there on this checkout's node_modules when its
# package-lock.json is the same (npm ci there otherwise), and removed afterwards.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# The last commit before a message changed in a way the older consumers cannot take (work orders of
# schema_version 2). Move it forward when a release changes a message's schema_version again.
PREVIOUS_RELEASE=e018a33
from="${TRELLIS_UPGRADE_FROM:-$PREVIOUS_RELEASE}"
if ! commit="$(git -C "$root" rev-parse --verify -q --short "$from^{commit}")"; then
  if [ "$(git -C "$root" rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
    # a shallow clone has no release before to build: said, as CI says when the cloud is missing
    echo "NOTE: test:upgrade was NOT run: this is a shallow clone without commit $from (git fetch --unshallow)"
    exit 0
  fi
  echo "test:upgrade: $from is not a commit of this checkout" >&2
  exit 1
fi
dir="$(mktemp -d "${TMPDIR:-/tmp}/trellis-previous-$commit.XXXXXX")"
trap 'rm -rf "$dir"' EXIT
git -C "$root" archive "$commit" | tar -x -C "$dir"
if cmp -s "$root/package-lock.json" "$dir/package-lock.json"; then
  ln -s "$root/node_modules" "$dir/node_modules"
else
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "test:upgrade: building the release before ($commit) in $dir"
(cd "$dir" && npm run -s build >/dev/null)
[ -n "${TRELLIS_SKIP_BUILD:-}" ] || (cd "$root" && npm run -s build)
cd "$root"
TRELLIS_PREVIOUS_ROOT="$dir" TRELLIS_PREVIOUS_COMMIT="$commit" \
  node --experimental-vm-modules --disable-warning=ExperimentalWarning node_modules/jest/bin/jest.js --config jest.upgrade.config.js --runInBand "$@"
