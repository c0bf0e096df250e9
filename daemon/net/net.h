/* SPDX-License-Identifier: MIT */
/*
 * The network side of softrdmad: how the wires are configured (command
 * line, environment) and what they count per device.
 *
 * Configuration is read once at start into srd_net_cfg; main() fills it
 * from its options and the environment, unit tests fill it by hand.  A
 * zeroed srd_net_cfg (a daemon made in a test process) means: no UDP
 * socket, no capture, no faults.
 */
#ifndef SOFTRDMA_DAEMON_NET_NET_H
#define SOFTRDMA_DAEMON_NET_NET_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct srd_daemon;
struct srd_device;
struct srd_faults;
struct srd_capture;

/* Environment variables read at start (the command line wins). */
#define SRD_ENV_UDP_PORT "SOFTRDMA_UDP_PORT"
#define SRD_ENV_WIRE "SOFTRDMA_WIRE"
#define SRD_ENV_PCAP "SOFTRDMA_PCAP"
#define SRD_ENV_FAULTS "SOFTRDMA_FAULTS"
#define SRD_ENV_FAULT_FILE "SOFTRDMA_FAULT_FILE"
#define SRD_ENV_FAULT_SEED "SOFTRDMA_FAULT_SEED"

enum srd_wire_mode {
	/* Destinations on this daemon over the in-memory wire, others UDP. */
	SRD_WIRE_AUTO,
	/* Everything over UDP, this daemon's own GIDs included (loopback
	 * through the kernel: tests of the UDP wire in one namespace). */
	SRD_WIRE_UDP,
};

#define SRD_NET_MAX_FAULT_ARGS 32

struct srd_net_config {
	bool udp;     /* open the UDP wire */
	int udp_port; /* 0: any free port (tests); else 1..65535 */
	enum srd_wire_mode wire;
	const char *pcap;	/* capture file, NULL: none */
	const char *fault_file; /* rules re-read on SIGHUP, NULL: none */
	const char *faults[SRD_NET_MAX_FAULT_ARGS]; /* rules or rule lists */
	unsigned int nfaults;
	uint64_t fault_seed; /* 0: from the clock (logged) */
};

extern struct srd_net_config srd_net_cfg;

/* softrdmad's options for the wires: getopt_long entries and values. */
enum {
	SRD_NET_OPT_UDP_PORT = 0x200,
	SRD_NET_OPT_WIRE,
	SRD_NET_OPT_PCAP,
	SRD_NET_OPT_FAULT,
	SRD_NET_OPT_FAULT_FILE,
	SRD_NET_OPT_NO_UDP,
};

/* clang-format off */
#define SRD_NET_LONG_OPTIONS \
	{ "udp-port", required_argument, NULL, SRD_NET_OPT_UDP_PORT }, \
	{ "wire", required_argument, NULL, SRD_NET_OPT_WIRE }, \
	{ "pcap", required_argument, NULL, SRD_NET_OPT_PCAP }, \
	{ "fault", required_argument, NULL, SRD_NET_OPT_FAULT }, \
	{ "fault-file", required_argument, NULL, SRD_NET_OPT_FAULT_FILE }, \
	{ "no-udp", no_argument, NULL, SRD_NET_OPT_NO_UDP }
/* clang-format on */

/* Defaults for a daemon process: the UDP wire on, port 4791. */
void srd_net_config_defaults(void);
/*
 * One of the options above (opt is getopt's value).  Returns 0, or
 * -EINVAL with a message on stderr.  Values are kept by reference.
 */
int srd_net_option(int opt, const char *arg);
/* Fill in from the environment what the command line did not set;
 * 0 or -EINVAL (message on stderr). */
int srd_net_config_env(void);
/* The options' help lines. */
void srd_net_usage(FILE *f);

/*
 * Per-device packet counters (as `rdma statistic` shows a port's).  Both
 * wires count: a packet the device sends is a tx packet whether it goes
 * over the in-memory wire or UDP; bytes are those of the RoCE UDP payload
 * (BTH to ICRC).  Counters of the drops say where a packet died.
 */
struct srd_net_counters {
	uint64_t tx_packets;
	uint64_t tx_bytes;
	uint64_t rx_packets;
	uint64_t rx_bytes;
	uint64_t tx_udp_packets; /* of tx_packets, over UDP */
	uint64_t rx_udp_packets; /* of rx_packets, over UDP */
	uint64_t tx_drops;	 /* socket full, no route, too big, no UDP */
	uint64_t rx_icrc_errors;
	uint64_t rx_malformed;	/* short, bad headers, bad BTH version */
	uint64_t rx_unknown_qp; /* no such QP on the device */
	uint64_t rx_drops;	/* QP type, P_Key or source GID refused */
	uint64_t rx_no_device;	/* daemon-wide: no device has that address */
	uint64_t fault_drops;	/* dropped by an injected fault */
	uint64_t fault_other;	/* delayed, reordered, duplicated, corrupted */
	uint64_t captured;	/* packets written to the capture */
};

/* Name and offset of each counter, for listings; ends with a NULL name. */
struct srd_net_counter_desc {
	const char *name;
	size_t offset;
};
extern const struct srd_net_counter_desc srd_net_counter_descs[];

/*
 * A device's counters as of now, copied into *out (zeros for a device
 * that never saw a packet).  dev NULL: what belongs to no device
 * (rx_no_device).  This is the getter for listings.
 */
void srd_net_counters_read(struct srd_daemon *d, const struct srd_device *dev,
			   struct srd_net_counters *out);

/* The live counters of a device, created on first use (never NULL: a
 * shared overflow slot when memory runs out).  For the wires. */
struct srd_net_counters *srd_net_dev_counters(struct srd_daemon *d,
					      const struct srd_device *dev);
/* Forget every device's counters (daemon teardown). */
void srd_net_counters_fini(struct srd_daemon *d);

#endif
