#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ABI probe: compare softrdma's public headers with the installed rdma-core.

For each side (our include/ tree, and the system headers alone) this script

  1. parses a translation unit that includes the public headers with
     `clang -Xclang -ast-dump=json` and collects every struct/union that
     is defined in the verbs header directories, every field of it
     (following anonymous and unnamed nested records through the named
     member path), every enumerator, every named enum, typedef and
     function declaration, and every macro defined by those headers;
  2. writes a C program that prints sizeof/_Alignof of each record,
     offsetof/sizeof of each field, the value of each enumerator, the
     size and signedness of each enum, and the value of every object-like
     macro that is an integer constant expression;
  3. compiles and runs that program;
  4. compiles the inline verbs of verbs.h (softrdma_inline_list.h) and
     every static inline function of the rdma/ headers (librdmacm's
     inline functions) out of line at -O2 and fingerprints their code.

The two outputs (plus the AST-level facts: field types, function
prototypes, macro names) are diffed line by line.  Exit status: 0 when
identical, 1 on any difference, 77 when the system headers are absent
(so ctest can report the test as skipped), 2 on internal errors.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

SYS_INC = "/usr/include"
# Directories (relative to an include root) whose declarations are probed.
PUBLIC_DIRS = ("infiniband", "rdma")

# Macros that only softrdma defines, by design.
OUR_MACRO_PREFIXES = ("SOFTRDMA_", "__SOFTRDMA_")
# Headers that exist only in softrdma.
OUR_ONLY_HEADERS = ("infiniband/softrdma_inline_list.h",)
# Included before the others, in this order.
FIRST_HEADERS = ("infiniband/verbs.h",)


def die(msg, code=2):
    print("abi_probe: " + msg, file=sys.stderr)
    sys.exit(code)


def run(cmd, **kw):
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, **kw)
    if res.returncode != 0:
        die("command failed: %s\n%s%s" % (" ".join(cmd),
                                          res.stdout[-2000:], res.stderr))
    return res.stdout


# --------------------------------------------------------------------------
# Header selection
# --------------------------------------------------------------------------

def default_headers(our_inc, sys_inc):
    """Every header we ship that also exists in the system include dir."""
    hdrs = []
    for d in PUBLIC_DIRS:
        base = os.path.join(our_inc, d)
        if not os.path.isdir(base):
            continue
        for root, _dirs, files in os.walk(base):
            for f in sorted(files):
                if not f.endswith(".h"):
                    continue
                rel = os.path.relpath(os.path.join(root, f), our_inc)
                if rel in OUR_ONLY_HEADERS:
                    continue
                if os.path.exists(os.path.join(sys_inc, rel)):
                    hdrs.append(rel)
    return order_headers(hdrs)


def order_headers(hdrs):
    """verbs.h first: it sets up RDMA_UAPI_PTR before the uverbs headers
    are seen, which is how applications get them."""
    first = [h for h in FIRST_HEADERS if h in hdrs]
    return first + sorted(h for h in hdrs if h not in first)


def tu_text(headers, defines):
    lines = ["#define %s" % d.replace("=", " ", 1) for d in defines]
    lines += ["#include <%s>" % h for h in headers]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# AST walking
# --------------------------------------------------------------------------

class Side:
    """Everything learnt about one side (ours or the system's)."""

    def __init__(self, name, roots):
        self.name = name
        self.roots = [os.path.realpath(r) for r in roots]
        self.records = {}      # "struct foo" -> list of field entries
        self.record_order = []
        self.enums = {}        # enumerator -> enum tag (or "")
        self.enum_order = []
        self.named_enums = []  # "enum foo"
        self.typedefs = {}     # name -> canonical type
        self.functions = {}    # name -> description
        self.macros = {}       # name -> "obj" / "fn(args)"
        self.ast_lines = []    # facts compared without running code
        self.inline_defs = {}  # static inline function with body -> file


