#!/bin/bash
# SPDX-License-Identifier: MIT
# softrdma-bench --quick -o: every RDMA figure is measured, and while it
# runs the daemon holds only ON_DEMAND MRs of its two processes (the
# parent's and its child's); without -o, none is ON_DEMAND.
# Usage: bench_odp.sh SOFTRDMA-BENCH SOFTRDMA
. "$(dirname "$0")/lib.sh"

bench=$1
admin=$2
t_start_daemon

# run ARGS...: the bench in the background, the daemon's MR table polled
# into $T_TMP/mrs.$n while it runs; its JSON in $T_TMP/out.$n.
n=0
run() {
	local pid
	n=$((n + 1))
	: >"$T_TMP/mrs.$n"
	timeout 100 "$bench" --quick --json "$@" >"$T_TMP/out.$n" \
		2>"$T_TMP/err.$n" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		"$admin" -n -d -j resource show mr >>"$T_TMP/mrs.$n" 2>/dev/null
		echo >>"$T_TMP/mrs.$n"
		sleep 0.05
	done
	wait "$pid" || { t_show "$T_TMP/err.$n"; t_fail "softrdma-bench $* exit $?"; }
	jq -e '.rdma_ok and .softrdma.write_bw_64k_gbps > 0 and
		.softrdma.read_bw_64k_gbps > 0 and .softrdma.write_bw_1m_gbps > 0' \
		"$T_TMP/out.$n" >/dev/null ||
		{ t_show "$T_TMP/out.$n"; t_fail "softrdma-bench $*: figures missing"; }
}

# mrs N: "pid access" of every MR of a softrdma-bench process seen.
mrs() {
	jq -r '.[]? | select(.comm == "softrdma-bench") |
		"\(.pid) \(.access)"' "$T_TMP/mrs.$1" 2>/dev/null | sort -u
}

run -o
jq -e '.odp == true' "$T_TMP/out.1" >/dev/null || t_fail "-o: odp is not true"
seen=$(mrs 1)
[ "$(echo "$seen" | awk '{print $1}' | sort -u | grep -c .)" -eq 2 ] ||
	{ echo "$seen" >&2; t_fail "-o: the MRs of two processes were not seen"; }
echo "$seen" | while read -r pid access; do
	(((access & 0x40) != 0)) || t_fail "-o: pid $pid MR access $access"
done || exit 1

run
jq -e '.odp == false' "$T_TMP/out.2" >/dev/null || t_fail "odp is not false"
seen=$(mrs 2)
[ -n "$seen" ] || t_fail "no MR of softrdma-bench seen"
echo "$seen" | while read -r pid access; do
	(((access & 0x40) == 0)) || t_fail "pid $pid MR access $access: ODP"
done || exit 1
echo "$(mrs 1)"
echo "PASS"
