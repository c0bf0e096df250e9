#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs an ibv_*_pingpong server and client over 127.0.0.1 with the given
# options and checks that both finish cleanly and report the same run.
# Usage: pingpong.sh SERVER-BINARY CLIENT-BINARY [options...]
# (two binaries, so ours can be paired with rdma-core's).
# With PP_EXPECT_BAD_DATA=1 the server's -c check must instead fail: the
# client sends data that is not our pattern (PP_CLIENT_ENV=VAR=VALUE is set
# in the client's environment only, e.g. SOFTRDMA_PP_CORRUPT=1).
. "$(dirname "$0")/lib.sh"

server_bin=$1
client_bin=$2
shift 2
[ -x "$server_bin" ] || t_skip "no $server_bin"
[ -x "$client_bin" ] || t_skip "no $client_bin"
t_start_daemon

for _ in 1 2 3; do
	port=$(t_free_port)
	timeout 60 "$server_bin" -p "$port" "$@" >"$T_TMP/server.out" \
		2>"$T_TMP/server.err" &
	spid=$!
	T_PIDS="$T_PIDS $spid"
	t_wait_listen "$port" "$spid" && break
	# Lost a race for the port, or the server failed: look why.
	wait "$spid"
	grep -q "Couldn't listen" "$T_TMP/server.err" || {
		t_show "$T_TMP/server.out"
		t_show "$T_TMP/server.err"
		t_fail "server did not start listening"
	}
done

env ${PP_CLIENT_ENV:+"$PP_CLIENT_ENV"} timeout 60 "$client_bin" -p "$port" "$@" 127.0.0.1 >"$T_TMP/client.out" \
	2>"$T_TMP/client.err"
crc=$?
# A client that failed may leave the server waiting for its peer forever:
# give it a moment to finish on its own, then stop it.
if [ $crc -ne 0 ]; then
	for _ in $(seq 40); do
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.05
	done
	kill "$spid" 2>/dev/null
fi
wait "$spid"
src=$?

ok=1
want_src=0
[ "$PP_EXPECT_BAD_DATA" = 1 ] && want_src=1
[ $crc -eq 0 ] || { echo "client exit $crc" >&2; ok=0; }
[ $src -eq $want_src ] || { echo "server exit $src, not $want_src" >&2; ok=0; }
for side in server client; do
	out="$T_TMP/$side.out"
	grep -Eq '^  local address:  LID 0x[0-9a-f]{4}, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}[,:] GID ' "$out" ||
		{ echo "$side: no local address line" >&2; ok=0; }
	grep -Eq '^  remote address: LID 0x[0-9a-f]{4}, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}, GID ' "$out" ||
		{ echo "$side: no remote address line" >&2; ok=0; }
	grep -Eq '^[0-9]+ bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$' "$out" ||
		{ echo "$side: no bandwidth line" >&2; ok=0; }
	grep -Eq '^[0-9]+ iters in [0-9.]+ seconds = [0-9.]+ usec/iter$' "$out" ||
		{ echo "$side: no iterations line" >&2; ok=0; }
	[ "$PP_EXPECT_BAD_DATA" = 1 ] && [ $side = server ] && continue
	grep -q 'invalid data' "$out" && { echo "$side: bad data" >&2; ok=0; }
done
if [ "$PP_EXPECT_BAD_DATA" = 1 ]; then
	grep -Eq '^invalid data in page [0-9]+$' "$T_TMP/server.out" ||
		{ echo "server's -c did not catch the foreign data" >&2; ok=0; }
fi
# Each side's remote QPN is the other's local one.
sq=$(sed -n 's/^  local address: .*QPN \(0x[0-9a-f]*\).*/\1/p' "$T_TMP/server.out" | head -1)
cq=$(sed -n 's/^  remote address: .*QPN \(0x[0-9a-f]*\).*/\1/p' "$T_TMP/client.out" | head -1)
[ -n "$sq" ] && [ "$sq" = "$cq" ] ||
	{ echo "client sees QPN '$cq', server has '$sq'" >&2; ok=0; }

if [ $ok -ne 1 ]; then
	for f in server.out server.err client.out client.err daemon.log; do
		[ -f "$T_TMP/$f" ] && t_show "$T_TMP/$f"
	done
	t_fail "$(basename "$client_bin") $*"
fi
echo "PASS: server $server_bin, client $client_bin, options $*"
exit 0
