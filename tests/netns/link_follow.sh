#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A device follows its interface (softrdmad's netlink): in host 1 of two
# namespaces joined by a veth, srd1 on veth1 (made from the configuration
# file) has the veth's addresses as GIDs (IPv4-mapped first); an address
# added or removed changes the table with IBV_EVENT_GID_CHANGE; the MTU
# sets the port's active MTU; the link going down gives a DOWN port and
# IBV_EVENT_PORT_ERR, up again ACTIVE and IBV_EVENT_PORT_ACTIVE; the
# interface deleted removes the device with IBV_EVENT_DEVICE_FATAL.
. "$(dirname "$0")/lib.sh"

ns_init link_follow 100
CLI=$NS_BIN/softrdma
[ -x "$CLI" ] || ns_fail "no $CLI"
ns_setup 2
ns1=$(ns_name 1)
ns2=$(ns_name 2)
v4=$(ns_addr 1 v4)
v6=$(ns_addr 1 v6)

# The device's port and GID lines as the CLI shows them.
show()
{
	ns_exec 1 "$CLI" --no-start -d link show "${1:-srd1}"
}

# Waits up to 10 s for `show DEV` to match an extended regex.
wait_show()
{
	local dev=$1 re=$2 t=0

	while [ $t -lt 100 ]; do
		show "$dev" 2>/dev/null | grep -Eq -- "$re" && return 0
		sleep 0.1
		t=$((t + 1))
	done
	show "$dev"
	ns_fail "$dev never showed /$re/"
}

wait_no_show()
{
	local dev=$1 re=$2 t=0

	while [ $t -lt 100 ]; do
		show "$dev" 2>/dev/null | grep -Eq -- "$re" || return 0
		sleep 0.1
		t=$((t + 1))
	done
	show "$dev"
	ns_fail "$dev still shows /$re/"
}

# Events seen by a watcher: waits up to 10 s until there are N of a type.
wait_events()
{
	local log=$1 type=$2 n=$3 t=0

	while [ $t -lt 100 ]; do
		[ "$(grep -c "event_type $type " "$NS_TMP/$log.log")" -ge "$n" ] &&
			return 0
		sleep 0.1
		t=$((t + 1))
	done
	cat "$NS_TMP/$log.log"
	ns_fail "$log: fewer than $n $type events"
}

# An event watcher on a device, ready when it says it has the event fd.
watch()
{
	local dev=$1 t=0

	ns_bg 1 "watch$dev" "$NS_BIN/ibv_asyncwatch" -d "$dev"
	while ! grep -q "async event FD" "$NS_TMP/watch$dev.log"; do
		t=$((t + 1))
		[ $t -lt 100 ] || ns_fail "ibv_asyncwatch -d $dev did not start"
		sleep 0.1
	done
}

count_events()
{
	grep -c "event_type $2 " "$NS_TMP/$1.log"
}

# --- the table as made ---------------------------------------------------
show >"$NS_TMP/show0.txt" || ns_fail "softrdma link show srd1"
cat "$NS_TMP/show0.txt"
grep -q "^link srd1/1 state ACTIVE physical_state LINK_UP netdev veth1 " \
	"$NS_TMP/show0.txt" || ns_fail "srd1 is not ACTIVE on veth1"
grep -q "^    gid 0 ::ffff:$v4 RoCEv2$" "$NS_TMP/show0.txt" ||
	ns_fail "GID 0 is not ::ffff:$v4"
grep -q "^    gid 1 $v6 RoCEv2$" "$NS_TMP/show0.txt" ||
	ns_fail "GID 1 is not $v6"
grep -q " netdev_mtu 1500 active_mtu 1024 " "$NS_TMP/show0.txt" ||
	ns_fail "MTU 1500 does not give active_mtu 1024"
# The verbs API agrees.
ns_exec 1 "$NS_BIN/ibv_devinfo" -v -d srd1 >"$NS_TMP/devinfo.txt" ||
	ns_fail "ibv_devinfo -d srd1"
grep -Eq "GID\[ *0\]:[[:space:]]+::ffff:$v4, RoCE v2" "$NS_TMP/devinfo.txt" ||
	ns_fail "ibv_devinfo: GID[0] is not ::ffff:$v4"
# The node GUID is the EUI-64 of the veth's MAC.
mac=$(ip -n "$ns1" link show veth1 | awk '/link\/ether/ {print $2}')
IFS=: read -r m1 m2 m3 m4 m5 m6 <<<"$mac"
want=$(printf '%02x%s:%sff:fe%s:%s%s' $((0x$m1 ^ 2)) "$m2" "$m3" "$m4" "$m5" \
	"$m6")
ns_exec 1 "$CLI" --no-start dev show srd1 | grep -q "node_guid $want " ||
	ns_fail "node GUID is not the EUI-64 of $mac ($want)"

watch srd1

# --- addresses -------------------------------------------------------------
extra4=10.$NS_X.7.1
extra6=fd00:$NS_X:7::1
gc0=$(count_events watchsrd1 IBV_EVENT_GID_CHANGE)
ip -n "$ns1" addr add "$extra4/24" dev veth1 || ns_fail "ip addr add"
wait_show srd1 "^    gid [0-9]+ ::ffff:$extra4 RoCEv2$"
wait_events watchsrd1 IBV_EVENT_GID_CHANGE $((gc0 + 1))
# Entries that stay keep their index.
show | grep -q "^    gid 0 ::ffff:$v4 RoCEv2$" || ns_fail "GID 0 moved"
ip -n "$ns1" -6 addr add "$extra6/64" dev veth1 nodad || ns_fail "addr add v6"
wait_show srd1 "^    gid [0-9]+ $extra6 RoCEv2$"
wait_events watchsrd1 IBV_EVENT_GID_CHANGE $((gc0 + 2))
ns_exec 1 "$NS_BIN/ibv_devinfo" -v -d srd1 | grep -q "::ffff:$extra4, RoCE v2" ||
	ns_fail "ibv_devinfo does not show ::ffff:$extra4"
