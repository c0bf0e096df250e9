/* SPDX-License-Identifier: MIT */
/*
 * Classic pcap files: a 24-byte file header, then per packet a 16-byte
 * record header (seconds, micro- or nanoseconds, captured and original
 * length) and the captured bytes, all in the writer's byte order.
 */
#include <byteswap.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/inet.h"
#include "daemon/net/icrc.h"
#include "daemon/net/pcap.h"

#define PCAP_MAGIC_USEC 0xa1b2c3d4u
#define PCAP_MAGIC_NSEC 0xa1b23c4du
#define PCAPNG_MAGIC 0x0a0d0d0au
#define PCAP_VERSION_MAJOR 2
#define PCAP_VERSION_MINOR 4
#define PCAP_FILE_HDR_SIZE 24
#define PCAP_REC_HDR_SIZE 16
#define PCAP_WBUF_SIZE (64u * 1024)

#define ETH_HDR_SIZE 14
#define SLL_HDR_SIZE 16
#define SLL2_HDR_SIZE 20
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_IPV6 0x86dd
#define ROCE_UDP_PORT 4791
#define ROCE_TTL 64

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static uint32_t rd32(const struct srd_pcap_reader *r, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return r->swapped ? bswap_32(v) : v;
}

int srd_pcap_open(struct srd_pcap_reader *r, const char *path)
{
	uint8_t h[PCAP_FILE_HDR_SIZE];
	uint32_t magic;
	uint16_t major;
	int err;

	memset(r, 0, sizeof(*r));
	r->f = fopen(path, "rbe");
	if (!r->f)
		return -errno;
	if (fread(h, 1, sizeof(h), r->f) != sizeof(h)) {
		err = -EPROTO;
		goto err_close;
	}
	memcpy(&magic, h, sizeof(magic));
	if (magic == PCAP_MAGIC_USEC || magic == PCAP_MAGIC_NSEC) {
		r->swapped = false;
	} else if (bswap_32(magic) == PCAP_MAGIC_USEC ||
		   bswap_32(magic) == PCAP_MAGIC_NSEC) {
		r->swapped = true;
		magic = bswap_32(magic);
	} else {
		/* pcapng is another format altogether. */
		err = magic == PCAPNG_MAGIC ? -ENOTSUP : -EPROTO;
		goto err_close;
	}
	r->nsec = magic == PCAP_MAGIC_NSEC;
	memcpy(&major, h + 4, sizeof(major));
	if ((r->swapped ? bswap_16(major) : major) != PCAP_VERSION_MAJOR) {
		err = -ENOTSUP;
		goto err_close;
	}
	r->snaplen = rd32(r, h + 16);
	/* The upper bits may carry FCS information. */
	r->linktype = rd32(r, h + 20) & 0xffff;
	return 0;

err_close:
	fclose(r->f);
	r->f = NULL;
	return err;
}

int srd_pcap_l3(uint32_t linktype, const uint8_t *frame, size_t len,
		uint16_t *proto, uint32_t *off)
{
	uint16_t type;
	size_t o;

	switch (linktype) {
	case SRD_PCAP_LINK_ETHERNET:
		if (len < ETH_HDR_SIZE)
			return -EPROTO;
		o = ETH_HDR_SIZE;
		type = get_be16(frame + 12);
		/* 802.1Q, 802.1ad and the old QinQ tag. */
		while ((type == 0x8100 || type == 0x88a8 || type == 0x9100) &&
		       len >= o + 4) {
			type = get_be16(frame + o + 2);
			o += 4;
		}
		if (type < 0x0600) /* an 802.3 length, not a type */
			type = 0;
		break;
	case SRD_PCAP_LINK_LINUX_SLL:
		if (len < SLL_HDR_SIZE)
			return -EPROTO;
		o = SLL_HDR_SIZE;
		type = get_be16(frame + 14);
		break;
	case SRD_PCAP_LINK_LINUX_SLL2:
		if (len < SLL2_HDR_SIZE)
			return -EPROTO;
		o = SLL2_HDR_SIZE;
		type = get_be16(frame);
		break;
	case SRD_PCAP_LINK_RAW:
		if (len < 1)
			return -EPROTO;
		o = 0;
		type = (frame[0] >> 4) == 4   ? ETHERTYPE_IPV4
		       : (frame[0] >> 4) == 6 ? ETHERTYPE_IPV6
					      : 0;
		break;
	case SRD_PCAP_LINK_IPV4:
		o = 0;
		type = ETHERTYPE_IPV4;
		break;
	case SRD_PCAP_LINK_IPV6:
		o = 0;
		type = ETHERTYPE_IPV6;
		break;
	default:
		return -EPROTO;
	}
	*proto = type;
	*off = (uint32_t)o;
	return 0;
}

