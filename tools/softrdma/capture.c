/* SPDX-License-Identifier: MIT */
/*
 * `softrdma capture`: record every packet of both wires into a pcap file
 * (as --pcap does from the start), started and stopped at run time.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/softrdma/softrdma.h"

static void capture_usage(FILE *f)
{
	fprintf(f, "Usage: softrdma capture [show]\n"
		   "       softrdma capture start FILE\n"
		   "       softrdma capture stop\n");
}

/* The daemon writes the file from its own working directory: make the
 * path absolute here (its directory must exist). */
static int absolute(const char *path, char *out, size_t size)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	int n;

	if (!*base)
		return -EISDIR;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (!realpath(dir, real))
		return -errno;
	n = snprintf(out, size, "%s/%s", strcmp(real, "/") ? real : "", base);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int query(struct srd_admin_capture_show_rep *rep)
{
	size_t got;
	int err;

	memset(rep, 0, sizeof(*rep));
	err = conn_cmd(SRD_ADMIN_CAPTURE_SHOW, NULL, 0, rep, sizeof(*rep),
		       &got);
	if (!err && got < sizeof(*rep))
		err = -EPROTO;
	rep->path[sizeof(rep->path) - 1] = '\0';
	return err;
}

static int capture_start(int argc, char **argv)
{
	struct srd_admin_capture_start_req req = { 0 };
	size_t got;
	int err;

	if (argc != 1)
		return usage_error(argc ? "capture start: too many arguments"
					: "capture start: missing FILE");
	err = absolute(argv[0], req.path, sizeof(req.path));
	if (err)
		return fail("capture start: %s: %s", argv[0], strerror(-err));
	if (conn_open())
		return EXIT_FAILED;
	err = conn_cmd(SRD_ADMIN_CAPTURE_START, &req, sizeof(req), NULL, 0,
		       &got);
	if (err == -EBUSY)
		return fail("capture start: a capture runs already (softrdma "
			    "capture stop ends it)");
	if (err == -ENODEV)
		return fail("capture start: softrdmad runs without a wire");
	if (err)
		return fail_errno(err, req.path);
	return EXIT_OK;
}

static int capture_stop(int argc)
{
	struct srd_admin_capture_show_rep st;
	size_t got;
	int err;

	if (argc)
		return usage_error("capture stop: too many arguments");
	if (conn_open())
		return EXIT_FAILED;
	err = query(&st);
	if (!err)
		err = conn_cmd(SRD_ADMIN_CAPTURE_STOP, NULL, 0, NULL, 0, &got);
	if (err == -ENOENT)
		return fail("capture stop: no capture runs");
	if (err)
		return fail_errno(err, "capture stop");
	if (!opt.json)
		printf("%llu packets in %s\n", (unsigned long long)st.packets,
		       st.path);
	return EXIT_OK;
}

static int capture_show(int argc)
{
	struct srd_admin_capture_show_rep st;
	int err;

	if (argc)
		return usage_error("capture show: too many arguments");
	if (conn_open())
		return EXIT_FAILED;
	err = query(&st);
	if (err)
		return fail_errno(err, "capture show");
	out_begin();
	out_obj_open();
	out_bool("active", NULL, st.active);
	out_str(NULL, "capture %s", st.active ? "active" : "inactive");
	if (st.active) {
		out_str("file", " file %s", st.path);
		out_uint("packets", " packets %s", st.packets);
	}
	out_obj_close();
	out_end();
	return EXIT_OK;
}

int cmd_capture(int argc, char **argv)
{
	if (!argc || matches(argv[0], "show"))
		return capture_show(argc ? argc - 1 : 0);
	if (matches(argv[0], "help")) {
		capture_usage(stdout);
		return EXIT_OK;
	}
	if (matches(argv[0], "start"))
		return capture_start(argc - 1, argv + 1);
	if (matches(argv[0], "stop"))
		return capture_stop(argc - 1);
	capture_usage(stderr);
	return usage_error("capture: unknown command \"%s\"", argv[0]);
}
