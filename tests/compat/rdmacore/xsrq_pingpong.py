#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Debian's ibv_xsrq_pingpong (XRC): a server and its clients on softrdma0.

  xsrq_pingpong.py --name NAME [--clients N] [--timeout S]
                   -- [pingpong options, e.g. -g 0 -s 4096]

The server runs with -c N on a free TCP port; once it listens (and
/proc/<pid>/maps shows our libibverbs.so.1) N clients connect to
127.0.0.1 with the same options.  The server and the clients open one
XRC domain through the file the program names (/tmp/xrc_domain), so the
processes share it in the daemon.  Every process must exit 0, print its
local and remote address lines (receive and send QPN, SRQ number) and
"success", and print no error.
"""

import argparse
import re
import sys

import t_compat as t

ERRORS = re.compile(r"Failed|failed|Couldn't|error|Unable|Invalid", re.M)
ADDR = (r"^\s*%s: LID [0-9a-f]{4}, QPN RECV [0-9a-f]{6} SEND [0-9a-f]{6}, "
        r"PSN [0-9a-f]{6}, SRQN ([0-9a-f]{6}), GID \S+$")


def check(p, remotes):
    out, err = p.output(), p.errors()
    if p.rc != 0:
        raise t.TestFailure("%s exited %s" % (p.tag, p.rc))
    bad = ERRORS.search(out + err)
    if bad:
        raise t.TestFailure("%s printed an error (%r)" % (p.tag,
                                                          bad.group(0)))
    if not re.search(r"^success$", out, re.M):
        raise t.TestFailure("%s: no \"success\"" % p.tag)
    local = re.findall(ADDR % "local", out, re.M)
    remote = re.findall(ADDR % "remote", out, re.M)
    if len(local) != remotes or len(remote) != remotes:
        raise t.TestFailure("%s: %d local and %d remote address lines, "
                            "expected %d" % (p.tag, len(local), len(remote),
                                             remotes))
    return set(local), set(remote)


def body(h, args):
    binary = t.need_binary("/usr/bin/ibv_xsrq_pingpong")
    opts = args.opts
    port = str(t.free_port())
    server = h.start("server", [binary, "-d", "softrdma0", "-p", port,
                                "-c", str(args.clients)] + opts)
    h.wait_listen(server, int(port))
    h.check_maps(server)
    clients = []
    for i in range(args.clients):
        clients.append(h.start("client%d" % i,
                               [binary, "-d", "softrdma0", "-p", port] +
                               opts + ["127.0.0.1"]))
    for c in clients:
        c.wait(args.timeout)
    ok = all(c.rc == 0 for c in clients)
    server.wait(10 if ok else 2)
    for p in [server] + clients:
        h.show(p)
    for p in [server] + clients:
        h.check_loaded(p)
        if p.timed_out:
            raise t.TestFailure("%s did not finish in time" % p.tag)
    s_local, s_remote = check(server, args.clients)
    for c in clients:
        c_local, c_remote = check(c, 1)
        # What the client told the server is what the server printed.
        if not c_local <= s_remote or not c_remote <= s_local:
            raise t.TestFailure("%s: SRQ numbers do not match the "
                                "server's" % c.tag)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", required=True)
    ap.add_argument("--clients", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("opts", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    if args.opts and args.opts[0] == "--":
        args.opts = args.opts[1:]
    return t.main(args.name, lambda h: body(h, args))


if __name__ == "__main__":
    sys.exit(main())
