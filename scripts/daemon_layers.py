#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The daemon's folders and which include which's headers.

An edge A -> B: a file in folder A of daemon/ includes a header of folder
B ("daemon(top)" is daemon/ itself).  Exits 1 when the folders include
each other in a cycle, listing its members; -v lists every edge and the
includes behind it.
"""
import collections
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"(daemon/[^"]+)"')


def folder(path):
    parts = path.split('/')
    return '/'.join(parts[:-1]) if len(parts) > 2 else 'daemon(top)'


def edges(root):
    found = collections.defaultdict(set)
    for dirpath, _, names in os.walk(os.path.join(root, 'daemon')):
        for name in sorted(names):
            if not name.endswith(('.c', '.h')):
                continue
            path = os.path.join(dirpath, name)
            src = folder(os.path.relpath(path, root))
            with open(path, encoding='utf-8', errors='replace') as f:
                for line in f:
                    m = INCLUDE.match(line)
                    if m and folder(m.group(1)) != src:
                        found[(src, folder(m.group(1)))].add(
                            '%s -> %s' % (name, m.group(1)))
    return found


def cycles(found):
    """Strongly connected components of more than one folder (Tarjan)."""
    graph = collections.defaultdict(set)
    for a, b in found:
        graph[a].add(b)
    nodes = sorted(set(graph) | {b for bs in graph.values() for b in bs})
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
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
                out.append(sorted(comp))

    for v in nodes:
        if v not in index:
            visit(v)
    return out


def main():
    verbose = '-v' in sys.argv[1:]
    args = [a for a in sys.argv[1:] if a != '-v']
    root = args[0] if args else os.path.join(os.path.dirname(__file__), '..')
    found = edges(root)
    if verbose:
        for (a, b), why in sorted(found.items()):
            print('%-18s -> %-18s %d' % (a, b, len(why)))
            for w in sorted(why):
                print('      ' + w)
    bad = cycles(found)
    for comp in bad:
        print('daemon folders include each other: ' + ', '.join(comp))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
