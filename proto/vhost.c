/* Server names to sites. A mirror serves a handful of sites with a few
 * names each: a linear scan that compares lengths first costs less than
 * hashing the name, and keeps the wildcard rule (longest match wins) plain. */
#include "proto/vhost.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int vhost_add(struct vhost_table *t, const char *name, unsigned site)
{
	bool wildcard = name[0] == '*';

	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 8;
		struct vhost_name *names = realloc(t->names, cap * sizeof(*names));

		if (!names)
			return -ENOMEM;
		t->names = names;
		t->cap = cap;
	}
	t->names[t->n++] = (struct vhost_name){
	    .name = name + wildcard, .len = strlen(name) - wildcard, .wildcard = wildcard, .site = site};
	return 0;
}

void vhost_free(struct vhost_table *t)
{
	free(t->names);
	memset(t, 0, sizeof(*t));
}

int vhost_find(const struct vhost_table *t, const char *host, size_t len)
{
	const struct vhost_name *best = NULL;

	if (len && host[len - 1] == '.')
		len--;
	for (size_t i = 0; i < t->n; i++) {
		const struct vhost_name *v = &t->names[i];

		if (!v->wildcard) {
			if (v->len == len && strncasecmp(v->name, host, len) == 0)
				return (int)v->site;
		} else if (len > v->len && strncasecmp(v->name, host + len - v->len, v->len) == 0 &&
			   (!best || v->len > best->len)) {
			best = v; /* ".example.org" after at least one byte of label */
		}
	}
	return best ? (int)best->site : -1;
}
