# SPDX-License-Identifier: MIT
"""Shared code of the package tests: build the Debian packages once per
source tree (cached under /tmp by a hash of the tracked files) and run a
script in a throwaway root: the machine's own root under an overlay (its
Debian rdma-core clients included), in new mount, network and pid
namespaces, so installing there changes nothing outside and every daemon
ends with the namespace.

Exit codes: 0 pass, 1 fail, 77 skip.
"""

import fcntl
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

PASS, FAIL, SKIP = 0, 1, 77
HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGES = ("softrdma", "libsoftrdma1", "softrdma-utils", "softrdma-dev")


class Skip(Exception):
    pass


class Failure(Exception):
    pass


def log(msg):
    print(msg, flush=True)


def tracked_files(src):
    r = subprocess.run(["git", "-C", src, "ls-files", "-co",
                        "--exclude-standard"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise Skip("not a git checkout: %s" % r.stderr.strip())
    files = []
    for f in r.stdout.splitlines():
        # The package build has no tests (SOFTRDMA_BUILD_TESTS=OFF): a
        # change to them is no reason to build it again.
        if f.startswith(("build", "obj-", "tests/")) or not os.path.isfile(
                os.path.join(src, f)):
            continue
        files.append(f)
    return sorted(files)


def tree_hash(src, files):
    h = hashlib.sha256()
    for f in files:
        h.update(f.encode() + b"\0")
        with open(os.path.join(src, f), "rb") as fp:
            h.update(hashlib.sha256(fp.read()).digest())
    return h.hexdigest()[:16]


def build_debs(src):
    """The .debs of this tree: dpkg-buildpackage -us -uc -b on a copy,
    once per content hash.  Returns {package: path}."""
    for tool in ("dpkg-buildpackage", "dh"):
        if not shutil.which(tool):
            raise Skip("%s is not installed (debhelper, dpkg-dev)" % tool)
    files = tracked_files(src)
    key = tree_hash(src, files)
    cache = os.path.join(tempfile.gettempdir(), "softrdma-deb.%s" % key)
    os.makedirs(cache, exist_ok=True)
    with open(os.path.join(cache, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        debs = found_debs(cache)
        if debs:
            log("packages of tree %s: cached in %s" % (key, cache))
            return debs
        work = os.path.join(cache, "src")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        for f in files:
            dst = os.path.join(work, f)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(os.path.join(src, f), dst)
        log("$ dpkg-buildpackage -us -uc -b   (in %s)" % work)
        with open(os.path.join(cache, "build.log"), "w") as out:
            r = subprocess.run(["dpkg-buildpackage", "-us", "-uc", "-b",
                                "-j2"], cwd=work, stdout=out,
                               stderr=subprocess.STDOUT, timeout=1500)
        if r.returncode != 0:
            with open(os.path.join(cache, "build.log")) as f:
                log(f.read()[-6000:])
            raise Failure("dpkg-buildpackage exited %d" % r.returncode)
        shutil.rmtree(work, ignore_errors=True)
        debs = found_debs(cache)
        if not debs:
            raise Failure("dpkg-buildpackage made no packages")
        return debs


def found_debs(cache):
    debs = {}
    for p in PACKAGES:
        hits = glob.glob(os.path.join(cache, "%s_*.deb" % p))
        if len(hits) == 1:
            debs[p] = hits[0]
    return debs if len(debs) == len(PACKAGES) else {}


def can_make_root():
    if os.geteuid() != 0:
        raise Skip("a throwaway root (overlay, namespaces) needs root")
    for tool in ("unshare", "chroot", "setpriv", "useradd"):
        if not shutil.which(tool):
            raise Skip("no %s" % tool)
    r = subprocess.run(["unshare", "--mount", "--net", "--pid", "--fork",
                        "true"], capture_output=True, text=True)
    if r.returncode != 0:
        raise Skip("unshare: %s" % r.stderr.strip())


def run_in_root(debs, steps, args=(), extra=(), timeout=600):
    """Run in_root.sh: it makes the overlay root, installs `debs` there
    with dpkg -i and runs the `steps` script (inside) with `args`; the
    `extra` scripts (*.sh) land beside it in the root's /tmp."""
    can_make_root()
    work = tempfile.mkdtemp(prefix="srdpkg.")
    try:
        os.mkdir(os.path.join(work, "debs"))
        for path in debs:
            shutil.copy2(path, os.path.join(work, "debs"))
        shutil.copy2(os.path.join(HERE, steps), os.path.join(work,
                                                             "steps.sh"))
        for path in extra:
            shutil.copy2(path, os.path.join(work, os.path.basename(path)))
        argv = ["unshare", "--mount", "--net", "--pid", "--fork",
                "--propagation", "private", "--",
                "/bin/sh", os.path.join(HERE, "in_root.sh"), work] + \
            list(args)
        log("$ " + " ".join(argv))
        r = subprocess.run(argv, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True,
                           timeout=timeout)
        log(r.stdout.rstrip("\n"))
        if r.returncode == SKIP:
            raise Skip("the steps skipped")
        if r.returncode != 0:
            raise Failure("%s exited %d" % (steps, r.returncode))
    finally:
        subprocess.run(["umount", "-R", "-l", work], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


def main(name, body):
    try:
        body()
        log("PASS %s" % name)
        return PASS
    except Skip as e:
        log("SKIP %s: %s" % (name, e))
        return SKIP
    except (Failure, subprocess.TimeoutExpired) as e:
        log("FAIL %s: %s" % (name, e))
        return FAIL
    finally:
        sys.stdout.flush()
