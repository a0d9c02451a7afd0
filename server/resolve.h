/* From a request-target to what to serve, for both HTTP versions: the path
 * rules, the open beneath the root, directories and their index.html, and
 * the error status when there is nothing to serve. */
#ifndef KTLSD_SERVER_RESOLVE_H
#define KTLSD_SERVER_RESOLVE_H

#include <stddef.h>

#include "proto/static_file.h"

struct server;

/* Fills out; with status 0, out->fd is open and out->file describes it. */
void resolve_target(const struct server *srv, const char *target, size_t len,
		    struct static_target *out);

#endif
