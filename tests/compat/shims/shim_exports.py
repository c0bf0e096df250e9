#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A built shim exports exactly its rdma-core 44 symbol list.

  shim_exports.py --lib build/lib/libmlx5.so.1 --soname libmlx5.so.1 \
                  --syms shims/libmlx5.so.1.syms

Checks, with readelf --dyn-syms -W and readelf -d:
  - every 'VERSION symbol' line is exported as symbol@@VERSION, every
    '(VERSION) symbol' line as symbol@VERSION (a compat version);
  - no other function or object is exported;
  - the SONAME is the one given, and libc.so.6 is the only NEEDED entry.
Exit 0 pass, 1 fail, 77 when readelf is missing.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
from elfsyms import exports  # noqa: E402


def expected(path):
    want = {}
    with open(path) as fp:
        for line in fp:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            ver, name = line.split()
            compat = ver.startswith("(")
            want[(name, ver.strip("()"))] = "@" if compat else "@@"
    return want


def dynamic(lib):
    out = subprocess.run(["readelf", "-d", "-W", lib], check=True,
                         stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    needed = re.findall(r"\(NEEDED\).*\[(.*)\]", out)
    soname = re.findall(r"\(SONAME\).*\[(.*)\]", out)
    return needed, soname


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--soname", required=True)
    ap.add_argument("--syms", required=True)
    args = ap.parse_args()
    if not shutil.which("readelf"):
        print("shim_exports: readelf not found, skipping")
        return 77

    have = exports(args.lib)
    want = expected(args.syms)
    fails = 0
    for key, at in sorted(want.items()):
        got = have.get(key)
        if got != at:
            fails += 1
            print("FAIL %s%s%s: %s" % (key[0], at, key[1],
                                        "missing" if got is None else
                                        "exported as %s%s%s" %
                                        (key[0], got, key[1])))
    for key in sorted(set(have) - set(want)):
        fails += 1
        print("FAIL unexpected export %s%s%s" % (key[0], have[key], key[1]))

    needed, soname = dynamic(args.lib)
    base = os.path.basename(args.lib)
    if soname != [args.soname]:
        fails += 1
        print("FAIL SONAME %s, expected %s" % (soname, args.soname))
    if needed != ["libc.so.6"]:
        fails += 1
        print("FAIL NEEDED %s, expected libc.so.6 only" % needed)

    print("shim_exports: %s: %d symbol versions expected, %d exported, "
          "SONAME %s, NEEDED %s, %d failures"
          % (base, len(want), len(have), ",".join(soname),
             ",".join(needed), fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
