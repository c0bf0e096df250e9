/* SPDX-License-Identifier: MIT */
/*
 * Addresses and ports, by the kernel's rules: a port is held by one id
 * per address (EADDRINUSE), a wildcard overlaps every address
 * (EADDRNOTAVAIL), REUSEADDR lets ids share a port but not a listener;
 * ephemeral ports differ and come back when freed; an address that is
 * not ours cannot be bound; the port spaces are separate; an unbound id
 * listens on an ephemeral port of every address.
 */
#include <arpa/inet.h>

#include <infiniband/ib.h>

#include "t_cm.h"

static struct rdma_cm_id *id_new(struct rdma_event_channel *ch,
				 enum rdma_port_space ps)
{
	struct rdma_cm_id *id;

	T_EQ(rdma_create_id(ch, &id, NULL, ps), 0);
	return id;
}

static int bind_to(struct rdma_cm_id *id, in_addr_t a, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(port),
				   .sin_addr.s_addr = htonl(a) };

	return rdma_bind_addr(id, (struct sockaddr *)&sin);
}

int main(void)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *a, *b, *c, *u;
	struct sockaddr_in *sin;
	uint16_t pa, pb;
	int one = 1;

	t_init("cm_bind");
	ch = t_cm_channel();

	/* Ephemeral ports: assigned, distinct, shown by the id. */
	a = id_new(ch, RDMA_PS_TCP);
	b = id_new(ch, RDMA_PS_TCP);
	T_EQ(bind_to(a, INADDR_LOOPBACK, 0), 0);
	T_EQ(bind_to(b, INADDR_LOOPBACK, 0), 0);
	pa = ntohs(rdma_get_src_port(a));
	pb = ntohs(rdma_get_src_port(b));
	T_NE(pa, 0);
	T_NE(pa, pb);
	sin = (struct sockaddr_in *)rdma_get_local_addr(a);
	T_EQ(ntohl(sin->sin_addr.s_addr), INADDR_LOOPBACK);
	T_NEG_ERRNO(bind_to(a, INADDR_LOOPBACK, 0), EINVAL); /* bound */

	/* The same address and port: in use; the wildcard overlaps. */
	c = id_new(ch, RDMA_PS_TCP);
	T_NEG_ERRNO(bind_to(c, INADDR_LOOPBACK, pa), EADDRINUSE);
	T_NEG_ERRNO(bind_to(c, INADDR_ANY, pa), EADDRNOTAVAIL);
	/* Another port space is another set of ports. */
	u = id_new(ch, RDMA_PS_UDP);
	T_EQ(bind_to(u, INADDR_LOOPBACK, pa), 0);
	T_EQ(rdma_destroy_id(u), 0);
	/* Freed with its id. */
	T_EQ(rdma_destroy_id(a), 0);
	T_EQ(bind_to(c, INADDR_LOOPBACK, pa), 0);
	T_EQ(rdma_destroy_id(c), 0);

	/* Not an address of ours; not a family the CM speaks. */
	a = id_new(ch, RDMA_PS_TCP);
	T_NEG_ERRNO(bind_to(a, 0xc0000201 /* 192.0.2.1 */, 0), EADDRNOTAVAIL);
	{
		struct sockaddr_ib sib = { .sib_family = AF_IB };

		T_NEG_ERRNO(rdma_bind_addr(a, (struct sockaddr *)&sib),
			    EAFNOSUPPORT);
	}
	T_EQ(rdma_destroy_id(a), 0);

	/* REUSEADDR: two ids on one port, until one listens. */
	a = id_new(ch, RDMA_PS_TCP);
	c = id_new(ch, RDMA_PS_TCP);
	T_EQ(rdma_set_option(a, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one,
			     sizeof(one)),
	     0);
	T_EQ(rdma_set_option(c, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one,
			     sizeof(one)),
	     0);
	T_NEG_ERRNO(rdma_set_option(c, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR,
				    &one, 1),
		    EINVAL); /* an int, not a byte */
	T_EQ(bind_to(a, INADDR_LOOPBACK, pb + 1), 0);
	T_EQ(bind_to(c, INADDR_LOOPBACK, pb + 1), 0);
	T_NEG_ERRNO(rdma_listen(a, 1), EADDRINUSE);
	T_EQ(rdma_destroy_id(c), 0);
	T_EQ(rdma_listen(a, 1), 0);
	T_EQ(rdma_destroy_id(a), 0);
	T_EQ(rdma_destroy_id(b), 0);

	/* Listening unbound: a wildcard and a port of its own. */
	a = id_new(ch, RDMA_PS_TCP);
	T_EQ(rdma_listen(a, 0), 0);
	T_NE(rdma_get_src_port(a), 0);
	T_EQ(rdma_destroy_id(a), 0);

	/* Options an id takes, and one it does not. */
	a = id_new(ch, RDMA_PS_TCP);
	{
		uint8_t tos = 32, timeout = 18;

		T_EQ(rdma_set_option(a, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS,
				     &tos, sizeof(tos)),
		     0);
		T_EQ(rdma_set_option(a, RDMA_OPTION_ID,
				     RDMA_OPTION_ID_ACK_TIMEOUT, &timeout,
				     sizeof(timeout)),
		     0);
		T_NEG_ERRNO(rdma_set_option(a, RDMA_OPTION_ID, 99, &tos, 1),
			    ENOSYS);
	}
	T_EQ(bind_to(a, INADDR_LOOPBACK, 0), 0);
	/* AF only is for ids not bound yet. */
	T_NEG_ERRNO(rdma_set_option(a, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY,
				    &one, sizeof(one)),
		    EINVAL);
	T_EQ(rdma_destroy_id(a), 0);

	/* The devices, opened once per process and shared with the ids. */
	{
		struct rdma_cm_id *x = id_new(ch, RDMA_PS_TCP);
		struct ibv_context **devs;
		int n = -1;

		devs = T_NONNULL(rdma_get_devices(&n));
		T_GE(n, 1);
		T_ASSERT(devs[n] == NULL);
		/* A loopback address is no device's (the kernel's
		 * cma_any_addr()): resolving one reaches softrdma0. */
		T_EQ(bind_to(x, INADDR_LOOPBACK, 0), 0);
		T_ASSERT(x->verbs == NULL);
		t_cm_resolve(ch, x, 1);
		T_PTR_EQ(x->verbs, devs[0]);
		rdma_free_devices(devs);
		/* Multicast is for UD ids (cm_mcast.c): not a TCP one. */
		T_NEG_ERRNO(rdma_join_multicast(x, rdma_get_local_addr(x),
						NULL),
			    EINVAL);
		T_EQ(rdma_destroy_id(x), 0);
	}
	T_STR_EQ(rdma_event_str(RDMA_CM_EVENT_CONNECT_REQUEST), "RDMA_CM_EVENT_"
								"CONNECT_"
								"REQUEST");
	T_STR_EQ(rdma_event_str(RDMA_CM_EVENT_TIMEWAIT_EXIT), "RDMA_CM_EVENT_"
							      "TIMEWAIT_EXIT");
	T_STR_EQ(rdma_event_str((enum rdma_cm_event_type)99), "UNKNOWN EVENT");

	rdma_destroy_event_channel(ch);
	T_CM_WAIT_IDLE(0, 1000);
	t_pass();
}
