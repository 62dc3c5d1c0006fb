#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/regsim-tables.sh [BIN_DIR]: the registration-cache tables of
# docs/registration.md, made by leap-regsim: every synthetic trace kind
# (leap-regsim gen, fixed seeds) and the traces recorded from our RDMA path
# (tests/data/regtrace/*.tr.gz, leap-swapd --reg-trace), each through no
# cache, the LRU pin-down cache, MRRC (MRE as the slides define it) and
# mrrc-rank, under the slides' cost model; then MRE's modelled time under
# each alternative to the choices docs/registration.md makes.  Prints
# Markdown; a few seconds.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/bin}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# table TITLE ARGS... : one block of rows per "name=FILE" argument after --
table() {
	local title=$1
	shift
	local args=()
	while [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	echo
	echo "$title (\`leap-regsim cache ${args[*]} TRACE\`):"
	echo
	echo "| trace | policy | hit ratio | pages from cache | registrations | modelled ms |"
	echo "| --- | --- | --- | --- | --- | --- |"
	for nf in "$@"; do
		"$bin/leap-regsim" cache --json "${args[@]}" "${nf#*=}" |
			python3 -c '
import json, sys
name = sys.argv[1]
label = {"nocache": "no cache", "lru": "LRU", "mrrc": "MRRC (MRE)",
         "mrrc-rank": "mrrc-rank"}
rows = [json.loads(l) for l in sys.stdin]
best = min(r["modelled_us"] for r in rows if r["policy"] != "nocache")
for i, r in enumerate(rows):
    ms = "%.1f" % (r["modelled_us"] / 1000)
    if r["modelled_us"] == best:
        ms = "**" + ms + "**"
    print("| %s | %s | %.3f | %.3f | %d | %s |" % (name if i == 0 else "",
          label.get(r["policy"], r["policy"]), r["hit_ratio"],
          r["page_hit_ratio"], r["registrations"], ms))' "${nf%%=*}"
	done
}

syn=()
for k in repeat sliding overlap random unmap clients; do
	"$bin/leap-regsim" gen --kind "$k" --ops 40000 --space 256M --max-len 256K \
		--buffers 256 --seed 7 -o "$tmp/$k.tr"
	syn+=("$k=$tmp/$k.tr")
done
rec=()
for f in "$root"/tests/data/regtrace/*.tr.gz; do
	n=$(basename "$f" .tr.gz)
	gzip -dc "$f" >"$tmp/$n.tr"
	rec+=("$n=$tmp/$n.tr")
done
echo "Synthetic: \`leap-regsim gen --kind K --ops 40000 --space 256M --max-len 256K --buffers 256 --seed 7\`"
table "16 MiB cache" --capacity 16M -- "${syn[@]}"
table "64-entry cache" --entries 64 -- "$(printf '%s\n' "${syn[@]}" | grep ^overlap=)"
echo
echo "Recorded: tests/data/regtrace/ (leap-swapd --reg-trace over soft-RoCE, tests/sys/rdma-fh.t)"
for cap in 1M 4M; do
	table "$cap cache" --capacity "$cap" -- "${rec[@]}"
done

# MRE's open choices: modelled ms of the mrrc row per option set.
sweep_cols=(repeat:16M sliding:16M overlap:16M random:16M unmap:16M clients:16M
	overlap:E64 swapd-seq.1:1M swapd-seq.1:4M swapd-seq.2:4M swapdz-seq-phase.1:1M
	swapdz-seq-phase.1:4M swapdz-seq-phase.2:4M)
echo
echo "MRE's choices, modelled ms of MRRC (\`leap-regsim cache --capacity C|--entries 64 OPTIONS TRACE\`):"
echo
printf '| options |'
for col in "${sweep_cols[@]}"; do printf ' %s |' "${col/:E64/ @64 entries}"; done
echo
printf '| --- |'
for col in "${sweep_cols[@]}"; do printf ' --- |'; done
echo
for opts in "" "--resort 25" "--resort 100" "--batch 4" "--mre-revalue" \
	"--mre-revalue --resort 100"; do
	printf '| %s |' "${opts:-(defaults: --resort 50 --batch 1)}"
	for col in "${sweep_cols[@]}"; do
		t=${col%%:*} c=${col#*:}
		if [ "$c" = E64 ]; then bound=(--entries 64); else bound=(--capacity "$c"); fi
		# shellcheck disable=SC2086 # opts is a list of options
		"$bin/leap-regsim" cache --json "${bound[@]}" $opts "$tmp/$t.tr" |
			python3 -c '
import json, sys
for l in sys.stdin:
    o = json.loads(l)
    if o["policy"] in ("mrrc", "mrrc-revalue"):
        us = o["modelled_us"]
        print(" %s |" % ("%.0f" % (us / 1000) if us >= 100000 else "%.2f" % (us / 1000)), end="")'
	done
	echo
done
