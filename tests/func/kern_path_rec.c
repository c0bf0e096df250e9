/* SPDX-License-Identifier: MIT */
/*
 * ibv_copy_path_rec_to_kern/_from_kern, as librdmacm calls them on what
 * the CM hands it: every field of a path record survives the trip to the
 * kernel's layout and back, GIDs byte for byte, big endian fields as they
 * are, and the two int flags become 0 or 1.  No daemon.
 */
#include <string.h>

#include "libibverbs/kern_abi.h"
#include "t_assert.h"

int main(void)
{
	struct ibv_sa_path_rec in, out;
	struct srd_kern_path_rec k;
	unsigned int i;

	t_assert_init("kern_path_rec");
	memset(&in, 0, sizeof(in));
	for (i = 0; i < 16; i++) {
		in.dgid.raw[i] = (uint8_t)(0x10 + i);
		in.sgid.raw[i] = (uint8_t)(0x80 + i);
	}
	in.dlid = 0x1234;
	in.slid = 0x5678;
	in.raw_traffic = 7; /* any true value */
	in.flow_label = 0x000abcde;
	in.hop_limit = 64;
	in.traffic_class = 0x28;
	in.reversible = -1;
	in.numb_path = 3;
	in.pkey = 0xffff;
	in.sl = 5;
	in.mtu_selector = 2;
	in.mtu = 4;
	in.rate_selector = 1;
	in.rate = 16;
	in.packet_life_time_selector = 2;
	in.packet_life_time = 18;
	in.preference = 9;

	memset(&k, 0xa5, sizeof(k));
	ibv_copy_path_rec_to_kern(&k, &in);
	T_ASSERT(!memcmp(k.dgid, in.dgid.raw, 16));
	T_ASSERT(!memcmp(k.sgid, in.sgid.raw, 16));
	T_EQ(k.dlid, 0x1234);
	T_EQ(k.slid, 0x5678);
	T_EQ(k.raw_traffic, 1);
	T_EQ(k.flow_label, 0x000abcde);
	T_EQ(k.hop_limit, 64);
	T_EQ(k.traffic_class, 0x28);
	T_EQ(k.reversible, 1);
	T_EQ(k.numb_path, 3);
	T_EQ(k.pkey, 0xffff);
	T_EQ(k.sl, 5);
	T_EQ(k.mtu_selector, 2);
	T_EQ(k.mtu, 4);
	T_EQ(k.rate_selector, 1);
	T_EQ(k.rate, 16);
	T_EQ(k.packet_life_time_selector, 2);
	T_EQ(k.packet_life_time, 18);
	T_EQ(k.preference, 9);

	memset(&out, 0x5a, sizeof(out));
	ibv_copy_path_rec_from_kern(&out, &k);
	in.raw_traffic = 1;
	in.reversible = 1;
	T_ASSERT(!memcmp(out.dgid.raw, in.dgid.raw, 16));
	T_ASSERT(!memcmp(out.sgid.raw, in.sgid.raw, 16));
	T_EQ(out.dlid, in.dlid);
	T_EQ(out.slid, in.slid);
	T_EQ(out.raw_traffic, in.raw_traffic);
	T_EQ(out.flow_label, in.flow_label);
	T_EQ(out.hop_limit, in.hop_limit);
	T_EQ(out.traffic_class, in.traffic_class);
	T_EQ(out.reversible, in.reversible);
	T_EQ(out.numb_path, in.numb_path);
	T_EQ(out.pkey, in.pkey);
	T_EQ(out.sl, in.sl);
	T_EQ(out.mtu_selector, in.mtu_selector);
	T_EQ(out.mtu, in.mtu);
	T_EQ(out.rate_selector, in.rate_selector);
	T_EQ(out.rate, in.rate);
	T_EQ(out.packet_life_time_selector, in.packet_life_time_selector);
	T_EQ(out.packet_life_time, in.packet_life_time);
	T_EQ(out.preference, in.preference);

	/* False flags stay false. */
	in.raw_traffic = 0;
	in.reversible = 0;
	ibv_copy_path_rec_to_kern(&k, &in);
	T_EQ(k.raw_traffic, 0);
	T_EQ(k.reversible, 0);
	t_pass();
}
