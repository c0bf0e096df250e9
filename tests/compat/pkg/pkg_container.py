#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The container recipe (Dockerfile at the top of the tree).

  pkg_container.py --source DIR

With a container engine that works here (docker or podman answering
'info' and holding the debian:12 image, since no image registry may be
reachable), builds the image and runs it with --cap-drop=ALL and
no-new-privileges: its command must end with "all ok".  Otherwise the
same steps without an engine: the packages (t_pkg.py) and Debian's
ibverbs-utils in a throwaway root, and the image's command
(dist/container/softrdma-container-demo.sh) run there by an ordinary user
with every capability set empty, in a network namespace of its own
(steps_container.sh).  Skipped (77) when neither can run.
"""

import argparse
import os
import shutil
import subprocess
import sys

import t_pkg as t


def engine():
    for tool in ("podman", "docker"):
        path = shutil.which(tool)
        if not path:
            continue
        ok = subprocess.run([path, "info"], capture_output=True,
                            timeout=60).returncode == 0
        if ok and subprocess.run([path, "image", "inspect", "debian:12"],
                                 capture_output=True,
                                 timeout=60).returncode == 0:
            return path
        t.log("%s: no engine or no debian:12 image here" % tool)
    return None


def with_engine(tool, src):
    tag = "softrdma-test:%d" % os.getpid()
    try:
        r = subprocess.run([tool, "build", "-t", tag, src], timeout=1500)
        if r.returncode != 0:
            raise t.Failure("%s build exited %d" % (tool, r.returncode))
        r = subprocess.run([tool, "run", "--rm", "--cap-drop=ALL",
                            "--security-opt", "no-new-privileges", tag],
                           capture_output=True, text=True, timeout=300)
        t.log(r.stdout + r.stderr)
        if r.returncode != 0 or "softrdma-container-demo: all ok" not in \
                r.stdout:
            raise t.Failure("the image's command failed")
    finally:
        subprocess.run([tool, "rmi", "-f", tag], capture_output=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    args = ap.parse_args()

    def body():
        tool = engine()
        if tool:
            return with_engine(tool, args.source)
        t.log("no container engine: the image's steps in a throwaway root")
        debs = t.build_debs(args.source)
        t.run_in_root([debs["softrdma"], debs["libsoftrdma1"]],
                      "steps_container.sh",
                      extra=[os.path.join(args.source, "dist", "container",
                                          "softrdma-container-demo.sh")])

    return t.main("pkg_container", body)


if __name__ == "__main__":
    sys.exit(main())
