#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Debian's qperf (0.4.11) RDMA tests on softrdma0.

  qperf.py --test rc_bw [--time 2]
  qperf.py --test uc_bw --expect-roce-reject

A qperf server listens on a free port (-lp); the client runs the test
against 127.0.0.1 for a short time.

qperf's own connection set-up (without RDMA CM) fills address vectors
with a LID and no GRH.  A RoCE port has no LIDs: the kernel rejects such an
AV (rdma_check_ah_attr: a RoCE AV without IB_AH_GRH is EINVAL) and so does
softrdma0.  So on RoCE:

- RC tests run with -cm1 (RDMA CM set-up, the GID from the IP address):
  they need softrdma's librdmacm.so.1 in the build (skipped, 77, until it
  is built); the client must exit 0 and print its figures, finite and
  positive.
- qperf 0.4.11 never uses the CM for UC and UD (rd_params forces it
  off), so uc_* and ud_* cannot run on any RoCE device: with
  --expect-roce-reject the test checks that softrdma0 answers as RoCE
  hardware does ("failed to modify QP to RTR: Invalid argument" for UC,
  "failed to create address handle: Invalid argument" for UD), that the
  client exits with an error and that the server survives and still
  serves a test afterwards (tcp_lat).
"""

import argparse
import math
import os
import re
import sys
import time

import t_compat as t

RESULT = re.compile(r"^\s+(\w+)\s+=\s+([\d.]+)\s+(\S+)", re.M)
REJECT = {
    "uc": "failed to modify QP to RTR: Invalid argument",
    "ud": "failed to create address handle: Invalid argument",
}


def check_figures(p, test):
    out = p.output()
    if not re.search(r"^%s:$" % re.escape(test), out, re.M):
        raise t.TestFailure("%s: no \"%s:\" header" % (p.tag, test))
    figs = RESULT.findall(out)
    if not figs:
        raise t.TestFailure("%s: no results" % p.tag)
    for name, val, unit in figs:
        v = float(val)
        if math.isnan(v) or math.isinf(v) or v <= 0:
            raise t.TestFailure("%s: %s = %s %s" % (p.tag, name, val, unit))
    names = {n for n, _, _ in figs}
    want = "latency" if "lat" in test else (
        "bw" if "bw" in test else "msg_rate")
    if want not in names:
        raise t.TestFailure("%s: no %s figure (got %s)" %
                            (p.tag, want, sorted(names)))


def body(h, args):
    binary = t.need_binary("/usr/bin/qperf")
    test = args.test
    cm = not args.expect_roce_reject
    if cm and not os.path.isfile(os.path.join(h.libdir, "librdmacm.so.1")):
        raise t.Skip("qperf's RC tests need RDMA CM on RoCE (-cm1) and "
                     "%s has no librdmacm.so.1 yet" % h.libdir)
    port = str(t.free_port())
    server = h.start("server", [binary, "-lp", port])
    h.wait_listen(server, int(port))
    # qperf loads libibverbs at start-up: check it while it waits.
    h.check_maps(server)
    argv = [binary, "127.0.0.1", "-lp", port, "-t", str(args.time), "-vvu"]
    if cm:
        argv += ["-cm1"]
    else:
        argv += ["-i", "softrdma0:1"]
    client = h.run("client", argv + [test], timeout=args.time + 60)
    out, err = client.output(), client.errors()
    if args.expect_roce_reject:
        want = REJECT[test[:2]]
        if client.rc == 0:
            raise t.TestFailure("%s ran on RoCE without a GRH" % test)
        # Whichever end fails first reports it, on either stream; the
        # server's text reaches the client prefixed "server: ", or not
        # at all when the client gives up first.
        time.sleep(0.2)
        said = out + err + server.output() + server.errors()
        if want not in said:
            raise t.TestFailure("neither end printed \"%s\"" % want)
        # The server is still there and serves the next client.
        if server.poll() is not None:
            raise t.TestFailure("the qperf server died (%s)" % server.rc)
        after = h.run("after", [binary, "127.0.0.1", "-lp", port, "-t", "1",
                                "tcp_lat"], timeout=60)
        if after.rc != 0 or "latency" not in after.output():
            raise t.TestFailure("the server no longer serves tests")
    else:
        if client.rc != 0:
            raise t.TestFailure("client exited %s" % client.rc)
        if re.search(r"failed|error|[Ww]arning", out + err):
            raise t.TestFailure("client printed an error or warning")
        check_figures(client, test)
        if server.poll() is not None:
            raise t.TestFailure("the qperf server died (%s)" % server.rc)
    server.kill()
    h.show(server)
    h.check_loaded(server)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--test", required=True)
    ap.add_argument("--time", type=int, default=2)
    ap.add_argument("--expect-roce-reject", action="store_true")
    args = ap.parse_args()
    name = "qperf_" + args.test
    return t.main(name, lambda h: body(h, args))


if __name__ == "__main__":
    sys.exit(main())
