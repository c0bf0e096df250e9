#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# What rdma_rxe and softrdma say about themselves, side by side:
#   devinfo.sh [OUTDIR]     (default $SRD_BUILD/interop-devinfo)
#
# Boots the interop guest (image.sh: Linux 6.1, rdma_rxe, rdma-core 44)
# on bridge br-rxe in a namespace of its own, with softrdmad's srd0 on the
# same bridge, and writes to OUTDIR:
#   rxe0.txt           the guest's `ibv_devinfo -v -d rxe0` (rdma-core 44)
#   rxe0-rdma.txt      the guest's `rdma dev`, `rdma link`, `rdma statistic`
#   srd0.txt           `ibv_devinfo -v -d srd0` of our build
#   srd0-debian.txt    Debian's ibv_devinfo over our libibverbs, if installed
#   srd0-softrdma.txt  `softrdma statistic show` of the daemon
#   fields.txt         every "name: value" field of both, one line each
# docs/caps.md explains each difference; the fields and flags it says
# are the same must be (else exit 1).  Run it under
# `flock /tmp/softrdma-interop.lock` (the lab is shared).  Exit 77
# without root, QEMU, tun or the image.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

BUILD=$(cd "${SRD_BUILD:-$IL_DIR/../../build}" && pwd -P) || exit 1
BIN=$BUILD/bin
LIB=$BUILD/lib
OUT=${1:-$BUILD/interop-devinfo}
NS=srd-ild-$$
BR=br-rxe
HOST=10.77.0.1
GUEST=10.77.0.10
SOCK=srd-ild-$$
TMP=
QEMU_PID=
DAEMON_PID=

skip()
{
	echo "SKIP devinfo: $*"
	exit 77
}

cleanup()
{
	local rc=$? p

	trap - EXIT INT TERM
	il_stop_lab
	if [ -n "$TMP" ]; then
		if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
			echo "----- guest console (last 30 lines)"
			tail -n 30 "$TMP/guest.log" 2>/dev/null
			echo "# scratch kept in $TMP"
		else
			rm -rf "$TMP"
		fi
	fi
	exit $rc
}

[ "$(id -u)" = 0 ] || skip "needs root"
for t in qemu-system-x86_64 ip timeout; do
	command -v "$t" >/dev/null || skip "no $t"
done
[ -c /dev/net/tun ] || skip "no /dev/net/tun"
[ -x "$BIN/softrdmad" ] || il_die "no $BIN/softrdmad (SRD_BUILD?)"
trap cleanup EXIT
trap 'exit 1' INT TERM

IMG=$("$IL_DIR/image.sh")
rc=$?
[ $rc -eq 77 ] && skip "no guest image"
[ $rc -eq 0 ] || il_die "image.sh failed ($rc)"
TMP=$(mktemp -d /tmp/srd-devinfo.XXXXXX)
Q=$TMP/share/q
mkdir -p "$Q" "$OUT"
cp "$IL_DIR/agent.sh" "$TMP/share/agent.sh"

in_ns()
{
	ip netns exec "$NS" "$@"
}

hrun()
{
	in_ns env "SOFTRDMA_SOCKET=$SOCK" "SOFTRDMAD=$BIN/softrdmad" \
		"LD_LIBRARY_PATH=$LIB" "$@"
}

ip netns add "$NS" || il_die "ip netns add $NS"
in_ns ip link set lo up
in_ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
in_ns ip link add "$BR" type bridge stp_state 0 forward_delay 0
in_ns ip addr add "$HOST/24" dev "$BR"
in_ns ip link set "$BR" up
in_ns ip tuntap add dev tap-g mode tap
in_ns ip link set tap-g master "$BR" up
in_ns "$BIN/softrdmad" --foreground --socket "$SOCK" --no-default-device \
	>"$TMP/softrdmad.log" 2>&1 </dev/null &
DAEMON_PID=$!
for ((i = 0; i < 50; i++)); do
	hrun "$BIN/softrdma" link add srd0 netdev "$BR" >>"$TMP/softrdmad.log" 2>&1 && break
	sleep 0.1
done

il_log "booting the guest"
in_ns timeout -k 10 600 qemu-system-x86_64 -name il-devinfo -machine pc \
	-accel tcg -cpu max -smp 1 -m 768 -nodefaults -no-user-config \
	-display none -no-reboot -kernel "$IMG/vmlinux" -initrd "$IMG/initrd.img" \
	-append "console=ttyS0 panic=-1 loglevel=4 mitigations=off il_ip=$GUEST/24" \
	-drive file="$IMG/rootfs.ext4",if=virtio,format=raw,snapshot=on \
	-netdev tap,id=n0,ifname=tap-g,script=no,downscript=no \
	-device virtio-net-pci,netdev=n0,mac=52:54:00:77:00:0a,romfile= \
	-virtfs local,path="$TMP/share",mount_tag=share,security_model=none,id=share \
	-serial file:"$TMP/guest.log" -monitor none </dev/null >"$TMP/qemu.log" 2>&1 &
