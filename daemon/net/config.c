/* SPDX-License-Identifier: MIT */
/* The wires' configuration: softrdmad's options and environment. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/net/roce.h"
#include "daemon/fault/fault.h"
#include "daemon/net/net.h"

struct srd_net_config srd_net_cfg;

/* What the command line set, so the environment does not override it. */
static struct {
	bool port, wire, pcap, faults, fault_file, udp;
} given;

void srd_net_config_defaults(void)
{
	memset(&srd_net_cfg, 0, sizeof(srd_net_cfg));
	memset(&given, 0, sizeof(given));
	srd_net_cfg.udp = true;
	srd_net_cfg.udp_port = ROCE_UDP_PORT;
	srd_net_cfg.wire = SRD_WIRE_AUTO;
}

static int parse_port(const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < 0 || v > 65535)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

static int parse_wire(const char *s, enum srd_wire_mode *out)
{
	if (!strcmp(s, "auto") || !strcmp(s, "mem"))
		*out = SRD_WIRE_AUTO;
	else if (!strcmp(s, "udp"))
		*out = SRD_WIRE_UDP;
	else
		return -EINVAL;
	return 0;
}

static int add_fault(const char *s)
{
	if (srd_net_cfg.nfaults >= SRD_NET_MAX_FAULT_ARGS) {
		fprintf(stderr, "softrdmad: at most %d --fault options\n",
			SRD_NET_MAX_FAULT_ARGS);
		return -EINVAL;
	}
	srd_net_cfg.faults[srd_net_cfg.nfaults++] = s;
	return 0;
}

int srd_net_option(int opt, const char *arg)
{
	int err = 0;

	switch (opt) {
	case SRD_NET_OPT_UDP_PORT:
		err = parse_port(arg, &srd_net_cfg.udp_port);
		given.port = true;
		break;
	case SRD_NET_OPT_WIRE:
		err = parse_wire(arg, &srd_net_cfg.wire);
		given.wire = true;
		break;
	case SRD_NET_OPT_PCAP:
		srd_net_cfg.pcap = *arg ? arg : NULL;
		given.pcap = true;
		break;
	case SRD_NET_OPT_FAULT:
		given.faults = true;
		return add_fault(arg);
	case SRD_NET_OPT_FAULT_FILE:
		srd_net_cfg.fault_file = *arg ? arg : NULL;
		given.fault_file = true;
		break;
	case SRD_NET_OPT_NO_UDP:
		srd_net_cfg.udp = false;
		given.udp = true;
		break;
	default:
		return -EINVAL;
	}
	if (err)
		fprintf(stderr, "softrdmad: bad value: %s\n", arg);
	return err;
}

int srd_net_config_env(void)
{
	const char *v;
	char *end;

	v = getenv(SRD_ENV_UDP_PORT);
	if (!given.port && v && *v && parse_port(v, &srd_net_cfg.udp_port)) {
		fprintf(stderr, "softrdmad: bad %s: %s\n", SRD_ENV_UDP_PORT, v);
		return -EINVAL;
	}
	v = getenv(SRD_ENV_WIRE);
	if (!given.wire && v && *v && parse_wire(v, &srd_net_cfg.wire)) {
		fprintf(stderr, "softrdmad: bad %s: %s\n", SRD_ENV_WIRE, v);
		return -EINVAL;
	}
	v = getenv(SRD_ENV_PCAP);
	if (!given.pcap && v && *v)
		srd_net_cfg.pcap = v;
	v = getenv(SRD_ENV_FAULTS);
	if (!given.faults && v && *v && add_fault(v))
		return -EINVAL;
	v = getenv(SRD_ENV_FAULT_FILE);
	if (!given.fault_file && v && *v)
		srd_net_cfg.fault_file = v;
	v = getenv(SRD_ENV_FAULT_SEED);
	if (v && *v) {
		errno = 0;
		srd_net_cfg.fault_seed = strtoull(v, &end, 0);
		if (errno || *end) {
			fprintf(stderr, "softrdmad: bad %s: %s\n",
				SRD_ENV_FAULT_SEED, v);
			return -EINVAL;
		}
	}
	/* Forcing UDP needs the socket. */
	if (srd_net_cfg.wire == SRD_WIRE_UDP)
		srd_net_cfg.udp = true;
	/* Bad rules are the user's to hear of, before the daemon detaches. */
	for (unsigned int i = 0; i < srd_net_cfg.nfaults; i++) {
		struct srd_faults f;
		char err[256] = "";
		int ret;

		srd_faults_init(&f, 1);
		ret = srd_faults_add(&f, srd_net_cfg.faults[i], err,
				     sizeof(err));
		srd_faults_fini(&f);
		if (ret) {
			fprintf(stderr, "softrdmad: fault rule: %s\n", err);
			return -EINVAL;
		}
	}
	return 0;
}

void srd_net_usage(FILE *f)
{
	fprintf(f,
		"  --udp-port N        RoCEv2 UDP port (default 4791, $%s; "
		"0: any free port)\n"
		"  --no-udp            no UDP wire: this daemon's devices "
		"only\n"
		"  --wire auto|udp     udp: even local destinations go through "
		"the kernel's UDP\n"
		"                      (loopback tests; $%s)\n"
		"  --pcap FILE         capture every packet, the in-memory "
		"wire "
		"included ($%s)\n"
		"  --fault RULE        inject faults (repeatable; $%s holds "
		"\"rule;rule\"), e.g.\n"
		"                      \"drop prob=0.05\", \"delay us=1000 "
		"dev=softrdma0\",\n"
		"                      \"corrupt count=3 op=write dir=rx "
		"qpn=0x12\"\n"
		"  --fault-file PATH   more rules, one a line, re-read on "
		"SIGHUP "
		"($%s)\n",
		SRD_ENV_UDP_PORT, SRD_ENV_WIRE, SRD_ENV_PCAP, SRD_ENV_FAULTS,
		SRD_ENV_FAULT_FILE);
}
