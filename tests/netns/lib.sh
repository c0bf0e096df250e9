# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Hosts in network namespaces, for tests that cross a network.
#
# A test script sources this file, then:
#
#   ns_init NAME [SECONDS]   root and namespaces or exit 77; a temporary
#                            directory ($NS_TMP), a watchdog that ends the
#                            test after SECONDS (default 240), and a trap
#                            that always removes what the test made
#   ns_setup N [bridge]      N hosts 1..N.  N = 2: one veth between host 1
#                            and host 2; otherwise (or with "bridge") each
#                            host's veth ends on a bridge in a namespace of
#                            its own.  Host k has 10.X.0.k/24 and fd00:X::k/64
#                            on vethk, and a private softrdmad with one
#                            device srdk on vethk (no default device).
#   ns_exec K CMD...         CMD in host K with the host's softrdma
#                            environment (socket, daemon, library path)
#   ns_bg K TAG CMD...       the same in the background, output in
#                            $NS_TMP/TAG.log; sets NS_BG_PID
#   ns_wait PID SECS         waits for a background command; its status,
#                            or 124 after killing it when it overran
#   ns_loss K PERCENT        drop PERCENT % of the RoCE packets host K
#                            receives (nftables, else iptables)
#   ns_cut K / ns_uncut K    drop everything host K receives / stop that
#   ns_no_gso K...           the veths cut UDP GSO batches into packets
#   ns_gid K v4|v6           GID index of host K's IPv4-mapped or IPv6 GID
#   ns_daemon_pid K / ns_stop_daemon K   host K's softrdmad
#   ns_addr K v4|v6          host K's address
#   ns_pass / ns_fail MSG / ns_skip MSG   verdicts; ns_pass also checks
#                            that every daemon still runs
#
# Settings read by ns_setup (set them before calling it):
#   NS_MTU                   MTU of the veths and the bridge (default 1500)
#   NS_DEVICE_MODE           "config" (softrdmad --config), "cli" (the
#                            default device, then `softrdma link add`), or
#                            unset: config when softrdmad knows --config
#   NS_DAEMON_ARGS           words added to every softrdmad command line
#   NS_DAEMON_ARGS_k         ... to host k's only
#   NS_DAEMON_ENV / _k       VAR=value lines (one a line, values may hold
#                            spaces) for the daemon's environment
#
# The build tree comes from $SRD_BUILD (ctest sets it), else ../../build.

NS_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NS_BUILD=${SRD_BUILD:-$NS_LIB_DIR/../../build}
NS_BIN=$NS_BUILD/bin
NS_LIBDIR=$NS_BUILD/lib
NS_NAME="test"
NS_TMP=
NS_LIST=()
NS_HOSTS=0
NS_DAEMON_PIDS=()
NS_BG_PIDS=()
NS_WATCHDOG_PID=
NS_X=0
NS_DONE=0

ns_log()
{
	echo "# [$(date +%T.%3N)] $*"
}

# Everything the test left behind is printed before it goes: the daemons'
# logs tell why a transfer failed.
ns_dump_logs()
{
	local f

	[ -n "$NS_TMP" ] && [ -d "$NS_TMP" ] || return 0
	ns_show_stats >"$NS_TMP/zz-statistics.log" 2>&1
	for f in "$NS_TMP"/*.log; do
		[ -s "$f" ] || continue
		echo "----- ${f##*/} (last 40 lines)"
		tail -n 40 "$f"
	done
}

# The daemons' counters and QPs (softrdma statistic/resource show), while
# they still run.
ns_show_stats()
{
	local k

	[ -x "$NS_BIN/softrdma" ] || return 0
	for k in $(seq 1 "$NS_HOSTS"); do
		echo "== host $k: statistic"
		ns_exec "$k" timeout 5 "$NS_BIN/softrdma" -n statistic show
		ns_exec "$k" timeout 5 "$NS_BIN/softrdma" -n resource show qp
	done
}

