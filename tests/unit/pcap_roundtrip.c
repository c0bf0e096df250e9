/* SPDX-License-Identifier: MIT */
/*
 * pcap writer and reader together: packets written come back identical
 * (the rxe captures, copied record by record; records larger than the
 * write buffer; records cut at snaplen), RoCEv2 packets framed by the
 * writer equal what Linux rxe put on the wire, and, where tshark is
 * installed, it decodes every written packet as RoCE, with IP and UDP
 * checksums verified and no warning.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/net/icrc.h"
#include "daemon/net/pcap.h"
#include "t_assert.h"

#ifndef SRD_RXE_VECTORS_DIR
#error "SRD_RXE_VECTORS_DIR must name the rxe capture directory"
#endif

static char tmpdir[] = "/tmp/srd-pcap-XXXXXX";

static void tmp_path(char *buf, size_t sz, const char *name)
{
	snprintf(buf, sz, "%s/%s", tmpdir, name);
}

/* At exit, failed or not: the files written and the directory. */
static void remove_tmpdir(void)
{
	char path[4096];
	struct dirent *de;
	DIR *d = opendir(tmpdir);

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		tmp_path(path, sizeof(path), de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(tmpdir);
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The path of the next rxe capture in d; false after the last. */
static bool next_capture(DIR *d, char *path, size_t size)
{
	struct dirent *de;

	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);

		if (l >= 6 && !strcmp(de->d_name + l - 5, ".pcap")) {
			snprintf(path, size, "%s/%s", SRD_RXE_VECTORS_DIR,
				 de->d_name);
			return true;
		}
	}
	return false;
}

struct rec {
	struct timespec ts;
	uint32_t caplen, origlen;
	uint8_t *data;
};

/* Copies every rxe capture into one file, and reads it back. */
static void copy_rxe(const char *out, unsigned long *count)
{
	struct srd_pcap_writer w;
	struct srd_pcap_reader r;
	struct srd_pcap_pkt p, q;
	struct rec *recs = NULL;
	size_t n = 0, cap = 0, i;
	char path[4096];
	DIR *d;
	int ret;

	*count = 0;
	d = opendir(SRD_RXE_VECTORS_DIR);
	if (!d)
		T_FAIL("no rxe captures in %s", SRD_RXE_VECTORS_DIR);
	if (srd_pcap_create(&w, out, SRD_PCAP_LINK_ETHERNET, 0))
		T_FAIL("create %s", out);
	while (next_capture(d, path, sizeof(path))) {
		if (srd_pcap_open(&r, path))
			T_FAIL("open %s", path);
		if (r.linktype != SRD_PCAP_LINK_ETHERNET)
			T_FAIL("%s: link type %u", path, r.linktype);
		while ((ret = srd_pcap_next(&r, &p)) == 1) {
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				recs = realloc(recs, cap * sizeof(*recs));
				if (!recs)
					T_FAIL("realloc");
			}
			recs[n].ts = p.ts;
			recs[n].caplen = p.caplen;
			recs[n].origlen = p.origlen;
			recs[n].data = malloc(p.caplen);
			if (!recs[n].data)
				T_FAIL("malloc");
			memcpy(recs[n].data, p.data, p.caplen);
			if (p.l3_proto != 0x0800 || p.l3_off != 14)
				T_FAIL("%s: l3 %04x at %u", path, p.l3_proto,
				       p.l3_off);
			if (srd_pcap_write(&w, &p.ts, p.data, p.caplen))
				T_FAIL("write");
			n++;
		}
		if (ret)
			T_FAIL("%s: read %d", path, ret);
		srd_pcap_close(&r);
	}
	closedir(d);
	if (srd_pcap_close_writer(&w))
		T_FAIL("close %s", out);

	if (srd_pcap_open(&r, out))
		T_FAIL("reopen %s", out);
	if (!r.nsec || r.swapped || r.linktype != SRD_PCAP_LINK_ETHERNET)
		T_FAIL("written file header");
	for (i = 0; i < n; i++) {
		if (srd_pcap_next(&r, &q) != 1)
			T_FAIL("record %zu missing", i);
		if (q.ts.tv_sec != recs[i].ts.tv_sec ||
		    q.ts.tv_nsec != recs[i].ts.tv_nsec ||
		    q.caplen != recs[i].caplen ||
		    q.origlen != recs[i].origlen ||
		    memcmp(q.data, recs[i].data, q.caplen))
			T_FAIL("record %zu differs", i);
	}
	if (n && srd_pcap_next(&r, &q) != 0)
		T_FAIL("records after the last");
	srd_pcap_close(&r);
	for (i = 0; i < n; i++)
		free(recs[i].data);
	free(recs);
	*count = n;
}

