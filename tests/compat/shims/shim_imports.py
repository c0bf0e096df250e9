#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every import of libmlx5/libefa by the programs we serve is satisfied.

  shim_imports.py --imports tests/compat/shims/shim-imports.txt \\
      --lib MLX5_=build/lib/libmlx5.so.1 --lib EFA_=build/lib/libefa.so.1 \\
      [--elf /usr/bin/ib_write_bw ...]

--imports lists 'binary (VERSION) symbol' lines (perftest, UCX, libfabric
of Debian 12).  --lib PREFIX=PATH says which shim serves the versions
starting with PREFIX.  Each --elf file that exists is read with objdump -T
and its imports of those versions are checked as well, so the binaries
installed on this machine are covered too.  A versioned reference binds
to the definition of exactly that version, default or not, so that is
what is checked.  Exit 0 pass, 1 fail, 77 when readelf is missing.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

DEF_RE = re.compile(r"^\s*\d+:\s+[0-9a-f]+\s+\d+\s+\w+\s+\w+\s+\w+\s+"
                    r"(\S+)\s+(\S+?)@@?(\S+?)(?:\s+\(\d+\))?$")
# objdump -T: "0000000000000000      DF *UND*  0000000000000000 (MLX5_1.3)
# mlx5dv_create_qp"
UND_RE = re.compile(r"\*UND\*\s+[0-9a-f]+\s+\(?([A-Za-z0-9_.]+)\)?\s+(\S+)$")


def defined(lib):
    out = subprocess.run(["readelf", "--dyn-syms", "-W", lib], check=True,
                         stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    have = set()
    for line in out.splitlines():
        m = DEF_RE.match(line)
        if m and m.group(1) not in ("UND", "ABS"):
            have.add((m.group(2), m.group(3)))
    return have


def listed_imports(path):
    out = []
    with open(path) as fp:
        for line in fp:
            if line.startswith("#") or not line.strip():
                continue
            binary, ver, sym = line.split()
            out.append((binary, ver.strip("()"), sym))
    return out


def elf_imports(path):
    res = subprocess.run(["objdump", "-T", path], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, universal_newlines=True)
    out = []
    for line in res.stdout.splitlines():
        m = UND_RE.search(line)
        if m:
            out.append((os.path.basename(path), m.group(1), m.group(2)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--imports", required=True)
    ap.add_argument("--lib", action="append", required=True,
                    help="PREFIX=PATH")
    ap.add_argument("--elf", action="append", default=[])
    args = ap.parse_args()
    if not shutil.which("readelf"):
        print("shim_imports: readelf not found, skipping")
        return 77

    libs = {}
    for spec in args.lib:
        prefix, path = spec.split("=", 1)
        libs[prefix] = (path, defined(path))

    needs = listed_imports(args.imports)
    scanned = []
    if shutil.which("objdump"):
        for elf in args.elf:
            if os.path.exists(elf):
                scanned.append(elf)
                needs += elf_imports(elf)

    fails = checked = 0
    seen = set()
    for binary, ver, sym in needs:
        prefix = next((p for p in libs if ver.startswith(p)), None)
        if prefix is None or (binary, ver, sym) in seen:
            continue
        seen.add((binary, ver, sym))
        checked += 1
        path, have = libs[prefix]
        if (sym, ver) not in have:
            fails += 1
            print("FAIL %s needs %s@%s, not in %s" % (binary, sym, ver,
                                                      path))
    if checked == 0:
        print("FAIL no imports of %s found" % ", ".join(libs))
        fails += 1
    print("shim_imports: %d imports checked (%d installed binaries read), "
          "%d failures" % (checked, len(scanned), fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
