#!/bin/sh
# SPDX-License-Identifier: MIT
# Inside the throwaway root (in_root.sh), what the container image does:
# Debian's ibverbs-utils on our libraries, and the image's command run by
# an ordinary user with no capabilities at all (bounding, inheritable and
# ambient sets empty, no_new_privs), in a network namespace where no
# system daemon runs.
set -eu
fail() {
	echo "FAIL: $*"
	exit 1
}
[ -x /usr/bin/ibv_rc_pingpong ] || { echo "no ibverbs-utils"; exit 77; }
user=srd-box
useradd -m -s /bin/sh "$user" 2>/dev/null || true
install -m 0755 /tmp/softrdma-container-demo.sh /usr/local/bin/softrdma-container-demo
cd /tmp
out=/tmp/demo.out
env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="/home/$user" \
	setpriv --reuid="$user" --regid="$user" --init-groups \
	--no-new-privs --inh-caps=-all --ambient-caps=-all \
	--bounding-set=-all -- /usr/local/bin/softrdma-container-demo \
	>"$out" 2>&1 || { cat "$out"; fail "the demo exited non-zero"; }
cat "$out"
grep -q 'CapEff:[[:space:]]*0000000000000000' "$out" ||
	fail "the demo ran with capabilities"
grep -q 'softrdma-container-demo: all ok' "$out" || fail "no 'all ok'"
# Its own daemon, started by the library from /usr/bin.
uid=$(id -u "$user")
for d in /proc/[0-9]*; do
	tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -q -- "--socket softrdma\.$uid " &&
		found=1
done
[ "${found:-0}" = 1 ] || fail "no softrdmad --socket softrdma.$uid ran"
echo "ok: the image's command as $user, no capabilities"
