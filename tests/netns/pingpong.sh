#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Two hosts: our ibv_{rc,uc,ud,srq}_pingpong across network namespaces,
# every buffer checked (-c), over the GIDs of one address family with one
# path MTU.
#
#   pingpong.sh v4|v6 1024|4096
#
# Path MTU 4096 needs frames of 4096 bytes of payload plus the IP, UDP and
# RoCE headers, so the veths get MTU 9000 for it (and stay at 1500, where
# the port MTU is 1024, otherwise).
. "$(dirname "$0")/lib.sh"

fam=${1:-v4}
mtu=${2:-1024}
ns_init "pingpong_${fam}_$mtu" 110
case $mtu in
1024) NS_MTU=1500 ;;
4096) NS_MTU=9000 ;;
*) ns_fail "path MTU $mtu: 1024 or 4096" ;;
esac
ns_setup 2

g1=$(ns_gid 1 "$fam")
g2=$(ns_gid 2 "$fam")
[ -n "$g1" ] && [ -n "$g2" ] || ns_fail "no $fam GID on srd1/srd2"
ns_log "GID index srd1 $g1, srd2 $g2"
# The TCP exchange goes over IPv4 whatever the GIDs: the pingpong servers
# (rdma-core's as ours) listen on the first passive address getaddrinfo()
# gives, 0.0.0.0.
server=$(ns_addr 1 v4)
port=18515
bad=()

# run NAME SECS ARGS...: server in host 1, client in host 2.
run()
{
	local name=$1 secs=$2 tag

	shift 2
	port=$((port + 1))
	tag=$name.$port
	ns_log "$name $*"
	if ! ns_pair 1 2 "$port" "$secs" "$tag" \
		"$NS_BIN/ibv_$name" -d srd1 -g "$g1" -p "$port" "$@" -- \
		"$NS_BIN/ibv_$name" -d srd2 -g "$g2" -p "$port" "$@" \
		"$server"; then
		bad+=("$name $*")
		return
	fi
	# The pingpongs report what they moved; a run that says nothing did
	# not really exchange.
	grep -q "iters in" "$NS_TMP/$tag.client.log" ||
		bad+=("$name $*: no report line")
}

run rc_pingpong 60 -m "$mtu" -c -n 500 -s 16384
run rc_pingpong 60 -m "$mtu" -c -n 200 -s 65536 -e
run uc_pingpong 60 -m "$mtu" -c -n 500 -s 16384
# A UD message is one packet: the size is the path MTU itself.
run ud_pingpong 60 -c -n 500 -s "$mtu"
run srq_pingpong 60 -m "$mtu" -c -n 200 -q 8 -s 8192

if [ ${#bad[@]} -gt 0 ]; then
	ns_fail "failed: $(printf '[%s] ' "${bad[@]}")"
fi
ns_pass
