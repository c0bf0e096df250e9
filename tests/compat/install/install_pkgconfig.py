#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An installed tree is complete and usable through pkg-config.

  install_pkgconfig.py --build build --cmake cmake --cc cc \
                       --client installed_client.c

Installs the build with 'cmake --install --prefix' into a temporary
directory, checks the libraries, headers, pkg-config files, daemon, tools
and man pages are there, builds installed_client.c with the flags of
'pkg-config --cflags --libs libibverbs' and runs it with LD_LIBRARY_PATH on
the installed lib dir, a private SOFTRDMA_SOCKET and no SOFTRDMAD: the
installed library must start the installed daemon by itself and softrdma0
must be listed and open.  The daemon is stopped at the end.
librdmacm.pc is reported when absent, not failed on.
Exit 0 pass, 1 fail, 77 when pkg-config is missing.
"""

import argparse
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

fails = 0


def fail(msg):
    global fails
    fails += 1
    print("FAIL " + msg)


def find(prefix, pattern):
    """Paths under prefix matching a glob with '**' allowed."""
    return sorted(glob.glob(os.path.join(prefix, pattern), recursive=True))


def daemons(sock):
    """{pid: exe} of the processes started with '--socket sock'."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as fp:
                argv = fp.read().split(b"\0")
            exe = os.readlink("/proc/%s/exe" % pid)
        except OSError:
            continue
        for i in range(len(argv) - 1):
            if argv[i] == b"--socket" and argv[i + 1] == sock.encode():
                out[int(pid)] = exe
    return out


def stop(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    deadline = time.time() + 3
    while time.time() < deadline and any(
            os.path.exists("/proc/%d" % p) for p in pids):
        time.sleep(0.05)
    for pid in pids:
        if os.path.exists("/proc/%d" % pid):
            os.kill(pid, signal.SIGKILL)


def check_tree(prefix):
    """The installed files; returns the lib dir holding libibverbs.so.1."""
    want = {
        "libibverbs.so.1": "lib*/**/libibverbs.so.1",
        "librdmacm.so.1": "lib*/**/librdmacm.so.1",
        "verbs.h": "include/infiniband/verbs.h",
        "rdma_cma.h": "include/rdma/rdma_cma.h",
        "libibverbs.pc": "lib*/**/pkgconfig/libibverbs.pc",
        "softrdmad": "bin/softrdmad",
        "ibv_devinfo": "bin/ibv_devinfo",
        "ibv_devinfo.1": "share/man/man1/ibv_devinfo.1",
        "softrdmad.8": "share/man/man8/softrdmad.8",
        "softrdma.8": "share/man/man8/softrdma.8",
    }
    for what, pattern in sorted(want.items()):
        hits = find(prefix, pattern)
        if not hits:
            fail("not installed: %s (%s)" % (what, pattern))
        else:
            print("installed %s" % os.path.relpath(hits[0], prefix))
    if not find(prefix, "lib*/**/pkgconfig/librdmacm.pc"):
        print("NOTE librdmacm.pc is not installed")
    libs = find(prefix, "lib*/**/libibverbs.so.1")
    return os.path.dirname(libs[0]) if libs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--cmake", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--client", required=True)
    ap.add_argument("--include", help="source headers, used only when "
                    "the install lacks them, so the rest is still checked")
    args = ap.parse_args()
    if not shutil.which("pkg-config"):
        print("install_pkgconfig: pkg-config not found, skipping")
        return 77

    tmp = tempfile.mkdtemp(prefix="softrdma-install-")
    prefix = os.path.join(tmp, "prefix")
    sock = "softrdma-install-%d" % os.getpid()
    try:
        r = subprocess.run([args.cmake, "--install", args.build, "--prefix",
                            prefix], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True)
        if r.returncode:
            print(r.stdout)
            fail("cmake --install exited %d" % r.returncode)
            return 1
        libdir = check_tree(prefix)
        pcs = find(prefix, "lib*/**/pkgconfig/libibverbs.pc")
        if not libdir or not pcs:
            return 1

        env = dict(os.environ)
        env["PKG_CONFIG_PATH"] = os.path.dirname(pcs[0])
        env.pop("PKG_CONFIG_LIBDIR", None)
        r = subprocess.run(["pkg-config", "--cflags", "--libs", "libibverbs"],
                           env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True)
        if r.returncode:
            fail("pkg-config libibverbs: %s" % r.stdout.strip())
            return 1
        flags = r.stdout.split()
        print("pkg-config: %s" % " ".join(flags))
        for f in flags:
            if f.startswith(("-I", "-L")) and \
               not os.path.realpath(f[2:]).startswith(
                   os.path.realpath(prefix)):
                fail("pkg-config flag %s is outside the prefix" % f)
        extra = []
        if args.include and not os.path.exists(
                os.path.join(prefix, "include/infiniband/verbs.h")):
            extra = ["-idirafter", args.include]
            print("NOTE headers not installed, building with %s" %
                  args.include)
        exe = os.path.join(tmp, "installed_client")
        cmd = [args.cc, "-o", exe, args.client] + flags + extra
        r = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True)
        if r.returncode:
            print(" ".join(cmd))
            print(r.stdout)
            fail("the client does not build against the installed tree")
            return 1

        env = dict(os.environ)
        env.pop("SOFTRDMAD", None)
        env["SOFTRDMA_SOCKET"] = sock
        env["LD_LIBRARY_PATH"] = libdir
        try:
            r = subprocess.run([exe], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT,
                               universal_newlines=True, timeout=60)
            out, rc = r.stdout, r.returncode
        except subprocess.TimeoutExpired as e:
            out, rc = str(e.stdout or ""), "timeout"
        print(out.rstrip())
        if rc != 0:
            fail("the installed client exited %s" % rc)
        libline = [l for l in out.splitlines() if l.startswith("library ")]
        if not libline or not os.path.realpath(libline[0][8:]).startswith(
                os.path.realpath(prefix)):
            fail("the client did not run with the installed libibverbs")
        running = daemons(sock)
        if not running:
            fail("no daemon serves %s after the run" % sock)
        for pid, path in sorted(running.items()):
            print("daemon %d: %s" % (pid, path))
            if not os.path.realpath(path).startswith(
                    os.path.realpath(prefix)):
                fail("daemon %d is %s, not the installed one" % (pid, path))
    finally:
        stop(list(daemons(sock)))
        shutil.rmtree(tmp, ignore_errors=True)

    print("install_pkgconfig: %d failures" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
