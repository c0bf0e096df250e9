/* SPDX-License-Identifier: MIT */
/*
 * Which objects a listing shows a client, by pid namespace
 * (client_pid_seen_by): another's objects only where the caller's
 * namespace sees their owner, with the pid it sees there.  A caller whose
 * namespace the daemon could not learn (it went before it was asked, or
 * there is no /proc) is shown its own objects only, not every client's
 * with the daemon's pids; an owner of unknown namespace is shown to the
 * daemon's own namespace only.  The view is the request's sender's: a
 * request without credentials, or from another process that is gone,
 * sees its own objects only.
 */
#include "tests/unit/t_core.h"

#define HOST_NS 4026531836ull
#define CONT_NS 4026532200ull
#define OTHER_NS 4026532300ull

/* The request being served came from the process that connected. */
static void sent_by_itself(struct srd_client *c)
{
	c->sender.known = true;
	c->sender.pid = c->pid;
	client_view(c);
}

static void host(struct srd_client *c, pid_t pid)
{
	c->pid = pid;
	c->ns.depth = 1;
	c->ns.ino[0] = HOST_NS;
	c->ns.pid[0] = pid;
	sent_by_itself(c);
}

/* In a namespace below the host's: pid 'inner' there, 'outer' above. */
static void contained(struct srd_client *c, uint64_t ns, pid_t inner,
		      pid_t outer)
{
	c->pid = outer;
	c->ns.depth = 2;
	c->ns.ino[0] = ns;
	c->ns.pid[0] = inner;
	c->ns.ino[1] = HOST_NS;
	c->ns.pid[1] = outer;
	sent_by_itself(c);
}

int main(void)
{
	static struct srd_client h, cont, other, unknown, lost_owner;

	host(&h, 100);
	contained(&cont, CONT_NS, 1, 200);
	contained(&other, OTHER_NS, 1, 300);
	unknown.pid = 400; /* ns.depth 0 */
	sent_by_itself(&unknown);
	lost_owner.pid = 500;

	/* Known namespaces: the host sees all with its pids; a container
	 * its own with its pid, nothing of the host or of a sibling. */
	T_EQ(client_pid_seen_by(&cont, &h), 200);
	T_EQ(client_pid_seen_by(&h, &h), 100);
	T_EQ(client_pid_seen_by(&cont, &cont), 1);
	T_EQ(client_pid_seen_by(&h, &cont), 0);
	T_EQ(client_pid_seen_by(&other, &cont), 0);

	/* Unknown caller: its own only. */
	T_EQ(client_pid_seen_by(&unknown, &unknown), 400);
	T_EQ(client_pid_seen_by(&h, &unknown), 0);
	T_EQ(client_pid_seen_by(&cont, &unknown), 0);

	/* Unknown owner: only the daemon's namespace sees it. */
	T_EQ(client_pid_seen_by(&lost_owner, &h), 500);
	T_EQ(client_pid_seen_by(&lost_owner, &cont), 0);

	/* A request without credentials is judged as unknown: the host's
	 * connection shows it its own objects only. */
	h.sender.known = false;
	client_view(&h);
	T_EQ(client_pid_seen_by(&cont, &h), 0);
	T_EQ(client_pid_seen_by(&h, &h), 100);
	/* A sender that is another process, gone (no pid 0x7ffffff0 here):
	 * unknown, not the connection's wider view. */
	h.sender.known = true;
	h.sender.pid = 0x7ffffff0;
	client_view(&h);
	T_EQ(client_pid_seen_by(&cont, &h), 0);
	printf("PASS core_pidns\n");
	return T_EXIT_PASS;
}