def in_roots(path, roots):
    if not path:
        return False
    p = os.path.realpath(path)
    return any(p.startswith(r + os.sep) for r in roots)


class LocTracker:
    """clang's JSON dumper only prints "file" when it changes; replay it."""

    def __init__(self):
        self.cur = None

    def _one(self, loc):
        if not isinstance(loc, dict):
            return None
        if "spellingLoc" in loc or "expansionLoc" in loc:
            self._one(loc.get("spellingLoc"))
            return self._one(loc.get("expansionLoc"))
        if "file" in loc:
            self.cur = loc["file"]
        return self.cur

    def visit(self, node):
        f = self._one(node.get("loc"))
        rng = node.get("range")
        if isinstance(rng, dict):
            self._one(rng.get("begin"))
            self._one(rng.get("end"))
        return f


ANON_RE = re.compile(r"\((anonymous|unnamed)[^)]*\)")


def norm_type(t):
    """Canonical spelling of a type, with anonymous record names erased."""
    if not t:
        return "?"
    t = ANON_RE.sub("(anon)", t)
    t = re.sub(r"\b(struct|union|enum) [A-Za-z_0-9]+::", r"\1 ", t)
    return " ".join(t.split())


def type_of(node):
    ty = node.get("type", {})
    return ty.get("desugaredQualType") or ty.get("qualType")


def collect_fields(rec, prefix, out, tracker):
    """Append (path, kind, type) for every member of record node rec."""
    last_unnamed = None
    for ch in rec.get("inner", []):
        tracker.visit(ch)
        kind = ch.get("kind")
        if kind == "RecordDecl":
            # nested definitions: walk them for location bookkeeping
            _walk_silently(ch, tracker)
            if not ch.get("name"):
                last_unnamed = ch
            continue
        if kind != "FieldDecl":
            _walk_silently(ch, tracker)
            continue
        name = ch.get("name")
        qt = ch.get("type", {}).get("qualType", "")
        ty = norm_type(type_of(ch))
        if ch.get("isBitfield"):
            width = "?"
            for sub in ch.get("inner", []):
                v = sub.get("value")
                if v is None:
                    for sub2 in sub.get("inner", []):
                        v = sub2.get("value", v)
                if v is not None:
                    width = v
            out.append((prefix + (name or "<anon>"), "bitfield:%s" % width,
                        ty))
            _walk_silently(ch, tracker)
            continue
        _walk_silently(ch, tracker)
        unnamed_rec = ANON_RE.search(qt) and last_unnamed is not None
        if not name:
            # anonymous struct/union member: its fields belong to us
            if unnamed_rec:
                collect_fields_replay(last_unnamed, prefix, out)
            continue
        out.append((prefix + name, "field", ty))
        if unnamed_rec and "[" not in qt:
            collect_fields_replay(last_unnamed, prefix + name + ".", out)


def _walk_silently(node, tracker):
    for ch in node.get("inner", []) or []:
        if isinstance(ch, dict):
            tracker.visit(ch)
            _walk_silently(ch, tracker)


def collect_fields_replay(rec, prefix, out):
    # Location bookkeeping for this subtree was already done.
    collect_fields(rec, prefix, out, LocTracker())