/*
 * The rxe packets again, rebuilt by srd_pcap_write_roce() from their UDP
 * payload, addresses, ports and id with a computed ICRC: from the IP
 * header on they must be what rxe sent, byte for byte.
 */
static void rebuild_rxe(const char *out, unsigned long *count)
{
	struct srd_pcap_writer w;
	struct srd_pcap_reader r, r2;
	struct srd_pcap_pkt p, q;
	char path[4096];
	DIR *d;

	*count = 0;
	d = opendir(SRD_RXE_VECTORS_DIR);
	if (!d)
		return;
	if (srd_pcap_create(&w, out, SRD_PCAP_LINK_ETHERNET, 0))
		T_FAIL("create %s", out);
	while (next_capture(d, path, sizeof(path))) {
		if (srd_pcap_open(&r, path))
			continue;
		while (srd_pcap_next(&r, &p) == 1) {
			const uint8_t *ip = p.data + p.l3_off;
			struct srd_pcap_roce rc = { .family = AF_INET,
						    .fill_icrc = true };
			size_t udp_len = be16(ip + 20 + 4);

			memcpy(rc.saddr, ip + 12, 4);
			memcpy(rc.daddr, ip + 16, 4);
			memcpy(&rc.sport, ip + 20, 2);
			memcpy(&rc.dport, ip + 22, 2);
			rc.ip_id = be16(ip + 4);
			if (srd_pcap_write_roce(&w, &p.ts, &rc, ip + 28,
						udp_len - 8))
				T_FAIL("write_roce");
			(*count)++;
		}
		srd_pcap_close(&r);
	}
	closedir(d);
	if (srd_pcap_close_writer(&w))
		T_FAIL("close %s", out);

	/* Compare, in the same directory order. */
	if (srd_pcap_open(&r2, out))
		T_FAIL("reopen %s", out);
	d = opendir(SRD_RXE_VECTORS_DIR);
	while (d && next_capture(d, path, sizeof(path))) {
		if (srd_pcap_open(&r, path))
			continue;
		while (srd_pcap_next(&r, &p) == 1) {
			size_t iplen = be16(p.data + p.l3_off + 2);

			if (srd_pcap_next(&r2, &q) != 1)
				T_FAIL("rebuilt record missing");
			if (q.l3_off != 14 || q.caplen != 14 + iplen ||
			    memcmp(q.data + 14, p.data + p.l3_off, iplen))
				T_FAIL("%s: rebuilt packet differs from rxe's",
				       path);
		}
		srd_pcap_close(&r);
	}
	if (d)
		closedir(d);
	srd_pcap_close(&r2);
}

static size_t bth(uint8_t *p, uint8_t opcode, uint32_t qpn, uint32_t psn,
		  size_t extra, size_t paylen)
{
	size_t pad = (4 - paylen % 4) % 4, i;

	memset(p, 0, 12);
	p[0] = opcode;
	p[1] = (uint8_t)(pad << 4);
	p[2] = p[3] = 0xff;
	p[5] = (uint8_t)(qpn >> 16);
	p[6] = (uint8_t)(qpn >> 8);
	p[7] = (uint8_t)qpn;
	p[8] = 0x80; /* ack request */
	p[9] = (uint8_t)(psn >> 16);
	p[10] = (uint8_t)(psn >> 8);
	p[11] = (uint8_t)psn;
	for (i = 12; i < 12 + extra + paylen; i++)
		p[i] = (uint8_t)(i * 13);
	memset(p + 12 + extra + paylen, 0, pad + 4);
	return 12 + extra + paylen + pad + 4;
}

/*
 * Built packets of several opcodes over IPv4 and IPv6, on Ethernet and
 * raw IP: read back, each IP/UDP header must be sound and the ICRC valid.
 */
