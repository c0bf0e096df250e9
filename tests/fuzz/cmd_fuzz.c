/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the command channel of a daemon core in this process,
 * every command code, through the daemon's own socket path (a connection
 * accepted on its listening socket, client_input() serving it).
 *
 * The input is a program: a sequence of steps, each a command on one of a
 * few connections or an action on what the commands made.  Commands are
 * built field by field from the input, with handles, keys and QP numbers
 * picked mostly among those earlier replies of the same input gave, so the
 * paths past the lookups are reached: XRC domains, SRQs and QPs, memory
 * windows bound and invalidated by WQEs, device memory, flow rules with
 * arbitrary specs, shared contexts (BIND, IMPORT and the IMPORT_*
 * commands), on-demand paging and implicit MRs.  Commands that take fds
 * get real ones of the right kind or the wrong one, as the input says.
 * Actions post WQEs into the rings, run the engine and drain the CQs.
 *
 * After each input every connection closes, and what the daemon holds
 * must be back where it was: no object in any table, no XRC domain, no
 * device memory, no raw port, no resource charged, no fd kept.
 *
 * Memory the daemon reaches through the client's address space belongs
 * to a paused child (its /proc/PID/mem and maps), never to this process:
 * a fuzzed address must not write into the fuzzer.  For the same reason
 * SRD_MEM_PIDFD is never asked for (its process_vm_* would aim at us).
 * Administration commands that outlive an input (LINK_ADD, LINK_DEL,
 * FAULT_ADD, CAPTURE_START) are not sent.  Everything runs in a network
 * namespace of its own when one can be made (root), so raw packet QPs and
 * the wire see nothing of the host's loopback.
 *
 * SRD_FUZZ_REACH=1 prints, at exit, how often each command was sent and
 * succeeded, and the WQE completions seen; SRD_FUZZ_TRACE=1 prints every
 * command's status as it goes.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/proto_admin.h"
#include "common/proto_cm.h"
#include "daemon/core/core.h"
#include "daemon/net/net.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                           \
	do {                                                               \
		if (!(x)) {                                                \
			fprintf(stderr, "cmd_fuzz: %s:%d: %s\n", __FILE__, \
				__LINE__, #x);                             \
			abort();                                           \
		}                                                          \
	} while (0)

/* --- the input ----------------------------------------------------------- */
static const uint8_t *in_p;
static size_t in_n;

static uint8_t u8(void)
{
	if (!in_n)
		return 0;
	in_n--;
	return *in_p++;
}

/* Little endian; each read its own statement (operands of | are not
 * sequenced). */
static uint16_t u16(void)
{
	uint16_t lo = u8();

	return (uint16_t)(lo | u8() << 8);
}

static uint32_t u32(void)
{
	uint32_t lo = u16();

	return lo | (uint32_t)u16() << 16;
}

static uint64_t u64(void)
{
	uint64_t lo = u32();

	return lo | (uint64_t)u32() << 32;
}

static void bytes(void *p, size_t n)
{
	size_t k = n < in_n ? n : in_n;

	memcpy(p, in_p, k);
	memset((uint8_t *)p + k, 0, n - k);
	in_p += k;
	in_n -= k;
}

/* A small count most of the time, anything now and then. */
static uint32_t small(uint32_t max)
{
	uint8_t b = u8();

	if (b < 0xf0)
		return b % (max + 1);
	return b == 0xff ? u32() : 1u << (b & 31);
}

/* --- values replies gave, to pick from ------------------------------------ */
#define POOL 8
struct pool {
	uint32_t v[POOL];
	uint32_t n;
};

static void pool_add(struct pool *p, uint32_t v)
{
	p->v[p->n++ % POOL] = v;
}

/* One of the pool's values (biased so), else a small or any number. */
static uint32_t pick(const struct pool *p)
{
	uint8_t b = u8();
	uint32_t n = p->n < POOL ? p->n : POOL;

	if (n && b < 0xd0)
		return p->v[b % n];
	if (b < 0xf0)
		return b & 7;
	return b == 0xff ? SRD_NO_HANDLE : u32();
}

/* An MR as its reply and request told it. */
struct mr_seen {
	uint32_t handle, lkey;
	uint64_t iova, length;
};

static struct {
	struct pool pd, cq, channel, qp, xrc_qpn, srq, srqn, ah, dm, mw,
		mw_rkey, xrcd, flow, mr, key;
	struct mr_seen mrs[POOL];
	uint32_t nmrs;
} pools;

static const struct mr_seen *pick_mr(void)
{
	uint32_t n = pools.nmrs < POOL ? pools.nmrs : POOL;
	static const struct mr_seen none;

	return n ? &pools.mrs[u8() % n] : &none;
}

/* --- reach counters --------------------------------------------------------- */
enum {
	R_ODP,
	R_IMPLICIT,
	R_PVM,
	R_XRC_SRQ,
	R_XRC_SEND,
	R_XRC_RECV,
	R_RAW_QP,
	R_OPEN_BIND,
	R_OPEN_IMPORT,
	R_OPEN_MAPS,
	R_WQE,
	R_WC_BIND,
	R_WC_LOCAL_INV,
	R_WC_RECV_INV,
	R_WC_OK,
	R_WC_ERR,
	R_RTS,
	R_NUM
};
static const char *const r_names[R_NUM] = {
	"REG_MR ON_DEMAND", "REG_MR implicit",	  "REG_MR pvm",
	"CREATE_SRQ XRC",   "CREATE_QP XRC_SEND", "CREATE_QP XRC_RECV",
	"CREATE_QP RAW",    "OPEN_DEVICE BIND",	  "OPEN_DEVICE IMPORT",
	"OPEN_DEVICE MAPS", "WQEs posted",	  "WC BIND_MW ok",
	"WC LOCAL_INV ok",  "WC recv with inv",	  "WC success",
	"WC error",	    "QPs brought to RTS",
};
static uint64_t reach[R_NUM];
/* By op: verbs 0..63, admin 64..95, CM 96..127. */
static uint64_t sent[128], ok[128];
static uint64_t inputs;
static bool trace; /* SRD_FUZZ_TRACE: every command and its status */

static int op_slot(uint32_t op)
{
	if (op < 64)
		return (int)op;
	if (op >= SRD_CMD_ADMIN_BASE && op < SRD_CMD_ADMIN_BASE + 32)
		return 64 + (int)(op - SRD_CMD_ADMIN_BASE);
	if (op >= SRD_CMD_CM_BASE && op < SRD_CMD_CM_BASE + 32)
		return 96 + (int)(op - SRD_CMD_CM_BASE);
	return -1;
}

static const char *const verbs_names[SRD_CMD__MAX] = {
	[SRD_CMD_HELLO] = "HELLO",
	[SRD_CMD_LIST_DEVICES] = "LIST_DEVICES",
	[SRD_CMD_OPEN_DEVICE] = "OPEN_DEVICE",
	[SRD_CMD_QUERY_DEVICE] = "QUERY_DEVICE",
	[SRD_CMD_QUERY_PORT] = "QUERY_PORT",
	[SRD_CMD_QUERY_GID] = "QUERY_GID",
	[SRD_CMD_QUERY_PKEY] = "QUERY_PKEY",
	[SRD_CMD_ALLOC_PD] = "ALLOC_PD",
	[SRD_CMD_DEALLOC_PD] = "DEALLOC_PD",
	[SRD_CMD_REG_MR] = "REG_MR",
	[SRD_CMD_REREG_MR] = "REREG_MR",
	[SRD_CMD_DEREG_MR] = "DEREG_MR",
	[SRD_CMD_CREATE_COMP_CHANNEL] = "CREATE_COMP_CHANNEL",
	[SRD_CMD_DESTROY_COMP_CHANNEL] = "DESTROY_COMP_CHANNEL",
	[SRD_CMD_CREATE_CQ] = "CREATE_CQ",
	[SRD_CMD_RESIZE_CQ] = "RESIZE_CQ",
	[SRD_CMD_DESTROY_CQ] = "DESTROY_CQ",
	[SRD_CMD_CREATE_QP] = "CREATE_QP",
	[SRD_CMD_MODIFY_QP] = "MODIFY_QP",
	[SRD_CMD_QUERY_QP] = "QUERY_QP",
	[SRD_CMD_DESTROY_QP] = "DESTROY_QP",
	[SRD_CMD_CREATE_SRQ] = "CREATE_SRQ",
	[SRD_CMD_MODIFY_SRQ] = "MODIFY_SRQ",
	[SRD_CMD_QUERY_SRQ] = "QUERY_SRQ",
	[SRD_CMD_DESTROY_SRQ] = "DESTROY_SRQ",
	[SRD_CMD_CREATE_AH] = "CREATE_AH",
	[SRD_CMD_DESTROY_AH] = "DESTROY_AH",
	[SRD_CMD_ATTACH_MCAST] = "ATTACH_MCAST",
	[SRD_CMD_DETACH_MCAST] = "DETACH_MCAST",
	[SRD_CMD_MODIFY_CQ] = "MODIFY_CQ",
	[SRD_CMD_ALLOC_DM] = "ALLOC_DM",
	[SRD_CMD_FREE_DM] = "FREE_DM",
	[SRD_CMD_REG_DM_MR] = "REG_DM_MR",
	[SRD_CMD_ALLOC_MW] = "ALLOC_MW",
	[SRD_CMD_DEALLOC_MW] = "DEALLOC_MW",
	[SRD_CMD_OPEN_XRCD] = "OPEN_XRCD",
	[SRD_CMD_CLOSE_XRCD] = "CLOSE_XRCD",
	[SRD_CMD_OPEN_QP] = "OPEN_QP",
	[SRD_CMD_ADVISE_MR] = "ADVISE_MR",
	[SRD_CMD_IMPORT_PD] = "IMPORT_PD",
	[SRD_CMD_IMPORT_MR] = "IMPORT_MR",
	[SRD_CMD_IMPORT_DM] = "IMPORT_DM",
	[SRD_CMD_CREATE_FLOW] = "CREATE_FLOW",
	[SRD_CMD_DESTROY_FLOW] = "DESTROY_FLOW",
};

static void reach_print(void)
{
	fprintf(stderr, "cmd_fuzz reach after %llu inputs (sent / ok):\n",
		(unsigned long long)inputs);
	for (int i = 1; i < SRD_CMD__MAX; i++)
		fprintf(stderr, "  %-22s %10llu %10llu\n", verbs_names[i],
			(unsigned long long)sent[i], (unsigned long long)ok[i]);
	for (int i = 64; i < 128; i++)
		if (sent[i])
			fprintf(stderr, "  %s op %#-13x %10llu %10llu\n",
				i < 96 ? "admin" : "cm   ",
				(i < 96 ? SRD_CMD_ADMIN_BASE + i - 64
					: SRD_CMD_CM_BASE + i - 96),
				(unsigned long long)sent[i],
				(unsigned long long)ok[i]);
	for (int i = 0; i < R_NUM; i++)
		fprintf(stderr, "  %-22s %21llu\n", r_names[i],
			(unsigned long long)reach[i]);
}

/* --- the daemon and its surroundings ------------------------------------ */
static struct srd_daemon d;
static struct sockaddr_un listen_sa;
static socklen_t listen_len;
static int sentinel_fd = -1;
static struct srd_client *sentinel;
static uint64_t user0_rest[SRD_RES_NUM], sentinel_rest[SRD_RES_NUM];
static struct srd_user *user0;
static int fds_at_rest; /* when the input started */
static uint64_t now_ns = 1000000000ull;

/* The client's memory: pages of the paused child, at the same address
 * here (mapped before the fork) and there. */
#define ARENA_PAGES 16
static uint8_t *arena;
static pid_t mem_child;

/* fds of every kind a command may be given */
enum {
	FD_MEMFD,     /* sealed against shrinking, 1 MiB: an MR piece */
	FD_MEMFD_RAW, /* not sealed */
	FD_PROC_MEM,  /* the child's /proc/PID/mem, read-write */
	FD_PROC_MAPS, /* the child's /proc/PID/maps, read-only */
	FD_XRCD_A,    /* files that name XRC domains */
	FD_XRCD_B,
	FD_DEVNULL,
	FD_OPATH,
	FD_PIPE_R,
	FD_PIPE_W,
	FD_SOCK,
	FD_PACKET, /* AF_PACKET: what proves CAP_NET_RAW */
	FD_PIDFD,
	FD_MEM_RO, /* the child's mem, read-only: not what PROCMEM is */
	FD_FIXED,
	FD_CONN = FD_FIXED, /* + slot: a connection's client end */
};
static int fixed_fd[FD_FIXED];

/* Connections: the client end (ours) and the daemon's client. */
#define SLOTS 4
static struct {
	int fd;
	struct srd_client *c;
} slot[SLOTS];

static int pidfd_of(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static void netns_private(void)
{
	struct ifreq ifr;
	int fd;

	if (unshare(CLONE_NEWNET))
		return; /* not root: the host's namespace it is */
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (!ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		ifr.ifr_flags |= IFF_UP;
		ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
}

static void arena_make(void)
{
	char path[64];
	int p[2];

	arena = mmap(NULL, ARENA_PAGES * 4096ul, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(arena != MAP_FAILED);
	/* read-write, then read-only, no access, a hole, read-write */
	mprotect(arena + 8 * 4096, 4 * 4096, PROT_READ);
	mprotect(arena + 12 * 4096, 2 * 4096, PROT_NONE);
	munmap(arena + 14 * 4096, 4096);
	CHECK(!pipe(p));
	mem_child = fork();
	CHECK(mem_child >= 0);
	if (mem_child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[0]);
		close(p[1]);
		for (;;)
			pause();
	}
	close(p[1]);
	close(p[0]);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)mem_child);
	fixed_fd[FD_PROC_MEM] = open(path, O_RDWR | O_CLOEXEC);
	fixed_fd[FD_MEM_RO] = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)mem_child);
	fixed_fd[FD_PROC_MAPS] = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fixed_fd[FD_PROC_MEM] >= 0 && fixed_fd[FD_PROC_MAPS] >= 0);
}

