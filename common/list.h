/* SPDX-License-Identifier: MIT */
/* A minimal intrusive doubly linked list. */
#ifndef SOFTRDMA_COMMON_LIST_H
#define SOFTRDMA_COMMON_LIST_H

#include <stddef.h>

struct list_node {
	struct list_node *next, *prev;
};

struct list_head {
	struct list_node n;
};

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr)-offsetof(type, member)))

static inline void list_head_init(struct list_head *h)
{
	h->n.next = h->n.prev = &h->n;
}

static inline int list_empty(const struct list_head *h)
{
	return h->n.next == &h->n;
}

static inline void list_add_tail(struct list_head *h, struct list_node *n)
{
	n->prev = h->n.prev;
	n->next = &h->n;
	h->n.prev->next = n;
	h->n.prev = n;
}

static inline void list_del(struct list_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}

static inline void list_node_init(struct list_node *n)
{
	n->next = n->prev = n;
}

/* Iterate over nodes; removing the current node is safe. */
#define list_for_each(h, it)                                            \
	for (struct list_node *it = (h)->n.next, *it##_next = it->next; \
	     it != &(h)->n; it = it##_next, it##_next = it->next)

#define list_entry(node, type, member) container_of(node, type, member)

#endif
