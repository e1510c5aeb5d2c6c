#!/usr/bin/env python3
"""The walk of one request through mcpkit's source files, from a callgrind profile.

Callgrind records, per caller->callee pair of functions, how often one called the other, and
the file each function is in. This folds that into a graph of mcpkit's own files (those under
crates/*/src): an edge A -> B when code in A called code in B on most requests. A file
"entered twice" for one request is one on a cycle (A calls B, which calls back into A); the
script prints the files the request entered, in the order of the walk (depth first from the
first mcpkit file, callees by cost), and every cycle.

Inlined code counts where it was written (callgrind's fi/fe lines), as in the source.

Usage: bench/file-walk.py CALLGRIND_OUT REQUESTS
       (bench/flamegraph with KEEP=FILE keeps the profile of its measured load)
"""

import collections
import re
import sys


def parse(path):
    files = {}
    fn_file = {}
    edges = collections.Counter()  # (caller file, callee file) -> calls
    cost = collections.Counter()  # file -> own instructions
    cur_fl = cur_fn = cur_fi = None
    cfl = None
    pending = None

    def name_of(tok, table):
        m = re.match(r"\((\d+)\)(?: (.*))?", tok)
        if not m:
            return tok
        if m.group(2):
            table[m.group(1)] = m.group(2)
        return table.get(m.group(1), m.group(1))

    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("fl="):
                cur_fl = name_of(line[3:], files)
                cur_fi = None
            elif line.startswith(("fi=", "fe=")):
                cur_fi = name_of(line[3:], files)
            elif line.startswith("fn="):
                cur_fn = line[3:]
                cur_fi = None
            elif line.startswith(("cfl=", "cfi=")):
                cfl = name_of(line[4:], files)
            elif line.startswith("cfn="):
                pass
            elif line.startswith("calls="):
                pending = int(line[6:].split()[0])
            elif line and (line[0].isdigit() or line[0] in "+-*"):
                here = cur_fi or cur_fl
                if pending is not None:
                    edges[(here, cfl)] += pending
                    pending = None
                else:
                    parts = line.split()
                    if len(parts) > 1:
                        cost[here] += int(parts[1])
    return edges, cost


def ours(path):
    m = re.search(r"crates/([^/]+)/src/(.*\.rs)$", path or "")
    return f"{m.group(1)}/{m.group(2)}" if m else None


def main():
    path, requests = sys.argv[1], int(sys.argv[2])
    edges, cost = parse(path)
    graph = collections.defaultdict(collections.Counter)
    for (a, b), n in edges.items():
        a, b = ours(a), ours(b)
        # Calls made on most requests only: the request's path, not start-up or timers.
        if a and b and a != b and n >= requests // 2:
            graph[a][b] += n
    own = collections.Counter()
    for f, c in cost.items():
        if ours(f):
            own[ours(f)] += c
    nodes = set(graph) | {b for a in graph for b in graph[a]}
    # Cycles: strongly connected components of more than one file (Tarjan).
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            strong(v)
    # The walk: depth first from the files nobody on the path calls, heaviest callee first.
    called = {b for a in graph for b in graph[a]}
    roots = sorted(nodes - called, key=lambda f: -own[f])
    seen, order = set(), []

    def walk(v, depth):
        if v in seen:
            return
        seen.add(v)
        order.append((depth, v))
        for w, _ in graph[v].most_common():
            walk(w, depth + 1)

    for r in roots:
        walk(r, 0)
    print(f"{len(nodes)} mcpkit files on the path of {requests} requests")
    for depth, v in order:
        print(f"{'  ' * depth}{v}  ({own[v] // max(requests, 1)} own instructions per request)")
    if sccs:
        print("files entered twice (cycles):")
        for comp in sccs:
            inner = [f"{a} -> {b}" for a in comp for b in graph[a] if b in comp]
            print("  " + ", ".join(inner))
    else:
        print("no file entered twice (no cycle)")


if __name__ == "__main__":
    main()
