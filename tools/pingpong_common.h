/* SPDX-License-Identifier: MIT */
/*
 * What the ibv_*_pingpong programs share: command-line options, finding the
 * device, the TCP exchange of "LID:QPN:PSN:GID" strings (the format
 * rdma-core's examples use, so ours talk to theirs), the report lines and
 * the buffer pattern that -c checks.
 */
#ifndef SOFTRDMA_TOOLS_PINGPONG_COMMON_H
#define SOFTRDMA_TOOLS_PINGPONG_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

#include <infiniband/verbs.h>

enum {
	PP_RECV_WRID = 1,
	PP_SEND_WRID = 2,
};

/* Options a program accepts beyond the ones all of them share. */
enum {
	PP_OPT_MTU = 1 << 0,	  /* -m */
	PP_OPT_ODP = 1 << 1,	  /* -o */
	PP_OPT_IODP = 1 << 2,	  /* -O, -P */
	PP_OPT_TS = 1 << 3,	  /* -t */
	PP_OPT_DM = 1 << 4,	  /* -j */
	PP_OPT_NEW_SEND = 1 << 5, /* -N */
	PP_OPT_NUM_QP = 1 << 6,	  /* -q */
};

struct pp_opts {
	const char *ib_devname;
	const char *servername;
	unsigned int port;
	int ib_port;
	unsigned int size;
	enum ibv_mtu mtu;
	unsigned int rx_depth;
	unsigned int iters;
	unsigned int num_qp;
	int sl;
	int use_event;
	int gidx;
	int validate;
	int use_odp;
	int implicit_odp;
	int prefetch;
	int use_ts;
	int use_dm;
	int new_send;
};

/* A peer's address as it travels over TCP. */
struct pp_dest {
	int lid;
	int qpn;
	int psn;
	union ibv_gid gid;
};

/* "0000:000000:000000:" plus 32 hex digits and the NUL: 52 bytes. */
#define PP_MSG_SIZE 52
/* srq_pingpong always exchanges this many addresses, whatever -q says. */
#define PP_MAX_QP 256

/* Defaults a program passes to pp_parse(); the rest are fixed. */
struct pp_defaults {
	unsigned int size;
	unsigned int num_qp;
	unsigned int extra; /* PP_OPT_* */
	const char *size_help;
};

/* Returns 0 to run, or the exit code: 0 after -h, 1 on a bad option. */
int pp_parse(int argc, char *argv[], const struct pp_defaults *def,
	     struct pp_opts *o, int *exit_code);

enum ibv_mtu pp_mtu_to_enum(int mtu);

/* Finds the device named in opts (or the first one).  On success returns
 * it and sets *list, which the caller frees with ibv_free_device_list. */
struct ibv_device *pp_find_device(const struct pp_opts *o,
				  struct ibv_device ***list);

void pp_gid_to_wire(const union ibv_gid *gid, char wire[33]);
int pp_wire_to_gid(const char *wire, union ibv_gid *gid);
void pp_dest_to_msg(const struct pp_dest *d, char msg[PP_MSG_SIZE]);
int pp_msg_to_dest(const char *msg, struct pp_dest *d);

/* "  local address:  LID 0x0000, QPN 0x000011, PSN 0x..., GID ..." */
void pp_print_dest(const char *what, const struct pp_dest *d, char gid_sep);

/* Arm the CQ when -e asks for events, then read the port's attributes;
 * prints rdma-core's messages and returns non-zero on failure. */
int pp_arm_and_query_port(struct ibv_context *ctx, struct ibv_cq *cq,
			  const struct pp_opts *o,
			  struct ibv_port_attr *portinfo);

/* Fills *d from port and GID index (gidx < 0: zero GID) with a random
 * PSN; need_lid refuses an IB port without a LID.  0 or -1 after printing
 * why. */
int pp_local_dest(struct ibv_context *ctx, const struct pp_opts *o,
		  const struct ibv_port_attr *pa, int qpn, int need_lid,
		  struct pp_dest *d);

/*
 * The TCP exchange.  The client sends its n addresses, reads the server's
 * n, then sends "done".  The server reads the client's n addresses, calls
 * connect() (which moves its QPs to RTS before the client may send), sends
 * its own n and waits for "done".  Both return a malloc'ed array of the
 * peer's n addresses, or NULL after printing why.
 */
struct pp_dest *pp_client_exch(const char *servername, unsigned int port,
			       const struct pp_dest *my, int n);
struct pp_dest *
pp_server_exch(unsigned int port, const struct pp_dest *my, int n,
	       int (*connect)(void *arg, const struct pp_dest *rem), void *arg);

/* Waits for a completion event on channel, checks it is for cq, re-arms.
 * 0 or 1 after printing why. */
int pp_wait_cq_event(struct ibv_comp_channel *channel, struct ibv_cq *cq,
		     unsigned int *num_events);

void pp_report(unsigned int size, unsigned int iters,
	       const struct timeval *start, const struct timeval *end);

/* The pattern -c checks: the client fills its buffer, the data travels to
 * the server and back, and the server checks what it holds at the end.
 * The first byte of each page is 0, as rdma-core's check expects. */
void pp_fill_pattern(char *buf, size_t size);
/* Prints "invalid data in page N" for each bad page; returns their count. */
int pp_check_pattern(const char *buf, size_t size);

/* The teardown every example shares, each object only if there, with
 * rdma-core's messages; 1 at the first that fails.  The CQ and the MR go
 * after the QPs, the PD, the channel and the device last. */
int pp_destroy_cq_mr(struct ibv_cq *cq, struct ibv_mr *mr);
int pp_close_device(struct ibv_pd *pd, struct ibv_comp_channel *channel,
		    struct ibv_context *context);

/* The whole of ibv_rc_pingpong (qpt IBV_QPT_RC) or ibv_uc_pingpong. */
int pp_conn_main(int argc, char *argv[], enum ibv_qp_type qpt);

#endif
