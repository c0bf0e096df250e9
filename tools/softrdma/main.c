/* SPDX-License-Identifier: MIT */
/*
 * softrdma: administer the soft RDMA devices of softrdmad, in the manner of
 * iproute2's rdma(8):
 *
 *	softrdma [OPTIONS] OBJECT [COMMAND [ARGS]]
 *
 * Objects: link, dev, resource, statistic, fault, capture.  Words may be
 * abbreviated.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tools/softrdma/softrdma.h"

struct opts opt;

static void usage(FILE *f)
{
	fprintf(f, "Usage: softrdma [OPTIONS] OBJECT [COMMAND [ARGS]]\n"
		   "       softrdma help\n"
		   "OBJECT := { link | dev | resource | statistic | fault |\n"
		   "            capture }\n"
		   "OPTIONS := { -j[son] | -p[retty] | -d[etails] |\n"
		   "             -s[ocket] NAME | -n[o-start] | -V[ersion] |\n"
		   "             -h[elp] }\n"
		   "\n"
		   "  link [show] [DEV[/PORT]]\n"
		   "  link add NAME [type softrdma] netdev IFACE\n"
		   "  link delete NAME\n"
		   "  dev [show] [DEV]\n"
		   "  resource [show]\n"
		   "  resource show usage\n"
		   "  resource show {qp|cq|mr|pd|cm_id} [link DEV[/PORT]] "
		   "[lqpn QPN]\n"
		   "  statistic [show] [link DEV[/PORT]]\n"
		   "  statistic show qp QPN\n"
		   "  fault [show]\n"
		   "  fault add RULE [; RULE ...]\n"
		   "  fault flush\n"
		   "  capture [show]\n"
		   "  capture start FILE\n"
		   "  capture stop\n");
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("softrdma: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry \"softrdma help\".\n", stderr);
	return EXIT_USAGE;
}

int fail(const char *fmt, ...)
{
	va_list ap;

	fputs("softrdma: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_FAILED;
}

int fail_errno(int err, const char *what)
{
	switch (err) {
	case -EPERM:
		return fail("%s: permission denied (only root or the user "
			    "softrdmad runs as may change devices)",
			    what);
	case -EOPNOTSUPP:
		return fail("%s: softrdmad does not know this command (an "
			    "older daemon?)",
			    what);
	case -ECONNRESET:
	case -EPIPE:
		return fail("%s: softrdmad closed the connection", what);
	default:
		return fail("%s: %s", what, strerror(-err));
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "details", no_argument, NULL, 'd' },
		{ "socket", required_argument, NULL, 's' },
		{ "no-start", no_argument, NULL, 'n' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *obj;
	int c, ret;

	/* Options stop at the object: what follows is its own. */
	while ((c = getopt_long(argc, argv, "+jpds:nVh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			opt.json = true;
			break;
		case 'p':
			opt.pretty = true;
			break;
		case 'd':
			opt.details = true;
			break;
		case 's':
			opt.socket = optarg;
			break;
		case 'n':
			opt.no_start = true;
			break;
		case 'V':
			printf("softrdma %s (protocol %d)\n", SOFTRDMA_VERSION,
			       SRD_PROTO_VERSION);
			return EXIT_OK;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	/* -p alone means pretty JSON, as in iproute2. */
	if (opt.pretty)
		opt.json = true;
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	obj = argv[optind];
	argc -= optind + 1;
	argv += optind + 1;
	if (matches(obj, "link"))
		ret = cmd_link(argc, argv);
	else if (matches(obj, "dev"))
		ret = cmd_dev(argc, argv);
	else if (matches(obj, "resource"))
		ret = cmd_resource(argc, argv);
	else if (matches(obj, "statistic"))
		ret = cmd_statistic(argc, argv);
	else if (matches(obj, "fault"))
		ret = cmd_fault(argc, argv);
	else if (matches(obj, "capture"))
		ret = cmd_capture(argc, argv);
	else if (matches(obj, "help")) {
		usage(stdout);
		ret = EXIT_OK;
	} else {
		ret = usage_error("unknown object \"%s\"", obj);
	}
	conn_close();
	if (fflush(stdout) && ret == EXIT_OK)
		ret = EXIT_FAILED;
	return ret;
}