ns_cleanup()
{
	local rc=$? ns pid pids

	trap - EXIT INT TERM HUP
	[ "$NS_DONE" = 1 ] || {
		[ $rc -eq 0 ] && rc=1
		echo "FAIL $NS_NAME: exited without a verdict"
	}
	if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
		ns_dump_logs
	fi
	[ -n "$NS_WATCHDOG_PID" ] && kill "$NS_WATCHDOG_PID" 2>/dev/null
	for pid in "${NS_BG_PIDS[@]}" "${NS_DAEMON_PIDS[@]}"; do
		kill "$pid" 2>/dev/null
	done
	# What still runs inside our namespaces was started by this test.
	for ns in "${NS_LIST[@]}"; do
		pids=$(ip netns pids "$ns" 2>/dev/null)
		[ -n "$pids" ] && kill $pids 2>/dev/null
	done
	sleep 0.2
	for ns in "${NS_LIST[@]}"; do
		pids=$(ip netns pids "$ns" 2>/dev/null)
		[ -n "$pids" ] && kill -KILL $pids 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	[ -n "$NS_TMP" ] && [ -z "${NS_KEEP_TMP:-}" ] && rm -rf "$NS_TMP"
	exit $rc
}

ns_pass()
{
	local k pid

	[ -e "$NS_TMP/watchdog" ] && ns_fail "the watchdog ended the test"
	# A daemon that died would have been replaced by one the library
	# started: the test passed against the wrong device.
	for k in $(seq 1 "$NS_HOSTS"); do
		pid=$(ns_daemon_pid "$k")
		[ -z "$pid" ] || kill -0 "$pid" 2>/dev/null ||
			ns_fail "softrdmad of host $k (pid $pid) died"
	done
	NS_DONE=1
	echo "PASS $NS_NAME"
	exit 0
}

ns_fail()
{
	NS_DONE=1
	echo "FAIL $NS_NAME: $*" >&2
	exit 1
}

ns_skip()
{
	NS_DONE=1
	echo "SKIP $NS_NAME: $*"
	exit 77
}

# Namespaces of earlier runs of these tests whose process is gone (a test
# killed with SIGKILL cannot clean up after itself).
ns_reap_stale()
{
	local ns pid

	for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
		[[ $ns =~ ^srd-[a-z0-9_]+-([0-9]+)-(br|[0-9]+)$ ]] || continue
		pid=${BASH_REMATCH[1]}
		[ -d "/proc/$pid" ] && continue
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
}

ns_init()
{
	local secs=${2:-240} probe

	NS_NAME=$1
	trap ns_cleanup EXIT
	trap 'exit 1' INT TERM HUP
	if [ "$(id -u)" != 0 ]; then
		ns_skip "needs root for network namespaces"
	fi
	command -v ip >/dev/null || ns_skip "no ip(8)"
	probe=srd-probe-$$
	if ! ip netns add "$probe" 2>/dev/null; then
		ns_skip "cannot create network namespaces"
	fi
	ip netns del "$probe"
	[ -x "$NS_BIN/softrdmad" ] || ns_fail "no $NS_BIN/softrdmad (SRD_BUILD?)"
	ns_reap_stale
	NS_TMP=$(mktemp -d "/tmp/srd-$NS_NAME.XXXXXX")
	NS_X=$(($$ % 200 + 20))
	# Kills what runs in our namespaces (so a hung command returns) and
	# then the test itself, whose trap cleans up.
	(
		# Its sleep goes with it: a sleep left behind would hold the
		# test's output open (ctest waits for that) long after the end.
		trap 'kill $sp 2>/dev/null; exit 0' TERM
		# shellcheck disable=SC2217 # nothing may hold the test's stdin
		sleep "$secs" >/dev/null 2>&1 </dev/null &
		sp=$!
		wait $sp || exit 0
		echo "FAIL $NS_NAME: watchdog: still running after ${secs}s" >&2
		touch "$NS_TMP/watchdog"
		# The test first (its trap runs as soon as the command it
		# waits for returns), then what it waits for.
		kill -TERM $$
		for ns in $(cat "$NS_TMP/ns.list" 2>/dev/null); do
			ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL
		done
	) </dev/null &
	NS_WATCHDOG_PID=$!
	ns_log "$NS_NAME: build $NS_BUILD, scratch $NS_TMP"
}

