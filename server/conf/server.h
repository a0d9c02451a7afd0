/* The read-only state workers serve from (struct server, server-t.h),
 * built from one loaded configuration: its sites (open roots, certificates
 * and keys as bytes), the MIME types, the kernel TLS policy and the TLS
 * settings each worker makes its context from.
 *
 * A server is counted: the main thread holds the running one, each worker
 * the one it gives new connections, each connection the one it was
 * accepted under (its TLS context's callbacks point into it). A reload
 * builds the next; the previous one goes when the last of them lets go, so
 * reloads do not add up, and a download in flight across any number of
 * them ends with what it started with. */
#ifndef KTLSD_SERVER_SERVER_H
#define KTLSD_SERVER_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "server/conf/server-t.h"

struct conf_files;

/* Builds a server from cfg, reading its files through cf (conf_files.h:
 * NULL reads them from disk). cur is the running server on reload (NULL at
 * start): its ticket master secret is carried over so tickets stay valid,
 * and its kTLS probe reused; a refusal is then logged as a reload's
 * ("SIGHUP: ...; keeping the running configuration"). With owns_cfg the
 * server frees cfg with itself (a reload's); else cfg must outlive it.
 * *out holds one reference. 0, or after one logged line: -EINVAL (the
 * configuration cannot work), -ENOTSUP (--ktls on without kernel TLS),
 * -ENOMEM, -EIO; cfg stays the caller's then. */
int server_new(struct server **out, struct config *cfg, bool owns_cfg, const struct server *cur,
	       struct conf_files *cf);
/* A certificate-only reload (the ACME client stored a new one): a server
 * built from cur's own configuration, files read again through cf (the
 * bundles of --acme on sites always from their folder), nothing of the
 * configuration file read. The new server takes over cur's configuration
 * and cur keeps it alive. 0 or -errno as server_new, failures logged as
 * "acme: certificate reload: ...". */
int server_new_certs(struct server **out, const struct server *cur, struct conf_files *cf);

/* One more reference, for a worker or a connection (any thread). */
const struct server *server_get(const struct server *srv);
/* Lets one go; the last frees the server (and its configuration, if it
 * owns it), on whichever thread that is. NULL is a no-op. */
void server_put(const struct server *srv);

/* "/srv/www", or "/srv/a and 2 more sites": for the lines that say what is
 * served. */
const char *server_serving_text(const struct server *srv, char *buf, size_t len);

#endif
