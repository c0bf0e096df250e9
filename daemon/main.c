/* SPDX-License-Identifier: MIT */
/* softrdmad: the soft RDMA device daemon. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/activation.h"
#include "daemon/core/core.h"
#include "daemon/device/link.h"
#include "daemon/net/net.h"

#define SRD_CONFIG_ENV "SOFTRDMA_CONFIG"
#define SRD_CONFIG_DEFAULT "/etc/softrdma.conf"
#define SRD_SPIN_YIELD_ENV "SOFTRDMA_SPIN_YIELD"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: softrdmad [options]\n"
		"  --socket NAME       abstract socket name (default: $%s, "
		"else \"%s\")\n"
		"  --foreground        do not detach\n"
		"  --idle-exit SECS    exit after SECS without clients "
		"(0: never, the default)\n"
		"  --spin-us N         busy-poll N us after the last work "
		"before sleeping (default 50)\n"
		"  --spin-yield WHEN   yield the CPU between idle polls: on, "
		"off, auto\n"
		"                      (default: $%s=0/1, else auto: on with "
		"fewer than 4 CPUs)\n"
		"  --log FILE          append a log to FILE\n"
		"  --config PATH       devices to add at start (default: "
		"$%s, else %s\n"
		"                      if it exists; \"\": none)\n"
		"  --no-default-device no softrdma0 on lo\n"
		"  --verbose           log debug messages too\n"
		"  --help              this text\n"
		"With LISTEN_PID and LISTEN_FDS=1 (a systemd socket unit), it "
		"serves the\n"
		"listening socket passed as fd 3 instead of binding "
		"--socket.\n",
		SRD_SOCKET_ENV, SRD_SOCKET_DEFAULT, SRD_SPIN_YIELD_ENV,
		SRD_CONFIG_ENV, SRD_CONFIG_DEFAULT);
	srd_net_usage(f);
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/*
 * Polling while idle keeps a wake-up (10-60 us on a busy VM) off the next
 * request's path, but on a machine with fewer CPUs than busy processes the
 * polling daemon takes the CPU from the very processes it waits for (two
 * hosts in namespaces on 2 vCPUs: 98 us one-way instead of 19).  Yielding
 * between idle passes keeps both.  NULL or "auto": on below 4 CPUs; "on"
 * or "1", "off" or "0".
 */
static int parse_spin_yield(const char *s, bool *out)
{
	if (!s || !*s || !strcmp(s, "auto")) {
		*out = sysconf(_SC_NPROCESSORS_ONLN) < 4;
		return 0;
	}
	if (!strcmp(s, "on") || !strcmp(s, "1")) {
		*out = true;
		return 0;
	}
	if (!strcmp(s, "off") || !strcmp(s, "0")) {
		*out = false;
		return 0;
	}
	return -EINVAL;
}

/* Every context costs the daemon fds (its connection, its async pipe,
 * its completion channels): take all the kernel allows. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Bind the abstract socket.  Returns the fd, or -EADDRINUSE when another
 * daemon owns the name. */
static int listen_on(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(name);
	int fd, err;

	if (!len || len >= sizeof(sa.sun_path) - 1)
		return -ENAMETOOLONG;
	memcpy(sa.sun_path + 1, name, len);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa,
		 offsetof(struct sockaddr_un, sun_path) + 1 + len) ||
	    listen(fd, 128)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* Detach: nothing of the starter's (its process group, its terminal, the pipes
 * of a test runner) may stay tied to the device. */