int srd_pcap_next(struct srd_pcap_reader *r, struct srd_pcap_pkt *pkt)
{
	uint8_t h[PCAP_REC_HDR_SIZE];
	uint32_t caplen, frac;
	size_t n;

	n = fread(h, 1, sizeof(h), r->f);
	if (n == 0 && feof(r->f))
		return 0;
	if (n != sizeof(h))
		return ferror(r->f) ? -EIO : -EBADMSG;
	caplen = rd32(r, h + 8);
	frac = rd32(r, h + 4);
	if (caplen > SRD_PCAP_MAX_RECORD ||
	    frac >= (r->nsec ? 1000000000u : 1000000u))
		return -EBADMSG;
	if (caplen > r->bufsz) {
		uint8_t *nb = realloc(r->buf, caplen);

		if (!nb)
			return -ENOMEM;
		r->buf = nb;
		r->bufsz = caplen;
	}
	if (fread(r->buf, 1, caplen, r->f) != caplen)
		return ferror(r->f) ? -EIO : -EBADMSG;
	memset(pkt, 0, sizeof(*pkt));
	pkt->ts.tv_sec = rd32(r, h);
	pkt->ts.tv_nsec = r->nsec ? frac : frac * 1000;
	pkt->caplen = caplen;
	pkt->origlen = rd32(r, h + 12);
	pkt->data = r->buf;
	if (srd_pcap_l3(r->linktype, r->buf, caplen, &pkt->l3_proto,
			&pkt->l3_off)) {
		pkt->l3_proto = 0;
		pkt->l3_off = 0;
	}
	return 1;
}

