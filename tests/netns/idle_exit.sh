#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A daemon with a device added at run time (`softrdma link add`) does not
# exit when idle while the device lives, and does once it is gone, within
# its idle timeout: the veth deleted, the peer's namespace deleted (which
# takes the veth pair with it), and the daemon's own namespace deleted
# (`ip netns del`: the daemon alone still holds it).
. "$(dirname "$0")/lib.sh"

ns_init idle_exit 100
CLI=$NS_BIN/softrdma
[ -x "$CLI" ] || ns_fail "no $CLI"
IDLE=2
RUN=0

# run NAME: namespaces NAME-a and NAME-b joined by veth va-vb, a daemon in
# NAME-a with a device on va.  Sets NSA, NSB, DPID, SOCK.
run()
{
	RUN=$((RUN + 1))
	NSA=$(ns_name "$RUN"a)
	NSB=$(ns_name "$RUN"b)
	SOCK=$(ns_sock "$RUN")
	ns_add_ns "$NSA"
	ns_add_ns "$NSB"
	ip link add va netns "$NSA" type veth peer name vb netns "$NSB" ||
		ns_fail "ip link add veth"
	ip -n "$NSA" addr add "10.$NS_X.$RUN.1/24" dev va
	ip -n "$NSB" addr add "10.$NS_X.$RUN.2/24" dev vb
	ip -n "$NSA" link set va up
	ip -n "$NSB" link set vb up
	ip netns exec "$NSA" "$NS_BIN/softrdmad" --foreground --socket "$SOCK" \
		--idle-exit "$IDLE" >"$NS_TMP/softrdmad$RUN.log" 2>&1 </dev/null &
	DPID=$!
	NS_DAEMON_PIDS+=("$DPID")
	local t=0
	until ip netns exec "$NSA" env SOFTRDMA_SOCKET="$SOCK" "$CLI" \
		--no-start link add srd0 netdev va >>"$NS_TMP/cli.log" 2>&1; do
		t=$((t + 1))
		[ $t -lt 50 ] || ns_fail "$1: softrdma link add srd0 netdev va"
		sleep 0.1
	done
	# Idle for twice its timeout: the device holds it.
	sleep $((IDLE * 2))
	kill -0 "$DPID" 2>/dev/null ||
		ns_fail "$1: daemon exited although its device lives"
}

# expect_exit WHAT: the daemon ends within its idle timeout (and a margin).
expect_exit()
{
	local t0=$SECONDS rc=0

	ns_wait "$DPID" $((IDLE + 4)) >/dev/null || rc=$?
	[ $rc -ne 124 ] || ns_fail "$1: daemon still ran after $((IDLE + 4)) s"
	[ $rc -eq 0 ] || ns_fail "$1: daemon exited with status $rc"
	ns_log "$1: daemon exited after $((SECONDS - t0)) s"
}

run "veth deleted"
ip -n "$NSA" link del va || ns_fail "ip link del va"
expect_exit "veth deleted"

run "peer namespace deleted"
ip netns del "$NSB" || ns_fail "ip netns del $NSB"
expect_exit "peer namespace deleted"

run "own namespace deleted"
ip netns del "$NSA" || ns_fail "ip netns del $NSA"
expect_exit "own namespace deleted"

NS_DONE=1
echo "PASS $NS_NAME"
exit 0
