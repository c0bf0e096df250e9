/* SPDX-License-Identifier: MIT */
/*
 * The CLI's answers to bad input: exit 2 and a hint for a bad command
 * line, exit 1 and what went wrong for a command that cannot be done;
 * nothing on standard output either way.
 */
#include "t_admin.h"

int main(void)
{
	static struct t_run r;

	t_init("admin_cli_errors");
	t_cli_path();
	T_ASSERT(t_have_device("softrdma0"));

	/* The command line. */
	t_cli(&r, NULL);
	T_EQ(r.status, 2);
	t_cli(&r, "--bogus", NULL);
	T_EQ(r.status, 2);
	t_cli(&r, "frobnicate", NULL);
	T_REFUSED(&r, 2, "unknown object \"frobnicate\"");
	t_cli(&r, "link", "frob", NULL);
	T_REFUSED(&r, 2, "link: unknown command \"frob\"");
	t_cli(&r, "link", "add", NULL);
	T_REFUSED(&r, 2, "link add: missing device name");
	t_cli(&r, "link", "add", "x", NULL);
	T_REFUSED(&r, 2, "missing \"netdev IFACE\"");
	t_cli(&r, "link", "add", "x", "netdev", NULL);
	T_REFUSED(&r, 2, "\"netdev\" needs a value");
	t_cli(&r, "link", "add", "x", "type", "mlx5", "netdev", "lo", NULL);
	T_REFUSED(&r, 2, "unknown type \"mlx5\"");
	t_cli(&r, "link", "add", "x", "color", "red", NULL);
	T_REFUSED(&r, 2, "unknown keyword \"color\"");
	t_cli(&r, "link", "delete", NULL);
	T_REFUSED(&r, 2, "missing device name");
	t_cli(&r, "resource", "show", "widgets", NULL);
	T_REFUSED(&r, 2, "unknown object \"widgets\"");
	t_cli(&r, "resource", "show", "qp", "lqpn", "many", NULL);
	T_REFUSED(&r, 2, "bad lqpn \"many\"");
	t_cli(&r, "statistic", "show", "qp", "abc", NULL);
	T_REFUSED(&r, 2, "bad QPN \"abc\"");
	t_cli(&r, "statistic", "show", "link", NULL);
	T_REFUSED(&r, 2, "expected \"link DEV\"");

	/* Commands the daemon refuses. */
	t_cli(&r, "link", "add", "x", "netdev", "nosuchif0", NULL);
	T_REFUSED(&r, 1, "no network interface \"nosuchif0\"");
	t_cli(&r, "link", "add", "bad/name", "netdev", "lo", NULL);
	T_REFUSED(&r, 1, "bad device name \"bad/name\"");
	t_cli(&r, "link", "delete", "nosuchdev", NULL);
	T_REFUSED(&r, 1, "no device \"nosuchdev\"");
	t_cli(&r, "link", "show", "nosuchdev", NULL);
	T_REFUSED(&r, 1, "no device \"nosuchdev\"");
	t_cli(&r, "link", "show", "softrdma0/2", NULL);
	T_REFUSED(&r, 1, "no port \"2\"");
	t_cli(&r, "statistic", "show", "qp", "4000000", NULL);
	T_REFUSED(&r, 1, "no QP 4000000");
	t_cli(&r, "resource", "show", "qp", "link", "nosuchdev", NULL);
	T_REFUSED(&r, 1, "no device \"nosuchdev\"");

	/* No daemon there, and not allowed to start one. */
	t_cli(&r, "--no-start", "--socket", "srd-nobody-listens-here", "link",
	      NULL);
	T_REFUSED(&r, 1, "cannot reach softrdmad at @srd-nobody-listens-here");

	/* Nothing of that changed the devices. */
	t_cli(&r, "link", NULL);
	T_EQ(r.status, 0);
	T_STR_EQ(r.out, "link softrdma0/1 state ACTIVE physical_state LINK_UP "
			"netdev lo\n");
	t_pass();
}
