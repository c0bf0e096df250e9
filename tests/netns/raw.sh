#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Two hosts: raw packet QPs across a veth (raw_peer.c).  Host 2's raw QPs
# have flow rules (IPv4 + UDP to its MAC and address, a VLAN tag + UDP,
# IPv6 + UDP, a SNIFFER); host 1's raw QP sends them Ethernet frames,
# some for each rule and some for none (another port, another VLAN, no
# tag, the other IP version).  Each rule's QP must get exactly its frames,
# intact; the sniffer every frame.  Meanwhile an RC pair on the same two
# devices (ibv_rc_pingpong, every buffer checked) must work as before,
# and the sniffers of both hosts must see its RoCE v2 packets.  Then
# `softrdma statistic`: what host 1 sent raw, what host 2 left unsteered
# and left to the RoCE path.
. "$(dirname "$0")/lib.sh"

PEER=${NS_RAW_PEER:-$NS_BUILD/tests/netns/netns_raw_peer}
ns_init raw 110
[ -x "$PEER" ] || ns_fail "no $PEER"
ns_setup 2
# The wire as a NIC has it: frames of the MTU, not GSO batches (a sniffer
# sees what the interface carries).
ns_no_gso 1 2

port=$((20000 + RANDOM % 20000))
mac1=$(ns_exec 1 cat /sys/class/net/veth1/address)
mac2=$(ns_exec 2 cat /sys/class/net/veth2/address)
hosts="$mac1,$mac2,$(ns_addr 1 v4),$(ns_addr 2 v4),$(ns_addr 1 v6),$(ns_addr 2 v6)"
ns_log "raw frames from $mac1 to $mac2, ports $port.."

stop=$NS_TMP/stop
ns_bg 2 raw.recv env SRD_TEST_WATCHDOG_S=100 "$PEER" recv "$port" "$hosts" "$stop"
rpid=$NS_BG_PID
for ((i = 0; i < 100; i++)); do
	grep -q '^ready' "$NS_TMP/raw.recv.log" 2>/dev/null && break
	kill -0 "$rpid" 2>/dev/null || break
	sleep 0.1
done
grep -q '^ready' "$NS_TMP/raw.recv.log" || {
	cat "$NS_TMP/raw.recv.log"
	ns_fail "host 2's raw QPs did not come up"
}
ns_bg 1 raw.send env SRD_TEST_WATCHDOG_S=100 "$PEER" send "$port" "$hosts" "$stop"
spid=$NS_BG_PID
for ((i = 0; i < 100; i++)); do
	grep -q '^sent' "$NS_TMP/raw.send.log" 2>/dev/null && break
	kill -0 "$spid" 2>/dev/null || break
	sleep 0.1
done
grep -q '^sent' "$NS_TMP/raw.send.log" || {
	cat "$NS_TMP/raw.send.log"
	ns_fail "host 1's raw QP did not send"
}
# The frames raw_peer sent, and those no rule of host 2 takes.
NFRAMES=$(sed -n 's/^sent \([0-9]*\),.*/\1/p' "$NS_TMP/raw.send.log")
NUNSTEERED=$(sed -n 's/^sent .*, \([0-9]*\) for no rule/\1/p' "$NS_TMP/raw.send.log")

# RoCE on the same devices while both have raw QPs and a sniffer.
g1=$(ns_gid 1 v4)
g2=$(ns_gid 2 v4)
[ -n "$g1" ] && [ -n "$g2" ] || ns_fail "no v4 GID on srd1/srd2"
bad=()
ns_log "ibv_rc_pingpong with raw QPs on both devices"
ns_pair 1 2 18540 60 rc \
	"$NS_BIN/ibv_rc_pingpong" -d srd1 -g "$g1" -p 18540 -c -n 200 -s 16384 -- \
	"$NS_BIN/ibv_rc_pingpong" -d srd2 -g "$g2" -p 18540 -c -n 200 -s 16384 \
	"$(ns_addr 1 v4)" || bad+=("rc_pingpong failed")
grep -q "iters in" "$NS_TMP/rc.client.log" 2>/dev/null ||
	bad+=("rc_pingpong: no report line")
grep -h "iters in" "$NS_TMP/rc.client.log" 2>/dev/null

touch "$stop"
ns_wait "$rpid" 20 || bad+=("host 2's raw QPs: $(grep -v '^#' "$NS_TMP/raw.recv.log" | tail -n 3 | tr '\n' ' ')")
ns_wait "$spid" 20 || bad+=("host 1's raw side: $(grep -v '^#' "$NS_TMP/raw.send.log" | tail -n 3 | tr '\n' ' ')")
grep -v '^#' "$NS_TMP/raw.recv.log" "$NS_TMP/raw.send.log"

# The counters stay with the devices after their raw QPs are gone.
counter()
{
	ns_exec "$1" "$NS_BIN/softrdma" statistic show link "srd$1/1" |
		sed -n "s/.* $2 \([0-9]*\).*/\1/p"
}
sent=$(counter 1 raw_sent_pkts)
unsteered=$(counter 2 raw_rcvd_unsteered)
rcvd=$(counter 2 raw_rcvd_pkts)
roce=$(counter 2 raw_rcvd_roce)
ns_log "host 1 raw_sent_pkts $sent; host 2 raw_rcvd_pkts $rcvd," \
	"raw_rcvd_unsteered $unsteered, raw_rcvd_roce $roce"
[ "$sent" = "$NFRAMES" ] || bad+=("host 1 raw_sent_pkts $sent, want $NFRAMES")
[ "${unsteered:-0}" -ge "$NUNSTEERED" ] ||
	bad+=("host 2 raw_rcvd_unsteered $unsteered, want >= $NUNSTEERED")
[ "${rcvd:-0}" -ge $((NFRAMES + ${roce:-0})) ] ||
	bad+=("host 2 raw_rcvd_pkts $rcvd, want >= $NFRAMES + $roce")
[ "${roce:-0}" -gt 0 ] || bad+=("host 2 raw_rcvd_roce 0")

[ ${#bad[@]} -eq 0 ] || ns_fail "$(printf '[%s] ' "${bad[@]}")"
ns_pass
