#!/bin/bash
# SPDX-License-Identifier: MIT
# ibv_asyncwatch opens the device, reports its event fd and keeps
# watching until killed; an unknown device is an error.
# Usage: asyncwatch.sh IBV_ASYNCWATCH
. "$(dirname "$0")/lib.sh"

bin=$1
t_start_daemon
"$bin" >"$T_TMP/out" 2>&1 &
pid=$!
T_PIDS="$pid"
for _ in $(seq 100); do
	grep -q 'async event FD' "$T_TMP/out" && break
	sleep 0.05
done
grep -Eq '^softrdma0: async event FD [0-9]+$' "$T_TMP/out" ||
	{ t_show "$T_TMP/out"; t_fail "no event FD line"; }
sleep 0.2
kill -0 "$pid" 2>/dev/null || { t_show "$T_TMP/out"; t_fail "it exited"; }
kill "$pid"

"$bin" -d no-such-device >/dev/null 2>&1 && t_fail "unknown device accepted"
"$bin" -h | grep -q -- '--ib-dev' || t_fail "-h prints no help"
echo "PASS"