def parse_ast(side, clang, cflags, src):
    out = run([clang, "-Xclang", "-ast-dump=json", "-fsyntax-only", "-w"] +
              cflags + [src])
    ast = json.loads(out)
    tracker = LocTracker()
    for node in ast.get("inner", []):
        f = tracker.visit(node)
        kind = node.get("kind")
        if not in_roots(f, side.roots) or node.get("isImplicit"):
            _walk_silently(node, tracker)
            continue
        if kind == "RecordDecl":
            name = node.get("name")
            if not name or not node.get("completeDefinition"):
                _walk_silently(node, tracker)
                continue
            key = "%s %s" % (node["tagUsed"], name)
            fields = []
            collect_fields(node, "", fields, tracker)
            if key not in side.records:
                side.record_order.append(key)
            side.records[key] = fields
        elif kind == "EnumDecl":
            tag = node.get("name")
            if tag:
                side.named_enums.append("enum " + tag)
            for ch in node.get("inner", []):
                tracker.visit(ch)
                _walk_silently(ch, tracker)
                if ch.get("kind") == "EnumConstantDecl":
                    side.enums[ch["name"]] = tag or ""
                    side.enum_order.append(ch["name"])
        elif kind == "TypedefDecl":
            side.typedefs[node["name"]] = norm_type(type_of(node))
            _walk_silently(node, tracker)
        elif kind == "FunctionDecl":
            name = node["name"]
            desc = "%s%s%s" % (
                "static " if node.get("storageClass") == "static" else "",
                "inline " if node.get("inline") else "",
                norm_type(node.get("type", {}).get("qualType")))
            prev = side.functions.get(name)
            # keep the most informative declaration (the definition)
            if prev is None or len(desc) >= len(prev):
                side.functions[name] = desc
            if (node.get("storageClass") == "static" and
                    any(ch.get("kind") == "CompoundStmt"
                        for ch in node.get("inner", []))):
                side.inline_defs[name] = os.path.realpath(f)
            _walk_silently(node, tracker)
        elif kind == "VarDecl":
            side.functions[node["name"]] = "var " + norm_type(
                node.get("type", {}).get("qualType"))
            _walk_silently(node, tracker)
        else:
            _walk_silently(node, tracker)


# --------------------------------------------------------------------------
# Macros
# --------------------------------------------------------------------------

LINEMARK = re.compile(r'^# (\d+) "([^"]*)"')
DEFINE = re.compile(r"^#define ([A-Za-z_][A-Za-z_0-9]*)(\([^)]*\))?(.*)$")
UNDEF = re.compile(r"^#undef ([A-Za-z_][A-Za-z_0-9]*)")


def parse_macros(side, cc, cflags, src):
    out = run([cc, "-E", "-dD", "-w"] + cflags + [src])
    cur = None
    for line in out.splitlines():
        m = LINEMARK.match(line)
        if m:
            cur = m.group(2)
            continue
        m = DEFINE.match(line)
        if m:
            if in_roots(cur, side.roots):
                args = m.group(2)
                side.macros[m.group(1)] = ("fn" + re.sub(r"\s+", "", args)
                                           if args else "obj")
            continue
        m = UNDEF.match(line)
        if m and in_roots(cur, side.roots):
            side.macros.pop(m.group(1), None)


# Accepts only integer (or enum/char/bool) typed constant expressions; a
# macro naming a function or a pointer constant fails to compile.
INT_CHECK = ("enum { __probe_%s = (int)((%s) != 0) + 0 * (int)sizeof(char["
             "__builtin_classify_type(%s) <= 4 ? 1 : -1]) };\n")


