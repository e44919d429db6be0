/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - one intrusive doubly linked list, oldest entry first
 *
 * The node lives inside the object it links (a TCP connection waiting for
 * its delayed work, a UDP flow in recency order), so linking allocates
 * nothing and unlinking is O(1) from the object alone. The owner gets its
 * object back from a node with offsetof(), as each user does once in a
 * small typed helper.
 */
#ifndef TAPIR_LIST_H
#define TAPIR_LIST_H

#include <stddef.h>

/**
 * struct list_node - the links inside a listed object
 * @prev:	the entry before, NULL at the head
 * @next:	the entry after, NULL at the tail
 */
struct list_node {
	struct list_node *prev;
	struct list_node *next;
};

/**
 * struct list - a list's two ends
 * @head:	oldest entry, NULL when empty
 * @tail:	newest entry, NULL when empty
 */
struct list {
	struct list_node *head;
	struct list_node *tail;
};

/**
 * list_unlink() - take @n out of @l
 * @l:		list
 * @n:		node on @l
 */
static inline void list_unlink(struct list *l, struct list_node *n)
{
	if (n->prev)
		n->prev->next = n->next;
	else
		l->head = n->next;
	if (n->next)
		n->next->prev = n->prev;
	else
		l->tail = n->prev;
	n->prev = n->next = NULL;
}

/**
 * list_append() - make @n the newest entry of @l
 * @l:		list
 * @n:		node on no list
 */
static inline void list_append(struct list *l, struct list_node *n)
{
	n->next = NULL;
	n->prev = l->tail;
	if (l->tail)
		l->tail->next = n;
	else
		l->head = n;
	l->tail = n;
}

#endif /* TAPIR_LIST_H */
