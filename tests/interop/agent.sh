#!/bin/bash
# SPDX-License-Identifier: MIT
# The guest's command agent (run.sh copies it into the share; the guest's
# init runs it): runs $Q/cmd.N (N = 0, 1, ...) in order under bash, output
# to $Q/out.N, exit status to $Q/rc.N (written last).  A command that
# starts a server calls `srv HOW SECS CMD...`: CMD runs in the background
# and $Q/ready.N appears once it listens (HOW: tcp:PORT, cm, or a number
# of seconds to wait); $Q/stop.N from the host ends a server that would
# run on (srv then returns 0).  "EXIT" ends the agent.
export Q=${Q:-/share/q}

listening_tcp() {
	[ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]
}
listening_cm() {
	rdma res show cm_id 2>/dev/null | grep -q LISTEN
}
srv() {
	local how=$1 secs=$2 p
	shift 2
	timeout -k 5 "$secs" "$@" &
	p=$!
	case $how in
	tcp:*) while kill -0 $p 2>/dev/null && ! listening_tcp "${how#tcp:}"; do sleep 0.1; done ;;
	cm) while kill -0 $p 2>/dev/null && ! listening_cm; do sleep 0.1; done ;;
	*) sleep "$how" ;;
	esac
	: >"$Q/ready.$N"
	while kill -0 $p 2>/dev/null; do
		if [ -e "$Q/stop.$N" ]; then
			kill $p 2>/dev/null
			wait $p
			return 0
		fi
		sleep 0.1
	done
	wait $p
}
# rxe_gid ADDR: the index of rxe0's RoCE v2 GID of ADDR (as ibv_devinfo
# writes it); status 1 if it has none.
rxe_gid() {
	local g
	g=$(ibv_devinfo -v -d rxe0 2>/dev/null |
		sed -n "s/^[[:space:]]*GID\[ *\([0-9]*\)\]:[[:space:]]*$1, RoCE v2.*/\1/p")
	[ -n "$g" ] || return 1
	echo "${g%%$'\n'*}"
}
counters() {
	local c v
	for c in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do
		read -r v <"$c" && echo "${c##*/} $v"
	done
}
export -f listening_tcp listening_cm srv rxe_gid counters

echo "RXE_GID=$RXE_GID" >"$Q/agent.up"
n=0
while :; do
	if [ -e "$Q/cmd.$n" ]; then
		c=$(<"$Q/cmd.$n")
		[ "$c" = EXIT ] && break
		counters >"$Q/cnt0.$n"
		N=$n bash -c "$c" >"$Q/out.$n" 2>&1 </dev/null
		echo $? >"$Q/rc.$n.tmp"
		counters >"$Q/cnt1.$n"
		mv "$Q/rc.$n.tmp" "$Q/rc.$n"
		n=$((n + 1))
	else
		sleep 0.05
	fi
done
echo "=== agent: $n commands"
