#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# UD multicast with plain verbs across three hosts on a bridge, over the
# UDP wire, for an IPv4 group (IPv4-mapped GID) and an IPv6 one: hosts 2
# and 3 attach their QP to the group (their daemons join the IP group on
# their veth), host 1 sends to it from its IPv4 or IPv6 GID; every
# receiver must get every message intact behind a GRH addressed to the
# group, and nothing more (mcast_peer.c checks).  The receivers' kernels
# hold the IP group membership while their QP is attached, and not after.
. "$(dirname "$0")/lib.sh"

ns_init mcast_verbs 110
PEER=${NS_MCAST_PEER:-$NS_BUILD/tests/netns/netns_mcast_peer}
[ -x "$PEER" ] || ns_fail "no mcast_peer program ($PEER)"
ns_setup 3
n=50

# Whether host K's kernel holds a membership of the group: /proc/net/igmp
# lists IPv4 groups as little-endian hex, /proc/net/igmp6 IPv6 ones as hex.
member()
{
	local k=$1 fam=$2 hex=$3

	if [ "$fam" = v4 ]; then
		ns_exec "$k" cat /proc/net/igmp | grep -qi "^[[:space:]]*${hex}[[:space:]]"
	else
		ns_exec "$k" cat /proc/net/igmp6 | grep -qi "[[:space:]]${hex}[[:space:]]"
	fi
}

run()
{
	local fam=$1 group=$2 hex=$3 k st

	declare -a rx
	for k in 2 3; do
		ns_bg "$k" "$fam.rx$k" stdbuf -oL "$PEER" recv "$group" "$n"
		rx[k]=$NS_BG_PID
	done
	for k in 2 3; do
		for _ in $(seq 100); do
			grep -q "^ready" "$NS_TMP/$fam.rx$k.log" 2>/dev/null &&
				break
			sleep 0.1
		done
		grep -q "^ready" "$NS_TMP/$fam.rx$k.log" ||
			ns_fail "$fam: host $k not ready: $(cat "$NS_TMP/$fam.rx$k.log")"
		member "$k" "$fam" "$hex" ||
			ns_fail "$fam: host $k's daemon did not join $group"
	done
	! member 1 "$fam" "$hex" || ns_fail "$fam: host 1 joined $group"
	ns_exec 1 "$PEER" send "$(ns_gid 1 "$fam")" "$group" "$n" \
		>"$NS_TMP/$fam.tx.log" 2>&1 ||
		ns_fail "$fam: sender: $(cat "$NS_TMP/$fam.tx.log")"
	for k in 2 3; do
		st=0
		ns_wait "${rx[k]}" 30 || st=$?
		cat "$NS_TMP/$fam.rx$k.log"
		[ "$st" -eq 0 ] || ns_fail "$fam: host $k exited $st"
		grep -q "^received $n" "$NS_TMP/$fam.rx$k.log" ||
			ns_fail "$fam: host $k did not get its $n messages"
	done
	# Detached (and gone): the daemons left the IP group.
	for k in 2 3; do
		! member "$k" "$fam" "$hex" ||
			ns_fail "$fam: host $k still a member of $group"
	done
	ns_log "$fam: $n messages to $group reached hosts 2 and 3"
}

run v4 239.7.7.7 070707EF
run v6 ff0e::7777 ff0e0000000000000000000000007777
ns_pass
