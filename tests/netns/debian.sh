#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Two hosts, Debian's unmodified rdma-core and perftest programs on our
# library (LD_LIBRARY_PATH: our libibverbs.so.1 and the libmlx5/libefa
# shims perftest links): /usr/bin/ibv_rc_pingpong over the IPv4 and the
# IPv6 GIDs, mixed with our own ibv_rc_pingpong (either side), and
# ib_write_bw, ib_read_bw, ib_send_lat, ib_write_lat between the
# namespaces.  With -c, rdma-core's client sets the first byte of every
# page of its buffer and leaves the rest as it was; the server checks
# those bytes: a mixed pair must agree on that.
. "$(dirname "$0")/lib.sh"

ns_init debian 140
[ -x /usr/bin/ibv_rc_pingpong ] || ns_skip "no /usr/bin/ibv_rc_pingpong (ibverbs-utils)"
ns_setup 2
bad=()
port=18700

# The TCP exchanges go over IPv4 whatever the GIDs: rdma-core's servers
# listen on the first passive address getaddrinfo() gives, 0.0.0.0.
pp()
{
	local tag=$1 fam=$2 sbin=$3 cbin=$4 g1 g2

	shift 4
	g1=$(ns_gid 1 "$fam")
	g2=$(ns_gid 2 "$fam")
	port=$((port + 1))
	ns_log "$tag: $sbin / $cbin, $fam GIDs $g1 $g2"
	ns_pair 1 2 "$port" 60 "$tag" \
		"$sbin" -d srd1 -g "$g1" -p "$port" "$@" -- \
		"$cbin" -d srd2 -g "$g2" -p "$port" "$@" "$(ns_addr 1 v4)" ||
		bad+=("$tag")
}

pp deb_rc_v4 v4 /usr/bin/ibv_rc_pingpong /usr/bin/ibv_rc_pingpong -c -n 500 -s 8192
pp deb_rc_v6 v6 /usr/bin/ibv_rc_pingpong /usr/bin/ibv_rc_pingpong -c -n 500 -s 8192
pp deb_ud_v4 v4 /usr/bin/ibv_ud_pingpong /usr/bin/ibv_ud_pingpong -c -n 300 -s 1024
pp mixed_rc v4 /usr/bin/ibv_rc_pingpong "$NS_BIN/ibv_rc_pingpong" -c -n 300
pp mixed_rc2 v6 "$NS_BIN/ibv_rc_pingpong" /usr/bin/ibv_rc_pingpong -c -n 300

# perftest: "-x GID index", the server waits on TCP port -p.
perf()
{
	local tag=$1 fam=$2 bin=$3 g1 g2

	shift 3
	[ -x "$bin" ] || {
		ns_log "$tag: no $bin (perftest), not run"
		return
	}
	g1=$(ns_gid 1 "$fam")
	g2=$(ns_gid 2 "$fam")
	port=$((port + 1))
	ns_log "$tag: $bin $*"
	if ! ns_pair 1 2 "$port" 60 "$tag" \
		"$bin" -d srd1 -x "$g1" -p "$port" "$@" -- \
		"$bin" -d srd2 -x "$g2" -p "$port" "$@" "$(ns_addr 1 v4)"; then
		bad+=("$tag")
		return
	fi
	if grep -E "Couldn't|Unable|[Ff]ailed|[Ee]rror|not supported" \
		"$NS_TMP/$tag.client.log" "$NS_TMP/$tag.server.log"; then
		bad+=("$tag: error messages")
	fi
	# One result row: size, iterations, then figures.
	grep -E '^[[:space:]]*[0-9]+[[:space:]]+[0-9]+[[:space:]]+[0-9.]+' \
		"$NS_TMP/$tag.client.log" || bad+=("$tag: no result row")
}

perf write_bw_v4 v4 /usr/bin/ib_write_bw -s 65536 -n 2000 -F
perf write_bw_v6 v6 /usr/bin/ib_write_bw -s 65536 -n 1000 -F
perf read_bw_v4 v4 /usr/bin/ib_read_bw -s 65536 -n 1000 -F
perf send_lat_v4 v4 /usr/bin/ib_send_lat -s 2 -n 1000 -F
perf write_lat_v6 v6 /usr/bin/ib_write_lat -s 2 -n 1000 -F

[ ${#bad[@]} -eq 0 ] || ns_fail "failed: ${bad[*]}"
ns_pass