ns_name()
{
	echo "srd-${NS_NAME//[^a-z0-9_]/_}-$$-$1"
}

ns_sock()
{
	echo "srd-$NS_NAME-$$-$1"
}

ns_addr()
{
	case $2 in
	v4) echo "10.$NS_X.0.$1" ;;
	v6) echo "fd00:$NS_X::$1" ;;
	*) ns_fail "ns_addr: family $2" ;;
	esac
}

ns_add_ns()
{
	ip netns add "$1" || ns_fail "ip netns add $1"
	NS_LIST+=("$1")
	echo "$1" >>"$NS_TMP/ns.list"
	ip -n "$1" link set lo up
}

# The environment every program of host k runs with.
ns_env()
{
	echo "SOFTRDMA_SOCKET=$(ns_sock "$1")" "SOFTRDMAD=$NS_BIN/softrdmad" \
		"LD_LIBRARY_PATH=$NS_LIBDIR"
}

ns_exec()
{
	local k=$1

	shift
	# shellcheck disable=SC2046
	ip netns exec "$(ns_name "$k")" env $(ns_env "$k") "$@"
}

ns_bg()
{
	local k=$1 tag=$2

	shift 2
	# A simple command, so that $! is the program itself (ip and env
	# exec it), not a subshell: ns_wait can then kill it.
	# shellcheck disable=SC2046
	ip netns exec "$(ns_name "$k")" env $(ns_env "$k") "$@" \
		>"$NS_TMP/$tag.log" 2>&1 </dev/null &
	NS_BG_PID=$!
	NS_BG_PIDS+=("$NS_BG_PID")
}

ns_wait()
{
	local pid=$1 secs=$2 t=0 rc

	while kill -0 "$pid" 2>/dev/null; do
		if [ $t -ge $((secs * 10)) ]; then
			kill -KILL "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			return 124
		fi
		sleep 0.1
		t=$((t + 1))
	done
	wait "$pid"
	rc=$?
	return $rc
}

# Is a TCP port listened on in host k?  (Servers take a moment to start.)
# ns_wait_cm_listen K PORT: an rdma_cm listener on PORT in host K (no
# TCP socket to look for: the daemon's ids), within 10 s.
ns_wait_cm_listen()
{
	local k=$1 port=$2 t=0

	while [ $t -lt 200 ]; do
		if ns_exec "$k" "$NS_BIN/softrdma" resource show cm_id \
			2>/dev/null | grep -qE "state LISTEN .*:$port( |$)"; then
			return 0
		fi
		sleep 0.05
		t=$((t + 1))
	done
	return 1
}

ns_wait_listen()
{
	local k=$1 port=$2 secs=${3:-10} t=0

	while [ $t -lt $((secs * 20)) ]; do
		if ip netns exec "$(ns_name "$k")" ss -Hltn "sport = :$port" |
			grep -q .; then
			return 0
		fi
		sleep 0.05
		t=$((t + 1))
	done
	return 1
}

ns_link_veth_pair()
{
	local a b

	a=$(ns_name 1)
	b=$(ns_name 2)
	ip -n "$a" link add veth1 type veth peer name veth2 netns "$b" ||
		ns_fail "veth between $a and $b"
}

ns_link_bridge()
{
	local n=$1 k br

	br=$(ns_name br)
	ns_add_ns "$br"
	ip -n "$br" link add br0 type bridge forward_delay 0 stp_state 0 ||
		ns_fail "bridge in $br"
	ip -n "$br" link set br0 mtu "${NS_MTU:-1500}" up
	for k in $(seq 1 "$n"); do
		ip -n "$(ns_name "$k")" link add "veth$k" type veth peer \
			name "port$k" netns "$br" || ns_fail "veth of host $k"
		ip -n "$br" link set "port$k" mtu "${NS_MTU:-1500}" master br0 up
	done
}

