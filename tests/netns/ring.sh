#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Three hosts on a bridge: a ring of RC connections (1 -> 2 -> 3 -> 1)
# passing messages of 1 byte to 4 MiB around, checked at every hop, then
# UD from host 1 to hosts 2 and 3 from one QP (xhost ring).
#
#   ring.sh [v4|v6]
. "$(dirname "$0")/lib.sh"

fam=${1:-v4}
ns_init "ring3_$fam" 110
XHOST=${NS_XHOST:-$NS_BUILD/tests/netns/netns_xhost}
[ -x "$XHOST" ] || ns_fail "no xhost program ($XHOST)"
ns_setup 3 bridge

pids=()
for k in 1 2 3; do
	next=$((k % 3 + 1))
	ns_bg "$k" "ring$k" "$XHOST" ring --nodes 3 --index "$k" -d "srd$k" \
		-f "$fam" -p 18800 -T 90 "$(ns_addr "$next" "$fam")"
	pids+=("$NS_BG_PID")
done
rc=0
for k in 1 2 3; do
	ns_wait "${pids[$((k - 1))]}" 95
	r=$?
	echo "----- host $k: exit $r"
	cat "$NS_TMP/ring$k.log"
	[ $r -eq 0 ] || rc=1
done
[ $rc -eq 0 ] || ns_fail "ring of three"
ns_pass
