#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/vm/deps.sh: install what the VM test bed needs from the machine's own
# Debian package sources, only when something is missing (idempotent, like
# tools/install-deps.sh, which the test bed leaves alone).
#   qemu-system-x86  the emulator (TCG; no KVM needed)
#   busybox-static   the initramfs userland
#   kmod             depmod for the extracted kernels' module order
#   cpio, xz-utils   building the initramfs, decompressing 6.12's modules
#   util-linux       mkswap/swapon, inside the guest too (via the 9p root)
set -euo pipefail

need=()
have_cmd() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/sbin/$1" ]; }
have_cmd qemu-system-x86_64 || need+=(qemu-system-x86)
# The initramfs copies /bin/busybox, so it must be the static build.
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' ||
	need+=(busybox-static)
have_cmd depmod || need+=(kmod)
have_cmd cpio || need+=(cpio)
have_cmd xz || need+=(xz-utils)
have_cmd mkswap || need+=(util-linux)
have_cmd dpkg-deb || need+=(dpkg)
have_cmd jq || need+=(jq)
# qemu's firmware (normally pulled in as dependencies; checked anyway).
[ -e /usr/share/seabios/bios-256k.bin ] || [ -e /usr/share/qemu/bios-256k.bin ] || need+=(seabios)

[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "tests/vm/deps.sh: missing ${need[*]} and not root to install them" >&2
	exit 1
fi
echo "tests/vm/deps.sh: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null || apt-get update -q
apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
