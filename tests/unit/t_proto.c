/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/msg.h"
#include "tests/unit/t_proto.h"

static struct t_daemon *started;

static void kill_started(void)
{
	if (started && started->pid > 0)
		kill(started->pid, SIGKILL);
}

void t_daemon_start(struct t_daemon *td, const char *const *extra)
{
	const char *argv[32] = { SOFTRDMAD_PATH, "--foreground", "--socket" };
	int argc = 3;

	snprintf(td->name, sizeof(td->name), "srdtest-%d-%ld", (int)getpid(),
		 (long)time(NULL));
	argv[argc++] = td->name;
	for (int i = 0; extra && extra[i] && argc < 30; i++)
		argv[argc++] = extra[i];
	argv[argc] = NULL;
	td->pid = fork();
	T_ASSERT(td->pid >= 0);
	if (td->pid == 0) {
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	started = td;
	atexit(kill_started);
	for (int i = 0; i < 500; i++) {
		int fd = t_connect(td->name);

		if (fd >= 0) {
			close(fd);
			return;
		}
		usleep(10000);
	}
	T_FAIL("daemon did not come up");
}

int t_daemon_stop(struct t_daemon *td)
{
	int st;

	kill(td->pid, SIGTERM);
	T_ASSERT(waitpid(td->pid, &st, 0) == td->pid);
	td->pid = 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int t_connect(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(name);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	T_ASSERT(fd >= 0);
	memcpy(sa.sun_path + 1, name, len);
	if (connect(fd, (struct sockaddr *)&sa,
		    offsetof(struct sockaddr_un, sun_path) + 1 + len)) {
		close(fd);
		return -errno;
	}
	return fd;
}

void t_raw_send(int fd, const void *buf, size_t len, const int *fds, int nfds)
{
	union {
		char b[CMSG_SPACE(sizeof(int) * T_RAW_MAX_FDS)];
		struct cmsghdr a;
	} ctl;
	struct iovec iov = { (void *)buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	T_ASSERT(nfds >= 0 && nfds <= T_RAW_MAX_FDS);
	if (nfds) {
		struct cmsghdr *cm;

		m.msg_control = ctl.b;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	T_EQ(sendmsg(fd, &m, MSG_NOSIGNAL), (ssize_t)len);
}

int t_cmd(int fd, uint32_t op, const void *req, uint32_t len, const int *fds,
	  int nfds, void *rep, uint32_t repsz, uint32_t *replen, int *rfds,
	  int *nrfds)
{
	struct srd_msg_hdr h = { .op = op, .len = len };
	_Alignas(8) uint8_t buf[SRD_MSG_MAX];
	int got[SRD_MAX_FDS], ngot, n;
	struct srd_msg_hdr rh;

	n = srd_msg_send(fd, &h, req, fds, nfds);
	if (n < 0)
		T_FAIL("send op %u: %s", op, strerror(-n));
	n = srd_msg_recv(fd, buf, sizeof(buf), got, &ngot, SRD_MAX_FDS);
	if (n <= 0)
		T_FAIL("recv op %u: %s", op, n ? strerror(-n) : "EOF");
	memcpy(&rh, buf, sizeof(rh));
	T_EQ(rh.op, op);
	if (replen)
		*replen = rh.len;
	if (rep)
		memcpy(rep, buf + sizeof(rh), rh.len < repsz ? rh.len : repsz);
	if (rfds) {
		memcpy(rfds, got, ngot * sizeof(int));
		*nrfds = ngot;
	} else {
		srd_close_fds(got, ngot);
	}
	if (rh.status)
		T_EQ(rh.len, 0); /* errors carry no payload */
	if (rh.status && ngot)
		T_ASSERT(!"an error reply carried fds");
	return rh.status;
}

int t_hello(int fd)
{
	struct srd_hello_req req = { SRD_PROTO_VERSION, getpid() };
	struct srd_hello_rep rep;

	return t_cmd(fd, SRD_CMD_HELLO, &req, sizeof(req), NULL, 0, &rep,
		     sizeof(rep), NULL, NULL, NULL);
}

void t_client_open(struct t_client *c, const char *name)
{
	/* As the library does: the daemon reaches our memory outside
	 * memfds through our /proc/self/mem. */
	struct srd_open_device_req req = { .mem_access = SRD_MEM_PROCMEM };
	struct srd_open_device_rep rep;
	int fds[SRD_MAX_FDS], n;
	int mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);

	T_ASSERT(mem_fd >= 0);
	c->fd = t_connect(name);
	T_ASSERT(c->fd >= 0);
	T_EQ(t_hello(c->fd), 0);
	T_EQ(t_cmd(c->fd, SRD_CMD_OPEN_DEVICE, &req, sizeof(req), &mem_fd, 1,
		   &rep, sizeof(rep), NULL, fds, &n),
	     0);
	close(mem_fd);
	T_EQ(n, 3);
	c->async_fd = fds[0];
	c->doorbell_fd = fds[1];
	c->dev_page_fd = fds[2];
}

void t_client_close(struct t_client *c)
{
	close(c->fd);
	close(c->async_fd);
	close(c->doorbell_fd);
	close(c->dev_page_fd);
}

int64_t t_alloc_pd(int fd)
{
	struct srd_handle_rep rep;
	int st = t_cmd(fd, SRD_CMD_ALLOC_PD, NULL, 0, NULL, 0, &rep,
		       sizeof(rep), NULL, NULL, NULL);

	return st ? st : (int64_t)rep.handle;
}

int t_destroy(int fd, uint32_t op, uint32_t handle)
{
	struct srd_handle_req req = { .handle = handle };

	return t_cmd(fd, op, &req, sizeof(req), NULL, 0, NULL, 0, NULL, NULL,
		     NULL);
}

int64_t t_create_cq(int fd, uint32_t cqe, uint32_t channel,
		    struct srd_create_cq_rep *rep, int *memfd)
{
	struct srd_create_cq_req req = { .cqe = cqe,
					 .channel_handle = channel,
					 .user_handle = 0xc0ffee };
	struct srd_create_cq_rep r;
	int fds[SRD_MAX_FDS], n = 0, st;

	st = t_cmd(fd, SRD_CMD_CREATE_CQ, &req, sizeof(req), NULL, 0, &r,
		   sizeof(r), NULL, fds, &n);
	if (st)
		return st;
	T_EQ(n, 1);
	if (memfd)
		*memfd = fds[0];
	else
		close(fds[0]);
	if (rep)
		*rep = r;
	return r.handle;
}

int64_t t_reg_mr(int fd, uint32_t pd, size_t len, uint32_t access,
		 struct srd_reg_mr_rep *rep, void **map)
{
	union {
		struct srd_reg_mr_req r;
		struct {
			uint8_t hdr[offsetof(struct srd_reg_mr_req, piece)];
			struct srd_mr_piece p;
		};
	} req = { 0 };
	struct srd_reg_mr_rep r;
	int mfd, st;
	void *p;

	mfd = memfd_create("t-mr", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	T_ASSERT(mfd >= 0);
	T_ASSERT(!ftruncate(mfd, len));
	T_ASSERT(!fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	T_ASSERT(p != MAP_FAILED);
	req.r.pd_handle = pd;
	req.r.access = access;
	req.r.addr = (uintptr_t)p;
	req.r.length = len;
	req.r.iova = (uintptr_t)p;
	req.r.span_start = (uintptr_t)p;
	req.r.span_len = len;
	req.r.num_pieces = 1;
	req.p.len = len;
	req.p.kind = SRD_PIECE_FD;
	st = t_cmd(fd, SRD_CMD_REG_MR, &req, sizeof(req), &mfd, 1, &r,
		   sizeof(r), NULL, NULL, NULL);
	close(mfd);
	if (st) {
		munmap(p, len);
		return st;
	}
	if (map)
		*map = p;
	else
		munmap(p, len);
	if (rep)
		*rep = r;
	return r.handle;
}

int64_t t_create_qp(int fd, uint32_t pd, uint32_t cq, uint32_t srq,
		    enum ibv_qp_type type, const struct ibv_qp_cap *cap,
		    struct srd_create_qp_rep *rep, int *memfd)
{
	struct srd_create_qp_req req = {
		.pd_handle = pd,
		.send_cq_handle = cq,
		.recv_cq_handle = cq,
		.srq_handle = srq,
		.qp_type = type,
		.user_handle = 0x9999,
	};
	struct srd_create_qp_rep r;
	int fds[SRD_MAX_FDS], n = 0, st;

	if (cap) {
		req.cap = *cap;
	} else {
		req.cap.max_send_wr = 16;
		req.cap.max_recv_wr = 16;
		req.cap.max_send_sge = 1;
		req.cap.max_recv_sge = 1;
	}
	st = t_cmd(fd, SRD_CMD_CREATE_QP, &req, sizeof(req), NULL, 0, &r,
		   sizeof(r), NULL, fds, &n);
	if (st)
		return st;
	T_EQ(n, 1);
	if (memfd)
		*memfd = fds[0];
	else
		close(fds[0]);
	if (rep)
		*rep = r;
	return r.handle;
}

int t_modify_qp(int fd, uint32_t qp, const struct ibv_qp_attr *attr,
		uint32_t mask, uint32_t *new_state)
{
	struct srd_modify_qp_req req = { .handle = qp, .attr_mask = mask };
	struct srd_modify_qp_rep rep = { 0 };
	int st;

	req.attr = *attr;
	st = t_cmd(fd, SRD_CMD_MODIFY_QP, &req, sizeof(req), NULL, 0, &rep,
		   sizeof(rep), NULL, NULL, NULL);
	if (!st && new_state)
		*new_state = rep.qp_state;
	return st;
}

static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

int t_fd_count(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	return count_dir(path);
}

int t_self_fd_count(void)
{
	return count_dir("/proc/self/fd") - 1; /* the DIR's own fd */
}

long t_rss_pages(pid_t pid)
{
	char path[64];
	long size = -1, rss = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &rss) != 2)
		rss = -1;
	fclose(f);
	return rss;
}

int t_fd_count_settled(pid_t pid)
{
	int last = t_fd_count(pid), same = 0;

	for (int i = 0; i < 500 && same < 10; i++) {
		int n;

		usleep(10000);
		n = t_fd_count(pid);
		same = n == last ? same + 1 : 0;
		last = n;
	}
	return last;
}

void t_expect_fds(pid_t pid, int want)
{
	int n = -1;

	for (int i = 0; i < 300; i++) {
		n = t_fd_count(pid);
		if (n == want)
			return;
		usleep(10000);
	}
	T_FAIL("daemon holds %d fds, expected %d", n, want);
}

int t_map_count(pid_t pid)
{
	char path[64], line[512];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strchr(line, '\n') != NULL;
	fclose(f);
	return n;
}
