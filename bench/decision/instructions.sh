#!/usr/bin/env bash
# Instructions per evaluate() call, counted by callgrind (docs/benchmarks-history.md, "decision", Session 10).
#   bench/decision/instructions.sh [--root DIR] [--warmup N] [--settle N] [--m1 M1] [--m2 M2] [--parse-only] SCENARIO...
# For each scenario (nodes:chain:op, e.g. 10:full:in-1) runs dist/bench/decision/instructions.js of
# DIR (default: this checkout, built) under callgrind twice, with M1 and M2 counted calls, and prints
# (I(M2) − I(M1)) / (M2 − M1): the instructions of one call, its fresh JSON.parse included
# (--parse-only counts the parse alone; evaluate() = the difference).
#   - the warm-up (default 20,000 calls: V8 still tiers up until ~16,000) runs uninstrumented
#     (--instr-atstart=no); the driver then says 'ready' and waits; this script turns
#     instrumentation on (callgrind_control) and lets it go; it runs --settle calls (V8 recompiles
#     some code after the pause), then the counted loop;
#   - I(M) is the dump callgrind makes before getgroups (the driver calls process.getgroups() right
#     after its loop), counted from the zeroing before getegid (called right before the loop);
#   - Node runs with V8's --predictable --predictable-gc-schedule (NODE_FLAGS): no concurrent
#     compiler or GC threads, no time-driven GC, so the same build counts the same (±150 a call).
# Different directories holding the same build differ by up to ~0.35 % (1-2 k instructions: the
# paths change the heap's layout and the GCs' timing): compare builds as means over several copies
# of each, at paths of one length (--root).
set -euo pipefail
NODE_FLAGS="${NODE_FLAGS:---predictable --predictable-gc-schedule}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
warmup=20000 settle=300 m1=200 m2=1000 extra=()
scenarios=()
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --m1) m1="$2"; shift 2 ;;
    --m2) m2="$2"; shift 2 ;;
    --settle) settle="$2"; shift 2 ;;
    --parse-only) extra+=(--parse-only); shift ;;
    *) scenarios+=("$1"); shift ;;
  esac
done
out="$(mktemp -d)"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$out"' EXIT; [ -n "${KEEP:-}" ] && echo "kept $out" >&2
count() { # scenario calls -> instructions of the window
  local f="$out/cg.$2" flag="$out/on.$2" pid
  rm -f "$flag" "$f" "$f".*
  TRELLIS_CALLGRIND_WAIT="$flag" valgrind --tool=callgrind --instr-atstart=no --zero-before=getegid \
    --dump-before=getgroups --dump-instr=no --callgrind-out-file="$f" \
    node $NODE_FLAGS "$root/dist/bench/decision/instructions.js" \
    --scenario "$1" --warmup "$warmup" --settle "$settle" --calls "$2" "${extra[@]}" >"$out/stdout.$2" 2>"$out/stderr.$2" &
  local vg=$!
  # the warm-up ran uninstrumented; instrumentation on, then the driver settles and counts
  until pid="$(sed -n 's/^ready \([0-9]*\)$/\1/p' "$out/stderr.$2" 2>/dev/null)" && [ -n "$pid" ]; do
    kill -0 "$vg" 2>/dev/null || { cat "$out/stderr.$2" >&2; return 1; }
    sleep 0.2
  done
  callgrind_control --instr=on "$pid" >/dev/null 2>&1
  touch "$flag"
  wait "$vg"
  # the first dump triggered by getgroups is the window (Node calls getgroups twice in a row)
  grep -l '^desc: Trigger: --dump-before=getgroups' "$f".* | sort -t. -k3n | head -1 | xargs grep '^summary:' | awk '{print $2}'
}
# a run that wrote no window (seen now and then) is run again, once; twice without one is an error,
# never a figure (an empty count used to make the arithmetic below print a bogus per-call figure)
counted() {
  local n
  n="$(count "$1" "$2" || true)"
  [ -n "$n" ] || n="$(count "$1" "$2" || true)"
  if ! [[ "$n" =~ ^[0-9]+$ ]]; then
    echo "instructions.sh: $1 with $2 counted calls: callgrind wrote no window twice (a busy machine?); no figure" >&2
    return 1
  fi
  echo "$n"
}
for s in "${scenarios[@]}"; do
  a="$(counted "$s" "$m1")" || exit 1
  b="$(counted "$s" "$m2")" || exit 1
  digest="$(sed -n 's/.*"digest":"\([0-9a-f]*\)".*/\1/p' "$out/stdout.$m2")"
  echo "$s ${extra[*]:-} warmup=$warmup I($m1)=$a I($m2)=$b per_call=$(( (b - a) / (m2 - m1) )) digest=${digest:0:16}"
done
