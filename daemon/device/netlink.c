/* SPDX-License-Identifier: MIT */
/*
 * rtnetlink, as roce_gid_mgmt and rxe hear of interfaces in the kernel:
 * one interface's flags, MTU and MAC; its addresses as RoCE v2 GIDs; and a
 * socket that tells the daemon when links and addresses change.
 *
 * Queries use a short-lived blocking socket with a receive timeout, so a
 * kernel that never answers cannot stall the daemon for long.
 */
#include <errno.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/inet.h"
#include "daemon/device/link.h"

#define NL_BUF_SIZE 32768
#define NL_TIMEOUT_MS 2000
#define NL_MAX_ADDRS 64

typedef int nl_msg_fn(const struct nlmsghdr *h, void *arg);

/* NLMSG_OK without its signed/unsigned comparison. */
static bool nl_ok(const struct nlmsghdr *h, int len)
{
	return len >= (int)sizeof(*h) && h->nlmsg_len >= sizeof(*h) &&
	       h->nlmsg_len <= (unsigned int)len;
}

static int nl_socket(void)
{
	struct timeval tv = { .tv_sec = NL_TIMEOUT_MS / 1000,
			      .tv_usec = (NL_TIMEOUT_MS % 1000) * 1000 };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/*
 * Send one request and feed every reply message to fn until the answer
 * is complete: NLMSG_DONE for a dump, the first message otherwise.
 * Returns 0, the kernel's negative errno, or fn's non-zero result.
 */
static int nl_talk(struct nlmsghdr *req, nl_msg_fn *fn, void *arg)
{
	static uint32_t seq;
	_Alignas(struct nlmsghdr) uint8_t buf[NL_BUF_SIZE];
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	bool dump = req->nlmsg_flags & NLM_F_DUMP;
	int fd, ret = 0;

	fd = nl_socket();
	if (fd < 0)
		return fd;
	req->nlmsg_seq = ++seq;
	if (sendto(fd, req, req->nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0) {
		ret = -errno;
		goto out;
	}
	for (;;) {
		struct sockaddr_nl from;
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0,
				     (struct sockaddr *)&from, &flen);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = errno == EAGAIN ? -ETIMEDOUT : -errno;
			goto out;
		}
		if (from.nl_pid != 0)
			continue; /* only the kernel answers */
		int len = (int)n;

		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; nl_ok(h, len);
		     h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != req->nlmsg_seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				goto out;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					ret = -EPROTO;
				else
					ret = e->error;
				goto out;
			}
			ret = fn(h, arg);
			if (ret || !dump)
				goto out;
		}
	}
out:
	close(fd);
	return ret;
}

static int link_msg(const struct nlmsghdr *h, void *arg)
{
	struct nl_link *l = arg;
	const struct ifinfomsg *ifi = NLMSG_DATA(h);
	int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*ifi));

	if (h->nlmsg_type != RTM_NEWLINK || len < 0)
		return -EPROTO;
	l->ifindex = (uint32_t)ifi->ifi_index;
	l->flags = ifi->ifi_flags;
	for (const struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, len);
	     a = RTA_NEXT(a, len)) {
		size_t alen = RTA_PAYLOAD(a);

		switch (a->rta_type) {
		case IFLA_IFNAME:
			snprintf(l->name, sizeof(l->name), "%.*s", (int)alen,
				 (const char *)RTA_DATA(a));
			break;
		case IFLA_MTU:
			if (alen >= 4)
				memcpy(&l->mtu, RTA_DATA(a), 4);
			break;
		case IFLA_ADDRESS:
			if (alen == 6) {
				memcpy(l->mac, RTA_DATA(a), 6);
				l->has_mac = true;
			}
			break;
		}
	}
	return 0;
}

int nl_get_link(uint32_t ifindex, struct nl_link *out)
{
	struct {
		struct nlmsghdr h;
		struct ifinfomsg ifi;
	} req = {
		.h = { .nlmsg_len = sizeof(req),
		       .nlmsg_type = RTM_GETLINK,
		       .nlmsg_flags = NLM_F_REQUEST },
		.ifi = { .ifi_family = AF_UNSPEC, .ifi_index = (int)ifindex },
	};

	memset(out, 0, sizeof(*out));
	if (!ifindex || ifindex > INT32_MAX)
		return -ENODEV;
	return nl_talk(&req.h, link_msg, out);
}

/* Addresses of one interface, each with its place in the table order. */
struct addr_list {
	uint32_t ifindex;
	unsigned int n;
	union ibv_gid gid[NL_MAX_ADDRS];
	uint8_t rank[NL_MAX_ADDRS]; /* 0 IPv4, 1 IPv6, 2 IPv6 link-local */
};

static void addr_put(struct addr_list *al, const union ibv_gid *g, uint8_t rank)
{
	if (al->n < NL_MAX_ADDRS) {
		al->gid[al->n] = *g;
		al->rank[al->n++] = rank;
	}
}

