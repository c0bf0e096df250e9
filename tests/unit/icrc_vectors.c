/* SPDX-License-Identifier: MIT */
/*
 * The ICRC against real traffic of Linux rdma_rxe: every packet of every
 * capture in SRD_RXE_VECTORS_DIR must carry the ICRC we compute, the check
 * without the IP header must find the identification the capture shows,
 * a corrupted byte must fail the check and a masked field must not.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/net/icrc.h"
#include "daemon/net/pcap.h"
#include "t_assert.h"

#ifndef SRD_RXE_VECTORS_DIR
#error "SRD_RXE_VECTORS_DIR must name the rxe capture directory"
#endif

#define MAX_FILES 64

struct pkt {
	uint8_t buf[SRD_PCAP_MAX_RECORD];
	uint8_t *ip;
	uint8_t *udp;
	size_t ihl;
	size_t udp_len;
	uint16_t id;
	uint16_t frag_off;
	struct srd_icrc_udp4 flow;
};

struct totals {
	unsigned long packets;
	unsigned long icrc_ok;
	unsigned long corruptions;
	unsigned long collisions;
	unsigned long df;
	unsigned long nodf;
};

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Copies an Ethernet/IPv4/UDP-4791 frame into pk; -1 if it is not one. */
static int parse(const struct srd_pcap_pkt *fr, struct pkt *pk)
{
	const uint8_t *ip = fr->data + fr->l3_off;
	size_t avail = fr->caplen - fr->l3_off, ihl, tot;

	if (fr->l3_proto != 0x0800 || avail < 20 || (ip[0] >> 4) != 4)
		return -1;
	ihl = (ip[0] & 0x0f) * 4u;
	tot = be16(ip + 2);
	if (ihl < 20 || tot > avail || tot < ihl + SRD_ICRC_MIN_UDP_LEN ||
	    ip[9] != 17)
		return -1;
	memcpy(pk->buf, ip, tot);
	pk->ip = pk->buf;
	pk->ihl = ihl;
	pk->udp = pk->buf + ihl;
	pk->udp_len = be16(pk->udp + 4);
	if (pk->udp_len != tot - ihl || be16(pk->udp + 2) != 4791)
		return -1;
	pk->id = be16(ip + 4);
	pk->frag_off = be16(ip + 6);
	memcpy(&pk->flow.saddr, ip + 12, 4);
	memcpy(&pk->flow.daddr, ip + 16, 4);
	memcpy(&pk->flow.sport, pk->udp, 2);
	memcpy(&pk->flow.dport, pk->udp + 2, 2);
	return 0;
}

static const uint8_t *bth(const struct pkt *pk)
{
	return pk->udp + SRD_ICRC_UDP_SIZE;
}

static size_t bth_len(const struct pkt *pk)
{
	return pk->udp_len - SRD_ICRC_UDP_SIZE;
}

static int full_check(const struct pkt *pk)
{
	return srd_icrc_check_ipv4(pk->ip, pk->udp, pk->udp_len);
}

static void check_packet(const char *file, unsigned long n, struct pkt *pk,
			 struct totals *t)
{
	uint32_t wire = srd_icrc_get(pk->udp, pk->udp_len);
	uint32_t icrc = srd_icrc_ipv4(pk->ip, pk->udp, pk->udp_len);
	uint16_t id = 0, frag = 0;
	int ret;

	if (icrc != wire)
		T_FAIL("%s #%lu: ICRC %08x, wire says %08x", file, n, icrc,
		       wire);
	else
		t->icrc_ok++;
	if (full_check(pk))
		T_FAIL("%s #%lu: full check refused", file, n);
	icrc = srd_icrc_v4_from_parts(&pk->flow, pk->id, pk->frag_off, bth(pk),
				      bth_len(pk));
	if (icrc != wire)
		T_FAIL("%s #%lu: ICRC from parts %08x, wire %08x", file, n,
		       icrc, wire);
	ret = srd_icrc_check_v4_noid(&pk->flow, bth(pk), bth_len(pk), &id,
				     &frag);
	if (ret || id != pk->id || frag != pk->frag_off)
		T_FAIL("%s #%lu: no-id check %d: id %04x flags %04x, capture "
		       "has %04x %04x",
		       file, n, ret, id, frag, pk->id, pk->frag_off);
	if (frag == SRD_IPV4_DF)
		t->df++;
	else
		t->nodf++;
}

/* Every masked field changed: the ICRC must not move. */
static void check_masked(const char *file, unsigned long n, struct pkt *pk)
{
	uint8_t save[64];
	size_t hlen = pk->ihl + SRD_ICRC_UDP_SIZE + SRD_ICRC_BTH_SIZE;

	memcpy(save, pk->ip, hlen);
	pk->ip[1] ^= 0xb9;  /* DSCP and ECN */
	pk->ip[8] = 1;	    /* TTL */
	pk->ip[10] ^= 0x5a; /* header checksum */
	pk->udp[6] ^= 0x12; /* UDP checksum */
	pk->udp[7] ^= 0x34;
	pk->udp[8 + 4] ^= 0xc0; /* BTH FECN, BECN */
	if (full_check(pk))
		T_FAIL("%s #%lu: a masked field changed the ICRC", file, n);
	memcpy(pk->ip, save, hlen);
	pk->udp[8 + 4] ^= 0x3f; /* BTH resv6a */
	if (full_check(pk))
		T_FAIL("%s #%lu: BTH resv6a changed the ICRC", file, n);
	memcpy(pk->ip, save, hlen);

	/* And the fields it covers in the IP header do move it. */
	pk->ip[5] ^= 1; /* identification */
	if (full_check(pk) != -EBADMSG)
		T_FAIL("%s #%lu: identification not covered", file, n);
	memcpy(pk->ip, save, hlen);
	pk->ip[6] ^= 0x40; /* DF */
	if (full_check(pk) != -EBADMSG)
		T_FAIL("%s #%lu: DF not covered", file, n);
	memcpy(pk->ip, save, hlen);
	pk->ip[15] ^= 1; /* source address */
	if (full_check(pk) != -EBADMSG)
		T_FAIL("%s #%lu: source address not covered", file, n);
	memcpy(pk->ip, save, hlen);
	pk->udp[8 + 1] ^= 0x80; /* BTH solicited event */
	if (full_check(pk) != -EBADMSG)
		T_FAIL("%s #%lu: BTH SE not covered", file, n);
	memcpy(pk->ip, save, hlen);
}

