# SPDX-License-Identifier: MIT
"""Shared code of the rdma-core binary compatibility tests.

Every test runs Debian's unmodified rdma-core 44 clients (ibverbs-utils,
perftest, qperf) on softrdma:

- LD_LIBRARY_PATH (set by ctest) points at the build's lib/, so the
  clients load our libibverbs.so.1 (and libmlx5/libefa shims);
- SOFTRDMA_SOCKET is private to the test run, so the library starts a
  daemon ($SOFTRDMAD) of the test's own, killed by its pid at the end;
- every process started runs with LD_DEBUG=libs into a file of ours, and
  the test fails unless each one loaded libibverbs.so.1 from the build
  (never /usr/lib/.../libibverbs.so.1); servers are also checked through
  /proc/<pid>/maps while they run.

Exit codes: 0 pass, 1 fail, 77 skip.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

PASS, FAIL, SKIP = 0, 1, 77

# Libraries that must come from the build directory when it has them.
OURS = ("libibverbs.so.1", "libmlx5.so.1", "libefa.so.1", "librdmacm.so.1")
LOADED_RE = re.compile(r"^\s*(\d+):\s+(?:calling init: (\S+)|"
                       r"file=(\S+) \[\d+\];\s+generating link map)")


STDBUF = shutil.which("stdbuf")


class TestFailure(Exception):
    """A check failed: the message says which and why."""


class Skip(Exception):
    """The test cannot run here: the message says why."""


def log(msg):
    print(msg, flush=True)


def need_binary(path):
    if not os.access(path, os.X_OK):
        raise Skip("%s is not installed" % path)
    return path


def free_port():
    """A TCP port free on every address, v4 and v6."""
    try:
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        s.bind(("::", 0))
    except OSError:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("0.0.0.0", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def listening(port):
    """True when some socket listens on TCP port `port` (v4 or v6)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                lines = f.readlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 4 or fields[3] != "0A":
                continue
            if int(fields[1].rsplit(":", 1)[1], 16) == port:
                return True
    return False


