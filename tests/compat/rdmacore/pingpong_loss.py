#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Debian's ibv_rc_pingpong exits when its device daemon is killed.

  pingpong_loss.py --name NAME [-- pingpong options, e.g. -e]

Server and client run a pingpong far too long to finish; once both have
exchanged addresses and run a moment, the daemon is killed (SIGKILL).  Both
must exit (with an error) within a few seconds instead of polling an
empty CQ, or waiting for a completion event, forever.
"""

import argparse
import signal
import sys
import time

import t_compat as t

BIN = "/usr/bin/ibv_rc_pingpong"
EXIT_WITHIN_S = 5


def body(h, args):
    binary = t.need_binary(BIN)
    opts = ["-g", "0", "-n", "100000000"] + args.opts
    port = str(t.free_port())
    server = h.start("server", [binary, "-d", "softrdma0", "-p", port] +
                     opts)
    h.wait_listen(server, int(port))
    h.check_maps(server)
    client = h.start("client", [binary, "-d", "softrdma0", "-p", port] +
                     opts + ["127.0.0.1"])
    deadline = time.monotonic() + 30
    while "remote address" not in client.output():
        if client.poll() is not None or time.monotonic() > deadline:
            h.show(client)
            raise t.TestFailure("client did not connect")
        time.sleep(0.02)
    time.sleep(0.5)  # pinging now
    for p in (server, client):
        if p.poll() is not None:
            raise t.TestFailure("%s exited before the daemon was killed"
                                % p.tag)
    if not h.daemon_pids():
        raise t.TestFailure("no daemon found for %s" % h.socket)
    h.kill_daemon(signal.SIGKILL)
    killed = time.monotonic()
    for p in (client, server):
        left = max(0.1, EXIT_WITHIN_S - (time.monotonic() - killed))
        p.wait(left)
        h.show(p)
        if p.timed_out:
            raise t.TestFailure("%s still running %d s after the daemon "
                                "was killed" % (p.tag, EXIT_WITHIN_S))
        if p.rc == 0:
            raise t.TestFailure("%s exited 0 though its device died" %
                                p.tag)
    t.log("both exited %.2f s after the kill" % (time.monotonic() - killed))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", required=True)
    ap.add_argument("opts", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    if args.opts and args.opts[0] == "--":
        args.opts = args.opts[1:]
    return t.main(args.name, lambda h: body(h, args))


if __name__ == "__main__":
    sys.exit(main())