ns_addresses()
{
	local k=$1 ns

	ns=$(ns_name "$k")
	# Static IPv6 addresses survive the link going down (the link cut
	# test takes it down and up again).
	# No duplicate address detection: the link-local address is there
	# (and in the GID table) as soon as the link is, not a second later
	# with a GID change event in the middle of a test.
	ip netns exec "$ns" sh -c "echo 1 >/proc/sys/net/ipv6/conf/all/keep_addr_on_down &&
		echo 1 >/proc/sys/net/ipv6/conf/veth$k/keep_addr_on_down &&
		echo 0 >/proc/sys/net/ipv6/conf/veth$k/accept_dad" ||
		ns_fail "IPv6 settings of veth$k in host $k"
	ip -n "$ns" link set "veth$k" mtu "${NS_MTU:-1500}" up ||
		ns_fail "mtu ${NS_MTU:-1500} on veth$k"
	ip -n "$ns" addr add "$(ns_addr "$k" v4)/24" dev "veth$k"
	ip -n "$ns" -6 addr add "$(ns_addr "$k" v6)/64" dev "veth$k" nodad
}

# The kernel adds the fe80:: address when the link comes up.
ns_wait_linklocal()
{
	local k=$1 t=0

	while [ $t -lt 50 ]; do
		ip -n "$(ns_name "$k")" -6 addr show dev "veth$k" scope link |
			grep fe80 | grep -qv tentative && return 0
		sleep 0.1
		t=$((t + 1))
	done
	return 1
}

# softrdmad --help tells whether it reads a configuration file.
ns_device_mode()
{
	if [ -n "${NS_DEVICE_MODE:-}" ]; then
		echo "$NS_DEVICE_MODE"
	elif "$NS_BIN/softrdmad" --help 2>&1 | grep -q -- --config &&
		"$NS_BIN/softrdmad" --help 2>&1 | grep -q -- --no-default-device; then
		echo config
	else
		echo cli
	fi
}

# Host k's device is up when ibv_devices lists it and its GID table holds
# both of the veth's addresses.
ns_wait_device()
{
	local k=$1 t=0

	while [ $t -lt 100 ]; do
		if ns_exec "$k" "$NS_BIN/ibv_devinfo" -v -d "srd$k" \
			2>/dev/null >"$NS_TMP/devinfo$k.txt" &&
			grep -q "::ffff:$(ns_addr "$k" v4)," "$NS_TMP/devinfo$k.txt" &&
			grep -q "$(ns_addr "$k" v6)," "$NS_TMP/devinfo$k.txt"; then
			return 0
		fi
		sleep 0.1
		t=$((t + 1))
	done
	return 1
}

# ns_wait_serving K SOCKET PID: until host K's daemon says it serves
# SOCKET (10 s at most, and not once PID is gone).
ns_wait_serving()
{
	local k=$1 sock=$2 pid=$3 t=0

	while [ $t -lt 100 ]; do
		grep -q "serving @$sock\$" "$NS_TMP/softrdmad$k.log" 2>/dev/null &&
			return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
		t=$((t + 1))
	done
	return 1
}

