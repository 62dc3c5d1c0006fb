#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/vm/mkinitramfs.sh KERNEL: build the initramfs for an extracted kernel
# (tests/vm/fetch-kernel.sh) and print its path:
#
#   $VM_CACHE/initramfs/SUITE.cpio.gz
#
# Contents: the static busybox of this machine, /init (tests/vm/init), and
# the modules the guest needs to reach its root and its swap disk:
# virtio_pci, virtio_blk, 9pnet_virtio, 9p, each with its dependencies.  The
# load order comes from modules.dep (depmod ran on the extracted tree), not
# from a hard-coded list: 5.10 needs virtio_ring/virtio/virtio_pci as
# modules and fscache, 6.1 adds virtio_pci_*_dev and netfs, 6.12 has virtio
# built in and ships its modules xz-compressed (decompressed here, so
# busybox insmod needs no xz support; the signature stays valid, it covers
# the uncompressed module).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || {
	echo "usage: $0 5.10|6.1|6.12|SUITE" >&2
	exit 2
}
suite=$(vm_suite_of "$1")
env=$VM_CACHE/kernels/$suite/kernel.env
[ -f "$env" ] || vm_die "kernel for '$1' not fetched (tests/vm/fetch-kernel.sh $1)"
# shellcheck source=/dev/null
. "$env"

WANT=(virtio_pci virtio_blk 9pnet_virtio 9p)
BUSYBOX=${BUSYBOX:-/bin/busybox}
[ -x "$BUSYBOX" ] || vm_die "$BUSYBOX missing (busybox-static; tests/vm/deps.sh)"
ldd "$BUSYBOX" >/dev/null 2>&1 && vm_die "$BUSYBOX is dynamically linked (need busybox-static)"

# module name (dashes as underscores) -> path relative to MODDIR
declare -A path_of deps_of
while IFS= read -r line; do
	m=${line%%:*}
	n=${m##*/}
	n=${n%%.ko*}
	n=${n//-/_}
	path_of[$n]=$m
	deps_of[$n]=${line#*:}
done <"$MODDIR/modules.dep"
declare -A builtin
while IFS= read -r m; do
	n=${m##*/}
	n=${n%%.ko*}
	builtin[${n//-/_}]=1
done <"$MODDIR/modules.builtin"

order=()
declare -A seen
add_module()
{
	local n=${1//-/_} d dn i
	local -a ds
	[ -n "${seen[$n]:-}" ] && return 0
	seen[$n]=1
	if [ -z "${path_of[$n]:-}" ]; then
		[ -n "${builtin[$n]:-}" ] && return 0
		vm_die "module $n is neither in modules.dep nor built into $KVER"
	fi
	read -r -a ds <<<"${deps_of[$n]}"
	# modprobe loads the dependency list from its end; recursing on each
	# dependency's own list gives a valid order either way.
	for ((i = ${#ds[@]} - 1; i >= 0; i--)); do
		d=${ds[i]##*/}
		dn=${d%%.ko*}
		add_module "$dn"
	done
	order+=("$n")
}
for w in "${WANT[@]}"; do
	add_module "$w"
done

out=$VM_CACHE/initramfs/$suite.cpio.gz
stage=$(mktemp -d "$VM_CACHE/initramfs-stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,newroot,lib/modules} "$(dirname "$out")"
cp "$BUSYBOX" "$stage/bin/busybox"
ln -s busybox "$stage/bin/sh"
mknod -m 600 "$stage/dev/console" c 5 1
mknod -m 666 "$stage/dev/null" c 1 3
install -m 755 "$VM_DIR/init" "$stage/init"
: >"$stage/lib/modules/load-order"
for n in "${order[@]}"; do
	src=$MODDIR/${path_of[$n]}
	case $src in
	*.ko.xz) xz -dc "$src" >"$stage/lib/modules/$n.ko" ;;
	*.ko.zst) zstd -qdc "$src" >"$stage/lib/modules/$n.ko" ;;
	*.ko.gz) gzip -dc "$src" >"$stage/lib/modules/$n.ko" ;;
	*) cp "$src" "$stage/lib/modules/$n.ko" ;;
	esac
	echo "$n.ko" >>"$stage/lib/modules/load-order"
done
echo "$KVER" >"$stage/kernel-version"
(cd "$stage" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) |
	gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
vm_log "$1: initramfs for $KVER: modules ${order[*]} ($(du -h "$out" | cut -f1))"
echo "$out"
