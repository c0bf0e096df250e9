/* SPDX-License-Identifier: MIT */
/*
 * `softrdma fault`: the daemon's fault injection rules at run time (the
 * grammar is --fault's, daemon/fault/fault.h): add, list with their
 * counters, flush.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tools/softrdma/softrdma.h"

static void fault_usage(FILE *f)
{
	fprintf(f, "Usage: softrdma fault [show]\n"
		   "       softrdma fault add RULE [; RULE ...]\n"
		   "       softrdma fault flush\n"
		   "RULE := { drop | dup | reorder | delay | corrupt }\n"
		   "        [ dir={tx|rx} ] [ dev=NAME ] [ qpn=N ] [ op=LIST "
		   "]\n"
		   "        [ prob=P ] [ every=N ] [ skip=N ] [ count=N ]\n"
		   "        [ us=N ] [ n=N ]\n"
		   "LIST  := opcode numbers or classes, comma separated: send "
		   "write\n"
		   "         read read_req read_resp atomic ack rc uc ud\n");
}

static int fault_add(int argc, char **argv)
{
	struct srd_admin_fault_add_req req = { 0 };
	union {
		struct srd_admin_fault_add_rep ok;
		struct srd_admin_error e;
	} rep = { 0 };
	size_t len = 0, got;
	int err;

	if (!argc)
		return usage_error("fault add: missing RULE");
	/* The words of the command line make the rule text again. */
	for (int i = 0; i < argc; i++) {
		int n = snprintf(req.rules + len, sizeof(req.rules) - len,
				 "%s%s", i ? " " : "", argv[i]);

		if (n < 0 || (size_t)n >= sizeof(req.rules) - len)
			return usage_error("fault add: rules too long");
		len += (size_t)n;
	}
	if (conn_open())
		return EXIT_FAILED;
	err = conn_cmd(SRD_ADMIN_FAULT_ADD, &req, sizeof(req), &rep,
		       sizeof(rep), &got);
	if (err == -EINVAL && got >= sizeof(rep.e) &&
	    memchr(rep.e.reason, '\0', sizeof(rep.e.reason)) && rep.e.reason[0])
		return fail("fault add: %s", rep.e.reason);
	if (!err && got < sizeof(rep.ok))
		err = -EPROTO;
	if (err == -ENODEV)
		return fail("fault add: softrdmad runs without a wire");
	if (err)
		return fail_errno(err, "fault add");
	return EXIT_OK;
}

static int fault_flush(int argc)
{
	size_t got;
	int err;

	if (argc)
		return usage_error("fault flush: too many arguments");
	if (conn_open())
		return EXIT_FAILED;
	err = conn_cmd(SRD_ADMIN_FAULT_CLEAR, NULL, 0, NULL, 0, &got);
	if (err && err != -ENODEV)
		return fail_errno(err, "fault flush");
	return EXIT_OK;
}

static void show_rule(const struct srd_admin_fault_info *fi)
{
	char text[SRD_ADMIN_RULE_TEXT_MAX + 1];

	memcpy(text, fi->text, SRD_ADMIN_RULE_TEXT_MAX);
	text[SRD_ADMIN_RULE_TEXT_MAX] = '\0';
	out_obj_open();
	out_uint("index", "rule %s ", fi->index);
	out_str("rule", "%s", text);
	out_bool("fixed", opt.details ? " fixed %s" : NULL, fi->fixed);
	out_uint("matched", " matched %s", fi->matched);
	out_uint("injected", " injected %s", fi->injected);
	out_obj_close();
}

static int fault_show(int argc)
{
	_Alignas(8) uint8_t buf[SRD_MSG_MAX];
	const struct srd_admin_list_rep *rep = (const void *)buf;
	const struct srd_admin_fault_info *fi = (const void *)(rep + 1);
	struct srd_admin_list_req req = { .dev_index = SRD_ADMIN_ALL };
	size_t got;
	int err = 0;

	if (argc)
		return usage_error("fault show: too many arguments");
	if (conn_open())
		return EXIT_FAILED;
	out_begin();
	while (req.start != SRD_ADMIN_END) {
		err = conn_cmd(SRD_ADMIN_FAULT_LIST, &req, sizeof(req), buf,
			       sizeof(buf), &got);
		if (!err && (got < sizeof(*rep) ||
			     got < sizeof(*rep) + rep->count * sizeof(*fi)))
			err = -EPROTO;
		if (err)
			break;
		for (uint32_t i = 0; i < rep->count; i++)
			show_rule(&fi[i]);
		req.start = rep->next;
	}
	out_end();
	return err ? fail_errno(err, "fault show") : EXIT_OK;
}

int cmd_fault(int argc, char **argv)
{
	if (!argc || matches(argv[0], "show") || matches(argv[0], "list"))
		return fault_show(argc ? argc - 1 : 0);
	if (matches(argv[0], "help")) {
		fault_usage(stdout);
		return EXIT_OK;
	}
	if (matches(argv[0], "add"))
		return fault_add(argc - 1, argv + 1);
	if (matches(argv[0], "flush") || matches(argv[0], "clear"))
		return fault_flush(argc - 1);
	fault_usage(stderr);
	return usage_error("fault: unknown command \"%s\"", argv[0]);
}