QEMU_PID=$!
for ((i = 0; i < 1800; i++)); do
	[ -e "$Q/agent.up" ] && break
	kill -0 "$QEMU_PID" 2>/dev/null || il_die "the guest died"
	sleep 0.1
done
[ -e "$Q/agent.up" ] || il_die "the guest's agent did not come up"
il_log "guest up"

# One command for the guest, waited for (at most 120 s).
gcmd()
{
	local n=$1 i

	printf '%s\n' "$2" >"$Q/cmd.$n.tmp"
	mv "$Q/cmd.$n.tmp" "$Q/cmd.$n"
	for ((i = 0; i < 1200; i++)); do
		[ -e "$Q/rc.$n" ] && return 0
		sleep 0.1
	done
	il_die "guest command $n: no answer"
}

gcmd 0 "ibv_devinfo -v -d rxe0"
cp "$Q/out.0" "$OUT/rxe0.txt"
gcmd 1 "uname -r; dpkg-query -W rdma-core ibverbs-providers; rdma dev show;
	rdma link show; rdma statistic show; rdma resource show"
cp "$Q/out.1" "$OUT/rxe0-rdma.txt"
printf 'EXIT\n' >"$Q/cmd.2"

hrun "$BIN/ibv_devinfo" -v -d srd0 >"$OUT/srd0.txt" 2>&1
if [ -x /usr/bin/ibv_devinfo ]; then
	hrun /usr/bin/ibv_devinfo -v -d srd0 >"$OUT/srd0-debian.txt" 2>&1
fi
hrun "$BIN/softrdma" statistic show >"$OUT/srd0-softrdma.txt" 2>&1

# "name: value" lines of each, by field, for the table in docs/caps.md.
fields()
{
	sed -n 's/^[[:space:]]*\([a-zA-Z_][a-zA-Z0-9_ .]*\):[[:space:]]*\(.*\)$/\1\t\2/p' "$1" |
		awk -F '\t' '!seen[$1]++'
}
fields "$OUT/rxe0.txt" >"$TMP/rxe.f"
fields "$OUT/srd0.txt" >"$TMP/srd.f"
awk -F '\t' 'NR == FNR { r[$1] = $2; next }
	{ s[$1] = $2; o[++n] = $1 }
	END {
		for (k in r) if (!(k in s)) o[++n] = k
		printf "%-34s %-30s %s\n", "field", "softrdma", "rxe"
		for (i = 1; i <= n; i++) {
			k = o[i]
			printf "%-34s %-30s %s%s\n", k, (k in s) ? s[k] : "-",
				(k in r) ? r[k] : "-",
				((k in s) && (k in r) && s[k] != r[k]) ? "   *" : ""
		}
	}' "$TMP/rxe.f" "$TMP/srd.f" >"$OUT/fields.txt"
for ((i = 0; i < 300; i++)); do
	kill -0 "$QEMU_PID" 2>/dev/null || break
	sleep 0.1
done
il_log "written to $OUT"
cat "$OUT/fields.txt"

# What docs/caps.md says is the same must stay the same.
SAME="max_mr_size page_size_cap max_sge max_sge_rd max_cqe max_qp_rd_atom
	max_res_rd_atom max_qp_init_rd_atom atomic_cap max_mcast_grp
	max_mcast_qp_attach max_total_mcast_qp_attach max_srq_sge
	local_ca_ack_delay phys_port_cnt vendor_id state max_mtu active_mtu
	link_layer port_cap_flags port_cap_flags2 max_vl_num pkey_tbl_len
	phys_state transport"
# Flags both report.
FLAGS="BAD_PKEY_CNTR BAD_QKEY_CNTR UD_AV_PORT_ENFORCE PORT_ACTIVE_EVENT SYS_IMAGE_GUID
	RC_RNR_NAK_GEN MEM_WINDOW MEM_MGT_EXTENSIONS MEM_WINDOW_TYPE_2B"
bad=()
for f in $SAME; do
	a=$(awk -F '\t' -v k="$f" '$1 == k { print $2 }' "$TMP/srd.f")
	b=$(awk -F '\t' -v k="$f" '$1 == k { print $2 }' "$TMP/rxe.f")
	[ -n "$b" ] && [ "$a" = "$b" ] || bad+=("$f: softrdma '$a', rxe '$b'")
done
for f in $FLAGS; do
	grep -qx "[[:space:]]*$f" "$OUT/rxe0.txt" || bad+=("rxe0 lacks $f")
	grep -qx "[[:space:]]*$f" "$OUT/srd0.txt" || bad+=("srd0 lacks $f")
done
if [ ${#bad[@]} -gt 0 ]; then
	printf 'differs: %s\n' "${bad[@]}"
	echo "FAIL devinfo"
	exit 1
fi
echo "PASS devinfo: $(echo $SAME | wc -w) fields and $(echo $FLAGS | wc -w) flags as rxe's"
exit 0
