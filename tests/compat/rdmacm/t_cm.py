# SPDX-License-Identifier: MIT
"""The daemon's connection manager as the compat harness sees it.

A server that listens through RDMA CM has no TCP socket to watch for; it
listens once the daemon's CM holds its listener, which CM_STATS (on a
connection of the test's own to the test's daemon) tells.
"""

import os
import re
import socket
import struct
import time

import t_compat as t

SRD_CMD_HELLO = 1

def _proto_version():
    """SRD_PROTO_VERSION as common/proto.h defines it for this tree."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "..", "..", "common", "proto.h")
    with open(path, encoding="utf-8") as f:
        m = re.search(r"^#define SRD_PROTO_VERSION (\d+)$", f.read(), re.M)
    if not m:
        raise RuntimeError("no SRD_PROTO_VERSION in " + path)
    return int(m.group(1))


SRD_PROTO_VERSION = _proto_version()
SRD_CMD_CM_STATS = 0x200 + 17
HDR = struct.Struct("<IIiI")
STATS = struct.Struct("<6I9Q")
STATS_FIELDS = ("chans", "ids", "conns", "listeners", "ports", "rsvd",
                "mad_rx", "mad_tx", "mad_bad", "mad_unmatched", "mad_dup",
                "mad_tx_drop", "retransmits", "timeouts", "conns_made")


def cm_stats(h):
    """The daemon's CM_STATS, or None while no daemon answers."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.connect("\0" + h.socket)
        s.send(HDR.pack(SRD_CMD_HELLO, 8, 0, 0) + struct.pack(
            "<II", SRD_PROTO_VERSION, os.getpid()))
        s.recv(4096)
        s.send(HDR.pack(SRD_CMD_CM_STATS, 0, 0, 0))
        rep = s.recv(4096)
    except OSError:
        return None
    finally:
        s.close()
    op, ln, status, _ = HDR.unpack_from(rep)
    if op != SRD_CMD_CM_STATS or status != 0 or ln != STATS.size:
        raise t.TestFailure("CM_STATS answered op %#x status %d len %d" %
                            (op, status, ln))
    return dict(zip(STATS_FIELDS, STATS.unpack_from(rep, HDR.size)))


def wait_cm_listening(h, p, n=1, timeout=20):
    """Wait until the daemon holds n listeners; fail if p exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if p.poll() is not None:
            h.show(p)
            raise t.TestFailure("%s exited (%s) before listening" %
                                (p.tag, p.rc))
        st = cm_stats(h)
        if st and st["listeners"] >= n:
            return
        time.sleep(0.02)
    raise t.TestFailure("%s: no listener after %d s" % (p.tag, timeout))


def main():
    """t_cm.py SOCKET: print the listeners of that daemon (for a check
    from inside another network namespace)."""
    import sys

    class _H:
        socket = sys.argv[1]

    st = cm_stats(_H())
    print(st["listeners"] if st else -1)


if __name__ == "__main__":
    main()
