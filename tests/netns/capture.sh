#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# What goes over the wire between two hosts is RoCEv2 that others can
# read: tcpdump records host 2's veth while xhost runs every operation
# (RC, UD, error paths) over IPv4 and then IPv6; tshark must decode every
# packet as InfiniBand with no malformed packet and no expert error, and
# our ICRC check (icrc_check, daemon/net/icrc.h) must pass on every one
# and see every opcode the run uses.  The daemon's own capture
# (SOFTRDMA_PCAP) of host 1 goes through the same checks.
. "$(dirname "$0")/lib.sh"

ns_init capture 110
command -v tcpdump >/dev/null || ns_skip "no tcpdump"
command -v tshark >/dev/null || ns_skip "no tshark"
XHOST=${NS_XHOST:-$NS_BUILD/tests/netns/netns_xhost}
ICRC=${NS_ICRC_CHECK:-$NS_BUILD/tests/netns/netns_icrc_check}
[ -x "$XHOST" ] || ns_fail "no xhost program ($XHOST)"
[ -x "$ICRC" ] || ns_fail "no icrc_check program ($ICRC)"
# shellcheck disable=SC2034 # read through eval in lib.sh
NS_DAEMON_ENV_1="SOFTRDMA_PCAP=$NS_TMP/daemon1.pcap"
ns_setup 2
ns_no_gso 1 2

cap=$NS_TMP/veth2.pcap
ns_bg 2 tcpdump tcpdump -i veth2 -U -n -s 0 -B 131072 -w "$cap" udp port 4791
tcpdump_pid=$NS_BG_PID
for _ in $(seq 50); do
	grep -q "listening on" "$NS_TMP/tcpdump.log" 2>/dev/null && break
	sleep 0.1
done
grep -q "listening on" "$NS_TMP/tcpdump.log" || ns_fail "tcpdump did not start"

ns_pair 1 2 19100 60 xhost_v4 \
	"$XHOST" server -t all -d srd1 -f v4 -p 19100 -T 60 -- \
	"$XHOST" client -t all -d srd2 -f v4 -p 19100 -T 60 "$(ns_addr 1 v4)" ||
	ns_fail "xhost over IPv4 under capture"
ns_pair 1 2 19101 60 xhost_v6 \
	"$XHOST" server -t ops -d srd1 -f v6 -p 19101 -T 60 -- \
	"$XHOST" client -t ops -d srd2 -f v6 -p 19101 -T 60 "$(ns_addr 1 v6)" ||
	ns_fail "xhost over IPv6 under capture"
sleep 0.3
kill -INT "$tcpdump_pid"
ns_wait "$tcpdump_pid" 10
cat "$NS_TMP/tcpdump.log"

# Every opcode the runs use: SEND first/middle/last/only (+imm), WRITE
# first/middle/last/only (+imm), READ request and responses, ACK, atomic
# ACK, CMP_SWAP, FETCH_ADD, SEND last/only with Invalidate, UD SEND only
# (+imm).
need=0x00,0x01,0x02,0x04,0x05,0x06,0x07,0x08,0x0a,0x0b,0x0c,0x0d,0x0e,0x0f,0x10,0x11,0x12,0x13,0x14,0x16,0x17,0x64,0x65

# Wireshark guesses what a RoCE payload carries.  Two guesses take our
# test patterns for something they are not and then call the packet
# malformed: RPC-over-RDMA claims any payload (an empty SEND too), and
# Ethernet-over-IB reads a payload starting 0x91 0x00 as a VLAN tag.
# Those guesses are off; every header of ours is still decoded.
TSHARK=(tshark --disable-heuristic eth_over_ib
	--disable-heuristic rpcrdma_infiniband)

# check FILE WHAT: tshark and our ICRC check agree it is clean RoCE.
check()
{
	local f=$1 what=$2 total roce bad

	[ -s "$f" ] || ns_fail "$what: no capture file $f"
	"${TSHARK[@]}" -r "$f" >"$NS_TMP/tshark.txt" 2>"$NS_TMP/tshark.err" ||
		ns_fail "$what: tshark failed: $(grep -v 'Running as' "$NS_TMP/tshark.err")"
	total=$(wc -l <"$NS_TMP/tshark.txt")
	roce=$("${TSHARK[@]}" -r "$f" -Y infiniband 2>/dev/null | wc -l)
	bad=$("${TSHARK[@]}" -r "$f" -Y '_ws.malformed || _ws.expert.severity >= error' 2>/dev/null)
	ns_log "$what: $total packets, $roce decoded as InfiniBand"
	if [ -n "$bad" ]; then
		echo "$bad" | head -n 20
		ns_fail "$what: tshark finds malformed packets or errors"
	fi
	[ "$total" -gt 0 ] || ns_fail "$what: empty capture"
	[ "$total" = "$roce" ] ||
		ns_fail "$what: $((total - roce)) of $total packets not decoded as RoCE"
	"$ICRC" "$f" --min 100 --require "$need" ||
		ns_fail "$what: ICRC check"
}

# SEND with Invalidate: tshark names both opcodes and reads the IETH.
inv_check()
{
	local f=$1 what=$2 n

	n=$("${TSHARK[@]}" -r "$f" -Y 'infiniband.bth.opcode == 0x16 || infiniband.bth.opcode == 0x17' \
		-T fields -e infiniband.bth.opcode -e infiniband.ieth 2>/dev/null |
		awk 'NF == 2' | wc -l)
	[ "$n" -ge 2 ] ||
		ns_fail "$what: tshark decodes $n SEND with Invalidate packets with an IETH"
	ns_log "$what: $n SEND with Invalidate packets, IETH decoded"
}

check "$cap" "tcpdump on veth2"
inv_check "$cap" "tcpdump on veth2"
# The daemon writes its capture out when it stops.
ns_stop_daemon 1
check "$NS_TMP/daemon1.pcap" "softrdmad capture (SOFTRDMA_PCAP)"
inv_check "$NS_TMP/daemon1.pcap" "softrdmad capture (SOFTRDMA_PCAP)"
ns_pass
