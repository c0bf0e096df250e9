#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Debian's UCX (1.13) over softrdma0: ucx_perftest on the rc_verbs transport.

  ucx.py --test am_lat
  ucx.py --test put_bw   (zero-copy RDMA WRITEs of 64 KiB)
  ucx.py --test am_bw    (4 KiB active messages, copied)

A ucx_perftest server listens on a free port; the client runs the test
against 127.0.0.1 on device softrdma0:1, transport rc_verbs, and must exit
0 with a "Final:" line of finite, positive figures and no error.

UCX takes an RDMA device only if /dev/infiniband/<its dev_name> is a
character device (uct_ib_device_is_accessible); softrdma has no kernel
device, so as root the test makes the node uverbs0 (major 231, as the
kernel's) when it is missing and removes it at the end.  Nothing opens it:
our libibverbs talks to the daemon.  Not root and no node: skipped (77).
"""

import argparse
import math
import os
import re
import stat
import sys

import t_compat as t

NODE = "/dev/infiniband/uverbs0"
FINAL = re.compile(r"^Final:\s+(.*)$", re.M)
ARGS = {
    "am_lat": ["-t", "am_lat", "-n", "20000"],
    "put_bw": ["-t", "put_bw", "-D", "zcopy", "-s", "65536", "-n", "5000"],
    "am_bw": ["-t", "am_bw", "-D", "bcopy", "-s", "4096", "-n", "20000"],
}


def char_node(path):
    try:
        return stat.S_ISCHR(os.stat(path).st_mode)
    except OSError:
        return False


def make_node():
    """True when this test made the node (and so removes it)."""
    if char_node(NODE):
        return False
    if os.geteuid() != 0:
        raise t.Skip("UCX needs %s as a character device and only root "
                     "can make it" % NODE)
    os.makedirs(os.path.dirname(NODE), exist_ok=True)
    os.mknod(NODE, 0o600 | stat.S_IFCHR, os.makedev(231, 192))
    return True


def body(h, args):
    binary = t.need_binary("/usr/bin/ucx_perftest")
    made = make_node()
    try:
        run(h, binary, args.test)
    finally:
        if made:
            os.unlink(NODE)


def run(h, binary, test):
    port = str(t.free_port())
    dev = ["-d", "softrdma0:1", "-x", "rc_verbs", "-p", port]
    server = h.start("server", [binary] + dev)
    h.wait_listen(server, int(port))
    client = h.run("client", [binary, "127.0.0.1"] + dev + ARGS[test],
                   timeout=120)
    out, err = client.output(), client.errors()
    if client.rc != 0:
        raise t.TestFailure("client exited %s" % client.rc)
    if re.search(r"ERROR|failed", out + err):
        raise t.TestFailure("client printed an error")
    final = FINAL.search(out)
    if not final:
        raise t.TestFailure("no \"Final:\" line")
    figs = final.group(1).split()
    if len(figs) < 7:
        raise t.TestFailure("short \"Final:\" line: %s" % final.group(1))
    for v in figs[1:]:
        f = float(v)
        if math.isnan(f) or math.isinf(f) or f <= 0:
            raise t.TestFailure("figure %s in \"Final:\" line" % v)
    t.log("%s: %s" % (test, final.group(1)))
    server.kill()
    h.show(server)
    h.check_loaded(client)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--test", required=True, choices=sorted(ARGS))
    args = ap.parse_args()
    return t.main("ucx_" + args.test, lambda h: body(h, args))


if __name__ == "__main__":
    sys.exit(main())