static void write_built(const char *out, uint32_t linktype, unsigned long *n)
{
	static uint8_t pl[8192];
	struct srd_pcap_roce rc = { .sport = htons(49441), .fill_icrc = true };
	struct srd_pcap_writer w;
	struct srd_pcap_reader r;
	struct srd_pcap_pkt p;
	struct timespec ts = { 1700000000, 123456789 };
	size_t len, k = 0;
	int fam, i;

	*n = 0;
	if (srd_pcap_create(&w, out, linktype, 0))
		T_FAIL("create %s", out);
	for (fam = 0; fam < 2; fam++) {
		rc.family = fam ? AF_INET6 : AF_INET;
		memset(rc.saddr, 0, 16);
		memset(rc.daddr, 0, 16);
		if (fam) {
			inet_pton(AF_INET6, "fd00::a", rc.saddr);
			inet_pton(AF_INET6, "fd00::b", rc.daddr);
		} else {
			inet_pton(AF_INET, "10.77.0.10", rc.saddr);
			inet_pton(AF_INET, "10.77.0.11", rc.daddr);
		}
		for (i = 0; i < 6; i++) {
			switch (i) {
			case 0: /* RC SEND Only */
				len = bth(pl, 0x04, 0x11, 100, 0, 61);
				break;
			case 1: /* RC SEND First, 1024 bytes */
				len = bth(pl, 0x00, 0x11, 101, 0, 1024);
				break;
			case 2: /* RC Acknowledge: AETH */
				len = bth(pl, 0x11, 0x11, 102, 4, 0);
				break;
			case 3: /* RC RDMA WRITE Only: RETH */
				len = bth(pl, 0x0a, 0x11, 103, 16, 4096);
				break;
			case 4: /* UD SEND Only: DETH */
				len = bth(pl, 0x64, 0x12, 104, 8, 512);
				break;
			default: /* RC RDMA READ Request: RETH */
				len = bth(pl, 0x0c, 0x11, 105, 16, 0);
				break;
			}
			rc.ip_id = (uint16_t)k;
			ts.tv_nsec += 1000;
			if (srd_pcap_write_roce(&w, &ts, &rc, pl, len))
				T_FAIL("write_roce %d/%d", fam, i);
			k++;
		}
	}
	if (srd_pcap_close_writer(&w))
		T_FAIL("close %s", out);

	if (srd_pcap_open(&r, out))
		T_FAIL("reopen %s", out);
	while (srd_pcap_next(&r, &p) == 1) {
		const uint8_t *ip = p.data + p.l3_off;
		int v6 = p.l3_proto == 0x86dd;
		size_t iplen = v6 ? 40 : 20;
		const uint8_t *udp = ip + iplen;
		size_t udp_len = be16(udp + 4);

		if ((p.l3_proto != 0x0800 && !v6) ||
		    p.caplen != p.l3_off + iplen + udp_len ||
		    be16(udp + 2) != 4791 || be16(udp) != 49441)
			T_FAIL("built packet %lu: bad framing", *n);
		if (v6 ? srd_icrc_check_ipv6(ip, udp, udp_len)
		       : srd_icrc_check_ipv4(ip, udp, udp_len))
			T_FAIL("built packet %lu: ICRC", *n);
		(*n)++;
	}
	srd_pcap_close(&r);
	if (*n != k)
		T_FAIL("%lu built packets read back, %zu written", *n, k);
}

/* Records cut at snaplen, and records larger than the write buffer. */
static void sizes(const char *out)
{
	static uint8_t big[200000];
	struct iovec iov[3];
	struct srd_pcap_writer w;
	struct srd_pcap_reader r;
	struct srd_pcap_pkt p;
	size_t i;

	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7 + (i >> 9));
	if (srd_pcap_create(&w, out, SRD_PCAP_LINK_RAW, 150000))
		T_FAIL("create %s", out);
	iov[0].iov_base = big;
	iov[0].iov_len = 10;
	iov[1].iov_base = big + 10;
	iov[1].iov_len = 0;
	iov[2].iov_base = big + 10;
	iov[2].iov_len = sizeof(big) - 10;
	if (srd_pcap_write(&w, NULL, big, 100000) ||
	    srd_pcap_writev(&w, NULL, iov, 3) ||
	    srd_pcap_write(&w, NULL, big, 0))
		T_FAIL("write");
	if (srd_pcap_close_writer(&w))
		T_FAIL("close");
	if (srd_pcap_open(&r, out))
		T_FAIL("reopen %s", out);
	if (r.snaplen != 150000 || r.linktype != SRD_PCAP_LINK_RAW)
		T_FAIL("file header snaplen %u link %u", r.snaplen, r.linktype);
	if (srd_pcap_next(&r, &p) != 1 || p.caplen != 100000 ||
	    p.origlen != 100000 || memcmp(p.data, big, 100000))
		T_FAIL("100000-byte record");
	if (srd_pcap_next(&r, &p) != 1 || p.caplen != 150000 ||
	    p.origlen != sizeof(big) || memcmp(p.data, big, 150000))
		T_FAIL("record cut at snaplen");
	if (srd_pcap_next(&r, &p) != 1 || p.caplen != 0 || p.origlen != 0)
		T_FAIL("empty record");
	if (srd_pcap_next(&r, &p) != 0)
		T_FAIL("no end of file");
	srd_pcap_close(&r);
}

