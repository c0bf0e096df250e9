#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# UD multicast across hosts over the UDP wire: three hosts on a bridge,
# Debian's unmodified mckey (rdmacm-utils) on our libraries.  Hosts 2 and
# 3 join 239.1.2.3 (their daemons join the IP group on their veth) and
# wait for every message; host 1 sends them to the group.  Host 1's
# capture (SOFTRDMA_PCAP) must hold every datagram, which tshark decodes
# as a UD SEND to QPN 0xFFFFFF with a DETH carrying the UDP Q_Key, sent
# to the IP group, with a good ICRC.  mckey writes line by line (stdbuf): its "joined" line
# tells when a receiver is ready.
. "$(dirname "$0")/lib.sh"

ns_init mcast 110
MCKEY=/usr/bin/mckey
[ -x "$MCKEY" ] || ns_skip "no $MCKEY (rdmacm-utils)"
command -v tshark >/dev/null || ns_skip "no tshark"
# shellcheck disable=SC2034 # read through eval in lib.sh
NS_DAEMON_ENV_1="SOFTRDMA_PCAP=$NS_TMP/daemon1.pcap"
ns_setup 3
group=239.1.2.3
n=40
declare -a rx

for k in 2 3; do
	ns_bg "$k" "rx$k" stdbuf -oL "$MCKEY" -m "$group" -b "$(ns_addr "$k" v4)" \
		-C "$n" -S 1000
	rx[k]=$NS_BG_PID
done
for k in 2 3; do
	for _ in $(seq 100); do
		grep -q "joined dgid" "$NS_TMP/rx$k.log" 2>/dev/null && break
		sleep 0.1
	done
	grep -q "joined dgid: ::ffff:$group" "$NS_TMP/rx$k.log" ||
		ns_fail "host $k did not join: $(cat "$NS_TMP/rx$k.log")"
done

ns_exec 1 "$MCKEY" -s -m "$group" -b "$(ns_addr 1 v4)" -C "$n" -S 1000 \
	>"$NS_TMP/tx.log" 2>&1 || ns_fail "sender: $(cat "$NS_TMP/tx.log")"
cat "$NS_TMP/tx.log"
for k in 2 3; do
	st=0
	ns_wait "${rx[k]}" 20 || st=$?
	cat "$NS_TMP/rx$k.log"
	[ "$st" -eq 0 ] ||
		ns_fail "host $k exited $st: not all of its $n messages came"
	grep -q "data transfers complete" "$NS_TMP/rx$k.log" ||
		ns_fail "host $k: no \"data transfers complete\""
done

# The capture is written every 100 ms.
sleep 0.5
tshark -r "$NS_TMP/daemon1.pcap" -Y "infiniband.bth.destqp == 0xffffff" \
	-T fields -e ip.dst -e infiniband.bth.opcode -e infiniband.deth.q_key \
	>"$NS_TMP/mc.txt" 2>"$NS_TMP/tshark.err" ||
	ns_fail "tshark: $(cat "$NS_TMP/tshark.err")"
got=$(wc -l <"$NS_TMP/mc.txt")
head -3 "$NS_TMP/mc.txt"
[ "$got" -eq "$n" ] || ns_fail "capture: $got datagrams to QPN 0xFFFFFF, expected $n"
# UD SEND only (+imm: mckey sends immediate data) is opcode 100 (101).
bad=$(awk -v g="$group" '$1 != g || ($2 != 100 && $2 != 101) ||
	tolower($3) !~ /^0x0*1234567$/' "$NS_TMP/mc.txt" | head -3)
[ -z "$bad" ] || ns_fail "capture: unexpected datagrams: $bad"
# Our ICRC check agrees with what the receivers accepted.
ICRC=${NS_ICRC_CHECK:-$NS_BUILD/tests/netns/netns_icrc_check}
if [ -x "$ICRC" ]; then
	"$ICRC" "$NS_TMP/daemon1.pcap" --min "$n" --require 0x65 ||
		ns_fail "capture: ICRC check"
fi
ns_pass
