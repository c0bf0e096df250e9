#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""libibverbs.so.1 and librdmacm.so.1 export what clients bind to.

  symbols_exports.py --lib IBVERBS_=build/lib/libibverbs.so.1 \
                     --lib RDMACM_=build/lib/librdmacm.so.1 \
                     --needed needed.txt \
                     --syms libibverbs.expected --syms librdmacm.expected \
                     --allow missing-allowed.txt

Checks, with readelf --dyn-syms -W:
  - every 'VERSION symbol' line of --needed (what installed clients and
    middleware import) is exported at exactly that version, as a default
    (@@) or compat (@) version, since either satisfies a versioned import;
  - every line of the rdma-core 44 lists (--syms) is exported with the same
    binding ('VERSION' default, '(VERSION)' compat), unless the line is on
    the --allow list; an --allow line that is in fact exported fails too, so
    the list stays true; it may only hold compat versions and
    IBVERBS_PRIVATE_34 lines.
The lines of --syms we lack are printed either way.
Exit 0 pass, 1 fail, 77 when readelf or a library is missing.
"""

import argparse
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
from elfsyms import exports  # noqa: E402


def lines(path):
    """The non-comment lines of a list file, as (field1, field2) pairs."""
    out = []
    with open(path) as fp:
        for line in fp:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            ver, name = line.split()
            out.append((ver, name))
    return out


def text(name, ver, at):
    return "%s%s%s" % (name, at, ver)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", action="append", required=True,
                    help="VERSIONPREFIX=path")
    ap.add_argument("--needed", required=True)
    ap.add_argument("--syms", action="append", required=True)
    ap.add_argument("--allow", required=True)
    args = ap.parse_args()
    if not shutil.which("readelf"):
        print("symbols_exports: readelf not found, skipping")
        return 77

    libs = []
    for spec in args.lib:
        prefix, path = spec.split("=", 1)
        if not os.path.exists(path):
            print("symbols_exports: %s not built, skipping" % path)
            return 77
        libs.append((prefix, path, exports(path)))

    def lib_for(ver):
        for prefix, path, have in libs:
            if ver.startswith(prefix):
                return path, have
        return None, None

    fails = 0

    # What the clients import.
    needed = lines(args.needed)
    for ver, name in needed:
        path, have = lib_for(ver)
        if path is None:
            fails += 1
            print("FAIL needed %s@%s: no library given for that version"
                  % (name, ver))
            continue
        if (name, ver) not in have:
            fails += 1
            other = sorted(v for (n, v) in have if n == name)
            print("FAIL needed %s@%s: not exported by %s%s"
                  % (name, ver, os.path.basename(path),
                     " (only at %s)" % ",".join(other) if other else ""))

    # The full rdma-core lists.
    allow = set(lines(args.allow))
    # Only compat versions and the providers' private interface may be
    # knowingly lacked; anything else is a real gap.
    for ver, name in sorted(allow):
        if not ver.startswith("(") and ver != "IBVERBS_PRIVATE_34":
            fails += 1
            print("FAIL allow-list line '%s %s' is neither a compat version "
                  "nor IBVERBS_PRIVATE_34" % (ver, name))
    seen = set()
    lacking = []
    for syms in args.syms:
        for ver, name in lines(syms):
            seen.add((ver, name))
            real = ver.strip("()")
            at = "@" if ver.startswith("(") else "@@"
            path, have = lib_for(real)
            if path is None:
                fails += 1
                print("FAIL %s: no library given for %s" % (syms, real))
                continue
            got = have.get((name, real))
            if got == at:
                if (ver, name) in allow:
                    fails += 1
                    print("FAIL allow-listed %s is exported: remove it from "
                          "%s" % (text(name, real, at),
                                  os.path.basename(args.allow)))
                continue
            lacking.append((ver, name))
            how = ("missing" if got is None else
                   "exported as %s" % text(name, real, got))
            if (ver, name) in allow:
                print("lacking (allowed) %s: %s" % (text(name, real, at), how))
            else:
                fails += 1
                print("FAIL lacking %s: %s" % (text(name, real, at), how))
    for ver, name in sorted(allow - seen):
        fails += 1
        print("FAIL allow-list line '%s %s' is not in any rdma-core list"
              % (ver, name))

    print("symbols_exports: %d needed imports, %d rdma-core exports, "
          "%d lacking (%d allow-listed), %d failures"
          % (len(needed), len(seen), len(lacking), len(allow), fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
