/* SPDX-License-Identifier: MIT */
/* Packet capture for both wires (see capture.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon/core/core.h"
#include "daemon/net/capture.h"

/* Ethernet, IPv6 and UDP around the largest UDP payload. */
#define CAPTURE_SNAPLEN (14 + 40 + 65535)

int srd_capture_open(struct srd_capture *c, const char *path)
{
	int err;

	memset(c, 0, sizeof(*c));
	err = srd_pcap_create(&c->w, path, SRD_PCAP_LINK_ETHERNET,
			      CAPTURE_SNAPLEN);
	if (err)
		return err;
	c->cap = 65536;
	c->buf = malloc(c->cap);
	if (!c->buf) {
		srd_pcap_close_writer(&c->w);
		return -ENOMEM;
	}
	c->last_flush = srd_now_ns();
	snprintf(c->path, sizeof(c->path), "%s", path);
	return 0;
}

void srd_capture_close(struct srd_capture *c)
{
	if (!c->buf)
		return;
	srd_pcap_close_writer(&c->w);
	free(c->buf);
	c->buf = NULL;
}

int srd_capture_iov(struct srd_capture *c, const struct srd_pcap_roce *r,
		    const struct iovec *iov, int iovcnt, size_t len)
{
	size_t off = 0;
	int err;

	if (c->failed || !c->buf)
		return -EIO;
	for (int i = 0; i < iovcnt && off < len; i++) {
		size_t n = iov[i].iov_len;

		if (n > len - off)
			n = len - off;
		if (n > c->cap - off)
			return -EMSGSIZE;
		memcpy(c->buf + off, iov[i].iov_base, n);
		off += n;
	}
	err = srd_pcap_write_roce(&c->w, NULL, r, c->buf, off);
	if (err && err != -EINVAL) {
		c->failed = true;
		srd_log(SRD_LOG_ERR, "capture: %s; capture stopped",
			strerror(-err));
		return err;
	}
	c->dirty = true;
	if (!err)
		c->packets++;
	return err;
}

void srd_capture_flush(struct srd_capture *c, uint64_t now, uint64_t max_age)
{
	if (!c->dirty || now - c->last_flush < max_age)
		return;
	c->dirty = false;
	c->last_flush = now;
	if (srd_pcap_flush(&c->w) && !c->failed) {
		c->failed = true;
		srd_log(SRD_LOG_ERR, "capture: write failed; capture stopped");
	}
}

static bool gid_v4(const uint8_t g[16])
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(g, pfx, sizeof(pfx));
}

void srd_capture_addr(struct srd_pcap_roce *r, const uint8_t sgid[16],
		      const uint8_t dgid[16], uint16_t sport, uint16_t dport,
		      uint16_t ip_id)
{
	memset(r, 0, sizeof(*r));
	if (gid_v4(sgid) && gid_v4(dgid)) {
		r->family = AF_INET;
		memcpy(r->saddr, sgid + 12, 4);
		memcpy(r->daddr, dgid + 12, 4);
	} else {
		r->family = AF_INET6;
		memcpy(r->saddr, sgid, 16);
		memcpy(r->daddr, dgid, 16);
	}
	r->sport = htons(sport);
	r->dport = htons(dport);
	r->ip_id = ip_id;
}
