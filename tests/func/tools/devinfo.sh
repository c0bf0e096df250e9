#!/bin/bash
# SPDX-License-Identifier: MIT
# ibv_devinfo: the device, an active port, a RoCE v2 GID in -v, -l, -d,
# -i and rdma-core's exit codes.
# Usage: devinfo.sh IBV_DEVINFO
. "$(dirname "$0")/lib.sh"

bin=$1
t_start_daemon
ok=1
check() { # description, grep -E pattern, file
	grep -Eq -- "$2" "$3" || { echo "missing: $1" >&2; ok=0; }
}

"$bin" >"$T_TMP/plain" 2>&1 || { t_show "$T_TMP/plain"; t_fail "exit $?"; }
check "hca_id line" '^hca_id:	softrdma0$' "$T_TMP/plain"
check "transport" '^	transport:			InfiniBand \(0\)$' "$T_TMP/plain"
check "node_guid" '^	node_guid:			[0-9a-f]{4}(:[0-9a-f]{4}){3}$' "$T_TMP/plain"
check "port 1" '^		port:	1$' "$T_TMP/plain"
check "PORT_ACTIVE" '^			state:			PORT_ACTIVE \(4\)$' "$T_TMP/plain"
check "active_mtu" '^			active_mtu:		(256|512|1024|2048|4096) \([1-5]\)$' "$T_TMP/plain"
check "link_layer" '^			link_layer:		Ethernet$' "$T_TMP/plain"
grep -q 'GID\[' "$T_TMP/plain" && { echo "GIDs without -v" >&2; ok=0; }

"$bin" -v >"$T_TMP/verbose" 2>&1 || { t_show "$T_TMP/verbose"; t_fail "-v exit $?"; }
check "max_qp" '^	max_qp:				[1-9][0-9]*$' "$T_TMP/verbose"
check "device_cap_flags" '^	device_cap_flags:		0x[0-9a-f]{8}$' "$T_TMP/verbose"
check "atomic_cap" '^	atomic_cap:			ATOMIC_(NONE|HCA|GLOB) \([0-2]\)$' "$T_TMP/verbose"
check "num_comp_vectors" '^	num_comp_vectors:		[0-9]+$' "$T_TMP/verbose"
check "PORT_ACTIVE (-v)" 'state:			PORT_ACTIVE \(4\)$' "$T_TMP/verbose"
check "gid_tbl_len" '^			gid_tbl_len:		[1-9][0-9]*$' "$T_TMP/verbose"
check "GID 0 line" '^			GID\[  0\]:		::ffff:127\.0\.0\.1, RoCE v2$' "$T_TMP/verbose"

"$bin" -l >"$T_TMP/list" 2>&1 || { t_show "$T_TMP/list"; t_fail "-l exit $?"; }
check "-l count" '^[1-9][0-9]* HCAs? found:$' "$T_TMP/list"
check "-l name" '^	softrdma0$' "$T_TMP/list"

"$bin" -d softrdma0 -i 1 >"$T_TMP/port" 2>&1 || { t_show "$T_TMP/port"; t_fail "-d -i exit $?"; }
check "-d -i 1" '^		port:	1$' "$T_TMP/port"

"$bin" -d no-such-device >/dev/null 2>&1
rc=$?
[ $rc -eq 255 ] || { echo "unknown device: exit $rc, not 255" >&2; ok=0; }
"$bin" -d softrdma0 -i 2 >/dev/null 2>&1
rc=$?
[ $rc -eq 4 ] || { echo "bad port: exit $rc, not 4" >&2; ok=0; }
"$bin" -i 0 >/dev/null 2>&1
rc=$?
[ $rc -eq 1 ] || { echo "-i 0: exit $rc, not 1" >&2; ok=0; }

if [ $ok -ne 1 ]; then
	t_show "$T_TMP/verbose"
	t_fail "ibv_devinfo output"
fi
echo "PASS"
