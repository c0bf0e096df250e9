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

static int failures;
static char tmpdir[] = "/tmp/srd-pcapf-XXXXXX";
static char path[4096];

#define FAIL(...)                                      \
	do {                                           \
		fprintf(stderr, "FAIL: " __VA_ARGS__); \
		failures++;                            \
	} while (0)

#define CHECK(cond, ...)                   \
	do {                               \
		if (!(cond))               \
			FAIL(__VA_ARGS__); \
	} while (0)

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

	if (!h.f) {
		perror(path);
		exit(1);
	}
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
		CHECK(!read_one(1, swap, 0, fr, 60, &p, &r) &&
			      r.swapped == swap && !r.nsec &&
			      p.l3_proto == 0x0800 && p.l3_off == 18 &&
			      p.ts.tv_sec == 1234567890 &&
			      p.ts.tv_nsec == 999999000 && p.caplen == 60 &&
			      p.origlen == 64,
		      "VLAN Ethernet, swap %d\n", swap);
		srd_pcap_close(&r);
		/* 802.1ad outer tag, 802.1Q inner, IPv6. */
		fr[12] = 0x88;
		fr[13] = 0xa8;
		fr[16] = 0x81;
		fr[17] = 0x00;
		fr[20] = 0x86;
		fr[21] = 0xdd;
		CHECK(!read_one(1, swap, 1, fr, 60, &p, &r) && r.nsec &&
			      p.l3_proto == 0x86dd && p.l3_off == 22 &&
			      p.ts.tv_nsec == 999999999,
		      "QinQ Ethernet, swap %d\n", swap);
		srd_pcap_close(&r);
	}

	memset(fr, 0, sizeof(fr));
	fr[14] = 0x86; /* Linux cooked v1: protocol at 14 */
	fr[15] = 0xdd;
	CHECK(!read_one(113, 0, 0, fr, 40, &p, &r) && p.l3_proto == 0x86dd &&
		      p.l3_off == 16,
	      "Linux cooked v1\n");
	srd_pcap_close(&r);

	memset(fr, 0, sizeof(fr));
	fr[0] = 0x08; /* Linux cooked v2: protocol at 0 */
	CHECK(!read_one(276, 1, 0, fr, 40, &p, &r) && p.l3_proto == 0x0800 &&
		      p.l3_off == 20,
	      "Linux cooked v2\n");
	srd_pcap_close(&r);

	fr[0] = 0x60;
	CHECK(!read_one(101, 0, 0, fr, 40, &p, &r) && p.l3_proto == 0x86dd &&
		      p.l3_off == 0,
	      "raw IPv6\n");
	srd_pcap_close(&r);
	fr[0] = 0x45;
	CHECK(!read_one(101, 0, 0, fr, 40, &p, &r) && p.l3_proto == 0x0800,
	      "raw IPv4\n");
	srd_pcap_close(&r);
	CHECK(!read_one(228, 0, 0, fr, 40, &p, &r) && p.l3_proto == 0x0800,
	      "IPv4 link type\n");
	srd_pcap_close(&r);
	/* FCS length in the upper bits of the link type. */
	memset(fr, 0, sizeof(fr));
	fr[12] = 0x08;
	CHECK(!read_one(0x10000001, 0, 0, fr, 40, &p, &r) && r.linktype == 1 &&
		      p.l3_proto == 0x0800 && p.l3_off == 14,
	      "link type with FCS bits\n");
	srd_pcap_close(&r);
	/* Unknown link type: packets still read, no network header. */
	CHECK(!read_one(147, 0, 0, fr, 40, &p, &r) && p.l3_proto == 0 &&
		      p.caplen == 40,
	      "unknown link type\n");
	srd_pcap_close(&r);
}

static void l3_direct(void)
{
	uint8_t fr[20] = { 0 };
	uint16_t proto;
	uint32_t off;

	CHECK(srd_pcap_l3(1, fr, 13, &proto, &off) == -EPROTO, "short Ethernet "
							       "frame\n");
	CHECK(srd_pcap_l3(113, fr, 15, &proto, &off) == -EPROTO, "short cooked "
								 "frame\n");
	CHECK(srd_pcap_l3(101, fr, 0, &proto, &off) == -EPROTO, "empty raw "
								"frame\n");
	CHECK(srd_pcap_l3(147, fr, 20, &proto, &off) == -EPROTO, "unknown link "
								 "type\n");
	fr[12] = 0x00; /* an 802.3 length field */
	fr[13] = 0x40;
	CHECK(!srd_pcap_l3(1, fr, 20, &proto, &off) && proto == 0, "802.3 "
								   "length "
								   "taken for "
								   "a type\n");
	fr[12] = 0x81; /* a VLAN tag cut short stays unresolved */
	fr[13] = 0x00;
	CHECK(!srd_pcap_l3(1, fr, 16, &proto, &off) && proto == 0x8100 &&
		      off == 14,
	      "cut VLAN tag\n");
}

