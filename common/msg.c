/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/msg.h"

void srd_close_fds(const int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* Room for the credentials and the most descriptors a message carries. */
union msg_ctl {
	char buf[CMSG_SPACE(sizeof(struct ucred)) +
		 CMSG_SPACE(sizeof(int) * SRD_MAX_FDS)];
	struct cmsghdr align;
};

int srd_msg_send(int fd, const struct srd_msg_hdr *h, const void *payload,
		 const int *fds, int nfds)
{
	union msg_ctl ctl;
	struct iovec iov[2] = {
		{ .iov_base = (void *)h, .iov_len = sizeof(*h) },
		{ .iov_base = (void *)payload, .iov_len = h->len },
	};
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = h->len ? 2 : 1 };
	ssize_t n;

	if (nfds < 0 || nfds > SRD_MAX_FDS || (h->len && !payload) ||
	    h->len > SRD_MSG_MAX - sizeof(*h))
		return -EINVAL;
	if (nfds) {
		struct cmsghdr *cm;

		memset(&ctl, 0, sizeof(ctl));
		m.msg_control = ctl.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	do
		n = sendmsg(fd, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (int)n;
}

bool srd_fd_unix_socket(int fd)
{
	socklen_t len = sizeof(int);
	int domain = -1;

	return !getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) &&
	       domain == AF_UNIX;
}

int srd_msg_pass_cred(int fd)
{
	int one = 1;

	return setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one))
		       ? -errno
		       : 0;
}

/* The sender's credentials, if the kernel gave any.  A message sent with
 * none still gets a cmsg when we ask for them, with pid 0. */
static void take_cred(struct msghdr *m, struct srd_msg_cred *cred)
{
	cred->known = false;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(m); cm;
	     cm = CMSG_NXTHDR(m, cm)) {
		struct ucred u;

		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_CREDENTIALS ||
		    cm->cmsg_len < CMSG_LEN(sizeof(u)))
			continue;
		memcpy(&u, CMSG_DATA(cm), sizeof(u));
		cred->known = u.pid > 0;
		cred->pid = u.pid;
		cred->uid = u.uid;
		cred->gid = u.gid;
	}
}

/* Collect every descriptor the kernel handed us; keep at most maxfds. */
static int take_fds(struct msghdr *m, int *fds, int *nfds, int maxfds)
{
	int overflow = 0;

	for (struct cmsghdr *cm = CMSG_FIRSTHDR(m); cm;
	     cm = CMSG_NXTHDR(m, cm)) {
		int cnt;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		cnt = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (int i = 0; i < cnt; i++) {
			int one;

			memcpy(&one, CMSG_DATA(cm) + i * sizeof(int),
			       sizeof(int));
			if (*nfds < maxfds) {
				fds[(*nfds)++] = one;
			} else {
				close(one);
				overflow = 1;
			}
		}
	}
	return overflow;
}

int srd_msg_recv_cred(int fd, void *buf, size_t bufsz, int *fds, int *nfds,
		      int maxfds, struct srd_msg_cred *cred)
{
	union msg_ctl ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = bufsz };
	struct msghdr m = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct srd_msg_hdr h;
	ssize_t n;
	int err = 0;

	*nfds = 0;
	if (cred)
		cred->known = false;
	if (maxfds < 0 || (maxfds && !fds))
		return -EINVAL;
	do
		n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (take_fds(&m, fds, nfds, maxfds) || (m.msg_flags & MSG_CTRUNC) ||
	    (m.msg_flags & MSG_TRUNC))
		err = -EMSGSIZE;
	else if (n == 0 && !*nfds)
		return 0; /* end of file */
	else if ((size_t)n < sizeof(h))
		err = -EBADMSG;
	if (!err) {
		memcpy(&h, buf, sizeof(h));
		if (h.len != (size_t)n - sizeof(h))
			err = -EBADMSG;
	}
	if (err) {
		srd_close_fds(fds, *nfds);
		*nfds = 0;
		return err;
	}
	if (cred)
		take_cred(&m, cred);
	return (int)n;
}

int srd_msg_recv(int fd, void *buf, size_t bufsz, int *fds, int *nfds,
		 int maxfds)
{
	return srd_msg_recv_cred(fd, buf, bufsz, fds, nfds, maxfds, NULL);
}
