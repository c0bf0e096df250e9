#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Two hosts: Debian's libfabric 1.17 (fi_info, fi_pingpong) through its
# verbs provider on our libraries, over RoCEv2 between the namespaces.
# fi_info must list a MSG endpoint (verbs), an RDM one (verbs;ofi_rxm)
# and a DGRAM one on each host's device; fi_pingpong then runs each
# endpoint type, every buffer checked (-c), server in host 1, client in
# host 2.  Skipped (77) without libfabric-bin.
#
# ofi_rxm sizes its CQ for FI_UNIVERSE_SIZE peers (256 by default:
# 65536 entries), beyond rxe's and our max_cqe (32767): RDM runs with 64.
# fi_pingpong exchanges the DGRAM addresses itself: the verbs provider's
# name server is off.
. "$(dirname "$0")/lib.sh"

ns_init libfabric 200
for b in fi_info fi_pingpong; do
	command -v "$b" >/dev/null || ns_skip "no $b (libfabric-bin)"
done
ns_setup 2

server=$(ns_addr 1 v4)
port=47600
bad=()

# Every host lists the endpoint types on its device.
for k in 1 2; do
	for want in "verbs srd$k FI_EP_MSG" "verbs;ofi_rxm srd$k FI_EP_RDM" \
		"verbs srd$k-dgram FI_EP_DGRAM"; do
		set -- $want
		ns_exec "$k" fi_info -p "$1" -t "$3" >"$NS_TMP/info$k.$3.log" 2>&1
		# One line per entry: provider, domain, type.
		awk '/provider:/ { p = $2 } /domain:/ { d = $2 }
			/type:/ { print p, d, $2 }' "$NS_TMP/info$k.$3.log" |
			grep -qxF "$want" ||
			bad+=("host $k: fi_info -p '$1' -t $3 lists no $2")
	done
done

# run PROVIDER EP: fi_pingpong of that endpoint type, host 2 to host 1.
run()
{
	local prov=$1 ep=$2 tag rows

	port=$((port + 1))
	tag=$ep.$port
	ns_log "fi_pingpong -p '$prov' -e $ep"
	if ! ns_pair 1 2 "$port" 90 "$tag" \
		env FI_UNIVERSE_SIZE=64 FI_VERBS_DGRAM_USE_NAME_SERVER=0 \
		fi_pingpong -p "$prov" -e "$ep" -c -I 100 -B "$port" -- \
		env FI_UNIVERSE_SIZE=64 FI_VERBS_DGRAM_USE_NAME_SERVER=0 \
		fi_pingpong -p "$prov" -e "$ep" -c -I 100 -P "$port" \
		"$server"; then
		bad+=("fi_pingpong -p '$prov' -e $ep")
		return
	fi
	# A row per size, "bytes #sent #ack total time ...": 64 B to 1 MiB,
	# for DGRAM to the path MTU (1024 here).
	rows=6
	[ "$ep" = dgram ] && rows=3
	if [ "$(grep -cE '^[0-9]+[km]? +100 +=100 ' \
		"$NS_TMP/$tag.client.log")" -lt $rows ] ||
		grep -qiE 'error|fail' "$NS_TMP/$tag.client.log" \
			"$NS_TMP/$tag.server.log"; then
		bad+=("fi_pingpong -p '$prov' -e $ep: no results")
		return
	fi
	sed 's/^/# /' "$NS_TMP/$tag.client.log"
}

run verbs msg
run "verbs;ofi_rxm" rdm
run verbs dgram

[ ${#bad[@]} -eq 0 ] || ns_fail "$(printf '%s; ' "${bad[@]}")"
ns_pass
