#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs leap's build and test dependencies from Debian.  Idempotent: does
# nothing when every package is present.  Package names only: the sources
# are whatever this machine's apt configuration says.
#   install-deps.sh               what make, make check and make demo need
#   install-deps.sh --packaging   also what make deb needs (debhelper)
# As non-root it installs nothing: it names the missing packages and fails.
set -euo pipefail

PKGS=(
	make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config
	libcap-dev libinih-dev libjson-c-dev libcmocka-dev
	perl gnuplot-nox util-linux procps iproute2 e2fsprogs jq python3
	python3-prometheus-client
	libssl-dev libclang-rt-14-dev libfuse3-dev fuse3 liburing-dev
	libibverbs-dev librdmacm-dev ibverbs-providers rdmacm-utils ibverbs-utils
	nvme-cli help2man
	python3-numpy shellcheck
)
case ${1:-} in
--packaging) PKGS+=(debhelper dpkg-dev build-essential) ;;
'') ;;
*)
	echo "install-deps: unknown option $1 (--packaging)" >&2
	exit 2
	;;
esac

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all ${#PKGS[@]} packages installed"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}" >&2
	echo "install-deps: run 'sudo make deps' (or install them with apt-get)" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