static int memfd(const char *name, bool seal)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	CHECK(fd >= 0 && !ftruncate(fd, 1 << 20));
	if (seal)
		CHECK(!fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK));
	return fd;
}

static void fds_make(void)
{
	int p[2];

	fixed_fd[FD_MEMFD] = memfd("fuzz-mr", true);
	fixed_fd[FD_MEMFD_RAW] = memfd("fuzz-raw", false);
	fixed_fd[FD_XRCD_A] = memfd("fuzz-xrcd-a", false);
	fixed_fd[FD_XRCD_B] = memfd("fuzz-xrcd-b", false);
	fixed_fd[FD_DEVNULL] = open("/dev/null", O_RDWR | O_CLOEXEC);
	fixed_fd[FD_OPATH] = open("/", O_PATH | O_CLOEXEC);
	CHECK(!pipe2(p, O_CLOEXEC | O_NONBLOCK));
	fixed_fd[FD_PIPE_R] = p[0];
	fixed_fd[FD_PIPE_W] = p[1];
	fixed_fd[FD_SOCK] = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	/* Protocol 0: it receives nothing, it only shows the right. */
	fixed_fd[FD_PACKET] = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fixed_fd[FD_PACKET] < 0)
		fixed_fd[FD_PACKET] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	fixed_fd[FD_PIDFD] = pidfd_of(mem_child);
	if (fixed_fd[FD_PIDFD] < 0)
		fixed_fd[FD_PIDFD] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	for (int i = 0; i < FD_FIXED; i++)
		CHECK(fixed_fd[i] >= 0);
}

/* An fd of the kind wanted most of the time, of any kind else. */
static int fd_pick(int want)
{
	uint8_t b = u8();
	int k = b < 0xc0 ? want : b % (FD_CONN + SLOTS);

	if (k >= FD_CONN) {
		int fd = slot[k - FD_CONN].fd;

		return fd >= 0 ? fd : fixed_fd[FD_DEVNULL];
	}
	return fixed_fd[k];
}

static int count_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	CHECK(dir);
	while ((e = readdir(dir)))
		n += e->d_name[0] != '.';
	closedir(dir);
	return n;
}

static struct srd_device *dev0(void)
{
	CHECK(!list_empty(&d.devices));
	return list_entry(d.devices.n.next, struct srd_device, node);
}

static bool client_alive(const struct srd_client *c)
{
	list_for_each (&d.clients, it)
		if (list_entry(it, struct srd_client, node) == c)
			return true;
	return false;
}

/* Connect to the daemon's socket and have it accept: its client. */
static struct srd_client *connect_one(int *fd)
{
	*fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	CHECK(*fd >= 0);
	CHECK(!connect(*fd, (struct sockaddr *)&listen_sa, listen_len));
	client_accept_all(&d);
	CHECK(!list_empty(&d.clients));
	return list_entry(d.clients.n.prev, struct srd_client, node);
}

/* --- one command, through the socket ------------------------------------ */
static _Alignas(8) uint8_t rep_buf[SRD_MSG_MAX];
static uint32_t rep_len;

static void close_cmsg_fds(struct msghdr *mh)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));

		for (int i = 0; i < k; i++) {
			int one;

			memcpy(&one, CMSG_DATA(c) + i * sizeof(int),
			       sizeof(one));
			close(one);
		}
	}
}

/* Read what the daemon sent on slot k; the last message wins.  Returns
 * its status, or 1 when nothing came. */
