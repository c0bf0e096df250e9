#!/bin/sh
# SPDX-License-Identifier: MIT
# Run one fuzz test and say in one line what it did:
#   fuzz NAME: N execs in T s, R exec/s
# from the stat:: lines libFuzzer prints with -print_final_stats=1 (the
# seeded engine_cmd_fuzz prints the same two).  The line goes to stdout
# and to DIR/NAME.summary, which scripts/test.sh shows after ctest.  The
# exit status is the fuzzer's (77: skipped, no line).
#   fuzz_run.sh NAME DIR PROGRAM [ARGS...]
set -u
name=$1
dir=$2
shift 2
mkdir -p "$dir" || exit 1
rm -f "$dir/$name.summary"
log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT
start=$(date +%s)
"$@" >"$log" 2>&1
rc=$?
secs=$(($(date +%s) - start))
cat "$log"
[ "$rc" -eq 77 ] && exit 77
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
line="fuzz $name: ${execs:-?} execs in $secs s, ${rate:-?} exec/s"
[ "$rc" -eq 0 ] || line="$line, FAILED (exit $rc)"
echo "$line"
echo "$line" >"$dir/$name.summary"
exit "$rc"
