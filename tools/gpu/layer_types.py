#!/usr/bin/env python3
"""Sums a `gocaffe time` log's per-layer times by layer type.

usage: layer_types.py NET_PROTOTXT TIME_LOG

Prints, per type, the number of layers and their forward, backward and
total milliseconds, largest first, then the total. Layer types come from the
prototxt; layers the net inserted (Splits) show as "?".
"""
import collections
import re
import sys


def main():
    proto, log = open(sys.argv[1]).read(), open(sys.argv[2]).read()
    types = {}
    for m in re.finditer(r'layer\s*\{(.*?)\n\}', proto, re.S):
        name, kind = re.search(r'name:\s*"([^"]+)"', m.group(1)), re.search(r'type:\s*"([^"]+)"', m.group(1))
        if name and kind:
            types[name.group(1)] = kind.group(1)
    fwd, bwd, count = collections.defaultdict(float), collections.defaultdict(float), collections.Counter()
    for m in re.finditer(r'\]\s+(\S+)\s+(forward|backward): ([0-9.]+) ms', log):
        kind = types.get(m.group(1), "?")
        (fwd if m.group(2) == "forward" else bwd)[kind] += float(m.group(3))
        if m.group(2) == "forward":
            count[kind] += 1
    for kind in sorted(fwd, key=lambda k: -(fwd[k] + bwd[k])):
        print(f"{kind:20s} n={count[kind]:3d} fwd {fwd[kind]:7.2f} bwd {bwd[kind]:7.2f} sum {fwd[kind] + bwd[kind]:7.2f}")
    print("total", round(sum(fwd.values()) + sum(bwd.values()), 2))


if __name__ == "__main__":
    main()
