#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Debian's ibv_devices / ibv_devinfo list and describe softrdma0.

  devinfo.py --mode devices|devinfo|verbose|list|port

devices  ibv_devices: a "softrdma0" row with a 16-digit node GUID
devinfo  ibv_devinfo: hca_id softrdma0, port 1 PORT_ACTIVE, Ethernet link
verbose  ibv_devinfo -v: the above, device caps, GID[0] a RoCE v2 GID
list     ibv_devinfo -l: "1 HCA found" and softrdma0
port     ibv_devinfo -d softrdma0 -i 1: only port 1, PORT_ACTIVE
devices_vs_ours, verbose_vs_ours
         Debian's ibv_devices / ibv_devinfo -v and softrdma's own (built
         on our headers, next to softrdmad) print exactly the same lines:
         every attribute struct is read at the same offsets.
"""

import argparse
import difflib
import os
import re
import sys

import t_compat as t

CHECKS = {
    "devices": (["/usr/bin/ibv_devices"], [
        r"^\s*device\s+node GUID\s*$",
        r"^\s*softrdma0\s+[0-9a-f]{16}\s*$",
    ]),
    "devinfo": (["/usr/bin/ibv_devinfo"], [
        r"^hca_id:\s+softrdma0$",
        r"^\s+transport:\s+InfiniBand \(0\)$",
        r"^\s+node_guid:\s+([0-9a-f]{4}:){3}[0-9a-f]{4}$",
        r"^\s+phys_port_cnt:\s+1$",
        r"^\s+port:\s+1$",
        r"^\s+state:\s+PORT_ACTIVE \(4\)$",
        r"^\s+active_mtu:\s+\d+ \(\d\)$",
        r"^\s+link_layer:\s+Ethernet$",
    ]),
    "verbose": (["/usr/bin/ibv_devinfo", "-v"], [
        r"^hca_id:\s+softrdma0$",
        r"^\s+max_qp:\s+[1-9]\d*$",
        r"^\s+max_cqe:\s+[1-9]\d*$",
        r"^\s+max_qp_rd_atom:\s+[1-9]\d*$",
        r"^\s+atomic_cap:\s+ATOMIC_(HCA|GLOB) \(\d\)$",
        r"^\s+num_comp_vectors:\s+[1-9]\d*$",
        r"^\s+state:\s+PORT_ACTIVE \(4\)$",
        r"^\s+link_layer:\s+Ethernet$",
        r"^\s+gid_tbl_len:\s+[1-9]\d*$",
        r"^\s+phys_state:\s+LINK_UP \(5\)$",
        r"^\s+GID\[\s*0\]:\s+\S+, RoCE v2$",
    ]),
    "list": (["/usr/bin/ibv_devinfo", "-l"], [
        r"^\d+ HCAs? found:$",
        r"^\s+softrdma0$",
    ]),
    "port": (["/usr/bin/ibv_devinfo", "-d", "softrdma0", "-i", "1"], [
        r"^hca_id:\s+softrdma0$",
        r"^\s+port:\s+1$",
        r"^\s+state:\s+PORT_ACTIVE \(4\)$",
    ]),
}
# Words Debian's tools print when a call failed.
BAD = re.compile(r"Failed|failed|Couldn't|couldn't|No IB devices|"
                 r"not found|error", re.M)


def same_as_ours(h, mode):
    """Debian's tool and ours (built on our headers) print the same."""
    argv = CHECKS[mode][0]
    ours = os.path.join(os.path.dirname(h.daemon),
                        os.path.basename(argv[0]))
    if not os.access(ours, os.X_OK):
        raise t.Skip("no %s in the build" % ours)
    deb = h.run("debian", argv, timeout=30)
    mine = h.run("ours", [ours] + argv[1:], timeout=30)
    if deb.rc != 0 or mine.rc != 0:
        raise t.TestFailure("exit %s (Debian) / %s (ours)" %
                            (deb.rc, mine.rc))
    a, b = deb.output().splitlines(), mine.output().splitlines()
    diff = list(difflib.unified_diff(a, b, "debian", "ours", lineterm=""))
    if diff:
        t.log("\n".join(diff))
        raise t.TestFailure("Debian's %s and ours differ: a field read "
                            "at another offset or a value lost" % argv[0])
    t.log("%d identical lines" % len(a))


def body(h, mode):
    if mode.endswith("_vs_ours"):
        return same_as_ours(h, mode[:-len("_vs_ours")])
    argv, patterns = CHECKS[mode]
    t.need_binary(argv[0])
    p = h.run(mode, argv, timeout=30)
    out, err = p.output(), p.errors()
    if p.rc != 0:
        raise t.TestFailure("%s exited %s" % (argv[0], p.rc))
    bad = BAD.search(out + err)
    if bad:
        raise t.TestFailure("error text in the output: %r" % bad.group(0))
    for pat in patterns:
        if not re.search(pat, out, re.M):
            raise t.TestFailure("no line matches %r" % pat)
    if mode == "port" and re.search(r"^\s+port:\s+(?!1$)", out, re.M):
        raise t.TestFailure("-i 1 printed another port")
    if mode == "verbose":
        # Every GID line is well formed: ::ffff:a.b.c.d or IPv6, RoCE v2.
        gids = re.findall(r"^\s+GID\[\s*\d+\]:\s+(.*)$", out, re.M)
        for g in gids:
            if not re.match(r"^[0-9a-f:.]+, RoCE v2$", g):
                raise t.TestFailure("odd GID line %r" % g)
        t.log("%d GID lines" % len(gids))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    modes = sorted(CHECKS) + ["devices_vs_ours", "verbose_vs_ours"]
    ap.add_argument("--mode", choices=modes, required=True)
    args = ap.parse_args()
    return t.main("devinfo_" + args.mode, lambda h: body(h, args.mode))


if __name__ == "__main__":
    sys.exit(main())
