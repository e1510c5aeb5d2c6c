#!/usr/bin/env python3
"""Fold a callgrind profile into the stack format of flamegraph tools (`inferno-flamegraph`).

Callgrind records each function's own instructions and, per caller→callee pair, the callee's
inclusive cost, not whole stacks. The stacks are rebuilt from the roots down: a callee's share
under a caller is that pair's recorded cost, split further down in proportion to the callee's
own callees (so the first level below each caller is exact and deeper context is approximated).
Recursion is cut where a function would appear twice on one stack; branches under MIN_SHARE of
the total are dropped.

Usage: bench/callgrind-folded.py CALLGRIND_OUT [PER_CALL_DIVISOR] > stacks.folded
       (bench/flamegraph --callgrind … uses it; divide by the number of requests to get
       instructions per request in the flamegraph's counts)
"""

import collections
import re
import sys

MIN_SHARE = 0.0002


def parse(path):
    names, self_cost = {}, collections.Counter()
    calls = collections.defaultdict(collections.Counter)  # caller -> callee -> inclusive cost
    called = set()
    cur = cfn = None
    pending = False

    def name_of(tok):
        m = re.match(r"\((\d+)\)(?: (.*))?", tok)
        if not m:
            return tok
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return m.group(1)

    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("fn="):
                cur = name_of(line[3:])
            elif line.startswith("cfn="):
                cfn = name_of(line[4:])
            elif line.startswith("calls="):
                pending = True
            elif line and (line[0].isdigit() or line[0] in "+-*"):
                parts = line.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                if pending:
                    calls[cur][cfn] += cost
                    called.add(cfn)
                    pending = False
                else:
                    self_cost[cur] += cost
    return names, self_cost, calls, called


def main():
    path = sys.argv[1]
    divisor = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    names, self_cost, calls, called = parse(path)
    inclusive = {f: self_cost[f] + sum(calls[f].values()) for f in set(self_cost) | set(calls)}
    total = sum(self_cost.values())
    out = collections.Counter()

    def label(f):
        return names.get(f, f).replace(";", ":")

    def walk(f, weight, stack, on_stack):
        # weight: the instructions attributed to this node along this stack.
        inc = inclusive.get(f, 0)
        if inc <= 0 or weight < total * MIN_SHARE:
            return
        scale = weight / inc
        frames = stack + [label(f)]
        out[";".join(frames)] += self_cost[f] * scale
        for g, c in calls[f].items():
            if g in on_stack:
                out[";".join(frames)] += c * scale  # recursion: kept at this level
                continue
            walk(g, c * scale, frames, on_stack | {g})

    for root in [f for f in inclusive if f not in called]:
        walk(root, inclusive[root], [], {root})
    for stack, cost in out.items():
        n = round(cost / divisor)
        if n > 0:
            print(f"{stack} {n}")


if __name__ == "__main__":
    main()
