#!/bin/bash
# SPDX-License-Identifier: MIT
# XRC over the UDP wire, read by tshark: every frame of the daemon's
# capture decodes as InfiniBand with no malformed packet and no expert
# error, the XRC requests (SEND, RDMA WRITE, READ, FETCH ADD) and their
# XRC responses (ACKNOWLEDGE, READ RESPONSE, ATOMIC ACKNOWLEDGE) are there
# by opcode, every request carries the SRQ number it was sent to, and the
# two requests naming no SRQ of the domain are counted (xrc_srqn_errs).
# Debian 12's tshark (4.0) names the XRC opcodes but has no dissector for
# the XRCETH: it shows the 4 bytes after the BTH as "Unknown/Vendor
# Specific Data", where the SRQ number is read.
# Usage: capture_xrc.sh FUNC_XRC_SRQ
. "$(dirname "$0")/lib.sh"

command -v tshark >/dev/null || t_skip "no tshark"
prog=$1
cap=$T_TMP/xrc.pcap
T_DAEMON_ARGS="--wire udp --udp-port 0 --pcap $cap"
t_start_daemon
"$prog" >"$T_TMP/run.log" 2>&1 ||
	{ t_show "$T_TMP/run.log"; t_fail "the traffic run failed"; }
# The two requests naming no SRQ of the domain (SRQ 0, another domain's)
# are counted by the target QPs (their totals stay with the device).
cli=$(dirname "$SOFTRDMAD")/softrdma
errs=$("$cli" -n -s "$SOFTRDMA_SOCKET" statistic show link softrdma0 |
	tr ' ' '\n' | awk '$1 == "xrc_srqn_errs" { getline; print }')
[ "$errs" = 2 ] || t_fail "xrc_srqn_errs ${errs:-missing}, expected 2"
# The capture is complete once the daemon has exited.
kill "$T_DAEMON"
wait "$T_DAEMON" 2>/dev/null
T_DAEMON=""
[ -s "$cap" ] || t_fail "no capture"

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
[ "$total" -gt 40 ] || t_fail "only $total frames"
[ "$total" = "$ib" ] || t_fail "$((total - ib)) of $total frames not InfiniBand"

"${TS[@]}" -T fields -e infiniband.bth.opcode -e infiniband.vendor \
	2>/dev/null >"$T_TMP/ops"
count() { awk -F'\t' -v op="$1" '$1 == op' "$T_TMP/ops" | wc -l; }
# 0xA0 + the RC operation: SEND ONLY 0xA4, FIRST/MIDDLE/LAST 0xA0-0xA2,
# WRITE ONLY 0xAA, WRITE ONLY IMM 0xAB, READ REQUEST 0xAC, READ RESPONSE
# FIRST..ONLY 0xAD-0xB0, ACKNOWLEDGE 0xB1, ATOMIC ACK 0xB2, FETCH ADD 0xB4.
for op in 164 160 161 162 170 171 172 177 178 180; do
	[ "$(count $op)" -ge 1 ] || t_fail "no frame with opcode $op"
done
[ $(($(count 173) + $(count 176))) -ge 1 ] || t_fail "no XRC READ RESPONSE"
# No RC opcode: both ends are XRC QPs.
rc=$(awk -F'\t' '$1 < 32' "$T_TMP/ops" | wc -l)
[ "$rc" = 0 ] || t_fail "$rc RC frames"
# Requests (0xA0-0xAC, 0xB3-0xB7) carry the XRCETH: 8 zero bits and a
# 24-bit SRQ number, 1..0xFFFFFF but for the one sent to SRQ 0 on purpose.
awk -F'\t' '($1 >= 160 && $1 <= 172) || ($1 >= 179 && $1 <= 183) {
	print substr($2, 1, 8) }' "$T_TMP/ops" | sort | uniq -c >"$T_TMP/srqn"
nreq=$(awk '{ n += $1 } END { print n + 0 }' "$T_TMP/srqn")
[ "$nreq" -ge 20 ] || t_fail "only $nreq XRC requests"
awk 'length($2) != 8 || substr($2, 1, 2) != "00" { bad = 1 } END { exit bad }' "$T_TMP/srqn" ||
	{ cat "$T_TMP/srqn" >&2; t_fail "an XRCETH with reserved bits set"; }
zero=$(awk '$2 == "00000000" { print $1 }' "$T_TMP/srqn")
[ "${zero:-0}" = 1 ] || t_fail "${zero:-0} requests to SRQ 0, expected 1"
nsrq=$(awk '$2 != "00000000"' "$T_TMP/srqn" | wc -l)
[ "$nsrq" -ge 3 ] || t_fail "requests to $nsrq SRQs, expected 3"
echo "frames $total; XRC requests $nreq to SRQs: $(awk '{ printf "%s(%s) ", $2, $1 }' "$T_TMP/srqn")"
echo "PASS"
