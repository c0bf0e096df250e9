# SPDX-License-Identifier: MIT
"""The dynamic symbols a shared library defines, read with readelf, for the
export checks of tests/compat/shims and tests/compat/symbols."""

import re
import subprocess

# readelf --dyn-syms -W:
# "  12: 00000000000011c3  37 FUNC GLOBAL DEFAULT  13 ibv_open_device@@IBVERBS_1.1"
SYM_RE = re.compile(r"^\s*\d+:\s+[0-9a-f]+\s+\d+\s+(\w+)\s+(\w+)\s+\w+\s+"
                    r"(\S+)\s+(\S+?)(@@?)(\S+?)(?:\s+\(\d+\))?$")


def exports(lib):
    """{(name, version): '@@' or '@'} of the defined functions/objects."""
    out = subprocess.run(["readelf", "--dyn-syms", "-W", lib], check=True,
                         stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    found = {}
    for line in out.splitlines():
        m = SYM_RE.match(line)
        if not m:
            continue
        typ, bind, ndx, name, at, ver = m.groups()
        if ndx in ("UND", "ABS") or typ not in ("FUNC", "OBJECT", "IFUNC"):
            continue
        if bind not in ("GLOBAL", "WEAK"):
            continue
        found[(name, ver)] = at
    return found
