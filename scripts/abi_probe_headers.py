#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check that every public header of softrdma stands on its own.

For each header under include/infiniband and include/rdma, and for each
available compiler (gcc, clang as C; g++, clang++ as C++) and language
standard, compile a file that includes only that header, with
-Wall -Wextra -Werror (plus the project's extra C warnings).  Also:

  - the headers must not pull anything from the system's
    /usr/include/infiniband or /usr/include/rdma;
  - <infiniband/verbs.h> must also build with SOFTRDMA_NO_INLINE_VERBS,
    and then every name of SOFTRDMA_INLINE_VERBS() must be an external
    function while its __softrdma_inl_ twin exists;
  - the X-macro list in <infiniband/softrdma_inline_list.h> must name
    exactly the functions verbs.h defines inline.

Exit status: 0 pass, 1 failure, 77 when no compiler is available.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
FORBIDDEN = ("/usr/include/infiniband/", "/usr/include/rdma/")

C_FLAGS = ["-Wall", "-Wextra", "-Werror", "-Wshadow", "-Wformat=2",
           "-Wmissing-prototypes", "-Wstrict-prototypes", "-Wredundant-decls"]
CXX_FLAGS = ["-Wall", "-Wextra", "-Werror", "-Wshadow"]
C_STDS = [None, "-std=c11", "-std=gnu99"]
CXX_STDS = [None, "-std=c++11"]

# Headers that deliberately emit a #warning when included.
OBSOLETE = {"infiniband/arch.h"}


# Expands the function-like macros and calls a sample of the inline verbs
# (and of the librdmacm inline functions) the way applications do.
USAGE = r"""
#include <infiniband/verbs.h>
#include <infiniband/sa.h>
#include <infiniband/opcode.h>

int softrdma_usage(struct ibv_context *ctx, struct ibv_pd *pd, void *buf,
		   struct ibv_qp *qp, struct ibv_cq_ex *cqx,
		   unsigned int acc);
int softrdma_usage(struct ibv_context *ctx, struct ibv_pd *pd, void *buf,
		   struct ibv_qp *qp, struct ibv_cq_ex *cqx,
		   unsigned int acc)
{
	struct ibv_port_attr pattr;
	struct ibv_device_attr_ex dattr;
	struct ibv_gid_entry ents[4];
	struct ibv_wc wc;
	struct ibv_send_wr *bad = NULL;
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
	struct ibv_mr *mr;
	int rc = 0;

	rc |= ibv_query_port(ctx, 1, &pattr);
	rc |= ibv_query_device_ex(ctx, NULL, &dattr);
	rc |= (int)ibv_query_gid_table(ctx, ents, 4, 0);
	mr = ibv_reg_mr(pd, buf, 64, IBV_ACCESS_LOCAL_WRITE);
	mr = ibv_reg_mr(pd, buf, 64, (int)acc);
	mr = ibv_reg_mr_iova(pd, buf, 64, 0x1000, IBV_ACCESS_RELAXED_ORDERING);
	rc |= ibv_dereg_mr(mr);
	if (verbs_get_ctx_op(ctx, create_cq_ex) != NULL)
		rc |= 1;
	rc |= ibv_poll_cq(ibv_cq_ex_to_cq(cqx), 1, &wc);
	rc |= ibv_req_notify_cq(ibv_cq_ex_to_cq(cqx), 0);
	rc |= ibv_post_send(qp, NULL, &bad);
	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 1, 0, 0);
	rc |= ibv_wr_complete(qpx);
	if (ibv_start_poll(cqx, &pa) == 0) {
		rc |= (int)ibv_wc_read_byte_len(cqx);
		ibv_end_poll(cqx);
	}
	rc |= IBV_OPCODE_RC_SEND_ONLY;
	rc |= (int)ibv_flow_label_to_udp_sport(5);
	rc |= (int)sizeof(struct ibv_path_record);
	return rc;
}

#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>

int softrdma_cm_usage(struct rdma_cm_id *id, void *buf, struct ibv_ah *ah);
int softrdma_cm_usage(struct rdma_cm_id *id, void *buf, struct ibv_ah *ah)
{
	struct ibv_mr *mr = rdma_reg_msgs(id, buf, 64);
	struct ibv_wc wc;
	int rc = 0;

	rc |= rdma_post_recv(id, NULL, buf, 64, mr);
	rc |= rdma_post_send(id, NULL, buf, 64, NULL, IBV_SEND_INLINE);
	rc |= rdma_post_read(id, buf, buf, 64, mr, 0, 0x1000, 5);
	rc |= rdma_post_write(id, buf, buf, 64, mr, IBV_SEND_SIGNALED, 0, 5);
	rc |= rdma_post_ud_send(id, NULL, buf, 64, mr, 0, ah, 7);
	rc |= rdma_get_send_comp(id, &wc) + rdma_get_recv_comp(id, &wc);
	rc |= rdma_dereg_mr(rdma_reg_write(id, buf, 64));
	rc |= rdma_dereg_mr(rdma_reg_read(id, buf, 64));
	rc |= rdma_dereg_mr(mr);
	rc |= rdma_get_local_addr(id)->sa_family == AF_INET6;
	rc |= rdma_get_peer_addr(id)->sa_family == AF_IB;
	rc |= (int)rdma_get_src_port(id) + RDMA_OPTION_ID_ACK_TIMEOUT;
	rc |= (int)(RDMA_IB_IP_PS_TCP >> 16) + RAI_PASSIVE + RDMA_UDP_QKEY;
	rc |= rpoll(NULL, 0, 0) + rfcntl(0, 3) + SOL_RDMA + RDMA_INLINE;
	return rc;
}
"""


def public_headers(inc):
    out = []
    for d in ("infiniband", "rdma"):
        base = os.path.join(inc, d)
        if not os.path.isdir(base):
            continue
        for root, _dirs, files in os.walk(base):
            for f in files:
                if f.endswith(".h"):
                    out.append(os.path.relpath(os.path.join(root, f), inc))
    return sorted(out)


class Checker:
    def __init__(self, inc, tmp, verbose):
        self.inc = inc
        self.tmp = tmp
        self.verbose = verbose
        self.failures = 0
        self.runs = 0

    def compile(self, cc, lang, flags, text, what):
        ext = ".c" if lang == "c" else ".cc"
        src = os.path.join(self.tmp, "t%d%s" % (self.runs, ext))
        dep = src + ".d"
        with open(src, "w") as fp:
            fp.write(text)
        cmd = ([cc, "-x", "c" if lang == "c" else "c++", "-fsyntax-only",
                "-I" + self.inc, "-MD", "-MF", dep] + flags + [src])
        self.runs += 1
        res = subprocess.run(cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, universal_newlines=True)
        ok = res.returncode == 0
        if ok and os.path.exists(dep):
            with open(dep) as fp:
                deps = fp.read().replace("\\\n", " ").split()
            bad = [d for d in deps
                   if os.path.realpath(d).startswith(FORBIDDEN)]
            if bad:
                self.failures += 1
                print("FAIL %s: pulls in %s" % (what, " ".join(bad)))
                return False
        if not ok:
            self.failures += 1
            print("FAIL %s\n  %s\n%s" % (what, " ".join(cmd), res.stdout))
        elif self.verbose:
            print("ok   %s" % what)
        return ok


def inline_names(verbs_h):
    with open(verbs_h) as fp:
        text = fp.read()
    return re.findall(r"^__SOFTRDMA_INL_EXTERN\(([A-Za-z_0-9]+)\)", text,
                      re.M)


def listed_names(list_h):
    with open(list_h) as fp:
        text = fp.read()
    m = re.search(r"#define SOFTRDMA_INLINE_VERBS\(X\)(.*?)\n\s*\n", text,
                  re.S)
    names = re.findall(r"\bX\(([A-Za-z_0-9]+)\)", m.group(1)) if m else []
    cnt = re.search(r"#define SOFTRDMA_INLINE_VERBS_COUNT (\d+)", text)
    return names, int(cnt.group(1)) if cnt else -1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--include", default=os.path.join(REPO, "include"))
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    inc = os.path.realpath(args.include)

    compilers = [(c, "c") for c in ("gcc", "clang") if shutil.which(c)]
    compilers += [(c, "c++") for c in ("g++", "clang++") if shutil.which(c)]
    if not compilers:
        print("headers_standalone: no compiler found, skipping")
        return 77

    tmp = tempfile.mkdtemp(prefix="hdr_standalone.")
    chk = Checker(inc, tmp, args.verbose)
    try:
        headers = public_headers(inc)
        for h in headers:
            extra = []
            if h in OBSOLETE:
                extra = ["-Wno-cpp"]
            for cc, lang in compilers:
                stds = C_STDS if lang == "c" else CXX_STDS
                base = C_FLAGS if lang == "c" else CXX_FLAGS
                for std in stds:
                    flags = base + ([std] if std else []) + (
                        ["-Wno-#warnings"] if extra and "clang" in cc
                        else extra)
                    chk.compile(cc, lang, flags, "#include <%s>\n" % h,
                                "%s %s %s %s" % (h, cc, std or "default",
                                                 lang))

        # Everything together, in both modes.
        # verbs.h first, as applications do: including the uverbs ioctl
        # header before it redefines RDMA_UAPI_PTR (as in rdma-core).
        first = ["infiniband/verbs.h"]
        together = "".join("#include <%s>\n" % h
                           for h in first + [h for h in headers
                                             if h not in first]
                           if h not in OBSOLETE)
        for cc, lang in compilers:
            base = C_FLAGS if lang == "c" else CXX_FLAGS
            chk.compile(cc, lang, base, together, "all headers %s" % cc)
            chk.compile(cc, lang, base,
                        "#define SOFTRDMA_NO_INLINE_VERBS\n" + together,
                        "all headers, SOFTRDMA_NO_INLINE_VERBS, %s" % cc)

        # The list must match the header exactly.
        in_header = inline_names(os.path.join(inc, "infiniband", "verbs.h"))
        listed, count = listed_names(
            os.path.join(inc, "infiniband", "softrdma_inline_list.h"))
        if sorted(in_header) != sorted(listed) or count != len(listed):
            chk.failures += 1
            print("FAIL softrdma_inline_list.h does not match verbs.h")
            print("  only in verbs.h: %s" %
                  sorted(set(in_header) - set(listed)))
            print("  only in the list: %s" %
                  sorted(set(listed) - set(in_header)))
            print("  SOFTRDMA_INLINE_VERBS_COUNT %d, %d listed" %
                  (count, len(listed)))
        elif args.verbose:
            print("ok   inline list: %d names" % len(listed))

        # Default mode: each name is a static inline function.
        # NO_INLINE mode: each name is an extern function of the same type
        # as its inline twin.
        inline_check = (
            "#include <infiniband/verbs.h>\n"
            "#define X(n) (void)&n;\n"
            "void softrdma_probe_all(void);\n"
            "void softrdma_probe_all(void)\n{\n"
            "\tSOFTRDMA_INLINE_VERBS(X)\n}\n")
        extern_check = (
            "#define SOFTRDMA_NO_INLINE_VERBS\n"
            "#include <infiniband/verbs.h>\n"
            "#define X(n) _Static_assert(__builtin_types_compatible_p("
            "__typeof__(n), __typeof__(__softrdma_inl_##n)), #n);\n"
            "SOFTRDMA_INLINE_VERBS(X)\n"
            "#undef X\n"
            "#define X(n) extern __typeof__(n) n;\n"
            "SOFTRDMA_INLINE_VERBS(X)\n")
        for cc, lang in compilers:
            base = C_FLAGS if lang == "c" else CXX_FLAGS
            for mode in ("", "#define SOFTRDMA_NO_INLINE_VERBS\n"):
                chk.compile(cc, lang, base, mode + USAGE,
                            "usage of macros and inline verbs, %s%s"
                            % (cc, ", NO_INLINE" if mode else ""))
        for cc, lang in compilers:
            if lang != "c":
                continue
            chk.compile(cc, lang, C_FLAGS, inline_check,
                        "inline names resolve (%s)" % cc)
            chk.compile(cc, lang, ["-Wall", "-Wextra", "-Werror"],
                        extern_check, "extern twins match (%s)" % cc)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print("headers_standalone: %d compilations, %d failures"
          % (chk.runs, chk.failures))
    return 1 if chk.failures else 0


if __name__ == "__main__":
    sys.exit(main())
