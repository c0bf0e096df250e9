#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate the stub sources of softrdma's libmlx5.so.1 / libefa.so.1.

Programs such as perftest link against the mlx5 and EFA direct-verbs
libraries of rdma-core even when they never use those devices.  softrdma
ships look-alike libraries: the same SONAME, every symbol at the same
version, and each entry point answering "not supported" the way the real
one does for a device that is not its own.

Input:
  --syms FILE    the export list, one 'VERSION symbol' per line;
                 '(VERSION) symbol' is a non-default (compat) version
  --header FILE  the rdma-core direct-verbs header (mlx5dv.h, efadv.h),
                 read with clang for each function's prototype
  --lib NAME     mlx5 or efa
  --out DIR      where to write lib<NAME>.map, <NAME>_stubs.h, <NAME>_stubs.c

What a stub returns follows from its return type (NULL with errno, a
positive errno, false, nothing), except for the functions in
KIND_OVERRIDES, whose real convention differs.  The output is meant to be
committed; the build needs neither clang nor the rdma-core headers.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import textwrap

# Return conventions that do not follow from the return type alone.
KIND_OVERRIDES = {
    # -errno on failure, a count or 0 on success
    "mlx5dv_qp_cancel_posted_send_wrs": "negerrno",
    "mlx5dv_dump_dr_domain": "negerrno",
    "mlx5dv_dump_dr_matcher": "negerrno",
    "mlx5dv_dump_dr_rule": "negerrno",
    "mlx5dv_dump_dr_table": "negerrno",
    # a file descriptor, or -1 with errno
    "mlx5dv_vfio_get_events_fd": "minus1",
}

BODIES = {
    "ptr": "\terrno = EOPNOTSUPP;\n\treturn NULL;\n",
    "errno": "\terrno = EOPNOTSUPP;\n\treturn EOPNOTSUPP;\n",
    "negerrno": "\terrno = EOPNOTSUPP;\n\treturn -EOPNOTSUPP;\n",
    "minus1": "\terrno = EOPNOTSUPP;\n\treturn -1;\n",
    "false": "\treturn false;\n",
    "void": "",
}

KIND_WORDS = {
    "ptr": "NULL, errno EOPNOTSUPP",
    "errno": "EOPNOTSUPP",
    "negerrno": "-EOPNOTSUPP",
    "minus1": "-1, errno EOPNOTSUPP",
    "false": "false",
    "void": "nothing to do",
}

VERSION_RE = re.compile(r"^([A-Z0-9]+)_(\d+)\.(\d+)$")


def die(msg):
    print("gen_shims: " + msg, file=sys.stderr)
    sys.exit(1)


def read_syms(path):
    """[(symbol, version, is_default)] in file order."""
    out = []
    with open(path) as fp:
        for line in fp:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            ver, sym = line.split()
            default = not ver.startswith("(")
            out.append((sym, ver.strip("()"), default))
    return out


def prototypes(header):
    """name -> (return type, [(param type, param name)]) from clang."""
    src = '#include "%s"\n' % os.path.abspath(header)
    res = subprocess.run(["clang", "-Xclang", "-ast-dump=json",
                          "-fsyntax-only", "-x", "c", "-"], input=src,
                         stdout=subprocess.PIPE, universal_newlines=True)
    if res.returncode != 0:
        die("clang failed on " + header)
    protos = {}
    for node in json.loads(res.stdout).get("inner", []):
        if node.get("kind") != "FunctionDecl":
            continue
        full = node["type"]["qualType"]
        ret = full[:full.index("(")].strip()
        params = [(p["type"]["qualType"], p.get("name", "arg%d" % i))
                  for i, p in enumerate(node.get("inner", []))
                  if p.get("kind") == "ParmVarDecl"]
        protos[node["name"]] = (ret, params)
    return protos


def kind_of(name, ret):
    if name in KIND_OVERRIDES:
        return KIND_OVERRIDES[name]
    if ret.endswith("*"):
        return "ptr"
    if ret == "void":
        return "void"
    if ret == "bool":
        return "false"
    if ret == "int":
        return "errno"
    if ret == "ssize_t":
        return "minus1"
    die("no return convention for %s (returns %s)" % (name, ret))


def c_type(t, structs):
    """A spelling of parameter type t that needs no rdma-core header.

    Structures are only ever passed by pointer, so a forward declaration
    is enough.  C has no forward-declared enums: an enum by value is
    passed as the int it is, a pointer to one as void *."""
    if re.match(r"^enum \w+$", t):
        return "int"
    if re.match(r"^(const )?enum \w+ \*$", t):
        return "void *"
    for m in re.finditer(r"\bstruct (\w+)", t):
        structs.add(m.group(1))
    return t


def decl(ret, name, params, structs):
    args = ", ".join("%s%s%s" % (c_type(t, structs),
                                 "" if t.endswith("*") else " ", n)
                     for t, n in params) or "void"
    return "%s%s%s(%s)" % (ret, "" if ret.endswith("*") else " ", name, args)


def block_comment(text):
    """A C comment, wrapped to 80 columns."""
    lines = textwrap.wrap(text, 76, break_on_hyphens=False)
    if len(lines) == 1 and len(lines[0]) <= 74:
        return "/* %s */" % lines[0]
    return "/*\n" + "".join(" * %s\n" % l for l in lines) + " */"


