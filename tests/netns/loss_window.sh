#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# RC go-back-N on a lossy path resends what is in flight after each loss,
# so the requester's window shrinks under loss: 16 MiB streamed while
# host 1 drops 3 % of what it receives and host 2 1 % (nftables) must
# arrive whole, and host 2 must not send more than three times the
# packets the data needs (with the full 8192-packet window after every
# loss it sent about twenty times as many).  Counts packets, not time.
. "$(dirname "$0")/lib.sh"

ns_init loss_window 200
XHOST=${NS_XHOST:-$NS_BUILD/tests/netns/netns_xhost}
[ -x "$XHOST" ] || ns_fail "no xhost program ($XHOST)"
command -v nft >/dev/null || command -v iptables >/dev/null ||
	ns_skip "neither nft nor iptables (apt-get install nftables)"
NS_MTU=1500
MIB=16
ns_setup 2
ns_no_gso 1 2
ns_loss 1 3
ns_loss 2 1

ns_pair 1 2 18910 150 stream \
	"$XHOST" server -t stream -s $MIB -d srd1 -p 18910 -T 150 -- \
	"$XHOST" client -t stream -s $MIB -d srd2 -p 18910 -T 150 \
	"$(ns_addr 1 v4)" || ns_fail "RC stream over a lossy path"
grep -h '^#' "$NS_TMP/stream.client.log" | grep -E 'RC'

# Path MTU 1024 with a 1500-byte veth: one packet per KiB.
need=$((MIB * 1024))
stats=$(ns_exec 2 "$NS_BIN/softrdma" statistic 2>&1)
sent=$(printf '%s\n' "$stats" | grep -o 'tx_packets [0-9]*' | head -n 1 |
	cut -d' ' -f2)
lost=$(printf '%s\n' "$stats" | grep -o 'retransmits [0-9]*' | head -n 1 |
	cut -d' ' -f2)
echo "# host 2 sent $sent packets for $need of data, $lost retransmissions"
[ -n "$sent" ] || ns_fail "no tx_packets counter for srd2: $stats"
[ "$sent" -ge "$need" ] || ns_fail "sent $sent packets, fewer than $need"
[ "$sent" -le $((3 * need)) ] ||
	ns_fail "sent $sent packets for $need: whole windows resent per loss"
ns_pass