def alive(pid):
    """Running: a zombie (the daemon's parent is init) counts as gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


class Proc:
    """A client process of the test, with its output in files."""

    def __init__(self, h, tag, argv, env, stdin):
        self.tag = tag
        self.argv = argv
        self.out_path = os.path.join(h.tmp, tag + ".out")
        self.err_path = os.path.join(h.tmp, tag + ".err")
        self.ld_prefix = os.path.join(h.tmp, "ld." + tag)
        env = dict(env)
        # Line-buffered stdio, so a process killed on a time-out still
        # leaves its output in the log (stdbuf execs it: same pid).
        if STDBUF:
            argv = [STDBUF, "-oL", "-eL"] + list(argv)
        env["LD_DEBUG"] = "libs"
        env["LD_DEBUG_OUTPUT"] = self.ld_prefix
        self._out = open(self.out_path, "w")
        self._err = open(self.err_path, "w")
        self.p = subprocess.Popen(argv, env=env, stdin=stdin,
                                  stdout=self._out, stderr=self._err,
                                  start_new_session=True, close_fds=True)
        self.pid = self.p.pid
        self.rc = None
        self.timed_out = False
        self.shown = False

    def poll(self):
        if self.rc is None:
            self.rc = self.p.poll()
        return self.rc

    def wait(self, timeout):
        try:
            self.rc = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.timed_out = True
            self.kill()
        return self.rc

    def kill(self, sig=signal.SIGKILL):
        if self.poll() is None:
            try:
                os.killpg(self.pid, sig)
            except ProcessLookupError:
                pass
            try:
                self.rc = self.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

    def output(self):
        self._out.flush()
        with open(self.out_path, errors="replace") as f:
            return f.read()

    def errors(self):
        self._err.flush()
        with open(self.err_path, errors="replace") as f:
            return f.read()

    def close(self):
        self._out.close()
        self._err.close()


class Harness:
    """One test run: environment, processes, private daemon, clean-up."""

    def __init__(self, name):
        self.name = name
        libdir = os.environ.get("LD_LIBRARY_PATH", "").split(":")[0]
        if not libdir or not os.path.isfile(
                os.path.join(libdir, "libibverbs.so.1")):
            raise TestFailure("LD_LIBRARY_PATH must start with the build's "
                              "lib/ holding libibverbs.so.1 (is: %r)" %
                              os.environ.get("LD_LIBRARY_PATH"))
        self.libdir = os.path.realpath(libdir)
        self.daemon = os.environ.get("SOFTRDMAD", "")
        if not os.access(self.daemon, os.X_OK):
            raise TestFailure("SOFTRDMAD must name the softrdmad binary "
                              "(is: %r)" % self.daemon)
        self.socket = "srdcompat.%s.%d" % (name, os.getpid())
        self.tmp = tempfile.mkdtemp(prefix="srdcompat.%s." % name)
        self.env = dict(os.environ)
        self.env.pop("LD_PRELOAD", None)
        self.env["SOFTRDMA_SOCKET"] = self.socket
        self.procs = []

    # --- processes ------------------------------------------------------
    def start(self, tag, argv, extra_env=None, stdin=subprocess.DEVNULL):
        env = dict(self.env)
        if extra_env:
            env.update(extra_env)
        log("$ %s%s" % ("".join("%s=%s " % kv for kv in
                                (extra_env or {}).items()),
                        " ".join(argv)))
        p = Proc(self, tag, argv, env, stdin)
        self.procs.append(p)
        return p

    def run(self, tag, argv, timeout, extra_env=None):
        """Run to the end (killed after `timeout` s); check its libraries."""
        p = self.start(tag, argv, extra_env)
        p.wait(timeout)
        self.show(p)
        self.check_loaded(p)
        if p.timed_out:
            raise TestFailure("%s did not finish within %d s" %
                              (tag, timeout))
        return p

    def show(self, p):
        """Put the process's output into the test log."""
        if p.shown:
            return
        p.shown = True
        out, err = p.output(), p.errors()
        log("----- %s (pid %d) exit %s%s -----" %
            (p.tag, p.pid, p.rc, " (timed out)" if p.timed_out else ""))
        if out:
            log(out.rstrip("\n"))
        if err:
            log("----- %s stderr -----" % p.tag)
            log(err.rstrip("\n"))

    def wait_listen(self, p, port, timeout=60):
        """Wait until `p` listens on `port`; fail if it dies first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if p.poll() is not None:
                self.show(p)
                raise TestFailure("%s exited (%s) before listening on "
                                  "port %d" % (p.tag, p.rc, port))
            if listening(port):
                return
            time.sleep(0.02)
        raise TestFailure("%s not listening on port %d after %d s" %
                          (p.tag, port, timeout))

    # --- which libraries were loaded -----------------------------------
    def _is_ours(self, path):
        return os.path.dirname(os.path.realpath(path)) == self.libdir

    def check_maps(self, p):
        """While `p` runs: /proc/<pid>/maps shows our libibverbs.so.1."""
        try:
            with open("/proc/%d/maps" % p.pid) as f:
                maps = f.read()
        except OSError as e:
            raise TestFailure("cannot read /proc/%d/maps: %s" % (p.pid, e))
        paths = set()
        for line in maps.splitlines():
            fields = line.split(None, 5)
            if len(fields) == 6 and "/libibverbs.so" in fields[5]:
                paths.add(fields[5])
        if not paths:
            raise TestFailure("%s: no libibverbs in /proc/%d/maps" %
                              (p.tag, p.pid))
        for path in paths:
            if not self._is_ours(path):
                raise TestFailure("%s maps %s, not ours from %s" %
                                  (p.tag, path, self.libdir))
        log("%s: /proc/%d/maps: %s" % (p.tag, p.pid, ", ".join(
            sorted(paths))))

    def check_loaded(self, p):
        """From LD_DEBUG=libs: the process loaded our libraries only."""
        path = "%s.%d" % (p.ld_prefix, p.pid)
        try:
            with open(path, errors="replace") as f:
                text = f.read()
        except OSError:
            raise TestFailure("%s: no LD_DEBUG output (%s)" % (p.tag, path))
        loaded = set()
        for line in text.splitlines():
            m = LOADED_RE.match(line)
            if m and int(m.group(1)) == p.pid:
                loaded.add(m.group(2) or m.group(3))
        verbs = [x for x in loaded
                 if os.path.basename(x).startswith("libibverbs.so")]
        if not verbs:
            raise TestFailure("%s did not load libibverbs.so.1" % p.tag)
        for x in sorted(loaded):
            base = os.path.basename(x)
            if any(base.startswith(o) for o in OURS) and not self._is_ours(x):
                if (base.startswith("librdmacm") and not os.path.exists(
                        os.path.join(self.libdir, "librdmacm.so.1"))):
                    continue  # not built here: the system's is expected
                raise TestFailure("%s loaded %s (%s) instead of the one in "
                                  "%s" % (p.tag, x, os.path.realpath(x),
                                          self.libdir))
        log("%s: loaded %s" % (p.tag, ", ".join(
            sorted(x for x in loaded if any(
                os.path.basename(x).startswith(o) for o in OURS)))))

    # --- the private daemon ---------------------------------------------
    def daemon_pids(self):
        """Pids of the softrdmad serving this test's socket name."""
        pids = []
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            argv = [a.decode(errors="replace") for a in argv]
            if (argv and os.path.basename(argv[0]) == "softrdmad" and
                    "--socket" in argv):
                i = argv.index("--socket")
                if i + 1 < len(argv) and argv[i + 1] == self.socket:
                    pids.append(int(d))
        return pids

    def kill_daemon(self, sig=signal.SIGTERM):
        pids = self.daemon_pids()
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 5
        while pids and time.monotonic() < deadline:
            pids = [x for x in pids if alive(x)]
            time.sleep(0.02)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def cleanup(self):
        for p in self.procs:
            p.kill()
            p.close()
        self.kill_daemon()
        shutil.rmtree(self.tmp, ignore_errors=True)