static const char *find_tshark(void)
{
	static char path[4096];
	const char *env = getenv("PATH");
	const char *s, *e;

	for (s = env ? env : "/usr/bin"; *s; s = *e ? e + 1 : e) {
		e = strchr(s, ':');
		if (!e)
			e = s + strlen(s);
		snprintf(path, sizeof(path), "%.*s/tshark", (int)(e - s), s);
		if (access(path, X_OK) == 0)
			return path;
	}
	return NULL;
}

/*
 * Every packet of file must be decoded down to InfiniBand, with IP and
 * UDP checksum checks on, and with no expert note or malformed mark.
 */
static void tshark_check(const char *tshark, const char *file,
			 unsigned long want)
{
	char cmd[8192], line[1024];
	unsigned long n = 0, roce = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "'%s' -n -r '%s' -o ip.check_checksum:TRUE "
		 "-o udp.check_checksum:TRUE -T fields -E separator='|' "
		 "-e frame.protocols -e _ws.malformed -e _ws.expert.severity "
		 "2>/dev/null",
		 tshark, file);
	f = popen(cmd, "r");
	if (!f)
		T_FAIL("popen tshark");
	while (fgets(line, sizeof(line), f)) {
		char *bar = strchr(line, '|');

		n++;
		if (bar && strstr(line, ":udp:infiniband") &&
		    !strcmp(bar, "||\n"))
			roce++;
		else
			fprintf(stderr, "tshark on %s, packet %lu: %s", file, n,
				line);
	}
	if (pclose(f))
		T_FAIL("tshark failed on %s", file);
	if (n != want || roce != want)
		T_FAIL("tshark: %s: %lu packets, %lu clean RoCE, %lu written",
		       file, n, roce, want);
	else
		printf("tshark: %s: %lu packets, all RoCE, checksums good, no "
		       "warning\n",
		       strrchr(file, '/') + 1, n);
}

int main(void)
{
	char copy[4096], rebuilt[4096], eth[4096], raw[4096], big[4096];
	unsigned long ncopy, nrebuilt, neth, nraw;
	const char *tshark;

	if (!mkdtemp(tmpdir))
		T_FAIL("mkdtemp: %s", strerror(errno));
	atexit(remove_tmpdir);
	tmp_path(copy, sizeof(copy), "copy.pcap");
	tmp_path(rebuilt, sizeof(rebuilt), "rebuilt.pcap");
	tmp_path(eth, sizeof(eth), "built-eth.pcap");
	tmp_path(raw, sizeof(raw), "built-raw.pcap");
	tmp_path(big, sizeof(big), "sizes.pcap");

	copy_rxe(copy, &ncopy);
	printf("rxe captures copied and read back: %lu records\n", ncopy);
	rebuild_rxe(rebuilt, &nrebuilt);
	printf("rxe packets rebuilt from their UDP payload: %lu\n", nrebuilt);
	write_built(eth, SRD_PCAP_LINK_ETHERNET, &neth);
	write_built(raw, SRD_PCAP_LINK_RAW, &nraw);
	printf("built packets read back: %lu Ethernet, %lu raw IP\n", neth,
	       nraw);
	sizes(big);

	tshark = find_tshark();
	if (!tshark) {
		printf("no tshark: decoding check skipped\n");
	} else {
		if (ncopy)
			tshark_check(tshark, copy, ncopy);
		if (nrebuilt)
			tshark_check(tshark, rebuilt, nrebuilt);
		tshark_check(tshark, eth, neth);
		tshark_check(tshark, raw, nraw);
	}

	t_pass();
}
