#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Two hosts: every operation and every error status of RC (and UD with its
# GRH) between two daemons, over one address family's GIDs and one path
# MTU (xhost -t all: see xhost.c and xh_ops.c, xh_err.c).
#
#   xhost.sh v4|v6 1024|4096
. "$(dirname "$0")/lib.sh"

fam=${1:-v4}
mtu=${2:-1024}
ns_init "xhost_${fam}_$mtu" 110
XHOST=${NS_XHOST:-$NS_BUILD/tests/netns/netns_xhost}
[ -x "$XHOST" ] || ns_fail "no xhost program ($XHOST)"
case $mtu in
1024) NS_MTU=1500 ;;
4096) NS_MTU=9000 ;;
*) ns_fail "path MTU $mtu: 1024 or 4096" ;;
esac
ns_setup 2

ns_pair 1 2 18600 90 xhost \
	"$XHOST" server -t all -d srd1 -f "$fam" -m "$mtu" -p 18600 -T 90 -- \
	"$XHOST" client -t all -d srd2 -f "$fam" -m "$mtu" -p 18600 -T 90 \
	"$(ns_addr 1 "$fam")" || ns_fail "xhost $fam MTU $mtu"
grep '^#' "$NS_TMP/xhost.client.log" | grep -E 'ms|MTU'
ns_pass