ACCESS_ON_DEMAND = 0x40  # IBV_ACCESS_ON_DEMAND


class MrWatch:
    """The MRs the test's daemon holds, polled while clients run.

    "softrdma -d -j resource show mr" (the daemon's own table, as rdma
    resource shows the kernel's) every 50 ms from start() to stop():
    mrs[pid] is the set of (access, length, addr) that pid ever held.
    """

    def __init__(self, h):
        self.h = h
        self.admin = os.path.join(os.path.dirname(h.daemon), "softrdma")
        self.mrs = {}
        self._stop = threading.Event()
        self._thread = None
        self.error = None

    def poll(self):
        r = subprocess.run([self.admin, "-n", "-d", "-j", "resource",
                            "show", "mr"], env=self.h.env,
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            # Before the first client the daemon may not run yet.
            return
        try:
            rows = json.loads(r.stdout or "[]")
        except ValueError as e:
            self.error = "resource show mr: %s (%r)" % (e, r.stdout)
            return
        for m in rows:
            key = (int(m["access"], 16), int(m["mrlen"]),
                   int(m["addr"], 16))
            self.mrs.setdefault(int(m["pid"]), set()).add(key)

    def wait_for(self, pid, timeout=30):
        """Poll until the daemon shows an MR of pid."""
        deadline = time.monotonic() + timeout
        while pid not in self.mrs and time.monotonic() < deadline:
            self.poll()
            if pid not in self.mrs:
                time.sleep(0.02)
        return pid in self.mrs

    def _run(self):
        while not self._stop.is_set():
            self.poll()
            self._stop.wait(0.05)

    def start(self):
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join(60)

    def check_odp(self, procs, implicit=False):
        """Every MR each of procs held was ODP (implicit: over the whole
        address space, addr 0 and length 2^64-1), and each held one."""
        if self.error:
            raise TestFailure(self.error)
        for p in procs:
            mrs = self.mrs.get(p.pid)
            if not mrs:
                raise TestFailure("%s: the daemon never showed an MR of "
                                  "pid %d" % (p.tag, p.pid))
            for access, length, addr in sorted(mrs):
                if not access & ACCESS_ON_DEMAND:
                    raise TestFailure("%s: MR of %d B at 0x%x, access 0x%x:"
                                      " not ON_DEMAND" % (p.tag, length,
                                                          addr, access))
                if implicit and (length != (1 << 64) - 1 or addr != 0):
                    raise TestFailure("%s: MR of %d B at 0x%x: not the "
                                      "implicit one" % (p.tag, length,
                                                        addr))
            log("%s: MRs %s" % (p.tag, ", ".join(
                "access 0x%x %d B at 0x%x" % m for m in sorted(mrs))))


def main(name, body):
    """Run body(harness) and turn its outcome into an exit code."""
    h = None
    try:
        h = Harness(name)
        body(h)
        log("PASS %s" % name)
        return PASS
    except Skip as e:
        log("SKIP %s: %s" % (name, e))
        return SKIP
    except TestFailure as e:
        if h:
            for p in h.procs:
                h.show(p)
        log("FAIL %s: %s" % (name, e))
        return FAIL
    finally:
        if h:
            h.cleanup()
        sys.stdout.flush()