static int daemonize(void)
{
	pid_t pid = fork();
	int fd;

	if (pid < 0)
		return -errno;
	if (pid > 0)
		_exit(0);
	if (setsid() < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0)
		_exit(0);
	if (chdir("/"))
		return -errno;
	fd = open("/dev/null", O_RDWR);
	if (fd < 0)
		return -errno;
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "idle-exit", required_argument, NULL, 'i' },
		{ "spin-us", required_argument, NULL, 'p' },
		{ "spin-yield", required_argument, NULL, 'Y' },
		{ "log", required_argument, NULL, 'l' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "config", required_argument, NULL, 'c' },
		{ "no-default-device", no_argument, NULL, 'N' },
		SRD_NET_LONG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct srd_options o = { .spin_us = 50 };
	static struct srd_daemon d;
	const char *log_path = NULL;
	const char *config_path = NULL;
	const char *spin_yield = getenv(SRD_SPIN_YIELD_ENV);
	static struct srd_config config;
	bool foreground = false;
	int level = SRD_LOG_INFO;
	static char activated_name[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int c, fd, log_fd = -1, err, passed;

	/* A socket unit's listening socket comes as fd 3; whatever else the
	 * starter left open (pipes of a test runner, its sockets) must not
	 * be held for the daemon's lifetime. */
	passed = srd_listen_fds();
	close_range(SRD_LISTEN_FDS_START +
			    (unsigned int)(passed > 0 ? passed : 0),
		    ~0u, 0);
	if (passed < 0) {
		fprintf(stderr, "softrdmad: bad LISTEN_PID/LISTEN_FDS: %s\n",
			strerror(-passed));
		return 1;
	}
	if (passed > 1) {
		fprintf(stderr,
			"softrdmad: %d sockets passed, one expected (a "
			"ListenSequentialPacket= socket)\n",
			passed);
		return 1;
	}
	srd_net_config_defaults();
	o.socket_name = getenv(SRD_SOCKET_ENV);
	if (!o.socket_name || !*o.socket_name)
		o.socket_name = SRD_SOCKET_DEFAULT;
	while ((c = getopt_long(argc, argv, "s:fi:p:l:vh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			o.socket_name = optarg;
			break;
		case 'f':
			foreground = true;
			break;
		case 'i':
			if (parse_u64(optarg, 1ull << 32, &o.idle_exit_s))
				goto bad_arg;
			break;
		case 'p':
			if (parse_u64(optarg, 1ull << 32, &o.spin_us))
				goto bad_arg;
			break;
		case 'Y':
			spin_yield = optarg;
			break;
		case 'l':
			log_path = optarg;
			break;
		case 'v':
			level = SRD_LOG_DEBUG;
			break;
		case 'c':
			config_path = optarg;
			break;
		case 'N':
			o.no_default_device = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			if (c >= SRD_NET_OPT_UDP_PORT) {
				if (srd_net_option(c, optarg))
					return 2;
				break;
			}
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (parse_spin_yield(spin_yield, &o.spin_yield)) {
		fprintf(stderr, "softrdmad: bad --spin-yield / %s: %s\n",
			SRD_SPIN_YIELD_ENV, spin_yield);
		return 2;
	}
	if (srd_net_config_env())
		return 2;
	signal(SIGPIPE, SIG_IGN);
	raise_fd_limit();

	if (passed == 1) {
		/* The name is the socket's, whatever --socket says. */
		fd = SRD_LISTEN_FDS_START;
		err = srd_activated_socket(fd, activated_name,
					   sizeof(activated_name));
		if (err) {
			fprintf(stderr,
				"softrdmad: passed socket (fd %d): %s; it must "
				"be an abstract SOCK_SEQPACKET one "
				"(ListenSequentialPacket=@name)\n",
				fd, strerror(-err));
			return 1;
		}
		o.socket_name = activated_name;
	} else {
		fd = listen_on(o.socket_name);
	}
	if (fd == -EADDRINUSE)
		return 0; /* another daemon won the race: fine */
	if (fd < 0) {
		fprintf(stderr, "softrdmad: socket %s: %s\n", o.socket_name,
			strerror(-fd));
		return 1;
	}
	/* Read before detaching, so a bad file is reported to the user. */
	if (!config_path)
		config_path = getenv(SRD_CONFIG_ENV);
	if (!config_path && !access(SRD_CONFIG_DEFAULT, F_OK))
		config_path = SRD_CONFIG_DEFAULT;
	if (config_path && *config_path) {
		err = config_load(config_path, &config, stderr);
		if (err) {
			fprintf(stderr, "softrdmad: configuration not "
					"loaded\n");
			return 1;
		}
		o.config = &config;
	}
	if (log_path) {
		log_fd = open(log_path,
			      O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (log_fd < 0) {
			fprintf(stderr, "softrdmad: %s: %s\n", log_path,
				strerror(errno));
			return 1;
		}
	} else if (foreground) {
		log_fd = 2;
	}
	if (!foreground) {
		err = daemonize();
		if (err)
			return 1;
	}
	srd_log_open(log_fd, level);
	err = daemon_init(&d, &o, fd);
	if (err) {
		srd_log(SRD_LOG_ERR, "init: %s", strerror(-err));
		return 1;
	}
	srd_log(SRD_LOG_INFO, "serving @%s", o.socket_name);
	daemon_run(&d);
	srd_log(SRD_LOG_INFO, "exiting");
	daemon_fini(&d);
	config_free(&config);
	close(fd);
	return 0;

bad_arg:
	fprintf(stderr, "softrdmad: bad value for --%s: %s\n",
		opts[c == 'i' ? 2 : 3].name, optarg);
	return 2;
}
