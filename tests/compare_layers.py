#!/usr/bin/env python3
"""The parts of qmetric-compare (tools/compare/*.c) call each other in
layers: no part calls main.c, and no set of parts calls around in a circle
(docs/development.md, "qmetric-compare's parts").

A call from file A to file B is a call in A of a qmc_* function that B
defines (not static).  Prints the circles and the callers of main.c, and
fails when there is one that is not allowed below.

usage: compare_layers.py TOOLS_COMPARE_DIR
"""
import os
import re
import sys

# chunk.c and chunkpart.c (a chunk of a title and its --partial file) call
# each other: chunkpart.c asks chunk.c for the skip a chunk took over
# (qmc_chunk_skip).  The only circle allowed.
ALLOWED = [{"chunk.c", "chunkpart.c"}]
# builds with libswscale compile swscale_av.c, the others swscale_none.c:
# the same functions, never both
SKIP = {"swscale_none.c"}


def strip(text):
    """C source without its comments and string literals."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(\\.|[^"\\])*"', '""', text)


def calls_between(directory):
    sources = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith(".c") and name not in SKIP:
            with open(os.path.join(directory, name), encoding="utf-8") as f:
                sources[name] = strip(f.read())
    defined = {}
    definition = re.compile(r"^(?!static\b)[A-Za-z_][^;{}()]*?\b(qmc_\w+)\s*\([^;{}]*\)\s*\{",
                            re.M)
    for name, text in sources.items():
        for m in definition.finditer(text):
            defined.setdefault(m.group(1), name)
    edges = {}
    for name, text in sources.items():
        for fn in set(re.findall(r"\b(qmc_\w+)\s*\(", text)):
            callee = defined.get(fn)
            if callee and callee != name:
                edges.setdefault(name, set()).add(callee)
    return sorted(sources), edges, defined


def circles(nodes, edges):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in nodes:
        if v not in index:
            visit(v)
    return out


def main():
    directory = sys.argv[1]
    nodes, edges, defined = calls_between(directory)
    bad = []
    # the check must see the code it checks: every part defines functions
    # the others call, and the entry calls the two runs
    if len(defined) < 50 or "main.c" not in edges:
        bad.append("found %d functions in %s: not qmetric-compare's parts?" %
                   (len(defined), directory))
    for name in nodes:
        if "main.c" in edges.get(name, ()):
            bad.append("%s calls into main.c" % name)
    for comp in circles(nodes, edges):
        if comp not in ALLOWED:
            bad.append("a circle of calls: %s" % ", ".join(sorted(comp)))
    for line in bad:
        print("FAIL: " + line)
    if not bad:
        print("compare-layers: %d parts, %d arrows (file calls file), no circle but %s" %
              (len(nodes), sum(len(v) for v in edges.values()),
               "; ".join(" <-> ".join(sorted(c)) for c in ALLOWED)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