ns_start_daemon()
{
	local k=$1 mode=$2 ns sock conf args envs envv

	ns=$(ns_name "$k")
	sock=$(ns_sock "$k")
	args="${NS_DAEMON_ARGS:-}"
	eval "args=\"\$args \${NS_DAEMON_ARGS_$k:-}\""
	# One VAR=value a line: values may hold spaces (fault rules do).
	eval "envs=\"\${NS_DAEMON_ENV:-}
\${NS_DAEMON_ENV_$k:-}\""
	mapfile -t envv < <(printf '%s\n' "$envs" | grep '=')
	if [ "$mode" = config ]; then
		conf=$NS_TMP/softrdma$k.conf
		printf '# host %s\nlink add srd%s netdev veth%s\n' "$k" "$k" \
			"$k" >"$conf"
		args="--config $conf --no-default-device $args"
	fi
	# shellcheck disable=SC2086
	ip netns exec "$ns" env "${envv[@]}" "$NS_BIN/softrdmad" --foreground \
		--socket "$sock" $args >"$NS_TMP/softrdmad$k.log" 2>&1 \
		</dev/null &
	NS_DAEMON_PIDS+=($!)
	eval "NS_DAEMON_PID_$k=$!"
	# Nothing of host k runs before its daemon serves: the library
	# starts a daemon of its own (SOFTRDMAD, no configuration) when none
	# answers, and that one would take the socket from ours.
	ns_wait_serving "$k" "$sock" $! ||
		ns_fail "host $k: softrdmad does not serve @$sock" \
			"($(tail -n 5 "$NS_TMP/softrdmad$k.log" | tr '\n' ' '))"
	if [ "$mode" = cli ]; then
		[ -x "$NS_BIN/softrdma" ] ||
			ns_fail "softrdmad has no --config and there is no" \
				"softrdma CLI: no way to make a device on veth$k"
		local t=0
		until ns_exec "$k" "$NS_BIN/softrdma" link add "srd$k" \
			netdev "veth$k" >>"$NS_TMP/softrdmad$k.log" 2>&1; do
			t=$((t + 1))
			[ $t -lt 50 ] || ns_fail "softrdma link add srd$k netdev veth$k"
			sleep 0.1
		done
	fi
}

ns_setup()
{
	local n=$1 topo=${2:-} k mode

	NS_HOSTS=$n
	for k in $(seq 1 "$n"); do
		ns_add_ns "$(ns_name "$k")"
	done
	if [ "$n" = 2 ] && [ "$topo" != bridge ]; then
		ns_link_veth_pair
	else
		ns_link_bridge "$n"
	fi
	for k in $(seq 1 "$n"); do
		ns_addresses "$k"
	done
	for k in $(seq 1 "$n"); do
		ns_wait_linklocal "$k" ||
			ns_fail "host $k: no IPv6 link-local address on veth$k"
	done
	mode=$(ns_device_mode)
	ns_log "$n hosts, MTU ${NS_MTU:-1500}, devices by $mode"
	for k in $(seq 1 "$n"); do
		ns_start_daemon "$k" "$mode"
	done
	for k in $(seq 1 "$n"); do
		ns_wait_device "$k" || {
			cat "$NS_TMP/devinfo$k.txt" 2>/dev/null
			ns_fail "host $k: no device srd$k with the GIDs of veth$k" \
				"($(ns_addr "$k" v4), $(ns_addr "$k" v6))"
		}
	done
	# The veths answer ARP and neighbour discovery once; warm them so the
	# first RoCE packet is not the one that waits for a neighbour.
	for k in $(seq 2 "$n"); do
		ns_exec 1 ping -c 1 -W 2 "$(ns_addr "$k" v4)" >/dev/null 2>&1
		ns_exec 1 ping -6 -c 1 -W 2 "$(ns_addr "$k" v6)" >/dev/null 2>&1
	done
}

# No UDP segmentation offload on host k's veth: the kernel cuts a GSO
# batch into packets before the veth, so a capture or a packet filter
# sees the packets the wire would carry (a veth passes a whole batch on
# as one buffer otherwise).
ns_no_gso()
{
	local k

	for k in "$@"; do
		ip -n "$(ns_name "$k")" link set "veth$k" gso_max_segs 1 ||
			ns_fail "gso_max_segs on veth$k"
	done
}

# GID index of host k's IPv4-mapped (v4) or IPv6 (v6) GID.
ns_gid()
{
	local k=$1 fam=$2 want

	if [ "$fam" = v4 ]; then
		want="::ffff:$(ns_addr "$k" v4)"
	else
		want=$(ns_addr "$k" v6)
	fi
	ns_exec "$k" "$NS_BIN/ibv_devinfo" -v -d "srd$k" 2>/dev/null |
		sed -n "s/^[[:space:]]*GID\[ *\([0-9]*\)\]:[[:space:]]*$want, RoCE v2.*/\1/p" |
		head -n 1
}

ns_daemon_pid()
{
	eval "echo \${NS_DAEMON_PID_$1:-}"
}