/*
 * One corrupted byte at a time over BTH (but its masked byte 4), payload
 * and ICRC.  The full check
 * catches every one (a burst of at most 8 bits).  The check without the
 * IP header must never report the true id; it may, for about one
 * corruption in 2^15, find another id that explains the ICRC.
 */
static void check_corrupt(const char *file, unsigned long n, struct pkt *pk,
			  struct totals *t)
{
	uint8_t *p = pk->udp + SRD_ICRC_UDP_SIZE;
	size_t i, len = bth_len(pk);
	uint16_t id, frag;

	for (i = 0; i < len; i++) {
		uint8_t x = (uint8_t)(((i * 37 + n * 11) % 255) + 1);

		if (i == 4)
			continue;
		p[i] ^= x;
		t->corruptions++;
		if (full_check(pk) != -EBADMSG)
			T_FAIL("%s #%lu: byte %zu ^ %02x passed", file, n, i,
			       x);
		if (!srd_icrc_check_v4_noid(&pk->flow, p, len, &id, &frag)) {
			if (id == pk->id && frag == pk->frag_off)
				T_FAIL("%s #%lu: byte %zu ^ %02x passed the "
				       "no-id check with the true id",
				       file, n, i, x);
			t->collisions++;
		}
		p[i] ^= x;
	}
	/* The addresses and ports the receiver supplies are covered too. */
	pk->flow.saddr ^= 0x01000000;
	if (srd_icrc_check_v4_noid(&pk->flow, p, len, &id, &frag) == 0 &&
	    id == pk->id)
		T_FAIL("%s #%lu: wrong source address accepted", file, n);
	pk->flow.saddr ^= 0x01000000;
	pk->flow.sport ^= 0x0100;
	if (srd_icrc_check_v4_noid(&pk->flow, p, len, &id, &frag) == 0 &&
	    id == pk->id)
		T_FAIL("%s #%lu: wrong source port accepted", file, n);
	pk->flow.sport ^= 0x0100;
}

static int run_file(const char *dir, const char *name, struct pkt *pk,
		    struct totals *all)
{
	struct totals t = { 0 };
	struct srd_pcap_reader r;
	struct srd_pcap_pkt fr;
	unsigned long skipped = 0;
	char path[4096];
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ret = srd_pcap_open(&r, path);
	if (ret)
		T_FAIL("%s: open: %s", name, strerror(-ret));
	while ((ret = srd_pcap_next(&r, &fr)) == 1) {
		if (parse(&fr, pk)) {
			skipped++;
			continue;
		}
		t.packets++;
		check_packet(name, t.packets, pk, &t);
		check_masked(name, t.packets, pk);
		check_corrupt(name, t.packets, pk, &t);
	}
	if (ret < 0)
		T_FAIL("%s: read: %s", name, strerror(-ret));
	srd_pcap_close(&r);
	printf("%-18s %4lu packets, %4lu ICRC equal; id found without the IP "
	       "header: DF %lu, no DF %lu; %lu corruptions caught by the "
	       "full check, %lu accepted by the no-id check under another "
	       "id%s\n",
	       name, t.packets, t.icrc_ok, t.df, t.nodf, t.corruptions,
	       t.collisions, skipped ? " (some non-RoCE frames skipped)" : "");
	all->packets += t.packets;
	all->icrc_ok += t.icrc_ok;
	all->corruptions += t.corruptions;
	all->collisions += t.collisions;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
	const char *dir = SRD_RXE_VECTORS_DIR;
	struct totals all = { 0 };
	char *names[MAX_FILES];
	struct dirent *de;
	struct pkt *pk;
	int i, n = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		T_FAIL("no captures in %s: %s", dir, strerror(errno));
	while ((de = readdir(d)) && n < MAX_FILES) {
		size_t l = strlen(de->d_name);

		if (l > 5 && !strcmp(de->d_name + l - 5, ".pcap"))
			names[n++] = strdup(de->d_name);
	}
	closedir(d);
	if (!n)
		T_FAIL("no .pcap files in %s", dir);
	qsort(names, n, sizeof(names[0]), cmp_names);
	pk = malloc(sizeof(*pk));
	if (!pk)
		T_FAIL("malloc");
	printf("CRC-32 implementation: %s; ICRC on the wire: least "
	       "significant byte first\n",
	       srd_crc32_impl());
	for (i = 0; i < n; i++) {
		run_file(dir, names[i], pk, &all);
		free(names[i]);
	}
	free(pk);
	printf("total: %d files, %lu packets, %lu ICRC equal, %lu corruptions, "
	       "%lu no-id collisions (expected about %.1f)\n",
	       n, all.packets, all.icrc_ok, all.corruptions, all.collisions,
	       all.corruptions / 32768.0);
	if (!all.packets)
		T_FAIL("no RoCEv2 packet found");
	/* 2^-15 per corruption is the design; far more means a bug. */
	if (all.collisions > all.corruptions / 4096 + 3)
		T_FAIL("too many no-id collisions");
	t_pass();
}
