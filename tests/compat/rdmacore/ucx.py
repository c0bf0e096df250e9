#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Debian's UCX (1.13) over softrdma0: ucx_perftest, UCT and UCP.

  ucx.py --test am_lat      UCT rc_verbs: active message latency
  ucx.py --test put_bw      UCT rc_verbs: zero-copy RDMA WRITEs of 64 KiB
  ucx.py --test am_bw       UCT rc_verbs: 4 KiB active messages, copied
  ucx.py --test ud_am_lat   UCT ud_verbs: active message latency
  ucx.py --test tag_lat     UCP tag matching over rc_verbs + ud_verbs
  ucx.py --test tag_bw      UCP, 1 MiB messages (rendezvous: RDMA READ)

A ucx_perftest server listens on a free port; the client runs the test
against 127.0.0.1 on device softrdma0:1 and must exit 0 with a "Final:"
line of finite, positive figures and no error.

UCX's UD transport drops a received packet whose GRH destination is not
one of the device's GIDs (UCX_UD_VERBS_ETH_DGID_CHECK, on); it learns
whether the GRH area holds an IPv4 header (bytes 20-39) or an IPv6 one
from wc.sl, ConnectX's way, which softrdma reports too.

UCX takes an RDMA device only if /dev/infiniband/<its dev_name> is a
character device (uct_ib_device_is_accessible); softrdma has no kernel
device, so as root the test makes the node uverbs0 (major 231, as the
kernel's) when it is missing and removes it at the end.  Nothing opens it:
our libibverbs talks to the daemon.  Not root and no node: skipped (77).

  ucx.py --test am_lat --user dist/softrdma-tmpfiles.conf

runs the test as an ordinary user instead, after doing once what a
package does at install (systemd-tmpfiles --create on the project's
tmpfiles.d file, which makes the nodes for good).  The user (srd-ucx,
made with useradd -M when missing) runs the server, the client and so
its own daemon, from a copy of the build's libraries and daemon it can
read.  Needs root to set that up, else skipped (77).
"""

import argparse
import glob
import math
import os
import re
import shutil
import stat
import subprocess
import sys

import t_compat as t

NODE = "/dev/infiniband/uverbs0"
FINAL = re.compile(r"^Final:\s+(.*)$", re.M)
UCT_RC = ["-d", "softrdma0:1", "-x", "rc_verbs"]
UCT_UD = ["-d", "softrdma0:1", "-x", "ud_verbs"]
UCP_ENV = {"UCX_TLS": "rc_verbs,ud_verbs,self",
           "UCX_NET_DEVICES": "softrdma0:1"}
# test: (server options, client options, environment)
ARGS = {
    "am_lat": (UCT_RC, ["-t", "am_lat", "-n", "20000"], {}),
    "put_bw": (UCT_RC, ["-t", "put_bw", "-D", "zcopy", "-s", "65536",
                        "-n", "5000"], {}),
    "am_bw": (UCT_RC, ["-t", "am_bw", "-D", "bcopy", "-s", "4096",
                       "-n", "20000"], {}),
    "ud_am_lat": (UCT_UD, ["-t", "am_lat", "-n", "20000"], {}),
    "tag_lat": ([], ["-t", "tag_lat", "-n", "20000"], UCP_ENV),
    "tag_bw": ([], ["-t", "tag_bw", "-s", "1048576", "-n", "500"],
               UCP_ENV),
}


def char_node(path):
    try:
        return stat.S_ISCHR(os.stat(path).st_mode)
    except OSError:
        return False


def make_node():
    """True when this test made the node (and so removes it)."""
    if char_node(NODE):
        return False
    if os.geteuid() != 0:
        raise t.Skip("UCX needs %s as a character device and only root "
                     "can make it" % NODE)
    try:
        os.makedirs(os.path.dirname(NODE), exist_ok=True)
        os.mknod(NODE, 0o600 | stat.S_IFCHR, os.makedev(231, 192))
    except OSError as e:
        # A container without CAP_MKNOD, a read-only /dev.
        raise t.Skip("cannot make %s: %s" % (NODE, e.strerror))
    return True


USER = "srd-ucx"


def tmpfiles_create(conf):
    """What a package's postinst does: systemd-tmpfiles --create."""
    tool = shutil.which("systemd-tmpfiles")
    if not tool:
        raise t.Skip("no systemd-tmpfiles")
    r = subprocess.run([tool, "--create", conf], capture_output=True,
                       text=True, timeout=30)
    if r.returncode != 0:
        raise t.TestFailure("systemd-tmpfiles --create %s: exit %d: %s" %
                            (conf, r.returncode, r.stderr.strip()))
    st = os.stat(NODE)
    if not stat.S_ISCHR(st.st_mode) or (st.st_mode & 0o666) != 0o666:
        raise t.TestFailure("%s after systemd-tmpfiles: mode %o" %
                            (NODE, st.st_mode))


def as_user(h):
    """Prefix running a command as USER, with the build copied where that
    user can read it."""
    if os.geteuid() != 0:
        raise t.Skip("making a user and the device nodes needs root")
    for tool in ("setpriv", "useradd"):
        if not shutil.which(tool):
            raise t.Skip("no %s" % tool)
    r = subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", USER],
                       capture_output=True, text=True, timeout=30)
    if r.returncode not in (0, 9):  # 9: the user exists
        raise t.Skip("useradd %s: %s" % (USER, r.stderr.strip()))
    # The build may sit where only root reads (/root): a copy in the
    # test's directory, which the user's processes also write their
    # LD_DEBUG output to, into files setpriv (still root) makes: umask 0.
    os.chmod(h.tmp, 0o777)
    os.umask(0)
    lib = os.path.join(h.tmp, "lib")
    os.mkdir(lib)
    for f in glob.glob(os.path.join(h.libdir, "*.so*")):
        shutil.copy2(f, lib, follow_symlinks=False)
    daemon = os.path.join(h.tmp, "softrdmad")
    shutil.copy2(h.daemon, daemon)
    for d in (h.tmp, lib):
        os.chmod(d, os.stat(d).st_mode | 0o755)
    h.libdir = os.path.realpath(lib)
    h.daemon = daemon
    h.env["LD_LIBRARY_PATH"] = lib
    h.env["SOFTRDMAD"] = daemon
    h.env["HOME"] = h.tmp
    return ["setpriv", "--reuid=" + USER, "--regid=" + USER,
            "--init-groups", "--"]


