/* SPDX-License-Identifier: MIT */
/*
 * Classic libpcap capture files, read and written without libpcap.
 *
 * The reader takes either byte order, microsecond or nanosecond
 * timestamps, and finds the network header for the link types tcpdump
 * produces on Linux: Ethernet (with VLAN tags), Linux cooked v1 and v2,
 * and raw IP.  The writer produces nanosecond files of one link type;
 * srd_pcap_write_roce() frames a RoCEv2 UDP payload (BTH ... ICRC) in
 * synthesized IP and UDP headers (and Ethernet, for that link type) so
 * that Wireshark decodes the packets as RoCE on UDP port 4791.
 */
#ifndef SOFTRDMA_DAEMON_NET_PCAP_H
#define SOFTRDMA_DAEMON_NET_PCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/uio.h>
#include <time.h>

enum {
	SRD_PCAP_LINK_ETHERNET = 1,
	SRD_PCAP_LINK_RAW = 101,
	SRD_PCAP_LINK_LINUX_SLL = 113,
	SRD_PCAP_LINK_IPV4 = 228,
	SRD_PCAP_LINK_IPV6 = 229,
	SRD_PCAP_LINK_LINUX_SLL2 = 276,
};

/* Largest record the reader accepts, whatever the file's snaplen says. */
#define SRD_PCAP_MAX_RECORD (256u * 1024)

struct srd_pcap_pkt {
	struct timespec ts;
	uint32_t caplen;     /* bytes in data */
	uint32_t origlen;    /* bytes on the wire */
	const uint8_t *data; /* valid until the next read or close */
	/*
	 * The network header: its ethertype (0x0800 IPv4, 0x86dd IPv6, or
	 * whatever the link header says; 0 if unknown) and offset in data.
	 */
	uint16_t l3_proto;
	uint32_t l3_off;
};

struct srd_pcap_reader {
	FILE *f;
	uint32_t linktype;
	uint32_t snaplen;
	bool swapped; /* file written in the other byte order */
	bool nsec;    /* nanosecond timestamps */
	uint8_t *buf;
	size_t bufsz;
};

/* 0, or -errno (-EPROTO: not a pcap file, -ENOTSUP: unknown version). */
int srd_pcap_open(struct srd_pcap_reader *r, const char *path);
/* Next packet: 1 read, 0 end of file, -EBADMSG bad or cut record. */
int srd_pcap_next(struct srd_pcap_reader *r, struct srd_pcap_pkt *pkt);
void srd_pcap_close(struct srd_pcap_reader *r);

/*
 * Finds the network header of a frame of the given link type; 0 or
 * -EPROTO (unknown link type, or a frame too short for its header).
 */
int srd_pcap_l3(uint32_t linktype, const uint8_t *frame, size_t len,
		uint16_t *proto, uint32_t *off);

struct srd_pcap_writer {
	int fd;
	bool own_fd;
	uint32_t linktype;
	uint32_t snaplen;
	int err; /* first write error, sticky */
	uint8_t *buf;
	size_t len;
	size_t cap;
};

/*
 * Creates (truncates) path, or writes to an fd the caller keeps owning;
 * the file header is written at once.  linktype: SRD_PCAP_LINK_ETHERNET,
 * _RAW, _IPV4 or _IPV6.  snaplen 0 means 65535.  0 or -errno.
 */
int srd_pcap_create(struct srd_pcap_writer *w, const char *path,
		    uint32_t linktype, uint32_t snaplen);
int srd_pcap_create_fd(struct srd_pcap_writer *w, int fd, uint32_t linktype,
		       uint32_t snaplen);

/*
 * One record of the writer's link type, from pieces (cut at snaplen,
 * origlen kept).  ts NULL means now (CLOCK_REALTIME).  Records are
 * buffered; 0 or the first write error.
 */
int srd_pcap_writev(struct srd_pcap_writer *w, const struct timespec *ts,
		    const struct iovec *iov, int iovcnt);
int srd_pcap_write(struct srd_pcap_writer *w, const struct timespec *ts,
		   const void *frame, size_t len);

/* Where a RoCEv2 packet goes: addresses and ports in network byte order. */
struct srd_pcap_roce {
	int family;	   /* AF_INET or AF_INET6 */
	uint8_t saddr[16]; /* IPv4: the first 4 bytes */
	uint8_t daddr[16];
	uint16_t sport;
	uint16_t dport; /* 0 means 4791 */
	uint16_t ip_id; /* host order */
	bool fill_icrc; /* compute the ICRC instead of copying it */
};

/*
 * A RoCEv2 packet from its UDP payload (BTH ... pad, ICRC; len bytes),
 * framed in IPv4 (DF, TTL 64, a valid header checksum, UDP checksum 0) or
 * IPv6 (hop limit 64, a valid UDP checksum), and in Ethernet with
 * addresses 02:00:<last 4 bytes of the IP address> if the writer's link
 * type is Ethernet.  -EINVAL for a link type that cannot carry it.
 */
int srd_pcap_write_roce(struct srd_pcap_writer *w, const struct timespec *ts,
			const struct srd_pcap_roce *r, const void *payload,
			size_t len);

/* Writes out what is buffered; 0 or -errno. */
int srd_pcap_flush(struct srd_pcap_writer *w);
/* Flushes, closes the fd if the writer opened it, frees; 0 or -errno. */
int srd_pcap_close_writer(struct srd_pcap_writer *w);

#endif
