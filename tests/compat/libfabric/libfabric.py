#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Debian's libfabric 1.17 (libfabric-bin) on softrdma, in one host.

  libfabric.py --test info        fi_info: MSG, RDM and DGRAM endpoints
  libfabric.py --test msg         fi_pingpong -p verbs -e msg
  libfabric.py --test rdm         fi_pingpong -p "verbs;ofi_rxm" -e rdm
  libfabric.py --test dgram       fi_pingpong -p verbs -e dgram

libfabric's verbs provider offers MSG endpoints (and RDM ones through
ofi_rxm) only on devices with an address on a non-loopback interface, so
the test does what README.md tells a user to do: `softrdma link add` a
device on the host's interface (the first one up with a global IPv4
address; none: skipped).  The daemon is the test's own, the traffic stays
in it (its in-memory wire).  fi_pingpong runs with -c (every buffer is
checked); both sides must exit 0 and print a row for every size, and
every process must have loaded our libibverbs.so.1 and librdmacm.so.1.

ofi_rxm sizes its CQ for FI_UNIVERSE_SIZE (256) peers: 65536 entries,
more than rxe's (and our) max_cqe of 32767, so RDM runs with 64.
"""

import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "rdmacore"))
import t_compat as t  # noqa: E402

DEV = "fab0"
ROW = re.compile(r"^(\d+[km]?)\s+(\d+k?)\s+=\S+\s+\S+\s+\S+s\s+([\d.]+)\s+"
                 r"([\d.]+)\s", re.M)
# test: (provider, endpoint type, environment)
ARGS = {
    "msg": ("verbs", "msg", {}),
    "rdm": ("verbs;ofi_rxm", "rdm", {"FI_UNIVERSE_SIZE": "64"}),
    # Addresses go through fi_pingpong's control socket: no name server
    # (a fixed TCP port) is needed.
    "dgram": ("verbs", "dgram", {"FI_VERBS_DGRAM_USE_NAME_SERVER": "0"}),
}


def host_interface():
    """(name, IPv4 address) of an interface up with a global address."""
    try:
        out = subprocess.run(["ip", "-o", "-4", "addr", "show", "up",
                              "scope", "global"], capture_output=True,
                             text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        raise t.Skip("no ip(8) to find a network interface")
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 4 and f[2] == "inet" and f[1] != "lo":
            return f[1].split("@")[0], f[3].split("/")[0]
    raise t.Skip("no interface with a global IPv4 address (libfabric's "
                 "verbs provider ignores loopback)")


def add_device(h):
    iface, addr = host_interface()
    admin = os.path.join(os.path.dirname(h.daemon), "softrdma")
    p = h.start("link-add", [admin, "link", "add", DEV, "netdev", iface])
    p.wait(30)
    h.show(p)
    if p.rc != 0:
        raise t.TestFailure("softrdma link add %s netdev %s: exit %s" %
                            (DEV, iface, p.rc))
    t.log("device %s on %s (%s)" % (DEV, iface, addr))
    return addr


def domains(h, tag, argv, env=None):
    """(provider, domain, endpoint type) of each fi_info entry."""
    p = h.run(tag, argv, 60, env)
    if p.rc != 0:
        raise t.TestFailure("%s exited %s" % (tag, p.rc))
    out = p.output()
    return re.findall(r"provider: (\S+)\s+fabric: \S+\s+domain: (\S+)\s+"
                      r"version: \S+\s+type: (\S+)", out)


def test_info(h, fi_info):
    add_device(h)
    msg = domains(h, "info-msg", [fi_info, "-p", "verbs", "-t", "FI_EP_MSG"])
    if ("verbs", DEV, "FI_EP_MSG") not in msg:
        raise t.TestFailure("fi_info -p verbs -e msg: no MSG endpoint on "
                            "%s (%s)" % (DEV, msg))
    rdm = domains(h, "info-rdm", [fi_info, "-p", "verbs;ofi_rxm", "-t",
                                  "FI_EP_RDM"])
    if ("verbs;ofi_rxm", DEV, "FI_EP_RDM") not in rdm:
        raise t.TestFailure("fi_info -p 'verbs;ofi_rxm' -e rdm: no RDM "
                            "endpoint on %s (%s)" % (DEV, rdm))
    dgram = domains(h, "info-dgram", [fi_info, "-p", "verbs", "-t",
                                      "FI_EP_DGRAM"])
    for dev in ("softrdma0", DEV):
        if ("verbs", dev + "-dgram", "FI_EP_DGRAM") not in dgram:
            raise t.TestFailure("fi_info -p verbs -e dgram: no DGRAM "
                                "endpoint on %s (%s)" % (dev, dgram))


def test_pingpong(h, binary, test):
    addr = add_device(h)
    prov, ep, env = ARGS[test]
    port = t.free_port()
    common = ["-p", prov, "-e", ep, "-c", "-I", "50"]
    server = h.start("server", [binary] + common + ["-B", str(port)],
                     extra_env=env)
    h.wait_listen(server, port)
    client = h.run("client", [binary] + common + ["-P", str(port), addr],
                   timeout=120, extra_env=env)
    server.wait(30)
    h.show(server)
    h.check_loaded(server)
    for p in (client, server):
        if p.timed_out or p.rc != 0:
            raise t.TestFailure("%s exited %s" % (p.tag, p.rc))
        text = p.output() + p.errors()
        if re.search(r"error|fail", text, re.I):
            raise t.TestFailure("%s printed an error" % p.tag)
        rows = ROW.findall(p.output())
        # -S all: 64 B to 1 MiB (DGRAM: up to the path MTU, 1024 on
        # an Ethernet interface).
        if len(rows) < (3 if ep == "dgram" else 6) or rows[0][0] != "64":
            raise t.TestFailure("%s: %d result rows" % (p.tag, len(rows)))
        for size, _, mbs, usec in rows:
            if float(usec) <= 0 or float(mbs) < 0:
                raise t.TestFailure("%s: row %s: %s usec" %
                                    (p.tag, size, usec))
    t.log("%s: %s" % (test, ", ".join("%s %s us %s MB/s" % (r[0], r[3], r[2])
                                      for r in ROW.findall(
                                          client.output()))))


def body(h, args):
    if args.test == "info":
        test_info(h, t.need_binary("/usr/bin/fi_info"))
    else:
        test_pingpong(h, t.need_binary("/usr/bin/fi_pingpong"), args.test)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--test", required=True,
                    choices=["info"] + sorted(ARGS))
    args = ap.parse_args()
    return t.main("libfabric_" + args.test, lambda h: body(h, args))


if __name__ == "__main__":
    sys.exit(main())
