#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Cross-host benchmark: two network namespaces joined by a veth (MTU 9000),
# one softrdmad each, and the same path measured with the kernel's UDP.
#
#   bench/netns/run.sh [-b BUILD] [-t SECS] [-r ROUNDS] [--mtu N]
#
#   -b BUILD   build tree (default: build next to the sources, or $SRD_BUILD)
#   -t SECS    seconds of each bulk measurement (default 3)
#   -r ROUNDS  UDP / RC bandwidth rounds, interleaved (default 3)
#   --mtu N    veth MTU (default 9000; path MTU 4096 needs more than 4200)
#
# Prints, then the ratios:
#   UDP goodput     4 KiB datagrams, UDP GSO batches + sendmmsg to a
#                   UDP_GRO + recvmmsg receiver (bench/udp_ref.c)
#   UDP, RoCE sizes the datagrams of 64 KiB RC WRITEs batched as softrdma
#                   must (udp_ref --roce-write: two sends a message, the
#                   first packet being longer); payload GB/s
#   RC WRITE 64 KiB ib_write_bw -D SECS (Debian perftest on our libibverbs),
#                   path MTU 4096, GB/s = 10^9 bytes/s
#   UDP RTT         16-byte ping-pong, both ends busy-polling; median
#   RC WRITE 2 B    ib_write_lat, typical (median) one-way latency, i.e.
#                   half a round trip
# The two bandwidths alternate, round after round, and each round's ratio
# is printed: a VM's host steals time in phases of seconds, and a phase
# that hits one measurement and not the other shows as an odd round, not
# as a skewed result.  The summary gives the median ratio and the ratio of
# the best RC round to the best UDP round.
# It is a command, not a test: exit 0 when everything ran, 1 otherwise;
# root and network namespaces are needed (exit 77 without).
here=$(cd "$(dirname "$0")" && pwd)
build=${SRD_BUILD:-$here/../../build}
secs=3
rounds=3
mtu=9000
while [ $# -gt 0 ]; do
	case $1 in
	-b) build=$2; shift 2 ;;
	-t) secs=$2; shift 2 ;;
	-r) rounds=$2; shift 2 ;;
	--mtu) mtu=$2; shift 2 ;;
	-h | --help) sed -n '4,30p' "$0"; exit 0 ;;
	*) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
SRD_BUILD=$(cd "$build" 2>/dev/null && pwd) || {
	echo "run.sh: no build tree $build" >&2
	exit 1
}
export SRD_BUILD
. "$here/../../tests/netns/lib.sh"

UDP_REF=$SRD_BUILD/bench/netns/udp_ref
ns_init bench 600
[ -x "$UDP_REF" ] || ns_fail "no $UDP_REF (build the udp_ref target)"
NS_MTU=$mtu
ns_setup 2
a1=$(ns_addr 1 v4)
g1=$(ns_gid 1 v4)
g2=$(ns_gid 2 v4)
ok=1

# key FILE KEY: the number after "KEY " in FILE.
key()
{
	sed -n "s/^$2 \([0-9.]*\).*/\1/p" "$1" | tail -n 1
}

have_perftest=1
if [ ! -x /usr/bin/ib_write_bw ] || [ ! -x /usr/bin/ib_write_lat ]; then
	echo "no /usr/bin/ib_write_bw or ib_write_lat (perftest): RC not measured"
	have_perftest=
	ok=0
fi

# udp_goodput TAG [udp_ref send options]: udp_val = GB/s of one UDP bulk
# measurement.
udp_goodput()
{
	local tag=$1 sink

	shift
	ns_bg 1 "udp_sink$tag" "$UDP_REF" sink -p 19500 -T $((secs + 30))
	sink=$NS_BG_PID
	sleep 0.3
	ns_exec 2 "$UDP_REF" send "$a1" -p 19500 -t "$secs" "$@" \
		>"$NS_TMP/udp_send$tag.log" 2>&1 || ok=0
	ns_wait "$sink" 10 || ok=0
	cat "$NS_TMP/udp_send$tag.log" "$NS_TMP/udp_sink$tag.log"
	udp_val=$(key "$NS_TMP/udp_sink$tag.log" goodput_gbps)
}

# rc_write_bw ROUND: rc_val = GB/s of ib_write_bw 64 KiB for SECS.
rc_write_bw()
{
	local r=$1 port=$((19502 + 2 * $1))

	rc_val=
	[ -n "$have_perftest" ] || return 0
	if ns_pair 1 2 $port 120 "write_bw$r" \
		/usr/bin/ib_write_bw -d srd1 -x "$g1" -m 4096 -s 65536 \
		-D "$secs" -F --report_gbits -p $port -- \
		/usr/bin/ib_write_bw -d srd2 -x "$g2" -m 4096 -s 65536 \
		-D "$secs" -F --report_gbits -p $port "$a1"; then
		cat "$NS_TMP/write_bw$r.client.log"
		# "65536 iters peak avg msgrate": average Gb/s -> GB/s.
		rc_val=$(awk '$1 == 65536 && NF >= 5 { printf "%.3f", $4 / 8 }' \
			"$NS_TMP/write_bw$r.client.log")
	else
		ok=0
	fi
}

