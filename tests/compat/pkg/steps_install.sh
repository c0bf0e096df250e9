#!/bin/sh
# SPDX-License-Identifier: MIT
# Inside the throwaway root, after dpkg -i of the packages (in_root.sh):
# the package states, the file list, the dynamic linker's view, what the
# maintainer scripts did, the units, and Debian's unmodified ibv_devinfo
# and ibv_rc_pingpong on the installed files (no LD_LIBRARY_PATH, no
# SOFTRDMAD): as root, which starts the system daemon from /usr/bin, and
# as an ordinary user, whose clients must use that daemon.
set -eu
fail() {
	echo "FAIL: $*"
	exit 1
}
ok() { echo "ok: $*"; }
status() { dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null || true; }

for p in softrdma libsoftrdma1 softrdma-dev; do
	[ "$(status "$p")" = "ii " ] || fail "$p is not installed: '$(status "$p")'"
done
# Conflicts + Replaces: Debian's runtime packages made way ...
for p in libibverbs1 librdmacm1 ibverbs-providers libibverbs-dev; do
	case "$(status "$p")" in
	ii*) fail "$p is still installed beside libsoftrdma1" ;;
	esac
done
# ... and Provides kept their users installed and configured.
for p in ibverbs-utils rdmacm-utils perftest libucx0 libfabric1; do
	s=$(status "$p")
	[ -z "$s" ] || [ "$s" = "un " ] || [ "$s" = "ii " ] ||
		fail "$p left as '$s'"
done
[ "$(status ibverbs-utils)" = "ii " ] ||
	fail "ibverbs-utils (Debian's clients) is not installed here"
ok "packages: ours installed, libibverbs1/librdmacm1/ibverbs-providers replaced"

