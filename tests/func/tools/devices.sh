#!/bin/bash
# SPDX-License-Identifier: MIT
# ibv_devices lists softrdma0 with a node GUID, under rdma-core's header.
# Usage: devices.sh IBV_DEVICES
. "$(dirname "$0")/lib.sh"

t_start_daemon
"$1" >"$T_TMP/out" 2>"$T_TMP/err" || {
	t_show "$T_TMP/err"
	t_fail "ibv_devices exited $?"
}
out="$T_TMP/out"
ok=1
[ "$(sed -n 1p "$out")" = "$(printf '    %-16s\t   node GUID' device)" ] ||
	{ echo "bad header line" >&2; ok=0; }
[ "$(sed -n 2p "$out")" = "$(printf '    %-16s\t----------------' ------)" ] ||
	{ echo "bad rule line" >&2; ok=0; }
grep -Eq "^    softrdma0 {7}	[0-9a-f]{16}\$" "$out" ||
	{ echo "no softrdma0 line with a GUID" >&2; ok=0; }
grep -Eq "^    softrdma0 {7}	0{16}\$" "$out" &&
	{ echo "softrdma0 has a zero GUID" >&2; ok=0; }
[ $ok -eq 1 ] || { t_show "$out"; t_fail "ibv_devices output"; }
echo "PASS"