ip -n "$ns1" addr del "$extra4/24" dev veth1 || ns_fail "ip addr del"
wait_no_show srd1 "::ffff:$extra4 "
wait_events watchsrd1 IBV_EVENT_GID_CHANGE $((gc0 + 3))
ip -n "$ns1" -6 addr del "$extra6/64" dev veth1
wait_no_show srd1 " $extra6 "
show | grep -q "^    gid 1 $v6 RoCEv2$" || ns_fail "GID 1 moved"

# --- MTU ---------------------------------------------------------------------
for m in "1100 512" "9000 4096" "1500 1024"; do
	set -- $m
	# Both ends, or the veth refuses to pass big frames (not our concern).
	ip -n "$ns2" link set veth2 mtu "$1"
	ip -n "$ns1" link set veth1 mtu "$1" || ns_fail "mtu $1"
	wait_show srd1 " netdev_mtu $1 active_mtu $2 "
done
ns_exec 1 "$NS_BIN/ibv_devinfo" -d srd1 | grep -q "active_mtu:.*1024 (3)" ||
	ns_fail "ibv_devinfo: active_mtu is not 1024 at MTU 1500"

# --- link down and up ----------------------------------------------------------
pe0=$(count_events watchsrd1 IBV_EVENT_PORT_ERR)
pa0=$(count_events watchsrd1 IBV_EVENT_PORT_ACTIVE)
ip -n "$ns1" link set veth1 down
wait_show srd1 "state DOWN physical_state DISABLED"
wait_events watchsrd1 IBV_EVENT_PORT_ERR $((pe0 + 1))
ns_exec 1 "$NS_BIN/ibv_devinfo" -d srd1 | grep -q "state:.*PORT_DOWN" ||
	ns_fail "ibv_devinfo: the port is not DOWN"
ns_exec 1 "$NS_BIN/ibv_devinfo" -v -d srd1 | grep -q "phys_state:.*DISABLED" ||
	ns_fail "ibv_devinfo: phys_state is not DISABLED"
ip -n "$ns1" link set veth1 up
wait_show srd1 "state ACTIVE physical_state LINK_UP"
wait_events watchsrd1 IBV_EVENT_PORT_ACTIVE $((pa0 + 1))
# The peer's end going down takes the carrier away: up but not running.
ip -n "$ns2" link set veth2 down
wait_show srd1 "state DOWN physical_state POLLING"
ns_exec 1 "$NS_BIN/ibv_devinfo" -v -d srd1 | grep -q "phys_state:.*POLLING" ||
	ns_fail "ibv_devinfo: phys_state is not POLLING"
wait_events watchsrd1 IBV_EVENT_PORT_ERR $((pe0 + 2))
ip -n "$ns2" link set veth2 up
wait_show srd1 "state ACTIVE physical_state LINK_UP"
wait_events watchsrd1 IBV_EVENT_PORT_ACTIVE $((pa0 + 2))
show | grep -q " link_downed 2" || ns_fail "link_downed is not 2"
# The addresses came through (keep_addr_on_down) and kept their places.
show | grep -q "^    gid 0 ::ffff:$v4 RoCEv2$" || ns_fail "GID 0 after down/up"

# --- a device added at run time on an interface that goes away ------------
# A veth pair inside host 1 (dummy interfaces need a module).
ip -n "$ns1" link add dum0 type veth peer name dumpeer ||
	ns_fail "veth pair in host 1"
ip -n "$ns1" addr add 10.$NS_X.9.1/24 dev dum0
ip -n "$ns1" link set dumpeer up
ip -n "$ns1" link set dum0 up
ns_exec 1 "$CLI" --no-start link add dum type softrdma netdev dum0 ||
	ns_fail "softrdma link add dum netdev dum0"
wait_show dum "^link dum/1 state ACTIVE physical_state LINK_UP netdev dum0 "
wait_show dum "^    gid 0 ::ffff:10.$NS_X.9.1 RoCEv2$"
watch dum
# A rename is followed.
ip -n "$ns1" link set dum0 down
ip -n "$ns1" link set dum0 name dum1 || ns_fail "rename dum0"
wait_show dum " netdev dum1 "
ip -n "$ns1" link del dum1
wait_events watchdum IBV_EVENT_DEVICE_FATAL 1
ns_exec 1 "$CLI" --no-start link | grep -q "^link dum/" &&
	ns_fail "dum is still listed after its interface went"
ns_exec 1 "$NS_BIN/ibv_devices" | grep -q " dum " &&
	ns_fail "ibv_devices still lists dum"
# srd1 heard nothing of it.
[ "$(count_events watchsrd1 IBV_EVENT_DEVICE_FATAL)" = 0 ] ||
	ns_fail "srd1 got a DEVICE_FATAL"

ns_log "events on srd1:"
sort "$NS_TMP/watchsrd1.log" | uniq -c
ns_pass
