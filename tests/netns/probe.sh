#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Two hosts: the interop lab's verbs_probe (tests/interop) between two
# softrdma daemons over UDP, before it meets rxe: every RC opcode and wire
# error over the IPv4-mapped GIDs, the opcodes over the IPv6 GIDs (the
# TCP exchange too), 1 MiB SEND/WRITE/READ at path MTU 1024 and 4096 (the
# veths at MTU 9000: the ports' MTU is 4096).  Each side checks its own
# completions, data and QP states; both must report every case.
. "$(dirname "$0")/lib.sh"

PROBE=${NS_VERBS_PROBE:-$NS_BUILD/tests/interop/verbs_probe}
ns_init probe 150
[ -x "$PROBE" ] || ns_fail "no $PROBE"
NS_MTU=9000
ns_setup 2

port=18600
bad=()

# run FAM NCASES ARGS...: server in host 1, client in host 2.
run()
{
	local fam=$1 want=$2 g1 g2 tag n

	shift 2
	port=$((port + 1))
	tag=probe.$port
	g1=$(ns_gid 1 "$fam")
	g2=$(ns_gid 2 "$fam")
	[ -n "$g1" ] && [ -n "$g2" ] || ns_fail "no $fam GID on srd1/srd2"
	ns_log "verbs_probe over $fam: $*"
	if ! ns_pair 1 2 "$port" 90 "$tag" \
		"$PROBE" -d srd1 -g "$g1" -p "$port" "$@" -- \
		"$PROBE" -d srd2 -g "$g2" -p "$port" "$@" "$(ns_addr 1 "$fam")"; then
		bad+=("$fam $*")
		return
	fi
	cat "$NS_TMP/$tag.client.log" "$NS_TMP/$tag.server.log"
	for side in client server; do
		n=$(grep -c "^probe .* $side *ok " "$NS_TMP/$tag.$side.log")
		[ "$n" = "$want" ] || bad+=("$fam $*: $n of $want cases ok ($side)")
	done
}

run v4 9 ops
run v4 6 errors
run v6 9 ops
run v4 3 -m 1024 -s 1048576 send,write,read
run v4 3 -m 4096 -s 1048576 send,write,read
[ ${#bad[@]} -eq 0 ] || ns_fail "failed: ${bad[*]}"
ns_pass
