#!/bin/sh
# SPDX-License-Identifier: MIT
# What the container image runs, as an ordinary user with no capabilities:
# README's first example (softrdma-demo), then Debian's unmodified
# ibv_rc_pingpong and ibv_ud_pingpong (server and client in this
# container) with data checks.  The first verbs call starts the user's
# own softrdmad; nothing needs a device node or root.
set -eu
say() { echo "softrdma-container-demo: $*"; }

say "uid $(id -u), capabilities: $(grep CapEff /proc/self/status)"
softrdma-demo

# A server on the default port, then its client, which retries until the
# server listens.
pair() {
	name=$1
	shift
	"$name" "$@" >"/tmp/$name.server" 2>&1 &
	server=$!
	tries=0
	until "$name" "$@" 127.0.0.1 >"/tmp/$name.client" 2>&1; do
		tries=$((tries + 1))
		if [ "$tries" -ge 100 ] || ! kill -0 "$server" 2>/dev/null; then
			cat "/tmp/$name.server" "/tmp/$name.client"
			say "$name failed"
			kill "$server" 2>/dev/null || true
			return 1
		fi
		sleep 0.1
	done
	wait "$server" || { cat "/tmp/$name.server"; return 1; }
	cat "/tmp/$name.client"
	say "$name $* ok"
}
pair ibv_rc_pingpong -g 0 -n 1000 -s 4096 -c
pair ibv_ud_pingpong -g 0 -n 1000 -s 2048 -c
say "all ok"
