#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Builds the guest image of the interop lab, or finds it built:
#   image.sh            prints the image directory (vmlinux, initrd.img,
#                       rootfs.ext4); exit 77 when it cannot be built here
#                       (no root, no debootstrap, no network to the mirror)
#
# Debian's kernel package (linux-image-amd64's dependency) is unpacked,
# not installed; debootstrap makes a minbase bookworm with rdma-core 44,
# the verbs and rdma_cm clients and perftest; the guest boots the
# uncompressed vmlinux (QEMU's PVH entry: no BIOS, no decompression) with
# a busybox initramfs that only mounts the root.  Needs root, about
# 3 minutes and 1 GiB.  Concurrent callers wait for one build (flock).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

GUEST_PKGS=rdma-core,ibverbs-utils,ibverbs-providers,rdmacm-utils,perftest,iproute2,kmod,procps
skip()
{
	echo "image: $*" >&2
	exit 77
}

[ "$(id -u)" = 0 ] || skip "needs root"
for t in debootstrap mkfs.ext4 cpio busybox xz apt-get dpkg-deb modprobe; do
	command -v "$t" >/dev/null || skip "no $t"
done
dir=$(il_image_dir)
mkdir -p "$IL_CACHE"
exec 9>"$IL_CACHE/build.lock"
flock 9
if [ -e "$dir/complete" ]; then
	echo "$dir"
	exit 0
fi
# The answer (the image's path) is the only line on stdout: whatever the
# builders print (mkfs.ext4 says "Creating regular file" even with -q)
# goes to stderr.
exec 3>&1 1>&2
rm -rf "$dir.tmp"
mkdir -p "$dir.tmp"
cd "$dir.tmp"
t0=$(date +%s)

# 1. The kernel: whatever linux-image-amd64 depends on now (6.1.x).
kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
	awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
[ -n "$kpkg" ] || skip "apt-cache knows no linux-image-amd64"
kver=${kpkg#linux-image-}
mkdir -p debs kpkg
chown _apt debs 2>/dev/null || true
(cd debs && apt-get download -q "$kpkg" >/dev/null 2>&1) ||
	skip "cannot download $kpkg"
dpkg-deb -x debs/"$kpkg"_*.deb kpkg
rm -rf debs
[ -f kpkg/lib/modules/"$kver"/modules.dep ] || depmod -b kpkg "$kver"
off=$(grep -abo $'\xfd7zXZ\x00' kpkg/boot/vmlinuz-"$kver" | head -n 1 | cut -d: -f1)
[ -n "$off" ] || il_die "no XZ payload in vmlinuz-$kver"
tail -c +$((off + 1)) kpkg/boot/vmlinuz-"$kver" |
	xz -dc --single-stream >vmlinux 2>/dev/null || true
head -c 4 vmlinux | grep -q ELF || il_die "no ELF vmlinux out of vmlinuz-$kver"

# 2. The root: minbase bookworm from the mirror apt uses here.
mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(awk '/^deb / { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
debootstrap --variant=minbase --include="$GUEST_PKGS" bookworm rootfs \
	"$mirror" >debootstrap.log 2>&1 || {
	tail -n 20 debootstrap.log >&2
	skip "debootstrap bookworm from $mirror failed"
}
rm -rf rootfs/var/cache/apt/archives/*.deb rootfs/var/lib/apt/lists/*
mkdir -p rootfs/lib/modules
# Only what the guest loads: net, virtio, 9p, InfiniBand (rxe) and their
# dependencies keep the image small.
cp -a kpkg/lib/modules/"$kver" rootfs/lib/modules/
m=rootfs/lib/modules/$kver/kernel
find "$m" -mindepth 1 -maxdepth 1 -not -name drivers -not -name net \
	-not -name fs -not -name lib -not -name crypto -exec rm -rf {} +
find "$m/drivers" -mindepth 1 -maxdepth 1 -not -name infiniband \
	-not -name net -not -name virtio -not -name block -exec rm -rf {} +
find "$m/drivers/net" -mindepth 1 -maxdepth 1 -not -name virtio_net.ko \
	-not -name net_failover.ko -exec rm -rf {} +
depmod -b rootfs "$kver"
install -m 755 "$IL_DIR/guest/init" rootfs/sbin/il-init
echo il-guest >rootfs/etc/hostname
printf '127.0.0.1 localhost\n' >rootfs/etc/hosts
size=$(($(du -sm rootfs | cut -f1) + 128))
mkfs.ext4 -q -F -L il-root -d rootfs rootfs.ext4 "${size}M"
rm -rf rootfs

# 3. The initramfs: static busybox and the modules that mount /dev/vda.
mkdir -p initramfs/bin initramfs/modules
cp "$(command -v busybox)" initramfs/bin/busybox
ldd initramfs/bin/busybox >/dev/null 2>&1 &&
	il_die "busybox is not static (busybox-static)"
install -m 755 "$IL_DIR/guest/initramfs-init" initramfs/init
for mod in crc32c_generic virtio_pci virtio_blk ext4; do
	modprobe -d kpkg -S "$kver" --show-depends "$mod"
done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' | while read -r p; do
	cp "$p" initramfs/modules/
	basename "$p" >>initramfs/modules.list
done
(cd initramfs && find . | cpio -o -H newc --quiet | gzip -1) >initrd.img
rm -rf initramfs kpkg
echo "$kver" >kernel.version
echo "built in $(($(date +%s) - t0)) s: kernel $kver" >build.info
cd /
mv "$dir.tmp" "$dir"
touch "$dir/complete"
# Images of other versions of the builder: one is enough on a disk.
find "$IL_CACHE" -maxdepth 1 -name 'image-*' -not -path "$dir" \
	-exec rm -rf {} + 2>/dev/null || true
echo "$dir" >&3
