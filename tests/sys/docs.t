#!/usr/bin/env bash
# leap-timeout: 20
# SPDX-License-Identifier: MIT
# The documentation's own links: in README.md and docs/*.md, every relative
# link names a file of the repository, and every #anchor a heading of its
# page (GitHub's rule: the heading's text lower-cased, punctuation dropped,
# spaces made hyphens, a repeat numbered -1, -2, ...).  Links inside code
# blocks and to other sites are not checked.  One test a page.  No root.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
python3 - README.md docs/*.md <<'EOF_PY'
import os
import re
import sys

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def prose_lines(path):
    """The lines of path outside fenced code blocks."""
    inside = False
    for line in open(path, encoding="utf-8"):
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            yield line


def slug(text):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link: its text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    for line in prose_lines(path):
        m = HEADING.match(line)
        if not m:
            continue
        s = slug(m.group(2))
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else "%s-%d" % (s, n))
    return out


pages = sys.argv[1:]
cache = {}
print("1..%d" % len(pages))
for i, page in enumerate(pages, 1):
    bad, count = [], 0
    for line in prose_lines(page):
        line = re.sub(r"`[^`]*`", "", line)  # inline code is not a link
        for m in LINK.finditer(line):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, mailto:, ...
                continue
            count += 1
            file, _, anchor = target.partition("#")
            path = os.path.normpath(os.path.join(os.path.dirname(page), file)) if file else page
            if not os.path.exists(path):
                bad.append("%s (no such file)" % target)
                continue
            if anchor and path.endswith(".md"):
                if path not in cache:
                    cache[path] = anchors(path)
                if anchor not in cache[path]:
                    bad.append("%s (no such heading in %s)" % (target, path))
    if bad:
        print("not ok %d - %s: %d of %d links do not resolve" % (i, page, len(bad), count))
        for b in bad:
            print("#   %s" % b)
    else:
        print("ok %d - %s: all %d links resolve" % (i, page, count))
EOF_PY
