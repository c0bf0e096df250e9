#!/bin/bash
# SPDX-License-Identifier: MIT
# ATOMIC WRITE (0x1D) and FLUSH (0x1C) over the UDP wire, read by tshark:
# every frame of the daemon's capture decodes as InfiniBand with no
# malformed packet and no expert error, both opcodes and their zero-length
# READ RESPONSE ONLY answers are there.  Debian 12's tshark (4.0) has no
# names for the two opcodes ("Unknown OpCode") but decodes their BTH.
# Usage: capture_a19.sh FUNC_RC_ATOMIC_WRITE_FLUSH
. "$(dirname "$0")/lib.sh"

command -v tshark >/dev/null || t_skip "no tshark"
prog=$1
cap=$T_TMP/a19.pcap
SOFTRDMA_WIRE=udp SOFTRDMA_UDP_PORT=0 SOFTRDMA_PCAP=$cap \
	SOFTRDMA_SOCKET="srd_a19_$$" "$prog" >"$T_TMP/run.log" 2>&1 ||
	{ t_show "$T_TMP/run.log"; t_fail "the traffic run failed"; }
[ -s "$cap" ] || t_fail "no capture"

# The daemon's UDP port is chosen at start: the port most frames go to.
port=$(tshark -r "$cap" -T fields -e udp.dstport 2>/dev/null |
	sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
[ -n "$port" ] || t_fail "no UDP frames in the capture"
TS=(tshark --disable-heuristic eth_over_ib
	--disable-heuristic rpcrdma_infiniband -r "$cap"
	-d "udp.port==$port,infiniband")
total=$("${TS[@]}" 2>/dev/null | wc -l)
ib=$("${TS[@]}" -Y infiniband 2>/dev/null | wc -l)
bad=$("${TS[@]}" -Y '_ws.malformed || _ws.expert.severity >= error' 2>/dev/null)
[ -z "$bad" ] || { echo "$bad" | head -20 >&2; t_fail "malformed frames"; }
[ "$total" -gt 100 ] || t_fail "only $total frames"
[ "$total" = "$ib" ] || t_fail "$((total - ib)) of $total frames not InfiniBand"

"${TS[@]}" -T fields -e infiniband.bth.opcode -e frame.len \
	-e _ws.col.Info 2>/dev/null >"$T_TMP/ops"
n_aw=$(awk -F'\t' '$1 == 29' "$T_TMP/ops" | wc -l)
n_fl=$(awk -F'\t' '$1 == 28' "$T_TMP/ops" | wc -l)
n_r0=$(awk -F'\t' '$1 == 16' "$T_TMP/ops" | wc -l)
[ "$n_aw" -ge 1000 ] || t_fail "$n_aw ATOMIC WRITE frames"
[ "$n_fl" -ge 10 ] || t_fail "$n_fl FLUSH frames"
# Each one answered but the six the error cases NAK.
[ "$n_r0" -ge $((n_aw + n_fl - 6)) ] ||
	t_fail "$n_r0 READ RESPONSE ONLY for $((n_aw + n_fl)) requests"
echo "frames $total; ATOMIC WRITE $n_aw, FLUSH $n_fl, READ RESPONSE ONLY $n_r0"
echo "tshark: $(awk -F'\t' '$1 == 29 { print $3; exit }' "$T_TMP/ops")"
echo "PASS"
