#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The system daemon as systemd's softrdmad.socket starts it.

  pkg_socket_activation.py --daemon build/bin/softrdmad --lib build/lib

In a new network namespace (its own abstract socket names), this script
does what systemd does for the socket unit: binds and listens on the
abstract SOCK_SEQPACKET name @softrdma (ListenSequentialPacket=@softrdma)
as root, then execs softrdmad with the socket as fd 3, LISTEN_FDS=1 and
LISTEN_PID its pid.  An ordinary user then runs Debian's ibv_devinfo and
ibv_rc_pingpong on the build's libraries with no SOFTRDMA_SOCKET and a
SOFTRDMAD that does not exist: they work only if the library takes root's
daemon on @softrdma for the system's, and no daemon of the user's may
appear.  Skipped (77) without root, namespaces or ibverbs-utils.
"""

import argparse
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import t_pkg as t

USER = "srd-pkg"


def user_env(lib):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SOFTRDMA", "LD_", "LISTEN_"))}
    env["LD_LIBRARY_PATH"] = lib
    env["SOFTRDMAD"] = "/nonexistent/softrdmad"
    return env


def as_user(argv):
    return ["setpriv", "--reuid=" + USER, "--regid=" + USER,
            "--init-groups", "--"] + argv


def own_daemons():
    """Per-user daemons of this network namespace (those of others' tests
    serve names of their own namespaces)."""
    found = []
    here = os.readlink("/proc/self/ns/net")
    for d in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            if os.readlink(os.path.join(os.path.dirname(d),
                                        "ns/net")) != here:
                continue
            with open(d, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"--socket" in argv:
            i = argv.index(b"--socket")
            if i + 1 < len(argv) and argv[i + 1].startswith(b"softrdma."):
                found.append(d)
    return found


def inside(args):
    """In the new network namespace."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    tmp = tempfile.mkdtemp(prefix="srdact.")
    os.chmod(tmp, 0o755)
    lib = os.path.join(tmp, "lib")
    os.mkdir(lib)
    for f in glob.glob(os.path.join(args.lib, "*.so*")):
        shutil.copy2(f, lib, follow_symlinks=False)
    os.chmod(lib, 0o755)

    # systemd's part: the socket, then the service with it as fd 3.
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    sock.bind("\0softrdma")
    sock.listen(128)
    env = {"PATH": "/usr/bin:/bin", "LISTEN_FDS": "1"}
    fd = sock.fileno()
    move = "" if fd == 3 else "exec 3<&%d %d<&-; " % (fd, fd)
    # sh's $$ is the pid softrdmad keeps through exec.
    daemon = subprocess.Popen(
        ["/bin/sh", "-c", move + 'LISTEN_PID=$$ exec "$0" '
         '--foreground --no-udp --config ""', args.daemon],
        env=env, pass_fds=(fd,), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT)
    # systemd keeps its copy open (a daemon that does not take it leaves
    # clients queued on it); so does this script, until the end.
    try:
        try:
            r = subprocess.run(as_user(["/usr/bin/ibv_devinfo"]),
                               env=user_env(lib), capture_output=True,
                               text=True, timeout=30)
        except subprocess.TimeoutExpired:
            raise t.Failure("ibv_devinfo hung: nobody serves @softrdma")
        t.log(r.stdout + r.stderr)
        if r.returncode != 0 or "softrdma0" not in r.stdout:
            raise t.Failure("ibv_devinfo as %s: exit %d" % (USER,
                                                            r.returncode))
        srv = subprocess.Popen(as_user(["/usr/bin/ibv_rc_pingpong", "-g",
                                        "0", "-n", "500", "-c"]),
                               env=user_env(lib), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        cli = None
        for _ in range(100):
            cli = subprocess.run(as_user(["/usr/bin/ibv_rc_pingpong", "-g",
                                          "0", "-n", "500", "-c",
                                          "127.0.0.1"]),
                                 env=user_env(lib), capture_output=True,
                                 text=True, timeout=60)
            if cli.returncode == 0 or srv.poll() is not None:
                break
            time.sleep(0.1)
        out, _ = srv.communicate(timeout=60)
        t.log(out + cli.stdout + cli.stderr)
        if srv.returncode != 0 or cli.returncode != 0:
            raise t.Failure("ibv_rc_pingpong as %s: server %s, client %s" %
                            (USER, srv.returncode, cli.returncode))
        if own_daemons():
            raise t.Failure("a daemon of the user's ran: %s" % own_daemons())
        if daemon.poll() is not None:
            raise t.Failure("the activated daemon exited %s" % daemon.returncode)
        t.log("%s used root's socket-activated daemon (pid %d)" %
              (USER, daemon.pid))
    finally:
        daemon.terminate()
        try:
            out, _ = daemon.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            daemon.kill()
            out, _ = daemon.communicate()
        t.log("--- softrdmad log\n" + out.decode(errors="replace"))
        sock.close()
        shutil.rmtree(tmp, ignore_errors=True)
    if "serving @softrdma" not in out.decode(errors="replace"):
        raise t.Failure("the daemon did not log serving @softrdma")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--inside", action="store_true")
    args = ap.parse_args()

    def body():
        if not os.access("/usr/bin/ibv_rc_pingpong", os.X_OK):
            raise t.Skip("Debian's ibverbs-utils is not installed")
        if os.geteuid() != 0:
            raise t.Skip("binding the system daemon's name needs root")
        if args.inside:
            return inside(args)
        for tool in ("unshare", "setpriv", "useradd", "ip"):
            if not shutil.which(tool):
                raise t.Skip("no %s" % tool)
        r = subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin",
                            USER], capture_output=True, text=True)
        if r.returncode not in (0, 9):
            raise t.Skip("useradd: %s" % r.stderr.strip())
        r = subprocess.run(["unshare", "--net", "true"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise t.Skip("unshare --net: %s" % r.stderr.strip())
        r = subprocess.run(["unshare", "--net", sys.executable,
                            os.path.abspath(__file__), "--inside",
                            "--daemon", args.daemon, "--lib", args.lib],
                           timeout=240)
        if r.returncode == t.SKIP:
            raise t.Skip("inside the namespace")
        if r.returncode != 0:
            raise t.Failure("inside the namespace: exit %d" % r.returncode)

    return t.main("pkg_socket_activation%s" % (" (inside)" if args.inside
                                               else ""), body)


if __name__ == "__main__":
    sys.exit(main())