static int replies(int k)
{
	int status = 1;

	for (;;) {
		char ctl[CMSG_SPACE(SRD_MAX_FDS * sizeof(int))];
		struct iovec iov = { .iov_base = rep_buf,
				     .iov_len = sizeof(rep_buf) };
		struct msghdr mh = { .msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = ctl,
				     .msg_controllen = sizeof(ctl) };
		ssize_t n = recvmsg(slot[k].fd, &mh,
				    MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		struct srd_msg_hdr h;

		if (n <= 0)
			return status;
		close_cmsg_fds(&mh);
		if ((size_t)n < sizeof(h))
			continue;
		memcpy(&h, rep_buf, sizeof(h));
		status = h.status;
		rep_len = (uint32_t)n - sizeof(h);
	}
}

/* Let the daemon serve slot k's connection. */
static void serve(int k)
{
	struct srd_client *c = slot[k].c;

	if (!c)
		return;
	client_input(c, EPOLLIN);
	if (!client_alive(c))
		slot[k].c = NULL;
}

static void *rep_data(void)
{
	return rep_buf + sizeof(struct srd_msg_hdr);
}

/*
 * Send op with len bytes of payload and nfds fds on slot k; the header's
 * length field lies when lie is non-zero.  Returns the reply's status
 * (payload in rep_data()), or 1 when none came.
 */
static int cmd(int k, uint32_t op, const void *payload, uint32_t len,
	       const int *fds, int nfds, uint32_t lie)
{
	static _Alignas(8) uint8_t buf[SRD_MSG_MAX];
	char ctl[CMSG_SPACE(8 * sizeof(int))];
	struct srd_msg_hdr h = { .op = op, .len = lie ? lie : len };
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(h) + len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int slot_i = op_slot(op), st;

	if (slot[k].fd < 0 || !slot[k].c || len > sizeof(buf) - sizeof(h))
		return 1;
	replies(k); /* strays (a probe of another's bind) go first */
	memcpy(buf, &h, sizeof(h));
	if (len)
		memcpy(buf + sizeof(h), payload, len);
	if (nfds > 8)
		nfds = 8;
	if (nfds) {
		struct cmsghdr *c;

		memset(ctl, 0, sizeof(ctl));
		mh.msg_control = ctl;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	if (sendmsg(slot[k].fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return 1;
	serve(k);
	rep_len = 0;
	st = replies(k);
	if (slot_i >= 0) {
		sent[slot_i]++;
		ok[slot_i] += st == 0;
	}
	if (trace)
		fprintf(stderr, "cmd_fuzz: slot %d op %#x len %u fds %d: %d\n",
			k, op, len, nfds, st);
	return st;
}

/* --- building commands ---------------------------------------------------- */
static uint64_t arena_addr(void)
{
	uint8_t b = u8();

	if (b == 0xff)
		return u64();
	return (uint64_t)(uintptr_t)arena + (b % ARENA_PAGES) * 4096ull +
	       (b & 0x80 ? u16() & 0xfff : 0);
}

static uint32_t access_bits(void)
{
	static const uint32_t bits[] = {
		IBV_ACCESS_LOCAL_WRITE,	     IBV_ACCESS_REMOTE_WRITE,
		IBV_ACCESS_REMOTE_READ,	     IBV_ACCESS_REMOTE_ATOMIC,
		IBV_ACCESS_MW_BIND,	     IBV_ACCESS_ZERO_BASED,
		IBV_ACCESS_ON_DEMAND,	     IBV_ACCESS_HUGETLB,
		IBV_ACCESS_FLUSH_GLOBAL,     IBV_ACCESS_OPTIONAL_RANGE,
		IBV_ACCESS_RELAXED_ORDERING,
	};
	uint16_t m = u16();
	uint32_t a = 0;

	if (m == 0xffff)
		return u32();
	for (unsigned int i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (m & (1u << i))
			a |= bits[i];
	return a;
}

/* REG_MR's body (also REREG_MR's): pieces and their fds. */
static uint32_t reg_body(struct srd_reg_mr_req *r, int *fds, int *nfds,
			 bool *odp)
{
	uint8_t mode = u8();
	uint32_t np;

	r->pd_handle = pick(&pools.pd);
	r->access = access_bits();
	*nfds = 0;
	*odp = false;
	switch (mode & 3) {
	case 0: /* memfd pieces: the daemon maps them */
	case 1: /* through the child's address space */
		np = 1 + (mode >> 2) % 3;
		r->span_start = arena_addr() & ~4095ull;
		r->span_len = 0;
		for (uint32_t i = 0; i < np; i++) {
			struct srd_mr_piece *p = &r->piece[i];

			p->len = (1 + small(3)) * 4096ull;
			if ((mode & 3) == 0 || (u8() & 3) == 0) {
				p->kind = SRD_PIECE_FD;
				p->fd_offset = small(255) * 4096ull;
				fds[(*nfds)++] = fd_pick(FD_MEMFD);
			} else {
				p->kind = SRD_PIECE_PVM;
			}
			if (u8() == 0xff)
				p->kind = u32();
			r->span_len += p->len;
		}
		r->num_pieces = np;
		r->addr = r->span_start + small(4095);
		r->length = 1 + small(r->span_len);
		if ((mode & 3) == 1)
			reach[R_PVM]++;
		break;
	case 2: /* on demand, in the arena */
		r->access |= IBV_ACCESS_ON_DEMAND;
		r->addr = arena_addr();
		r->length = 1 + small(ARENA_PAGES * 4096);
		r->num_pieces = 0;
		*odp = true;
		break;
	default: /* implicit */
		r->access |= IBV_ACCESS_ON_DEMAND;
		r->addr = 0;
		r->length = UINT64_MAX;
		r->num_pieces = 0;
		*odp = true;
		break;
	}
	r->iova = u8() & 1 ? r->addr : (u64() & ~4095ull) | (r->addr & 4095);
	if (r->addr == 0 && r->length == UINT64_MAX && u8() & 1)
		r->iova = 0;
	if (u8() == 0xff) {
		r->num_pieces = u32();
		r->length = u64();
	}
	return sizeof(*r) + r->num_pieces * sizeof(r->piece[0]);
}

static void seen_mr(uint32_t handle, uint32_t lkey, uint64_t iova,
		    uint64_t length)
{
	struct mr_seen *m = &pools.mrs[pools.nmrs++ % POOL];

	m->handle = handle;
	m->lkey = lkey;
	m->iova = iova;
	m->length = length;
	pool_add(&pools.mr, handle);
	pool_add(&pools.key, lkey);
}

static void do_reg_mr(int k)
{
	union {
		struct srd_reg_mr_req r;
		uint8_t b[sizeof(struct srd_reg_mr_req) +
			  4 * sizeof(struct srd_mr_piece)];
	} q;
	int fds[4], nfds;
	uint32_t len;
	bool odp;

	memset(&q, 0, sizeof(q));
	len = reg_body(&q.r, fds, &nfds, &odp);
	if (len > sizeof(q))
		len = sizeof(q);
	if (cmd(k, SRD_CMD_REG_MR, &q, len, fds, nfds, 0) == 0) {
		const struct srd_reg_mr_rep *rep = rep_data();

		seen_mr(rep->handle, rep->lkey, q.r.iova, q.r.length);
		if (odp)
			reach[q.r.length == UINT64_MAX ? R_IMPLICIT : R_ODP]++;
	}
}

static void do_rereg_mr(int k)
{
	union {
		struct srd_rereg_mr_req r;
		uint8_t b[sizeof(struct srd_rereg_mr_req) +
			  4 * sizeof(struct srd_mr_piece)];
	} q;
	int fds[4], nfds;
	uint32_t len;
	bool odp;

	memset(&q, 0, sizeof(q));
	q.r.handle = pick(&pools.mr);
	q.r.flags = u8() & 7;
	len = offsetof(struct srd_rereg_mr_req, reg) +
	      reg_body(&q.r.reg, fds, &nfds, &odp);
	if (!(q.r.flags & IBV_REREG_MR_CHANGE_TRANSLATION) && !(u8() & 3)) {
		nfds = 0;
	}
	if (len > sizeof(q))
		len = sizeof(q);
	cmd(k, SRD_CMD_REREG_MR, &q, len, fds, nfds, 0);
}

static void do_advise(int k)
{
	union {
		struct srd_advise_mr_req r;
		uint8_t b[sizeof(struct srd_advise_mr_req) +
			  4 * sizeof(struct srd_advise_sge)];
	} q;
	uint32_t n = 1 + u8() % 4;

	memset(&q, 0, sizeof(q));
	q.r.pd_handle = pick(&pools.pd);
	q.r.advice = small(2);
	q.r.flags = u8() & 1 ? IBV_ADVISE_MR_FLAG_FLUSH : 0;
	q.r.num_sge = n;
	for (uint32_t i = 0; i < n; i++) {
		const struct mr_seen *m = pick_mr();

		q.r.sge[i].lkey = u8() < 0xf0 ? m->lkey : pick(&pools.key);
		q.r.sge[i].addr = m->iova + small(8192);
		q.r.sge[i].length = small(8192);
	}
	if (u8() == 0xff)
		q.r.num_sge = u32();
	cmd(k, SRD_CMD_ADVISE_MR, &q,
	    sizeof(q.r) + n * sizeof(struct srd_advise_sge), NULL, 0, 0);
}

static void do_open_device(int k)
{
	struct srd_open_device_req q = { 0 };
	uint8_t f = u8();
	int fds[4], nfds = 0;
	int st;

	q.index = f & 0x80 ? u32() : 0;
	q.trace_flags = f & 1 ? SRD_TRACE_CQE : 0;
	/* never SRD_MEM_PIDFD: it would reach this process */
	q.mem_access = f & 2 ? SRD_MEM_PROCMEM : SRD_MEM_NONE;
	q.flags = (f >> 2) & 7;
	if (f & 0x40)
		q.flags |= u32() & ~7u;
	if (q.trace_flags)
		fds[nfds++] = fd_pick(FD_PIPE_W);
	if (q.mem_access)
		fds[nfds++] = fd_pick(FD_PROC_MEM);
	if (q.flags & SRD_OPEN_F_MAPS)
		fds[nfds++] = fd_pick(FD_PROC_MAPS);
	if (q.flags & (SRD_OPEN_F_BIND | SRD_OPEN_F_IMPORT)) {
		/* BIND: our own end; IMPORT: another connection's */
		int own = FD_CONN + k;
		int other = FD_CONN + (k + 1 + u8() % (SLOTS - 1)) % SLOTS;

		fds[nfds++] = fd_pick(q.flags & SRD_OPEN_F_BIND ? own : other);
	}
	if (u8() == 0xff && nfds)
		nfds--;
	st = cmd(k, SRD_CMD_OPEN_DEVICE, &q, sizeof(q), fds, nfds, 0);
	if (st == 0) {
		reach[R_OPEN_BIND] += !!(q.flags & SRD_OPEN_F_BIND);
		reach[R_OPEN_IMPORT] += !!(q.flags & SRD_OPEN_F_IMPORT);
		reach[R_OPEN_MAPS] += !!(q.flags & SRD_OPEN_F_MAPS);
	}
}

static void do_create_qp(int k)
{
	static const uint32_t types[] = {
		IBV_QPT_RC,	  IBV_QPT_UC,	    IBV_QPT_UD,
		IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV, IBV_QPT_RAW_PACKET,
		IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV,
	};
	struct srd_create_qp_req q = { 0 };
	uint8_t t = u8();
	int fd, nfds = 0;

	q.qp_type = t == 0xff ? u32() : types[t % 8];
	q.pd_handle = pick(&pools.pd);
	q.send_cq_handle = pick(&pools.cq);
	q.recv_cq_handle = u8() & 1 ? q.send_cq_handle : pick(&pools.cq);
	q.srq_handle = u8() & 3 ? SRD_NO_HANDLE : pick(&pools.srq);
	q.xrcd_handle = pick(&pools.xrcd);
	q.sq_sig_all = u8() & 1;
	q.cap.max_send_wr = small(32);
	q.cap.max_recv_wr = small(32);
	q.cap.max_send_sge = small(4);
	q.cap.max_recv_sge = small(4);
	q.cap.max_inline_data = small(128);
	q.user_handle = u64();
	/* A raw packet QP may come with its proof of CAP_NET_RAW. */
	if (q.qp_type == IBV_QPT_RAW_PACKET ? u8() < 0xc0 : u8() == 0xff) {
		fd = fd_pick(FD_PACKET);
		nfds = 1;
	}
	if (cmd(k, SRD_CMD_CREATE_QP, &q, sizeof(q), &fd, nfds, 0) == 0) {
		const struct srd_create_qp_rep *rep = rep_data();

		pool_add(&pools.qp, rep->handle);
		if (q.qp_type == IBV_QPT_XRC_RECV)
			pool_add(&pools.xrc_qpn, rep->qp_num);
		reach[R_XRC_SEND] += q.qp_type == IBV_QPT_XRC_SEND;
		reach[R_XRC_RECV] += q.qp_type == IBV_QPT_XRC_RECV;
		reach[R_RAW_QP] += q.qp_type == IBV_QPT_RAW_PACKET;
	}
}

/* The address vector of the device's GID 0 (or of something else). */
static void av_fill(struct ibv_ah_attr *av)
{
	memset(av, 0, sizeof(*av));
	av->is_global = 1;
	av->port_num = 1;
	av->grh.dgid = dev0()->port.gid[0];
	av->grh.hop_limit = 64;
	if (u8() == 0xff)
		bytes(av, sizeof(*av));
}

static void do_modify_qp(int k)
{
	struct srd_modify_qp_req q;

	memset(&q, 0, sizeof(q));
	q.handle = pick(&pools.qp);
	q.attr_mask = u8() == 0xff ? u32() : (u32() & 0x1fffff);
	q.attr.qp_state = small(6);
	q.attr.cur_qp_state = small(6);
	q.attr.path_mtu = 1 + small(4);
	q.attr.qkey = u32();
	q.attr.rq_psn = u32() & 0xffffff;
	q.attr.sq_psn = u32() & 0xffffff;
	q.attr.dest_qp_num = u8() & 1 ? pick(&pools.qp) : pick(&pools.xrc_qpn);
	q.attr.qp_access_flags = access_bits();
	q.attr.pkey_index = small(2);
	q.attr.port_num = 1 + (u8() == 0xff);
	q.attr.timeout = small(31);
	q.attr.retry_cnt = small(7);
	q.attr.rnr_retry = small(7);
	q.attr.min_rnr_timer = small(31);
	q.attr.max_rd_atomic = small(16);
	q.attr.max_dest_rd_atomic = small(16);
	q.attr.sq_draining = u8() & 1;
	q.attr.en_sqd_async_notify = u8() & 1;
	q.attr.cap.max_send_wr = small(64);
	q.attr.cap.max_recv_wr = small(64);
	av_fill(&q.attr.ah_attr);
	if (u8() & 1)
		av_fill(&q.attr.alt_ah_attr);
	cmd(k, SRD_CMD_MODIFY_QP, &q, sizeof(q), NULL, 0, 0);
}

/* RESET to RTS as the library's connection code would (failures are
 * fine: the QP may be of any type, or gone).  Its bytes are read first,
 * so what follows does not depend on how far it got. */
static void do_qp_up(int k)
{
	uint32_t h = pick(&pools.qp), dest;
	struct srd_qp *qp = table_get(&d.qps_by_num, h);
	struct srd_modify_qp_req q;
	struct ibv_ah_attr av;
	uint16_t rq_psn, sq_psn;
	uint8_t timeout;
	bool resp, req, dgram;

	if (!qp)
		return;
	dest = qp->type == IBV_QPT_XRC_SEND && u8() & 1 ? pick(&pools.xrc_qpn)
							: pick(&pools.qp);
	/* RC and the XRC target answer, RC and the XRC initiator ask */
	resp = qp->type == IBV_QPT_RC || qp->type == IBV_QPT_XRC_RECV;
	req = qp->type == IBV_QPT_RC || qp->type == IBV_QPT_XRC_SEND;
	dgram = qp->type == IBV_QPT_UD || qp->type == IBV_QPT_RAW_PACKET;
	if (!dgram)
		av_fill(&av);
	if (!dgram)
		rq_psn = u16();
	sq_psn = qp->type == IBV_QPT_XRC_RECV ? 0 : u16();
	timeout = req ? (uint8_t)small(3) : 0;

	memset(&q, 0, sizeof(q));
	q.handle = h;
	q.attr.qp_state = IBV_QPS_INIT;
	q.attr.port_num = 1;
	q.attr.qkey = 0x11111111;
	q.attr.qp_access_flags =
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	q.attr_mask = IBV_QP_STATE | IBV_QP_PORT |
		      (qp->type == IBV_QPT_RAW_PACKET ? 0 : IBV_QP_PKEY_INDEX) |
		      (qp->type == IBV_QPT_UD ? IBV_QP_QKEY
		       : dgram		      ? 0
					      : IBV_QP_ACCESS_FLAGS);
	if (cmd(k, SRD_CMD_MODIFY_QP, &q, sizeof(q), NULL, 0, 0))
		return;

	memset(&q.attr, 0, sizeof(q.attr));
	q.attr.qp_state = IBV_QPS_RTR;
	if (dgram) {
		q.attr_mask = IBV_QP_STATE;
	} else {
		q.attr.ah_attr = av;
		q.attr.path_mtu = IBV_MTU_1024;
		q.attr.dest_qp_num = dest;
		q.attr.rq_psn = rq_psn;
		q.attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (resp) {
			q.attr.max_dest_rd_atomic = 16;
			q.attr.min_rnr_timer = 1;
			q.attr_mask |= IBV_QP_MAX_DEST_RD_ATOMIC |
				       IBV_QP_MIN_RNR_TIMER;
		}
	}
	if (cmd(k, SRD_CMD_MODIFY_QP, &q, sizeof(q), NULL, 0, 0))
		return;
	if (qp->type == IBV_QPT_XRC_RECV)
		return; /* a receive side only */

	memset(&q.attr, 0, sizeof(q.attr));
	q.attr.qp_state = IBV_QPS_RTS;
	q.attr.sq_psn = sq_psn;
	q.attr_mask = IBV_QP_STATE |
		      (qp->type == IBV_QPT_RAW_PACKET ? 0 : IBV_QP_SQ_PSN);
	if (req) {
		q.attr.timeout = timeout;
		q.attr.retry_cnt = 7;
		q.attr.rnr_retry = 7;
		q.attr.max_rd_atomic = 16;
		q.attr_mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	}
	if (cmd(k, SRD_CMD_MODIFY_QP, &q, sizeof(q), NULL, 0, 0) == 0)
		reach[R_RTS]++;
}

static void do_create_srq(int k)
{
	struct srd_create_srq_req q = { 0 };

	q.pd_handle = pick(&pools.pd);
	q.max_wr = 1 + small(31);
	q.max_sge = small(4);
	q.srq_limit = small(4);
	q.user_handle = u64();
	q.srq_type = u8() & 1 ? IBV_SRQT_XRC : small(2);
	q.xrcd_handle = pick(&pools.xrcd);
	q.cq_handle = pick(&pools.cq);
	if (cmd(k, SRD_CMD_CREATE_SRQ, &q, sizeof(q), NULL, 0, 0) == 0) {
		const struct srd_create_srq_rep *rep = rep_data();

		pool_add(&pools.srq, rep->handle);
		if (q.srq_type == IBV_SRQT_XRC) {
			pool_add(&pools.srqn, rep->srq_num);
			reach[R_XRC_SRQ]++;
		}
	}
}

static void do_create_flow(int k)
{
	static const uint32_t types[] = {
		IBV_FLOW_SPEC_ETH,	     IBV_FLOW_SPEC_IPV4,
		IBV_FLOW_SPEC_IPV4_EXT,	     IBV_FLOW_SPEC_IPV6,
		IBV_FLOW_SPEC_TCP,	     IBV_FLOW_SPEC_UDP,
		IBV_FLOW_SPEC_ESP,	     IBV_FLOW_SPEC_VXLAN_TUNNEL,
		IBV_FLOW_SPEC_GRE,	     IBV_FLOW_SPEC_MPLS,
		IBV_FLOW_SPEC_ACTION_TAG,    IBV_FLOW_SPEC_ACTION_DROP,
		IBV_FLOW_SPEC_ACTION_HANDLE, IBV_FLOW_SPEC_ACTION_COUNT,
	};
	union {
		struct srd_create_flow_req r;
		uint8_t b[sizeof(struct srd_create_flow_req) +
			  SRD_FLOW_SPECS_MAX];
	} q;
	uint32_t n = small(4), off = 0;
	int fd, nfds = 0;

	memset(&q, 0, sizeof(q));
	q.r.qp_handle = pick(&pools.qp);
	q.r.comp_mask = u8() == 0xff ? u32() : 0;
	q.r.type = small(3);
	q.r.flags = u8() == 0xff ? u32() : 0;
	q.r.priority = u16() & 7;
	q.r.port = u8() == 0xff ? u8() : 1;
	for (uint32_t i = 0; i < n && i < 16; i++) {
		/* ibv_flow_spec_*: type, size, then val and mask */
		uint8_t t = u8();
		uint32_t type = types[t % 14];
		uint16_t size;

		if (t & 0x80)
			type |= IBV_FLOW_SPEC_INNER;
		switch (type & ~(uint32_t)IBV_FLOW_SPEC_INNER) {
		case IBV_FLOW_SPEC_ETH:
			size = sizeof(struct ibv_flow_spec_eth);
			break;
		case IBV_FLOW_SPEC_IPV4:
			size = sizeof(struct ibv_flow_spec_ipv4);
			break;
		case IBV_FLOW_SPEC_IPV4_EXT:
			size = sizeof(struct ibv_flow_spec_ipv4_ext);
			break;
		case IBV_FLOW_SPEC_IPV6:
			size = sizeof(struct ibv_flow_spec_ipv6);
			break;
		case IBV_FLOW_SPEC_TCP:
		case IBV_FLOW_SPEC_UDP:
			size = sizeof(struct ibv_flow_spec_tcp_udp);
			break;
		default:
			size = 8 + (u8() & 0x3c);
			break;
		}
		if (u8() == 0xff)
			size = u16();
		if (off + 8 > SRD_FLOW_SPECS_MAX)
			break;
		memcpy(q.r.specs + off, &type, 4);
		memcpy(q.r.specs + off + 4, &size, 2);
		if (size > 8) {
			uint32_t body = size - 8;

			if (off + 8 + body > SRD_FLOW_SPECS_MAX)
				body = SRD_FLOW_SPECS_MAX - off - 8;
			bytes(q.r.specs + off + 8, body);
		}
		off += size > 8 ? size : 8;
		if (off > SRD_FLOW_SPECS_MAX)
			off = SRD_FLOW_SPECS_MAX;
	}
	q.r.num_of_specs = (uint8_t)(u8() == 0xff ? u8() : n);
	q.r.specs_len = u8() == 0xff ? u32() : off;
	if (u8() < 0xc0) {
		fd = fd_pick(FD_PACKET);
		nfds = 1;
	}
	if (cmd(k, SRD_CMD_CREATE_FLOW, &q, sizeof(q.r) + off, &fd, nfds, 0) ==
	    0)
		pool_add(&pools.flow,
			 ((const struct srd_create_flow_rep *)rep_data())
				 ->handle);
}

/* The other commands: fixed layouts, handles from the pools. */
static void do_simple(int k, uint32_t op)
{
	union {
		struct srd_handle_req h;
		struct srd_query_port_req port;
		struct srd_query_gid_req gid;
		struct srd_create_cq_req cq;
		struct srd_resize_cq_req resize;
		struct srd_modify_cq_req modcq;
		struct srd_query_qp_req qq;
		struct srd_modify_srq_req msrq;
		struct srd_create_ah_req ah;
		struct srd_mcast_req mc;
		struct srd_alloc_dm_req dm;
		struct srd_reg_dm_mr_req dmmr;
		struct srd_alloc_mw_req mw;
		struct srd_open_xrcd_req xrcd;
		struct srd_open_qp_req oqp;
		struct srd_import_mr_req imr;
		struct srd_hello_req hello;
		uint8_t raw[256];
	} q;
	struct pool *p = NULL;
	uint32_t len = 0;
	int fd, nfds = 0, st;

	memset(&q, 0, sizeof(q));
	switch (op) {
	case SRD_CMD_HELLO:
		q.hello.version = u8() == 0xff ? u32() : SRD_PROTO_VERSION;
		q.hello.pid = (uint32_t)getpid();
		len = sizeof(q.hello);
		break;
	case SRD_CMD_QUERY_PORT:
		q.port.port_num = small(2);
		len = sizeof(q.port);
		break;
	case SRD_CMD_QUERY_GID:
	case SRD_CMD_QUERY_PKEY:
		q.gid.port_num = small(2);
		q.gid.index = small(20);
		len = sizeof(q.gid);
		break;
	case SRD_CMD_DEALLOC_PD:
	case SRD_CMD_IMPORT_PD:
		q.h.handle = pick(&pools.pd);
		len = sizeof(q.h);
		break;
	case SRD_CMD_DEREG_MR:
		q.h.handle = pick(&pools.mr);
		len = sizeof(q.h);
		break;
	case SRD_CMD_DESTROY_COMP_CHANNEL:
		q.h.handle = pick(&pools.channel);
		len = sizeof(q.h);
		break;
	case SRD_CMD_CREATE_CQ:
		q.cq.cqe = 1 + small(127);
		q.cq.channel_handle = u8() & 1 ? SRD_NO_HANDLE
					       : pick(&pools.channel);
		q.cq.flags = small(2);
		q.cq.user_handle = u64();
		p = &pools.cq;
		len = sizeof(q.cq);
		break;
	case SRD_CMD_RESIZE_CQ:
		q.resize.handle = pick(&pools.cq);
		q.resize.cqe = 1 + small(255);
		q.resize.cons = small(8);
		len = sizeof(q.resize);
		break;
	case SRD_CMD_DESTROY_CQ:
		q.h.handle = pick(&pools.cq);
		len = sizeof(q.h);
		break;
	case SRD_CMD_MODIFY_CQ:
		q.modcq.handle = pick(&pools.cq);
		q.modcq.attr_mask = small(2);
		q.modcq.cq_count = u16();
		q.modcq.cq_period = u16();
		len = sizeof(q.modcq);
		break;
	case SRD_CMD_QUERY_QP:
		q.qq.handle = pick(&pools.qp);
		q.qq.attr_mask = u32();
		len = sizeof(q.qq);
		break;
	case SRD_CMD_DESTROY_QP:
		q.h.handle = pick(&pools.qp);
		len = sizeof(q.h);
		break;
	case SRD_CMD_MODIFY_SRQ:
		q.msrq.handle = pick(&pools.srq);
		q.msrq.attr_mask = small(3);
		q.msrq.attr.max_wr = small(64);
		q.msrq.attr.srq_limit = small(64);
		len = sizeof(q.msrq);
		break;
	case SRD_CMD_QUERY_SRQ:
	case SRD_CMD_DESTROY_SRQ:
		q.h.handle = pick(&pools.srq);
		len = sizeof(q.h);
		break;
	case SRD_CMD_CREATE_AH:
		q.ah.pd_handle = pick(&pools.pd);
		av_fill(&q.ah.attr);
		p = &pools.ah;
		len = sizeof(q.ah);
		break;
	case SRD_CMD_DESTROY_AH:
		q.h.handle = pick(&pools.ah);
		len = sizeof(q.h);
		break;
	case SRD_CMD_ATTACH_MCAST:
	case SRD_CMD_DETACH_MCAST:
		q.mc.qp_handle = pick(&pools.qp);
		q.mc.lid = u16();
		q.mc.gid.raw[0] = 0xff;
		q.mc.gid.raw[1] = 0x0e;
		q.mc.gid.raw[15] = u8() & 3;
		if (u8() == 0xff)
			bytes(&q.mc.gid, sizeof(q.mc.gid));
		len = sizeof(q.mc);
		break;
	case SRD_CMD_ALLOC_DM:
		q.dm.length = u8() == 0xff ? u64() : 1 + small(8191);
		q.dm.log_align_req = small(13);
		p = &pools.dm;
		len = sizeof(q.dm);
		break;
	case SRD_CMD_FREE_DM:
	case SRD_CMD_IMPORT_DM:
		q.h.handle = pick(&pools.dm);
		len = sizeof(q.h);
		break;
	case SRD_CMD_REG_DM_MR:
		q.dmmr.pd_handle = pick(&pools.pd);
		q.dmmr.dm_handle = pick(&pools.dm);
		q.dmmr.offset = small(8192);
		q.dmmr.length = u8() == 0xff ? u64() : small(8192);
		q.dmmr.access = access_bits();
		len = sizeof(q.dmmr);
		break;
	case SRD_CMD_ALLOC_MW:
		q.mw.pd_handle = pick(&pools.pd);
		q.mw.type = 1 + small(2);
		len = sizeof(q.mw);
		break;
	case SRD_CMD_DEALLOC_MW:
		q.h.handle = pick(&pools.mw);
		len = sizeof(q.h);
		break;
	case SRD_CMD_OPEN_XRCD: {
		static const uint32_t oflags[] = { 0, O_CREAT, O_CREAT | O_EXCL,
						   O_EXCL };
		uint8_t b = u8();

		q.xrcd.has_fd = b & 1 ? 1 : (b & 2 ? u32() : 0);
		q.xrcd.oflags = oflags[(b >> 2) & 3];
		if (q.xrcd.has_fd || b >= 0xf0) {
			fd = fd_pick(b & 0x10 ? FD_XRCD_B : FD_XRCD_A);
			nfds = 1;
		}
		p = &pools.xrcd;
		len = sizeof(q.xrcd);
		break;
	}
	case SRD_CMD_CLOSE_XRCD:
		q.h.handle = pick(&pools.xrcd);
		len = sizeof(q.h);
		break;
	case SRD_CMD_OPEN_QP:
		q.oqp.xrcd_handle = pick(&pools.xrcd);
		q.oqp.qp_num = u8() & 3 ? pick(&pools.xrc_qpn)
					: pick(&pools.qp);
		q.oqp.user_handle = u64();
		len = sizeof(q.oqp);
		break;
	case SRD_CMD_IMPORT_MR:
		q.imr.handle = pick(&pools.mr);
		q.imr.pd_handle = pick(&pools.pd);
		len = sizeof(q.imr);
		break;
	case SRD_CMD_DESTROY_FLOW:
		q.h.handle = pick(&pools.flow);
		len = sizeof(q.h);
		break;
	case SRD_CMD_ALLOC_PD:
		p = &pools.pd;
		break;
	case SRD_CMD_CREATE_COMP_CHANNEL:
		p = &pools.channel;
		break;
	default: /* no payload, or one of its own */
		break;
	}
	if (u8() == 0xff)
		q.h.rsvd = u32(); /* rsvd fields of the handle requests */
	st = cmd(k, op, &q, len, &fd, nfds, 0);
	if (st == 0 && p && rep_len >= 4)
		pool_add(p, *(const uint32_t *)rep_data());
	if (st == 0 && op == SRD_CMD_ALLOC_MW && rep_len >= 8) {
		const struct srd_alloc_mw_rep *rep = rep_data();

		pool_add(&pools.mw, rep->handle);
		pool_add(&pools.mw_rkey, rep->rkey);
	}
	if (st == 0 && op == SRD_CMD_REG_DM_MR && rep_len >= 8) {
		const struct srd_reg_mr_rep *rep = rep_data();

		seen_mr(rep->handle, rep->lkey, 0, q.dmmr.length);
	}
}

/* Anything: op, length, payload bytes and fds as the input has them. */
static void do_raw(int k)
{
	uint8_t payload[512];
	uint32_t op, len = small(255), lie = 0;
	uint8_t b = u8();
	int fds[4], nfds = u8() % 5;

	switch (b & 3) {
	case 0:
		op = u8() % SRD_CMD__MAX;
		break;
	case 1:
		op = SRD_CMD_ADMIN_BASE + u8() % 24;
		break;
	case 2:
		op = SRD_CMD_CM_BASE + u8() % 24;
		break;
	default:
		op = u32();
		break;
	}
	/* what outlives an input, or changes the device set, stays out */
	if (op == SRD_ADMIN_LINK_ADD || op == SRD_ADMIN_LINK_DEL ||
	    op == SRD_ADMIN_FAULT_ADD || op == SRD_ADMIN_CAPTURE_START)
		op = SRD_ADMIN_DEV_LIST;
	if (len > sizeof(payload))
		len = sizeof(payload);
	bytes(payload, len);
	for (int i = 0; i < nfds; i++)
		fds[i] = fd_pick(u8() % FD_FIXED);
	if (b & 4)
		lie = u32();
	cmd(k, op, payload, len, fds, nfds, lie);
}

/* --- the rings --------------------------------------------------------------- */
static struct srd_sge sge_pick(void)
{
	const struct mr_seen *m = pick_mr();
	struct srd_sge s = {
		.addr = m->iova + small(4096),
		.length = small(4096),
		.lkey = u8() < 0xf0 ? m->lkey : pick(&pools.key),
	};

	return s;
}

static void post_send(void)
{
	static const uint8_t ops[] = {
		IBV_WR_SEND,
		IBV_WR_SEND_WITH_IMM,
		IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM,
		IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP,
		IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_LOCAL_INV,
		IBV_WR_BIND_MW,
		IBV_WR_SEND_WITH_INV,
		IBV_WR_BIND_MW,
		IBV_WR_LOCAL_INV,
		IBV_WR_SEND_WITH_INV,
		IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_READ,
		IBV_WR_SEND,
	};
	struct srd_qp *qp = table_get(&d.qps_by_num, pick(&pools.qp));
	struct srd_send_wqe w;
	struct srd_wq *wq;
	uint8_t *slotp, b;
	uint32_t prod, room;

	if (!qp || !qp->sq.entries || !qp->sq.ring)
		return;
	wq = &qp->sq;
	memset(&w, 0, sizeof(w));
	b = u8();
	w.opcode = b == 0xff ? u8() : ops[b % 16];
	w.wr_id = u16();
	w.flags = u8() & 0xf;
	w.flags |= SRD_WQE_SIGNALED;
	w.num_sge = small(2);
	switch (w.opcode) {
	case IBV_WR_BIND_MW: {
		const struct mr_seen *m = pick_mr();

		/* imm_data: the window's rkey; rkey: its new one (0: the
		 * key byte stays, so the pool's rkey stays good) */
		uint8_t kb;

		w.imm_data = pick(&pools.mw_rkey);
		kb = u8();
		w.rkey = kb ? (w.imm_data & ~0xffu) | kb : w.imm_data;
		w.bind.mr_lkey = m->lkey;
		w.bind.length = u8() == 0xff ? u64() : small(8192);
		w.bind.access = access_bits();
		w.remote_addr = m->iova + small(4096);
		w.num_sge = 0;
		break;
	}
	case IBV_WR_LOCAL_INV:
	case IBV_WR_SEND_WITH_INV:
		w.imm_data = pick(&pools.mw_rkey);
		break;
	default:
		w.imm_data = u32();
		w.rkey = u8() & 1 ? pick(&pools.mw_rkey) : pick(&pools.key);
		w.remote_addr = pick_mr()->iova + small(4096);
		w.compare_add = u64();
		break;
	}
	w.ah_handle = pick(&pools.ah);
	w.remote_qpn = qp->type == IBV_QPT_XRC_SEND ? pick(&pools.srqn)
						    : pick(&pools.qp);
	w.remote_qkey = 0x11111111;
	prod = __atomic_load_n(&wq->ctl->prod, __ATOMIC_RELAXED);
	slotp = wq->ring + (size_t)(prod & (wq->entries - 1)) * wq->slot_size;
	memset(slotp, 0, wq->slot_size);
	memcpy(slotp, &w, sizeof(w));
	room = (wq->slot_size - sizeof(w)) / sizeof(struct srd_sge);
	for (uint32_t i = 0; i < w.num_sge && i < room; i++) {
		struct srd_sge s = sge_pick();

		memcpy(slotp + sizeof(w) + i * sizeof(s), &s, sizeof(s));
	}
	__atomic_store_n(&wq->ctl->prod, prod + 1, __ATOMIC_RELEASE);
	reach[R_WQE]++;
}

static void post_recv(void)
{
	uint32_t *ctl_prod, entries, slot_size, prod, room;
	uint8_t *ring, *slotp;
	struct srd_recv_wqe w = { 0 };

	if (u8() & 1) {
		struct srd_srq *srq = table_get(&d.srqs, pick(&pools.srq));

		if (!srq)
			return;
		ring = srq->ring;
		ctl_prod = &srq->ctl->rq.prod;
		entries = srq->entries;
		slot_size = srq->slot_size;
	} else {
		struct srd_qp *qp = table_get(&d.qps_by_num, pick(&pools.qp));

		if (!qp || !qp->rq.entries || !qp->rq.ring)
			return;
		ring = qp->rq.ring;
		ctl_prod = &qp->rq.ctl->prod;
		entries = qp->rq.entries;
		slot_size = qp->rq.slot_size;
	}
	w.wr_id = u16();
	w.num_sge = small(2);
	prod = __atomic_load_n(ctl_prod, __ATOMIC_RELAXED);
	slotp = ring + (size_t)(prod & (entries - 1)) * slot_size;
	memset(slotp, 0, slot_size);
	memcpy(slotp, &w, sizeof(w));
	room = (slot_size - sizeof(w)) / sizeof(struct srd_sge);
	for (uint32_t i = 0; i < w.num_sge && i < room; i++) {
		struct srd_sge s = sge_pick();

		memcpy(slotp + sizeof(w) + i * sizeof(s), &s, sizeof(s));
	}
	__atomic_store_n(ctl_prod, prod + 1, __ATOMIC_RELEASE);
}

/* Consume every CQE written, as the library would poll them. */
static void drain_cqs(void)
{
	struct srd_table *t = &d.cqs;

	for (uint32_t i = t->first; i < table_end(t); i++) {
		struct srd_cq *cq = table_get(t, i);
		uint32_t cons;

		if (!cq)
			continue;
		cons = __atomic_load_n(&cq->ctl->cons, __ATOMIC_RELAXED);
		for (; cons != cq->prod; cons++) {
			const struct srd_cqe *e =
				&cq->ring[cons & (cq->entries - 1)];

			if (trace)
				fprintf(stderr,
					"cmd_fuzz: cq %u: wr %llu status %u "
					"opcode %u\n",
					i, (unsigned long long)e->wr_id,
					e->status, e->opcode);
			if (e->status != IBV_WC_SUCCESS) {
				reach[R_WC_ERR]++;
				continue;
			}
			reach[R_WC_OK]++;
			reach[R_WC_BIND] += e->opcode == IBV_WC_BIND_MW;
			reach[R_WC_LOCAL_INV] += e->opcode == IBV_WC_LOCAL_INV;
			reach[R_WC_RECV_INV] += (e->opcode & IBV_WC_RECV) &&
						(e->wc_flags & IBV_WC_WITH_INV);
		}
		__atomic_store_n(&cq->ctl->cons, cons, __ATOMIC_RELEASE);
	}
}

static void run_engine(int passes)
{
	while (passes--) {
		engine_progress(&d, now_ns);
		cq_mod_progress(&d, now_ns);
		cm_progress(&d, now_ns);
		now_ns += 20000;
	}
	drain_cqs();
}

/* --- connections --------------------------------------------------------- */
static void slot_close(int k)
{
	struct srd_client *c = slot[k].c;

	if (slot[k].fd >= 0)
		close(slot[k].fd);
	slot[k].fd = -1;
	slot[k].c = NULL;
	/* The daemon sees the hang-up and lets the client go. */
	if (c && client_alive(c))
		client_input(c, EPOLLIN | EPOLLHUP);
}

/* A new connection on slot k, with HELLO if hello. */
static void slot_open(int k, bool hello)
{
	struct srd_hello_req h = { .version = SRD_PROTO_VERSION,
				   .pid = (uint32_t)getpid() };

	slot_close(k);
	slot[k].c = connect_one(&slot[k].fd);
	if (hello)
		cmd(k, SRD_CMD_HELLO, &h, sizeof(h), NULL, 0, 0);
}

/* What the library does first: HELLO, then OPEN_DEVICE with the memory
 * of the child and its maps, bound to its end. */
static void slot_open_library(int k)
{
	struct srd_open_device_req q = { .mem_access = SRD_MEM_PROCMEM,
					 .flags = SRD_OPEN_F_BIND |
						  SRD_OPEN_F_MAPS };
	int fds[3] = { fixed_fd[FD_PROC_MEM], fixed_fd[FD_PROC_MAPS], -1 };

	slot_open(k, true);
	fds[2] = slot[k].fd;
	if (cmd(k, SRD_CMD_OPEN_DEVICE, &q, sizeof(q), fds, 3, 0) == 0) {
		reach[R_OPEN_BIND]++;
		reach[R_OPEN_MAPS]++;
	}
}

/* An importer of slot j's context on slot k. */
static void slot_open_import(int k, int j)
{
	struct srd_open_device_req q = { .mem_access = SRD_MEM_PROCMEM,
					 .flags = SRD_OPEN_F_IMPORT |
						  SRD_OPEN_F_MAPS };
	int fds[3] = { fixed_fd[FD_PROC_MEM], fixed_fd[FD_PROC_MAPS], -1 };

	if (slot[j].fd < 0 || j == k)
		return;
	slot_open(k, true);
	fds[2] = slot[j].fd;
	if (cmd(k, SRD_CMD_OPEN_DEVICE, &q, sizeof(q), fds, 3, 0) == 0)
		reach[R_OPEN_IMPORT]++;
}

/* --- invariants ---------------------------------------------------------- */
/* Owners that outlive every input: the connection manager's own clients
 * (QP1 of each device, made by the CM_OPEN of the warm-up). */
#define KEEPERS 8
static const struct srd_client *keeper[KEEPERS];
static int nkeepers;

static bool kept_by(const struct srd_client *c, bool learn)
{
	for (int i = 0; i < nkeepers; i++)
		if (keeper[i] == c)
			return true;
	if (learn && nkeepers < KEEPERS) {
		keeper[nkeepers++] = c;
		return true;
	}
	return false;
}

/* Every object of every table belongs to a keeper (learn: they are the
 * keepers). */
#define OWNED(tbl, type, learn)                                            \
	do {                                                               \
		for (uint32_t i = (tbl)->first; i < table_end(tbl); i++) { \
			const type *o = table_get((tbl), i);               \
			if (o && !kept_by(o->owner, learn)) {              \
				fprintf(stderr,                            \
					"cmd_fuzz: %s %u outlived its "    \
					"client\n",                        \
					#tbl, i);                          \
				abort();                                   \
			}                                                  \
		}                                                          \
	} while (0)

static void check_owners(bool learn)
{
	OWNED(&d.pds, struct srd_pd, learn);
	OWNED(&d.mrs, struct srd_mr, learn);
	OWNED(&d.mws, struct srd_mw, learn);
	OWNED(&d.cqs, struct srd_cq, learn);
	OWNED(&d.qps_by_num, struct srd_qp, learn);
	OWNED(&d.srqs, struct srd_srq, learn);
	OWNED(&d.ahs, struct srd_ah, learn);
	OWNED(&d.channels, struct srd_comp_channel, learn);
	OWNED(&d.dms, struct srd_dm, learn);
	OWNED(&d.xrcds, struct srd_xrcd_handle, learn);
}

static void check_at_rest(void)
{
	CHECK(d.nclients == 1); /* the sentinel */
	check_owners(false);
	CHECK(list_empty(&d.xrcds_list));
	CHECK(list_empty(&d.cq_timers));
	list_for_each (&d.devices, it) {
		struct srd_device *dev =
			list_entry(it, struct srd_device, node);

		CHECK(dev->dm_used == 0);
		CHECK(dev->raw == NULL);
	}
	/* Every charge was taken back: what is left is the sentinel's own
	 * connection and its descriptors, as after it connected. */
	for (int r = 0; r < SRD_RES_NUM; r++) {
		if (user0->usage.n[r] != user0_rest[r] ||
		    sentinel->usage.n[r] != sentinel_rest[r]) {
			static const char fmt[] = "cmd_fuzz: usage %d: user "
						  "%" PRIu64 " client %" PRIu64
						  " (at rest %" PRIu64
						  " and %" PRIu64 ")\n";

			fprintf(stderr, fmt, r, user0->usage.n[r],
				sentinel->usage.n[r], user0_rest[r],
				sentinel_rest[r]);
			abort();
		}
	}
	CHECK(count_fds() == fds_at_rest);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct srd_options o = { .socket_name = "unused", .spin_us = 0 };
	static char name[64];
	size_t n;
	int lfd;

	(void)argc;
	(void)argv;
	signal(SIGPIPE, SIG_IGN);
	netns_private();
	arena_make();
	fds_make();
	for (int k = 0; k < SLOTS; k++)
		slot[k].fd = -1;
	srd_log_open(-1, SRD_LOG_ERR);
	memset(&srd_net_cfg, 0, sizeof(srd_net_cfg));
	/* the listening socket the daemon would have made */
	snprintf(name, sizeof(name), "softrdma-cmd-fuzz-%d", (int)getpid());
	n = strlen(name);
	memset(&listen_sa, 0, sizeof(listen_sa));
	listen_sa.sun_family = AF_UNIX;
	memcpy(listen_sa.sun_path + 1, name, n);
	listen_len =
		(socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	CHECK(lfd >= 0);
	CHECK(!bind(lfd, (struct sockaddr *)&listen_sa, listen_len));
	CHECK(!listen(lfd, 16));
	CHECK(daemon_init(&d, &o, lfd) == 0);
	/* A client that holds nothing keeps our uid's account alive, so
	 * its usage can be checked between inputs. */
	sentinel = connect_one(&sentinel_fd);
	user0 = sentinel->user;
	/* The connection manager's QP1s come with its first user and stay:
	 * made here, they are known. */
	slot_open_library(0);
	cmd(0, SRD_CMD_CM_OPEN, NULL, 0, NULL, 0, 0);
	slot_close(0);
	memcpy(user0_rest, user0->usage.n, sizeof(user0_rest));
	memcpy(sentinel_rest, sentinel->usage.n, sizeof(sentinel_rest));
	check_owners(true);
	CHECK(nkeepers > 0);
	memset(reach, 0, sizeof(reach));
	memset(sent, 0, sizeof(sent));
	memset(ok, 0, sizeof(ok));
	if (getenv("SRD_FUZZ_REACH"))
		atexit(reach_print);
	trace = getenv("SRD_FUZZ_TRACE") != NULL;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t verbs_ops[] = {
		SRD_CMD_ALLOC_PD,
		SRD_CMD_REG_MR,
		SRD_CMD_CREATE_CQ,
		SRD_CMD_CREATE_QP,
		SRD_CMD_CREATE_SRQ,
		SRD_CMD_OPEN_XRCD,
		SRD_CMD_ALLOC_MW,
		SRD_CMD_ALLOC_DM,
		SRD_CMD_REG_DM_MR,
		SRD_CMD_CREATE_FLOW,
		SRD_CMD_OPEN_QP,
		SRD_CMD_ADVISE_MR,
		SRD_CMD_MODIFY_QP,
		SRD_CMD_IMPORT_PD,
		SRD_CMD_IMPORT_MR,
		SRD_CMD_IMPORT_DM,
		SRD_CMD_DEALLOC_MW,
		SRD_CMD_CLOSE_XRCD,
		SRD_CMD_FREE_DM,
		SRD_CMD_DESTROY_FLOW,
		SRD_CMD_REREG_MR,
		SRD_CMD_DEREG_MR,
		SRD_CMD_DESTROY_QP,
		SRD_CMD_DESTROY_SRQ,
		SRD_CMD_DESTROY_CQ,
		SRD_CMD_DEALLOC_PD,
		SRD_CMD_CREATE_AH,
		SRD_CMD_DESTROY_AH,
		SRD_CMD_ATTACH_MCAST,
		SRD_CMD_DETACH_MCAST,
		SRD_CMD_QUERY_QP,
		SRD_CMD_MODIFY_SRQ,
		SRD_CMD_QUERY_SRQ,
		SRD_CMD_RESIZE_CQ,
		SRD_CMD_MODIFY_CQ,
		SRD_CMD_OPEN_DEVICE,
		SRD_CMD_CREATE_COMP_CHANNEL,
		SRD_CMD_DESTROY_COMP_CHANNEL,
		SRD_CMD_QUERY_DEVICE,
		SRD_CMD_QUERY_PORT,
		SRD_CMD_QUERY_GID,
		SRD_CMD_QUERY_PKEY,
		SRD_CMD_HELLO,
		SRD_CMD_LIST_DEVICES,
	};
	int steps = 0;

	in_p = data;
	in_n = size;
	memset(&pools, 0, sizeof(pools));
	inputs++;
	/* Counted here: libFuzzer opens fds of its own between inputs (its
	 * symbolizer's pipes). */
	fds_at_rest = count_fds();
	/* Byte 0, bit 0: start with no context at all. */
	if (!(u8() & 1))
		slot_open_library(0);
	while (in_n && steps++ < 256) {
		uint8_t b = u8();
		int k = (b >> 6) % SLOTS;

		if (!slot[k].c)
			k = 0;
		switch (b & 0x3f) {
		case 0:
			do_raw(k);
			break;
		case 1:
			/* connections: a library-like one, an importer, a
			 * bare one, or one gone */
			switch (u8() & 3) {
			case 0:
				slot_open_library(b >> 6);
				break;
			case 1:
				slot_open_import(b >> 6, u8() % SLOTS);
				break;
			case 2:
				slot_open(b >> 6, u8() & 1);
				break;
			default:
				slot_close(b >> 6);
				break;
			}
			break;
		case 2:
		case 3:
			post_send();
			break;
		case 4:
			post_recv();
			break;
		case 5:
			run_engine(1 + u8() % 16);
			break;
		case 6:
		case 7:
			do_qp_up(k);
			break;
		case 8:
		case 9:
			do_reg_mr(k);
			break;
		case 10:
			do_rereg_mr(k);
			break;
		case 11:
			do_advise(k);
			break;
		case 12:
			do_open_device(k);
			break;
		case 13:
		case 14:
			do_create_qp(k);
			break;
		case 15:
			do_modify_qp(k);
			break;
		case 16:
		case 17:
			do_create_srq(k);
			break;
		case 18:
			do_create_flow(k);
			break;
		default: {
			uint32_t op = verbs_ops[((b & 0x3f) - 19) %
						(sizeof(verbs_ops) /
						 sizeof(verbs_ops[0]))];

			if (op == SRD_CMD_REG_MR)
				do_reg_mr(k);
			else if (op == SRD_CMD_CREATE_QP)
				do_create_qp(k);
			else if (op == SRD_CMD_CREATE_SRQ)
				do_create_srq(k);
			else if (op == SRD_CMD_CREATE_FLOW)
				do_create_flow(k);
			else if (op == SRD_CMD_ADVISE_MR)
				do_advise(k);
			else if (op == SRD_CMD_MODIFY_QP)
				do_modify_qp(k);
			else if (op == SRD_CMD_REREG_MR)
				do_rereg_mr(k);
			else if (op == SRD_CMD_OPEN_DEVICE)
				do_open_device(k);
			else
				do_simple(k, op);
			break;
		}
		}
	}
	run_engine(4);
	/* Every connection goes, then the daemon must hold nothing. */
	for (int k = 0; k < SLOTS; k++)
		slot_close(k);
	/* Importers cut off by their context's end are served last. */
	list_for_each (&d.clients, it) {
		struct srd_client *c = list_entry(it, struct srd_client, node);

		if (c != sentinel)
			client_input(c, EPOLLIN | EPOLLHUP);
	}
	run_engine(2);
	check_at_rest();
	return 0;
}
