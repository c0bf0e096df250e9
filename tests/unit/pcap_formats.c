/* SPDX-License-Identifier: MIT */
/*
 * The pcap reader on files written here byte by byte: both byte orders,
 * micro- and nanosecond stamps, every link type it knows (VLAN tags,
 * Linux cooked v1/v2, raw IP), and damaged or foreign files; the writer's
 * refusals and its handling of a caller's fd and of write errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/net/pcap.h"
#include "t_assert.h"

static char tmpdir[] = "/tmp/srd-pcapf-XXXXXX";
static char path[4096];

struct hw {
	FILE *f;
	int swap;
};

static void put32(struct hw *h, uint32_t v)
{
	uint8_t b[4];
	int i;

	for (i = 0; i < 4; i++)
		b[h->swap ? 3 - i : i] = (uint8_t)(v >> (8 * i));
	/* Native order here is little-endian x86/arm64; swap means big. */
	fwrite(b, 1, 4, h->f);
}

static void put16(struct hw *h, uint16_t v)
{
	uint8_t b[2];

	b[h->swap ? 1 : 0] = (uint8_t)v;
	b[h->swap ? 0 : 1] = (uint8_t)(v >> 8);
	fwrite(b, 1, 2, h->f);
}

static struct hw hw_open(int swap, uint32_t magic, uint16_t major,
			 uint32_t link)
{
	struct hw h = { fopen(path, "wb"), swap };

	if (!h.f)
		T_FAIL("%s: %s", path, strerror(errno));
	put32(&h, magic);
	put16(&h, major);
	put16(&h, 4);
	put32(&h, 0);
	put32(&h, 0);
	put32(&h, 65535);
	put32(&h, link);
	return h;
}

static void hw_rec(struct hw *h, uint32_t sec, uint32_t frac, const void *data,
		   uint32_t caplen, uint32_t origlen)
{
	put32(h, sec);
	put32(h, frac);
	put32(h, caplen);
	put32(h, origlen);
	fwrite(data, 1, caplen, h->f);
}

/* A frame of link type link; returns its network header as read. */
static int read_one(uint32_t link, int swap, int nsec, const uint8_t *frame,
		    uint32_t len, struct srd_pcap_pkt *p,
		    struct srd_pcap_reader *r)
{
	struct hw h = hw_open(swap, nsec ? 0xa1b23c4d : 0xa1b2c3d4, 2, link);

	hw_rec(&h, 1234567890, nsec ? 999999999 : 999999, frame, len, len + 4);
	fclose(h.f);
	if (srd_pcap_open(r, path))
		return -1;
	if (srd_pcap_next(r, p) != 1)
		return -1;
	return 0;
}

static void link_types(void)
{
	uint8_t fr[64] = { 0 };
	struct srd_pcap_reader r;
	struct srd_pcap_pkt p;
	int swap;

	for (swap = 0; swap < 2; swap++) {
		/* Ethernet, one 802.1Q tag, IPv4. */
		fr[12] = 0x81;
		fr[13] = 0x00;
		fr[16] = 0x08;
		fr[17] = 0x00;
		if (read_one(1, swap, 0, fr, 60, &p, &r) || r.swapped != swap ||
		    r.nsec || p.l3_proto != 0x0800 || p.l3_off != 18 ||
		    p.ts.tv_sec != 1234567890 || p.ts.tv_nsec != 999999000 ||
		    p.caplen != 60 || p.origlen != 64)
			T_FAIL("VLAN Ethernet, swap %d", swap);
		srd_pcap_close(&r);
		/* 802.1ad outer tag, 802.1Q inner, IPv6. */
		fr[12] = 0x88;
		fr[13] = 0xa8;
		fr[16] = 0x81;
		fr[17] = 0x00;
		fr[20] = 0x86;
		fr[21] = 0xdd;
		if (read_one(1, swap, 1, fr, 60, &p, &r) || !r.nsec ||
		    p.l3_proto != 0x86dd || p.l3_off != 22 ||
		    p.ts.tv_nsec != 999999999)
			T_FAIL("QinQ Ethernet, swap %d", swap);
		srd_pcap_close(&r);
	}

	memset(fr, 0, sizeof(fr));
	fr[14] = 0x86; /* Linux cooked v1: protocol at 14 */
	fr[15] = 0xdd;
	if (read_one(113, 0, 0, fr, 40, &p, &r) || p.l3_proto != 0x86dd ||
	    p.l3_off != 16)
		T_FAIL("Linux cooked v1");
	srd_pcap_close(&r);

	memset(fr, 0, sizeof(fr));
	fr[0] = 0x08; /* Linux cooked v2: protocol at 0 */
	if (read_one(276, 1, 0, fr, 40, &p, &r) || p.l3_proto != 0x0800 ||
	    p.l3_off != 20)
		T_FAIL("Linux cooked v2");
	srd_pcap_close(&r);

	fr[0] = 0x60;
	if (read_one(101, 0, 0, fr, 40, &p, &r) || p.l3_proto != 0x86dd ||
	    p.l3_off != 0)
		T_FAIL("raw IPv6");
	srd_pcap_close(&r);
	fr[0] = 0x45;
	if (read_one(101, 0, 0, fr, 40, &p, &r) || p.l3_proto != 0x0800)
		T_FAIL("raw IPv4");
	srd_pcap_close(&r);
	if (read_one(228, 0, 0, fr, 40, &p, &r) || p.l3_proto != 0x0800)
		T_FAIL("IPv4 link type");
	srd_pcap_close(&r);
	/* FCS length in the upper bits of the link type. */
	memset(fr, 0, sizeof(fr));
	fr[12] = 0x08;
	if (read_one(0x10000001, 0, 0, fr, 40, &p, &r) || r.linktype != 1 ||
	    p.l3_proto != 0x0800 || p.l3_off != 14)
		T_FAIL("link type with FCS bits");
	srd_pcap_close(&r);
	/* Unknown link type: packets still read, no network header. */
	if (read_one(147, 0, 0, fr, 40, &p, &r) || p.l3_proto != 0 ||
	    p.caplen != 40)
		T_FAIL("unknown link type");
	srd_pcap_close(&r);
}

