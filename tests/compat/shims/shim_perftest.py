#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""perftest's ib_write_bw loads with our libmlx5.so.1 and libefa.so.1.

  shim_perftest.py --libdir build/lib [--binary /usr/bin/ib_write_bw]

1. With LD_LIBRARY_PATH=<libdir>, ldd resolves libmlx5.so.1 and
   libefa.so.1 to the files in <libdir>.
2. With only the two shims on LD_LIBRARY_PATH (the rest from the system),
   LD_BIND_NOW=1 <binary> --help binds every symbol at start-up: no
   "symbol lookup error", no missing version, the usage text is printed,
   and LD_DEBUG=bindings shows each mlx5dv_/efadv_ import bound to our
   shim at the version the binary asks for.
3. When <libdir> also holds libibverbs.so.1 (softrdma's), the same run with
   all of <libdir>: a lookup failure naming the shims or their symbols
   fails the test; one elsewhere (a library still being completed) is
   reported as a note.
Exit 0 pass, 1 fail, 77 when the binary or ldd is missing.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

SHIMS = ("libmlx5.so.1", "libefa.so.1")
LOAD_ERRORS = re.compile(r"symbol lookup error|version `[^']*' not found|"
                         r"error while loading shared libraries|"
                         r"undefined symbol")
SHIM_WORDS = re.compile(r"libmlx5|libefa|mlx5dv_|efadv_|MLX5_|EFA_")
# binding file /usr/bin/ib_write_bw [0] to /x/libmlx5.so.1 [0]: normal
# symbol `mlx5dv_create_qp' [MLX5_1.3]
BIND_RE = re.compile(r"binding file (\S+) \[\d+\] to (\S+) \[\d+\]: "
                     r"\w+ symbol `([^']+)'(?: \[([^\]]+)\])?")
UND_RE = re.compile(r"\*UND\*\s+[0-9a-f]+\s+\(?([A-Za-z0-9_.]+)\)?\s+(\S+)$")


def run(cmd, env_extra):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.update(env_extra)
    res = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True,
                         timeout=60)
    return res.returncode, res.stdout, res.stderr


def shim_imports(binary):
    """{(symbol, version)} the binary imports from the two shims."""
    if not shutil.which("objdump"):
        return set()
    out = subprocess.run(["objdump", "-T", binary], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    want = set()
    for line in out.splitlines():
        m = UND_RE.search(line)
        if m and m.group(1).startswith(("MLX5_", "EFA_")):
            want.add((m.group(2), m.group(1)))
    return want


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--libdir", required=True)
    ap.add_argument("--binary", default="/usr/bin/ib_write_bw")
    args = ap.parse_args()
    libdir = os.path.realpath(args.libdir)
    if not os.access(args.binary, os.X_OK):
        print("shim_perftest: %s not installed, skipping" % args.binary)
        return 77
    if not shutil.which("ldd"):
        print("shim_perftest: ldd not found, skipping")
        return 77
    fails = 0

    # 1. ldd picks our files
    rc, out, err = run(["ldd", args.binary], {"LD_LIBRARY_PATH": libdir})
    for lib in SHIMS:
        m = re.search(r"^\s*%s => (\S+)" % re.escape(lib), out, re.M)
        where = os.path.realpath(m.group(1)) if m else None
        mine = os.path.realpath(os.path.join(libdir, lib))
        if where != mine:
            fails += 1
            print("FAIL ldd: %s => %s, expected %s" % (lib, where, mine))
        else:
            print("ok   ldd: %s => %s" % (lib, where))

    # 2. the shims alone, everything else from the system
    tmp = tempfile.mkdtemp(prefix="shim_perftest.")
    try:
        for lib in SHIMS:
            os.symlink(os.path.join(libdir, lib), os.path.join(tmp, lib))
        rc, out, err = run([args.binary, "--help"],
                           {"LD_LIBRARY_PATH": tmp, "LD_BIND_NOW": "1",
                            "LD_DEBUG": "bindings",
                            "LD_DEBUG_OUTPUT": os.path.join(tmp, "dbg")})
        text = out + err
        bad = LOAD_ERRORS.search(text)
        if bad or rc == 127 or "Usage" not in text:
            fails += 1
            print("FAIL %s --help with the shims: exit %d\n%s"
                  % (args.binary, rc, (err or out)[-1500:]))
        else:
            print("ok   LD_BIND_NOW=1 %s --help with the shims (exit %d)"
                  % (os.path.basename(args.binary), rc))
        bound = {}
        for name in os.listdir(tmp):
            if not name.startswith("dbg"):
                continue
            with open(os.path.join(tmp, name)) as fp:
                for line in fp:
                    m = BIND_RE.search(line)
                    if m and os.path.realpath(m.group(1)) == \
                            os.path.realpath(args.binary):
                        bound[(m.group(3), m.group(4))] = m.group(2)
        want = shim_imports(args.binary)
        wrong = 0
        for sym, ver in sorted(want):
            to = bound.get((sym, ver))
            if to is None or os.path.dirname(to) != tmp:
                wrong += 1
                print("FAIL %s@%s bound to %s" % (sym, ver, to))
        if want and not wrong:
            print("ok   LD_DEBUG=bindings: all %d mlx5dv_/efadv_ imports "
                  "bound to the shims at their versions" % len(want))
        fails += wrong
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    # 3. the whole build tree, when it has our libibverbs
    if os.path.exists(os.path.join(libdir, "libibverbs.so.1")):
        rc, out, err = run([args.binary, "--help"],
                           {"LD_LIBRARY_PATH": libdir, "LD_BIND_NOW": "1"})
        text = out + err
        bad = LOAD_ERRORS.search(text)
        if bad and SHIM_WORDS.search(text):
            fails += 1
            print("FAIL %s --help with %s: exit %d\n%s"
                  % (args.binary, libdir, rc, text[-1500:]))
        elif bad or rc == 127:
            print("note %s --help with all of %s does not load, for a "
                  "reason outside the shims:\n%s"
                  % (args.binary, libdir, text.strip()[-600:]))
        else:
            print("ok   LD_BIND_NOW=1 %s --help with all of %s (exit %d)"
                  % (os.path.basename(args.binary), libdir, rc))
    else:
        print("note %s has no libibverbs.so.1: the run with softrdma's "
              "libibverbs was not done" % libdir)

    print("shim_perftest: %d failures" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