static int addr_msg(const struct nlmsghdr *h, void *arg)
{
	static const uint8_t zero[16];
	struct addr_list *al = arg;
	const struct ifaddrmsg *ifa = NLMSG_DATA(h);
	int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*ifa));
	const void *local = NULL, *address = NULL, *addr;
	uint32_t flags;
	union ibv_gid g = { 0 };

	if (h->nlmsg_type != RTM_NEWADDR || len < 0 ||
	    ifa->ifa_index != al->ifindex)
		return 0;
	flags = ifa->ifa_flags;
	for (const struct rtattr *a = IFA_RTA(ifa); RTA_OK(a, len);
	     a = RTA_NEXT(a, len)) {
		size_t need = ifa->ifa_family == AF_INET ? 4 : 16;

		if (a->rta_type == IFA_FLAGS && RTA_PAYLOAD(a) >= 4)
			memcpy(&flags, RTA_DATA(a), 4);
		else if (a->rta_type == IFA_LOCAL && RTA_PAYLOAD(a) >= need)
			local = RTA_DATA(a);
		else if (a->rta_type == IFA_ADDRESS && RTA_PAYLOAD(a) >= need)
			address = RTA_DATA(a);
	}
	/* Not yet (or never) the interface's own: duplicate address
	 * detection has not passed. */
	if (flags & (IFA_F_TENTATIVE | IFA_F_DADFAILED))
		return 0;
	if (ifa->ifa_family == AF_INET) {
		/* On a point-to-point link IFA_ADDRESS is the peer's. */
		addr = local ? local : address;
		if (!addr || !memcmp(addr, zero, 4))
			return 0;
		srd_gid_from_v4(g.raw, addr);
		addr_put(al, &g, 0);
	} else if (ifa->ifa_family == AF_INET6) {
		addr = address ? address : local;
		if (!addr || !memcmp(addr, zero, 16))
			return 0;
		memcpy(g.raw, addr, 16);
		addr_put(al, &g,
			 (g.raw[0] == 0xfe && (g.raw[1] & 0xc0) == 0x80) ? 2
									 : 1);
	}
	return 0;
}

int nl_get_gids(uint32_t ifindex, union ibv_gid *out, unsigned int max)
{
	struct {
		struct nlmsghdr h;
		struct ifaddrmsg ifa;
	} req = {
		.h = { .nlmsg_len = sizeof(req),
		       .nlmsg_type = RTM_GETADDR,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.ifa = { .ifa_family = AF_UNSPEC },
	};
	static struct addr_list al; /* large; the daemon is single threaded */
	unsigned int n = 0;
	int ret;

	memset(&al, 0, sizeof(al));
	al.ifindex = ifindex;
	ret = nl_talk(&req.h, addr_msg, &al);
	if (ret)
		return ret;
	for (uint8_t rank = 0; rank < 3; rank++)
		for (unsigned int i = 0; i < al.n && n < max; i++)
			if (al.rank[i] == rank)
				out[n++] = al.gid[i];
	return (int)n;
}

int nl_events_open(void)
{
	struct sockaddr_nl sa = {
		.nl_family = AF_NETLINK,
		.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR |
			     RTMGRP_IPV6_IFADDR,
	};
	int rcvbuf = 1 << 20;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
			NETLINK_ROUTE);

	if (fd < 0)
		return -errno;
	/* A burst (an interface with many addresses going away) must not
	 * overflow; if it does anyway, everything is resynced. */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* The interface a notification is about; 0 for anything else. */
static uint32_t msg_ifindex(const struct nlmsghdr *h)
{
	switch (h->nlmsg_type) {
	case RTM_NEWLINK:
	case RTM_DELLINK:
		if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg)))
			return 0;
		return (uint32_t)((const struct ifinfomsg *)NLMSG_DATA(h))
			->ifi_index;
	case RTM_NEWADDR:
	case RTM_DELADDR:
		if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifaddrmsg)))
			return 0;
		return ((const struct ifaddrmsg *)NLMSG_DATA(h))->ifa_index;
	default:
		return 0;
	}
}

int nl_events_read(int fd, void (*fn)(void *arg, uint32_t ifindex), void *arg)
{
	_Alignas(struct nlmsghdr) uint8_t buf[NL_BUF_SIZE];

	for (;;) {
		struct sockaddr_nl from;
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr mh = { .msg_name = &from,
				     .msg_namelen = sizeof(from),
				     .msg_iov = &iov,
				     .msg_iovlen = 1 };
		ssize_t n = recvmsg(fd, &mh, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			if (errno == ENOBUFS) {
				fn(arg, 0); /* some were lost */
				continue;
			}
			return -errno;
		}
		if (from.nl_pid != 0)
			continue;
		if (mh.msg_flags & MSG_TRUNC) {
			fn(arg, 0);
			continue;
		}
		int len = (int)n;

		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; nl_ok(h, len);
		     h = NLMSG_NEXT(h, len)) {
			uint32_t ifindex = msg_ifindex(h);

			if (ifindex)
				fn(arg, ifindex);
		}
	}
}
