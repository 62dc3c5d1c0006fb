#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""prom-parse.py < TEXT: parses Prometheus text exposition format with the
reference parser (Debian's python3-prometheus-client, hence /usr/bin/python3
rather than whatever python3 is first in PATH) and prints the result as
JSON: {family: {"type": T, "samples": [{"name", "labels", "value"}]}}.
Also checks what the parser lets through: a HELP and a TYPE line for every
family, and counter families named *_total.  Exits 1 with a message on the
first problem."""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families


def main():
    text = sys.stdin.read()
    out = {}
    try:
        for fam in text_string_to_metric_families(text):
            out[fam.name] = {
                "type": fam.type,
                "help": fam.documentation,
                "samples": [
                    {"name": s.name, "labels": s.labels, "value": s.value}
                    for s in fam.samples
                ],
            }
    except ValueError as e:
        print("prom-parse: parse error: %s" % e, file=sys.stderr)
        return 1
    for name, fam in out.items():
        if not fam["help"]:
            print("prom-parse: %s has no HELP" % name, file=sys.stderr)
            return 1
        if fam["type"] == "unknown":
            print("prom-parse: %s has no TYPE" % name, file=sys.stderr)
            return 1
        # The parser strips _total from a counter family's name; its
        # samples keep it.
        if fam["type"] == "counter" and not all(
                s["name"].endswith("_total") for s in fam["samples"]):
            print("prom-parse: counter %s not named *_total" % name,
                  file=sys.stderr)
            return 1
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