def version_key(v):
    m = VERSION_RE.match(v)
    return (0, int(m.group(2)), int(m.group(3))) if m else (1, 0, 0)


def version_suffix(v):
    m = VERSION_RE.match(v)
    if m:
        return "v%s_%s" % (m.group(2), m.group(3))
    return "v_" + re.sub(r"\W", "_", v).lower()


def generate(syms, protos, lib, syms_name, header_name):
    by_name = {}
    for sym, ver, default in syms:
        by_name.setdefault(sym, []).append((ver, default))
    versions = sorted({v for _s, v, _d in syms}, key=version_key)

    structs = set()
    funcs = []      # (comment, declaration, body, symver or None)
    node_syms = {v: [] for v in versions}
    for sym in sorted(by_name):
        if sym not in protos:
            die("%s is not declared in %s" % (sym, header_name))
        ret, params = protos[sym]
        kind = kind_of(sym, ret)
        c_type(ret, structs)
        vers = by_name[sym]
        real = ", ".join("%s%s%s" % (t, "" if t.endswith("*") else " ", n)
                         for t, n in params) or "void"
        for ver, default in sorted(vers, key=lambda x: version_key(x[0])):
            # Listed under each of its versions, .symver'd or not: the
            # linker exports a symbol at a version only if that node
            # names it.
            node_syms[ver].append(sym)
            if len(vers) == 1 and default:
                cname, symver = sym, None
            else:
                cname = "%s_%s" % (sym, version_suffix(ver))
                symver = "%s%s%s" % (sym, "@@" if default else "@", ver)
            comment = "%s%s: %s." % (ver, "" if default else " (compat)",
                                     KIND_WORDS[kind])
            if any(re.match(r"^(const )?enum ", t) for t, _n in params):
                comment += " Real parameters: %s." % real
            funcs.append((comment, decl(ret, cname, params, structs),
                          BODIES[kind], symver))

    gen = ("Generated by scripts/gen_shims.py from shims/%s and the "
           "prototypes of rdma-core 44's <infiniband/%s>; regenerate rather "
           "than edit." % (syms_name, header_name))

    # version script
    m = []
    m.append("/* SPDX-License-Identifier: MIT */")
    m.append(block_comment("lib%s.so.1 version nodes of rdma-core 44, "
                           "each inheriting the one before.  %s"
                           % (lib, gen)))
    prev = None
    for i, v in enumerate(versions):
        m.append("")
        m.append("%s {" % v)
        if node_syms[v]:
            m.append("\tglobal:")
            m.extend("\t\t%s;" % s for s in sorted(node_syms[v]))
        if i == 0:
            m.append("\tlocal: *;")
        chained = VERSION_RE.match(v) and prev is not None
        m.append("}%s;" % ((" " + prev) if chained else ""))
        if VERSION_RE.match(v):
            prev = v
    mapfile = "\n".join(m) + "\n"

    # header
    guard = "SOFTRDMA_SHIM_%s_STUBS_H" % lib.upper()
    h = []
    h.append("/* SPDX-License-Identifier: MIT */")
    h.append(block_comment("Prototypes of the lib%s.so.1 stubs.  %s"
                           % (lib, gen)))
    h.append("#ifndef %s\n#define %s\n" % (guard, guard))
    h.append("#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>"
             "\n#include <stdio.h>\n#include <sys/types.h>"
             "\n#include <linux/types.h>\n")
    h.append("#define SHIM_EXPORT __attribute__((__visibility__(\"default\""
             ")))\n")
    h.extend("struct %s;" % s for s in sorted(structs))
    h.append("")
    for _c, d, _b, _s in funcs:
        h.append("SHIM_EXPORT %s;" % d)
    h.append("\n#endif /* %s */" % guard)
    header = "\n".join(h) + "\n"

    # stubs
    c = []
    c.append("/* SPDX-License-Identifier: MIT */")
    c.append(block_comment("lib%s.so.1: every entry point of rdma-core "
                           "44's library at its version, answering as the "
                           "real one does for a device that is not its "
                           "own.  %s" % (lib, gen)))
    c.append("#include <errno.h>\n\n#include \"%s_stubs.h\"" % lib)
    for comment, d, body, symver in funcs:
        c.append("")
        c.append(block_comment(comment))
        c.append("%s\n{\n%s}" % (d, body))
        if symver:
            cname = re.search(r"(\w+)\(", d).group(1)
            c.append('__asm__(".symver %s, %s");' % (cname, symver))
    stubs = "\n".join(c) + "\n"
    return mapfile, header, stubs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--syms", required=True)
    ap.add_argument("--header", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    syms = read_syms(args.syms)
    protos = prototypes(args.header)
    mapfile, header, stubs = generate(syms, protos, args.lib,
                                      os.path.basename(args.syms),
                                      os.path.basename(args.header))
    outs = (("lib%s.map" % args.lib, mapfile),
            ("%s_stubs.h" % args.lib, header),
            ("%s_stubs.c" % args.lib, stubs))
    for name, text in outs:
        path = os.path.join(args.out, name)
        with open(path, "w") as fp:
            fp.write(text)
        if name.endswith((".c", ".h")):
            subprocess.run(["clang-format", "-i", path], check=False)
    print("gen_shims: %s: %d symbols, %d versions" %
          (args.lib, len(syms), len({v for _s, v, _d in syms})))
    return 0


if __name__ == "__main__":
    sys.exit(main())
