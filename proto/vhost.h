/* Which site a host name belongs to: the server names of every site in one
 * table, looked up by TLS's SNI and by a request's Host (or :authority).
 * Sans-I/O; built once per configuration, read-only after. */
#ifndef KTLSD_PROTO_VHOST_H
#define KTLSD_PROTO_VHOST_H

#include <stdbool.h>
#include <stddef.h>

struct vhost_name {
	const char *name;   /* lowercase, no trailing dot; a wildcard without its "*" (".example.org") */
	size_t len;
	bool wildcard;
	unsigned site;
};

struct vhost_table {
	struct vhost_name *names;
	size_t n, cap;
};

/* Adds a server name as config.c stores it ("dl.example.org",
 * "*.example.org"). Returns 0 or -ENOMEM. */
int vhost_add(struct vhost_table *t, const char *name, unsigned site);
void vhost_free(struct vhost_table *t);

/* The site of a host name: an exact name first, else the longest wildcard
 * that matches one or more leading labels. Case does not matter, and a
 * trailing dot is ignored. -1 when no site has the name. */
int vhost_find(const struct vhost_table *t, const char *host, size_t len);

#endif