# Stops host k's daemon (SIGTERM: it writes out its capture) and waits.
ns_stop_daemon()
{
	local k=$1 pid

	pid=$(ns_daemon_pid "$k")
	[ -n "$pid" ] || return 0
	kill "$pid" 2>/dev/null
	ns_wait "$pid" 10 || ns_fail "softrdmad of host $k did not stop"
	eval "NS_DAEMON_PID_$k="
}

# Packet loss on what host k receives over UDP port 4791.
ns_nft()
{
	local k=$1 rule=$2 ns

	ns=$(ns_name "$k")
	ip netns exec "$ns" nft list table inet srd >/dev/null 2>&1 ||
		ip netns exec "$ns" nft -f - <<-EOF
			table inet srd {
				chain in {
					type filter hook input priority 0; policy accept;
				}
			}
		EOF
	ip netns exec "$ns" nft flush chain inet srd in
	[ -n "$rule" ] && ip netns exec "$ns" nft add rule inet srd in $rule
}

ns_loss()
{
	local k=$1 p=$2 ns

	ns=$(ns_name "$k")
	if command -v nft >/dev/null; then
		ns_nft "$k" "udp dport 4791 numgen random mod 100 < $p drop" ||
			ns_fail "nft loss rule in host $k"
	elif command -v iptables >/dev/null; then
		local prob
		prob=$(awk -v p="$p" 'BEGIN { printf "%.4f", p / 100 }')
		for ipt in iptables ip6tables; do
			ip netns exec "$ns" $ipt -F INPUT
			ip netns exec "$ns" $ipt -A INPUT -p udp --dport 4791 \
				-m statistic --mode random --probability "$prob" \
				-j DROP || ns_fail "$ipt loss rule in host $k"
		done
	else
		ns_skip "neither nft nor iptables for packet loss"
	fi
	ns_log "host $k: dropping $p % of received RoCE packets"
}

ns_cut()
{
	local k=$1 ns

	ns=$(ns_name "$k")
	if command -v nft >/dev/null; then
		ns_nft "$k" "drop" || ns_fail "nft drop rule in host $k"
	elif command -v iptables >/dev/null; then
		for ipt in iptables ip6tables; do
			ip netns exec "$ns" $ipt -F INPUT
			ip netns exec "$ns" $ipt -A INPUT -j DROP
		done
	else
		ip -n "$ns" link set "veth$k" down
	fi
	ns_log "host $k: receiving nothing"
}

ns_uncut()
{
	local k=$1 ns

	ns=$(ns_name "$k")
	if command -v nft >/dev/null; then
		ns_nft "$k" ""
	elif command -v iptables >/dev/null; then
		for ipt in iptables ip6tables; do
			ip netns exec "$ns" $ipt -F INPUT
		done
	else
		ip -n "$ns" link set "veth$k" up
	fi
}

# Runs a server in host s and its client in host c; both must exit 0.
#   ns_pair S C PORT SECS TAG server-cmd... -- client-cmd...
ns_pair()
{
	local s=$1 c=$2 port=$3 secs=$4 tag=$5 spid rc_s rc_c
	local -a scmd=() ccmd=()

	shift 5
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		scmd+=("$1")
		shift
	done
	shift
	ccmd=("$@")
	ns_bg "$s" "$tag.server" "${scmd[@]}"
	spid=$NS_BG_PID
	if ! ns_wait_listen "$s" "$port" 10; then
		ns_wait "$spid" 1
		echo "----- $tag.server"
		cat "$NS_TMP/$tag.server.log"
		ns_fail "$tag: the server never listened on port $port"
	fi
	ns_bg "$c" "$tag.client" "${ccmd[@]}"
	ns_wait "$NS_BG_PID" "$secs"
	rc_c=$?
	ns_wait "$spid" 10
	rc_s=$?
	if [ $rc_c -ne 0 ] || [ $rc_s -ne 0 ]; then
		echo "----- $tag: server (host $s) exit $rc_s: ${scmd[*]}"
		cat "$NS_TMP/$tag.server.log"
		echo "----- $tag: client (host $c) exit $rc_c: ${ccmd[*]}"
		cat "$NS_TMP/$tag.client.log"
		return 1
	fi
	return 0
}