static void damaged(void)
{
	static const uint8_t ng[8] = { 0x0a, 0x0d, 0x0d, 0x0a };
	uint8_t fr[64] = { 0 };
	struct srd_pcap_reader r;
	struct srd_pcap_pkt p;
	struct hw h;
	FILE *f;

	CHECK(srd_pcap_open(&r, "/nonexistent/x.pcap") == -ENOENT, "missing "
								   "file\n");
	f = fopen(path, "wb");
	fclose(f);
	CHECK(srd_pcap_open(&r, path) == -EPROTO, "empty file\n");
	f = fopen(path, "wb");
	fwrite(ng, 1, sizeof(ng), f);
	fwrite(fr, 1, 24, f);
	fclose(f);
	CHECK(srd_pcap_open(&r, path) == -ENOTSUP, "pcapng\n");
	h = hw_open(0, 0x12345678, 2, 1);
	fclose(h.f);
	CHECK(srd_pcap_open(&r, path) == -EPROTO, "bad magic\n");
	h = hw_open(1, 0xa1b2c3d4, 3, 1);
	fclose(h.f);
	CHECK(srd_pcap_open(&r, path) == -ENOTSUP, "version 3\n");

	/* Header only: no packet. */
	h = hw_open(0, 0xa1b2c3d4, 2, 1);
	fclose(h.f);
	CHECK(!srd_pcap_open(&r, path) && srd_pcap_next(&r, &p) == 0, "empty "
								      "capture"
								      "\n");
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
	CHECK(!srd_pcap_open(&r, path) && srd_pcap_next(&r, &p) == 1 &&
		      p.ts.tv_nsec == 2000 && srd_pcap_next(&r, &p) == -EBADMSG,
	      "record cut in its data\n");
	srd_pcap_close(&r);

	/* A record header cut short. */
	h = hw_open(0, 0xa1b2c3d4, 2, 1);
	hw_rec(&h, 1, 2, fr, 60, 60);
	put32(&h, 1);
	fclose(h.f);
	CHECK(!srd_pcap_open(&r, path) && srd_pcap_next(&r, &p) == 1 &&
		      srd_pcap_next(&r, &p) == -EBADMSG,
	      "record header cut\n");
	srd_pcap_close(&r);

	/* An absurd captured length, and a microsecond field of 10^6. */
	h = hw_open(1, 0xa1b2c3d4, 2, 1);
	put32(&h, 1);
	put32(&h, 0);
	put32(&h, SRD_PCAP_MAX_RECORD + 1);
	put32(&h, 60);
	fclose(h.f);
	CHECK(!srd_pcap_open(&r, path) && srd_pcap_next(&r, &p) == -EBADMSG,
	      "huge record\n");
	srd_pcap_close(&r);
	h = hw_open(0, 0xa1b2c3d4, 2, 1);
	hw_rec(&h, 1, 1000000, fr, 60, 60);
	fclose(h.f);
	CHECK(!srd_pcap_open(&r, path) && srd_pcap_next(&r, &p) == -EBADMSG,
	      "microseconds out of range\n");
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

	CHECK(srd_pcap_create(&w, path, SRD_PCAP_LINK_LINUX_SLL, 0) == -EINVAL,
	      "writer took a link type it cannot write\n");

	/* IPv6 into an IPv4-only file, a bad family, a short payload. */
	CHECK(!srd_pcap_create(&w, path, SRD_PCAP_LINK_IPV4, 0), "create IPv4 "
								 "file\n");
	CHECK(srd_pcap_write_roce(&w, NULL, &rc, pl, 16) == -EINVAL, "IPv6 "
								     "packet "
								     "in an "
								     "IPv4 "
								     "file\n");
	rc.family = AF_UNIX;
	CHECK(srd_pcap_write_roce(&w, NULL, &rc, pl, 16) == -EINVAL, "bad "
								     "family"
								     "\n");
	rc.family = AF_INET;
	CHECK(srd_pcap_write_roce(&w, NULL, &rc, pl, 15) == -EINVAL, "payload "
								     "too "
								     "short "
								     "for an "
								     "ICRC\n");
	CHECK(!srd_pcap_write_roce(&w, NULL, &rc, pl, 16), "IPv4 packet\n");
	CHECK(!srd_pcap_close_writer(&w), "close\n");
	CHECK(!srd_pcap_open(&r, path) && r.linktype == SRD_PCAP_LINK_IPV4 &&
		      srd_pcap_next(&r, &p) == 1 && p.caplen == 44 &&
		      p.l3_proto == 0x0800 && srd_pcap_next(&r, &p) == 0,
	      "IPv4 file read back\n");
	srd_pcap_close(&r);

	/* The caller's fd stays open and is written through. */
	fd = open(path, O_RDWR | O_TRUNC);
	CHECK(fd >= 0 && !srd_pcap_create_fd(&w, fd, SRD_PCAP_LINK_RAW, 0),
	      "writer on an fd\n");
	CHECK(!srd_pcap_write(&w, NULL, pl, 20) && !srd_pcap_flush(&w), "write "
									"and "
									"flush"
									"\n");
	CHECK(pread(fd, hdr, sizeof(hdr), 0) == sizeof(hdr) &&
		      !memcmp(hdr, "\x4d\x3c\xb2\xa1\x02\x00\x04\x00", 8),
	      "file header after flush\n");
	CHECK(!srd_pcap_close_writer(&w) && fcntl(fd, F_GETFD) >= 0, "fd "
								     "closed "
								     "by the "
								     "writer"
								     "\n");
	close(fd);

	/* A write error sticks, and is not a crash (SIGPIPE ignored). */
	signal(SIGPIPE, SIG_IGN);
	if (pipe(fds)) {
		FAIL("pipe\n");
		return;
	}
	close(fds[0]);
	CHECK(!srd_pcap_create_fd(&w, fds[1], SRD_PCAP_LINK_RAW, 0), "writer "
								     "on a "
								     "pipe\n");
	CHECK(srd_pcap_flush(&w) == -EPIPE, "flush into a closed pipe\n");
	CHECK(srd_pcap_write(&w, NULL, pl, 20) == -EPIPE, "error not sticky\n");
	CHECK(srd_pcap_close_writer(&w) == -EPIPE, "close error\n");
	close(fds[1]);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/t.pcap", tmpdir);
	link_types();
	l3_direct();
	damaged();
	writer();
	unlink(path);
	rmdir(tmpdir);
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("pcap reader and writer: formats, link types, damage: ok\n");
	return 0;
}
