#!/usr/bin/env bash
# `npm run test:fuzz`: the fuzz suite (test/fuzz, docs/RELIABILITY.md §10). REST on the embedded
# default; the queues on RabbitMQ and PostgreSQL (AMQP_URL, DATABASE_URL: the servers the suite makes
# its own vhost and database on; defaults the machine's, as test:integration).
#
#   npm run test:fuzz                     CI: a bounded count per property, a fresh seed (printed)
#   npm run test:fuzz -- --long           10,000 cases per property
#   npm run test:fuzz -- --seed 1234      replay a run (with the same --runs/--long)
#   npm run test:fuzz -- --runs 500       any count
#   npm run test:fuzz -- --only rest      only the REST (or: queues) properties
#
# The environment variables FUZZ_RUNS and FUZZ_SEED say the same as --runs and --seed.
set -euo pipefail
cd "$(dirname "$0")/.."
only=()
while [ $# -gt 0 ]; do
  case "$1" in
    --long) export FUZZ_RUNS=10000 ;;
    --runs) export FUZZ_RUNS="${2:?--runs takes a number}"; shift ;;
    --seed) export FUZZ_SEED="${2:?--seed takes a number}"; shift ;;
    --only) only+=("test/fuzz/${2:?--only takes rest or queues}.fuzz-spec.ts"); shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "test:fuzz: unknown option '$1' (--help lists them)" >&2; exit 2 ;;
  esac
  shift
done
exec node --experimental-vm-modules --disable-warning=ExperimentalWarning node_modules/jest/bin/jest.js \
  --config jest.fuzz.config.js --runInBand "${only[@]}"
