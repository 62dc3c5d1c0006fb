# SPDX-License-Identifier: MIT
# VM test bed (tests/vm/, docs/vm.md): Debian's 5.10, 6.1 and 6.12 kernels
# under qemu TCG with this machine's root over 9p, plus this machine itself.
# Root only; kernels come from the machine's own apt sources into
# tests/vm/cache/ (or $LEAP_VM_CACHE).
#   make vm-check                       the whole table (docs/vm.md)
#   make vm-check VM_KERNELS="6.1 host" some rows
#   make vm-check VM_ARGS="--footprint 64M"  checks.sh options
#   make vm-fetch                       download and extract the kernels only
#   make vm-clean                       drop the cache (downloads included)
.PHONY: vm-check vm-fetch vm-clean
VM_KERNELS ?= 5.10 6.1 6.12 host
VM_ARGS ?=

vm-check: all
	bash tests/vm/deps.sh
	bash tests/vm/matrix.sh --kernels "$(VM_KERNELS)" $(if $(VM_ARGS),-- $(VM_ARGS))

vm-fetch:
	bash tests/vm/deps.sh
	for k in $(filter-out host,$(VM_KERNELS)); do bash tests/vm/fetch-kernel.sh $$k || exit 1; done

vm-clean:
	rm -rf tests/vm/cache
