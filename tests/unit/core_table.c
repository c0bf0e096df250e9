/* SPDX-License-Identifier: MIT */
/* Index tables: limits, the first index, no immediate reuse, generations;
 * and the QPN space starting at 0x11, drawn at random. */
#include <errno.h>

#include "tests/unit/t_core.h"

int main(void)
{
	struct srd_table t;
	static int objs[100];
	struct t_core core;
	int64_t idx[10];

	table_init(&t, 5, 10);
	for (int i = 0; i < 10; i++) {
		idx[i] = table_alloc(&t, &objs[i]);
		T_EQ(idx[i], 5 + i);
		T_ASSERT(table_get(&t, idx[i]) == &objs[i]);
	}
	T_EQ(table_alloc(&t, &objs[10]), -ENOMEM);
	T_ASSERT(!table_get(&t, 4));
	T_ASSERT(!table_get(&t, 15));
	T_ASSERT(!table_get(&t, UINT32_MAX));
	T_EQ(table_alloc(&t, NULL), -ENOMEM);
	/* Freed slots come back, oldest free first after the last one. */
	table_free(&t, 7);
	table_free(&t, 6);
	T_EQ(table_gen(&t, 7), 1);
	T_ASSERT(!table_get(&t, 7));
	T_EQ(table_alloc(&t, &objs[20]), 6);
	T_EQ(table_alloc(&t, &objs[21]), 7);
	T_EQ(t.count, 10);
	table_free(&t, 7);
	table_free(&t, 7); /* twice: harmless */
	T_EQ(t.count, 9);
	T_EQ(table_gen(&t, 7), 2);
	table_fini(&t);

	/* Round robin: with room to grow, a freed index is not reused. */
	table_init(&t, 1, 1000);
	T_EQ(table_alloc(&t, &objs[0]), 1);
	table_free(&t, 1);
	T_EQ(table_alloc(&t, &objs[0]), 2);
	table_fini(&t);

	/* QPNs: 0 and 1 are never handed out. */
	t_core_init(&core);
	{
		struct srd_qp *q = calloc(1, sizeof(*q));

		int64_t qpn = table_alloc(&core.d.qps_by_num, q);

		T_ASSERT(qpn >= 0x11 && qpn < 0x11 + 16384);
		T_ASSERT(qp_lookup_num(&core.d, (uint32_t)qpn) == q);
		table_free(&core.d.qps_by_num, (uint32_t)qpn);
		free(q);
	}
	T_ASSERT(!qp_lookup_num(&core.d, 0));
	T_ASSERT(!qp_lookup_num(&core.d, 0xffffff));
	T_ASSERT(!qp_lookup_num(&core.d, 1));
	t_core_fini(&core);
	return T_EXIT_PASS;
}
