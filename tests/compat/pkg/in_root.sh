#!/bin/sh
# SPDX-License-Identifier: MIT
# in_root.sh WORK [ARGS...]: run in new mount, network and pid namespaces
# (t_pkg.py starts it so).  Makes WORK/root, an overlay over this
# machine's / with a private /dev, /proc, /run and /tmp, installs
# WORK/debs/*.deb there with dpkg -i and runs WORK/steps.sh ARGS inside
# (chroot).  Nothing reaches the real root: the overlay's upper layer is a
# tmpfs, and the pid namespace ends every process when this script does.
set -eu
work=$1
shift
root=$work/root

mkdir -p "$root"
mount -t tmpfs -o mode=0755 srdpkg "$root"
mkdir -p "$root/upper" "$root/work" "$root/merged"
mount -t overlay srdpkg \
	-o "lowerdir=/,upperdir=$root/upper,workdir=$root/work" "$root/merged"
m=$root/merged
# A /dev of its own (the package's tmpfiles.d makes nodes there).
mount -t tmpfs -o mode=0755 srddev "$m/dev"
for n in null zero full random urandom tty; do
	touch "$m/dev/$n"
	mount --bind "/dev/$n" "$m/dev/$n"
done
mkdir -p "$m/dev/shm" "$m/dev/pts"
mount -t tmpfs -o mode=1777 srdshm "$m/dev/shm"
mount -t proc proc "$m/proc"
mount -t tmpfs -o mode=0755 srdrun "$m/run"
mount -t tmpfs -o mode=1777 srdtmp "$m/tmp"
mkdir -p "$m/tmp/debs"
cp "$work"/debs/*.deb "$m/tmp/debs/"
cp "$work"/*.sh "$m/tmp/"
# The machine's /dev/userfaultfd numbers (dynamic), for a node of the
# root's own /dev: steps_install.sh checks what the package makes of it.
if [ -r /sys/class/misc/userfaultfd/dev ]; then
	cp /sys/class/misc/userfaultfd/dev "$m/tmp/userfaultfd.dev"
fi
chmod 0755 "$m"/tmp/*.sh

# The loopback interface of the new network namespace.
chroot "$m" ip link set lo up
echo "--- dpkg -i $(cd "$m/tmp/debs" && echo ./*.deb)"
chroot "$m" sh -c 'dpkg -i /tmp/debs/*.deb' 2>&1
echo "--- steps"
rc=0
chroot "$m" /tmp/steps.sh "$@" || rc=$?
exit "$rc"
