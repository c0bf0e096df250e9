#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# softrdmad --verbose names the transport state where a request went
# wrong: the responder refusing an rkey, the completer entering an RNR
# wait, the requester finding a bad lkey.
#   verbose_log.sh ERR_ACCESS_TEST ERR_RNR_TEST ERR_LKEY_TEST
. "$(dirname "$0")/lib.sh"

T_DAEMON_ARGS=--verbose
t_start_daemon
for t in "$@"; do
	"$t" >"$T_TMP/out" 2>&1 || { t_show "$T_TMP/out"; t_fail "$t failed"; }
done
log=$T_TMP/daemon.log
for want in 'responder: CHECK_RKEY -> ERR_ACCESS' \
	'responder: CHECK_RESOURCE -> ERR_RNR' \
	'completer: CHECK_ACK -> RNR' \
	'requester: WQE [0-9]* BAD, LOC_PROT_ERR'; do
	grep -q "debug: qp 0x[0-9a-f]* $want" "$log" ||
		{ t_show "$log"; t_fail "no '$want' in the daemon's log"; }
done
echo "PASS verbose_log"