def body(h, args):
    binary = t.need_binary("/usr/bin/ucx_perftest")
    if args.user:
        prefix = as_user(h)
        tmpfiles_create(args.user)
        run(h, binary, args.test, prefix)
        return
    made = make_node()
    try:
        run(h, binary, args.test)
    finally:
        if made:
            os.unlink(NODE)


def run(h, binary, test, prefix=()):
    port = str(t.free_port())
    dev, opts, env = ARGS[test]
    dev = dev + ["-p", port]
    binary = list(prefix) + [binary]
    server = h.start("server", binary + dev, extra_env=env)
    h.wait_listen(server, int(port))
    client = h.run("client", binary + ["127.0.0.1"] + dev + opts,
                   timeout=120, extra_env=env)
    out, err = client.output(), client.errors()
    if client.rc != 0:
        raise t.TestFailure("client exited %s" % client.rc)
    if re.search(r"ERROR|failed", out + err):
        raise t.TestFailure("client printed an error")
    final = FINAL.search(out)
    if not final:
        raise t.TestFailure("no \"Final:\" line")
    figs = final.group(1).split()
    if len(figs) < 7:
        raise t.TestFailure("short \"Final:\" line: %s" % final.group(1))
    for v in figs[1:]:
        f = float(v)
        if math.isnan(f) or math.isinf(f) or f <= 0:
            raise t.TestFailure("figure %s in \"Final:\" line" % v)
    t.log("%s: %s" % (test, final.group(1)))
    server.kill()
    h.show(server)
    h.check_loaded(client)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--test", required=True, choices=sorted(ARGS))
    ap.add_argument("--user", metavar="TMPFILES_CONF",
                    help="run as an ordinary user after systemd-tmpfiles "
                    "--create TMPFILES_CONF")
    args = ap.parse_args()
    name = "ucx_" + ("user_" if args.user else "") + args.test
    return t.main(name, lambda h: body(h, args))


if __name__ == "__main__":
    sys.exit(main())