# (1) Bandwidth, UDP and RC in turn.
udp_all=()
shape_all=()
rc_all=()
for r in $(seq 1 "$rounds"); do
	udp_goodput "$r" -s 4096
	udp_all+=("${udp_val:--}")
	udp_goodput "$r.roce" --roce-write
	# Datagram bytes -> payload: 65536 of the 65808 bytes a message takes.
	[ -n "$udp_val" ] &&
		udp_val=$(awk -v v="$udp_val" 'BEGIN { printf "%.3f", v * 65536 / 65808 }')
	shape_all+=("${udp_val:--}")
	rc_write_bw "$r"
	rc_all+=("${rc_val:--}")
done

# (2) UDP round trip.
ns_bg 1 udp_pong "$UDP_REF" pong -p 19501 -T 120
pong=$NS_BG_PID
sleep 0.3
ns_exec 2 "$UDP_REF" ping "$a1" -p 19501 -n 20000 -s 16 \
	>"$NS_TMP/udp_ping.log" 2>&1 || ok=0
ns_wait "$pong" 10
cat "$NS_TMP/udp_ping.log"
udp_rtt=$(key "$NS_TMP/udp_ping.log" rtt_median_us)

# (3) RC WRITE 2 B latency.
rc_lat=
if [ -n "$have_perftest" ]; then
	if ns_pair 1 2 19503 120 write_lat \
		/usr/bin/ib_write_lat -d srd1 -x "$g1" -m 4096 -s 2 \
		-n 5000 -F -p 19503 -- \
		/usr/bin/ib_write_lat -d srd2 -x "$g2" -m 4096 -s 2 \
		-n 5000 -F -p 19503 "$a1"; then
		cat "$NS_TMP/write_lat.client.log"
		# "2 5000 t_min t_max t_typical ...": the typical one-way.
		rc_lat=$(awk '$1 == 2 && NF >= 5 { print $5 }' \
			"$NS_TMP/write_lat.client.log")
	else
		ok=0
	fi
fi

ratio()
{
	if [ -n "$1" ] && [ -n "$2" ]; then
		awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }'
	else
		echo -
	fi
}

half_rtt=
[ -n "$udp_rtt" ] && half_rtt=$(awk -v r="$udp_rtt" 'BEGIN { printf "%.2f", r / 2 }')
echo
echo "softrdma across two network namespaces (veth MTU $mtu, $(nproc) CPUs)"
printf '  %-6s %9s %15s %14s %8s %8s\n' round "UDP GB/s" \
	"UDP RoCE sizes" "RC WRITE GB/s" "RC/UDP" "RC/RoCE"
ratios=()
ratios_shape=()
for i in "${!udp_all[@]}"; do
	q=$(ratio "${rc_all[$i]#-}" "${udp_all[$i]#-}")
	qs=$(ratio "${rc_all[$i]#-}" "${shape_all[$i]#-}")
	ratios+=("$q")
	ratios_shape+=("$qs")
	printf '  %-6s %9s %15s %14s %8s %8s\n' $((i + 1)) "${udp_all[$i]}" \
		"${shape_all[$i]}" "${rc_all[$i]}" "$q" "$qs"
done
best()
{
	printf '%s\n' "$@" | grep -v '^-$' | sort -g | tail -n 1
}
median()
{
	printf '%s\n' "$@" | grep -v '^-$' | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}
udp_best=$(best "${udp_all[@]}")
shape_best=$(best "${shape_all[@]}")
rc_best=$(best "${rc_all[@]}")
printf '  %-38s %10s\n' "UDP goodput, 4 KiB, GSO/GRO, best" "${udp_best:--} GB/s"
printf '  %-38s %10s\n' "UDP goodput, RoCE WRITE sizes, best" "${shape_best:--} GB/s"
printf '  %-38s %10s\n' "RC WRITE 64 KiB (ib_write_bw), best" "${rc_best:--} GB/s"
printf '  %-38s %10s\n' "UDP round trip, 16 B, median" "${udp_rtt:--} us"
printf '  %-38s %10s\n' "RC WRITE 2 B one-way (ib_write_lat)" "${rc_lat:--} us"
echo "ratios"
printf '  %-38s %10s\n' "RC WRITE / UDP goodput, median round" "$(median "${ratios[@]}")"
printf '  %-38s %10s\n' "best RC WRITE / best UDP goodput" "$(ratio "$rc_best" "$udp_best")"
printf '  %-38s %10s\n' "RC WRITE / UDP RoCE sizes, median" "$(median "${ratios_shape[@]}")"
printf '  %-38s %10s\n' "best RC WRITE / best UDP RoCE sizes" "$(ratio "$rc_best" "$shape_best")"
printf '  %-38s %10s\n' "RC one-way latency / UDP RTT" "$(ratio "$rc_lat" "$udp_rtt")"
printf '  %-38s %10s\n' "RC one-way latency / UDP half RTT" "$(ratio "$rc_lat" "$half_rtt")"
[ $ok = 1 ] || ns_fail "some measurements failed (see above)"
ns_pass