void srd_pcap_close(struct srd_pcap_reader *r)
{
	if (r->f)
		fclose(r->f);
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

/* Writes all of buf; a full pipe is waited for rather than dropped. */
static int write_all(int fd, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };

			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
				return -errno;
			continue;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int srd_pcap_flush(struct srd_pcap_writer *w)
{
	if (w->err)
		return w->err;
	if (w->len) {
		w->err = write_all(w->fd, w->buf, w->len);
		w->len = 0;
	}
	return w->err;
}

static int wbuf_append(struct srd_pcap_writer *w, const void *data, size_t n)
{
	const uint8_t *p = data;

	while (n) {
		size_t k = w->cap - w->len;

		if (!k) {
			if (srd_pcap_flush(w))
				return w->err;
			continue;
		}
		if (k > n)
			k = n;
		memcpy(w->buf + w->len, p, k);
		w->len += k;
		p += k;
		n -= k;
	}
	return 0;
}

int srd_pcap_create_fd(struct srd_pcap_writer *w, int fd, uint32_t linktype,
		       uint32_t snaplen)
{
	uint8_t h[PCAP_FILE_HDR_SIZE] = { 0 };
	uint32_t v;
	uint16_t s;

	switch (linktype) {
	case SRD_PCAP_LINK_ETHERNET:
	case SRD_PCAP_LINK_RAW:
	case SRD_PCAP_LINK_IPV4:
	case SRD_PCAP_LINK_IPV6:
		break;
	default:
		return -EINVAL;
	}
	memset(w, 0, sizeof(*w));
	w->buf = malloc(PCAP_WBUF_SIZE);
	if (!w->buf)
		return -ENOMEM;
	w->cap = PCAP_WBUF_SIZE;
	w->fd = fd;
	w->linktype = linktype;
	w->snaplen = snaplen ? snaplen : 65535;
	v = PCAP_MAGIC_NSEC;
	memcpy(h, &v, 4);
	s = PCAP_VERSION_MAJOR;
	memcpy(h + 4, &s, 2);
	s = PCAP_VERSION_MINOR;
	memcpy(h + 6, &s, 2);
	memcpy(h + 16, &w->snaplen, 4);
	memcpy(h + 20, &linktype, 4);
	return wbuf_append(w, h, sizeof(h));
}

int srd_pcap_create(struct srd_pcap_writer *w, const char *path,
		    uint32_t linktype, uint32_t snaplen)
{
	int fd, err;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	err = srd_pcap_create_fd(w, fd, linktype, snaplen);
	if (err) {
		close(fd);
		return err;
	}
	w->own_fd = true;
	return 0;
}

int srd_pcap_writev(struct srd_pcap_writer *w, const struct timespec *ts,
		    const struct iovec *iov, int iovcnt)
{
	uint32_t h[4], caplen, left;
	struct timespec now;
	size_t total = 0;
	int i;

	if (w->err)
		return w->err;
	for (i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	if (total > UINT32_MAX)
		return -EINVAL;
	if (!ts) {
		clock_gettime(CLOCK_REALTIME, &now);
		ts = &now;
	}
	caplen = total < w->snaplen ? (uint32_t)total : w->snaplen;
	h[0] = (uint32_t)ts->tv_sec;
	h[1] = (uint32_t)ts->tv_nsec;
	h[2] = caplen;
	h[3] = (uint32_t)total;
	if (wbuf_append(w, h, sizeof(h)))
		return w->err;
	left = caplen;
	for (i = 0; i < iovcnt && left; i++) {
		size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;

		if (wbuf_append(w, iov[i].iov_base, n))
			return w->err;
		left -= (uint32_t)n;
	}
	return 0;
}

int srd_pcap_write(struct srd_pcap_writer *w, const struct timespec *ts,
		   const void *frame, size_t len)
{
	struct iovec iov = { .iov_base = (void *)frame, .iov_len = len };

	return srd_pcap_writev(w, ts, &iov, 1);
}

static void build_mac(uint8_t *mac, const uint8_t *addr, int family)
{
	mac[0] = 0x02; /* locally administered */
	mac[1] = 0x00;
	memcpy(mac + 2, addr + (family == AF_INET ? 0 : 12), 4);
}

int srd_pcap_write_roce(struct srd_pcap_writer *w, const struct timespec *ts,
			const struct srd_pcap_roce *r, const void *payload,
			size_t len)
{
	uint8_t hdr[ETH_HDR_SIZE + 40 + 8], icrc[SRD_ICRC_SIZE];
	uint16_t dport = r->dport ? r->dport : htons(ROCE_UDP_PORT);
	bool v4 = r->family == AF_INET;
	size_t iplen = v4 ? 20 : 40, o = 0;
	uint8_t *ip, *udp;
	struct iovec iov[3];
	uint32_t sum;

	if ((!v4 && r->family != AF_INET6) ||
	    len + 8 + (v4 ? iplen : 0) > 65535 ||
	    (r->fill_icrc && len < SRD_ICRC_BTH_SIZE + SRD_ICRC_SIZE))
		return -EINVAL;
	if (w->linktype == SRD_PCAP_LINK_ETHERNET) {
		build_mac(hdr, r->daddr, r->family);
		build_mac(hdr + 6, r->saddr, r->family);
		put_be16(hdr + 12, v4 ? ETHERTYPE_IPV4 : ETHERTYPE_IPV6);
		o = ETH_HDR_SIZE;
	} else if ((w->linktype == SRD_PCAP_LINK_IPV4 && !v4) ||
		   (w->linktype == SRD_PCAP_LINK_IPV6 && v4)) {
		return -EINVAL;
	}
	ip = hdr + o;
	udp = ip + iplen;
	memset(ip, 0, iplen + 8);
	memcpy(udp, &r->sport, 2);
	memcpy(udp + 2, &dport, 2);
	put_be16(udp + 4, (uint16_t)(8 + len));

	if (r->fill_icrc) {
		uint32_t c;

		if (v4) {
			struct srd_icrc_udp4 f = { .sport = r->sport,
						   .dport = dport };

			memcpy(&f.saddr, r->saddr, 4);
			memcpy(&f.daddr, r->daddr, 4);
			c = srd_icrc_v4_from_parts(&f, r->ip_id, SRD_IPV4_DF,
						   payload, len);
		} else {
			struct srd_icrc_udp6 f = { .sport = r->sport,
						   .dport = dport };

			memcpy(f.saddr, r->saddr, 16);
			memcpy(f.daddr, r->daddr, 16);
			c = srd_icrc_v6_from_parts(&f, payload, len);
		}
		srd_icrc_put(icrc, sizeof(icrc), c);
	} else if (len >= SRD_ICRC_SIZE) {
		memcpy(icrc, (const uint8_t *)payload + len - SRD_ICRC_SIZE,
		       SRD_ICRC_SIZE);
	}

	if (v4) {
		struct srd_ipv4_fields h = {
			.ttl = ROCE_TTL,
			.protocol = IPPROTO_UDP,
			.payload_len = (uint16_t)(8 + len),
			.id = r->ip_id,
			.frag_off = SRD_IPV4_DF,
			.saddr = r->saddr,
			.daddr = r->daddr,
		};

		srd_ipv4_build(ip, &h);
		/* UDP checksum 0: none, as RoCEv2 senders do over IPv4. */
	} else {
		ip[0] = 0x60;
		put_be16(ip + 4, (uint16_t)(8 + len));
		ip[6] = IPPROTO_UDP;
		ip[7] = ROCE_TTL;
		memcpy(ip + 8, r->saddr, 16);
		memcpy(ip + 24, r->daddr, 16);
		/* IPv6 requires a UDP checksum: pseudo-header, UDP, data. */
		sum = srd_inet_csum_add(0, ip + 8, 32);
		sum += 8 + (uint32_t)len + IPPROTO_UDP;
		sum = srd_inet_csum_add(sum, udp, 8);
		if (len >= SRD_ICRC_SIZE) {
			/* The ICRC sits at an even offset (len is 4-aligned
			 * in RoCE), but sum it as bytes to be safe. */
			size_t body = len - SRD_ICRC_SIZE;

			sum = srd_inet_csum_add(sum, payload, body);
			if (body & 1) {
				sum += icrc[0];
				sum = srd_inet_csum_add(sum, icrc + 1,
							SRD_ICRC_SIZE - 1);
			} else {
				sum = srd_inet_csum_add(sum, icrc,
							SRD_ICRC_SIZE);
			}
		} else {
			sum = srd_inet_csum_add(sum, payload, len);
		}
		put_be16(udp + 6, srd_inet_csum_fold(sum)
					  ? srd_inet_csum_fold(sum)
					  : 0xffff);
	}

	iov[0].iov_base = hdr;
	iov[0].iov_len = o + iplen + 8;
	if (len >= SRD_ICRC_SIZE) {
		iov[1].iov_base = (void *)payload;
		iov[1].iov_len = len - SRD_ICRC_SIZE;
		iov[2].iov_base = icrc;
		iov[2].iov_len = SRD_ICRC_SIZE;
		return srd_pcap_writev(w, ts, iov, 3);
	}
	iov[1].iov_base = (void *)payload;
	iov[1].iov_len = len;
	return srd_pcap_writev(w, ts, iov, 2);
}

int srd_pcap_close_writer(struct srd_pcap_writer *w)
{
	int err = srd_pcap_flush(w);

	if (w->own_fd && close(w->fd) && !err)
		err = -errno;
	free(w->buf);
	memset(w, 0, sizeof(*w));
	w->fd = -1;
	return err;
}
