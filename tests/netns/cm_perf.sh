#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The connection manager between two hosts over the UDP wire, driven by
# Debian's unmodified programs on our librdmacm.so.1 and libibverbs.so.1:
# cmtime (N connections set up and torn down at once, each step timed)
# and perftest's ib_send_lat and ib_write_bw with rdma_cm connection set
# up (-R).  Each must finish every step without an error and print its
# figures, which the log keeps for the record; no timing is asserted.
. "$(dirname "$0")/lib.sh"

ns_init cm_perf 150
[ -x /usr/bin/cmtime ] || ns_skip "no /usr/bin/cmtime (rdmacm-utils)"
ns_setup 2
bad=()
port=18800
conns=${CM_PERF_CONNS:-200}

# run_pair TAG SECS SERVER... -- CLIENT...: server on host 1, client on
# host 2 (@PORT@ in either becomes the port); both must exit 0.
# perftest -R connects twice: a control connection, then the test's, for
# which the server listens anew; a client quick enough to ask in between
# is refused (REJ 8, as the kernel would refuse it) and Debian's perftest
# gives up where newer perftest retries.  This retries, up to three times.
run_pair()
{
	local tag=$1

	for _ in 1 2 3; do
		run_pair_once "$@" && return 0
		grep -q "REJECTED; error: 8" "$NS_TMP/$tag.client.log" ||
			break
		ns_log "$tag: refused between perftest's connections, again"
		unset 'bad[${#bad[@]}-1]'
	done
	return 1
}

run_pair_once()
{
	local tag=$1 secs=$2 spid rc_c rc_s
	local -a scmd=() ccmd=()

	shift 2
	while [ "$1" != -- ]; do
		scmd+=("$1")
		shift
	done
	shift
	ccmd=("$@")
	port=$((port + 1))
	ns_bg 1 "$tag.server" "${scmd[@]//@PORT@/$port}"
	spid=$NS_BG_PID
	if ! ns_wait_cm_listen 1 "$port"; then
		bad+=("$tag: no listener on port $port")
		kill "$spid" 2>/dev/null
		return 1
	fi
	ns_bg 2 "$tag.client" "${ccmd[@]//@PORT@/$port}"
	ns_wait "$NS_BG_PID" "$secs"
	rc_c=$?
	ns_wait "$spid" 10
	rc_s=$?
	if [ $rc_c -ne 0 ] || [ $rc_s -ne 0 ]; then
		echo "----- $tag: server exit $rc_s, client exit $rc_c"
		cat "$NS_TMP/$tag.server.log" "$NS_TMP/$tag.client.log"
		bad+=("$tag: exit $rc_s/$rc_c")
		return 1
	fi
	if grep -E "Couldn't|Unable|[Ff]ailed|[Ee]rror|event: " \
		"$NS_TMP/$tag.client.log" "$NS_TMP/$tag.server.log"; then
		bad+=("$tag: error messages")
		return 1
	fi
	return 0
}

# cmtime: the server runs until killed; the client sets up and tears
# down $conns connections and prints one line per step.
port=$((port + 1))
ns_bg 1 cmtime.server /usr/bin/cmtime -p "$port"
cm_srv=$NS_BG_PID
if ns_wait_cm_listen 1 "$port"; then
	ns_bg 2 cmtime.client /usr/bin/cmtime -s "$(ns_addr 1 v4)" -p "$port" \
		-c "$conns"
	ns_wait "$NS_BG_PID" 90 || bad+=("cmtime: client failed")
	for step in "create id" "resolve addr" "resolve route" "create qp" \
		"connect" "disconnect" "destroy"; do
		grep -E "^$step *: +[0-9.]+" "$NS_TMP/cmtime.client.log" ||
			bad+=("cmtime: no \"$step\" line")
	done
	if grep -E "event: |error" "$NS_TMP/cmtime.client.log"; then
		bad+=("cmtime: errors")
	fi
else
	bad+=("cmtime: no listener")
fi
kill "$cm_srv" 2>/dev/null

# perftest in rdma_cm mode: the server listens on -p, the client resolves
# the server's address.
perf()
{
	local tag=$1 bin=$2

	shift 2
	[ -x "$bin" ] || {
		ns_log "$tag: no $bin (perftest), not run"
		return
	}
	run_pair "$tag" 60 "$bin" -d srd1 -R -p @PORT@ "$@" -- \
		"$bin" -d srd2 -R -p @PORT@ "$@" "$(ns_addr 1 v4)" || return
	grep -E '^[[:space:]]*[0-9]+[[:space:]]+[0-9]+[[:space:]]+[0-9.]+' \
		"$NS_TMP/$tag.client.log" || bad+=("$tag: no result row")
}

perf send_lat_R /usr/bin/ib_send_lat -s 2 -n 2000 -F
perf write_bw_R /usr/bin/ib_write_bw -s 65536 -n 2000 -F

[ ${#bad[@]} -eq 0 ] || ns_fail "failed: ${bad[*]}"
ns_pass
