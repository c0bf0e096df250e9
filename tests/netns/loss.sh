#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Two hosts over a path that loses packets.
#
#   loss.sh nft      nftables drops packets at random in the hosts: 3 % of
#                    what host 1 (the receiver) gets, 1 % of what host 2
#                    gets (ACKs, READ responses); then 5 % for UC and UD.
#   loss.sh faults   the daemons' own fault injection (SOFTRDMA_FAULTS):
#                    reordering, duplication, corruption, 1 ms delays and
#                    some drops, in both daemons.
#
# RC: 64 MiB in 1 MiB messages, WRITE_WITH_IMM and SEND_WITH_IMM in turn,
# must arrive whole and in order, then 4 MiB of READs and 200 FETCH_ADDs
# each done once (xhost -t stream).  UC and UD: 1000 messages each, some
# lost but not most, every one delivered intact, nothing hangs (xhost -t
# lossy).
. "$(dirname "$0")/lib.sh"

mode=${1:-nft}
ns_init "loss_$mode" 230
XHOST=${NS_XHOST:-$NS_BUILD/tests/netns/netns_xhost}
[ -x "$XHOST" ] || ns_fail "no xhost program ($XHOST)"
NS_MTU=1500
faults=()
case $mode in
nft)
	command -v nft >/dev/null || command -v iptables >/dev/null ||
		ns_skip "neither nft nor iptables (apt-get install nftables)"
	;;
faults)
	# Rules: see softrdmad(8).  Every kind of fault, on both daemons.
	NS_FAULTS=${NS_FAULTS:-"reorder prob=0.02;dup prob=0.02;corrupt prob=0.01;delay us=1000 prob=0.02;drop prob=0.01"}
	# shellcheck disable=SC2034 # read through eval in lib.sh
	NS_DAEMON_ENV="SOFTRDMA_FAULTS=$NS_FAULTS"
	faults=(--faults)
	;;
*) ns_fail "mode $mode: nft or faults" ;;
esac
ns_setup 2
# Loss per packet, not per GSO batch.
ns_no_gso 1 2

if [ "$mode" = faults ]; then
	# Rules the daemon did not take would make this a clean-path test
	# (lossy --loss then fails: nothing is lost).
	for k in 1 2; do
		grep -h "faults:" "$NS_TMP/softrdmad$k.log"
	done
else
	ns_loss 1 3
	ns_loss 2 1
fi

# Both parts run whatever the first gives: each tells something.
bad=()
ns_pair 1 2 18900 120 stream \
	"$XHOST" server -t stream -s 64 -d srd1 -p 18900 -T 120 "${faults[@]}" -- \
	"$XHOST" client -t stream -s 64 -d srd2 -p 18900 -T 120 "${faults[@]}" \
	"$(ns_addr 1 v4)" || bad+=("RC over a lossy path")
grep -h '^#' "$NS_TMP/stream.client.log" | grep -E 'RC'
ns_show_stats >"$NS_TMP/stream-statistics.log" 2>&1

[ "$mode" = nft ] && ns_loss 1 5
ns_pair 1 2 18901 80 lossy \
	"$XHOST" server -t lossy --loss -d srd1 -p 18901 -T 80 "${faults[@]}" -- \
	"$XHOST" client -t lossy --loss -d srd2 -p 18901 -T 80 "${faults[@]}" \
	"$(ns_addr 1 v4)" || bad+=("UC/UD over a lossy path")
grep -h '^#' "$NS_TMP/lossy.server.log" | grep -E 'UC|UD'
if [ "$mode" = nft ]; then
	ip netns exec "$(ns_name 1)" nft list chain inet srd in | grep -E 'drop'
fi
[ ${#bad[@]} -eq 0 ] || ns_fail "$(printf '[%s] ' "${bad[@]}")"
ns_pass
