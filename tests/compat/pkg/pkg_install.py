#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Debian package, built and installed.

  pkg_install.py --source DIR

Builds the packages with dpkg-buildpackage -us -uc -b (cached by the
tree's hash, see t_pkg.py), checks each .deb's control fields, then
installs softrdma, libsoftrdma1 and softrdma-dev with dpkg -i into a
throwaway root (this machine's root under an overlay, Debian's rdma-core
clients in it) and runs steps_install.sh there: package states (Debian's
libibverbs1/librdmacm1/ibverbs-providers replaced, their users still
installed), the file list, ldconfig's choice, postinst's device nodes and
enabled socket, systemd-analyze verify, and Debian's ibv_devinfo and
ibv_rc_pingpong on the installed files as root and as an ordinary user.
Skipped (77) without debhelper, root or namespaces.
"""

import argparse
import subprocess
import sys

import t_pkg as t

FIELDS = {
    "libsoftrdma1": {
        "Provides": ["libibverbs1 (= 44.0-2)", "librdmacm1 (= 44.0-2)",
                     "ibverbs-providers (= 44.0-2)"],
        "Conflicts": ["libibverbs1", "librdmacm1", "ibverbs-providers"],
        "Replaces": ["libibverbs1", "librdmacm1", "ibverbs-providers"],
    },
    "softrdma-utils": {"Provides": ["ibverbs-utils (= 44.0-2)"],
                       "Conflicts": ["ibverbs-utils"]},
    "softrdma-dev": {"Provides": ["libibverbs-dev (= 44.0-2)",
                                  "librdmacm-dev (= 44.0-2)"]},
}


def check_fields(debs):
    for pkg, fields in FIELDS.items():
        for field, want in fields.items():
            r = subprocess.run(["dpkg-deb", "-f", debs[pkg], field],
                               capture_output=True, text=True, check=True)
            got = [x.strip() for x in r.stdout.split(",")]
            missing = [w for w in want if w not in got]
            if missing:
                raise t.Failure("%s %s: %s lacks %s" % (pkg, field,
                                                        got, missing))
    # Not installed below (Debian's ibverbs-utils is): its files here.
    r = subprocess.run(["dpkg-deb", "-c", debs["softrdma-utils"]],
                       capture_output=True, text=True, check=True)
    names = {line.split()[5].lstrip(".") for line in r.stdout.splitlines()}
    for f in ("/usr/bin/ibv_devinfo", "/usr/bin/ibv_devices",
              "/usr/bin/ibv_rc_pingpong", "/usr/bin/ibv_ud_pingpong",
              "/usr/share/man/man1/ibv_devinfo.1.gz"):
        if f not in names:
            raise t.Failure("softrdma-utils lacks %s" % f)
    t.log("control fields, softrdma-utils files: ok")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    args = ap.parse_args()

    def body():
        debs = t.build_debs(args.source)
        for p in t.PACKAGES:
            t.log("%s: %s" % (p, debs[p]))
        check_fields(debs)
        t.run_in_root([debs[p] for p in ("softrdma", "libsoftrdma1",
                                         "softrdma-dev")],
                      "steps_install.sh")

    return t.main("pkg_install", body)


if __name__ == "__main__":
    sys.exit(main())
