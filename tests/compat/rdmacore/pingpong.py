#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Debian's ibv_{rc,uc,ud,srq}_pingpong, server and client, on softrdma0.

  pingpong.py --name NAME --bin /usr/bin/ibv_rc_pingpong [--timeout S]
              -- [pingpong options, e.g. -g 0 -e -s 65536 -c]

The server runs with the options on a free TCP port; once it listens (and
/proc/<pid>/maps shows our libibverbs.so.1) the client connects to
127.0.0.1 with the same options.  Both must exit 0, print their local and
remote addresses (QPN, GID) and the "bytes in"/"iters in" summary, and
print no error (with -c: no "invalid data in page").  With --odp
explicit|implicit (the client's -o/-O), every MR either process holds in
the daemon is ON_DEMAND (implicit: the whole address space): the server
registers before it listens, the client before it connects, so the
client goes through a relay of ours that reads the daemon's MRs before
it passes the client's address exchange on.
"""

import argparse
import re
import select
import socket
import sys
import threading
import time

import t_compat as t

ERRORS = re.compile(r"Failed|failed|Couldn't|invalid data|Completion for|"
                    r"unknown|not found|error", re.M)
SUMMARY = [
    r"^\s*local address:\s+LID 0x[0-9a-f]{4}, QPN 0x[0-9a-f]{6}, "
    r"PSN 0x[0-9a-f]{6}([,:] GID \S+)?$",
    r"^\s*remote address:\s+LID 0x[0-9a-f]{4}, QPN 0x[0-9a-f]{6}, "
    r"PSN 0x[0-9a-f]{6}([,:] GID \S+)?$",
    r"^\d+ bytes in [\d.]+ seconds = [\d.]+ Mbit/sec$",
    r"^\d+ iters in [\d.]+ seconds = [\d.]+ usec/iter$",
]


def check(p, opts):
    out, err = p.output(), p.errors()
    if p.rc != 0:
        raise t.TestFailure("%s exited %s" % (p.tag, p.rc))
    bad = ERRORS.search(out + err)
    if bad:
        raise t.TestFailure("%s printed an error (%r)" % (p.tag,
                                                          bad.group(0)))
    for pat in SUMMARY:
        if not re.search(pat, out, re.M):
            raise t.TestFailure("%s: no line matches %r" % (p.tag, pat))
    if "-g" in opts:
        # With a GID index, both ends name a real GID, not "::".
        for g in re.findall(r"address:.*GID (\S+)$", out, re.M):
            if g == "::":
                raise t.TestFailure("%s: empty GID with -g" % p.tag)
    iters = re.search(r"^(\d+) iters in", out, re.M)
    want = None
    if "-n" in opts:
        want = int(opts[opts.index("-n") + 1])
    if want is not None and int(iters.group(1)) != want:
        raise t.TestFailure("%s: %s iters, asked %d" %
                            (p.tag, iters.group(1), want))


class Relay:
    """127.0.0.1:port to the server's port; on the client's connection,
    before anything is passed on, waits for the client's MR."""

    def __init__(self, server_port, watch):
        self.server_port = server_port
        self.watch = watch
        self.client = None
        self.error = None
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(1)
        self.lsock.settimeout(60)
        self.port = self.lsock.getsockname()[1]
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            a, _ = self.lsock.accept()
            self.lsock.close()
            while self.client is None:
                time.sleep(0.01)
            # Not there: check_odp says so once the run is over.
            self.watch.wait_for(self.client.pid)
            b = socket.create_connection(("127.0.0.1", self.server_port),
                                         timeout=60)
            self._shuttle(a, b)
        except OSError as e:
            self.error = "relay: %s" % e

    @staticmethod
    def _shuttle(a, b):
        peer = {a: b, b: a}
        open_ = [a, b]
        while open_:
            r, _, _ = select.select(open_, [], [], 60)
            if not r:
                break
            for s in r:
                data = s.recv(4096)
                if data:
                    peer[s].sendall(data)
                else:
                    open_.remove(s)
                    try:
                        peer[s].shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
        a.close()
        b.close()


def body(h, args):
    binary = t.need_binary(args.bin)
    opts = args.opts
    port = str(t.free_port())
    watch = t.MrWatch(h) if args.odp else None
    server = h.start("server", [binary, "-d", "softrdma0", "-p", port] +
                     opts)
    h.wait_listen(server, int(port))
    h.check_maps(server)
    relay = None
    if watch:
        if not watch.wait_for(server.pid):
            raise t.TestFailure("server listens with no MR in the daemon")
        relay = Relay(int(port), watch)
    client = h.start("client", [binary, "-d", "softrdma0", "-p",
                                str(relay.port) if relay else port] +
                     opts + ["127.0.0.1"])
    if relay:
        relay.client = client
    client.wait(args.timeout)
    server.wait(10 if client.rc == 0 else 2)
    if relay:
        relay.thread.join(10)
        if relay.error:
            raise t.TestFailure(relay.error)
    for p in (server, client):
        h.show(p)
    for p in (server, client):
        h.check_loaded(p)
        if p.timed_out:
            raise t.TestFailure("%s did not finish in time" % p.tag)
    check(server, opts)
    check(client, opts)
    if watch:
        watch.check_odp((server, client), implicit=args.odp == "implicit")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--odp", choices=("explicit", "implicit"))
    ap.add_argument("opts", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    if args.opts and args.opts[0] == "--":
        args.opts = args.opts[1:]
    return t.main(args.name, lambda h: body(h, args))


if __name__ == "__main__":
    sys.exit(main())
