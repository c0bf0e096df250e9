#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# XRC between two hosts: Debian's unmodified ibv_xsrq_pingpong on our
# library, server on host 1, client on host 2, over the IPv4 and the IPv6
# GIDs, one and several packets per message, polling and with completion
# events.  Each host's daemon keeps its own XRC domain for the program's
# /tmp/xrc_domain; the XRC requests and their responses cross the veth
# as RoCEv2.  Both ends must exit 0 and print "success".
. "$(dirname "$0")/lib.sh"

ns_init xsrq 100
[ -x /usr/bin/ibv_xsrq_pingpong ] ||
	ns_skip "no /usr/bin/ibv_xsrq_pingpong (ibverbs-utils)"
ns_setup 2
bad=()
port=18900

xs()
{
	local tag=$1 fam=$2 g1 g2

	shift 2
	g1=$(ns_gid 1 "$fam")
	g2=$(ns_gid 2 "$fam")
	port=$((port + 1))
	ns_log "$tag: $fam GIDs $g1 $g2, $*"
	if ! ns_pair 1 2 "$port" 60 "$tag" \
		/usr/bin/ibv_xsrq_pingpong -d srd1 -g "$g1" -p "$port" "$@" -- \
		/usr/bin/ibv_xsrq_pingpong -d srd2 -g "$g2" -p "$port" "$@" \
		"$(ns_addr 1 v4)"; then
		bad+=("$tag")
		return
	fi
	grep -qx success "$NS_TMP/$tag.server.log" &&
		grep -qx success "$NS_TMP/$tag.client.log" ||
		bad+=("$tag: no success")
}

xs xsrq_v4 v4 -n 200
xs xsrq_v6 v6 -n 200 -s 65536
xs xsrq_v4_events v4 -n 100 -s 10000 -e

[ ${#bad[@]} -eq 0 ] || ns_fail "failed: ${bad[*]}"
ns_pass
