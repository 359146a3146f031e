#!/usr/bin/env python3
"""layering.py - no circle between the files of bot/, and no call up a floor.

tests/layering.sh checks the includes between the stages (folders) of
bot/.  An include says little inside a folder, where every file may
include every header: what ties two files is a call.  So this reads the
objects the build made (nm, from binutils: defined and undefined
symbols), draws an arrow from a file to each file that defines a
function or variable it uses, and fails on
  - a circle: files that reach each other through such arrows (two that
    call each other, or a longer ring), named with the symbols that tie
    them, since a circle is two files that can only be read together;
  - an arrow from a lower stage to a higher one (a call that
    layering.sh's includes would not show: a function declared in a
    header of the lower stage's but defined above).

Run after `make all` (the objects must be there); make unit runs it.
"""
import collections
import os
import subprocess
import sys

FLOORS = ["base", "analysis", "lab", "store", "intake pipeline", "report", "config", "daemon", "cmd"]


def floor_of(path):
    folder = path.split("/")[1]
    for i, names in enumerate(FLOORS):
        if folder in names.split():
            return i
    return None


def symbols(obj):
    """(defined, undefined) global symbols of an object file."""
    out = subprocess.run(["nm", "-g", "--defined-only", obj], capture_output=True, text=True, check=True).stdout
    defined = {l.split()[-1] for l in out.splitlines() if len(l.split()) == 3}
    out = subprocess.run(["nm", "-g", "--undefined-only", obj], capture_output=True, text=True, check=True).stdout
    undefined = {l.split()[-1] for l in out.splitlines() if l.split()}
    return defined, undefined


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    objs = sorted("bot/%s/%s" % (d, f) for d in os.listdir("bot") if os.path.isdir("bot/" + d)
                  for f in os.listdir("bot/" + d) if f.endswith(".o"))
    if not objs:
        print("layering.py: no objects under bot/: run make all first")
        return 1
    where, uses = {}, {}
    for o in objs:
        src = o[:-2] + ".c"
        if not os.path.exists(src):
            continue    # an object whose source is gone: make rebuilds the archive without it
        defined, undefined = symbols(o)
        for s in defined:
            where[s] = src
        uses[src] = undefined
    arrows = collections.defaultdict(lambda: collections.defaultdict(set))
    for src, undefined in uses.items():
        for s in undefined:
            to = where.get(s)
            if to and to != src:
                arrows[src][to].add(s)
    bad = 0
    for a in sorted(arrows):
        for b in sorted(arrows[a]):
            fa, fb = floor_of(a), floor_of(b)
            if fa is not None and fb is not None and fb > fa:
                print("%s calls up a floor, into %s: %s" % (a, b, ", ".join(sorted(arrows[a][b]))))
                bad += 1
    # Tarjan's strongly connected components: each of more than one file is a circle
    index, low, stack, on, circles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in arrows.get(v, {}):
            if w not in index:
                visit(w)
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
                circles.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(uses):
        if v not in index:
            visit(v)
    for comp in circles:
        print("a circle of %d files: %s" % (len(comp), ", ".join(comp)))
        for a in comp:
            for b in comp:
                if b in arrows.get(a, {}):
                    print("  %s -> %s: %s" % (a, b, ", ".join(sorted(arrows[a][b]))))
        bad += 1
    if bad:
        return 1
    print("layering.py: %d files of bot/, no circle between them, no call up a floor" % len(uses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