lib=$(dirname "$(dpkg -L libsoftrdma1 | grep '/libibverbs\.so\.1$')")
case "$lib" in
/usr/lib/*-linux-gnu) ;;
*) fail "libibverbs.so.1 is in $lib, not the multiarch libdir" ;;
esac
want="
softrdma:/usr/bin/softrdmad
softrdma:/usr/bin/softrdma
softrdma:/usr/bin/softrdma-demo
softrdma:/usr/bin/softrdma-bench
softrdma:/etc/softrdma.conf
softrdma:/lib/systemd/system/softrdmad.socket
softrdma:/lib/systemd/system/softrdmad.service
softrdma:/usr/lib/tmpfiles.d/softrdma.conf
softrdma:/usr/lib/tmpfiles.d/softrdma-userfaultfd.conf
softrdma:/usr/lib/sysusers.d/softrdma.conf
softrdma:/lib/udev/rules.d/60-softrdma.rules
softrdma:/usr/share/man/man8/softrdmad.8.gz
softrdma:/usr/share/man/man8/softrdma.8.gz
softrdma:/usr/share/man/man1/softrdma-demo.1.gz
libsoftrdma1:$lib/libibverbs.so.1
libsoftrdma1:$lib/libibverbs.so.1.14.44.0
libsoftrdma1:$lib/librdmacm.so.1
libsoftrdma1:$lib/libmlx5.so.1
libsoftrdma1:$lib/libefa.so.1
libsoftrdma1:$lib/rsocket/librspreload.so
softrdma-dev:/usr/include/infiniband/verbs.h
softrdma-dev:/usr/include/rdma/rdma_cma.h
softrdma-dev:$lib/libibverbs.so
softrdma-dev:$lib/librdmacm.so
softrdma-dev:$lib/pkgconfig/libibverbs.pc
softrdma-dev:$lib/pkgconfig/librdmacm.pc
"
for w in $want; do
	p=${w%%:*}
	f=${w#*:}
	dpkg -L "$p" | grep -qx "$f" || fail "$p lacks $f"
	[ -e "$f" ] || fail "$f is not on disk"
done
ok "file list"

# The dynamic linker finds ours, the package's file.
got=$(ldconfig -p | sed -n 's/^\s*libibverbs\.so\.1 (.*x86-64.*) => //p' | head -n 1)
# (/lib is /usr/lib on a merged-/usr system.)
[ "$(readlink -f "$got")" = "$(readlink -f "$lib/libibverbs.so.1")" ] || fail "ldconfig: libibverbs.so.1 => '$got'"
owner=$(dpkg -S "$(readlink -f "$got")" | cut -d: -f1)
[ "$owner" = libsoftrdma1 ] || fail "$(readlink -f "$got") belongs to $owner"
ok "ldconfig: libibverbs.so.1 => $got (libsoftrdma1)"

# Maintainer scripts: device nodes for UCX, the socket enabled.
node=/dev/infiniband/uverbs0
[ -c "$node" ] || fail "postinst made no $node"
[ "$(stat -c %a "$node")" = 666 ] || fail "$node mode $(stat -c %a "$node")"
[ -L /etc/systemd/system/sockets.target.wants/softrdmad.socket ] ||
	fail "softrdmad.socket not enabled"
dpkg-query -W -f='${Conffiles}' softrdma | grep -q /etc/softrdma.conf ||
	fail "/etc/softrdma.conf is not a conffile"
ok "postinst: $node 0666, softrdmad.socket enabled, conffile"

# The group that may be given /dev/userfaultfd: made, with nobody in it;
# the tmpfiles line gives it the node (this root's /dev is its own: a
# node with the machine's numbers, from in_root.sh, stands in).
getent group softrdma >/dev/null || fail "postinst made no group softrdma"
[ -z "$(getent group softrdma | cut -d: -f4)" ] ||
	fail "group softrdma has members: $(getent group softrdma)"
grep -q '^KERNEL=="userfaultfd", GROUP="softrdma", MODE="0660"$' \
	/lib/udev/rules.d/60-softrdma.rules || fail "udev rule"
if [ -r /tmp/userfaultfd.dev ]; then
	nums=$(cat /tmp/userfaultfd.dev)
	mknod -m 0600 /dev/userfaultfd c "${nums%%:*}" "${nums#*:}"
	systemd-tmpfiles --create softrdma-userfaultfd.conf ||
		fail "systemd-tmpfiles softrdma-userfaultfd.conf"
	got=$(stat -c '%a %U %G' /dev/userfaultfd)
	[ "$got" = "660 root softrdma" ] || fail "/dev/userfaultfd: $got"
	ok "group softrdma, empty; /dev/userfaultfd 0660 root:softrdma"
else
	ok "group softrdma, empty (no /dev/userfaultfd on this kernel)"
fi

if command -v systemd-analyze >/dev/null; then
	systemd-analyze verify /lib/systemd/system/softrdmad.socket \
		/lib/systemd/system/softrdmad.service ||
		fail "systemd-analyze verify"
	grep -q '^ListenSequentialPacket=@softrdma$' \
		/lib/systemd/system/softrdmad.socket || fail "socket address"
	grep -q '^ExecStart=/usr/bin/softrdmad --foreground --config /etc/softrdma.conf$' \
		/lib/systemd/system/softrdmad.service || fail "ExecStart"
	ok "systemd-analyze verify"
fi

unset SOFTRDMA_SOCKET SOFTRDMAD LD_LIBRARY_PATH LD_PRELOAD || true
out=$(/usr/bin/ibv_devinfo) || fail "ibv_devinfo exited $?"
echo "$out" | grep -q 'hca_id:[[:space:]]*softrdma0' || fail "no softrdma0: $out"
echo "$out" | grep -q 'PORT_ACTIVE' || fail "port not active: $out"
ok "Debian's ibv_devinfo lists softrdma0"

# The daemon root's client started: /usr/bin/softrdmad on @softrdma.
daemon=
for d in /proc/[0-9]*; do
	[ "$(readlink "$d/exe" 2>/dev/null)" = /usr/bin/softrdmad ] || continue
	tr '\0' ' ' <"$d/cmdline" | grep -q -- '--socket softrdma ' &&
		daemon=${d#/proc/}
done
[ -n "$daemon" ] || fail "no /usr/bin/softrdmad --socket softrdma running"
ok "system daemon: pid $daemon, /usr/bin/softrdmad"

user=srd-pkg
useradd -M -s /bin/sh "$user" 2>/dev/null || true
as_user() { setpriv --reuid="$user" --regid="$user" --init-groups -- "$@"; }
# setpriv itself in the background (not a function's subshell), so $! is
# the server's pid once setpriv execs it.
setpriv --reuid="$user" --regid="$user" --init-groups -- \
	/usr/bin/ibv_rc_pingpong -g 0 -n 500 -s 4096 -c >/tmp/server.out 2>&1 &
server=$!
# Once it has loaded a libibverbs (setpriv execs it): the package's.
tries=0
until grep -q '/libibverbs\.so' "/proc/$server/maps" 2>/dev/null; do
	tries=$((tries + 1))
	[ "$tries" -lt 200 ] || fail "the server never mapped a libibverbs"
	sleep 0.05
done
grep -q " $lib/libibverbs.so.1.14.44.0$" "/proc/$server/maps" ||
	fail "server maps $(grep -o '/[^ ]*libibverbs[^ ]*' "/proc/$server/maps" | head -n 1)"
tries=0
until as_user /usr/bin/ibv_rc_pingpong -g 0 -n 500 -s 4096 -c 127.0.0.1 \
	>/tmp/client.out 2>&1; do
	tries=$((tries + 1))
	[ "$tries" -lt 100 ] && kill -0 "$server" 2>/dev/null ||
		{ cat /tmp/server.out /tmp/client.out; fail "ibv_rc_pingpong"; }
	sleep 0.1
done
wait "$server" || { cat /tmp/server.out; fail "ibv_rc_pingpong server"; }
cat /tmp/client.out
grep -q 'bytes in' /tmp/client.out || fail "no figures from ibv_rc_pingpong"
for d in /proc/[0-9]*; do
	tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -q -- "--socket softrdma\.[0-9]" &&
		fail "the user started a daemon of its own: $(tr '\0' ' ' <"$d/cmdline")"
done
ok "Debian's ibv_rc_pingpong as $user, on the system daemon"