static void l3_direct(void)
{
	uint8_t fr[20] = { 0 };
	uint16_t proto;
	uint32_t off;

	if (srd_pcap_l3(1, fr, 13, &proto, &off) != -EPROTO)
		T_FAIL("short Ethernet frame");
	if (srd_pcap_l3(113, fr, 15, &proto, &off) != -EPROTO)
		T_FAIL("short cooked frame");
	if (srd_pcap_l3(101, fr, 0, &proto, &off) != -EPROTO)
		T_FAIL("empty raw frame");
	if (srd_pcap_l3(147, fr, 20, &proto, &off) != -EPROTO)
		T_FAIL("unknown link type");
	fr[12] = 0x00; /* an 802.3 length field */
	fr[13] = 0x40;
	if (srd_pcap_l3(1, fr, 20, &proto, &off) || proto != 0)
		T_FAIL("802.3 length taken for a type");
	fr[12] = 0x81; /* a VLAN tag cut short stays unresolved */
	fr[13] = 0x00;
	if (srd_pcap_l3(1, fr, 16, &proto, &off) || proto != 0x8100 ||
	    off != 14)
		T_FAIL("cut VLAN tag");
}

static void damaged(void)
{
	static const uint8_t ng[8] = { 0x0a, 0x0d, 0x0d, 0x0a };
	uint8_t fr[64] = { 0 };
	struct srd_pcap_reader r;
	struct srd_pcap_pkt p;
	struct hw h;
	FILE *f;

	if (srd_pcap_open(&r, "/nonexistent/x.pcap") != -ENOENT)
		T_FAIL("missing file");
	f = fopen(path, "wb");
	fclose(f);
	if (srd_pcap_open(&r, path) != -EPROTO)
		T_FAIL("empty file");
	f = fopen(path, "wb");
	fwrite(ng, 1, sizeof(ng), f);
	fwrite(fr, 1, 24, f);
	fclose(f);
	if (srd_pcap_open(&r, path) != -ENOTSUP)
		T_FAIL("pcapng");
	h = hw_open(0, 0x12345678, 2, 1);
	fclose(h.f);
	if (srd_pcap_open(&r, path) != -EPROTO)
		T_FAIL("bad magic");
	h = hw_open(1, 0xa1b2c3d4, 3, 1);
	fclose(h.f);
	if (srd_pcap_open(&r, path) != -ENOTSUP)
		T_FAIL("version 3");

	/* Header only: no packet. */
	h = hw_open(0, 0xa1b2c3d4, 2, 1);
	fclose(h.f);
	if (srd_pcap_open(&r, path) || srd_pcap_next(&r, &p) != 0)
		T_FAIL("empty capture");
	srd_pcap_close(&r);

	/* One good record, then one cut in its data. */
	h = hw_open(0, 0xa1b2c3d4, 2, 1);
	hw_rec(&h, 1, 2, fr, 60, 60);
	put32(&h, 1);
	put32(&h, 3);
	put32(&h, 60);
	put32(&h, 60);
	fwrite(fr, 1, 30, h.f);
	fclose(h.f);
	if (srd_pcap_open(&r, path) || srd_pcap_next(&r, &p) != 1 ||
	    p.ts.tv_nsec != 2000 || srd_pcap_next(&r, &p) != -EBADMSG)
		T_FAIL("record cut in its data");
	srd_pcap_close(&r);

	/* A record header cut short. */
	h = hw_open(0, 0xa1b2c3d4, 2, 1);
	hw_rec(&h, 1, 2, fr, 60, 60);
	put32(&h, 1);
	fclose(h.f);
	if (srd_pcap_open(&r, path) || srd_pcap_next(&r, &p) != 1 ||
	    srd_pcap_next(&r, &p) != -EBADMSG)
		T_FAIL("record header cut");
	srd_pcap_close(&r);

	/* An absurd captured length, and a microsecond field of 10^6. */
	h = hw_open(1, 0xa1b2c3d4, 2, 1);
	put32(&h, 1);
	put32(&h, 0);
	put32(&h, SRD_PCAP_MAX_RECORD + 1);
	put32(&h, 60);
	fclose(h.f);
	if (srd_pcap_open(&r, path) || srd_pcap_next(&r, &p) != -EBADMSG)
		T_FAIL("huge record");
	srd_pcap_close(&r);
	h = hw_open(0, 0xa1b2c3d4, 2, 1);
	hw_rec(&h, 1, 1000000, fr, 60, 60);
	fclose(h.f);
	if (srd_pcap_open(&r, path) || srd_pcap_next(&r, &p) != -EBADMSG)
		T_FAIL("microseconds out of range");
	srd_pcap_close(&r);
}

