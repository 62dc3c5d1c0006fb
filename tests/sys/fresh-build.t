#!/usr/bin/env bash
# leap-timeout: 40
# SPDX-License-Identifier: MIT
# The first `make` on a fresh machine: a copy of this source tree (tracked
# and new files, nothing built, no .output/config.mk) in a scratch directory,
# built with fake dpkg-query, apt-get and pkg-config in front of PATH that
# play a machine without libfuse3-dev until apt-get "installs" it.  That is
# the case that used to fail (`fatal error: fuse.h`: the Makefile asked
# pkg-config for fuse3's flags while parsing, before the deps step ran).
# Here one `make -j2` must install, then probe, then build everything.
# Then, as an unprivileged user on a machine missing libfuse3-dev, `make`
# must stop before compiling with a message naming the package; a package
# that is "installed" but whose pkg-config file is absent must be named too;
# and `make clean` must not try to install anything.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$repo/tests/lib/fixture.sh"

require_root
command -v git >/dev/null || skip_all "no git (the source list comes from git ls-files)"
git -C "$repo" rev-parse --git-dir >/dev/null 2>&1 || skip_all "not a git checkout"
command -v setpriv >/dev/null || skip_all "no setpriv (util-linux)"
id nobody >/dev/null 2>&1 || skip_all "no user nobody"
fixture_init

scratch=$(mktemp -d /var/tmp/leap-fresh-build.XXXXXX) || bail_out "mktemp"
fixture_register rm -rf "$scratch"
chmod 755 "$scratch"

# copy_tree DIR: the source tree as it would be committed (tracked files and
# new, not ignored ones) into DIR: no bin/, no .output/.
copy_tree()
{
	mkdir -p "$1"
	(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
		tar --null -T - -cf -) | tar -xf - -C "$1"
}

# ---- the fakes -----------------------------------------------------------------
# FAKE_STATE/installed exists once "apt-get install libfuse3-dev" ran.
# FAKE_STATE/pc-broken: pkg-config cannot find fuse3 even then.
fake=$scratch/fakebin
st=$scratch/fakestate
mkdir -p "$fake" "$st"
chmod 777 "$st"
real_dpkg_query=$(command -v dpkg-query)
real_pkg_config=$(command -v pkg-config)
cat >"$fake/dpkg-query" <<EOF
#!/bin/sh
echo "dpkg-query \$*" >>"$st/calls"
for a; do
	if [ "\$a" = libfuse3-dev ] && [ ! -e "$st/installed" ]; then
		echo "dpkg-query: no packages found matching libfuse3-dev" >&2
		exit 1
	fi
done
exec "$real_dpkg_query" "\$@"
EOF
cat >"$fake/apt-get" <<EOF
#!/bin/sh
echo "apt-get \$*" >>"$st/calls"
case " \$* " in
*" install "*" libfuse3-dev "* | *" install "*" libfuse3-dev") touch "$st/installed" ;;
esac
exit 0
EOF
cat >"$fake/pkg-config" <<EOF
#!/bin/sh
echo "pkg-config \$*" >>"$st/calls"
case " \$* " in
*" fuse3 "* | *" fuse3")
	if [ ! -e "$st/installed" ] || [ -e "$st/pc-broken" ]; then
		echo "Package fuse3 was not found in the pkg-config search path." >&2
		exit 1
	fi ;;
esac
exec "$real_pkg_config" "\$@"
EOF
chmod 755 "$fake"/*
FPATH=$fake:$PATH

# ---- 1. root, fresh tree, libfuse3-dev "missing": one make installs and builds --
src=$scratch/src
copy_tree "$src"
[ ! -e "$src/.output" ] && [ ! -e "$src/bin" ]
ok $? "the copy has no build output and no cached pkg-config answers"
PATH=$FPATH run_timeout 540 make -C "$src" -j2 >"$scratch/build.log" 2>&1
rc=$?
is "$rc" 0 "fresh tree: one make -j2 installs the missing package and builds" ||
	diag "$(tail -n 30 "$scratch/build.log")"
grep -q '^apt-get install .*libfuse3-dev' "$st/calls"
ok $? "apt-get was asked for libfuse3-dev" || diag "$(cat "$st/calls")"
inst=$(grep -n 'install-deps: installing' "$scratch/build.log" | head -n 1 | cut -d: -f1)
first_cc=$(grep -nE '^(cc|gcc|clang) ' "$scratch/build.log" | head -n 1 | cut -d: -f1)
cmp_ok "${inst:-999999}" '<' "${first_cc:-0}" \
	"the install (log line ${inst:-none}) comes before the first compile (line ${first_cc:-none})"
like "$(cat "$src/.output/config.mk" 2>/dev/null)" 'CFG_FUSE_CFLAGS := -I[^ ]*fuse3' \
	"config.mk has fuse3's cflags, asked for after the install"
missing=
for b in leap-agent leap-memd leap-swapd leap-memctl leap-observe leap-workload leap-sim; do
	[ -x "$src/bin/$b" ] || missing+=" $b"
done
is "$missing" "" "every program is built (leap-swapd needs fuse.h)"
"$src/bin/leap-swapd" --help >/dev/null 2>&1
ok $? "the fresh leap-swapd runs"

# ---- 2. a second make does nothing: the probes are not rerun needlessly --------
: >"$st/calls"
PATH=$FPATH run_timeout 120 make -C "$src" -j2 >"$scratch/build2.log" 2>&1
is "$?" 0 "second make succeeds"
is "$(grep -c '^pkg-config' "$st/calls")" 0 "second make probes nothing (config.mk up to date)"

# ---- 3. non-root, libfuse3-dev missing: a clear message naming it -------------
rm -f "$st/installed"
src2=$scratch/user
copy_tree "$src2"
chown -R nobody "$src2"
: >"$st/calls"
run_timeout 120 setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
	env PATH="$FPATH" HOME="$src2" make -C "$src2" -j2 >"$scratch/user.log" 2>&1
rc=$?
isnt "$rc" 0 "non-root make on a machine missing libfuse3-dev fails"
like "$(cat "$scratch/user.log")" 'missing packages: libfuse3-dev' \
	"... with a message naming the package" || diag "$(cat "$scratch/user.log")"
like "$(cat "$scratch/user.log")" 'sudo make deps' "... and saying how to install it"
is "$(find "$src2" -name '*.o' | wc -l)" 0 "... before compiling anything"
is "$(grep -c '^apt-get' "$st/calls")" 0 "... without running apt-get"

# ---- 4. installed, but its pkg-config file is not found -------------------------
touch "$st/installed" "$st/pc-broken"
run_timeout 120 setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
	env PATH="$FPATH" HOME="$src2" make -C "$src2" -j2 >"$scratch/pc.log" 2>&1
rc=$?
isnt "$rc" 0 "make stops when pkg-config cannot find fuse3"
like "$(cat "$scratch/pc.log")" 'pkg-config --cflags fuse3 failed \(Debian package libfuse3-dev' \
	"... naming the Debian package" || diag "$(cat "$scratch/pc.log")"
is "$(find "$src2" -name '*.o' | wc -l)" 0 "... before compiling anything"
rm -f "$st/pc-broken"

# ---- 5. make clean needs no dependencies -------------------------------------------
rm -f "$st/installed"
: >"$st/calls"
run_timeout 60 setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
	env PATH="$FPATH" HOME="$src2" make -C "$src2" clean >"$scratch/clean.log" 2>&1
is "$?" 0 "make clean on a machine missing packages succeeds"
is "$(grep -c . "$st/calls")" 0 "... and asks neither dpkg nor pkg-config"

done_testing
