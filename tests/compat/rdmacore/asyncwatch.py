#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Debian's ibv_asyncwatch reports the async events softrdma0 raises.

  asyncwatch.py --mode errors --provoke async_provoke.so
  asyncwatch.py --mode fatal

asyncwatch prints "  event_type NAME (N), port P" for every event of the
context it opened (NAME is "unexpected" for QP/CQ/SRQ events, which it
does not name).  Events belong to the context owning the object, so:

errors  async_provoke.so, preloaded, makes a CQ overrun and a remote
        access error on asyncwatch's own context: asyncwatch must print
        events 0 (CQ_ERR), 1 (QP_FATAL) and 3 (QP_ACCESS_ERR), nothing else,
        and every event it acknowledges must name the object we made.
fatal   the device goes away (its daemon is killed) while asyncwatch
        waits: as on a kernel device's removal, asyncwatch must get
        IBV_EVENT_DEVICE_FATAL (8), port 0, then its next wait fails and it
        exits.
"""

import argparse
import os
import re
import signal
import sys
import time

import t_compat as t

EVENT_RE = re.compile(r"^  event_type (\S+) \((\d+)\), port (-?\d+)$", re.M)
BANNER_RE = re.compile(r"^softrdma0: async event FD \d+$", re.M)
WANT_ERRORS = {0: "our small CQ", 1: "our overrun QP", 3: "our responder QP"}


def wait_for(p, cond, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        if p.poll() is not None:
            return cond()
        time.sleep(0.05)
    return cond()


def start(h, extra_env=None):
    binary = t.need_binary("/usr/bin/ibv_asyncwatch")
    p = h.start("asyncwatch", [binary, "-d", "softrdma0"], extra_env)
    if not wait_for(p, lambda: BANNER_RE.search(p.output()), 20):
        raise t.TestFailure("no \"softrdma0: async event FD\" banner")
    h.check_maps(p)
    return p


def errors(h, provoke):
    if not os.path.isfile(provoke):
        raise t.TestFailure("no %s" % provoke)
    p = start(h, {"LD_PRELOAD": provoke})

    def seen():
        return {int(m.group(2)) for m in EVENT_RE.finditer(p.output())}

    wait_for(p, lambda: set(WANT_ERRORS) <= seen(), 30)
    time.sleep(0.5)  # anything else that was going to come
    p.kill(signal.SIGTERM)
    h.show(p)
    h.check_loaded(p)
    out, err = p.output(), p.errors()
    if "async_provoke: FAIL" in err or "async_provoke: provoked" not in err:
        raise t.TestFailure("the preloaded provoker did not run through")
    got = [(m.group(1), int(m.group(2))) for m in EVENT_RE.finditer(out)]
    for name, num in got:
        if num not in WANT_ERRORS:
            raise t.TestFailure("unexpected event %s (%d)" % (name, num))
        if name != "unexpected":
            raise t.TestFailure("event %d printed as %s" % (num, name))
    nums = [n for _, n in got]
    for num, what in WANT_ERRORS.items():
        if nums.count(num) != 1:
            raise t.TestFailure("event %d printed %d times, want once" %
                                (num, nums.count(num)))
        if not re.search(r"^async_provoke: ack .+ \(%d\): %s$" %
                         (num, re.escape(what)), err, re.M):
            raise t.TestFailure("event %d not acknowledged for %s" %
                                (num, what))
    if "WRONG" in err:
        raise t.TestFailure("an event named the wrong object")


def fatal(h):
    p = start(h)
    pids = h.daemon_pids()
    if len(pids) != 1:
        raise t.TestFailure("expected one daemon on %s, found %s" %
                            (h.socket, pids))
    t.log("killing the device: softrdmad pid %d" % pids[0])
    os.kill(pids[0], signal.SIGKILL)
    p.wait(15)
    h.show(p)
    h.check_loaded(p)
    if p.timed_out:
        raise t.TestFailure("asyncwatch still waiting after the device "
                            "went away")
    got = [(m.group(1), int(m.group(2)), int(m.group(3)))
           for m in EVENT_RE.finditer(p.output())]
    if got != [("IBV_EVENT_DEVICE_FATAL", 8, 0)]:
        raise t.TestFailure("events %r, want exactly "
                            "IBV_EVENT_DEVICE_FATAL (8), port 0" % got)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=("errors", "fatal"), required=True)
    ap.add_argument("--provoke")
    args = ap.parse_args()
    if args.mode == "errors":
        return t.main("asyncwatch_errors",
                      lambda h: errors(h, args.provoke))
    return t.main("asyncwatch_fatal", fatal)


if __name__ == "__main__":
    sys.exit(main())
