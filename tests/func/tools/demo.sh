#!/bin/bash
# SPDX-License-Identifier: MIT
# softrdma-demo -q runs to the end and reports every figure.
# Usage: demo.sh SOFTRDMA-DEMO
. "$(dirname "$0")/lib.sh"

t_start_daemon
timeout 100 "$1" -q >"$T_TMP/out" 2>"$T_TMP/err"
rc=$?
ok=1
[ $rc -eq 0 ] || { echo "exit $rc" >&2; ok=0; }
for what in 'RDMA WRITE latency, 2 bytes +[0-9.]+ us' \
	'SEND latency, 2 bytes +[0-9.]+ us' \
	'RDMA WRITE bandwidth, 64 KiB +[0-9.]+ GB/s .*data verified' \
	'RDMA WRITE bandwidth, 1 MiB +[0-9.]+ GB/s .*data verified' \
	'^All transfers completed and verified\.$'; do
	grep -Eq "$what" "$T_TMP/out" || { echo "missing: $what" >&2; ok=0; }
done
if [ $ok -ne 1 ]; then
	t_show "$T_TMP/out"
	t_show "$T_TMP/err"
	t_fail "softrdma-demo"
fi
cat "$T_TMP/out"
echo "PASS"
