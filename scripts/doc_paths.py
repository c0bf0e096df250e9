#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Paths the documentation names in backticks still exist.

A backticked word is taken for a path of the tree when it has a slash and
its first part is a top-level folder the tree tracks (`daemon/net/udp.c`,
`tests/unit`, `daemon/transport/wire*.c`); a trailing slash names a folder,
`*` and `?` match as in the shell.  Words that start elsewhere
(`/dev/infiniband`, `core/core.h`, `<infiniband/verbs.h>`) are not checked.
README.md's "Layout" block names each top-level folder of the tree once:
every folder it names exists and every tracked folder is named.  Prints
each missing path with the file and line naming it and exits 1 if there
is any; -v lists every path checked.
"""
import fnmatch
import os
import re
import subprocess
import sys

TICKED = re.compile(r'`([^`\s]+)`')
LAYOUT = re.compile(r'^    (\.?[A-Za-z0-9_-]+)/ ')
DOCS = ('README.md', 'CONTRIBUTING.md', 'docs/*.md', '*/README.md',
        '*/*/README.md')


def tracked(root):
    out = subprocess.run(['git', '-C', root, 'ls-files'], check=True,
                         capture_output=True, text=True).stdout
    return [p for p in out.splitlines() if p]


def docs(files):
    return sorted(f for f in files
                  if any(fnmatch.fnmatchcase(f, d) for d in DOCS))


def exists(word, files, folders):
    want = word.rstrip('/')
    if any(c in want for c in '*?['):
        return any(fnmatch.fnmatchcase(f, want) for f in files)
    if word.endswith('/'):
        return want in folders
    return want in folders or want in files


def layout(root, top, verbose):
    """Checks README.md's Layout block against the top-level folders."""
    bad = 0
    named = set()
    inside = False
    with open(os.path.join(root, 'README.md'), encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            if line.startswith('## '):
                inside = line.strip() == '## Layout'
                continue
            m = LAYOUT.match(line) if inside else None
            if not m:
                continue
            name = m.group(1)
            named.add(name)
            ok = name in top
            if verbose or not ok:
                print('README.md:%d: %s/%s' % (n, name,
                                               '' if ok else ': missing'))
            bad += not ok
    for name in sorted(top - named):
        print('README.md: Layout does not name %s/' % name)
        bad += 1
    return bad


def main(argv):
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
    files = tracked(root)
    folders = set()
    for f in files:
        parts = f.split('/')
        for i in range(1, len(parts)):
            folders.add('/'.join(parts[:i]))
    top = {f.split('/')[0] for f in files if '/' in f}
    verbose = '-v' in argv[1:]
    bad = 0
    for doc in docs(files):
        with open(os.path.join(root, doc), encoding='utf-8') as f:
            for n, line in enumerate(f, 1):
                for word in TICKED.findall(line):
                    word = word.rstrip('.,:;)')
                    if '/' not in word or word.split('/')[0] not in top:
                        continue
                    ok = exists(word, files, folders)
                    if verbose or not ok:
                        print('%s:%d: %s%s' % (doc, n, word,
                                               '' if ok else ': missing'))
                    bad += not ok
    bad += layout(root, top, verbose)
    if bad:
        print('doc_paths.py: %d path(s) named in the docs do not exist' % bad)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
