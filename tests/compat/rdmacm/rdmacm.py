#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Debian's rdmacm-utils (rdma-core 44) on softrdma's librdmacm.

  rdmacm.py --test rping [-- extra options for both sides]

Each test starts the server, waits until the daemon's CM holds its
listener (CM_STATS on the daemon's socket), checks through
/proc/<pid>/maps that the server mapped librdmacm.so.1 and
libibverbs.so.1 from the build, runs the client against 127.0.0.1 and
checks exit codes and output of both.  Every process's libraries are
also checked from LD_DEBUG=libs (t_compat.py).
"""

import argparse
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "rdmacore"))
import t_compat as t  # noqa: E402
from t_cm import wait_cm_listening  # noqa: E402

def check_cm_maps(h, p):
    """While p runs: it mapped our librdmacm.so.1 (and libibverbs)."""
    h.check_maps(p)
    with open("/proc/%d/maps" % p.pid) as f:
        paths = {line.split(None, 5)[5] for line in f
                 if len(line.split(None, 5)) == 6 and
                 "/librdmacm.so" in line}
    if not paths:
        raise t.TestFailure("%s: no librdmacm in /proc/%d/maps" %
                            (p.tag, p.pid))
    for path in paths:
        if os.path.dirname(os.path.realpath(path)) != h.libdir:
            raise t.TestFailure("%s maps %s, not ours from %s" %
                                (p.tag, path, h.libdir))
    t.log("%s: /proc/%d/maps: %s" % (p.tag, p.pid, ", ".join(sorted(paths))))


def pair(h, server_argv, client_argv, timeout=60, server_exits=True):
    server = h.start("server", server_argv)
    wait_cm_listening(h, server)
    check_cm_maps(h, server)
    client = h.run("client", client_argv, timeout=timeout)
    if server_exits:
        server.wait(20)
        if server.timed_out:
            raise t.TestFailure("the server did not finish")
    else:
        server.kill()
    h.show(server)
    h.check_loaded(server)
    if client.rc != 0:
        raise t.TestFailure("client exited %s" % client.rc)
    if server_exits and server.rc != 0:
        raise t.TestFailure("server exited %s" % server.rc)
    return server, client


def count(p, pattern):
    return len(re.findall(pattern, p.output(), re.M))


def test_rping(h, args):
    n = args.count
    opts = ["-C", str(n), "-v"] + args.extra
    server, client = pair(h, [args.bin("rping"), "-s", "-a", "127.0.0.1"] +
                          opts,
                          [args.bin("rping"), "-c", "-a", "127.0.0.1"] +
                          opts)
    got = count(client, r"^ping data: rdma-ping-\d+:")
    sgot = count(server, r"^server ping data: rdma-ping-\d+:")
    if got != n or sgot != n:
        raise t.TestFailure("%d pings on the client, %d on the server, "
                            "expected %d" % (got, sgot, n))


def test_ucmatose(h, args):
    srv = [args.bin("ucmatose")] + args.extra
    cli = [args.bin("ucmatose"), "-s", args.addr] + args.extra
    if args.addr != "127.0.0.1":
        srv += ["-b", args.addr]
    server, client = pair(h, srv, cli)
    for p in (server, client):
        if "return status 0" not in p.output():
            raise t.TestFailure("%s: no \"return status 0\"" % p.tag)


def test_udaddy(h, args):
    server, client = pair(h, [args.bin("udaddy")] + args.extra,
                          [args.bin("udaddy"), "-s", "127.0.0.1"] +
                          args.extra)
    for p in (server, client):
        if "return status 0" not in p.output():
            raise t.TestFailure("%s: no \"return status 0\"" % p.tag)


def test_rdma_server(h, args):
    server, client = pair(h, [args.bin("rdma_server")],
                          [args.bin("rdma_client"), "-s", "127.0.0.1"])
    if "rdma_client: end 0" not in client.output():
        raise t.TestFailure("client: no \"end 0\"")
    if "rdma_server: end 0" not in server.output():
        raise t.TestFailure("server: no \"end 0\"")


def test_rdma_xserver(h, args):
    server, client = pair(h, [args.bin("rdma_xserver"), "-c", "r"],
                          [args.bin("rdma_xclient"), "-c", "r", "-s",
                           "127.0.0.1"])
    if "rdma_xclient: end 0" not in client.output():
        raise t.TestFailure("client: no \"end 0\"")


CMTIME_STEPS = ("create id", "resolve addr", "resolve route", "create qp",
                "connect", "disconnect", "destroy")


def test_cmtime(h, args):
    n = args.count
    server, client = pair(h, [args.bin("cmtime")],
                          [args.bin("cmtime"), "-s", "127.0.0.1", "-c",
                           str(n)],
                          timeout=120, server_exits=False)
    out = client.output()
    for step in CMTIME_STEPS:
        m = re.search(r"^%s\s*:\s+([\d.]+)" % re.escape(step), out, re.M)
        if not m:
            raise t.TestFailure("cmtime: no \"%s\" line" % step)
        if step == "connect":
            ms = float(m.group(1))
            t.log("connect: %d connections in %.1f ms: %.0f per second" %
                  (n, ms, n / ms * 1000 if ms else 0))


def test_refused(h, args):
    """A port nobody listens on: REJECTED, reason 8, at once."""
    t0 = time.monotonic()
    p = h.run("client", [args.bin("ucmatose"), "-s", "127.0.0.1", "-p",
                         "9"], timeout=30)
    took = time.monotonic() - t0
    if "RDMA_CM_EVENT_REJECTED, error: 8" not in p.output():
        raise t.TestFailure("ucmatose: no REJECTED with error 8")
    if p.rc == 0:
        raise t.TestFailure("ucmatose succeeded against nobody")
    if took > 10:
        raise t.TestFailure("the rejection took %.1f s" % took)


def test_netns(h, args):
    """rping, ucmatose and udaddy between two network namespaces joined
    by a veth, each with a daemon of its own on its end: the CM's MADs and
    the data cross the kernel's UDP stack."""
    def body(ns, ip):
        for name, srv, cli, want in (
                ("rping", ["rping", "-s", "-a", ip[0], "-C", "10", "-V"],
                 ["rping", "-c", "-a", ip[0], "-C", "10", "-V"], None),
                ("ucmatose", ["ucmatose", "-c", "4", "-C", "20"],
                 ["ucmatose", "-c", "4", "-C", "20", "-s", ip[0]],
                 "return status 0"),
                ("udaddy", ["udaddy"], ["udaddy", "-s", ip[0]],
                 "return status 0")):
            server = h.start(name + "_server", ["ip", "netns", "exec", ns[0],
                                                args.bin(srv[0])] + srv[1:])
            wait_ns_listening(ns[0], h.socket, server)
            client = h.run(name + "_client",
                           ["ip", "netns", "exec", ns[1],
                            args.bin(cli[0])] + cli[1:], timeout=60)
            server.wait(20)
            h.show(server)
            h.check_loaded(server)
            for p in (server, client):
                if p.rc != 0:
                    raise t.TestFailure("%s exited %s" % (p.tag, p.rc))
                if want and want not in p.output():
                    raise t.TestFailure("%s: no \"%s\"" % (p.tag, want))

    with_netns(h, body, prefix="cm", net_base=77)


def with_netns(h, body, prefix="rs", net_base=78):
    """Two network namespaces joined by a veth, a daemon in each with a
    device on its end; body(ns, ip) runs the programs."""
    if os.geteuid() != 0:
        raise t.Skip("network namespaces need root")
    tag = "%d" % (os.getpid() % 100000)
    ns = ["srd%s%sa" % (prefix, tag), "srd%s%sb" % (prefix, tag)]
    veth = ["v%s%sa" % (prefix, tag), "v%s%sb" % (prefix, tag)]
    net = os.getpid() % 250
    ip = ["10.%d.%d.1" % (net_base, net), "10.%d.%d.2" % (net_base, net)]
    made = []
    try:
        for n in ns:
            if subprocess.run(["ip", "netns", "add", n],
                              capture_output=True).returncode:
                raise t.Skip("ip netns add is not permitted here")
            made.append(n)
        sh(["ip", "link", "add", veth[0], "type", "veth", "peer", "name",
            veth[1]])
        for i in (0, 1):
            sh(["ip", "link", "set", veth[i], "netns", ns[i]])
            sh(["ip", "-n", ns[i], "addr", "add", ip[i] + "/24", "dev",
                veth[i]])
            sh(["ip", "-n", ns[i], "link", "set", veth[i], "up"])
            sh(["ip", "-n", ns[i], "link", "set", "lo", "up"])
            conf = os.path.join(h.tmp, "ns%d.conf" % i)
            with open(conf, "w") as f:
                f.write("link add srd%d netdev %s\n" % (i, veth[i]))
            h.start("daemon%d" % i, ["ip", "netns", "exec", ns[i], h.daemon,
                                     "--socket", h.socket, "--foreground",
                                     "--config", conf,
                                     "--no-default-device"])
        body(ns, ip)
    finally:
        for n in made:
            subprocess.run(["ip", "netns", "del", n], capture_output=True)


def wait_output(p, text, timeout=20):
    """Wait until p printed text (it keeps running)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in p.output():
            return
        if p.poll() is not None:
            raise t.TestFailure("%s exited (%s) before \"%s\"" %
                                (p.tag, p.rc, text))
        time.sleep(0.05)
    raise t.TestFailure("%s: no \"%s\" after %d s" % (p.tag, text, timeout))


def test_mckey(h, args):
    """Two mckey receivers join 239.1.1.1 on 127.0.0.1; once both are
    attached a sender (a full member, or send-only with -o) sends --count
    datagrams; each receiver polls until it has them all and exits 0."""
    n = args.count
    base = ["-m", "239.1.1.1", "-b", args.addr, "-C", str(n)]
    rx = [h.start("receiver%d" % i, [args.bin("mckey")] + base + args.extra)
          for i in (0, 1)]
    for p in rx:
        wait_output(p, "mckey: joined dgid: ::ffff:239.1.1.1")
    check_cm_maps(h, rx[0])
    sender = h.run("sender", [args.bin("mckey"), "-s"] + base +
                   args.sender_extra, timeout=30)
    for p in rx:
        p.wait(20)
        h.show(p)
        h.check_loaded(p)
        if p.timed_out:
            raise t.TestFailure("%s did not get its %d messages" %
                                (p.tag, n))
    for p in rx + [sender]:
        if p.rc != 0:
            raise t.TestFailure("%s exited %s" % (p.tag, p.rc))
        out = p.output()
        for want in ("mckey: joined dgid: ::ffff:239.1.1.1 mlid 0x0",
                     "data transfers complete"):
            if want not in out:
                raise t.TestFailure("%s: no \"%s\"" % (p.tag, want))


def sh(argv):
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode:
        raise t.TestFailure("%s: %s" % (" ".join(argv), r.stderr.strip()))


def wait_ns_listening(ns, sock, p, timeout=20):
    """Wait until the daemon in namespace ns holds a listener."""
    probe = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                         "t_cm.py")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if p.poll() is not None:
            raise t.TestFailure("%s exited (%s) before listening" %
                                (p.tag, p.rc))
        r = subprocess.run(["ip", "netns", "exec", ns, sys.executable, probe,
                            sock], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=os.path.join(
                               os.path.dirname(probe), "..", "rdmacore")))
        if r.returncode == 0 and r.stdout.strip() not in ("", "-1", "0"):
            return
        time.sleep(0.05)
    raise t.TestFailure("%s: no listener after %d s" % (p.tag, timeout))


# name, bytes, xfers, [iters,] total, time, Gb/sec, usec/xfer
RS_ROW = re.compile(r"^(\S+)\s+(?:\S+\s+){3,4}[\d.]+s\s+[\d.]+\s+([\d.]+)\s*$",
                    re.M)


def rs_rows(p):
    """rstream / riostream result rows: {name: usec per transfer}."""
    return {m.group(1): float(m.group(2)) for m in RS_ROW.finditer(p.output())}


def check_rs_rows(server, client, want):
    """Both sides printed the rows of the tests in want."""
    for p in (server, client):
        rows = rs_rows(p)
        missing = [n for n in want if n not in rows]
        if missing:
            raise t.TestFailure("%s: no result for %s" %
                                (p.tag, ", ".join(missing)))
        for n in want:
            t.log("%s: %s %.2f usec/xfer" % (p.tag, n, rows[n]))


RS_DEFAULT_ROWS = ("64_lat", "4k_lat", "64k_lat", "1m_lat", "64_bw",
                   "4k_bw", "64k_bw", "1m_bw")


def test_rstream(h, args):
    """Debian's rstream (rsockets) on both sides: the default series of
    latency and bandwidth tests, or one size (-S) with the options given;
    -T v makes both sides check every byte."""
    tool = args.bin(args.tool)
    srv = [tool] + args.extra
    if args.addr != "127.0.0.1":
        srv += ["-b", args.addr]
    server, client = pair(h, srv, [tool, "-s", args.addr] + args.extra,
                          timeout=120)
    custom = "-S" in args.extra
    check_rs_rows(server, client, ("custom",) if custom else RS_DEFAULT_ROWS)


def udp_bound(port):
    """Some socket is bound to UDP port (this network namespace)."""
    for name in ("/proc/net/udp", "/proc/net/udp6"):
        try:
            with open(name) as f:
                for line in f.readlines()[1:]:
                    local = line.split()[1]
                    if int(local.rsplit(":", 1)[1], 16) == port:
                        return True
        except OSError:
            pass
    return False


def test_udpong(h, args):
    """Debian's udpong (datagram rsockets) on a UDP port of its own: the
    server runs until killed; the client's run of one size (-S, -C)
    prints its row and exits 0."""
    import socket
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((args.addr, 0))
    port = str(s.getsockname()[1])
    s.close()
    tool = args.bin("udpong")
    server = h.start("server", [tool, "-b", args.addr, "-p", port] +
                     args.extra)
    deadline = time.monotonic() + 20
    while not udp_bound(int(port)):
        if time.monotonic() > deadline or server.poll() is not None:
            raise t.TestFailure("the server did not bind UDP %s" % port)
        time.sleep(0.05)
    check_cm_maps(h, server)
    client = h.run("client", [tool, "-s", args.addr, "-p", port] +
                   args.extra, timeout=60)
    server.kill()
    h.show(server)
    if client.rc != 0:
        raise t.TestFailure("client exited %s" % client.rc)
    check_rs_rows(client, client, ("custom",))


def test_rstream_netns(h, args):
    """rstream and riostream between two network namespaces: the CM and
    the rsocket protocol over UDP through the kernel, data verified."""
    def body(ns, ip):
        for tool, opts, want in (
                ("rstream", ["-S", "65536", "-C", "200", "-T", "v"],
                 ("custom",)),
                ("rstream", ["-S", "64", "-C", "1", "-I", "500"],
                 ("custom",)),
                ("riostream", ["-S", "1048576", "-C", "10", "-T", "v"],
                 ("custom",))):
            name = "%s_%s" % (tool, "_".join(o.strip("-") for o in opts))
            server = h.start(name + "_server",
                             ["ip", "netns", "exec", ns[0],
                              args.bin(tool)] + opts)
            wait_ns_listening(ns[0], h.socket, server)
            client = h.run(name + "_client",
                           ["ip", "netns", "exec", ns[1], args.bin(tool),
                            "-s", ip[0]] + opts, timeout=90)
            server.wait(30)
            h.show(server)
            h.check_loaded(server)
            for p in (server, client):
                if p.rc != 0:
                    raise t.TestFailure("%s exited %s" % (p.tag, p.rc))
            check_rs_rows(server, client, want)
    with_netns(h, body)


TESTS = {
    "rping": test_rping,
    "ucmatose": test_ucmatose,
    "udaddy": test_udaddy,
    "rdma_server": test_rdma_server,
    "rdma_xserver": test_rdma_xserver,
    "cmtime": test_cmtime,
    "refused": test_refused,
    "netns": test_netns,
    "rstream": test_rstream,
    "rstream_netns": test_rstream_netns,
    "udpong": test_udpong,
    "mckey": test_mckey,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--test", required=True, choices=sorted(TESTS))
    ap.add_argument("--name")
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--addr", default="127.0.0.1")
    ap.add_argument("--tool", default="rstream",
                    help="rstream or riostream (--test rstream)")
    ap.add_argument("--sender", dest="sender_extra", action="append",
                    default=[], help="an extra option for mckey -s")
    ap.add_argument("extra", nargs="*")
    args = ap.parse_args()

    def binary(name):
        return t.need_binary("/usr/bin/" + name)

    args.bin = binary
    return t.main(args.name or args.test, lambda h: TESTS[args.test](h,
                                                                      args))


if __name__ == "__main__":
    sys.exit(main())