def integer_macros(side, cc, cflags, headers, defines, tmp):
    """Names of object-like macros that are integer constant expressions."""
    cands = sorted(n for n, k in side.macros.items()
                   if k == "obj" and not n.endswith("_H")
                   and not n.startswith(OUR_MACRO_PREFIXES))
    good = list(cands)
    for _attempt in range(6):
        path = os.path.join(tmp, "%s_macros.c" % side.name)
        with open(path, "w") as fp:
            fp.write(tu_text(headers, defines))
            first = tu_text(headers, defines).count("\n") + 1
            for n in good:
                fp.write(INT_CHECK % (n, n, n))
        res = subprocess.run([cc, "-fsyntax-only", "-w"] + cflags + [path],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True)
        if res.returncode == 0:
            return good
        bad = set()
        for m in re.finditer(re.escape(path) + r":(\d+):", res.stderr):
            idx = int(m.group(1)) - first
            if 0 <= idx < len(good):
                bad.add(good[idx])
        if not bad:
            break
        good = [n for n in good if n not in bad]
    # Fall back to testing one by one.
    ok = []
    for n in good:
        path = os.path.join(tmp, "%s_macro1.c" % side.name)
        with open(path, "w") as fp:
            fp.write(tu_text(headers, defines))
            fp.write(INT_CHECK % (n, n, n))
        res = subprocess.run([cc, "-fsyntax-only", "-w"] + cflags + [path],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if res.returncode == 0:
            ok.append(n)
    return ok


# --------------------------------------------------------------------------
# Probe program
# --------------------------------------------------------------------------

def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def gen_probe(side, headers, defines, int_macros):
    p = []
    p.append("#include <stdio.h>")
    p.append("#include <stddef.h>")
    p.append(tu_text(headers, defines))
    p.append("#define SZ(e) ((unsigned long)sizeof(e))")
    p.append("int main(void)\n{")
    for key in side.record_order:
        p.append('\tprintf("R %%s size=%%lu align=%%lu\\n", %s, SZ(%s), '
                 '(unsigned long)_Alignof(%s));' % (c_str(key), key, key))
        for path, kind, _ty in side.records[key]:
            if kind.startswith("bitfield"):
                p.append('\tprintf("F %%s %%s %s\\n", %s, %s);'
                         % (kind, c_str(key), c_str(path)))
                continue
            p.append('\tprintf("F %%s %%s off=%%lu size=%%lu\\n", %s, %s, '
                     '(unsigned long)offsetof(%s, %s), '
                     'SZ(((%s *)0)->%s));'
                     % (c_str(key), c_str(path), key, path, key, path)
                     if not _is_flexible(side, key, path) else
                     '\tprintf("F %%s %%s off=%%lu flexible\\n", %s, %s, '
                     '(unsigned long)offsetof(%s, %s));'
                     % (c_str(key), c_str(path), key, path))
    for e in side.named_enums:
        p.append('\tprintf("N %%s size=%%lu signed=%%d\\n", %s, SZ(%s), '
                 '(int)((%s)-1 < 0));' % (c_str(e), e, e))
    for n in side.enum_order:
        p.append('\tprintf("E %%s %%lld\\n", %s, (long long)%s);'
                 % (c_str(n), n))
    for n in int_macros:
        p.append('\tprintf("M %%s %%lld\\n", %s, (long long)(%s));'
                 % (c_str(n), n))
    p.append("\treturn 0;\n}")
    return "\n".join(p) + "\n"


def _is_flexible(side, key, path):
    for pth, _k, ty in side.records[key]:
        if pth == path:
            return ty.endswith("[]")
    return False


def ast_facts(side):
    lines = []
    for key in side.record_order:
        for path, kind, ty in side.records[key]:
            lines.append("T %s %s %s" % (key, path, ty))
    for name, desc in side.functions.items():
        lines.append("D %s %s" % (name, desc))
    for name, ty in side.typedefs.items():
        lines.append("Y %s %s" % (name, ty))
    for name, kind in side.macros.items():
        if name.startswith(OUR_MACRO_PREFIXES):
            continue
        lines.append("X %s %s" % (name, kind))
    return lines


# --------------------------------------------------------------------------
# Inline verbs: same machine code
# --------------------------------------------------------------------------

FUNC_RE = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")
TARGET_RE = re.compile(r"\b([0-9a-f]+) <([^>+]+)(?:\+0x([0-9a-f]+))?>")


def normalized_functions(objdump_text):
    """name -> instruction list with addresses made function-relative."""
    funcs, cur, start = {}, None, 0
    for line in objdump_text.splitlines():
        m = FUNC_RE.match(line.strip())
        if m:
            cur, start = m.group(2), int(m.group(1), 16)
            funcs[cur] = []
            continue
        if cur is None or not line.strip():
            continue
        body = re.sub(r"^\s*[0-9a-f]+:\s*", "", line.rstrip())

        def target(t):
            if t.group(2) == cur:
                return "<.+%d>" % (int(t.group(1), 16) - start)
            return "<ext>"   # the relocation line names the real target
        body = TARGET_RE.sub(target, body)
        body = re.sub(r"^[0-9a-f]+: (R_)", r"\1", body)
        funcs[cur].append(" ".join(body.split()))
    return funcs


def inline_code(side, args, headers, tmp):
    """Compile every inline verb out of line and fingerprint its code."""
    objdump = shutil.which("objdump")
    lst = os.path.join(args.our_inc, "infiniband", "softrdma_inline_list.h")
    if not objdump or not os.path.exists(lst):
        return []
    src = os.path.join(tmp, "%s_inline.c" % side.name)
    obj = src + ".o"
    with open(src, "w") as fp:
        fp.write(tu_text(headers, args.define))
        fp.write('#include "%s"\n' % lst)
        fp.write("#define X(n) void *volatile __keep_##n = (void *)&n;\n")
        fp.write("SOFTRDMA_INLINE_VERBS(X)\n")
    inc = ["-I" + r for r in args.include_dirs_for(side.name)]
    run([args.cc, "-O2", "-w", "-c", "-o", obj, src] + inc + args.cflags)
    funcs = normalized_functions(run([objdump, "-dr", "--no-show-raw-insn",
                                      obj]))
    out = []
    for name, insns in sorted(funcs.items()):
        digest = hashlib.sha1("\n".join(insns).encode()).hexdigest()[:16]
        out.append("C %s %s" % (name, digest))
    return out


# The <assert.h> seen by the fingerprinted code: glibc's assert() embeds the
# line number and the expression text, which say nothing about behaviour.
# This one keeps the condition and the call on failure, nothing else.
PROBE_ASSERT_H = """\
#ifndef SOFTRDMA_PROBE_ASSERT_H
#define SOFTRDMA_PROBE_ASSERT_H
void softrdma_probe_assert_failed(void) __attribute__((__noreturn__));
#define assert(e) ((e) ? (void)0 : softrdma_probe_assert_failed())
#endif
"""

# Include directories (relative to an include root) whose static inline
# functions are fingerprinted one by one.  The verbs header has its own
# list (softrdma_inline_list.h); the librdmacm headers do not need one.
INLINE_CODE_DIRS = ("rdma",)


def rdma_inline_code(side, args, headers, tmp):
    """Compile every static inline function of the include/rdma headers
    out of line (with a neutral assert()) and fingerprint its code."""
    objdump = shutil.which("objdump")
    if not objdump:
        return []
    names = sorted(n for n, f in side.inline_defs.items()
                   if os.path.basename(os.path.dirname(f))
                   in INLINE_CODE_DIRS)
    if not names:
        return []
    adir = os.path.join(tmp, "probe_assert")
    os.makedirs(adir, exist_ok=True)
    with open(os.path.join(adir, "assert.h"), "w") as fp:
        fp.write(PROBE_ASSERT_H)
    src = os.path.join(tmp, "%s_rdma_inline.c" % side.name)
    obj = src + ".o"
    with open(src, "w") as fp:
        fp.write(tu_text(headers, args.define))
        for n in names:
            fp.write("void *volatile __keep_%s = (void *)&%s;\n" % (n, n))
    inc = ["-I" + r for r in args.include_dirs_for(side.name)] + ["-I" + adir]
    run([args.cc, "-O2", "-w", "-c", "-o", obj, src] + inc + args.cflags)
    funcs = normalized_functions(run([objdump, "-dr", "--no-show-raw-insn",
                                      obj]))
    out = []
    for name in names:
        insns = funcs.get(name)
        digest = (hashlib.sha1("\n".join(insns).encode()).hexdigest()[:16]
                  if insns is not None else "not-emitted")
        out.append("I %s %s" % (name, digest))
    return out


def probe_side(side, args, headers, tmp):
    inc = ["-I" + r for r in args.include_dirs_for(side.name)]
    src = os.path.join(tmp, "%s_tu.c" % side.name)
    with open(src, "w") as fp:
        fp.write(tu_text(headers, args.define))
    cflags = inc + args.cflags
    parse_ast(side, args.clang, cflags, src)
    parse_macros(side, args.cc, cflags, src)
    imacros = integer_macros(side, args.cc, cflags, headers, args.define, tmp)
    prog = gen_probe(side, headers, args.define, imacros)
    csrc = os.path.join(tmp, "%s_probe.c" % side.name)
    exe = os.path.join(tmp, "%s_probe" % side.name)
    with open(csrc, "w") as fp:
        fp.write(prog)
    run([args.cc, "-std=gnu11", "-w", "-o", exe, csrc] + cflags)
    lines = run([exe]).splitlines()
    lines += inline_code(side, args, headers, tmp)
    lines += rdma_inline_code(side, args, headers, tmp)
    return sorted(set(lines + ast_facts(side))), imacros


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--include", default=os.path.join(REPO, "include"),
                    help="softrdma include directory")
    ap.add_argument("--header", action="append", default=[],
                    help="header to probe (relative, e.g. infiniband/sa.h); "
                    "default: every shipped header the system also has")
    ap.add_argument("-D", "--define", action="append", default=[],
                    help="macro to define before the includes")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--clang", default=shutil.which("clang") or "clang")
    ap.add_argument("--cflags", action="append", default=[],
                    help="extra compiler flag (repeatable)")
    ap.add_argument("--sys-include", default=SYS_INC,
                    help="root of the reference rdma-core headers "
                    "(default %(default)s)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the generated files and print their place")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    sys_inc = os.path.realpath(args.sys_include)

    if not os.path.exists(os.path.join(sys_inc, "infiniband", "verbs.h")):
        print("abi_probe: %s/infiniband/verbs.h not installed, skipping"
              % sys_inc)
        return SKIP
    if not shutil.which(args.clang):
        print("abi_probe: clang not found, skipping")
        return SKIP

    our_inc = os.path.realpath(args.include)
    args.our_inc = our_inc
    headers = order_headers(args.header) if args.header else \
        default_headers(our_inc, sys_inc)
    if not headers:
        die("no headers to probe")

    def include_dirs_for(name):
        if name == "ours":
            return [our_inc]
        return [] if sys_inc == "/usr/include" else [sys_inc]
    args.include_dirs_for = include_dirs_for

    ours = Side("ours", [our_inc])
    system = Side("system", [os.path.join(sys_inc, d) for d in PUBLIC_DIRS])

    tmp = tempfile.mkdtemp(prefix="abi_probe.")
    try:
        a, am = probe_side(ours, args, headers, tmp)
        b, bm = probe_side(system, args, headers, tmp)
    finally:
        if args.keep:
            print("abi_probe: generated files kept in " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    sa, sb = set(a), set(b)
    only_ours = sorted(sa - sb)
    only_sys = sorted(sb - sa)

    def count(lines, prefix):
        return sum(1 for l in lines if l.startswith(prefix))

    print("abi_probe: headers: " + " ".join(headers))
    print("abi_probe: compared %d structs/unions, %d fields, %d enumerators, "
          "%d named enums, %d functions/variables, %d typedefs, "
          "%d macros (%d with integer values), "
          "%d functions emitted for the inline verbs, "
          "%d static inline functions of rdma/ headers, same code"
          % (count(b, "R "), count(b, "F "), count(b, "E "), count(b, "N "),
             count(b, "D "), count(b, "Y "), count(b, "X "), len(bm),
             count(b, "C "), count(b, "I ")))
    if args.verbose:
        for l in b:
            print("  " + l)
    if not only_ours and not only_sys:
        print("abi_probe: PASS, no differences")
        return 0
    for l in only_sys:
        print("- system: " + l)
    for l in only_ours:
        print("+ ours:   " + l)
    print("abi_probe: FAIL, %d lines differ" % (len(only_ours) +
                                                 len(only_sys)))
    return 1


if __name__ == "__main__":
    sys.exit(main())
