#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Debian's MPICH (4.0, ch4:ucx) over UCX over softrdma0, as a user.

  mpich.py --tmpfiles dist/softrdma-tmpfiles.conf

mpich_check.c, built with Debian's mpicc.mpich, runs as two ranks under
mpiexec.mpich (hydra, fork launcher) as an ordinary user (srd-ucx, see
ucx.py), with MPIR_CVAR_NOLOCAL=1 (no shared memory between the ranks:
every message goes through the network module, UCX) and UCX limited to
softrdma0:1 with rc_verbs, ud_verbs and self: MPI cannot start unless
UCX reaches the device.  It checks MPI_Allreduce results and ping-pongs
of 1 B to 4 MiB byte for byte, and prints latency and bandwidth.  That it
really ran on softrdma: both ranks loaded our libibverbs.so.1 (LD_DEBUG),
and the user's daemon counted at least the bytes the ranks exchanged
('softrdma statistic show').

As root, the device nodes come from the project's tmpfiles.d file, as a
package makes them.  Skipped (77) without MPICH or root.
"""

import argparse
import os
import re
import subprocess
import sys

import t_compat as t
from mpi import ranks_loaded_ours
from ucx import as_user, tmpfiles_create

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                   "mpich_check.c")
ENV = {"UCX_TLS": "rc_verbs,ud_verbs,self",
       "UCX_NET_DEVICES": "softrdma0:1",
       "MPIR_CVAR_NOLOCAL": "1"}
# What the data checks move (both directions, 1 B .. 4 MiB by 4) plus the
# bandwidth run (256 x 1 MiB): the device must have sent at least this.
MIN_BYTES = 2 * sum(4 ** k for k in range(12)) + 256 * (1 << 20)


def counters(h, prefix):
    admin = os.path.join(os.path.dirname(h.daemon), "softrdma")
    build_admin = os.path.join(os.path.dirname(os.environ["SOFTRDMAD"]),
                               "softrdma")
    if not os.access(admin, os.X_OK):
        admin = build_admin
    r = subprocess.run(list(prefix) + [admin, "statistic", "show", "link",
                                       "softrdma0/1"], env=h.env,
                       capture_output=True, text=True, timeout=30)
    t.log("$ softrdma statistic show link softrdma0/1\n" + r.stdout +
          r.stderr)
    if r.returncode != 0:
        raise t.TestFailure("softrdma statistic show: exit %d" %
                            r.returncode)
    fields = r.stdout.split()
    return {fields[i]: int(fields[i + 1]) for i in range(len(fields) - 1)
            if fields[i + 1].isdigit()}


def body(h, args):
    mpiexec = t.need_binary("/usr/bin/mpiexec.mpich")
    mpicc = t.need_binary("/usr/bin/mpicc.mpich")
    exe = os.path.join(h.tmp, "mpich_check")
    cc = subprocess.run([mpicc, "-O2", "-o", exe, SRC],
                        capture_output=True, text=True)
    if cc.returncode != 0:
        raise t.TestFailure("mpicc.mpich: %s" % cc.stderr)
    prefix = as_user(h)
    tmpfiles_create(args.tmpfiles)
    os.chmod(exe, 0o755)
    p = h.start("mpiexec", prefix + [mpiexec, "-launcher", "fork", "-n",
                                     "2", exe], extra_env=ENV)
    p.wait(240)
    h.show(p)
    if p.timed_out:
        raise t.TestFailure("mpiexec.mpich did not finish in time")
    if p.rc != 0:
        raise t.TestFailure("mpiexec.mpich exited %s" % p.rc)
    line = re.search(r"^mpich_check: .*$", p.output(), re.M)
    if not line or "data ok" not in line.group(0):
        raise t.TestFailure("no \"mpich_check: data ok\" line")
    t.log(line.group(0))
    pids = ranks_loaded_ours(h, p.ld_prefix)
    if len(pids) < 2:
        raise t.TestFailure("%d processes loaded libibverbs.so.1, want the "
                            "2 ranks" % len(pids))
    c = counters(h, prefix)
    if c.get("tx_bytes", 0) < MIN_BYTES:
        raise t.TestFailure("softrdma0 sent %d bytes, the ranks exchanged "
                            "at least %d" % (c.get("tx_bytes", 0),
                                             MIN_BYTES))
    t.log("softrdma0: %d packets, %d bytes sent" %
          (c.get("sent_pkts", 0), c["tx_bytes"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tmpfiles", required=True)
    args = ap.parse_args()
    return t.main("mpich_ucx_user", lambda h: body(h, args))


if __name__ == "__main__":
    sys.exit(main())