static void writer(void)
{
	uint8_t pl[64] = { 0 }, hdr[24];
	struct srd_pcap_roce rc = { .family = AF_INET6, .fill_icrc = true };
	struct srd_pcap_writer w;
	struct srd_pcap_reader r;
	struct srd_pcap_pkt p;
	int fds[2], fd;

	if (srd_pcap_create(&w, path, SRD_PCAP_LINK_LINUX_SLL, 0) != -EINVAL)
		T_FAIL("writer took a link type it cannot write");

	/* IPv6 into an IPv4-only file, a bad family, a short payload. */
	if (srd_pcap_create(&w, path, SRD_PCAP_LINK_IPV4, 0))
		T_FAIL("create IPv4 file");
	if (srd_pcap_write_roce(&w, NULL, &rc, pl, 16) != -EINVAL)
		T_FAIL("IPv6 packet in an IPv4 file");
	rc.family = AF_UNIX;
	if (srd_pcap_write_roce(&w, NULL, &rc, pl, 16) != -EINVAL)
		T_FAIL("bad family");
	rc.family = AF_INET;
	if (srd_pcap_write_roce(&w, NULL, &rc, pl, 15) != -EINVAL)
		T_FAIL("payload too short for an ICRC");
	if (srd_pcap_write_roce(&w, NULL, &rc, pl, 16))
		T_FAIL("IPv4 packet");
	if (srd_pcap_close_writer(&w))
		T_FAIL("close");
	if (srd_pcap_open(&r, path) || r.linktype != SRD_PCAP_LINK_IPV4 ||
	    srd_pcap_next(&r, &p) != 1 || p.caplen != 44 ||
	    p.l3_proto != 0x0800 || srd_pcap_next(&r, &p) != 0)
		T_FAIL("IPv4 file read back");
	srd_pcap_close(&r);

	/* The caller's fd stays open and is written through. */
	fd = open(path, O_RDWR | O_TRUNC);
	if (fd < 0 || srd_pcap_create_fd(&w, fd, SRD_PCAP_LINK_RAW, 0))
		T_FAIL("writer on an fd");
	if (srd_pcap_write(&w, NULL, pl, 20) || srd_pcap_flush(&w))
		T_FAIL("write and flush");
	if (pread(fd, hdr, sizeof(hdr), 0) != sizeof(hdr) ||
	    memcmp(hdr, "\x4d\x3c\xb2\xa1\x02\x00\x04\x00", 8))
		T_FAIL("file header after flush");
	if (srd_pcap_close_writer(&w) || fcntl(fd, F_GETFD) < 0)
		T_FAIL("fd closed by the writer");
	close(fd);

	/* A write error sticks, and is not a crash (SIGPIPE ignored). */
	signal(SIGPIPE, SIG_IGN);
	if (pipe(fds))
		T_FAIL("pipe: %s", strerror(errno));
	close(fds[0]);
	if (srd_pcap_create_fd(&w, fds[1], SRD_PCAP_LINK_RAW, 0))
		T_FAIL("writer on a pipe");
	if (srd_pcap_flush(&w) != -EPIPE)
		T_FAIL("flush into a closed pipe");
	if (srd_pcap_write(&w, NULL, pl, 20) != -EPIPE)
		T_FAIL("error not sticky");
	if (srd_pcap_close_writer(&w) != -EPIPE)
		T_FAIL("close error");
	close(fds[1]);
}

/* At exit, failed or not. */
static void remove_tmpdir(void)
{
	unlink(path);
	rmdir(tmpdir);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		T_FAIL("mkdtemp: %s", strerror(errno));
	atexit(remove_tmpdir);
	snprintf(path, sizeof(path), "%s/t.pcap", tmpdir);
	link_types();
	l3_direct();
	damaged();
	writer();
	printf("pcap reader and writer: formats, link types, damage: ok\n");
	t_pass();
}
