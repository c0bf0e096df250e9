#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Two hosts, and the path between them cut under a live RC connection
# (timeout 14, retry_cnt 3): the next WRITE fails with
# IBV_WC_RETRY_EXC_ERR within 0.5x..4x of (retry_cnt + 1) x 67 ms; once the
# path is back, a new connection works (xhost -t cut).
#
#   cut.sh drop   host 1 drops everything it receives (nftables)
#   cut.sh down   host 1's veth goes down: host 2's veth loses its
#                 carrier, so host 2's port must go DOWN with
#                 IBV_EVENT_PORT_ERR and come back with PORT_ACTIVE
. "$(dirname "$0")/lib.sh"

mode=${1:-drop}
ns_init "cut_$mode" 80
XHOST=${NS_XHOST:-$NS_BUILD/tests/netns/netns_xhost}
[ -x "$XHOST" ] || ns_fail "no xhost program ($XHOST)"
ns_setup 2
ns1=$(ns_name 1)
events=
case $mode in
drop)
	command -v nft >/dev/null || ns_skip "no nft (apt-get install nftables)"
	ns_nft 1 ""
	cut="ip netns exec $ns1 nft add rule inet srd in drop"
	uncut="ip netns exec $ns1 nft flush chain inet srd in"
	;;
down)
	events=--port-events
	cut="ip -n $ns1 link set veth1 down"
	uncut="ip -n $ns1 link set veth1 up"
	;;
*) ns_fail "mode $mode: drop or down" ;;
esac

ns_pair 1 2 19000 70 cut \
	"$XHOST" server -t cut -d srd1 -p 19000 -T 70 -- \
	"$XHOST" client -t cut -d srd2 -p 19000 -T 70 \
	--cut-cmd "$cut" --uncut-cmd "$uncut" $events "$(ns_addr 1 v4)" ||
	ns_fail "link cut ($mode)"
grep -h '^#' "$NS_TMP/cut.client.log" | grep -E 'RETRY|event|cut|mend'
ns_pass
