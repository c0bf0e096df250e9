#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Debian's Open MPI (4.1) over UCX over softrdma0.

  mpi.py

mpi_pingpong.c, built with Debian's mpicc, runs as two ranks under
mpirun with the UCX PML, UCX restricted to softrdma0:1 and the rc_verbs
and ud_verbs transports (no shared memory, no TCP): MPI cannot start
unless UCX reaches the device, and every message crosses it.  Messages
of 1 B to 4 MiB go back and forth with each byte checked; rank 0 must
print "data ok".  Both ranks must have loaded our libibverbs.so.1.

UCX wants /dev/infiniband/uverbs0 as a character device (see ucx.py):
made as root for the run, removed after; skipped (77) otherwise.
"""

import glob
import os
import re
import subprocess
import sys

import t_compat as t
from ucx import make_node, NODE

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                   "mpi_pingpong.c")
UCX_ENV = {"UCX_TLS": "rc_verbs,ud_verbs,self",
           "UCX_NET_DEVICES": "softrdma0:1"}


def ranks_loaded_ours(h, prefix):
    """Pids whose LD_DEBUG log shows libibverbs.so.1; fail on a foreign
    one."""
    pids = set()
    for path in glob.glob(prefix + ".*"):
        with open(path, errors="replace") as f:
            for line in f:
                m = re.match(r"^\s*(\d+):\s+calling init: (\S+)", line)
                if not m or "libibverbs.so" not in m.group(2):
                    continue
                if not os.path.realpath(m.group(2)).startswith(h.libdir):
                    raise t.TestFailure("pid %s loaded %s" %
                                        (m.group(1), m.group(2)))
                pids.add(m.group(1))
    return pids


def body(h):
    mpirun = t.need_binary("/usr/bin/mpirun")
    mpicc = t.need_binary("/usr/bin/mpicc")
    exe = os.path.join(h.tmp, "mpi_pingpong")
    cc = subprocess.run([mpicc, "-O2", "-o", exe, SRC],
                        capture_output=True, text=True)
    if cc.returncode != 0:
        raise t.TestFailure("mpicc: %s" % cc.stderr)
    made = make_node()
    try:
        argv = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2",
                "--mca", "pml", "ucx", "--mca", "osc", "^ucx",
                "--mca", "btl", "self"]
        for name in ("LD_LIBRARY_PATH", "SOFTRDMA_SOCKET", "SOFTRDMAD",
                     "LD_DEBUG", "LD_DEBUG_OUTPUT") + tuple(UCX_ENV):
            argv += ["-x", name]
        p = h.start("mpirun", argv + [exe], extra_env=UCX_ENV)
        p.wait(240)
        h.show(p)
        if p.timed_out:
            raise t.TestFailure("mpirun did not finish in time")
        if p.rc != 0:
            raise t.TestFailure("mpirun exited %s" % p.rc)
        line = re.search(r"^mpi_pingpong: .*$", p.output(), re.M)
        if not line or "data ok" not in line.group(0):
            raise t.TestFailure("no \"mpi_pingpong: data ok\" line")
        t.log(line.group(0))
        pids = ranks_loaded_ours(h, p.ld_prefix)
        if len(pids) < 2:
            raise t.TestFailure("%d processes loaded libibverbs.so.1, "
                                "want the 2 ranks" % len(pids))
    finally:
        if made:
            os.unlink(NODE)


def main():
    return t.main("mpi_ucx_pingpong", body)


if __name__ == "__main__":
    sys.exit(main())
