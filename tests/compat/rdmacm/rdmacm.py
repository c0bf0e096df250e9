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
import socket
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
    """rping (-V -v), rdma_server/rdma_client, ucmatose and udaddy between
    two network namespaces joined by a veth, each with a daemon of its own
    on its end: the CM's MADs and the data cross the kernel's UDP stack."""
    def body(ns, ip):
        for name, srv, cli, want in (
                ("rping", ["rping", "-s", "-a", ip[0], "-C", "10", "-V"],
                 ["rping", "-c", "-a", ip[0], "-C", "10", "-V", "-v"],
                 None),
                ("rdma_server", ["rdma_server"],
                 ["rdma_client", "-s", ip[0]], "end 0"),
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
            # -v: the client prints every ping's data as it came back.
            if name == "rping" and "ping data: rdma-ping-9:" not in \
                    client.output():
                raise t.TestFailure("rping -v: no data of ping 9")

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


# --- librspreload.so: unmodified socket programs over rsockets ---------

DEBIAN_PRELOAD = "/usr/lib/x86_64-linux-gnu/rsocket/librspreload.so"


def preload_lib(args):
    """The preload library of the run: Debian's or the build's."""
    if args.preload == "debian":
        for lib in (DEBIAN_PRELOAD, DEBIAN_PRELOAD + ".1"):
            if os.path.isfile(lib):
                return lib
        raise t.Skip("%s is not installed (librdmacm1)" % DEBIAN_PRELOAD)
    lib = os.environ.get("SRD_RSPRELOAD", "")
    if not os.path.isfile(lib):
        raise t.TestFailure("SRD_RSPRELOAD must name the build's "
                            "librspreload.so (is: %r)" % lib)
    return lib


def preload_env(args, lib):
    env = {"LD_PRELOAD": lib}
    if args.fork:
        env["RDMAV_FORK_SAFE"] = "1"
    return env


def port_stats(h, ns=None):
    """Sums of the daemon's port counters (in namespace ns)."""
    tool = os.environ.get("SOFTRDMA_TOOL", "")
    if not os.access(tool, os.X_OK):
        raise t.TestFailure("SOFTRDMA_TOOL must name the softrdma tool "
                            "(is: %r)" % tool)
    argv = [tool, "-s", h.socket, "-n", "-j", "statistic"]
    if ns:
        argv = ["ip", "netns", "exec", ns] + argv
    r = subprocess.run(argv, capture_output=True, text=True)
    out = {"tx_bytes": 0, "tx_udp_packets": 0, "tx_packets": 0}
    if r.returncode and "cannot reach" in r.stderr:
        return out  # not started yet: it will count from zero
    if r.returncode:
        raise t.TestFailure("%s: %s" % (" ".join(argv), r.stderr.strip()))
    import json
    for port in json.loads(r.stdout):
        for k, v in port.items():
            if isinstance(v, int) and k not in ("ifindex", "port"):
                out[k] = out.get(k, 0) + v
    return out


def check_preload_maps(h, p, lib):
    """While p runs: it mapped the preload library and our librdmacm."""
    check_cm_maps(h, p)
    with open("/proc/%d/maps" % p.pid) as f:
        maps = f.read()
    if os.path.realpath(lib) not in maps and lib not in maps:
        raise t.TestFailure("%s: %s is not in /proc/%d/maps" %
                            (p.tag, lib, p.pid))


def check_moved(h, before, after, want, what):
    """The daemon's ports moved at least `want` bytes since `before`."""
    sent = after["tx_bytes"] - before["tx_bytes"]
    t.log("%s: the daemon sent %d bytes (at least %d expected)" %
          (what, sent, want))
    if sent < want:
        raise t.TestFailure("%s: the daemon sent %d bytes, not the %d the "
                            "program moved: not over rsockets" %
                            (what, sent, want))


def bulk_pair(h, args, lib, addr, wrap=(lambda side, argv: argv),
              stats=(lambda: None)):
    """tcp_bulk server and client under the preload library; returns the
    client's output."""
    bulk = os.environ.get("SRD_TCP_BULK", "")
    if not os.access(bulk, os.X_OK):
        raise t.TestFailure("SRD_TCP_BULK must name tcp_bulk (is: %r)" %
                            bulk)
    env = preload_env(args, lib)
    port = str(t.free_port())
    total = args.count
    server = h.start("server", wrap(0, [bulk, "server", addr, port] +
                                    (["fork"] if args.fork else [])),
                     extra_env=env)
    wait_output(server, "listening")
    check_preload_maps(h, server, lib)
    if not args.fork and t.listening(int(port)):
        raise t.TestFailure("a kernel TCP socket listens on %s" % port)
    before = stats()
    client = h.run("client", wrap(1, [bulk, "client", addr, port,
                                      str(total)] + args.extra),
                   timeout=60, extra_env=env)
    server.wait(30)
    h.show(server)
    h.check_loaded(server)
    for p in (server, client):
        if p.rc != 0:
            raise t.TestFailure("%s exited %s" % (p.tag, p.rc))
    if "ok server echoed %d bytes" % total not in server.output():
        raise t.TestFailure("server: no \"ok\" for %d bytes" % total)
    if "ok client %d bytes" % total not in client.output():
        raise t.TestFailure("client: no \"ok\" for %d bytes" % total)
    return before, client


def test_preload(h, args):
    """tcp_bulk (an ordinary TCP program) with the preload library in both
    processes: non-blocking connect with SO_ERROR, poll or select over the
    socket and a pipe, dup2, echo checked both ways, the end of the stream;
    the daemon's counters must show the bytes."""
    lib = preload_lib(args)
    before, _ = bulk_pair(h, args, lib, args.addr,
                          stats=lambda: port_stats(h))
    check_moved(h, before, port_stats(h), 2 * args.count, "loopback")


def test_preload_netns(h, args):
    """tcp_bulk between two network namespaces under the preload library:
    the rsocket protocol over RoCEv2/UDP through the kernel, and no TCP."""
    lib = preload_lib(args)

    def body(ns, ip):
        def wrap(side, argv):
            return ["ip", "netns", "exec", ns[side]] + argv

        def stats():
            return [port_stats(h, n) for n in ns]

        before, _ = bulk_pair(h, args, lib, ip[0], wrap, stats)
        after = stats()
        for i in (0, 1):
            check_moved(h, before[i], after[i], args.count, ns[i])
            udp = after[i]["tx_udp_packets"] - before[i]["tx_udp_packets"]
            if udp <= 0:
                raise t.TestFailure("%s: no UDP packets sent" % ns[i])
    with_netns(h, body, prefix="pl", net_base=79)


def iperf3_run(h, tag, addr, env, secs):
    """iperf3 -s -1 / iperf3 -c: the bytes received and bits per second."""
    import json
    iperf = t.need_binary("/usr/bin/iperf3")
    port = str(t.free_port())
    server = h.start(tag + "_server", [iperf, "-s", "-1", "--forceflush",
                                       "-p", port],
                     extra_env=env)
    wait_output(server, "Server listening")
    client = h.start(tag + "_client", [iperf, "-c", addr, "-p", port,
                                       "-t", str(secs), "-J"],
                     extra_env=env)
    client.wait(60)
    server.wait(20)
    h.show(client)
    h.show(server)
    if client.timed_out or server.timed_out:
        raise t.TestFailure("%s: iperf3 did not finish" % tag)
    if env:
        h.check_loaded(client)
    if client.rc != 0 or server.rc != 0:
        raise t.TestFailure("%s: iperf3 exited %s / %s" %
                            (tag, client.rc, server.rc))
    end = json.loads(client.output())["end"]["sum_received"]
    t.log("%s: %d bytes in %.2f s: %.2f Gbit/s" %
          (tag, end["bytes"], end["seconds"],
           end["bits_per_second"] / 1e9))
    return server, end


def test_preload_iperf3(h, args):
    """iperf3 server and client under the preload library, then plain
    kernel TCP in the same run for comparison."""
    lib = preload_lib(args)
    env = preload_env(args, lib)
    before = port_stats(h)
    server, rs = iperf3_run(h, "rsockets", args.addr, env, 2)
    h.check_loaded(server)
    check_moved(h, before, port_stats(h), rs["bytes"], "iperf3")
    _, tcp = iperf3_run(h, "kernel_tcp", args.addr, {}, 2)
    t.log("iperf3 on %s: rsockets (%s preload) %.2f Gbit/s, kernel TCP "
          "%.2f Gbit/s" % (args.addr, args.preload,
                           rs["bits_per_second"] / 1e9,
                           tcp["bits_per_second"] / 1e9))


def test_preload_fallback(h, args):
    """A client under the preload library, a kernel TCP server without it:
    the rsocket connect is refused and the library carries on over TCP
    (rdma-core's asks rgetsockname(fd, NULL, &zero) for the family)."""
    lib = preload_lib(args)
    bulk = os.environ.get("SRD_TCP_BULK", "")
    port = t.free_port()
    server = h.start("server", [bulk, "server", args.addr, str(port)])
    h.wait_listen(server, port)
    # A non-blocking connect may learn of the refusal after connect()
    # returned: rdma-core's then fails, ours moves to TCP when SO_ERROR
    # is read.  "-- nonblock" tries that.
    mode = [] if "nonblock" in args.extra else ["blocking"]
    client = h.start("client", [bulk, "client", args.addr, str(port),
                                str(args.count)] + mode,
                     extra_env=preload_env(args, lib))
    client.wait(60)
    server.wait(20)
    for p in (client, server):
        h.show(p)
        if p.timed_out or p.rc != 0:
            raise t.TestFailure("%s exited %s" % (p.tag, p.rc))
    h.check_loaded(client)
    if "ok client %d bytes" % args.count not in client.output():
        raise t.TestFailure("client: no \"ok\"")
    sent = port_stats(h)["tx_bytes"]
    if sent >= args.count:
        raise t.TestFailure("the daemon sent %d bytes: the data did not "
                            "go over TCP" % sent)


def test_preload_http(h, args):
    """python3 -m http.server (a thread per request) and curl (a
    non-blocking connect and poll) under the preload library: a file of
    --count bytes arrives intact."""
    curl = t.need_binary("/usr/bin/curl")
    lib = preload_lib(args)
    env = preload_env(args, lib)
    www = os.path.join(h.tmp, "www")
    os.mkdir(www)
    blob = os.urandom(args.count)
    with open(os.path.join(www, "blob"), "wb") as f:
        f.write(blob)
    port = str(t.free_port())
    before = port_stats(h)
    server = h.start("server", [sys.executable, "-u", "-m", "http.server",
                                port, "--bind", args.addr, "--directory",
                                www], extra_env=env)
    wait_output(server, "Serving HTTP")
    if t.listening(int(port)):
        raise t.TestFailure("a kernel TCP socket listens on %s" % port)
    got = os.path.join(h.tmp, "got")
    host = "[%s]" % args.addr if ":" in args.addr else args.addr
    client = h.run("client", [curl, "-sS", "-o", got, "-w",
                              "%{http_code} %{size_download} "
                              "%{speed_download}\n",
                              "http://%s:%s/blob" % (host, port)],
                   timeout=60, extra_env=env)
    server.kill()
    h.show(server)
    if client.rc != 0 or not client.output().startswith("200 "):
        raise t.TestFailure("curl exited %s: %s" % (client.rc,
                                                    client.output()))
    with open(got, "rb") as f:
        if f.read() != blob:
            raise t.TestFailure("the file arrived changed")
    check_moved(h, before, port_stats(h), args.count, "http")


PY_UDP = r"""
import socket, sys
n = int(sys.argv[4])
if sys.argv[1] == "server":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((sys.argv[2], int(sys.argv[3])))
    print("bound", flush=True)
    for i in range(n):
        d, a = s.recvfrom(2000)
        s.sendto(d.upper(), a)
    print("server answered %d" % n, flush=True)
else:
    c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for i in range(n):
        c.sendto(b"datagram %d" % i, (sys.argv[2], int(sys.argv[3])))
        d, a = c.recvfrom(2000)
        if d != b"DATAGRAM %d" % i or a[1] != int(sys.argv[3]):
            sys.exit("answer %d: %r from %r" % (i, d, a))
    print("client got %d" % n, flush=True)
"""


def test_preload_udp(h, args):
    """python3 UDP sockets under the preload library become datagram
    rsockets: --count datagrams answered one by one; the client's socket
    is unbound, so its first datagram finds its source address (a socket
    librdmacm opens, which must not become an rsocket itself)."""
    lib = preload_lib(args)
    env = preload_env(args, lib)
    script = os.path.join(h.tmp, "udp.py")
    with open(script, "w") as f:
        f.write(PY_UDP)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((args.addr, 0))
    port = str(s.getsockname()[1])
    s.close()
    n = str(args.count)
    server = h.start("server", [sys.executable, script, "server", args.addr,
                                port, n], extra_env=env)
    wait_output(server, "bound")
    client = h.run("client", [sys.executable, script, "client", args.addr,
                              port, n], timeout=60, extra_env=env)
    server.wait(20)
    h.show(server)
    for p, want in ((server, "server answered " + n),
                    (client, "client got " + n)):
        if p.rc != 0 or want not in p.output():
            raise t.TestFailure("%s exited %s without \"%s\"" %
                                (p.tag, p.rc, want))
    sent = port_stats(h)["tx_packets"]
    t.log("the daemon sent %d packets" % sent)
    # The first datagram each way may go over UDP; the rest over UD QPs.
    if sent < 2 * args.count - 2:
        raise t.TestFailure("the daemon sent %d packets for %d datagrams "
                            "each way" % (sent, args.count))


PY_ECHO = r"""
import socket, sys
fam = socket.AF_INET6 if ":" in sys.argv[2] else socket.AF_INET
if sys.argv[1] == "server":
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((sys.argv[2], int(sys.argv[3])))
    s.listen(1)
    print("listening", flush=True)
    c, peer = s.accept()
    n = 0
    while True:
        d = c.recv(65536)
        if not d:
            break
        c.sendall(d)
        n += len(d)
    c.close()
    print("server echoed %d" % n, flush=True)
else:
    c = socket.create_connection((sys.argv[2], int(sys.argv[3])))
    total, got = int(sys.argv[4]), 0
    for off in range(0, total, 65536):
        block = bytes((off + i) * 7 % 251 for i in range(min(65536,
                                                             total - off)))
        c.sendall(block)
        back = b""
        while len(back) < len(block):
            d = c.recv(len(block) - len(back))
            if not d:
                sys.exit("early EOF")
            back += d
        if back != block:
            sys.exit("echo differs at %d" % off)
        got += len(back)
    c.shutdown(socket.SHUT_WR)
    if c.recv(1) != b"":
        sys.exit("no EOF")
    print("client checked %d" % got, flush=True)
"""


def test_preload_python(h, args):
    """python3's socket module (socket with SOCK_CLOEXEC, accept4,
    sendall, shutdown) under the preload library."""
    lib = preload_lib(args)
    env = preload_env(args, lib)
    script = os.path.join(h.tmp, "echo.py")
    with open(script, "w") as f:
        f.write(PY_ECHO)
    port = str(t.free_port())
    before = port_stats(h)
    server = h.start("server", [sys.executable, script, "server", args.addr,
                                port], extra_env=env)
    wait_output(server, "listening")
    if t.listening(int(port)):
        raise t.TestFailure("a kernel TCP socket listens on %s" % port)
    client = h.run("client", [sys.executable, script, "client", args.addr,
                              port, str(args.count)], timeout=60,
                   extra_env=env)
    server.wait(20)
    h.show(server)
    for p, want in ((server, "server echoed %d" % args.count),
                    (client, "client checked %d" % args.count)):
        if p.rc != 0 or want not in p.output():
            raise t.TestFailure("%s exited %s without \"%s\"" %
                                (p.tag, p.rc, want))
    check_moved(h, before, port_stats(h), 2 * args.count, "python3")


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
    "preload": test_preload,
    "preload_netns": test_preload_netns,
    "preload_iperf3": test_preload_iperf3,
    "preload_python": test_preload_python,
    "preload_fallback": test_preload_fallback,
    "preload_http": test_preload_http,
    "preload_udp": test_preload_udp,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--test", required=True, choices=sorted(TESTS))
    ap.add_argument("--name")
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--addr", default="127.0.0.1")
    ap.add_argument("--tool", default="rstream",
                    help="rstream or riostream (--test rstream)")
    ap.add_argument("--preload", choices=("debian", "ours"),
                    default="ours", help="which librspreload.so")
    ap.add_argument("--fork", action="store_true",
                    help="RDMAV_FORK_SAFE=1, a forking server")
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
