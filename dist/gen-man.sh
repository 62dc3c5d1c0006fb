#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dist/gen-man.sh PROGRAM INCLUDE OUT: the man page (section 8) of a leap
# program from its own --help and --version output (help2man), plus the
# hand-written sections of INCLUDE (dist/man/NAME.h2m: name, description,
# files, examples, see also).  For leap-agent, whose --help lists commands, each
# command's --help becomes a subsection of COMMANDS, so the page never
# disagrees with the program.
set -euo pipefail
prog=${1:?usage: gen-man.sh PROGRAM INCLUDE OUT}
inc=${2:?usage: gen-man.sh PROGRAM INCLUDE OUT}
out=${3:?usage: gen-man.sh PROGRAM INCLUDE OUT}
name=$(basename "$prog")
command -v help2man >/dev/null || {
	echo "gen-man: help2man missing (Debian package help2man; run 'sudo make deps')" >&2
	exit 1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$inc" "$tmp/include"
if [ "$name" = leap-agent ]; then
	{
		echo "[COMMANDS]"
		for cmd in attach run replay stats status; do
			echo ".SS \"leap-agent $cmd\""
			echo ".nf"
			# Preformatted; \& keeps a leading . or ' from being a request.
			"$prog" "$cmd" --help | sed -e 's/\\/\\e/g' -e 's/^/\\\&/'
			echo ".fi"
		done
	} >>"$tmp/include"
fi
help2man --no-info --section=8 --source=leap --manual="leap manual" \
	--include="$tmp/include" --output="$tmp/page" "$prog"
mv "$tmp/page" "$out"
