# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Sourced by the tool tests: a private daemon for this test, free TCP
# ports, waiting for a server to listen, and pass/fail/skip exits.

T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/srdtools.XXXXXX")
T_PIDS=""
T_DAEMON=""

t_cleanup() {
	local p
	for p in $T_PIDS; do
		kill "$p" 2>/dev/null
	done
	if [ -n "$T_DAEMON" ]; then
		kill "$T_DAEMON" 2>/dev/null
		wait "$T_DAEMON" 2>/dev/null
	fi
	rm -rf "$T_TMP"
}
trap t_cleanup EXIT

t_fail() {
	echo "FAIL: $*" >&2
	exit 1
}

t_skip() {
	echo "SKIP: $*"
	exit 77
}

# Shows a file in the log, indented, for a failure's diagnosis.
t_show() {
	echo "--- $1" >&2
	sed 's/^/    /' "$1" >&2
}

# A daemon of our own under a private socket name: no stale daemon from
# another build can answer for it, and it goes away with the test.
t_start_daemon() {
	local _
	[ -n "$SOFTRDMAD" ] && [ -x "$SOFTRDMAD" ] ||
		t_skip "SOFTRDMAD does not name the daemon binary"
	SOFTRDMA_SOCKET="srdtools-$(basename "$0" .sh)-$$"
	export SOFTRDMA_SOCKET
	# shellcheck disable=SC2086 # T_DAEMON_ARGS: words to add
	"$SOFTRDMAD" --foreground --socket "$SOFTRDMA_SOCKET" \
		--idle-exit 300 ${T_DAEMON_ARGS:-} >"$T_TMP/daemon.log" 2>&1 &
	T_DAEMON=$!
	for _ in $(seq 100); do
		grep -q "@$SOFTRDMA_SOCKET\$" /proc/net/unix && return 0
		kill -0 "$T_DAEMON" 2>/dev/null || break
		sleep 0.05
	done
	t_show "$T_TMP/daemon.log"
	t_fail "softrdmad did not start"
}

# True if something listens on TCP port $1 (IPv4 or IPv6).
t_listening() {
	local hex
	hex=$(printf '%04X' "$1")
	awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p \
		{ found = 1 } END { exit !found }' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null
}

t_free_port() {
	local p
	while :; do
		p=$((RANDOM % 30000 + 20000))
		t_listening "$p" || break
	done
	echo "$p"
}

# Waits up to 20 s for pid $2 to listen on port $1.
t_wait_listen() {
	local _
	for _ in $(seq 400); do
		t_listening "$1" && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
