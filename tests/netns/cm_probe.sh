#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Two hosts: the interop lab's cm_probe (tests/interop) between two
# softrdma daemons over UDP, before it meets the kernel's CM: private data
# in REQ, REP and REJ (56, 196 and 148 B, intact), a reject's status, a
# disconnect from either side, and a peer process that exits connected,
# over IPv4 and IPv6.  Both sides must report every case.  (The connect
# nobody answers is the interop label's: 100 s.)
. "$(dirname "$0")/lib.sh"

PROBE=${NS_CM_PROBE:-$NS_BUILD/tests/interop/cm_probe}
ns_init cm_probe 100
[ -x "$PROBE" ] || ns_fail "no $PROBE"
ns_setup 2

port=18700
bad=()

# run FAM NCASES CASES: server in host 1, client in host 2.
run()
{
	local fam=$1 want=$2 cases=$3 tag spid rc_c rc_s side n

	port=$((port + 1))
	tag=cm_probe.$port
	ns_log "cm_probe over $fam: $cases"
	ns_bg 1 "$tag.server" "$PROBE" -b "$(ns_addr 1 "$fam")" -p "$port" \
		"$cases"
	spid=$NS_BG_PID
	if ! ns_wait_cm_listen 1 "$port"; then
		bad+=("$fam $cases: no listener on port $port")
		kill "$spid" 2>/dev/null
		return
	fi
	ns_bg 2 "$tag.client" "$PROBE" -p "$port" "$cases" "$(ns_addr 1 "$fam")"
	ns_wait "$NS_BG_PID" 60
	rc_c=$?
	ns_wait "$spid" 10
	rc_s=$?
	cat "$NS_TMP/$tag.client.log" "$NS_TMP/$tag.server.log"
	[ $rc_c -eq 0 ] && [ $rc_s -eq 0 ] ||
		bad+=("$fam $cases: client exit $rc_c, server exit $rc_s")
	for side in client server; do
		n=$(grep -c "^probe .* $side *ok " "$NS_TMP/$tag.$side.log")
		[ "$n" = "$want" ] || bad+=("$fam $cases: $n of $want cases ok ($side)")
	done
}

run v4 4 reject,accept,srv_disc,srv_exit
run v4 1 cli_exit
run v6 4 reject,accept,srv_disc,srv_exit
[ ${#bad[@]} -eq 0 ] || ns_fail "failed: ${bad[*]}"
ns_pass
