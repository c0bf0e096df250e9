/* SPDX-License-Identifier: MIT */
/*
 * The memory window verbs through the library's exported functions
 * (SOFTRDMA_NO_INLINE_VERBS), as bindings that cannot use the header's
 * inline bodies call them: alloc, bind (type 1), access, dealloc.
 */
#define SOFTRDMA_NO_INLINE_VERBS
#include <dlfcn.h>
#include <stdio.h>

#include "t_util.h"

#define LEN 4096

int main(void)
{
	static const char *const names[] = {
		"ibv_alloc_mw",	   "ibv_dealloc_mw",
		"ibv_bind_mw",	   "ibv_inc_rkey",
		"ibv_wr_bind_mw",  "ibv_wr_local_inv",
		"ibv_wr_send_inv", "ibv_wc_read_invalidated_rkey",
	};
	struct ibv_mw_bind b = { .wr_id = 1, .send_flags = IBV_SEND_SIGNALED };
	struct t_buf src;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct t_pair p;
	struct t_dev d;
	uint32_t rkey;
	uint8_t *buf;

	t_init("mw_exports");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!dlsym(RTLD_DEFAULT, names[i]))
			T_FAIL("%s is not exported", names[i]);
	/* The calls below go to those symbols, not to inline bodies. */
	T_PTR_EQ((void *)&ibv_alloc_mw, dlsym(RTLD_DEFAULT, "ibv_alloc_mw"));
	T_PTR_EQ((void *)&ibv_bind_mw, dlsym(RTLD_DEFAULT, "ibv_bind_mw"));

	t_dev_open(&d);
	t_buf_alloc(&d, &src, LEN, T_ACCESS_ALL);
	buf = t_zalloc(LEN);
	mr = T_NONNULL(
		ibv_reg_mr(d.pd, buf, LEN, T_ACCESS_ALL | IBV_ACCESS_MW_BIND));
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	mw = T_NONNULL(ibv_alloc_mw(d.pd, IBV_MW_TYPE_1));
	rkey = mw->rkey;
	b.bind_info.mr = mr;
	b.bind_info.addr = (uintptr_t)buf;
	b.bind_info.length = LEN;
	b.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	T_OK(ibv_bind_mw(p.b, mw, &b));
	T_EXPECT_WC(p.cq_b, NULL, 1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	T_EQ(mw->rkey, ibv_inc_rkey(rkey));
	t_fill(buf, LEN, 2);
	t_post_send(p.a, 2, IBV_WR_RDMA_READ, src.mr, src.p, LEN,
		    IBV_SEND_SIGNALED, (uintptr_t)buf, mw->rkey);
	T_EXPECT_WC(p.cq_a, NULL, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	T_CHECK_FILL(src.p, LEN, 2);
	T_OK(ibv_dealloc_mw(mw));
	t_pair_destroy(&p);
	T_OK(ibv_dereg_mr(mr));
	t_buf_free(&src);
	t_free(buf, LEN);
	t_dev_close(&d);
	t_pass();
}
